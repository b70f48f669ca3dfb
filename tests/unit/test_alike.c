/* The nodes alike: what each node answers, parsed (a value, or n/a with
 * why), and the differences said with every node's value. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "alike.h"
#include "drift.h"

static const char HEAD[] =
    "kernel 6.11.0-1016-nvidia\n"
    "driver 580.95.05\n"
    "image sha256:3cbc8ec016f5fbfc82eba3480de12399cbce31e7b76aa3108b8fe8246c42a79d\n"
    "cuda 12.9.1\n"
    "nccl /usr/local/lib/python3.12/dist-packages/nvidia/nccl/lib/libnccl.so.2 "
    "1111111111111111111111111111111111111111111111111111111111111111\n";

static void parse_and_compare(void **st)
{
    (void)st;
    struct alike_print p[3];
    alike_parse(HEAD, &p[0]);
    assert_true(p[0].asked);
    assert_string_equal(p[0].value[0], "6.11.0-1016-nvidia");
    assert_string_equal(p[0].value[1], "580.95.05");
    assert_string_equal(p[0].value[3], "12.9.1");
    assert_string_equal(p[0].value[4],
                        "1111111111111111111111111111111111111111111111111111111111111111");
    assert_string_equal(p[0].nccl_path,
                        "/usr/local/lib/python3.12/dist-packages/nvidia/nccl/lib/libnccl.so.2");
    /* the same but another NCCL binary (the same version string, vllm#42354) */
    char worker[sizeof HEAD];
    memcpy(worker, HEAD, sizeof HEAD);
    char *sha = strstr(worker, "1111");
    memset(sha, '2', 64);
    alike_parse(worker, &p[1]);
    /* a third that knows little: n/a never counts as a difference */
    alike_parse("kernel 6.11.0-1016-nvidia\ndriver - no NVIDIA driver version\nimage - not on "
                "this node\ncuda - the image sets no CUDA_VERSION\nnccl - the rank is not "
                "running\n\x1b[2Jgarbage\n",
                &p[2]);
    assert_string_equal(p[2].value[1], "");
    assert_string_equal(p[2].note[1], "no NVIDIA driver version");
    assert_string_equal(p[2].note[4], "the rank is not running");
    const char *names[] = {"head", "worker", "worker2"};
    char warn[ALIKE_FIELDS][320];
    int n = alike_compare(p, names, 3, warn, ALIKE_FIELDS);
    assert_int_equal(n, 1);
    assert_non_null(strstr(warn[0], "the nodes differ in the NCCL library (sha256): head "
                                    "1111111111111111111, worker 2222222222222222222"));
    assert_non_null(strstr(warn[0], "hangs after 20-55 min"));
    assert_null(strstr(warn[0], "worker2"));
    /* a driver and an image that differ */
    snprintf(p[1].value[1], sizeof p[1].value[1], "580.82.07");
    snprintf(p[1].value[2], sizeof p[1].value[2], "sha256:5668e35e5ee021da4b9c");
    n = alike_compare(p, names, 2, warn, ALIKE_FIELDS);
    assert_int_equal(n, 3);
    assert_non_null(strstr(warn[0], "NVIDIA driver: head 580.95.05, worker 580.82.07"));
    assert_non_null(strstr(warn[1], "image id: head sha256:3cbc8ec016f5, worker sha256:5668e35e5ee0"));
    /* a bad nccl line, and a node that was not asked */
    alike_parse("nccl /lib/libnccl.so.2 short\n", &p[0]);
    assert_string_equal(p[0].value[4], "");
    assert_string_equal(p[0].note[4], "unreadable answer");
    memset(&p[1], 0, sizeof p[1]);
    assert_int_equal(alike_compare(p, names, 2, warn, ALIKE_FIELDS), 0);
}

