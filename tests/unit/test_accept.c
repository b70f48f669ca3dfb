/* accept's pure parts: a pinned reference or the fix, a runtime's
 * RepoDigests read for the digest asked for, and IMG written into a config
 * file with its other lines kept and read back by the loader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "accept.h"
#include "config.h"

#define HEX "5668e35e5ee021da4b9ce88a1964caf0e082e8ca01d81d1d64b6213a55c6add5"

static void pinned_refs(void **state)
{
    (void)state;
    struct accept_ref r;
    struct buf err = BUF_INIT;
    assert_int_equal(accept_ref_parse("ghcr.io/o/img@sha256:" HEX, &r, &err), 0);
    assert_string_equal(r.digest, "sha256:" HEX);
    assert_int_equal(accept_ref_parse("ghcr.io/o/img:nightly", &r, &err), -1);
    assert_non_null(strstr(buf_str(&err), "RepoDigests")); /* the fix named */
    const char *bad[] = {"img@sha256:" HEX "0", "img@sha256:ABC", "@sha256:" HEX,
                         "img@sha256:" HEX " ; rm -rf /"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        buf_reset(&err);
        assert_int_equal(accept_ref_parse(bad[i], &r, &err), -1);
    }
    buf_free(&err);
}

static void repo_digests(void **state)
{
    (void)state;
    const char *d = "sha256:" HEX;
    assert_true(accept_digest_listed("[\"10.0.0.1:5000/sim@sha256:" HEX "\"]", d));
    assert_true(accept_digest_listed("[\"a@sha256:00\",\"b@sha256:" HEX "\"]", d));
    /* a longer digest that starts alike, or one not after a name's '@' */
    assert_false(accept_digest_listed("[\"a@sha256:" HEX "ff\"]", d));
    assert_false(accept_digest_listed("[\"sha256:" HEX "\"]", d));
    assert_false(accept_digest_listed("[]", d));
    assert_false(accept_digest_listed("", d));
}

static void config_file_pin(void **state)
{
    (void)state;
    char dir[] = "/tmp/accept-conf-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/config", dir);
    FILE *f = fopen(path, "w");
    fputs("# my settings\nIMG=old@sha256:00\nexport PORT=8001\n  IMG = older\nMAX_SEQS=2", f);
    fclose(f);
    chmod(path, 0640);
    struct buf err = BUF_INIT;
    assert_int_equal(config_file_set(path, "IMG", "ghcr.io/o/img@sha256:" HEX, &err), 0);
    struct buf got = BUF_INIT;
    assert_int_equal(buf_read_file(&got, path, 1 << 16), 0);
    /* the last IMG line (the one the loader keeps) replaced, the rest as it was */
    assert_string_equal(buf_str(&got), "# my settings\nIMG=old@sha256:00\nexport PORT=8001\n"
                                       "IMG=ghcr.io/o/img@sha256:" HEX "\nMAX_SEQS=2");
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    char bak[300];
    snprintf(bak, sizeof bak, "%s.bak", path);
    buf_reset(&got);
    assert_int_equal(buf_read_file(&got, bak, 1 << 16), 0);
    assert_non_null(strstr(buf_str(&got), "  IMG = older\n"));
    /* a value that needs quotes reads back as it was written */
    assert_int_equal(config_file_set(path, "EXTRA", "--x 'a b' $HOME", &err), 0);
    struct config c;
    unsetenv("EXTRA");
    unsetenv("IMG");
    assert_int_equal(config_load(&c, path, NULL, 0, &err), 0);
    assert_string_equal(config_str(&c, CFG_EXTRA), "--x 'a b' $HOME");
    assert_string_equal(config_str(&c, CFG_IMG), "ghcr.io/o/img@sha256:" HEX);
    config_free(&c);
    unlink(bak);
    unlink(path);
    rmdir(dir);
    buf_free(&got);
    buf_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(pinned_refs), cmocka_unit_test(repo_digests),
                                       cmocka_unit_test(config_file_pin)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
