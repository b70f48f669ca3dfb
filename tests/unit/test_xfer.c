/* The copy's streams on loopback: dsv41-xfer's engine (xfer_recv) in a
 * thread with its report on a pipe, the head's streams (xfer_send) fed from
 * that report as xfer_peer feeds them from the ssh channel. Also the wire's
 * parsers against hostile input, and the state file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hub.h"
#include "verify.h"
#include "xfer_peer.h"
#include "xfer_recv.h"
#include "xfer_recv_int.h"
#include "xfer_send.h"
#include "xfer_state.h"
#include "xfer_wire.h"

static const char TOKEN[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

static void wire_frames(void **st)
{
    (void)st;
    struct xfer_hdr h = {.type = XF_DATA, .id = 7, .gen = 3, .off = 5000000000LL, .len = 1 << 20},
                    g;
    unsigned char raw[XFER_HDR_LEN];
    xfer_hdr_pack(&h, raw);
    assert_true(xfer_hdr_unpack(raw, &g));
    assert_true(g.type == XF_DATA && g.id == 7 && g.gen == 3 && g.off == h.off && g.len == h.len);
    raw[0] ^= 1; /* not ours */
    assert_false(xfer_hdr_unpack(raw, &g));
    raw[0] ^= 1;
    raw[7] = 9; /* an unknown type */
    assert_false(xfer_hdr_unpack(raw, &g));
    raw[7] = XF_DATA;
    raw[16] = 0x80; /* an offset past INT64_MAX */
    assert_false(xfer_hdr_unpack(raw, &g));
}

static void wire_plan(void **st)
{
    (void)st;
    struct xfer_plan p = {0}, q;
    unsigned char sha[32];
    memset(sha, 0xab, sizeof sha);
    assert_int_equal(xfer_plan_add(&p, "model-00001-of-00006.safetensors", 100, 5, sha), 0);
    assert_int_equal(xfer_plan_add(&p, "exl3/qn/a\\b c", 0, 6, NULL), 0);
    assert_int_equal(xfer_plan_add(&p, "config.json", 3, 7, NULL), 0);
    p.f[2].has_git = true; /* the hub's git blob sha1 of a small file */
    memset(p.f[2].git, 0x5c, 20);
    struct buf t = BUF_INIT, err = BUF_INIT;
    xfer_plan_format(&p, &t);
    assert_non_null(strstr(buf_str(&t), " git:5c5c5c"));
    assert_int_equal(xfer_plan_parse(buf_str(&t), &q, &err), 0);
    assert_int_equal(q.n, 3);
    assert_string_equal(q.f[1].path, "exl3/qn/a\\b c");
    assert_true(q.f[0].has_sha && memcmp(q.f[0].sha, sha, 32) == 0 && !q.f[1].has_sha);
    assert_true(!q.f[0].has_git && !q.f[1].has_git && q.f[2].has_git && !q.f[2].has_sha);
    assert_true(memcmp(q.f[2].git, p.f[2].git, 20) == 0);
    xfer_plan_free(&q);
    /* a version 1 plan (no git:) still reads */
    assert_int_equal(xfer_plan_parse("dsv41-copy-plan 1\n0 1 0 - a\n", &q, &err), 0);
    xfer_plan_free(&q);
    static const char *hostile[] = {
        "0 1 0 - ../escaped\n",
        "0 1 0 - /etc/passwd\n",
        "0 1 0 - a/.dsv41-copy.state\n",
        "0 1 0 - x.incomplete\n",
        "0 1 0 - a\n1 1 0 - a\n",
        "0 -1 0 - a\n",
        "1 1 0 - a\n",
        "0 1 0 - ./a\n",
        "0 1 0 - a//b\n",
        "0 1 0 - a/./b\n",
        "0 1 0 - a/\n",
        "0 99999999999999999999 0 - a\n",
        "0 2000000000000000 0 - a\n",
        "0 1 0 - a\001b\n",
        "0 1 0 zz a\n",
        "0 1 0 - \n",
        "0 1 0 - a\\q\n",
        "0 1 0 - a",
        "0 1 0 git:5c5c a\n",
        "0 1 0 git:5C5C5C5C5C5C5C5C5C5C5C5C5C5C5C5C5C5C5C5C a\n",
        "0 1 0 git: a\n",
    };
    for (size_t i = 0; i < sizeof hostile / sizeof *hostile; i++)
        for (int v = 1; v <= 2; v++) {
            buf_reset(&t);
            buf_printf(&t, "dsv41-copy-plan %d\n%s", v, hostile[i]);
            buf_reset(&err);
            assert_int_equal(xfer_plan_parse(buf_str(&t), &q, &err), -1);
            assert_true(err.len > 0);
        }
    /* git: belongs to version 2 */
    assert_int_equal(
        xfer_plan_parse("dsv41-copy-plan 1\n0 1 0 git:5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c a\n",
                        &q, &err),
        -1);
    assert_int_equal(xfer_plan_parse("dsv41-copy-plan 3\n", &q, &err), -1);
    xfer_plan_free(&p);
    buf_free(&t);
    buf_free(&err);
}

