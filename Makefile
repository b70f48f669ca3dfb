# dsv41-top: build, test, bench, fuzz, soak, demo, install.
# Every library comes through pkg-config; nothing is vendored.

CC      ?= cc
# every build in parallel, on every core (make 4.3 takes -j from here too)
NPROC   := $(shell nproc 2>/dev/null || echo 2)
MAKEFLAGS += -j$(NPROC)
PREFIX  ?= /usr/local
DESTDIR ?=
SAN     ?=

PKGS      := ncursesw libssh2 libibverbs libcurl libcjson openssl zlib libmicrohttpd
TEST_PKGS := cmocka
SIM_PKGS  := libmicrohttpd libcjson openssl zlib

# What make deps installs: what a head needs to build and run dsv41-top (the
# compiler, pkg-config, the -dev packages of PKGS), nothing else.
DEB_PKGS := build-essential pkg-config libncurses-dev libssh2-1-dev libibverbs-dev \
            libcurl4-openssl-dev libcjson-dev libssl-dev zlib1g-dev libmicrohttpd-dev
# What make test-deps adds for make test and make demo: the unit tests' and the
# simulator's libraries, the test hosts (sshd, podman, nginx, iptables, a registry), the
# shells the quoting is tested in, clang and valgrind, FUSE, the package's
# checker, Prometheus (the exporter's test scrapes with it; make bench times
# a scrape beside node_exporter's). Never on the
# operator's path: a head with docker gets none of it.
TEST_DEB_PKGS := libcmocka-dev openssh-server openssh-client podman runc \
            uidmap tmux clang libclang-rt-14-dev iproute2 curl jq netcat-openbsd procps psmisc \
            util-linux htop file bsdutils coreutils rsync iptables fish tcsh zsh nginx-light docker-registry \
            aria2 valgrind systemd libfuse3-dev fuse3 groff-base man-db dpkg-dev lintian lcov \
            prometheus prometheus-node-exporter

comma := ,
BUILD := build$(if $(SAN),-$(subst $(comma),-,$(SAN)))

WARN    := -std=c17 -Wall -Wextra -Wshadow -Wformat=2 -Wvla
# Warnings are errors in make test's builds (WERROR=1), never in an
# operator's make: a newer compiler's new warning must not stop an install.
WERROR  ?=
ifeq ($(WERROR),1)
WARN    += -Werror
endif
# CFLAGS from the command line (make CFLAGS=-O1) only set the optimisation:
# warnings, feature macros and sanitizers are always added.
CFLAGS  ?= -O2 -g
override CFLAGS  += $(WARN) -D_GNU_SOURCE -pthread
override LDFLAGS += -pthread
ifneq ($(SAN),)
override CFLAGS  += -fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all
override LDFLAGS += -fsanitize=$(SAN)
endif

PKG_CFLAGS  = $(shell pkg-config --cflags $(PKGS))
PKG_LIBS    = $(shell pkg-config --libs $(PKGS)) -lm
TEST_CFLAGS = $(shell pkg-config --cflags $(TEST_PKGS))
TEST_LIBS   = $(shell pkg-config --libs $(TEST_PKGS))
SIM_CFLAGS  = $(shell pkg-config --cflags $(SIM_PKGS))
SIM_LIBS    = $(shell pkg-config --libs $(SIM_PKGS))

