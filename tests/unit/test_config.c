/* Configuration layering (default < file < env < flag), derived defaults,
 * errors that name file and line, and ssh config resolution. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "dirs.h"
#include "sshconf.h"

static char tmpdir[64];

static int setup(void **st)
{
    (void)st;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dsv41-cfg-XXXXXX");
    if (!mkdtemp(tmpdir))
        return -1;
    setenv("HOME", tmpdir, 1);
    unsetenv("WORKER");
    unsetenv("MODEL_DIR");
    unsetenv("WORKER_MODEL_DIR");
    unsetenv("PORT");
    unsetenv("STATE_DIR");
    unsetenv("API_KEY_FILE");
    unsetenv("WORKER_STATE_DIR");
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void layering(void **st)
{
    (void)st;
    char path[128];
    snprintf(path, sizeof path, "%s/config", tmpdir);
    write_file(path, "# comment\nWORKER=fromfile\nexport PORT=\"9000\"\nMODEL_DIR = '/m'\n");
    setenv("PORT", "9100", 1);
    char *flags[] = {"WORKER=fromflag"};
    struct config c;
    struct buf err = BUF_INIT;
    assert_int_equal(config_load(&c, path, flags, 1, &err), 0);
    assert_string_equal(config_str(&c, CFG_WORKER), "fromflag");
    assert_string_equal(config_str(&c, CFG_PORT), "9100");
    assert_string_equal(config_str(&c, CFG_MODEL_DIR), "/m");
    /* derived default follows the layered value it references */
    assert_string_equal(config_str(&c, CFG_WORKER_MODEL_DIR), "/m");
    char want[160];
    snprintf(want, sizeof want, "%s/.dsv41-two-sparks/api_key", tmpdir);
    assert_string_equal(config_str(&c, CFG_API_KEY_FILE), want);
    for (int i = 0; i < c.count; i++) {
        if (strcmp(c.values[i].key, "MODEL_DIR") == 0) {
            assert_int_equal(c.values[i].source, CONFIG_SRC_FILE);
            assert_non_null(strstr(c.values[i].origin, ":4"));
        }
        if (strcmp(c.values[i].key, "PORT") == 0)
            assert_int_equal(c.values[i].source, CONFIG_SRC_ENV);
    }
    long port;
    assert_int_equal(config_get_long(&c, CFG_PORT, &port, &err), 0);
    assert_int_equal(port, 9100);
    assert_int_equal(config_get_long(&c, CFG_WORKER, &port, &err), -1);
    /* the numbers were parsed once, at load */
    assert_int_equal(config_long(&c, CFG_PORT), 9100);
    assert_true(config_num(&c, CFG_MEMGUARD_GIB) == 1.0);
    assert_int_equal(config_long(&c, CFG_WORKER), 0); /* not a number: 0, as atol gave */
    assert_true(config_is_secret("HF_TOKEN"));
    assert_false(config_is_secret("PORT"));
    unsetenv("PORT");
    config_free(&c);
    buf_free(&err);
}

/* Every key of config_keys.h has its entry in the table (a default and a
 * help), under its own name, once. */
static void table_whole(void **st)
{
    (void)st;
    const char *def, *help;
    bool secret;
    int n = 0;
    for (const char *name; (name = config_key_at(n, &def, &help, &secret)); n++) {
        assert_non_null(def);
        assert_non_null(help);
        assert_true(help[0] != '\0');
        assert_string_equal(name, config_name((enum config_id)n));
        for (int k = 0; k < n; k++) {
            const char *d2, *h2;
            bool s2;
            assert_string_not_equal(name, config_key_at(k, &d2, &h2, &s2));
        }
    }
    assert_int_equal(n, CFG_COUNT);
    assert_string_equal(config_name(CFG_STATE_DIR), "STATE_DIR");
}