static void wire_reports(void **st)
{
    (void)st;
    struct xfer_report r;
    xfer_report_parse("need 1 0 4096", 2, &r);
    assert_true(r.kind == XR_NEED && r.id == 1 && r.a == 0 && r.b == 4096);
    xfer_report_parse("listen 10.0.0.2 41000", 2, &r);
    assert_true(r.kind == XR_LISTEN && strcmp(r.addr, "10.0.0.2") == 0 && r.port == 41000);
    xfer_report_parse("bad 0 2", 2, &r);
    assert_true(r.kind == XR_BAD && r.a == 2);
    xfer_report_parse("end 3 0", 2, &r);
    assert_true(r.kind == XR_END && r.a == 3);
    static const char *text[] = {"need 2 0 1",
                                 "need 1 5 5",
                                 "need -1 0 1",
                                 "ok 1 ",
                                 "listen a;b 1",
                                 "listen 1.2.3.4 0",
                                 "listen 1.2.3.4 70000",
                                 "progress -1",
                                 "refused 1.2.3.4 x",
                                 "bad 0 -1",
                                 "fail 0",
                                 "cores 0",
                                 "hello"};
    for (size_t i = 0; i < sizeof text / sizeof *text; i++) {
        xfer_report_parse(text[i], 2, &r);
        assert_int_equal(r.kind, XR_TEXT);
    }
}

static char g_dir[256];

