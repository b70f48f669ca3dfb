/* The pure parts of launch: startup phases from log lines, the API key file,
 * and the EXL3 plan rewrite. */
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

#include "apikey.h"
#include "fixture.h"
#include "exl3plan.h"
#include "phase.h"

static void feed(struct phase_state *st, const char *s)
{
    phase_feed(st, s, strlen(s));
}

static void phases(void **state)
{
    (void)state;
    struct phase_state st;
    phase_init(&st);
    assert_int_equal(st.phase, PHASE_NONE);
    feed(&st, "INFO 11-30 10:00:00 [api_server.py:1] vLLM API server version 0.11.1");
    assert_int_equal(st.phase, PHASE_STARTING);
    feed(&st, "Loading safetensors checkpoint shards:   0% Completed | 0/6\r"
              "Loading safetensors checkpoint shards:  50% Completed | 3/6\r");
    assert_int_equal(st.phase, PHASE_LOADING);
    assert_non_null(strstr(st.detail, "3/6"));
    assert_null(strchr(st.detail, '\r'));
    feed(&st, "INFO ... GPU KV cache size: 2,023,717 tokens");
    assert_int_equal(st.phase, PHASE_KV_CACHE);
    assert_int_equal(st.kv_tokens, 2023717);
    /* a late line of an earlier phase does not move it back */
    feed(&st, "Loading weights took 3.1 seconds");
    assert_int_equal(st.phase, PHASE_KV_CACHE);
    feed(&st, "Capturing CUDA graphs (decode, FULL): 100%");
    feed(&st, "Starting vLLM API server 0 on http://0.0.0.0:8000");
    assert_int_equal(st.phase, PHASE_SERVER);
    feed(&st, "INFO:     Application startup complete.");
    assert_int_equal(st.phase, PHASE_READY);
    assert_false(st.failed);
    assert_string_equal(phase_name(PHASE_READY), "ready");
}

