#include "config.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config_check.h"
#include "strv.h"
#include "dirs.h"
#include "text.h"

/* A default may name another key as "${KEY}"; those are expanded after all
 * layers are applied, so MODEL_DIR set in the environment also moves
 * WORKER_MODEL_DIR. "~/" means the user's home directory; in a path on the
 * workers (on_worker) it means the worker account's home, which only the
 * worker knows: those values keep their "~/" (and take the referenced key's
 * value before its "~/" was expanded), and the node expands it
 * (node_expand_path). */
struct config_key {
    const char *dflt;
    const char *help;
    bool secret;
    enum config_kind kind;
    bool empty_ok;
    double min, max; /* CK_INT, CK_NUM */
};

#define HIST_IMG                                                                                   \
    "ghcr.io/0xsero/deepseek-v4.1-flash-spark@sha256:"                                             \
    "5668e35e5ee021da4b9ce88a1964caf0e082e8ca01d81d1d64b6213a55c6add5"

/* [the key] = {default, help, secret, kind, empty allowed, min, max}; the name comes
 * from config_keys.h, where it is written once */
static const struct config_key KEYS[CFG_COUNT] = {
    [CFG_WORKER] = {"", "ssh target of the worker node (alias from ~/.ssh/config, user@host)",
                    false, CK_SSH_TARGET, true, 0, 0},
    [CFG_MODEL_DIR] = {"~/models/DeepSeek-V4.1-Flash-Spark", "checkpoint directory on the head",
                       false, CK_MOUNT_PATH, false, 0, 0},
    [CFG_WORKER_MODEL_DIR] = {"${MODEL_DIR}", "checkpoint directory on the worker", false,
                              CK_MOUNT_PATH, false, 0, 0},
    [CFG_STATE_DIR] = {"~/.dsv41-two-sparks", "API key, plans, caches, guard log (every node)",
                       false, CK_MOUNT_PATH, false, 0, 0},
    [CFG_HEAD_IP] = {"", "head fabric IPv4 (empty: detected)", false, CK_IPV4, true, 0, 0},
    [CFG_WORKER_IP] = {"", "worker fabric IPv4 (empty: detected)", false, CK_IPV4, true, 0, 0},
    [CFG_HEAD_IFNAME] = {"", "head fabric netdev (empty: detected)", false, CK_IFNAME, true, 0, 0},
    [CFG_WORKER_IFNAME] = {"", "worker fabric netdev (empty: detected)", false, CK_IFNAME, true, 0,
                           0},
    [CFG_HEAD_HCAS] = {"", "head RDMA devices for NCCL (empty: detected)", false, CK_HCAS, true, 0,
                       0},
    [CFG_WORKER_HCAS] = {"", "worker RDMA devices for NCCL (empty: detected)", false, CK_HCAS, true,
                         0, 0},
    [CFG_PORT] = {"8000", "API port of rank 0", false, CK_INT, false, 1, 65535},
    [CFG_MPORT] = {"29655", "torch distributed master port", false, CK_INT, false, 1, 65535},
    [CFG_IMG] = {HIST_IMG, "server image, pinned by digest", false, CK_IMAGE, false, 0, 0},
    [CFG_ACCEPT_BENCH_TOL] = {"5",
                              "accept: a bench figure more than this many percent below the "
                              "baseline's fails the candidate",
                              false, CK_NUM, false, 0, 100},
    [CFG_ACCEPT_TOP1] = {"0.98",
                         "accept: the least top-1 agreement with the baseline over the drift "
                         "windows",
                         false, CK_NUM, false, 0, 1},
    [CFG_ACCEPT_KLD] = {"0.02", "accept: the largest mean KL divergence from the baseline, nats",
                        false, CK_NUM, false, 0, 100},
    [CFG_CANDIDATE_IMG] = {"",
                           "the image the console's A key accepts (NAME@sha256:DIGEST; "
                           "dsv41-top accept)",
                           false, CK_IMAGE, true, 0, 0},
    [CFG_API_KEY_FILE] = {"${STATE_DIR}/api_key", "API key file (mode 0600)", false, CK_MOUNT_PATH,
                          false, 0, 0},
    [CFG_API_URL] = {"", "API base URL (empty: http://127.0.0.1:PORT)", false, CK_URL, true, 0, 0},
    [CFG_MEMGUARD_GIB] = {"1", "memory guard floor, GiB of MemAvailable", false, CK_NUM, false, 0,
                          1000000},
    [CFG_MEMGUARD_WARN_GIB] = {"4", "memory guard warning, GiB of MemAvailable", false, CK_NUM,
                               false, 0, 1000000},
    [CFG_MEMGUARD_PSI_WARN] = {"10", "memory guard warning, PSI memory full avg10 % (0: off)",
                               false, CK_INT, false, 0, 100},
    [CFG_MEMGUARD_PSI_KILL] = {"60", "memory guard kill, PSI memory full avg10 % (0: off)", false,
                               CK_INT, false, 0, 100},
    [CFG_MEMGUARD_FRAG_WARN] =
        {"16",
         "memory guard warning below this many free 4 MiB blocks (buddyinfo order >= 10; 0: off)",
         false, CK_INT, false, 0, 1e12},
    [CFG_MEMGUARD_KMSG_WARN] =
        {"1", "memory guard warning at this many NVRM kernel lines in 10 min (0: off)", false,
         CK_INT, false, 0, 32},
    [CFG_KV_BYTES] = {"2700000000", "--kv-cache-memory-bytes", false, CK_INT, false, 1, 1e15},
    [CFG_WEIGHTS_GIB] =
        {"",
         "GiB of weights a rank holds, for the memory budget (empty: what the last boot logged)",
         false, CK_NUM, true, 0, 1000000},
    [CFG_MAX_LEN] = {"262144", "--max-model-len", false, CK_INT, false, 1, 1 << 24},
    [CFG_MAX_SEQS] = {"2", "--max-num-seqs", false, CK_INT, false, 1, 256},
    [CFG_NSPEC] = {"7", "speculative draft tokens", false, CK_INT, false, 0, 32},
    [CFG_BATCH] = {"2048", "--max-num-batched-tokens", false, CK_INT, false, 1, 1 << 24},
    [CFG_GPU_UTIL] = {"0.88", "--gpu-memory-utilization", false, CK_NUM, false, 0, 1},
    [CFG_GRAPH_MODE] = {"FULL_DECODE_ONLY", "cudagraph_mode", false, CK_WORD, false, 0, 0},
    [CFG_PLAN_NAME] = {"J268-ho-v31-K5n.json", "EXL3 allocation plan in MODEL_DIR/exl3/plan", false,
                       CK_FILE_NAME, false, 0, 0},
    [CFG_EXTRA] =
        {"",
         "extra vLLM arguments for rank 0, words as a shell splits them, nothing expanded, a "
         "JSON value one word (--override-generation-config {\"temperature\": 0.6})",
         false, CK_WORDS, true, 0, 0},
    [CFG_EXTRA_ENV] = {"",
                       "extra KEY=VALUE words for every rank's environment, quoted as for a shell "
                       "(NCCL_DEBUG=INFO 'A=two words')",
                       false, CK_ENV_WORDS, true, 0, 0},
    [CFG_TP] = {"", "tensor parallel size (empty: the number of nodes)", false, CK_INT, true, 1,
                64},
    [CFG_PP] = {"1", "pipeline parallel size (TP x PP = nodes)", false, CK_INT, false, 1, 64},
    [CFG_WORKERS] = {"",
                     "more than one worker: host1,host2,... (rank i on node i; overrides WORKER)",
                     false, CK_SSH_TARGETS, true, 0, 0},
    [CFG_VLLM_CMD] =
        {"vllm serve",
         "the command the image serves with, before vLLM's arguments, words quoted as for a "
         "shell (rank 0 runs it through the image's /bin/sh after reading the key file, as "
         "\"$@\": never re-split)",
         false, CK_COMMAND, false, 0, 0},
    [CFG_WEDGE_SECONDS] = {"10",
                           "requests running with nothing moving (no token, no prefill step) this "
                           "long: engine wedged",
                           false, CK_INT, false, 1, 3600},
    [CFG_PROBE_IDLE_S] =
        {"60", "idle this long: one 1-token completion proves the engine serves (0: never)", false,
         CK_INT, false, 0, 86400},
    [CFG_PROBE_DEADLINE_S] = {"30", "the liveness probe's token must come within this: else wedged",
                              false, CK_INT, false, 1, 3600},
    [CFG_EXPORTER_LISTEN] = {"127.0.0.1:9841",
                             "`exporter`'s address: IPV4:PORT or [IPV6]:PORT (beyond loopback it "
                             "requires EXPORTER_TOKEN_FILE)",
                             false, CK_WORDS, false, 0, 0},
    [CFG_EXPORTER_TOKEN_FILE] = {"",
                                 "a file (mode 0600) holding the bearer token `exporter` asks "
                                 "of a scrape (empty: none, loopback only)",
                                 false, CK_LOCAL_PATH, true, 0, 0},
    [CFG_ALERT_WEBHOOK] = {"",
                           "an alert's URL: each event POSTed there (JSON, or text with "
                           "ALERT_FORMAT=text for ntfy-style services)",
                           true, CK_URL, true, 0, 0},
    [CFG_ALERT_FORMAT] = {"json", "ALERT_WEBHOOK's body: json, or text (a line, and a Title header)",
                          false, CK_WORD, false, 0, 0},
    [CFG_ALERT_CMD] = {"",
                       "a program run for each event (words as a shell splits them, no shell), "
                       "the event as JSON on its stdin (a secret: its words may hold a token)",
                       true, CK_COMMAND, true, 0, 0},
    [CFG_ALERT_RATE] = {"5", "alerts of one kind at most this many in 10 minutes (the rest counted)",
                        false, CK_INT, false, 1, 1000},
    [CFG_SUPERVISE] = {"0",
                       "watch relaunches the deployment after a rank's exit or a wedge (every "
                       "rank stopped first)",
                       false, CK_BOOL, false, 0, 0},
    [CFG_SUPERVISE_MAX] = {"3", "relaunches an hour at most; then the supervisor stops and alerts",
                           false, CK_INT, false, 1, 100},
    [CFG_SUPERVISE_AFTER_GUARD] = {"0",
                                   "relaunch after a memory guard fired too (else every rank "
                                   "stays stopped)",
                                   false, CK_BOOL, false, 0, 0},
    [CFG_SUPERVISE_BACKOFF_S] = {"30",
                                 "seconds before a relaunch, doubled for each one already in "
                                 "the last hour",
                                 false, CK_INT, false, 0, 3600},
    [CFG_READY_TIMEOUT] = {"2700", "seconds launch waits for the API (first boot ~12 min)", false,
                           CK_INT, false, 1, 7 * 86400},
    [CFG_STOP_TIMEOUT] =
        {"60",
         "seconds `stop` gives rank 0 to finish its requests after SIGTERM before it is killed "
         "(the workers, with nothing to drain, get at most 10 s of it)",
         false, CK_INT, false, 0, 86400},
    [CFG_LOG_MAX_SIZE] =
        {"100m",
         "rank container log size before it is rotated: N with k, m or g (empty: the runtime's "
         "own log settings)",
         false, CK_LOG_SIZE, true, 0, 0},
    [CFG_LOG_MAX_FILES] =
        {"5", "rank container log files kept (docker; podman keeps one file, cut at LOG_MAX_SIZE)",
         false, CK_INT, false, 1, 100},
    [CFG_WORKER_STATE_DIR] = {"${STATE_DIR}",
                              "STATE_DIR on the workers (empty: the same, STATE_DIR as it was set, "
                              "its ~/ the worker's home)",
                              false, CK_MOUNT_PATH, true, 0, 0},
    [CFG_HF_REPO] = {"0xSero/DeepSeek-V4.1-Flash-Spark",
                     "Hugging Face repository of the checkpoint", false, CK_REVISION, false, 0, 0},
    [CFG_REVISION] = {"main", "Hugging Face revision (pin a commit)", false, CK_REVISION, false, 0,
                      0},
    [CFG_KEEP_PARTS] = {"0", "keep Engram .partNN files after reassembly", false, CK_BOOL, false, 0,
                        0},
    [CFG_DOWNLOAD_TO_WORKERS] = {"0", "download: also copy each verified file to the workers",
                                 false, CK_BOOL, false, 0, 0},
    [CFG_HF_TOKEN] = {"", "Hugging Face token (else read from HF_TOKEN_PATH)", true, CK_SECRET,
                      true, 0, 0},
    [CFG_HF_TOKEN_PATH] = {"~/.cache/huggingface/token",
                           "file with the Hugging Face token, as "
                           "huggingface_hub keeps it",
                           false, CK_LOCAL_PATH, false, 0, 0},
    [CFG_HF_ENDPOINT] = {"https://huggingface.co", "Hugging Face endpoint", false, CK_URL, false, 0,
                         0},
    [CFG_HF_STALL_S] =
        {"30",
         "no byte from the hub or its CDN for this long ends a try (5 tries, then the download "
         "stops naming the file)",
         false, CK_INT, false, 1, 3600},
    [CFG_DSV41_API_KEY] = {"", "API key (else read from API_KEY_FILE)", true, CK_SECRET, true, 0,
                           0},
    [CFG_RUNTIME] = {"docker", "container runtime CLI: docker or podman", false, CK_RUNTIME, false,
                     0, 0},
    [CFG_RUNTIME_SOCKET] =
        {"",
         "the runtime's API socket on the head, asked instead of starting its CLI (empty: docker's "
         "/var/run/docker.sock, podman's podman.sock, as the runtime puts it; none: the CLI "
         "always)",
         false, CK_SOCKET, true, 0, 0},
    [CFG_WORKER_RUNTIME_SOCKET] =
        {"",
         "the runtime's API socket on the workers, asked through the ssh session "
         "(direct-streamlocal) instead of starting their CLI, and by their memory guards (empty: "
         "found on the worker as RUNTIME_SOCKET's rules find it on the head; none: the CLI always)",
         false, CK_SOCKET, true, 0, 0},
    [CFG_GPUS] = {"all", "value of --gpus (empty: no GPU flag, for runtimes without the hook)",
                  false, CK_GPUS, true, 0, 0},
    [CFG_ULIMITS] = {"memlock=-1",
                     "--ulimit values for the ranks (empty: none, where a sandbox "
                     "forbids raising limits)",
                     false, CK_ULIMITS, true, 0, 0},
    [CFG_SSH_KNOWN_HOSTS] = {"~/.ssh/known_hosts", "known_hosts file for strict host key checks",
                             false, CK_LOCAL_PATH, false, 0, 0},
    [CFG_SSH_CONFIG] = {"~/.ssh/config",
                        "ssh client config (Host, HostName, User, Port, IdentityFile, "
                        "Include, Match host, ProxyJump, ...)",
                        false, CK_LOCAL_PATH, false, 0, 0},
    [CFG_SSH_TIMEOUT] = {"5", "seconds to wait for a node's ssh connection", false, CK_INT, false,
                         1, 600},
    [CFG_DSV41_PROC_ROOT] = {"/proc", "root of /proc on the head (tests)", false, CK_LOCAL_PATH,
                             false, 0, 0},
    [CFG_DSV41_SYS_ROOT] = {"/sys", "root of /sys on the head (tests)", false, CK_LOCAL_PATH, false,
                            0, 0},
    [CFG_WORKER_PROC_ROOT] = {"/proc", "root of /proc on the worker (tests)", false, CK_LOCAL_PATH,
                              false, 0, 0},
    [CFG_WORKER_SYS_ROOT] = {"/sys", "root of /sys on the worker (tests)", false, CK_LOCAL_PATH,
                             false, 0, 0},
    [CFG_UNIT_DIR] =
        {"/etc/systemd/system",
         "where launch --install-units writes dsv41-guard.service on every node (tests)", false,
         CK_PATH, false, 0, 0},
};