static void mkfile(const char *rel, size_t size, unsigned seed)
{
    char path[512];
    snprintf(path, sizeof path, "%s/src/%s", g_dir, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    char cmd[700];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
    assert_int_equal(system(cmd), 0);
    *slash = '/';
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (size_t i = 0; i < size; i++) {
        seed = seed * 1103515245u + 12345u;
        fputc((int)(seed >> 16) & 0xff, f);
    }
    fclose(f);
}

static void state_roundtrip(void **st)
{
    (void)st;
    struct xfer_state s = {0}, t;
    struct xfer_state_file *f = xfer_state_get(&s, "a/b c");
    f->size = 100;
    f->mtime_ns = 7;
    ranges_add(&f->landed, 0, 10);
    ranges_add(&f->landed, 20, 30);
    ranges_add(&f->synced, 0, 10);
    struct xfer_state_file *g = xfer_state_get(&s, "v");
    g->size = 5;
    g->verified = g->has_sha = true;
    struct buf text = BUF_INIT, err = BUF_INIT;
    snprintf(g_dir, sizeof g_dir, "/tmp/dsv41-xfer-unit.XXXXXX");
    assert_non_null(mkdtemp(g_dir));
    /* the live text (landed) and the durable one (synced, written after) */
    xfer_state_format(&s, false, &text);
    assert_int_equal(xfer_state_write(g_dir, XFER_STATE_LIVE, &text, false, &err), 0);
    buf_reset(&text);
    xfer_state_format(&s, true, &text);
    assert_int_equal(xfer_state_write(g_dir, XFER_STATE_NAME, &text, true, &err), 0);
    assert_int_equal(xfer_state_load(g_dir, XFER_STATE_LIVE, &t, &err), 0);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.f[0].landed.n, 2);
    assert_int_equal((int)t.seq, 1);
    assert_true(t.f[1].verified && t.f[1].landed.n == 0);
    xfer_state_free(&t);
    assert_int_equal(xfer_state_load(g_dir, XFER_STATE_NAME, &t, &err), 0);
    assert_int_equal(t.f[0].landed.n, 1);
    assert_int_equal((int)t.seq, 2);
    xfer_state_free(&t);
    /* the durable one is the newer: it is the one gone on from */
    buf_reset(&text);
    assert_int_equal(xfer_state_resume(g_dir, &t, &text), 0);
    assert_int_equal(t.f[0].landed.n, 1);
    assert_int_equal(t.f[0].synced.n, 1);
    assert_int_equal(text.len, 0);
    xfer_state_free(&t);
    /* the live one newer and of this boot: its landed ranges, none synced yet */
    buf_reset(&text);
    xfer_state_format(&s, false, &text);
    assert_int_equal(xfer_state_write(g_dir, XFER_STATE_LIVE, &text, false, &err), 0);
    buf_reset(&text);
    assert_int_equal(xfer_state_resume(g_dir, &t, &text), 0);
    assert_int_equal(t.f[0].landed.n, 2);
    assert_int_equal(t.f[0].synced.n, 0);
    assert_int_equal((int)t.seq, 3);
    assert_int_equal(text.len, 0);
    xfer_state_free(&t);
    /* ... of another boot (the node restarted since: a power cut lost what
     * the page cache held): the durable ranges only, said */
    char cmd[600];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && sed -i '2s/^boot [^ ]* /boot 00000000-0000-0000-0000-000000000000 /' %s",
             g_dir, XFER_STATE_LIVE);
    assert_int_equal(system(cmd), 0);
    buf_reset(&text);
    assert_int_equal(xfer_state_resume(g_dir, &t, &text), 0);
    assert_int_equal(t.f[0].landed.n, 1);
    assert_int_equal((int)t.f[0].landed.r[0].b, 10);
    assert_int_equal((int)t.seq, 3); /* the next write is newer than both */
    assert_non_null(strstr(buf_str(&text), "this node restarted"));
    xfer_state_free(&t);
    /* a version 1 state (an older helper's) is taken as durable */
    buf_reset(&text);
    buf_puts(&text, "dsv41-copy-state 1\nfile 100 7 - 0 1 a/b c\nrange 0 50\n");
    assert_int_equal(xfer_state_write(g_dir, XFER_STATE_NAME, &text, true, &err), 0);
    snprintf(cmd, sizeof cmd, "rm -f '%s/%s'", g_dir, XFER_STATE_LIVE);
    assert_int_equal(system(cmd), 0);
    buf_reset(&text);
    assert_int_equal(xfer_state_resume(g_dir, &t, &text), 0);
    assert_int_equal((int)t.f[0].synced.r[0].b, 50);
    xfer_state_free(&t);
    static const char *damaged[] = {"1\nrange 0 1\n", "1\nfile 5 0 - 0 1 a\nrange 0 9\n",
                                    "1\nfile 5 0 - 0 2 a\nrange 0 1\n", "1\nfile 5 0 - 2 0 a\n",
                                    "1\nfile 5 0 - 0 0 a\nfile 5 0 - 0 0 a\n",
                                    "2\nfile 5 0 - 0 0 a\n", "2\nboot x\n", "2\nboot  1\n",
                                    "2\nboot x -1\n", "3\nboot x 1\n", "2\n\n",
                                    "2\nboot x 9999999999999999\n"};
    for (size_t i = 0; i < sizeof damaged / sizeof *damaged; i++) {
        buf_reset(&text);
        buf_printf(&text, "dsv41-copy-state %s", damaged[i]);
        assert_int_equal(xfer_state_write(g_dir, XFER_STATE_NAME, &text, false, &err), 0);
        buf_reset(&err);
        assert_int_equal(xfer_state_load(g_dir, XFER_STATE_NAME, &t, &err), -1);
        assert_int_equal(xfer_state_resume(g_dir, &t, &err), -1);
    }
    xfer_state_free(&s);
    buf_free(&text);
    buf_free(&err);
}

/* ---- a copy on loopback ---------------------------------------------------------- */

struct loop {
    struct xfer_plan plan;
    struct xfer_recv_opts o;
    int rc;
    FILE *out;
    int rd;    /* the report */
    int in[2]; /* the helper's stdin: closed to end it */
    atomic_int cancel;
    int oks, bads, fails, refused, needs, sent_ok;
    bool listening, ended;
    char addr[64];
    int port;
};