static void fatal_lines(void **state)
{
    (void)state;
    struct phase_state st;
    phase_init(&st);
    feed(&st, "Loading safetensors checkpoint shards: 1/6");
    feed(&st, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\x1b[0m");
    assert_true(st.failed);
    assert_non_null(strstr(st.fatal, "out of memory"));
    assert_null(strchr(st.fatal, '\x1b'));
    assert_int_equal(st.phase, PHASE_LOADING);
    feed(&st, "RuntimeError: second");
    assert_non_null(strstr(st.fatal, "OutOfMemoryError")); /* the first one is kept */
    assert_non_null(phase_fatal_marker("Traceback (most recent call last):", 34));
    assert_null(phase_fatal_marker("INFO all good", 13));
    /* a real rank's end (vllm#6042, tests/fixtures/logs/README.md): the
     * worker's death is the first fatal line, and each watchdog timeout line is one */
    struct buf log = fixture_load("logs/vllm-6042-nccl-watchdog.txt");
    phase_init(&st);
    int fatal = 0;
    for (const char *l = buf_str(&log), *nl; *l; l = nl + 1) {
        nl = strchr(l, '\n');
        if (!nl)
            break;
        fatal += phase_fatal_marker(l, (size_t)(nl - l)) != NULL;
        phase_feed(&st, l, (size_t)(nl - l));
    }
    assert_int_equal(fatal, 3); /* the death, and both of the watchdog's timeout lines */
    assert_true(st.failed);
    assert_non_null(strstr(st.fatal, "Worker VllmWorkerProcess pid 1159 died, exit code: -6"));
    buf_free(&log);
}

static void key_file(void **state)
{
    (void)state;
    char dir[] = "/tmp/dsv41-key-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/state/sub/api_key", dir);
    struct buf k1 = BUF_INIT, k2 = BUF_INIT, why = BUF_INIT;
    umask(022);
    assert_int_equal(apikey_ensure(path, &k1, &why), 0);
    assert_int_equal(k1.len, 43); /* 32 bytes, URL-safe base64, no padding */
    assert_null(strpbrk(buf_str(&k1), "+/="));
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    /* created once, reused */
    assert_int_equal(apikey_ensure(path, &k2, &why), 0);
    assert_string_equal(buf_str(&k1), buf_str(&k2));
    /* readable by others: refused, not fixed */
    chmod(path, 0644);
    buf_reset(&k2);
    assert_int_equal(apikey_ensure(path, &k2, &why), -1);
    assert_non_null(strstr(buf_str(&why), "readable by others (mode 644): run chmod 600"));
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644);
    /* empty */
    FILE *f = fopen(path, "w");
    fclose(f);
    chmod(path, 0600);
    buf_reset(&why);
    assert_int_equal(apikey_read(path, &k2, &why), -1);
    assert_non_null(strstr(buf_str(&why), "is empty"));
    /* the fingerprint: SHA-256 in unpadded base64 (sha256("abc"), FIPS 180-2) */
    char fp[APIKEY_FP_SIZE];
    apikey_fingerprint("abc", 3, fp);
    assert_string_equal(fp, "SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0");
    /* rotate over the empty file: a new 0600 key, the old inode zeroed */
    enum apikey_old old;
    buf_reset(&why);
    umask(0);
    assert_int_equal(apikey_rotate(path, fp, &old, &why), 0);
    assert_int_equal(old, APIKEY_OLD_WIPED);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    buf_reset(&k2);
    assert_int_equal(apikey_read(path, &k2, &why), 0);
    assert_int_equal(k2.len, 43);
    char want[APIKEY_FP_SIZE];
    apikey_fingerprint(k2.data, k2.len, want);
    assert_string_equal(fp, want);
    /* another name for the same file: unlinked, never written through */
    char other[4200];
    snprintf(other, sizeof other, "%s.other", path);
    assert_int_equal(link(path, other), 0);
    assert_int_equal(apikey_rotate(path, fp, &old, &why), 0);
    assert_int_equal(old, APIKEY_OLD_UNLINKED);
    buf_reset(&k1);
    assert_int_equal(apikey_read(other, &k1, &why), 0);
    assert_string_equal(buf_str(&k1), buf_str(&k2));
    /* a symbolic link: refused, left */
    unlink(path);
    assert_int_equal(symlink(other, path), 0);
    assert_int_equal(apikey_rotate(path, fp, &old, &why), -1);
    assert_non_null(strstr(buf_str(&why), "is a symbolic link"));
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    umask(022);
    apikey_scrub(&k1);
    apikey_scrub(&k2);
    buf_free(&why);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void plan_rewrite(void **state)
{
    (void)state;
    struct buf out = BUF_INIT, why = BUF_INIT;
    assert_int_equal(exl3plan_rewrite("{\"qdir\":\"qn:q31:q31s\",\"layers\":[1,2]}", "p.json",
                                      &out, &why),
                     0);
    assert_string_equal(buf_str(&out),
                        "{\"qdir\":\"/model/exl3/qn:/model/exl3/q31:/model/exl3/q31s\","
                        "\"layers\":[1,2]}");
    buf_reset(&out);
    assert_int_equal(exl3plan_rewrite("{\"qdir\":\"/home/u/models/x/exl3/qn/:/data/q31\"}", "p",
                                      &out, &why),
                     0);
    assert_string_equal(buf_str(&out), "{\"qdir\":\"/model/exl3/qn:/model/exl3/q31\"}");
    assert_int_equal(exl3plan_rewrite("{\"qdir\":", "J268.json", &out, &why), -1);
    assert_non_null(strstr(buf_str(&why), "plan J268.json is not a JSON object"));
    buf_reset(&why);
    assert_int_equal(exl3plan_rewrite("{\"banks\":1}", "J268.json", &out, &why), -1);
    assert_non_null(strstr(buf_str(&why), "has no \"qdir\""));
    buf_reset(&why);
    assert_int_equal(exl3plan_rewrite("{\"qdir\":\"qn::q31\"}", "J268.json", &out, &why), -1);
    assert_non_null(strstr(buf_str(&why), "empty entry"));
    buf_free(&out);
    buf_free(&why);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(phases),
        cmocka_unit_test(fatal_lines),
        cmocka_unit_test(key_file),
        cmocka_unit_test(plan_rewrite),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