#define NKEYS ((int)CFG_COUNT)

#define CONFIG_NAME(name) #name,
static const char *const NAMES[CFG_COUNT] = {CONFIG_KEYS(CONFIG_NAME)};
#undef CONFIG_NAME

/* The paths on the workers: their "~/" is the worker account's home. */
static bool on_worker(int i)
{
    return strcmp(NAMES[i], "WORKER_MODEL_DIR") == 0 ||
           strcmp(NAMES[i], "WORKER_STATE_DIR") == 0;
}

static int key_index(const char *name, size_t len)
{
    for (int i = 0; i < NKEYS; i++)
        if (strlen(NAMES[i]) == len && strncmp(NAMES[i], name, len) == 0)
            return i;
    return -1;
}

static int set_value(struct config_value *v, const char *val, enum config_source src,
                     const char *origin)
{
    char *copy = strdup(val);
    char *ocopy = origin ? strdup(origin) : NULL;
    if (!copy || (origin && !ocopy)) {
        free(copy);
        free(ocopy);
        return -1;
    }
    free(v->value);
    free(v->origin);
    v->value = copy;
    v->origin = ocopy;
    v->source = src;
    return 0;
}

int config_default_path(struct buf *out)
{
    const char *xdg = getenv("XDG_CONFIG_HOME");
    if (xdg && *xdg)
        return buf_printf(out, "%s/dsv41-top/config", xdg);
    const char *home = getenv("HOME");
    return buf_printf(out, "%s/.config/dsv41-top/config", home ? home : "");
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
        s[--n] = '\0';
    return s;
}

