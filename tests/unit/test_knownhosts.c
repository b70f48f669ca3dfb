/* knownhosts: the host key types known for a host, as OpenSSH reads the file
 * (hashed names from real ssh-keygen -H, [host]:port, patterns, negation,
 * markers), turned into libssh2's method preference. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "fixture.h"
#include "knownhosts.h"

/* libssh2 1.10's own order: ECDSA first. */
#define SUPPORTED                                                                                  \
    "ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,ssh-ed25519,rsa-sha2-512,"     \
    "rsa-sha2-256,ssh-rsa,ssh-dss"

/* Nothing known: ed25519 first, as OpenSSH asks; libssh2's extras last. */
#define OPENSSH                                                                                    \
    "ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,rsa-sha2-512,"     \
    "rsa-sha2-256,ssh-rsa,ssh-dss"

static const char *pref(const char *file, const char *host, int port, struct buf *b)
{
    struct buf path = BUF_INIT;
    buf_printf(&path, "%s/known_hosts/%s", fixture_dir(), file);
    buf_reset(b);
    assert_int_equal(knownhosts_pref(buf_str(&path), host, port, SUPPORTED, b), 0);
    buf_free(&path);
    return buf_str(b);
}

static void hashed_names(void **st)
{
    (void)st;
    struct buf b = BUF_INIT;
    /* only ed25519 known (what `ssh` stores on first contact): asked first */
    assert_string_equal(pref("hashed", "10.10.10.11", 22, &b),
                        "ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,"
                        "ecdsa-sha2-nistp521,rsa-sha2-512,rsa-sha2-256,ssh-rsa,ssh-dss");
    /* another port is another entry */
    assert_int_equal(strncmp(pref("hashed", "10.10.10.11", 2222, &b), "ecdsa-sha2-nistp256,", 20),
                     0);
    assert_int_equal(strncmp(pref("hashed", "hashed.example", 22, &b), "ecdsa-sha2-nistp256,",
                             20), 0);
    /* a wildcard entry, RSA: all three RSA methods first */
    assert_int_equal(strncmp(pref("hashed", "spark-head", 22, &b),
                             "rsa-sha2-512,rsa-sha2-256,ssh-rsa,", 34), 0);
    /* unknown host: OpenSSH's order, so the key we name is the one ssh shows */
    assert_string_equal(pref("hashed", "10.10.10.99", 22, &b), OPENSSH);
    buf_free(&b);
}

static void patterns_and_markers(void **st)
{
    (void)st;
    struct buf b = BUF_INIT;
    /* @revoked and @cert-authority are no keys of the host */
    assert_int_equal(strncmp(pref("mixed", "10.10.10.12", 22, &b), "ssh-ed25519,ecdsa", 17), 0);
    assert_int_equal(strncmp(pref("mixed", "WORKER2", 22, &b), "ssh-ed25519,", 12), 0);
    assert_string_equal(pref("mixed", "a.lab", 22, &b),
                        "ecdsa-sha2-nistp256,ssh-ed25519,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,"
                        "rsa-sha2-512,rsa-sha2-256,ssh-rsa,ssh-dss");
    assert_string_equal(pref("mixed", "bad.lab", 22, &b), OPENSSH);
    /* a missing file: nothing known */
    assert_string_equal(pref("no-such-file", "10.10.10.12", 22, &b), OPENSSH);
    buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hashed_names),
        cmocka_unit_test(patterns_and_markers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