# src/ is one folder per subsystem, lowest first; each is an archive, so a
# program links the folders it needs and the linker takes what it uses. The
# include direction between them is checked by tests/check_layout.sh.
SUBSYSTEMS := util config ssh container nodes guard serve verify download transfer deploy accept live ops cmd
INCLUDES   := $(addprefix -Isrc/,$(SUBSYSTEMS)) -Itui -I$(BUILD)/gen
# The static helpers' mains: each links its own folder and util, nothing else.
HELPER_MAINS := src/guard/guardd.c src/verify/verifyd.c src/transfer/xferd.c
lib_objs    = $(patsubst %.c,$(BUILD)/%.o,$(filter-out $(HELPER_MAINS),$(wildcard src/$(1)/*.c)))
# (the console's archive too: src/cmd's docs print its keys table)
ENGINE_LIBS := $(foreach s,$(SUBSYSTEMS),$(BUILD)/lib$(s).a) $(BUILD)/libtui.a
# archives in a group: a subsystem may call one below it, whatever the order
LINK_ENGINE  = -Wl,--start-group $(ENGINE_LIBS) -Wl,--end-group
MAIN_OBJ   := $(BUILD)/src/main.o
# the man pages and the completions the program prints (src/cmd/docs.c, src/cmd/docs_man.c)
MAN_PAGES := dsv41-top.1 dsv41-guard.8 dsv41-verify.1 dsv41-xfer.1
GEN_DOCS := $(addprefix $(BUILD)/share/,$(MAN_PAGES)) $(BUILD)/share/dsv41-top.bash \
            $(BUILD)/share/_dsv41-top
TUI_SRC    := $(wildcard tui/*.c)
TUI_OBJ    := $(TUI_SRC:%.c=$(BUILD)/%.o)
SIM_SRC    := $(wildcard tests/sim/*.c)
SIM_OBJ    := $(SIM_SRC:%.c=$(BUILD)/%.o)
UNIT_SRC   := $(wildcard tests/unit/test_*.c)
UNIT_BIN   := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

.PHONY: coverage deb install-table all programs deps test-deps deps-aarch64 aarch64 test test-full check unit sim-test hub-test pi-test cli-test it fuzz fuzz-smoke bench soak demo demo-test install uninstall readme clean format FORCE
.DEFAULT_GOAL := programs

# make: what an operator installs - the program, its static helpers, the man
# pages and the completions (nothing of the tests: no simulator, no cmocka)
programs: $(BUILD)/dsv41-top $(BUILD)/dsv41-guard $(BUILD)/dsv41-verify $(BUILD)/dsv41-xfer

# make all: that and everything the tests run
all: programs $(BUILD)/dsv41-sim \
     $(BUILD)/tests/it-session \
     $(BUILD)/tests/engine-probe \
     $(BUILD)/tests/eatmem \
     $(BUILD)/tests/nvml-probe $(BUILD)/tests/libnvml-standin.so
# the checkout's copies come from the plain build alone
ifeq ($(BUILD),build)
programs: dsv41-top dsv41-guard dsv41-verify dsv41-xfer $(GEN_DOCS)
all: tests/sim/dsv41-sim
dsv41-top: $(BUILD)/dsv41-top
	cp $< $@.tmp && mv -f $@.tmp $@
dsv41-guard: $(BUILD)/dsv41-guard
	cp $< $@.tmp && mv -f $@.tmp $@
dsv41-verify: $(BUILD)/dsv41-verify
	cp $< $@.tmp && mv -f $@.tmp $@
dsv41-xfer: $(BUILD)/dsv41-xfer
	cp $< $@.tmp && mv -f $@.tmp $@
tests/sim/dsv41-sim: $(BUILD)/dsv41-sim
	cp $< $@.tmp && mv -f $@.tmp $@
endif

define SUBSYSTEM_LIB
$(BUILD)/lib$(1).a: $(call lib_objs,$(1))
	@mkdir -p $$(@D)
	rm -f $$@ && $$(AR) rcs $$@ $$^
endef
$(foreach s,$(SUBSYSTEMS),$(eval $(call SUBSYSTEM_LIB,$(s))))

$(BUILD)/libtui.a: $(TUI_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && $(AR) rcs $@ $^

$(BUILD)/dsv41-top: $(MAIN_OBJ) $(BUILD)/libtui.a $(ENGINE_LIBS)
	$(CC) $(LDFLAGS) -o $@ $(MAIN_OBJ) $(BUILD)/libtui.a $(LINK_ENGINE) $(PKG_LIBS)

# The guard alone, static: launch pushes it to workers that have nothing of
# ours. Its folder, the container runtime's API client (src/container) and
# util (see src/guard/README.md); sanitizer builds link it dynamically: the
# sanitizers do not link statically.
$(BUILD)/dsv41-guard: $(BUILD)/src/guard/guardd.o $(BUILD)/libguard.a $(BUILD)/libcontainer.a \
                      $(BUILD)/libutil.a
	$(CC) $(LDFLAGS) $(if $(SAN),,-static) -o $@ $^

# The checkpoint verifier for workers, static for the same reason (OpenSSL's
# libcrypto.a; it loads no engines or providers, so its dlopen is unused).
$(BUILD)/dsv41-verify: $(BUILD)/src/verify/verifyd.o $(BUILD)/libverify.a $(BUILD)/libutil.a
	$(CC) $(LDFLAGS) $(if $(SAN),,-static) -o $@ $^ -lcrypto -pthread

# The copy's receiving end on workers (copy-to-peer), static likewise: its
# folder, the ranges of download's and the sums and wire of verify's.
$(BUILD)/dsv41-xfer: $(BUILD)/src/transfer/xferd.o $(BUILD)/libtransfer.a $(BUILD)/libdownload.a \
                     $(BUILD)/libverify.a $(BUILD)/libutil.a
	$(CC) $(LDFLAGS) $(if $(SAN),,-static) -o $@ $< -Wl,--start-group $(filter %.a,$^) \
	  -Wl,--end-group -lcrypto -pthread

# The version and the revision it was built from (--version, the man page);
# rewritten only when they change, so a build that changes nothing relinks nothing.
VERSION := 0.2.0
GITREV  := $(shell git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
GITDATE := $(shell git log -1 --format=%cs 2>/dev/null)
$(BUILD)/gen/version.h: FORCE
	@mkdir -p $(@D)
	@printf '#define DSV41_VERSION "%s"\n#define DSV41_GITREV "%s"\n#define DSV41_DATE "%s"\n' \
	  '$(VERSION)' '$(GITREV)' '$(GITDATE)' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv -f $@.tmp $@
$(BUILD)/src/cmd/cmdtab.o $(BUILD)/src/cmd/docs.o $(BUILD)/src/cmd/docs_man.o: $(BUILD)/gen/version.h

# The output-drift windows (src/serve/outdrift.h), built into the program as
# one C string: a line of the text file is a line of the string.
$(BUILD)/gen/drift_windows.h: src/serve/drift_windows.txt src/serve/cstring.awk
	@mkdir -p $(@D)
	awk -v name=DRIFT_WINDOWS -f src/serve/cstring.awk $< > $@.tmp && mv -f $@.tmp $@
$(BUILD)/src/serve/outdrift.o: $(BUILD)/gen/drift_windows.h

# The man page and the completions, printed by the program from its own
# tables (src/cmd/docs.c), with no configuration of the builder's in the way.
# (a cross build prints them with this machine's build: DOCS_BIN=build/dsv41-top)
DOCS_BIN ?= $(BUILD)/dsv41-top
DOCS_RUN = env -i PATH=/usr/bin:/bin HOME=/nonexistent DSV41_CONFIG=/dev/null $(DOCS_BIN) docs
$(addprefix $(BUILD)/share/,$(MAN_PAGES)): $(BUILD)/share/%: $(DOCS_BIN)
	@mkdir -p $(@D)
	$(DOCS_RUN) man $(basename $(@F)) > $@.tmp && mv -f $@.tmp $@
$(BUILD)/share/dsv41-top.bash: $(DOCS_BIN)
	@mkdir -p $(@D)
	$(DOCS_RUN) bash > $@.tmp && mv -f $@.tmp $@
$(BUILD)/share/_dsv41-top: $(DOCS_BIN)
	@mkdir -p $(@D)
	$(DOCS_RUN) zsh > $@.tmp && mv -f $@.tmp $@

$(BUILD)/src/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) $(INCLUDES) -MMD -MP -c -o $@ $<

# The console: the only code that includes curses.
$(BUILD)/tui/%.o: tui/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) $(INCLUDES) -MMD -MP -c -o $@ $<

$(BUILD)/tests/sim/%.o: tests/sim/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SIM_CFLAGS) -Isrc/util -MMD -MP -c -o $@ $<

$(BUILD)/dsv41-sim: $(SIM_OBJ) $(BUILD)/src/util/buf.o
	$(CC) $(LDFLAGS) -o $@ $^ $(SIM_LIBS) -lm

$(BUILD)/tests/test_%: tests/unit/test_%.c $(BUILD)/libtui.a $(ENGINE_LIBS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) $(TEST_CFLAGS) $(INCLUDES) -MMD -MP -o $@ $< $(BUILD)/libtui.a \
	  $(LINK_ENGINE) $(LDFLAGS) $(PKG_LIBS) $(TEST_LIBS)

$(BUILD)/tests/it-session: tests/it/session_helper.c $(ENGINE_LIBS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) $(INCLUDES) -Itests/it -o $@ $< $(LINK_ENGINE) $(LDFLAGS) \
	  $(PKG_LIBS)

$(BUILD)/tests/bench-guard: tests/bench/bench_guard.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(LDFLAGS)

# the engine module's calls from the command line (tests/cli/test_engine.sh)
$(BUILD)/tests/engine-probe: tests/cli/engine_probe.c $(ENGINE_LIBS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) $(INCLUDES) -o $@ $< $(LINK_ENGINE) $(LDFLAGS) $(PKG_LIBS)

# a directory through FUSE with a disk's faults on demand: writes that wait
# (the guard's stalled STATE_DIR test), a power cut (the copy's state); made
# by the tests, so that an operator's make needs no libfuse
$(BUILD)/tests/faultfs: tests/fuse/faultfs.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(shell pkg-config --cflags fuse3) -o $@ $< $(LDFLAGS) $(shell pkg-config --libs fuse3)

$(BUILD)/tests/eatmem: tests/it/eatmem.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(LDFLAGS)

# NVML beside nvidia-smi (tests/bench/device_nvml.sh on a GPU machine), and
# the stand-in library the tests load where there is no NVIDIA driver:
# plain flags, as a driver's library would be built (no sanitizer runtime)
$(BUILD)/tests/nvml-probe: tests/nvml/nvml_probe.c $(ENGINE_LIBS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) $(INCLUDES) -o $@ $< $(LINK_ENGINE) $(LDFLAGS) $(PKG_LIBS)

$(BUILD)/tests/libnvml-standin.so: tests/nvml/nvml_standin.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -std=c17 -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror) -fPIC -shared -o $@ $<

$(BUILD)/tests/bench-client: tests/bench/bench_client.c $(ENGINE_LIBS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) $(INCLUDES) -o $@ $< $(LINK_ENGINE) $(LDFLAGS) $(PKG_LIBS)

$(BUILD)/tests/bench-status: tests/bench/bench_status.c $(ENGINE_LIBS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) $(INCLUDES) -Itests/it -o $@ $< $(LINK_ENGINE) $(LDFLAGS) \
	  $(PKG_LIBS)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# The fuzz harness (libFuzzer): the parsers' archives of a clang build with
# libFuzzer's coverage (make build-clang), the harness linked with its main.
$(BUILD)/tests/fuzz_parsers: tests/fuzz/fuzz_parsers.c $(BUILD)/libtui.a $(ENGINE_LIBS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fsanitize=fuzzer $(PKG_CFLAGS) $(INCLUDES) -o $@ $< $(BUILD)/libtui.a \
	  $(LINK_ENGINE) $(LDFLAGS) -fsanitize=fuzzer $(PKG_LIBS)

# The packages of a list that dpkg does not have, installed with apt-get (as
# root, else through sudo): $(1) names the list, $(2) is it.
define apt_install
	@missing=$$(for p in $(2); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
	if [ -z "$$missing" ]; then echo "$(1): all packages present"; exit 0; fi; \
	echo "$(1): installing $$missing"; \
	sudo=; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	$(3) \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q && \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing
endef

deps:
	$(call apt_install,deps,$(DEB_PKGS))

# apt takes one lock: under this Makefile's -j, `make deps test-deps` would
# run two apt-gets at once and the second fail; the order-only prerequisites
# keep them one after another without making either install the other's list
test-deps: | $(filter deps,$(MAKECMDGOALS))
	$(call apt_install,test-deps,$(TEST_DEB_PKGS))
	@# npm for the SDK check: the command, not the package (a NodeSource nodejs brings
	@# its own npm and conflicts with Debian's)
	@command -v npm >/dev/null || { sudo=; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	  $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q nodejs npm; }

# The Spark's CPU: the Debian packages that cross-build for aarch64 and run
# its programs here (qemu-user), and the card's libraries as Debian's :arm64
# multiarch -dev packages (installing them brings the amd64 ones to the same
# versions, as multiarch requires).
AARCH64_DEBS := gcc-aarch64-linux-gnu qemu-user-static libc6:arm64 libncurses-dev:arm64 \
                libssh2-1-dev:arm64 libibverbs-dev:arm64 libcurl4-openssl-dev:arm64 \
                libcjson-dev:arm64 libssl-dev:arm64 zlib1g-dev:arm64 libcmocka-dev:arm64 \
                libmicrohttpd-dev:arm64
deps-aarch64: | $(filter deps test-deps,$(MAKECMDGOALS))
	$(call apt_install,deps-aarch64,$(AARCH64_DEBS),dpkg --print-foreign-architectures | grep -qx arm64 || $$sudo dpkg --add-architecture arm64;)

# The program, its static helpers and the unit tests cross-built for aarch64
# into build-aarch64/ (make deps-aarch64 first); tests/aarch64/run.sh runs the
# unit tests and the static helpers under qemu-aarch64-static.
AARCH64_PREFIX := aarch64-linux-gnu-
aarch64:
	PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig \
	  $(MAKE) CC=$(AARCH64_PREFIX)gcc AR=$(AARCH64_PREFIX)ar BUILD=build-aarch64 \
	  $(if $(filter 1,$(WERROR)),WERROR=1) all unit-bins

# Static checks: nothing reaches a shell unquoted (tests/check_commands.sh);
# includes run one way between the subsystem folders (tests/check_layout.sh);
# every timed wait is on the monotonic clock (tests/check_clock.sh).
check:
	tests/check_commands.sh
	tests/check_layout.sh
	tests/check_clock.sh

# The builds of make test side by side, warnings as errors: plain (gcc),
# ASan+UBSan, TSan, and clang (the compiler an operator may have instead:
# everything, with ASan+UBSan and libFuzzer's coverage, so that the fuzz
# harness is made from the same archives).
.PHONY: builds build-plain build-asan build-tsan build-clang unit-bins
unit-bins: $(UNIT_BIN)
build-plain:
	$(MAKE) WERROR=1 all unit-bins $(BUILD)/tests/faultfs
build-asan:
	$(MAKE) WERROR=1 SAN=address,undefined all unit-bins
build-tsan:
	$(MAKE) WERROR=1 SAN=thread CFLAGS='-O1 -g' all unit-bins
CLANG_BUILD := build-clang
build-clang:
	$(MAKE) WERROR=1 CC=clang BUILD=$(CLANG_BUILD) SAN=fuzzer-no-link,address,undefined \
	  CFLAGS='-O1 -g' all $(CLANG_BUILD)/tests/fuzz_parsers
builds: build-plain build-asan build-tsan build-clang

# Unit tests (cmocka) under the current SAN setting.
unit: $(UNIT_BIN) $(BUILD)/dsv41-top
	tests/unit/run.sh $(BUILD)

# The test jobs by family, each as make test runs it (tests/run.sh: side by
# side, each one's output whole when it ends). The simulator on loopback:
# argument checks, rendezvous, startup log, API, the openai SDK.
sim-test: all
	tests/run.sh 'sim/*' 'node/*'

# download against the simulator's hub on loopback (bytes from nginx or its
# own CDN with faults), and the hub's own JS client against the simulator;
# assemble on what `hf download` leaves; the download again with the TSan build.
hub-test: all
	$(MAKE) SAN=thread CFLAGS='-O1 -g' all
	tests/run.sh 'hub/*'

# Pi: pi/install.sh on a configuration of someone's own, then the real Pi
# (npm, Node 22, cached in tests/pi/node_modules) against the simulator.
pi-test: all
	tests/run.sh 'pi/*'

# Commands that need no hosts, beside the tools they replace (verify vs
# sha256sum, key's fingerprint vs openssl; the systemd units vs systemd-analyze verify;
# NVML's lines vs the H200's nvidia-smi capture);
# again with the TSan build.
cli-test: all
	$(MAKE) SAN=thread CFLAGS='-O1 -g' all
	tests/run.sh 'cli/*'

# Integration: real sshd in network namespaces, real podman containers, a set
# of test hosts per test; the tests of our threads' concurrency run again
# with the TSan build (tests/run.sh).
it: all
	$(MAKE) SAN=thread CFLAGS='-O1 -g' all
	tests/it/run.sh

# make demo on a tmux screen: start, smoke, quit, then nothing of it left
# (after the integration tests: it brings the test hosts up and down itself).
demo-test: all
	tests/demo/test_demo.sh

# Line coverage per folder (not in make test): a --coverage build, every
# unit test and the command tests that take DSV41_BIN, lcov (tests/coverage.sh).
coverage:
	$(MAKE) BUILD=build-coverage CFLAGS='-O0 -g --coverage' LDFLAGS=--coverage all unit-bins
	tests/coverage.sh build-coverage

fuzz: build-clang
	tests/fuzz/run.sh 60

fuzz-smoke: build-clang
	tests/fuzz/run.sh 1

# make test: the packages, the static checks, the builds side by side, then
# every test job of make test side by side (tests/run.sh: unit tests of each
# build, simulator, hub, Pi, commands, fuzz smoke, the integration tests and
# their TSan round), then make demo on a screen. Each step's time and the
# whole run's so far after it (tests/timed.sh).
# make test-full: the same with every integration test in the TSan round too.
test-full: export DSV41_IT_TSAN := all
test-full: test
test: export DSV41_TEST_T0 := $(shell date +%s)
test:
	tests/timed.sh deps $(MAKE) -j1 deps test-deps deps-aarch64
	tests/timed.sh check $(MAKE) check
	tests/timed.sh builds $(MAKE) builds
	tests/timed.sh tests tests/run.sh
	tests/timed.sh demo-test $(MAKE) demo-test

bench: all $(BUILD)/tests/bench-status $(BUILD)/tests/bench-client $(BUILD)/tests/bench-guard
	tests/bench/run.sh

# Long runs: the memory guard 10 minutes above its floor without a kill; the
# console 10 minutes under a log flood with RSS <= 64 MB and flat; the worker's sshd
# killed and restarted 20 times under watch; a download interrupted 20 times.
soak: all
	GUARD_SOAK_S=600 CONSOLE_SOAK_S=600 RESTARTS=20 \
	  tests/run.sh -j1 it/test_guard.sh tui/test_soak.sh it/test_hang.sh
	KILLS=20 tests/hub/test_download.sh

# the packages one list after another (make's -j would run two apt-gets at
# once, and the build before its compiler is there), then the build
demo:
	$(MAKE) -j1 deps test-deps
	$(MAKE) all
	tests/demo.sh

# What make install puts under $(DESTDIR)$(PREFIX); make uninstall removes
# exactly these (and the folders of ours they leave empty); make deb packs
# them; make install-table prints them for the README (tests/check_docs.sh).
SHARE    := $(PREFIX)/share/dsv41-top
BIN_FILES   := dsv41-top dsv41-guard dsv41-verify dsv41-xfer
THEME_FILES := $(notdir $(wildcard themes/*.theme))
PI_FILES    := install.sh pi-config.mjs pi-check.mjs models.fragment.json dsv41-sparks.ts
SYSTEMD_UNITS  := $(notdir $(wildcard dist/systemd/*.service))
BASH_COMP   := $(PREFIX)/share/bash-completion/completions/dsv41-top
# zsh looks in site-functions under /usr/local, in vendor-completions for a package's
ZSH_COMP    := $(PREFIX)/share/zsh/$(if $(filter /usr,$(PREFIX)),vendor-completions,site-functions)/_dsv41-top
MAN_DEST    = $(PREFIX)/share/man/man$(subst .,,$(suffix $(1)))/$(1)
INSTALLED := $(addprefix $(PREFIX)/bin/,$(BIN_FILES)) \
             $(addprefix $(SHARE)/themes/,$(THEME_FILES)) $(addprefix $(SHARE)/pi/,$(PI_FILES)) \
             $(foreach p,$(MAN_PAGES),$(call MAN_DEST,$(p))) \
             $(BASH_COMP) $(ZSH_COMP) $(addprefix $(SHARE)/systemd/,$(SYSTEMD_UNITS)) \
             $(SHARE)/grafana/dsv41.json

# DESTDIR reaches the recipes' shell as itself ("$$DESTDIR", quoted): a path
# with a blank in it stays one path
export DESTDIR
install: $(addprefix $(BUILD)/,$(BIN_FILES)) $(GEN_DOCS)
	install -d "$$DESTDIR$(PREFIX)/bin" "$$DESTDIR$(SHARE)/themes" "$$DESTDIR$(SHARE)/pi" \
	  "$$DESTDIR$(PREFIX)/share/man/man1" "$$DESTDIR$(PREFIX)/share/man/man8" \
	  "$$DESTDIR$(PREFIX)/share/bash-completion/completions" \
	  "$$DESTDIR$(dir $(ZSH_COMP))" "$$DESTDIR$(SHARE)/systemd" "$$DESTDIR$(SHARE)/grafana"
	for b in $(BIN_FILES); do install -m 0755 $(BUILD)/$$b "$$DESTDIR$(PREFIX)/bin/$$b" || exit 1; done
	for t in $(THEME_FILES); do install -m 0644 themes/$$t "$$DESTDIR$(SHARE)/themes/" || exit 1; done
	install -m 0755 pi/install.sh "$$DESTDIR$(SHARE)/pi/install.sh"
	for f in $(filter-out install.sh,$(PI_FILES)); do install -m 0644 pi/$$f "$$DESTDIR$(SHARE)/pi/" || exit 1; done
	$(foreach p,$(MAN_PAGES),install -m 0644 $(BUILD)/share/$(p) "$$DESTDIR$(call MAN_DEST,$(p))" &&) true
	install -m 0644 $(BUILD)/share/dsv41-top.bash "$$DESTDIR$(BASH_COMP)"
	install -m 0644 $(BUILD)/share/_dsv41-top "$$DESTDIR$(ZSH_COMP)"
	@# the units as templates: launch --install-units and doctor --fix fill in
	@# the guard's per node (src/guard/units.c), watch --unit the head's watch
	for u in $(SYSTEMD_UNITS); do install -m 0644 dist/systemd/$$u "$$DESTDIR$(SHARE)/systemd/" || exit 1; done
	install -m 0644 dist/grafana/dsv41.json "$$DESTDIR$(SHARE)/grafana/dsv41.json"

uninstall:
	for f in $(INSTALLED); do rm -f "$$DESTDIR$$f" || exit 1; done
	-rmdir "$$DESTDIR$(SHARE)/themes" "$$DESTDIR$(SHARE)/pi" "$$DESTDIR$(SHARE)/systemd" \
	  "$$DESTDIR$(SHARE)/grafana" \
	  "$$DESTDIR$(SHARE)" 2>/dev/null

# The README's table of what lands where, from the lists above.
md_paths = $(subst $(space),$(comma) ,$(foreach f,$(1),`$(patsubst $(PREFIX)/%,%,$(f))`))
space := $(empty) $(empty)
install-table:
	@echo '| what | where, under PREFIX |'
	@echo '|---|---|'
	@echo '| the program and its static helpers | $(call md_paths,$(addprefix $(PREFIX)/bin/,$(BIN_FILES))) |'
	@echo '| the man pages | $(call md_paths,$(foreach p,$(MAN_PAGES),$(call MAN_DEST,$(p)))) |'
	@echo '| the completions (bash, zsh) | $(call md_paths,$(BASH_COMP) $(ZSH_COMP)) |'
	@echo '| colour themes (`--theme NAME`) | $(call md_paths,$(addprefix $(SHARE)/themes/,$(THEME_FILES))) |'
	@echo '| the Pi files (`dsv41-top pi` names them) | $(call md_paths,$(addprefix $(SHARE)/pi/,$(PI_FILES))) |'
	@echo '| systemd unit templates (filled in by `launch --install-units`, `watch --unit`, `exporter --unit`) | $(call md_paths,$(addprefix $(SHARE)/systemd/,$(SYSTEMD_UNITS))) |'
	@echo '| the Grafana dashboard (import it; `exporter` and vLLM scraped) | $(call md_paths,$(SHARE)/grafana/dsv41.json) |'

# make deb: a Debian package (DGX OS is Ubuntu) of what make install puts
# under /usr, built with Debian's hardening flags (dpkg-buildflags) into
# build-deb-ARCH/ (from nothing) and packed by dist/deb/build.sh (stripped, man pages
# compressed, Depends from dpkg-shlibdeps: the runtime libraries only).
# DEB_ARCH=arm64 packs the aarch64 cross build (make deps-aarch64 first).
DEB_ARCH  ?= $(shell dpkg --print-architecture 2>/dev/null)
DEB_BUILD := build-deb-$(DEB_ARCH)
DEB_BUILDFLAGS = DEB_HOST_ARCH=$(DEB_ARCH) DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get
DEB_FLAGS  = CFLAGS="$$($(DEB_BUILDFLAGS) CFLAGS) $$($(DEB_BUILDFLAGS) CPPFLAGS)" \
             LDFLAGS="$$($(DEB_BUILDFLAGS) LDFLAGS)"
deb:
	@# from nothing: a flag that changed rebuilds nothing in make's eyes
	rm -rf $(DEB_BUILD)
ifeq ($(DEB_ARCH),$(shell dpkg --print-architecture 2>/dev/null))
	$(MAKE) BUILD=$(DEB_BUILD) $(DEB_FLAGS) programs
	$(MAKE) BUILD=$(DEB_BUILD) install DESTDIR="$(CURDIR)/$(DEB_BUILD)/root" PREFIX=/usr
	dist/deb/build.sh $(DEB_ARCH) $(DEB_BUILD) $(VERSION) strip
else ifeq ($(DEB_ARCH),arm64)
	$(MAKE) build/dsv41-top
	PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig \
	  $(MAKE) CC=$(AARCH64_PREFIX)gcc AR=$(AARCH64_PREFIX)ar BUILD=$(DEB_BUILD) \
	  DOCS_BIN=build/dsv41-top $(DEB_FLAGS) programs
	$(MAKE) BUILD=$(DEB_BUILD) DOCS_BIN=build/dsv41-top install \
	  DESTDIR="$(CURDIR)/$(DEB_BUILD)/root" PREFIX=/usr
	dist/deb/build.sh $(DEB_ARCH) $(DEB_BUILD) $(VERSION) $(AARCH64_PREFIX)strip
else
	@echo "make deb: DEB_ARCH=$(DEB_ARCH): this machine's architecture or arm64" >&2; exit 2
endif

# The README's generated tables (commands, keys, settings) rewritten from the
# program; tests/check_docs.sh fails when they differ.
readme: $(BUILD)/dsv41-top
	tests/check_docs.sh --fix $(BUILD)/dsv41-top

format:
	clang-format -i src/*.c src/*/*.c src/*/*.h tui/*.c tui/*.h tests/sim/*.c tests/unit/*.c

clean:
	rm -rf build build-* dsv41-top dsv41-guard dsv41-verify dsv41-xfer tests/sim/dsv41-sim