/* A value that is one quoted string, '...' or "...", loses its quotes as
 * the shell that sources the file would take them off ("..." unescapes
 * \" \\ \$ \`). Anything else stays as written: a value such as
 * EXTRA='-a' 'b c' is a list of words whose quotes strv_add_shell_words
 * reads later, and stripping its first and last quote would join them. */
static int unquote(char *val)
{
    size_t vl = strlen(val);
    if (vl < 2 || (val[0] != '"' && val[0] != '\''))
        return 0;
    size_t i = 1;
    if (val[0] == '\'')
        i = strcspn(val + 1, "'") + 1;
    else
        for (; val[i] && val[i] != '"'; i++)
            if (val[i] == '\\' && val[i + 1])
                i++;
    if (i != vl - 1)
        return 0;
    struct strv w = STRV_INIT;
    struct buf err = BUF_INIT;
    int rc = strv_add_shell_words(&w, val, &err);
    buf_free(&err);
    if (rc == 0 && w.n == 1)
        memmove(val, w.v[0], strlen(w.v[0]) + 1); /* never longer than val */
    strv_free(&w);
    return rc;
}

/* Config file: KEY=VALUE lines, '#' comments, optional "export " prefix and
 * matching quotes around the value, so a sourced shell env file also works. */
static int load_file(struct config *c, const char *path, struct buf *err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT)
            return 0;
        buf_printf(err, "config file %s: %s", path, strerror(errno));
        return -1;
    }
    char line[8192];
    int lineno = 0, rc = 0;
    const char *secret = NULL;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            buf_printf(err, "%s:%d: line longer than %zu bytes", path, lineno, sizeof line - 1);
            rc = -1;
            break;
        }
        char *s = trim(line);
        if (!*s || *s == '#')
            continue;
        if (strncmp(s, "export ", 7) == 0)
            s = trim(s + 7);
        char *eq = strchr(s, '=');
        if (!eq) {
            buf_printf(err, "%s:%d: expected KEY=VALUE", path, lineno);
            rc = -1;
            break;
        }
        *eq = '\0';
        char *key = trim(s), *val = trim(eq + 1);
        if (unquote(val) < 0) {
            buf_puts(err, "out of memory");
            rc = -1;
            break;
        }
        int i = key_index(key, strlen(key));
        if (i < 0) {
            buf_printf(err, "%s:%d: unknown setting '%s' (see 'dsv41-top config')", path, lineno,
                       key);
            rc = -1;
            break;
        }
        if (KEYS[i].secret && *val)
            secret = NAMES[i];
        char origin[4200];
        snprintf(origin, sizeof origin, "%s:%d", path, lineno);
        if (set_value(&c->values[i], val, CONFIG_SRC_FILE, origin) < 0) {
            buf_puts(err, "out of memory");
            rc = -1;
            break;
        }
    }
    /* like the key file: a secret in a file others can read is refused */
    struct stat st;
    if (rc == 0 && secret && fstat(fileno(f), &st) == 0 && (st.st_mode & 077)) {
        buf_printf(err,
                   "config file %s sets %s but group or others can read it (mode %03o): "
                   "chmod 600 %s",
                   path, secret, (unsigned)(st.st_mode & 0777), path);
        rc = -1;
    }
    fclose(f);
    return rc;
}