static void *recv_thread(void *arg)
{
    struct loop *l = arg;
    l->rc = xfer_recv_run(&l->o);
    fclose(l->out);
    return NULL;
}

/* Reads report lines until pred holds or the report ends. */
static void pump(struct loop *l, struct xfer_send *s, bool (*pred)(struct loop *))
{
    static char acc[1 << 16];
    static size_t len;
    while (!pred(l) && !l->ended) {
        ssize_t n = read(l->rd, acc + len, sizeof acc - len - 1);
        if (n <= 0) {
            l->ended = true;
            break;
        }
        len += (size_t)n;
        char *nl;
        while ((nl = memchr(acc, '\n', len))) {
            *nl = '\0';
            if (getenv("XFER_TEST_DEBUG"))
                fprintf(stderr, "report: %s\n", acc);
            struct xfer_report r;
            xfer_report_parse(acc, l->plan.n, &r);
            if (r.kind == XR_NEED) {
                xfer_send_need(s, (int)r.id, r.a, r.b);
                l->needs++;
            } else if (r.kind == XR_LISTEN) {
                l->listening = true;
                snprintf(l->addr, sizeof l->addr, "%s", r.addr);
                l->port = r.port;
            } else if (r.kind == XR_OK || r.kind == XR_BAD || r.kind == XR_FAIL) {
                xfer_send_report(s, &r);
                l->oks += r.kind == XR_OK;
                l->bads += r.kind == XR_BAD;
                l->fails += r.kind == XR_FAIL;
            } else if (r.kind == XR_REFUSED) {
                l->refused++;
            } else if (r.kind == XR_END) {
                l->ended = true;
            }
            len -= (size_t)(nl + 1 - acc);
            memmove(acc, nl + 1, len);
        }
    }
}

static bool listening(struct loop *l)
{
    return l->listening;
}

static bool never(struct loop *l)
{
    (void)l;
    return false;
}

/* One copy of g_dir/src to g_dir/dst; the number of bytes the streams sent. */
static int64_t copy_once(struct loop *l, void (*before)(struct loop *))
{
    char src[300], dst[300];
    snprintf(src, sizeof src, "%s/src", g_dir);
    snprintf(dst, sizeof dst, "%s/dst", g_dir);
    mkdir(dst, 0755);
    struct buf err = BUF_INIT;
    memset(l, 0, sizeof *l);
    assert_int_equal(xfer_plan_build(src, &l->plan, &err), 0);
    int p[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(pipe(l->in), 0);
    l->rd = p[0];
    l->out = fdopen(p[1], "w");
    l->o = (struct xfer_recv_opts){.dir = dst,
                                   .plan = &l->plan,
                                   .token = TOKEN,
                                   .listen = "127.0.0.1",
                                   .out = l->out,
                                   .in_fd = l->in[0],
                                   .cancel = &l->cancel,
                                   .jobs = 2};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, recv_thread, l), 0);
    struct xfer_send *s = xfer_send_new(src, &l->plan, NULL);
    pump(l, s, listening);
    int64_t sent = 0;
    if (l->listening) {
        if (before)
            before(l);
        assert_int_equal(xfer_send_start(s, l->addr, l->port, TOKEN, 3, &err), 0);
        pump(l, s, never);
        struct xfer_send_stats stats;
        xfer_send_stats(s, &stats);
        sent = stats.sent;
    }
    xfer_send_free(s);
    close(l->in[1]);
    pthread_join(th, NULL);
    close(l->in[0]);
    close(l->rd);
    xfer_plan_free(&l->plan);
    buf_free(&err);
    return sent;
}

static void same_tree(void)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && diff -r --exclude=.cache --exclude='*.part[0-9]*' src dst "
             "-x '.dsv41-*' >/dev/null && [ ! -e dst/.cache ] && "
             "[ -z \"$(find dst -name '*.incomplete' -o -name '*.part0*')\" ]",
             g_dir);
    assert_int_equal(system(cmd), 0);
}

static void manifest(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd,
             "cd '%s/src' && sha256sum model-00001-of-00006.safetensors "
             "model-00002-of-00006.safetensors > sha256-manifest.txt",
             g_dir);
    assert_int_equal(system(cmd), 0);
}

