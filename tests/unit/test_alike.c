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

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(parse_and_compare),
                                       cmocka_unit_test(fabric_drift)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