static const char *origin_of(const struct config_value *v)
{
    switch (v->source) {
    case CONFIG_SRC_FILE:
        return v->origin ? v->origin : "the config file";
    case CONFIG_SRC_ENV:
        return "the environment";
    case CONFIG_SRC_FLAG:
        return "--set";
    case CONFIG_SRC_DEFAULT:
        break;
    }
    return "the default";
}

/* Every value against its key's form; the first that does not fit is named
 * with where it came from. */
static int check_values(const struct config *c, struct buf *err)
{
    for (int i = 0; i < NKEYS; i++) {
        const struct config_value *v = &c->values[i];
        char form[320], homed[4200];
        const char *val = v->value;
        /* a worker's "~/" is checked as the absolute path it will become */
        if (on_worker(i) && dirs_expand_home("/h", val, homed, sizeof homed) == 0)
            val = homed;
        const char *want = config_check_value(KEYS[i].kind, KEYS[i].min, KEYS[i].max,
                                              KEYS[i].empty_ok, val, form, sizeof form);
        if (!want)
            continue;
        if (KEYS[i].secret) {
            buf_printf(err, "%s (from %s): expected %s", NAMES[i], origin_of(v), want);
        } else {
            char shown[200];
            text_clean(shown, sizeof shown, v->value, strlen(v->value));
            buf_printf(err, "%s='%s' (from %s): expected %s", NAMES[i], shown, origin_of(v),
                       want);
        }
        return -1;
    }
    return 0;
}