static void copy_loopback(void **st)
{
    (void)st;
    mkfile("model-00001-of-00006.safetensors", 9 << 20, 1);
    mkfile("model-00002-of-00006.safetensors", 3 << 20, 2);
    mkfile("model-00005-of-00006.safetensors.part01", 1000, 3); /* stays home */
    mkfile(".cache/huggingface/x.lock", 10, 4);                 /* stays home */
    mkfile("exl3/qn/L00.part.safetensors", (5 << 20) + 17, 5);  /* hashed by the head */
    mkfile("config.json", 0, 6);
    mkfile("tokenizer.json", 4097, 7);
    manifest();
    struct loop l;
    int64_t sent = copy_once(&l, NULL);
    assert_int_equal(l.rc, 0);
    same_tree();
    assert_int_equal(l.oks, 6);
    assert_true(sent >= (9 << 20) + (3 << 20) + (5 << 20));
    /* again: every file vouched for by the state, nothing sent */
    sent = copy_once(&l, NULL);
    assert_int_equal(l.rc, 0);
    assert_int_equal(l.needs, 0);
    assert_int_equal(sent, 0);
    /* a file changed on the head (another time): sent again, the rest not */
    mkfile("tokenizer.json", 5000, 8);
    sent = copy_once(&l, NULL);
    assert_int_equal(l.rc, 0);
    assert_int_equal(sent, 5000);
    same_tree();
}

static void copy_flipped(void **st)
{
    (void)st;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/dst'", g_dir);
    assert_int_equal(system(cmd), 0);
    struct loop l;
    /* a byte flipped on the way, in a shard (the manifest's sha256) and in a
     * file the head hashes as it reads */
    setenv("DSV41_XFER_TEST_FLIP", "model-00001-of-00006.safetensors@5000000", 1);
    copy_once(&l, NULL);
    assert_int_equal(l.rc, 0);
    assert_int_equal(l.bads, 1);
    same_tree();
    snprintf(cmd, sizeof cmd, "rm -rf '%s/dst'", g_dir);
    assert_int_equal(system(cmd), 0);
    setenv("DSV41_XFER_TEST_FLIP", "exl3/qn/L00.part.safetensors@4200000", 1);
    copy_once(&l, NULL);
    unsetenv("DSV41_XFER_TEST_FLIP");
    assert_int_equal(l.rc, 0);
    assert_int_equal(l.bads, 1);
    same_tree();
}

/* the files already there, put by another tool (no state vouches for them):
 * the shards the manifest names are hashed in place, two at a time, and
 * not sent. A 3 MB and a 9 MB shard: the first to end wakes the check's
 * progress tick while the other still hashes (that tick once had no
 * argument, and a copy onto a node holding the files crashed its helper). */
static void copy_in_place(void **st)
{
    (void)st;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "cd '%s' && rm -rf dst && cp -r src dst && rm -rf dst/.cache dst/*.part[0-9]*",
             g_dir);
    assert_int_equal(system(cmd), 0);
    struct loop l;
    int64_t sent = copy_once(&l, NULL);
    assert_int_equal(l.rc, 0);
    same_tree();
    /* the two shards not asked for; the files without a sha256 are sent */
    assert_true(sent < (9 << 20));
    assert_int_equal(l.oks, 6);
}

/* a stream without the token: refused, said, and the copy goes on */
static void knock(struct loop *l)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd,
             "printf 'DSV41XFER1 %064d\\n' 0 | timeout 5 nc -q 1 %s %d >/dev/null 2>&1; "
             "printf 'GET / HTTP/1.0\\r\\n\\r\\n' | timeout 5 nc -q 1 %s %d >/dev/null 2>&1; true",
             0, l->addr, l->port, l->addr, l->port);
    assert_int_equal(system(cmd), 0);
}

/* many that connect and say nothing, or a byte now and then: each holds a
 * slot 5 s at most, and the head's own streams get in */
static void loiter(struct loop *l)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd,
             "for i in $(seq 40); do (sleep 8 | timeout 9 nc %s %d >/dev/null 2>&1 &); done; "
             "(while sleep 1; do printf D; done | timeout 9 nc %s %d >/dev/null 2>&1 &); sleep 1",
             l->addr, l->port, l->addr, l->port);
    assert_int_equal(system(cmd), 0);
}