static void bad_file_names_line(void **st)
{
    (void)st;
    char path[128];
    snprintf(path, sizeof path, "%s/bad", tmpdir);
    write_file(path, "PORT=1\nNOT_A_SETTING=2\n");
    struct config c;
    struct buf err = BUF_INIT;
    assert_int_equal(config_load(&c, path, NULL, 0, &err), -1);
    assert_non_null(strstr(buf_str(&err), ":2: unknown setting 'NOT_A_SETTING'"));
    config_free(&c);
    buf_reset(&err);
    write_file(path, "just words\n");
    assert_int_equal(config_load(&c, path, NULL, 0, &err), -1);
    assert_non_null(strstr(buf_str(&err), ":1: expected KEY=VALUE"));
    config_free(&c);
    buf_reset(&err);
    char *flags[] = {"BOGUS=1"};
    assert_int_equal(config_load(&c, "/nonexistent/config", flags, 1, &err), -1);
    assert_non_null(strstr(buf_str(&err), "BOGUS=1"));
    config_free(&c);
    buf_free(&err);
}

/* Every setting that reaches a command, a mount, a URL or a header, fed the
 * values an attacker or a typo would give: each refused at load with the
 * setting's name and the allowed form, whatever layer it came from. */
static void hostile_values_refused(void **st)
{
    (void)st;
    static const char *hostile[] = {
        "x y", "it's", "$(touch /tmp/dsv41-cfg-pwned)", "`touch /tmp/dsv41-cfg-pwned`",
        "a\nb", "--help", "../../etc", "a;b", "\x1b[31mred",
    };
    /* STRICT: every hostile value refused. TEXT: free words (each is one argv
     * word, never shell), only what cannot be one line is refused. LEADING:
     * TEXT, and no leading dash (a program, a local path). SECRET: any
     * printable byte, but no blank or control (it goes into a header). */
    enum { STRICT, TEXT, LEADING, SECRET };
    static const struct {
        const char *key;
        int kind;
    } keys[] = {
        {"WORKER", STRICT},        {"WORKERS", STRICT},       {"MODEL_DIR", STRICT},
        {"WORKER_MODEL_DIR", STRICT}, {"STATE_DIR", STRICT},  {"WORKER_STATE_DIR", STRICT},
        {"HEAD_IP", STRICT},       {"WORKER_IP", STRICT},     {"HEAD_IFNAME", STRICT},
        {"WORKER_IFNAME", STRICT}, {"HEAD_HCAS", STRICT},     {"WORKER_HCAS", STRICT},
        {"PORT", STRICT},          {"MPORT", STRICT},         {"IMG", STRICT},
        {"API_KEY_FILE", STRICT},  {"API_URL", STRICT},       {"MEMGUARD_GIB", STRICT},
        {"KV_BYTES", STRICT},      {"MAX_LEN", STRICT},       {"MAX_SEQS", STRICT},
        {"NSPEC", STRICT},         {"BATCH", STRICT},         {"GPU_UTIL", STRICT},
        {"GRAPH_MODE", STRICT},    {"PLAN_NAME", STRICT},     {"EXTRA", TEXT},
        {"EXTRA_ENV", STRICT},     {"TP", STRICT},            {"PP", STRICT},
        {"VLLM_CMD", LEADING},     {"WEDGE_SECONDS", STRICT}, {"READY_TIMEOUT", STRICT},
        {"REVISION", STRICT},      {"KEEP_PARTS", STRICT},    {"HF_ENDPOINT", STRICT},
        {"RUNTIME", STRICT},       {"GPUS", STRICT},          {"ULIMITS", STRICT},
        {"SSH_TIMEOUT", STRICT},   {"SSH_CONFIG", LEADING},   {"SSH_KNOWN_HOSTS", LEADING},
        {"DSV41_PROC_ROOT", LEADING}, {"DSV41_SYS_ROOT", LEADING},
        {"WORKER_PROC_ROOT", LEADING}, {"WORKER_SYS_ROOT", LEADING}, {"UNIT_DIR", STRICT},
        {"HF_TOKEN", SECRET},      {"DSV41_API_KEY", SECRET},
        {"STOP_TIMEOUT", STRICT},  {"LOG_MAX_SIZE", STRICT},  {"LOG_MAX_FILES", STRICT},
    };
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        for (size_t h = 0; h < sizeof hostile / sizeof *hostile; h++) {
            const char *v = hostile[h];
            bool ctl = strchr(v, '\n') || strchr(v, '\x1b');
            if ((keys[k].kind == TEXT && !ctl) ||
                (keys[k].kind == LEADING && !ctl && v[0] != '-') ||
                (keys[k].kind == SECRET && !ctl && !strchr(v, ' ')))
                continue;
            setenv(keys[k].key, v, 1);
            struct config c;
            struct buf err = BUF_INIT;
            int rc = config_load(&c, "/nonexistent/config", NULL, 0, &err);
            if (rc != -1 || !strstr(buf_str(&err), keys[k].key) ||
                !strstr(buf_str(&err), "expected"))
                fail_msg("%s=%s: rc %d, '%s'", keys[k].key, v, rc, buf_str(&err));
            /* a secret's value is never repeated in the message */
            if (keys[k].kind == SECRET && strlen(v) > 3 && strstr(buf_str(&err), v))
                fail_msg("%s: the message shows the secret", keys[k].key);
            assert_null(strchr(buf_str(&err), '\n'));
            assert_null(strchr(buf_str(&err), '\x1b'));
            config_free(&c);
            buf_free(&err);
            unsetenv(keys[k].key);
        }
    }
    assert_int_equal(access("/tmp/dsv41-cfg-pwned", F_OK), -1);
    /* the edges: ranges, NaN, huge numbers, a leading dash, a name with '/' */
    static const char *refused[] = {
        "PORT=0", "PORT=65536", "MPORT=-1", "MEMGUARD_GIB=0", "MEMGUARD_GIB=1e30",
        "MEMGUARD_GIB=nan", "MEMGUARD_GIB=inf", "MEMGUARD_GIB=1 --daemon", "GPU_UTIL=1.5",
        "GPU_UTIL=0", "MAX_SEQS=0", "MAX_SEQS=257", "NSPEC=33", "MAX_LEN=lots", "TP=0",
        "RUNTIME=nerdctl", "IMG=-x", "PLAN_NAME=a/b", "PLAN_NAME=..", "PLAN_NAME=.hidden",
        "EXTRA_ENV=NOEQUALS", "EXTRA_ENV=VLLM_API_KEY=x", "EXTRA_ENV=1X=2", "ULIMITS=memlock",
        "MODEL_DIR=relative/dir", "STATE_DIR=/a:b", "API_KEY_FILE=/k,ey", "WORKER_STATE_DIR=/a\"b", "KEEP_PARTS=yes",
        "WORKERS=a,,b", "WORKERS=a,-b", "HEAD_IP=10.0.0.300", "HEAD_IFNAME=sixteen-chars-xx",
        "API_URL=file:///etc/passwd", "REVISION=../main", "GPUS=-x", "VLLM_CMD=--help", "VLLM_CMD=", "VLLM_CMD=  ",
        "EXTRA=--x '{\"a\": 1}", "EXTRA=a\\", "EXTRA_ENV=A=1 'B C'", "EXTRA_ENV='A=1", "EXTRA_ENV=A\\ B=1",
        "VLLM_CMD='' serve", "VLLM_CMD='--x' y", "VLLM_CMD=\"vllm", "VLLM_CMD=''",
        "STOP_TIMEOUT=-1", "STOP_TIMEOUT=86401", "STOP_TIMEOUT=1m", "STOP_TIMEOUT=", "STOP_TIMEOUT=1.5",
        "LOG_MAX_SIZE=100", "LOG_MAX_SIZE=4k", "LOG_MAX_SIZE=100mb", "LOG_MAX_SIZE=-1m",
        "LOG_MAX_SIZE=0m", "LOG_MAX_SIZE=1t", "LOG_MAX_SIZE=2000g", "LOG_MAX_SIZE=10m,max-file=9",
        "LOG_MAX_SIZE=10m --privileged", "LOG_MAX_SIZE=99999999k", "LOG_MAX_FILES=0",
        "LOG_MAX_FILES=101", "LOG_MAX_FILES=", "LOG_MAX_FILES=5 --privileged",
    };
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        char *flags[] = {(char *)refused[i]};
        struct config c;
        struct buf err = BUF_INIT;
        char key[32];
        snprintf(key, sizeof key, "%.*s", (int)strcspn(refused[i], "="), refused[i]);
        if (config_load(&c, "/nonexistent/config", flags, 1, &err) != -1 ||
            !strstr(buf_str(&err), key) || !strstr(buf_str(&err), "from --set"))
            fail_msg("%s: '%s'", refused[i], buf_str(&err));
        config_free(&c);
        buf_free(&err);
    }
    static const char *accepted[] = {
        "PORT=1", "PORT=65535", "MEMGUARD_GIB=0.5", "MEMGUARD_GIB=100000", "GPU_UTIL=1",
        "NSPEC=0", "TP=", "WORKER=root@10.10.10.11:2222", "WORKERS=spark2,ops@spark3",
        "IMG=localhost/dsv41-sim:test", "EXTRA_ENV=NCCL_DEBUG=INFO A_1=x=y", "GPUS=device=0",
        "GPUS=", "ULIMITS=memlock=-1 nofile=1024:2048", "HEAD_HCAS=rocep1s0f0,roceP2p1s0f0",
        "EXTRA=--override-generation-config '{\"temperature\": 0.6}'",
        "EXTRA_ENV=A='two words' \"B=it's\" C=", "VLLM_CMD='/opt/my serve' --x", "EXTRA=''",
        "EXTRA=$HOME `id` ~ *",
        "REVISION=refs/pr/1", "MODEL_DIR=~/m", "WORKER=", "VLLM_CMD=/opt/serve --x",
        "STOP_TIMEOUT=0", "STOP_TIMEOUT=60", "STOP_TIMEOUT=86400", "LOG_MAX_SIZE=8k",
        "LOG_MAX_SIZE=100m", "LOG_MAX_SIZE=20K", "LOG_MAX_SIZE=1g", "LOG_MAX_SIZE=1024g",
        "LOG_MAX_SIZE=", "LOG_MAX_FILES=1", "LOG_MAX_FILES=100",
    };
    for (size_t i = 0; i < sizeof accepted / sizeof *accepted; i++) {
        char *flags[] = {(char *)accepted[i]};
        struct config c;
        struct buf err = BUF_INIT;
        if (config_load(&c, "/nonexistent/config", flags, 1, &err) != 0)
            fail_msg("%s refused: '%s'", accepted[i], buf_str(&err));
        config_free(&c);
        buf_free(&err);
    }
}