/* Expands "~/" and "${KEY}" in a default. One level is enough: defaults only
 * reference keys whose own defaults have no references. */
static int expand(const struct config *c, const char *in, bool keep_home, struct buf *out)
{
    if (!keep_home && dirs_is_home_relative(in)) {
        const char *home = getenv("HOME");
        if (buf_puts(out, home ? home : "") < 0)
            return -1;
        in++;
    }
    while (*in) {
        const char *ref = strstr(in, "${");
        if (!ref)
            return buf_puts(out, in);
        if (buf_append(out, in, (size_t)(ref - in)) < 0)
            return -1;
        const char *end = strchr(ref, '}');
        if (!end)
            return buf_puts(out, ref);
        int i = key_index(ref + 2, (size_t)(end - ref - 2));
        if (i >= 0 && buf_puts(out, c->values[i].value) < 0)
            return -1;
        in = end + 1;
    }
    return 0;
}

/* v's value becomes src expanded (expand's keep_home as given); -1 out of
 * memory. src may be v's own value: it is read before it is replaced. */
static int set_expanded(const struct config *c, struct config_value *v, const char *src,
                        bool keep_home)
{
    struct buf out = BUF_INIT;
    if (expand(c, src, keep_home, &out) < 0) {
        buf_free(&out);
        return -1;
    }
    free(v->value);
    v->value = out.data ? out.data : strdup("");
    return v->value ? 0 : -1;
}

