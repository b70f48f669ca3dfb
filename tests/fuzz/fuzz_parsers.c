/* libFuzzer target for every parser that reads text from a node: the first
 * byte picks the parser, the rest is the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"
#include "inspect.h"
#include "probe.h"
#include "rdma.h"
#include "snapshot.h"
#include "completion.h"
#include "sse.h"
#include "metrics.h"
#include "benchtab.h"
#include "guardview.h"
#include "guardctl.h"
#include "memsig.h"
#include "logbuf.h"
#include "theme.h"
#include "verify.h"
#include "verify_wire.h"
#include "peer.h"
#include "knownhosts.h"
#include "shcmd.h"
#include "strv.h"
#include "config_check.h"
#include "hub.h"
#include "dlplan.h"
#include "ranges.h"
#include "xfer_state.h"
#include "xfer_wire.h"
#include "sshconf.h"
#include "phase.h"
#include "alike.h"
#include "drift.h"
#include "http1.h"
#include "jscan.h"
#include "engine.h"
#include "engine_frames.h"
#include "opsfiles.h"
#include "promtext.h"
#include "suprec.h"
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The parsers, by the selector byte that starts an input. `make fuzz`
 * runs each on its own (DSV41_FUZZ_TARGET=N: the selector is N whatever
 * the first byte says) for a set time with its own corpus. */
#define TARGETS 36
/* read by tests/fuzz/run.sh (each target's name and corpus), not here */
__attribute__((unused)) static const char *const TARGET_NAME[TARGETS] = {
    "meminfo-vmstat", "gpu-csv",     "compute-apps", "inspect",     "rdma-sysfs",  "snapshot",
    "metrics",        "sse-chunks",  "log-clean",    "guard-view",  "bench-table", "theme",
    "manifest",       "verify-wire", "rsync",        "known-hosts", "shell-quote", "setting",
    "hub-tree",       "link-header", "ranges",       "copy-plan",   "copy-report", "frame",
    "guard-signals",  "ssh-config",  "boot-log-alike-env", "shell-words", "http1-response",
    "jscan",          "engine-frames", "engine-inspect", "download-plan", "copy-state",
    "supervise-record", "exporter-page"};
static int g_target = -1;