static void copy_refuses_strangers(void **st)
{
    (void)st;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/dst'", g_dir);
    assert_int_equal(system(cmd), 0);
    struct loop l;
    copy_once(&l, knock);
    assert_int_equal(l.rc, 0);
    assert_true(l.refused >= 2);
    same_tree();
    snprintf(cmd, sizeof cmd, "rm -rf '%s/dst'", g_dir);
    assert_int_equal(system(cmd), 0);
    copy_once(&l, loiter);
    assert_int_equal(l.rc, 0);
    assert_true(l.refused >= 20); /* the helper says 20, then counts */
    same_tree();
}

/* what another user may have left in the directory: a FIFO as the state, a
 * hard link as NAME.incomplete into a file elsewhere */
static void copy_hostile_directory(void **st)
{
    (void)st;
    char cmd[1200];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && rm -rf dst && mkdir dst && mkfifo dst/.dsv41-copy.state && "
             "echo precious > outside && ln outside dst/config.json.incomplete && "
             "ln outside dst/model-00002-of-00006.safetensors.incomplete",
             g_dir);
    assert_int_equal(system(cmd), 0);
    struct loop l;
    copy_once(&l, NULL);
    assert_int_equal(l.rc, 0);
    same_tree();
    snprintf(cmd, sizeof cmd, "[ \"$(cat '%s/outside')\" = precious ]", g_dir);
    assert_int_equal(system(cmd), 0);
}

/* the head's file is not what its manifest says: sent three times, then
 * given up (not forever at full speed) */
/* src/REL's size and time, its git blob sha1 (the hub's oid of a small
 * file) and its sha256 (an LFS file's) */
static void file_facts(const char *rel, int64_t *size, int64_t *mtime_ns, char git[41],
                       char sha[65])
{
    char path[600];
    snprintf(path, sizeof path, "%s/src/%s", g_dir, rel);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    *size = sb.st_size;
    *mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
    struct buf b = BUF_INIT;
    assert_int_equal(buf_read_file(&b, path, 64 << 20), 0);
    hub_git_sha1(b.data ? b.data : "", b.len, git);
    buf_free(&b);
    unsigned char d[32];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    assert_int_equal(verify_sha256_fd(fd, d, NULL, NULL), 0);
    close(fd);
    verify_hex(d, sha);
}

/* The download's state in src, as a download that verified tokenizer.json
 * against the hub's git sha1 (git: another one) and the EXL3 file against
 * its LFS sha256 leaves it. */
static void download_state(const char *git)
{
    int64_t ts, tm, es, em;
    char tgit[41], tsha[65], egit[41], esha[65], path[600];
    file_facts("tokenizer.json", &ts, &tm, tgit, tsha);
    file_facts("exl3/qn/L00.part.safetensors", &es, &em, egit, esha);
    snprintf(path, sizeof path, "%s/src/.dsv41-download.json", g_dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f,
            "{\"version\":1,\"repo\":\"r/x\",\"commit\":\"%040d\",\"boot_id\":\"\",\"files\":["
            "{\"path\":\"tokenizer.json\",\"size\":%lld,\"verified\":true,\"sha1\":\"%s\","
            "\"mtime_ns\":\"%lld\"},"
            "{\"path\":\"exl3/qn/L00.part.safetensors\",\"size\":%lld,\"verified\":true,"
            "\"sha256\":\"%s\",\"mtime_ns\":\"%lld\"}]}\n",
            0, (long long)ts, git ? git : tgit, (long long)tm, (long long)es, esha, (long long)em);
    assert_int_equal(fclose(f), 0);
}

/* Files outside the manifest that a download verified: the plan carries the
 * hub's sums (the LFS sha256 as the file's, the git sha1 checked beside the
 * head's sum), so what lands is checked against the hub, not only against a
 * sum sent over the same stream as the bytes. */