/* The argument lists: where a quote is left open the message names the
 * setting and the column; a config file's value keeps the quotes inside it
 * for the split, and loses outer ones only where a shell would. */
static void word_lists_quoted(void **st)
{
    (void)st;
    static const struct {
        const char *set, *want;
    } bad[] = {
        {"EXTRA=--override-generation-config '{\"temperature\": 0.6}",
         "EXTRA='--override-generation-config '{\"temperature\": 0.6}' (from --set): expected "
         "words in shell quoting ('...', \"...\", \\): column 30: the ' there is never closed"},
        {"VLLM_CMD=vllm serve\\", "column 11: the \\ at the end escapes nothing"},
        {"EXTRA_ENV=A=1 \"B", "EXTRA_ENV='A=1 \"B' (from --set): expected KEY=VALUE words "},
        {"EXTRA_ENV=A=1 \"B", "column 5: the \" there is never closed"},
        {"EXTRA_ENV=A=1 'B C=2'", "word 2 is 'B C=2'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *flags[] = {(char *)bad[i].set};
        struct config c;
        struct buf err = BUF_INIT;
        if (config_load(&c, "/nonexistent/config", flags, 1, &err) != -1 ||
            !strstr(buf_str(&err), bad[i].want))
            fail_msg("%s: '%s', want '%s'", bad[i].set, buf_str(&err), bad[i].want);
        config_free(&c);
        buf_free(&err);
    }
    char path[128];
    snprintf(path, sizeof path, "%s/quoted", tmpdir);
    write_file(path, "EXTRA=\"--o '{\\\"t\\\": 1}' \\$x\"\n"
                     "EXTRA_ENV='A=1' 'B=2 3'\n"
                     "VLLM_CMD='/opt/a b' --x\n"
                     "MODEL_DIR='/m/it'\n");
    struct config c;
    struct buf err = BUF_INIT;
    if (config_load(&c, path, NULL, 0, &err) != 0)
        fail_msg("%s", buf_str(&err));
    /* one double-quoted string: unescaped as sh would, the inner quotes kept */
    assert_string_equal(config_str(&c, CFG_EXTRA), "--o '{\"t\": 1}' $x");
    /* several quoted words: as written, so that they stay apart */
    assert_string_equal(config_str(&c, CFG_EXTRA_ENV), "'A=1' 'B=2 3'");
    assert_string_equal(config_str(&c, CFG_VLLM_CMD), "'/opt/a b' --x");
    assert_string_equal(config_str(&c, CFG_MODEL_DIR), "/m/it");
    config_free(&c);
    buf_free(&err);
}

/* A secret never on a command line (the console hands its --set words to
 * every job, and ps shows them); a config file that sets one is refused
 * when others can read it. */
/* "~/" on another node: that node's home, never this process's $HOME. */
static void home_expansion(void **st)
{
    (void)st;
    char out[64];
    assert_int_equal(dirs_expand_home("/home/w", "~/models/x", out, sizeof out), 0);
    assert_string_equal(out, "/home/w/models/x");
    assert_int_equal(dirs_expand_home("/home/w", "~", out, sizeof out), 0);
    assert_string_equal(out, "/home/w");
    assert_int_equal(dirs_expand_home("/", "~/x", out, sizeof out), 0);
    assert_string_equal(out, "/x");
    assert_int_equal(dirs_expand_home("/", "~", out, sizeof out), 0);
    assert_string_equal(out, "/");
    /* absolute paths, "~user" and a "~" inside stay as they are, home or not */
    assert_int_equal(dirs_expand_home(NULL, "/abs/~/x", out, sizeof out), 0);
    assert_string_equal(out, "/abs/~/x");
    assert_int_equal(dirs_expand_home("/home/w", "~bob/x", out, sizeof out), 0);
    assert_string_equal(out, "~bob/x");
    /* a home that is not there or not absolute is an error, not "" */
    assert_int_equal(dirs_expand_home("", "~/x", out, sizeof out), -1);
    assert_int_equal(dirs_expand_home(NULL, "~/x", out, sizeof out), -1);
    assert_int_equal(dirs_expand_home("relative", "~/x", out, sizeof out), -1);
    /* too long for out: refused, not cut */
    char small[8];
    assert_int_equal(dirs_expand_home("/home/w", "~/models", small, sizeof small), -1);
    assert_true(dirs_is_home_relative("~/a"));
    assert_true(dirs_is_home_relative("~"));
    assert_false(dirs_is_home_relative("~a"));
    assert_false(dirs_is_home_relative("/~"));
}

/* The workers' paths keep "~/" (the worker's home, asked over ssh), also
 * through ${MODEL_DIR}; the head's paths are expanded with its HOME. */
static void worker_paths(void **st)
{
    (void)st;
    struct config c;
    struct buf err = BUF_INIT;
    assert_int_equal(config_load(&c, "/nonexistent/config", NULL, 0, &err), 0);
    char want[200];
    snprintf(want, sizeof want, "%s/models/DeepSeek-V4.1-Flash-Spark", tmpdir);
    assert_string_equal(config_str(&c, CFG_MODEL_DIR), want);
    assert_string_equal(config_str(&c, CFG_WORKER_MODEL_DIR), "~/models/DeepSeek-V4.1-Flash-Spark");
    assert_string_equal(config_str(&c, CFG_WORKER_STATE_DIR), "~/.dsv41-two-sparks");
    /* config shows it with what the ~ means */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    config_dump(&c, f);
    fclose(f);
    assert_non_null(strstr(text, "~/models/DeepSeek-V4.1-Flash-Spark (~ is the worker's home)"));
    assert_non_null(strstr(text, "~/.dsv41-two-sparks (~ is the worker's home)"));
    free(text);
    config_free(&c);
    /* a MODEL_DIR set with "~/": the head's is expanded, the worker's kept */
    char *flags[] = {"MODEL_DIR=~/m", "STATE_DIR=/abs/state"};
    assert_int_equal(config_load(&c, "/nonexistent/config", flags, 2, &err), 0);
    snprintf(want, sizeof want, "%s/m", tmpdir);
    assert_string_equal(config_str(&c, CFG_MODEL_DIR), want);
    assert_string_equal(config_str(&c, CFG_WORKER_MODEL_DIR), "~/m");
    assert_string_equal(config_str(&c, CFG_WORKER_STATE_DIR), "/abs/state");
    config_free(&c);
    /* set on their own: "~/" kept, absolute as it is, empty is the default */
    char *own[] = {"WORKER_MODEL_DIR=~/w", "WORKER_STATE_DIR="};
    assert_int_equal(config_load(&c, "/nonexistent/config", own, 2, &err), 0);
    assert_string_equal(config_str(&c, CFG_WORKER_MODEL_DIR), "~/w");
    assert_string_equal(config_str(&c, CFG_WORKER_STATE_DIR), "~/.dsv41-two-sparks");
    config_free(&c);
    char *abs[] = {"WORKER_MODEL_DIR=/srv/m"};
    assert_int_equal(config_load(&c, "/nonexistent/config", abs, 1, &err), 0);
    assert_string_equal(config_str(&c, CFG_WORKER_MODEL_DIR), "/srv/m");
    config_free(&c);
    /* a worker's "~/" is checked as the path it becomes */
    char *bad[] = {"WORKER_MODEL_DIR=~/a:b"};
    assert_int_equal(config_load(&c, "/nonexistent/config", bad, 1, &err), -1);
    assert_non_null(strstr(buf_str(&err), "WORKER_MODEL_DIR"));
    config_free(&c);
    buf_free(&err);
}

static void secrets_stay_private(void **st)
{
    (void)st;
    char *flags[] = {"DSV41_API_KEY=sk-very-secret"};
    struct config c;
    struct buf err = BUF_INIT;
    assert_int_equal(config_load(&c, "/nonexistent/config", flags, 1, &err), -1);
    assert_non_null(strstr(buf_str(&err), "export DSV41_API_KEY"));
    assert_non_null(strstr(buf_str(&err), "API_KEY_FILE"));
    assert_null(strstr(buf_str(&err), "sk-very-secret"));
    config_free(&c);
    buf_reset(&err);
    char *tok[] = {"HF_TOKEN=hf_x"};
    assert_int_equal(config_load(&c, "/nonexistent/config", tok, 1, &err), -1);
    assert_non_null(strstr(buf_str(&err), "export HF_TOKEN"));
    config_free(&c);
    buf_reset(&err);
    char path[128];
    snprintf(path, sizeof path, "%s/secret-config", tmpdir);
    write_file(path, "HF_TOKEN=hf_abc\n");
    chmod(path, 0644);
    assert_int_equal(config_load(&c, path, NULL, 0, &err), -1);
    assert_non_null(strstr(buf_str(&err), "sets HF_TOKEN but group or others can read it"));
    assert_non_null(strstr(buf_str(&err), "chmod 600"));
    assert_null(strstr(buf_str(&err), "hf_abc"));
    config_free(&c);
    buf_reset(&err);
    chmod(path, 0600);
    assert_int_equal(config_load(&c, path, NULL, 0, &err), 0);
    assert_string_equal(config_str(&c, CFG_HF_TOKEN), "hf_abc");
    config_free(&c);
    /* a readable file without a secret is fine */
    write_file(path, "PORT=8001\n");
    chmod(path, 0644);
    assert_int_equal(config_load(&c, path, NULL, 0, &err), 0);
    config_free(&c);
    buf_free(&err);
}

static void sshconf(void **st)
{
    (void)st;
    char path[128];
    snprintf(path, sizeof path, "%s/ssh_config", tmpdir);
    write_file(path, "Host spark2 spark-*\n  HostName 10.10.10.%h\n  User ops\n  Port 2222\n"
                     "  IdentityFile ~/.ssh/spark_key\n"
                     "Host *\n  User fallback\n  Port 22\n  IdentityFile %d/.ssh/other\n");
    struct ssh_target t;
    struct buf err = BUF_INIT;
    assert_int_equal(sshconf_resolve(path, "spark2", &t, &err), 0);
    assert_string_equal(t.host, "10.10.10.spark2");
    assert_string_equal(t.user, "ops");
    assert_int_equal(t.port, 2222);
    assert_int_equal(t.nids, 2);
    char want[160];
    snprintf(want, sizeof want, "%s/.ssh/spark_key", tmpdir);
    assert_string_equal(t.ids[0], want);
    assert_int_equal(sshconf_resolve(path, "root@other:2200", &t, &err), 0);
    assert_string_equal(t.host, "other");
    assert_string_equal(t.user, "root");
    assert_int_equal(t.port, 2200);
    assert_int_equal(sshconf_resolve("/nonexistent", "h", &t, &err), 0);
    assert_int_equal(t.port, 22);
    assert_int_equal(t.nids, 3); /* OpenSSH's default identity files */
    assert_int_equal(sshconf_resolve(path, "", &t, &err), -1);
    assert_int_equal(sshconf_resolve(path, "a b", &t, &err), -1);
    assert_int_equal(sshconf_resolve(path, "h:99999", &t, &err), -1);
    write_file(path, "Host x\n Port banana\n");
    buf_reset(&err);
    assert_int_equal(sshconf_resolve(path, "x", &t, &err), -1);
    assert_non_null(strstr(buf_str(&err), ":2: bad Port"));
    buf_free(&err);
}

/* What OpenSSH reads beyond Host: Include (globs under ~/.ssh, nested, inside
 * a block), Match, ProxyJump, timeouts; and what is not supported is named. */
static void sshconf_openssh(void **st)
{
    (void)st;
    char dir[160], path[200], inc[220];
    snprintf(dir, sizeof dir, "%s/.ssh/conf.d", tmpdir);
    char mk[256];
    snprintf(mk, sizeof mk, "mkdir -p %s", dir);
    assert_int_equal(system(mk), 0);
    snprintf(path, sizeof path, "%s/.ssh/config", tmpdir);
    snprintf(inc, sizeof inc, "%s/10-sparks.conf", dir);
    write_file(inc, "Host spark2\n  HostName 10.10.10.11\n  Include nested.conf\n"
                    "Host jumped\n  HostName 10.10.10.11\n  ProxyJump ops@bastion:2201\n"
                    "  ServerAliveInterval 7\n  ServerAliveCountMax 4\n  ConnectTimeout 9\n");
    snprintf(inc, sizeof inc, "%s/.ssh/nested.conf", tmpdir);
    /* included from inside Host spark2: applies to spark2 only */
    write_file(inc, "User nested\n");
    write_file(path, "Include conf.d/*.conf\n"
                     "Match host 10.10.10.11 !originalhost jumped\n  Port 2222\n"
                     "Match originalhost jumped\n  IdentitiesOnly yes\n  ProxyCommand nc %h %p\n"
                     "  ForwardAgent yes\n  FrobnicateHosts yes\n  FrobnicateHosts no\n"
                     "  UserKnownHostsFile ~/.ssh/kh_%h /etc/kh2\n"
                     "Match exec \"true\"\n  Port 1\n"
                     "Match all\n  User fallback\n");
    struct ssh_target t;
    struct buf err = BUF_INIT;
    assert_int_equal(sshconf_resolve(path, "spark2", &t, &err), 0);
    assert_string_equal(t.host, "10.10.10.11");
    assert_string_equal(t.user, "nested");
    assert_int_equal(t.port, 2222); /* Match host saw the HostName set before it */
    assert_string_equal(t.jump, "");
    assert_false(t.identities_only);
    /* Match exec is not run: named, and its block skipped */
    assert_non_null(strstr(t.notes, "Match criteria other than"));
    assert_int_equal(sshconf_resolve(path, "jumped", &t, &err), 0);
    assert_string_equal(t.jump, "ops@bastion:2201");
    assert_int_equal(t.port, 22);
    assert_string_equal(t.user, "fallback");
    assert_int_equal(t.alive_interval_s, 7);
    assert_int_equal(t.alive_count_max, 4);
    assert_int_equal(t.connect_timeout_s, 9);
    assert_true(t.identities_only);
    assert_non_null(strstr(t.notes, "ProxyCommand is not supported (use ProxyJump)"));
    assert_non_null(strstr(t.notes, "FrobnicateHosts is not supported"));
    assert_null(strstr(strstr(t.notes, "FrobnicateHosts") + 1, "FrobnicateHosts")); /* once */
    assert_null(strstr(t.notes, "ForwardAgent")); /* changes nothing for us */
    /* read beside SSH_KNOWN_HOSTS, tokens expanded; a second file is said */
    char kh[300];
    snprintf(kh, sizeof kh, "%s/.ssh/kh_10.10.10.11", tmpdir);
    assert_string_equal(t.known_hosts, kh);
    assert_non_null(strstr(t.notes, "UserKnownHostsFile with several files: the first is read"));
    assert_string_equal(t.config, path);
    /* a host no block names: no notes */
    assert_int_equal(sshconf_resolve(path, "other", &t, &err), 0);
    assert_string_equal(t.user, "fallback");
    assert_null(strstr(t.notes, "ProxyCommand"));
    /* a chain of jumps, and a Match without criteria, are errors with the line */
    write_file(path, "Host x\n  ProxyJump a,b\n");
    assert_int_equal(sshconf_resolve(path, "x", &t, &err), -1);
    assert_non_null(strstr(buf_str(&err), ":2: ProxyJump a,b: dsv41-top goes through one jump"));
    buf_reset(&err);
    write_file(path, "Match\n");
    assert_int_equal(sshconf_resolve(path, "x", &t, &err), -1);
    assert_non_null(strstr(buf_str(&err), ":1: Match needs a criterion"));
    buf_reset(&err);
    /* Include loops end */
    write_file(path, "Include config\n");
    assert_int_equal(sshconf_resolve(path, "x", &t, &err), -1);
    assert_non_null(strstr(buf_str(&err), "Include nested more than 16 deep"));
    /* a target that would be an option to ssh */
    assert_int_equal(sshconf_resolve(NULL, "-oProxyCommand=x", &t, &err), -1);
    buf_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(layering),
        cmocka_unit_test(table_whole),
        cmocka_unit_test(bad_file_names_line),
        cmocka_unit_test(hostile_values_refused),
        cmocka_unit_test(word_lists_quoted),
        cmocka_unit_test(home_expansion),
        cmocka_unit_test(worker_paths),
        cmocka_unit_test(secrets_stay_private),
        cmocka_unit_test(sshconf),
        cmocka_unit_test(sshconf_openssh),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