/* Each value's number, parsed once when the layers are in: as atol and
 * strtod read a prefix (what an empty optional setting gives: 0), and
 * whether the whole value is one. */
static void parse_numbers(struct config *c)
{
    for (int i = 0; i < c->count; i++) {
        struct config_value *v = &c->values[i];
        char *end;
        errno = 0;
        v->whole = strtol(v->value, &end, 10);
        v->is_whole = v->value[0] && !*end && !errno;
        errno = 0;
        v->num = strtod(v->value, &end);
        v->is_num = v->value[0] && !*end && !errno;
    }
}

int config_load(struct config *c, const char *file, char *const *flags, int nflags, struct buf *err)
{
    memset(c, 0, sizeof *c);
    c->values = calloc(NKEYS, sizeof *c->values);
    if (!c->values) {
        buf_puts(err, "out of memory");
        return -1;
    }
    c->count = NKEYS;
    struct buf path = BUF_INIT;
    if (file ? buf_puts(&path, file) : config_default_path(&path)) {
        buf_puts(err, "out of memory");
        return -1;
    }
    c->file = strdup(buf_str(&path));
    buf_free(&path);
    /* Raw defaults first so file/env layers can replace them. */
    for (int i = 0; i < NKEYS; i++) {
        c->values[i].key = NAMES[i];
        if (set_value(&c->values[i], KEYS[i].dflt, CONFIG_SRC_DEFAULT, NULL) < 0)
            goto oom;
    }
    if (!c->file)
        goto oom;
    if (load_file(c, c->file, err) < 0)
        return -1;
    for (int i = 0; i < NKEYS; i++) {
        const char *env = getenv(NAMES[i]);
        if (env && set_value(&c->values[i], env, CONFIG_SRC_ENV, NULL) < 0)
            goto oom;
    }
    for (int f = 0; f < nflags; f++) {
        const char *eq = strchr(flags[f], '=');
        int i = eq ? key_index(flags[f], (size_t)(eq - flags[f])) : -1;
        if (i < 0) {
            buf_printf(err,
                       "--set %s: expected KEY=VALUE with a known KEY (see 'dsv41-top config')",
                       flags[f]);
            return -1;
        }
        if (KEYS[i].secret) {
            /* the console passes its --set words to every job: ps would show
             * them to every user of the node */
            buf_printf(err,
                       "--set %s=...: a secret on the command line is visible to every "
                       "user (ps); export %s instead%s",
                       NAMES[i], NAMES[i],
                       strcmp(NAMES[i], "DSV41_API_KEY") == 0
                           ? ", or keep the key in API_KEY_FILE (mode 0600)"
                           : ", or set it in the config file (mode 0600)");
            return -1;
        }
        if (set_value(&c->values[i], eq + 1, CONFIG_SRC_FLAG, NULL) < 0)
            goto oom;
    }
    /* The workers' paths first, while the keys they reference still hold
     * what was set (a "~/" not yet the head's home); an empty one is its
     * default. Their own "~/" stays. */
    for (int i = 0; i < NKEYS; i++) {
        struct config_value *v = &c->values[i];
        if (!on_worker(i) || (v->source != CONFIG_SRC_DEFAULT && v->value[0]))
            continue;
        if (set_expanded(c, v, KEYS[i].dflt, true) < 0)
            goto oom;
    }
    /* Expand defaults, and "~/" in any path-like value the user gave. */
    for (int i = 0; i < NKEYS; i++) {
        struct config_value *v = &c->values[i];
        if (on_worker(i) || (!strchr(v->value, '~') && !strstr(v->value, "${")))
            continue;
        if (v->source != CONFIG_SRC_DEFAULT && v->value[0] != '~')
            continue;
        if (set_expanded(c, v, v->source == CONFIG_SRC_DEFAULT ? KEYS[i].dflt : v->value,
                         false) < 0)
            goto oom;
    }
    parse_numbers(c);
    return check_values(c, err);
oom:
    buf_puts(err, "out of memory loading configuration");
    return -1;
}