/* The fabric a rank started with (its env file) against the node's now. */
static void fabric_drift(void **st)
{
    (void)st;
    struct drift_start d;
    drift_parse_env("CUDA_VISIBLE_DEVICES=0\nNCCL_IB_GID_INDEX=5\nNCCL_IB_HCA=roceP2p1s0f0,rocep1s0f0\n"
                    "NCCL_SOCKET_IFNAME=enp1s0f0np0\nVLLM_HOST_IP=10.10.10.11\n",
                    &d);
    assert_true(d.known);
    assert_int_equal(d.gid_index, 5);
    struct rdma_fabric now = {true, "enp1s0f0np0", "10.10.10.11", 24, "roceP2p1s0f0,rocep1s0f0", 5, ""};
    char why[300];
    assert_false(drift_check(&d, &now, why, sizeof why));
    now.gid_index = 7; /* a netplan re-apply */
    assert_true(drift_check(&d, &now, why, sizeof why));
    assert_string_equal(why, "RoCE v2 IPv4 GID index 5 -> 7");
    now.gid_index = -1; /* not detected now: no claim about the index */
    snprintf(now.ipv4, sizeof now.ipv4, "10.10.10.99");
    assert_true(drift_check(&d, &now, why, sizeof why));
    assert_string_equal(why, "IPv4 10.10.10.11 -> 10.10.10.99");
    now.ok = false; /* the IPv4 lost on a reboot */
    snprintf(now.why, sizeof now.why, "no ACTIVE RDMA port");
    assert_true(drift_check(&d, &now, why, sizeof why));
    assert_non_null(strstr(why, "the fabric the rank uses is gone: no ACTIVE RDMA port"));
    /* no env file (no rank, or an old launch): nothing to compare */
    drift_parse_env("", &d);
    assert_false(d.known);
    assert_false(drift_check(&d, &now, why, sizeof why));
    drift_parse_env("NCCL_IB_GID_INDEX=x5\n", &d);
    assert_int_equal(d.gid_index, -1);
}

/* The rank's memory map as grep -o '/[^ ]*libnccl[^ ]*' | head -n 1 reads it. */
static void maps_finds_nccl(void **st)
{
    (void)st;
    char path[200];
    const char *maps =
        "55d0c2a00000-55d0c2a01000 r--p 00000000 00:2f 1234      /usr/bin/python3.12\n"
        "7f01a0000000-7f01a0021000 rw-p 00000000 00:00 0 \n"
        "7f01a1000000-7f01a3000000 r-xp 00000000 00:2f 99   /usr/local/lib/python3.12/"
        "dist-packages/nvidia/nccl/lib/libnccl.so.2\n"
        "7f01a4000000-7f01a4001000 r--p 00000000 00:2f 98   /opt/libnccl-other.so\n";
    assert_true(alike_maps_nccl(maps, strlen(maps), path, sizeof path));
    assert_string_equal(path, "/usr/local/lib/python3.12/dist-packages/nvidia/nccl/lib/libnccl.so.2");
    /* a deleted file: the word before the blank, as grep's match ends there */
    const char *del = "7f0-7f1 r-xp 00000000 00:2f 99 /model/nccl/r0/libnccl.so.2 (deleted)\n";
    assert_true(alike_maps_nccl(del, strlen(del), path, sizeof path));
    assert_string_equal(path, "/model/nccl/r0/libnccl.so.2");
    /* a blank in the path: the match starts at the '/' after it */
    const char *blank = "7f0-7f1 r-xp 00000000 00:2f 99 /tmp/a b/x/libnccl.so.2";
    assert_true(alike_maps_nccl(blank, strlen(blank), path, sizeof path));
    assert_string_equal(path, "/x/libnccl.so.2");
    /* a directory named so counts (grep's would), the first line wins */
    const char *dir = "1-2 r-xp 0 0:0 1 /opt/libnccl-2.28/lib/libfoo.so\n3-4 r-xp 0 0:0 1 /libnccl.so\n";
    assert_true(alike_maps_nccl(dir, strlen(dir), path, sizeof path));
    assert_string_equal(path, "/opt/libnccl-2.28/lib/libfoo.so");
    /* none; "libnccl" with no '/' before it; the length given is honoured */
    const char *none = "1-2 r-xp 0 0:0 1 /usr/lib/libcuda.so.1\n3-4 rw-p 0 0:0 0 [heap] libnccl\n";
    assert_false(alike_maps_nccl(none, strlen(none), path, sizeof path));
    assert_string_equal(path, "");
    assert_false(alike_maps_nccl(maps, 60, path, sizeof path));
    /* cut to the room there is */
    char small[8];
    assert_true(alike_maps_nccl(del, strlen(del), small, sizeof small));
    assert_string_equal(small, "/model/");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(parse_and_compare),
                                       cmocka_unit_test(fabric_drift),
                                       cmocka_unit_test(maps_finds_nccl)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
