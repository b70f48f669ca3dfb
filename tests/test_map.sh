#!/bin/bash
# The map from each module of src/ and tui/ to the tests that exercise it,
# generated so that it cannot drift (docs/testmap.md is this output;
# tests/check_docs.sh fails when they differ, make readme rewrites it):
#   unit      - the cmocka tests that include the module's header;
#   commands  - the test scripts that run a command (dsv41-top CMD,
#               top_head CMD, $TOP CMD, ... ; the console for tui/ scripts)
#               whose source reaches the module through includes, followed
#               transitively (docs/cmd.md says where each command is).
# A module neither reaches is listed as untested.
#
# It runs twice in every make test, so the work is done by two awk passes
# (mawk: POSIX awk only; 0.15 s) rather than by forks per file (35 s); the
# orderings that depend on the locale (the module list, each module's
# scripts, the unit tests' glob) are left to sort and to bash. Paths are
# taken to hold no blanks.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2

# the unit tests, in the glob's (locale's) order; none: no unit column
# (mawk would die reading a directory)
units=()
for u in tests/unit/test_*.c; do [ -e "$u" ] && [ ! -d "$u" ] && units+=("$u"); done

tab=$'\t'
# both passes name files by their last part
AWK_BASE='
function base(p, suf) { # basename(1): the suffix goes unless it is the name
    sub(/.*\//, "", p)
    if (suf != "" && length(p) > length(suf) && substr(p, length(p) - length(suf) + 1) == suf)
        p = substr(p, 1, length(p) - length(suf))
    return p
}
'
# Pass 1: module<TAB>script for every script that reaches a module.
# Its inputs: every source and header in find's own order (where two headers
# share a name the last one found wins, as it did), with find's %Y type so
# that a directory is never read (mawk dies on one); the test scripts
# (the order does not matter: each module's scripts are sorted below).
awk -v tab="$tab" "$AWK_BASE"'
function dir(p) { sub(/\/[^\/]*$/, "", p); return p }
# the modules a file reaches, transitively: the sources of its headers,
# theirs, ... (once per file: REACH caches it)
function reach(f,    seen, todo, nt, q, g, nh, H, j, h, ni, I, k, out) {
    if (f in REACH) return REACH[f]
    nt = 1; todo[1] = f
    for (q = 1; q <= nt; q++) {
        g = todo[q]
        if (g in seen) continue
        seen[g] = 1
        nh = split((g in INC) ? INC[g] : "", H)
        for (j = 1; j <= nh; j++) {
            h = H[j]
            if (h in HDR) todo[++nt] = HDR[h]
            if (h in IMPL) { ni = split(IMPL[h], I); for (k = 1; k <= ni; k++) todo[++nt] = I[k] }
        }
    }
    out = ""
    for (g in seen) if (g ~ /\.c$/) out = out " " g
    return REACH[f] = out
}
function use(m, s) { if (!((m, s) in USED)) { USED[m, s] = 1; print m tab s } }
BEGIN {
    # the direct includes of our headers, file by file
    ns = 0
    while ((getline l < ARGV[1]) > 0) {
        t = substr(l, 1, 1); f = substr(l, 3)
        if (f == "") continue
        SRC[++ns] = f; INC[f] = ""
        if (t == "d") continue
        while ((getline l < f) > 0)
            if (match(l, /^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*"/)) {
                h = substr(l, RSTART, RLENGTH - 1); sub(/^[^"]*"/, "", h)
                INC[f] = INC[f] " " h
            }
        close(f)
    }
    # where each header is, and the sources that implement it: a .c file
    # implements its namesake header, else the first header of its own folder it
    # includes (dlhash.c implements dlrun.h, guardcg.c guard.h) - but not the
    # command table (commands.h, cmdtab.h), which every command includes
    for (i = 1; i <= ns; i++) if (SRC[i] ~ /\.h$/) HDR[base(SRC[i], "")] = SRC[i]
    for (i = 1; i <= ns; i++) {
        c = SRC[i]
        if (c !~ /\.c$/) continue
        b = base(c, ".c"); d = dir(c)
        if ((b ".h") in HDR) { IMPL[b ".h"] = IMPL[b ".h"] " " c; continue }
        nh = split(INC[c], H)
        for (j = 1; j <= nh; j++) {
            h = H[j]
            if (h == "commands.h" || h == "cmdtab.h") continue
            if ((h in HDR) && dir(HDR[h]) == d) { IMPL[h] = IMPL[h] " " c; break }
        }
    }

    # command -> its source file, from the checked table in docs/cmd.md
    while ((getline l < "docs/cmd.md") > 0) {
        if (substr(l, 1, 3) != "| `") continue
        split(l, P, "[|]")
        if (!match(P[3], /`[^`]*\.c`/)) continue
        f = substr(P[3], RSTART + 1, RLENGTH - 2)
        s = P[2]
        while (match(s, /`[a-z-]*`/)) {
            if (RLENGTH > 2) CMD_FILE[substr(s, RSTART + 1, RLENGTH - 2)] = f
            s = substr(s, RSTART + RLENGTH)
        }
    }
    close("docs/cmd.md")

    # the commands of each script: a word taken as it is written (a `*` or a
    # variable after the program is no command)
    nscr = 0
    while ((getline sl < ARGV[2]) > 0) {
        typ = substr(sl, 1, 1); sc = substr(sl, 3)
        if (sc == "") continue
        name = sc; sub(/^tests\//, "", name)
        NAME[++nscr] = name; WORDS[nscr] = ""; FLAGS[nscr] = ""
        if (typ == "d") continue
        split("", CMDS); guard = verify = xfer = 0
        while ((getline l < sc) > 0) {
            $0 = l
            for (i = 1; i <= NF; i++) {
                t = $i; sub(/.*\(/, "", t) # out=$(top_head ...
                if (t ~ /^(top_head|top_worker|"?\$TOP"?|"?\$BIN"?|dsv41-top|"?\$\{?DSV41_BIN|"?\$bin"?)/) {
                    for (j = i + 1; j <= NF; j++) {
                        w = $j; gsub(/^"|"$/, "", w)
                        if (w == "--config" || w == "--set" || w == "-s") { j++; continue }
                        if (w ~ /^[A-Z_]+=/ || w ~ /^-/) continue
                        if (w != "") CMDS[w] = 1
                        break
                    }
                }
            }
            if (index(l, "dsv41-guard") || index(l, " launch")) guard = 1
            if (index(l, "dsv41-verify") || index(l, "verify --node") || index(l, "verify --all")) verify = 1
            if (index(l, "dsv41-xfer") || index(l, "copy-to-peer") || index(l, "--to-workers")) xfer = 1
        }
        close(sc)
        for (w in CMDS) WORDS[nscr] = WORDS[nscr] " " w
        FLAGS[nscr] = (guard ? "g" : "") (verify ? "v" : "") (xfer ? "x" : "")
    }
    close(ARGV[2])
    for (i = 1; i <= nscr; i++) {
        name = NAME[i]
        files = ""
        n = split(WORDS[i], W)
        for (k = 1; k <= n; k++) {
            if (W[k] in CMD_FILE) files = files " " CMD_FILE[W[k]]
        }
        # the console for tui/ and demo scripts; the static helpers where a
        # script runs them or the command that pushes them
        if (name ~ /^(tui|demo)\//) files = files " tui/console.c"
        # main and the command table run every command (not followed further:
        # through them every module is reachable)
        if (files != "") { use("src/main.c", name); use("src/cmd/cmdtab.c", name) }
        if (FLAGS[i] ~ /g/) files = files " src/guard/guardd.c"
        if (FLAGS[i] ~ /v/) files = files " src/verify/verifyd.c"
        if (FLAGS[i] ~ /x/) files = files " src/transfer/xferd.c"
        nf = split(files, F)
        for (k = 1; k <= nf; k++) {
            nm = split(reach(F[k]), M)
            for (j = 1; j <= nm; j++) use(M[j], name)
        }
    }
    exit
}' <(find src tui -name '*.[ch]' -printf '%Y %p\n') \
   <(find tests -path tests/unit -prune -o -path '*/node_modules' -prune -o -name 'test_*.sh' -printf '%Y %p\n'
     echo "f tests/check_docs.sh") |
    # each module's scripts in sort -u's order, as when sorted one module at a time
    sort -t "$tab" -k1,1 -k2,2 -u |
# Pass 2: the table, module by module in sort's order.
awk -v tab="$tab" -v nunit=${#units[@]} "$AWK_BASE"'
function unit(b, u) {
    if ((b, u) in HASU) return
    HASU[b, u] = 1
    u = (b in UNITS) ? UNITS[b] " " u : u # (mawk makes UNITS[b] before the right side)
    UNITS[b] = u
}
BEGIN {
    nm = 0
    while ((getline l < ARGV[1]) > 0) if (l != "") MOD[++nm] = l
    # a unit test covers the module whose header it includes
    for (i = 1; i <= nunit; i++) {
        u = ARGV[i + 1]
        un = base(u, ".c")
        while ((getline l < u) > 0)
            if (match(l, /^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*\.h"/)) {
                h = substr(l, RSTART, RLENGTH - 3); sub(/^[^"]*"/, "", h)
                unit(h, un)
            }
        close(u)
    }

    # the scripts of each module, sorted: the first three shown, then (+N)
    while ((getline l < "/dev/stdin") > 0) {
        t = index(l, tab); m = substr(l, 1, t - 1); s = substr(l, t + 1)
        if (++N[m] <= 3) SHOWN[m] = SHOWN[m] (N[m] > 1 ? " " : "") s
    }

    print "| module | unit tests | test scripts that reach it |"
    print "|---|---|---|"
    untested = ""
    for (i = 1; i <= nm; i++) {
        c = MOD[i]; b = base(c, ".c")
        u = (b in UNITS) ? UNITS[b] : ""
        n = (c in N) ? N[c] : 0
        shown = (c in SHOWN) ? SHOWN[c] : ""
        if (n > 3) shown = shown " (+" (n - 3) ")"
        if (u == "" && n == 0) untested = untested " `" c "`"
        print "| `" c "` | " (u == "" ? "none" : u) " | " (shown == "" ? "none" : shown) " |"
    }
    print ""
    print "Untested:" (untested == "" ? " none" : untested)
    exit
}' <(find src tui -name '*.c' | sort) "${units[@]}"