void config_free(struct config *c)
{
    for (int i = 0; i < c->count; i++) {
        free(c->values[i].value);
        free(c->values[i].origin);
    }
    free(c->values);
    free(c->file);
    memset(c, 0, sizeof *c);
}

const char *config_name(enum config_id k)
{
    return NAMES[k];
}

void config_hash(const struct config *c, char out[17])
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    if (!md) {
        snprintf(out, 17, "n/a");
        return;
    }
    unsigned char h[32];
    unsigned int hl = 0;
    EVP_DigestInit_ex(md, EVP_sha256(), NULL);
    /* what shapes the server's speed and answers: the checkpoint, the
     * nodes, vLLM's arguments and environment - not the image (what is
     * compared), paths, ports, ssh or the console's own settings */
    static const enum config_id SHAPES[] = {
        CFG_HF_REPO, CFG_REVISION, CFG_WORKER,   CFG_WORKERS,  CFG_TP,       CFG_PP,
        CFG_MAX_LEN, CFG_MAX_SEQS, CFG_NSPEC,    CFG_BATCH,    CFG_GPU_UTIL, CFG_GRAPH_MODE,
        CFG_KV_BYTES, CFG_PLAN_NAME, CFG_EXTRA,  CFG_EXTRA_ENV, CFG_VLLM_CMD,
    };
    for (size_t k = 0; k < sizeof SHAPES / sizeof *SHAPES; k++) {
        int i = SHAPES[k];
        EVP_DigestUpdate(md, NAMES[i], strlen(NAMES[i]) + 1);
        EVP_DigestUpdate(md, c->values[i].value, strlen(c->values[i].value) + 1);
    }
    EVP_DigestFinal_ex(md, h, &hl);
    EVP_MD_CTX_free(md);
    for (int i = 0; i < 8; i++)
        snprintf(out + 2 * i, 3, "%02x", h[i]);
}

