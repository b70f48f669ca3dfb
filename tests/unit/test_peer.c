/* copy-to-peer's pure parts: rsync's progress lines (captured from rsync
 * 3.2.7 with --info=progress2) and the command line it gets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "peer.h"

static void progress_lines(void **st)
{
    (void)st;
    struct peer_progress p;
    assert_true(peer_parse_progress("    300,000,000  99%  775.26MB/s    0:00:00 (xfr#1, to-chk=4/6)", &p));
    assert_true(p.bytes == 300000000);
    assert_int_equal(p.pct, 99);
    assert_string_equal(p.rate, "775.26MB/s");
    assert_string_equal(p.eta, "0:00:00");
    assert_true(peer_parse_progress("         32,768   0%    0.00kB/s    0:00:00  ", &p));
    assert_true(p.bytes == 32768 && p.pct == 0);
    assert_true(peer_parse_progress(" 461,999,999,999 100%  1.02GB/s   2:05:07", &p));
    assert_true(p.bytes == 461999999999LL && p.pct == 100);
    static const char *not_progress[] = {
        "+ model-00001-of-00006.safetensors", "", "rsync error: some files could not be transferred",
        "    12  101%  1.00kB/s  0:00:01", "    12  50%  fast  0:00:01", "12 50% 1kB/s soon",
        "99999999999999999999 5% 1kB/s 0:00:01", "rsync: [sender] change_dir \"/x\" failed",
    };
    for (size_t i = 0; i < sizeof not_progress / sizeof *not_progress; i++)
        if (peer_parse_progress(not_progress[i], &p))
            fail_msg("'%s' read as progress", not_progress[i]);
}

static void rsync_command_line(void **st)
{
    (void)st;
    struct config c;
    char *flags[] = {"SSH_CONFIG=/nonexistent/ssh config", "SSH_KNOWN_HOSTS=/k h/known_hosts",
                     "SSH_TIMEOUT=7"};
    struct buf err = BUF_INIT;
    assert_int_equal(config_load(&c, "/nonexistent", flags, 3, &err), 0);
    struct strv a = STRV_INIT;
    peer_rsync_argv(&c, "/m/DeepSeek", "worker", "/cfg/kh", "/w/Deep Seek", false, &a);
    struct buf all = BUF_INIT;
    for (int i = 0; i < a.n; i++)
        buf_printf(&all, "[%s]", a.v[i]);
    const char *s = buf_str(&all);
    assert_non_null(strstr(s, "[rsync][-a][-s][--partial]"));
    assert_non_null(strstr(s, "[--exclude=*.safetensors.part[0-9]*][--exclude=/.cache/]"));
    /* no config file: no -F; each known_hosts file quoted for ssh's own
     * split, the whole option for rsync's; the config's file kept */
    assert_non_null(strstr(s, "[ssh -o BatchMode=yes -o StrictHostKeyChecking=yes -o "
                              "'UserKnownHostsFile=\"/k h/known_hosts\" \"/cfg/kh\"' -o "
                              "ConnectTimeout=7]"));
    assert_non_null(strstr(s, "[/m/DeepSeek/][worker:/w/Deep Seek/]"));
    assert_null(strstr(s, "--dry-run"));
    assert_null(a.v[a.n]);
    strv_free(&a);
    peer_rsync_argv(&c, "/m", "w", "", "/d", true, &a);
    buf_reset(&all);
    for (int i = 0; i < a.n; i++)
        buf_printf(&all, "[%s]", a.v[i]);
    assert_non_null(strstr(buf_str(&all), "[--dry-run]"));
    strv_free(&a);
    buf_free(&all);
    buf_free(&err);
    config_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(progress_lines),
        cmocka_unit_test(rsync_command_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