/* copy-state's files, in a directory of this run's, removed at its end */
static char g_state_dir[64];
static void state_dir_remove(void)
{
    char p[128];
    snprintf(p, sizeof p, "%s/%s", g_state_dir, XFER_STATE_LIVE);
    unlink(p);
    rmdir(g_state_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *t = getenv("DSV41_FUZZ_TARGET");
    if (t && *t)
        g_target = atoi(t) % TARGETS;
    return 0;
}

/* Reads back a word shcmd_quote wrote, by POSIX rules for what it emits:
 * '...' literal, "..." holding only quotes, \x outside quotes. NULL when the
 * word is not of that shape. */
static char *unquote(const char *q)
{
    char *out = malloc(strlen(q) + 1), *o = out;
    if (!out)
        return NULL;
    for (const char *p = q; *p;) {
        if (*p == '\'') {
            const char *e = strchr(p + 1, '\'');
            if (!e)
                goto bad;
            memcpy(o, p + 1, (size_t)(e - p - 1));
            o += e - p - 1;
            p = e + 1;
        } else if (*p == '"') {
            for (p++; *p == '\''; p++)
                *o++ = '\'';
            if (*p++ != '"')
                goto bad;
        } else if (*p == '\\' && p[1]) {
            *o++ = p[1];
            p += 2;
        } else {
            goto bad;
        }
    }
    *o = '\0';
    return out;
bad:
    free(out);
    return NULL;
}

static int fuzz_body(void *ctx, const char *d, size_t n)
{
    return buf_append(ctx, d, n);
}

static int fuzz_frame(void *ctx, int stream, const char *d, size_t n)
{
    size_t *total = ctx;
    if (stream < 0 || stream > 2)
        abort();
    (void)d;
    *total += n;
    return 0;
}

/* A response fed whole and fed in pieces of 1..8 bytes: the same result. */
static void fuzz_http1(const char *d, size_t n)
{
    static struct http1_resp a, b;
    struct buf ba = BUF_INIT, bb = BUF_INIT;
    http1_resp_init(&a, fuzz_body, &ba);
    int ra = http1_feed(&a, d, n);
    if (ra == 0 && !a.complete)
        ra = http1_eof(&a);
    http1_resp_init(&b, fuzz_body, &bb);
    int rb = 0;
    size_t step = n ? (unsigned char)d[0] % 8 + 1 : 1;
    for (size_t i = 0; i < n && rb == 0; i += step)
        rb = http1_feed(&b, d + i, n - i < step ? n - i : step);
    if (rb == 0 && !b.complete)
        rb = http1_eof(&b);
    if (ra != rb || a.status != b.status || a.complete != b.complete || ba.len != bb.len ||
        (ba.len && memcmp(ba.data, bb.data, ba.len) != 0))
        abort();
    buf_free(&ba);
    buf_free(&bb);
}

static int fuzz_event(void *ctx, const char *d, size_t len)
{
    return completion_event(ctx, d, len, 1.0) < 0 ? -1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char *s = malloc(size);
    if (!s)
        return 0;
    memcpy(s, data + 1, size - 1);
    s[size - 1] = '\0';
    switch (g_target >= 0 ? g_target : data[0] % TARGETS) {
    case 28:
        fuzz_http1((const char *)data + 1, size - 1);
        break;
    case 29:
    case 31: {
        /* an exact-size copy: ASan sees a read past the end */
        char *j = malloc(size > 1 ? size - 1 : 1);
        if (!j)
            break;
        memcpy(j, data + 1, size - 1);
        struct jscan_val v;
        struct buf str = BUF_INIT;
        long num;
        static const char *const label[] = {"Config", "Labels", "dsv41-top.managed"};
        struct container_info c;
        bool tty;
        const char *why;
        if ((g_target >= 0 ? g_target : data[0] % TARGETS) == 31) {
            engine_parse_inspect(j, size - 1, &c, &tty, &why);
        } else if (jscan_get(j, size - 1, NULL, 0, &v, &why) == 0) {
            if (v.raw < j || v.raw + v.raw_len > j + size - 1)
                abort();
            jscan_string(&v, &str);
            jscan_long(&v, &num);
            jscan_get(j, size - 1, label, 3, &v, &why);
            jscan_string(&v, &str);
            jscan_get_dotted(j, size - 1, "State.Pid", &v, &why);
            jscan_long(&v, &num);
        }
        buf_free(&str);
        free(j);
        break;
    }
    case 30: {
        /* split at a cut the input chooses: the same payload bytes either way */
        struct engine_frames f, g;
        size_t whole = 0, parts = 0, cut = size > 1 ? (unsigned char)data[1] % size : 0;
        const char *d = (const char *)data + 1;
        engine_frames_init(&f);
        engine_frames_init(&g);
        int ra = engine_frames_feed(&f, d, size - 1, fuzz_frame, &whole);
        int rb = engine_frames_feed(&g, d, cut, fuzz_frame, &parts);
        if (rb == 0)
            rb = engine_frames_feed(&g, d + cut, size - 1 - cut, fuzz_frame, &parts);
        if (ra != rb || (ra == 0 && whole != parts) ||
            (ra == 0 && engine_frames_end(&f) != engine_frames_end(&g)))
            abort();
        break;
    }
    case 25: {
        /* an ssh config (Include, Match, ProxyJump): resolving never crashes */
        int fd = memfd_create("ssh_config", MFD_CLOEXEC);
        if (fd >= 0 && write(fd, s, size - 1) == (ssize_t)(size - 1)) {
            char path[64];
            snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
            struct ssh_target t;
            struct buf err = BUF_INIT;
            sshconf_resolve(path, "spark2", &t, &err);
            sshconf_resolve(path, "root@other:2200", &t, &err);
            buf_free(&err);
        }
        if (fd >= 0)
            close(fd);
        break;
    }
    case 27: {
        /* a setting's argument list (EXTRA): split or refused with a column
         * inside the text; what splits, printed as the dry run prints it
         * (shcmd_join), splits back into the same words */
        struct strv w = STRV_INIT, again = STRV_INIT;
        struct buf err = BUF_INIT, line = BUF_INIT;
        int rc = strv_add_shell_words(&w, s, &err);
        if (rc != strv_add_shell_words(&again, s, NULL))
            abort();
        strv_free(&again);
        if (rc != 0) {
            const char *col = strstr(buf_str(&err), "column ");
            long c = col ? strtol(col + 7, NULL, 10) : 0;
            if (w.n != 0 || c < 1 || (size_t)c > strlen(s))
                abort();
        } else {
            for (int i = 0; i < w.n; i++)
                if (strlen(w.v[i]) > strlen(s))
                    abort();
            if (shcmd_join(&w, &line) < 0 || strv_add_shell_words(&again, buf_str(&line), NULL))
                abort();
            if (again.n != w.n)
                abort();
            for (int i = 0; i < w.n; i++)
                if (strcmp(again.v[i], w.v[i]) != 0)
                    abort();
        }
        strv_free(&w);
        strv_free(&again);
        buf_free(&err);
        buf_free(&line);
        break;
    }
    case 26: {
        /* a rank's log lines (phases, the figures the budget keeps), a node's
         * fingerprint and a rank's env file: figures in range, text inert */
        struct phase_state ph;
        phase_init(&ph);
        for (const char *p = s; *p;) {
            size_t n = strcspn(p, "\n");
            phase_feed(&ph, p, n);
            p += n + (p[n] == '\n');
        }
        if ((ph.weights_gib < 0 && ph.weights_gib != -1) || ph.weights_gib >= 1e6 ||
            (ph.graphs_gib < 0 && ph.graphs_gib != -1) || ph.graphs_gib >= 1e6)
            abort();
        struct alike_print a;
        alike_parse(s, &a);
        for (int i = 0; i < ALIKE_FIELDS; i++)
            for (const char *p = a.value[i]; *p; p++)
                if ((unsigned char)*p < 0x20 || *p == 0x7f)
                    abort();
        struct drift_start d;
        drift_parse_env(s, &d);
        if (d.gid_index < -1 || d.gid_index >= 1 << 16)
            abort();
        break;
    }
    case 24: {
        /* the guard's signals, on the bytes as read (not terminated) */
        const char *raw = (const char *)data + 1;
        size_t n = size - 1;
        struct memsig_psi psi;
        if (memsig_parse_psi(raw, n, &psi) == 0 && (psi.full_avg10 < 0 || psi.full_avg10 > 100))
            abort();
        if (memsig_parse_buddy(raw, n, MEMSIG_BUDDY_ORDER) < -1)
            abort();
        unsigned long long seq;
        size_t off, len;
        if (memsig_parse_kmsg(raw, n, &seq, &off, &len) >= 0 && (off > n || len > n - off))
            abort();
        char line[400];
        guardctl_signals(raw, n, line, sizeof line);
        break;
    }
    case 21: {
        /* the copy's plan: whatever it accepts stays inside the directory, once */
        struct xfer_plan p;
        struct buf err = BUF_INIT;
        if (xfer_plan_parse(s, &p, &err) == 0) {
            for (int i = 0; i < p.n; i++)
                if (verify_path_problem(p.f[i].path) || strstr(p.f[i].path, "//") ||
                    strncmp(p.f[i].path, "./", 2) == 0 || p.f[i].size < 0 ||
                    p.f[i].size > XFER_MAX_SIZE)
                    abort();
            struct buf again = BUF_INIT; /* what it formats, it reads back the same */
            struct xfer_plan q;
            xfer_plan_format(&p, &again);
            if (xfer_plan_parse(buf_str(&again), &q, &err) != 0 || q.n != p.n)
                abort();
            for (int i = 0; i < p.n; i++)
                if (q.f[i].has_git != p.f[i].has_git || q.f[i].has_sha != p.f[i].has_sha ||
                    (p.f[i].has_git && memcmp(q.f[i].git, p.f[i].git, 20) != 0))
                    abort();
            xfer_plan_free(&q);
            buf_free(&again);
            xfer_plan_free(&p);
        }
        buf_free(&err);
        break;
    }
    case 22: {
        /* the helper's report for a plan of 5 files: ids and ranges in bounds */
        struct xfer_report r;
        xfer_report_parse(s, 5, &r);
        if (r.kind != XR_TEXT && r.kind != XR_PROGRESS && r.kind != XR_END &&
            r.kind != XR_LISTEN && r.kind != XR_REFUSED && r.kind != XR_CORES &&
            (r.id < 0 || r.id >= 5))
            abort();
        if (r.kind == XR_NEED && (r.a < 0 || r.b <= r.a))
            abort();
        if (r.kind == XR_LISTEN && (r.port < 1 || r.port > 65535 || !r.addr[0]))
            abort();
        break;
    }
    case 23: {
        /* a frame header off the network: round trips when accepted */
        if (size - 1 >= XFER_HDR_LEN) {
            struct xfer_hdr h;
            unsigned char back[XFER_HDR_LEN];
            if (xfer_hdr_unpack((const unsigned char *)s, &h)) {
                if (h.off < 0 || h.len < 0)
                    abort();
                xfer_hdr_pack(&h, back);
                if (memcmp(back, s, 4) != 0)
                    abort();
            }
        }
        break;
    }
    case 18: {
        /* a hub listing: whatever it accepts stays inside the directory */
        struct hub_tree t = {0};
        struct buf err = BUF_INIT;
        if (hub_parse_tree(s, &t, &err) == 0 && hub_tree_check(&t, &err) == 0)
            for (int i = 0; i < t.n; i++)
                if (verify_path_problem(t.f[i].path) || strstr(t.f[i].path, "//") ||
                    t.f[i].size < 0 || t.f[i].size > HUB_MAX_FILE_SIZE)
                    abort();
        hub_tree_free(&t);
        buf_free(&err);
        break;
    }
    case 32: {
        /* a listing made into a download's plan: every name the plan makes
         * (a split shard's, from its parts) stays inside the directory and
         * is none of ours, and each output's pieces add up to its size */
        struct hub_tree t = {0};
        struct dl_plan p;
        struct buf err = BUF_INIT;
        if (hub_parse_tree(s, &t, &err) == 0 && hub_tree_check(&t, &err) == 0 &&
            dl_plan_build(&t, NULL, NULL, 0, &p, &err) == 0) {
            for (int i = 0; i < p.n; i++) {
                if (hub_path_problem(p.o[i].path) || dl_plan_find(&p, p.o[i].path) != &p.o[i])
                    abort();
                int64_t sum = 0;
                for (int k = 0; k < p.o[i].np; k++)
                    sum += p.o[i].p[k].f->size;
                if (sum != p.o[i].size)
                    abort();
            }
            dl_plan_free(&p);
        }
        hub_tree_free(&t);
        buf_free(&err);
        break;
    }
    case 34: {
        /* the supervisor's record, as a file anyone with STATE_DIR could have
         * edited: counts within their arrays, the line shown cleaned */
        struct suprec r;
        suprec_parse(s, 1800000000, &r);
        if (r.ncauses > SUPREC_CAUSES || r.nhour > SUPREC_HOUR_MAX || strlen(r.last) >= sizeof r.last)
            abort();
        for (const char *q = r.last; *q; q++)
            if ((unsigned char)*q < 0x20 || *q == 0x7f)
                abort();
        break;
    }
    case 35: {
        /* the exporter's page with remote names (an RDMA device, its netdev,
         * a bench's test name, a guard's line): every line a comment or one
         * sample - a label value never breaks out of its quotes */
        static struct state st;
        static bool init;
        if (!init && state_init(&st) < 0)
            abort();
        init = true;
        st.nnodes = 1;
        st.nranks = 1;
        struct state_node *n = &st.nodes[0];
        memset(n, 0, sizeof *n);
        n->configured = n->have = n->snap.reachable = true;
        snprintf(n->name, sizeof n->name, "%s", s);
        n->snap.nports = 1;
        snprintf(n->snap.ports[0].dev, sizeof n->snap.ports[0].dev, "%s", s);
        snprintf(n->snap.ports[0].netdev, sizeof n->snap.ports[0].netdev, "%s", s);
        snprintf(n->snap.ports[0].rate, sizeof n->snap.ports[0].rate, "%s", s);
        n->snap.ports[0].rcv_bytes = (struct pval){true, 1};
        n->snap.ports[0].state_num = 4;
        snprintf(n->guard_desc, sizeof n->guard_desc, "%s", s);
        n->guard = GUARD_VIEW_OK;
        struct opsfiles f = {.read = true, .have_bench = true, .accept_pass = -1};
        f.bench.n = 1;
        snprintf(f.bench.name[0], sizeof f.bench.name[0], "%s", s);
        snprintf(f.bench.label, sizeof f.bench.label, "%s", s);
        struct ops_counts k = {0};
        struct buf page = BUF_INIT;
        promtext_render(&st, &f, &k, &page);
        for (const char *l = buf_str(&page); *l;) {
            size_t len = strcspn(l, "\n");
            if (*l != '#') {
                /* name, then {...} with every quote escaped or a pair, then " value" */
                const char *q = l;
                while (q < l + len && *q != '{' && *q != ' ')
                    q++;
                if (q < l + len && *q == '{') {
                    bool in = false;
                    for (q++; q < l + len && (in || *q != '}'); q++) {
                        if (in && *q == '\\')
                            q++;
                        else if (*q == '"')
                            in = !in;
                    }
                    if (q >= l + len || in)
                        abort();
                    q++;
                }
                if (q >= l + len || *q != ' ')
                    abort();
            }
            l += len + (l[len] == '\n');
        }
        buf_free(&page);
        break;
    }
    case 33: {
        /* the copy helper's state, as a file another run (or another user)
         * left: whatever it loads has ranges inside each file, and what it
         * writes back it reads back the same */
        if (!g_state_dir[0]) {
            snprintf(g_state_dir, sizeof g_state_dir, "/tmp/dsv41-fuzz-state.XXXXXX");
            if (!mkdtemp(g_state_dir))
                abort();
            atexit(state_dir_remove);
        }
        const char *dir = g_state_dir;
        struct buf text = {.data = (char *)s, .len = strlen(s)}, err = BUF_INIT;
        struct xfer_state st;
        if (xfer_state_write(dir, XFER_STATE_LIVE, &text, false, &err) == 0 &&
            xfer_state_load(dir, XFER_STATE_LIVE, &st, &err) == 0) {
            for (int i = 0; i < st.n; i++)
                for (int k = 0; k < st.f[i].landed.n; k++)
                    if (st.f[i].landed.r[k].a < 0 || st.f[i].landed.r[k].b > st.f[i].size)
                        abort();
            struct buf again = BUF_INIT;
            struct xfer_state back;
            int n = st.n;
            xfer_state_format(&st, false, &again);
            if (xfer_state_write(dir, XFER_STATE_LIVE, &again, false, &err) != 0 ||
                xfer_state_load(dir, XFER_STATE_LIVE, &back, &err) != 0 || back.n != n)
                abort();
            xfer_state_free(&back);
            xfer_state_free(&st);
            buf_free(&again);
        }
        buf_free(&err);
        break;
    }
    case 19: {
        /* a Link header: a next page is an http(s) URL, never anything else */
        char url[512];
        if (hub_link_next(s, url, sizeof url) && strncmp(url, "http://", 7) != 0 &&
            strncmp(url, "https://", 8) != 0)
            abort();
        break;
    }
    case 20: {
        /* ranges against a bitmap of 256 bytes: the same set after any adds and subs */
        struct ranges r = {0};
        unsigned char bits[256] = {0};
        for (size_t i = 0; i + 2 < size - 1; i += 3) {
            unsigned a = (unsigned char)s[i + 1], b = (unsigned char)s[i + 2];
            bool add = s[i] & 1;
            if (a > b) {
                unsigned x = a;
                a = b;
                b = x;
            }
            if (add)
                ranges_add(&r, a, b);
            else
                ranges_sub(&r, a, b);
            for (unsigned k = a; k < b; k++)
                bits[k] = add;
        }
        int64_t want = 0;
        for (int k = 0; k < 256; k++)
            want += bits[k];
        if (ranges_count(&r, 0, 256) != want)
            abort();
        for (int k = 0; k < r.n; k++)
            if (r.r[k].a >= r.r[k].b || (k && r.r[k].a <= r.r[k - 1].b)) /* sorted, merged */
                abort();
        for (int k = 0; k < 256; k++) {
            int64_t reach = ranges_reach(&r, k);
            if ((reach > k) != (bits[k] != 0))
                abort();
        }
        ranges_free(&r);
        break;
    }
    case 15: {
        /* known_hosts text: the preference holds supported methods only, once each */
        static const char sup[] = "ecdsa-sha2-nistp256,ssh-ed25519,rsa-sha2-512,ssh-rsa";
        struct buf b = BUF_INIT;
        knownhosts_pref_text(s, "10.10.10.11", 22, sup, &b);
        int n = 0;
        for (const char *p = buf_str(&b); *p; n++) {
            size_t l = strcspn(p, ",");
            char m[64];
            snprintf(m, sizeof m, ",%.*s,", (int)l, p);
            char all[80];
            snprintf(all, sizeof all, ",%s,", sup);
            if (!l || !strstr(all, m))
                abort();
            p += l + (p[l] == ',');
        }
        if (n != 4)
            abort();
        buf_free(&b);
        break;
    }
    case 16: {
        /* a value quoted for a login shell reads back as the same bytes, and a
         * remote line has no newline (csh could not read it) */
        struct buf q = BUF_INIT;
        shcmd_quote(&q, s);
        char *back = unquote(buf_str(&q));
        if (!back || strcmp(back, s) != 0)
            abort();
        free(back);
        struct shcmd c = SHCMD_INIT;
        shcmd_script(&c, "printf '%s\\n' \"$@\"\n");
        shcmd_arg(&c, s);
        buf_reset(&q);
        if (shcmd_line(&c, &q) < 0 || strchr(buf_str(&q), '\n'))
            abort();
        shcmd_free(&c);
        buf_free(&q);
        break;
    }
    case 17: {
        /* a setting's check never reads past the value, whatever it holds */
        char form[160];
        for (int k = CK_ANY; k <= CK_SECRET; k++)
            config_check_value((enum config_kind)k, 0, 65535, true, s, form, sizeof form);
        break;
    }
    case 8: {
        /* remote log bytes: what comes out must be inert and stable */
        static char out[8192], again[8192];
        size_t n = text_clean(out, sizeof out, (const char *)data + 1, size - 1);
        for (size_t i = 0; i < n; i++)
            if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
                abort();
        if (text_clean(again, sizeof again, out, n) != n || memcmp(out, again, n) != 0)
            abort();
        static struct logbuf lb;
        if (!lb.ring)
            logbuf_init(&lb, 64, 1 << 16);
        logbuf_push(&lb, (const char *)data + 1, size - 1);
        logbuf_find(&lb, lb.end, -1, "err");
        break;
    }
    case 9: {
        char desc[240], ev[200];
        guardview_parse(s, desc, sizeof desc, ev, sizeof ev);
        break;
    }
    case 10: {
        static struct benchtab t;
        memset(&t, 0, sizeof t);
        benchtab_add(&t, 0, s, "fuzz");
        break;
    }
    case 12: {
        /* a manifest from the network: every path it accepts stays inside
         * the directory */
        struct verify_manifest m;
        struct buf err = BUF_INIT;
        if (verify_manifest_parse(s, "fuzz", &m, &err) == 0) {
            for (int i = 0; i < m.n; i++) {
                const char *p = m.e[i].path;
                if (p[0] == '/' || strcmp(p, "..") == 0 || strncmp(p, "../", 3) == 0 ||
                    strstr(p, "/../") || (strlen(p) >= 3 && strcmp(p + strlen(p) - 3, "/..") == 0))
                    abort();
            }
            verify_manifest_free(&m);
        } else if (!err.len) {
            abort(); /* a refusal always says why */
        }
        buf_free(&err);
        break;
    }
    case 13: {
        /* a worker's verify report: a file line round-trips */
        static struct verify_wire w, again;
        verify_wire_parse(s, &w);
        if (w.kind == VW_FILE) {
            struct buf b = BUF_INIT;
            verify_wire_file(&b, &w.e);
            b.data[--b.len] = '\0';
            verify_wire_parse(b.data, &again);
            if (again.kind != VW_FILE || strcmp(again.path, w.path) != 0 || again.e.res != w.e.res)
                abort();
            buf_free(&b);
        }
        break;
    }
    case 14: {
        /* rsync's output: a progress line has sane figures */
        struct peer_progress p;
        if (peer_parse_progress(s, &p) && (p.bytes < 0 || p.pct < 0 || p.pct > 100 ||
                                           !memchr(p.rate, '\0', sizeof p.rate)))
            abort();
        break;
    }
    case 11: {
        struct theme t;
        char err[300];
        theme_parse(s, "fuzz.theme", &t, err, sizeof err);
        break;
    }
    case 0: {
        struct probe_mem m;
        struct pval v;
        probe_parse_meminfo(s, &m);
        probe_parse_vmstat_oom(s, &v);
        break;
    }
    case 1: {
        struct probe_gpu g[4];
        probe_parse_gpu_csv(s, g, 4);
        break;
    }
    case 2: {
        struct probe_gpu_proc p[4];
        probe_parse_compute_apps(s, p, 4);
        break;
    }
    case 3: {
        struct container_info c;
        inspect_parse_line(s, &c);
        break;
    }
    case 4: {
        struct rdma_port p[RDMA_MAX_PORTS];
        struct rdma_ifaddr a[8];
        int n = rdma_parse_sysfs(s, p, RDMA_MAX_PORTS);
        int na = rdma_parse_ipv4(s, a, 8);
        rdma_resolve(p, n < 0 ? 0 : n, a, na);
        struct rdma_fabric f;
        rdma_detect_fabric(p, n < 0 ? 0 : n, a, na, NULL, &f);
        break;
    }
    case 7: {
        struct completion c;
        completion_init(&c, 0);
        struct sse_parser p;
        sse_init(&p, fuzz_event, &c, 1 << 16);
        /* fed in two pieces at a point the input picks */
        size_t cut = size > 2 ? data[1] % (size - 1) : 0;
        if (!sse_feed(&p, s, cut) && !sse_feed(&p, s + cut, size - 1 - cut))
            sse_finish(&p);
        sse_free(&p);
        completion_free(&c);
        completion_init(&c, 0);
        completion_body(&c, s, 0);
        completion_free(&c);
        break;
    }
    case 6: {
        struct metrics a, b;
        struct metrics_rates r;
        metrics_parse(s, &a);
        metrics_parse(s + (size - 1) / 2, &b);
        metrics_rates(&a, &b, 1.0, &r);
        break;
    }
    case 5: {
        static struct snapshot snap;
        snapshot_parse(s, "@@M@@", NULL, &snap);
        break;
    }
    }
    free(s);
    return 0;
}