int config_copy(struct config *dst, const struct config *src)
{
    memset(dst, 0, sizeof *dst);
    dst->values = calloc((size_t)src->count, sizeof *dst->values);
    dst->file = src->file ? strdup(src->file) : NULL;
    if (!dst->values || (src->file && !dst->file)) {
        config_free(dst);
        return -1;
    }
    dst->count = src->count;
    for (int i = 0; i < src->count; i++) {
        const struct config_value *v = &src->values[i];
        dst->values[i] = *v;
        dst->values[i].value = NULL;
        dst->values[i].origin = NULL;
        if (set_value(&dst->values[i], v->value, v->source, v->origin) < 0) {
            config_free(dst);
            return -1;
        }
    }
    return 0;
}

int config_override(struct config *c, enum config_id k, const char *value, struct buf *err)
{
    if (set_value(&c->values[k], value, CONFIG_SRC_FLAG, NULL) < 0) {
        buf_puts(err, "out of memory");
        return -1;
    }
    parse_numbers(c);
    return check_values(c, err);
}

const char *config_str(const struct config *c, enum config_id k)
{
    return c->values[k].value;
}

long config_long(const struct config *c, enum config_id k)
{
    return c->values[k].whole;
}

double config_num(const struct config *c, enum config_id k)
{
    return c->values[k].num;
}

int config_get_long(const struct config *c, enum config_id k, long *out, struct buf *err)
{
    const struct config_value *v = &c->values[k];
    if (!v->is_whole) {
        buf_printf(err, "%s=%s is not a whole number", NAMES[k], v->value);
        return -1;
    }
    *out = v->whole;
    return 0;
}

int config_get_double(const struct config *c, enum config_id k, double *out, struct buf *err)
{
    const struct config_value *v = &c->values[k];
    if (!v->is_num) {
        buf_printf(err, "%s=%s is not a number", NAMES[k], v->value);
        return -1;
    }
    *out = v->num;
    return 0;
}

bool config_is_secret(const char *key)
{
    int i = key_index(key, strlen(key));
    return i >= 0 && KEYS[i].secret;
}

const char *config_help(const char *key)
{
    int i = key_index(key, strlen(key));
    return i >= 0 ? KEYS[i].help : "";
}

const char *config_key_at(int i, const char **def, const char **help, bool *secret)
{
    if (i < 0 || (size_t)i >= sizeof KEYS / sizeof *KEYS)
        return NULL;
    *def = KEYS[i].dflt;
    *help = KEYS[i].help;
    *secret = KEYS[i].secret;
    return NAMES[i];
}

const char *config_source_name(enum config_source s)
{
    switch (s) {
    case CONFIG_SRC_DEFAULT:
        return "default";
    case CONFIG_SRC_FILE:
        return "file";
    case CONFIG_SRC_ENV:
        return "env";
    case CONFIG_SRC_FLAG:
        return "flag";
    }
    return "?";
}

void config_dump(const struct config *c, FILE *f)
{
    fprintf(f, "# config file: %s\n", c->file);
    for (int i = 0; i < c->count; i++) {
        const struct config_value *v = &c->values[i];
        const char *shown = v->value;
        char noted[4200];
        struct buf hid = BUF_INIT;
        if (config_is_secret(v->key))
            shown = v->value[0] ? "(set, hidden)" : "";
        else if (strcmp(v->key, "EXTRA_ENV") == 0) /* a token may be given this way */
            shown = (text_hide_secrets(v->value, strlen(v->value), TEXT_HIDE_WORDS, &hid),
                     buf_str(&hid));
        else if (i < NKEYS && on_worker(i) && dirs_is_home_relative(v->value))
            shown = (snprintf(noted, sizeof noted, "%s (~ is the worker's home)", v->value),
                     noted);
        fprintf(f, "%-18s = %-40s  [%s%s%s]  %s\n", v->key, shown, config_source_name(v->source),
                v->origin ? " " : "", v->origin ? v->origin : "", config_help(v->key));
        buf_free(&hid);
    }
}