static void copy_hub_sums(void **st)
{
    (void)st;
    char cmd[600];
    download_state(NULL);
    struct xfer_plan p;
    struct buf err = BUF_INIT;
    snprintf(cmd, sizeof cmd, "%s/src", g_dir);
    assert_int_equal(xfer_plan_build(cmd, &p, &err), 0);
    int seen = 0;
    for (int i = 0; i < p.n; i++) {
        if (strcmp(p.f[i].path, "tokenizer.json") == 0)
            seen += p.f[i].has_git && !p.f[i].has_sha;
        if (strcmp(p.f[i].path, "exl3/qn/L00.part.safetensors") == 0)
            seen += p.f[i].has_sha;
        if (strcmp(p.f[i].path, "config.json") == 0) /* the download did not say */
            seen += !p.f[i].has_git && !p.f[i].has_sha ? 1 : 100;
    }
    assert_int_equal(seen, 3);
    xfer_plan_free(&p);
    snprintf(cmd, sizeof cmd, "rm -rf '%s/dst'", g_dir);
    assert_int_equal(system(cmd), 0);
    struct loop l;
    copy_once(&l, NULL);
    assert_int_equal(l.rc, 0);
    assert_int_equal(l.bads, 0);
    same_tree();
    /* the hub's sha1 is not what the head holds (a file the download
     * verified, then damaged in place keeping its size and time): the
     * head's own sum agrees with its bytes, the hub's does not - refused */
    download_state("0123456789abcdef0123456789abcdef01234567");
    snprintf(cmd, sizeof cmd, "rm -rf '%s/dst'", g_dir);
    assert_int_equal(system(cmd), 0);
    copy_once(&l, NULL);
    assert_int_equal(l.rc, 1);
    assert_int_equal(l.fails, 1);
    snprintf(cmd, sizeof cmd, "[ ! -e '%s/dst/tokenizer.json' ] && rm '%s/src/.dsv41-download.json'",
             g_dir, g_dir);
    assert_int_equal(system(cmd), 0);
    buf_free(&err);
}

/* More files than the state's first allocation (64): each file's pointer
 * into the state stays good as the state grows (ASan saw the helper write
 * through freed memory on a fresh copy of a real checkpoint's ~200 files). */
static void copy_many_files(void **st)
{
    (void)st;
    char cmd[600];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && rm -rf dst && mkdir -p src/many && for i in $(seq 150); do "
             "echo $i > src/many/f$i; done",
             g_dir);
    assert_int_equal(system(cmd), 0);
    struct loop l;
    copy_once(&l, NULL);
    assert_int_equal(l.rc, 0);
    assert_int_equal(l.oks, 156);
    same_tree();
    snprintf(cmd, sizeof cmd, "rm -rf '%s/src/many'", g_dir);
    assert_int_equal(system(cmd), 0);
}

/* What another user left in a shared directory vouches for nothing: a file
 * of the plan's size in place of one the state says was verified, a live
 * state claiming every file verified (under this boot, newer). Both are
 * another user's (nobody's, 65534); the copy puts the right bytes there. */
static void copy_planted_state(void **st)
{
    (void)st;
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/dst'", g_dir);
    assert_int_equal(system(cmd), 0);
    struct loop l;
    copy_once(&l, NULL);
    assert_int_equal(l.rc, 0);
    snprintf(cmd, sizeof cmd,
             "cd '%s/dst' && head -c $(stat -c %%s tokenizer.json) /dev/zero > t && "
             "rm tokenizer.json && mv t tokenizer.json && chown 65534 tokenizer.json",
             g_dir);
    assert_int_equal(system(cmd), 0);
    copy_once(&l, NULL);
    assert_int_equal(l.rc, 0);
    same_tree();
    snprintf(cmd, sizeof cmd,
             "cd '%s/dst' && sed '2s/ [0-9]*$/ 999999/' .dsv41-copy.state > .dsv41-copy.live && "
             "chown 65534 .dsv41-copy.live && rm .dsv41-copy.state && "
             "printf 'x' | dd of=tokenizer.json conv=notrunc status=none",
             g_dir);
    assert_int_equal(system(cmd), 0);
    copy_once(&l, NULL);
    assert_int_equal(l.rc, 0);
    same_tree();
}

static void copy_wrong_manifest(void **st)
{
    (void)st;
    char cmd[1200];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && rm -rf dst && cp src/sha256-manifest.txt manifest.keep && "
             "sed -i '/model-00002/s/^./0/;/model-00002/s/^00/11/' src/sha256-manifest.txt",
             g_dir);
    assert_int_equal(system(cmd), 0);
    struct loop l;
    copy_once(&l, NULL);
    assert_int_equal(l.rc, 1);
    assert_int_equal(l.bads, XFER_MAX_GENERATIONS - 1);
    assert_int_equal(l.fails, 1);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && mv manifest.keep src/sha256-manifest.txt && "
             "[ ! -e dst/model-00002-of-00006.safetensors ] && rm -rf '%s'",
             g_dir, g_dir);
    assert_int_equal(system(cmd), 0);
}

