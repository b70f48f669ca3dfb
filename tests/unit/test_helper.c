/* helper: a static helper built for one CPU is never pushed to a node of
 * another; the node's `uname -m` against the program's ELF e_machine. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include <sys/utsname.h>

#include "buf.h"
#include "helper.h"

/* An ELF header's first 20 bytes: magic, class, byte order, e_machine. */
static void elf_header(struct buf *b, unsigned char order, unsigned machine)
{
    unsigned char h[64] = {0x7f, 'E', 'L', 'F', 2, order, 1};
    if (order == 2) {
        h[18] = (unsigned char)(machine >> 8);
        h[19] = (unsigned char)machine;
    } else {
        h[18] = (unsigned char)machine;
        h[19] = (unsigned char)(machine >> 8);
    }
    buf_reset(b);
    buf_append(b, (const char *)h, sizeof h);
}

static void machines(void **st)
{
    (void)st;
    struct buf b = BUF_INIT, err = BUF_INIT;
    /* this very program: built for the machine it runs on (also under
     * qemu-aarch64, whose uname says aarch64) */
    assert_int_equal(buf_read_file(&b, "/proc/self/exe", 64u << 20), 0);
    struct utsname u;
    assert_int_equal(uname(&u), 0);
    assert_string_equal(helper_elf_machine(&b), u.machine);
    assert_int_equal(helper_check_machine("worker", u.machine, "dsv41-guard", &b, &err), 0);

    elf_header(&b, 1, 183); /* EM_AARCH64, little-endian */
    assert_string_equal(helper_elf_machine(&b), "aarch64");
    assert_int_equal(helper_check_machine("worker", "aarch64", "dsv41-guard", &b, &err), 0);
    assert_int_equal(helper_check_machine("worker", "arm64", "dsv41-guard", &b, &err), 0);
    assert_int_equal(helper_check_machine("worker", "x86_64", "dsv41-guard", &b, &err), -1);
    assert_string_equal(buf_str(&err), "worker is x86_64, but the helper dsv41-guard found next "
                                       "to this program is built for aarch64: run this program "
                                       "on a node of the workers' kind, or build the helpers for "
                                       "it (`make` there) and put them next to this program");
    buf_reset(&err);
    elf_header(&b, 1, 62); /* an x86-64 helper for a Spark */
    assert_int_equal(helper_check_machine("worker", "aarch64", "dsv41-verify", &b, &err), -1);
    assert_non_null(strstr(buf_str(&err), "worker is aarch64, but the helper dsv41-verify"));
    assert_non_null(strstr(buf_str(&err), "`make aarch64`: build-aarch64/"));
    buf_reset(&err);
    elf_header(&b, 2, 183); /* big-endian byte order read as such */
    assert_string_equal(helper_elf_machine(&b), "aarch64");
    elf_header(&b, 1, 243); /* RISC-V */
    assert_string_equal(helper_elf_machine(&b), "another CPU");
    assert_int_equal(helper_check_machine("w", "riscv64", "dsv41-guard", &b, &err), -1);
    buf_reset(&err);
    /* not known on the node: not judged */
    assert_int_equal(helper_check_machine("w", "", "dsv41-guard", &b, &err), 0);
    /* no ELF at all */
    buf_reset(&b);
    buf_puts(&b, "#!/bin/sh\necho not a program\n");
    assert_null(helper_elf_machine(&b));
    assert_int_equal(helper_check_machine("w", "x86_64", "dsv41-guard", &b, &err), -1);
    assert_non_null(strstr(buf_str(&err), "not an ELF program"));
    buf_free(&b);
    buf_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(machines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