/* xfer_recv_write: a range that starts and ends inside blocks lands whole -
 * its ends buffered, the blocks between direct to the disk (not left in
 * the page cache: the worker's CPU per GB, #32) where the filesystem has
 * direct I/O; without it, or with a buffer that does not line up, all of
 * it buffered. */
static void disk_write(void **st)
{
    (void)st;
    char path[] = "/var/tmp/dsv41-disk-unit.XXXXXX"; /* a disk, not tmpfs */
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    const size_t BLK = xfer_dio_align(), N = 64 * BLK;
    char *buf = aligned_alloc(BLK, N + BLK), *back = malloc(N + BLK);
    for (size_t i = 0; i < N + BLK; i++)
        buf[i] = (char)(i * 7 + 3);
    assert_int_equal(ftruncate(fd, N + 2 * BLK), 0);
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    int dio = open(proc, O_RDWR | O_DIRECT | O_CLOEXEC);
    bool refused = false;
    /* the buffer's bytes where the file's: its blocks line up */
    const int64_t off = 100, n = N - 50;
    assert_int_equal(xfer_recv_write(fd, dio, buf + off, off, n, &refused), 0);
    /* another range, its buffer not lined up: buffered, and right */
    assert_int_equal(xfer_recv_write(fd, dio, buf + 1, N + BLK, 3000, &refused), 0);
    assert_int_equal(pread(fd, back, (size_t)n, off), n);
    assert_memory_equal(back, buf + off, (size_t)n);
    assert_int_equal(pread(fd, back, 3000, N + BLK), 3000);
    assert_memory_equal(back, buf + 1, 3000);
    /* read back as the hasher does: direct from a block (its buffer holds
     * whole blocks, n of them counted), buffered from inside one */
    char *rd = aligned_alloc(BLK, N + BLK);
    assert_int_equal(xfer_recv_read(fd, dio, rd, 5000, BLK, &refused), 5000);
    assert_memory_equal(rd, buf + BLK, 5000);
    assert_int_equal(xfer_recv_read(fd, dio, rd, 3000, off, &refused), 3000);
    assert_memory_equal(rd, buf + off, 3000);
    assert_int_equal(xfer_recv_read(fd, dio, rd, 2 * BLK, (int64_t)(N + BLK), &refused), BLK); /* the end */
    assert_memory_equal(rd, buf + 1, 3000);
    free(rd);
    if (dio >= 0 && !refused) {
        /* read through the fd above: the pages are checked before that */
        void *map = mmap(NULL, N + 2 * BLK, PROT_READ, MAP_SHARED, fd, 0);
        assert_true(map != MAP_FAILED);
        unsigned char *in = malloc((N + 2 * BLK) / BLK); /* a block is a page or more */
        assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
        assert_int_equal(xfer_recv_write(fd, dio, buf + off, off, n, &refused), 0);
        assert_int_equal(mincore(map, N + 2 * BLK, in), 0);
        int cached = 0;
        for (size_t b = 1; b < N / BLK - 1; b++)
            cached += in[b] & 1;
        assert_int_equal(cached, 0);
        assert_true(in[0] & 1); /* the first block's tail: buffered */
        munmap(map, N + 2 * BLK);
        free(in);
    } else {
        print_message("(no direct I/O on %s: the buffered path only)\n", path);
    }
    if (dio >= 0)
        close(dio);
    close(fd);
    free(buf);
    free(back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(wire_frames),
        cmocka_unit_test(wire_plan),
        cmocka_unit_test(wire_reports),
        cmocka_unit_test(state_roundtrip),
        cmocka_unit_test(copy_loopback),
        cmocka_unit_test(copy_flipped),
        cmocka_unit_test(copy_in_place),
        cmocka_unit_test(copy_refuses_strangers),
        cmocka_unit_test(copy_hostile_directory),
        cmocka_unit_test(copy_hub_sums),
        cmocka_unit_test(copy_many_files),
        cmocka_unit_test(copy_planted_state),
        cmocka_unit_test(copy_wrong_manifest),
        cmocka_unit_test(disk_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
