/* RDMA sysfs parsing and fabric detection on DGX Spark-shaped trees: four
 * devices, two ACTIVE, RoCE v2 IPv4 GID at index 3 (head) and 5 (worker). The
 * local walker and the remote shell snippet must read the same tree alike. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "node.h"
#include "rdma.h"

static const char *HEAD_ADDRS = "lo 127.0.0.1/8\nenp1s0f0np0 10.10.10.13/24\n";
static const char *WORKER_ADDRS = "enp1s0f0np0 10.10.10.11/24\nwlP9s9 192.168.1.20/24\n";

static int load_ports(const char *node, const char *addrs, struct rdma_port *p,
                      struct rdma_ifaddr *a, int *na)
{
    struct buf root = BUF_INIT, text = BUF_INIT;
    buf_printf(&root, "%s/sysfs/%s", fixture_dir(), node);
    assert_int_equal(rdma_collect_local(buf_str(&root), &text), 0);
    int n = rdma_parse_sysfs(buf_str(&text), p, RDMA_MAX_PORTS);
    *na = rdma_parse_ipv4(addrs, a, 8);
    rdma_resolve(p, n, a, *na);
    buf_free(&root);
    buf_free(&text);
    return n;
}

static void head_tree(void **st)
{
    (void)st;
    struct rdma_port p[RDMA_MAX_PORTS];
    struct rdma_ifaddr a[8];
    int na;
    int n = load_ports("spark-head", HEAD_ADDRS, p, a, &na);
    assert_int_equal(n, 4);
    /* sorted: uppercase P sorts first */
    assert_string_equal(p[0].dev, "roceP2p1s0f0");
    assert_string_equal(p[2].dev, "rocep1s0f0");
    assert_int_equal(p[2].state_num, 4);
    assert_string_equal(p[2].state, "4: ACTIVE");
    assert_string_equal(p[2].rate, "200 Gb/sec (4X HDR)");
    assert_string_equal(p[2].netdev, "enp1s0f0np0");
    assert_string_equal(p[2].ipv4, "10.10.10.13");
    assert_int_equal(p[2].gid_index, 3);
    assert_true(p[2].xmit_bytes.ok && p[2].xmit_bytes.v == 123456789.0 * 4);
    assert_int_equal(p[1].state_num, 1);
    assert_int_equal(p[1].gid_index, -1);
    struct rdma_fabric f;
    rdma_detect_fabric(p, n, a, na, NULL, &f);
    assert_true(f.ok);
    assert_string_equal(f.ifname, "enp1s0f0np0");
    assert_string_equal(f.ipv4, "10.10.10.13");
    assert_int_equal(f.prefix, 24);
    assert_string_equal(f.hcas, "roceP2p1s0f0,rocep1s0f0");
    assert_int_equal(f.gid_index, 3);
}

static void worker_tree_gid5(void **st)
{
    (void)st;
    struct rdma_port p[RDMA_MAX_PORTS];
    struct rdma_ifaddr a[8];
    int na;
    int n = load_ports("spark-worker", WORKER_ADDRS, p, a, &na);
    struct rdma_fabric f, h;
    rdma_detect_fabric(p, n, a, na, NULL, &f);
    assert_true(f.ok);
    assert_int_equal(f.gid_index, 5);
    assert_string_equal(f.ipv4, "10.10.10.11");
    n = load_ports("spark-head", HEAD_ADDRS, p, a, &na);
    rdma_detect_fabric(p, n, a, na, NULL, &h);
    assert_true(rdma_same_subnet(&f, &h));
    snprintf(h.ipv4, sizeof h.ipv4, "10.10.12.13");
    assert_false(rdma_same_subnet(&f, &h));
}

static void overrides(void **st)
{
    (void)st;
    struct rdma_port p[RDMA_MAX_PORTS];
    struct rdma_ifaddr a[8];
    int na;
    int n = load_ports("spark-head", HEAD_ADDRS, p, a, &na);
    struct rdma_override ov = {"10.10.10.99", "enp1s0f0np0", "rocep1s0f0"};
    struct rdma_fabric f;
    rdma_detect_fabric(p, n, a, na, &ov, &f);
    assert_true(f.ok);
    assert_string_equal(f.ipv4, "10.10.10.99");
    assert_string_equal(f.hcas, "rocep1s0f0");
    assert_int_equal(f.gid_index, 3);
}

/* More active HCAs than NCCL_IB_HCA's field holds: the list keeps whole
 * names only, as NCCL takes each one as a prefix (a cut "mlx5_1" would
 * read "mlx5_" and pick every mlx5 device). */
static void hca_list_whole_names(void **st)
{
    (void)st;
    struct rdma_port p[RDMA_MAX_PORTS];
    memset(p, 0, sizeof p);
    for (int i = 0; i < RDMA_MAX_PORTS; i++) {
        snprintf(p[i].dev, sizeof p[i].dev, "mlx5_bond_with_a_long_name_%d", i);
        p[i].port = 1;
        p[i].state_num = 4;
        p[i].gid_index = -1;
    }
    struct rdma_fabric f;
    rdma_detect_fabric(p, RDMA_MAX_PORTS, NULL, 0, NULL, &f);
    assert_true(strlen(f.hcas) < sizeof f.hcas);
    int names = 0;
    char list[sizeof f.hcas];
    snprintf(list, sizeof list, "%s", f.hcas);
    char *save = NULL;
    for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char want[48];
        snprintf(want, sizeof want, "mlx5_bond_with_a_long_name_%d", names);
        assert_string_equal(t, want);
        names++;
    }
    assert_true(names > 0 && names < RDMA_MAX_PORTS);
}

static void no_ipv4_no_active(void **st)
{
    (void)st;
    struct rdma_port p[RDMA_MAX_PORTS];
    struct rdma_ifaddr a[8];
    int na;
    /* the fabric IPv4 lost on reboot */
    int n = load_ports("spark-head", "lo 127.0.0.1/8\n", p, a, &na);
    struct rdma_fabric f;
    rdma_detect_fabric(p, n, a, na, NULL, &f);
    assert_false(f.ok);
    assert_non_null(strstr(f.why, "no IPv4"));
    /* the GID still names the index even without the address */
    assert_int_equal(p[2].gid_index, 3);
    rdma_detect_fabric(p, 0, a, na, NULL, &f);
    assert_false(f.ok);
    assert_non_null(strstr(f.why, "no ACTIVE RDMA port"));
}

static void remote_snippet_matches_local_walk(void **st)
{
    (void)st;
    struct buf root = BUF_INIT, local = BUF_INIT, err = BUF_INIT;
    struct shcmd script = SHCMD_INIT;
    buf_printf(&root, "%s/sysfs/spark-worker", fixture_dir());
    assert_int_equal(rdma_collect_local(buf_str(&root), &local), 0);
    rdma_remote_cmd(&script, buf_str(&root));
    struct ssh_result res;
    assert_int_equal(node_run_local(&script, 10000, 1 << 20, &res, &err), 0);
    struct rdma_port a[RDMA_MAX_PORTS], b[RDMA_MAX_PORTS];
    int na = rdma_parse_sysfs(buf_str(&local), a, RDMA_MAX_PORTS);
    int nb = rdma_parse_sysfs(buf_str(&res.out), b, RDMA_MAX_PORTS);
    assert_int_equal(na, 4);
    assert_int_equal(na, nb);
    struct rdma_ifaddr ad[2];
    int nad = rdma_parse_ipv4(WORKER_ADDRS, ad, 2);
    rdma_resolve(a, na, ad, nad);
    rdma_resolve(b, nb, ad, nad);
    for (int i = 0; i < na; i++) {
        assert_string_equal(a[i].dev, b[i].dev);
        assert_string_equal(a[i].state, b[i].state);
        assert_string_equal(a[i].netdev, b[i].netdev);
        assert_int_equal(a[i].gid_index, b[i].gid_index);
        assert_true(a[i].rcv_bytes.v == b[i].rcv_bytes.v);
    }
    ssh_result_free(&res);
    buf_free(&root);
    buf_free(&local);
    shcmd_free(&script);
    buf_free(&err);
}

static void hostile_text(void **st)
{
    (void)st;
    struct rdma_port p[2];
    const char *junk = "x\n:\n/\n/ports/1/state:4: ACTIVE\ndev/ports/abc/state:1\n"
                       "dev/ports/1/gids/999999999999:zz\ndev/ports/1/state:\x1b[2J4: ACTIVE\n"
                       "dev2/ports/1/state:4: ACTIVE\ndev3/ports/1/state:4: ACTIVE\n"
                       "dev/device/net/../../etc\n";
    int n = rdma_parse_sysfs(junk, p, 2);
    assert_int_equal(n, 2);
    assert_null(strchr(p[0].state, '\x1b'));
    struct rdma_ifaddr a[2];
    assert_int_equal(rdma_parse_ipv4("eth0 999.1.1.1/24\neth0 1.2.3.4/40\nnoaddr\n", a, 2), 0);
    /* `ip -o -4 addr show`'s own lines, as the remote sample sends them */
    const char *ip_o = "1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever\n"
                       "2: enp1s0f0np0    inet 10.10.10.11/24 scope global enp1s0f0np0\\   "
                       "    valid_lft forever preferred_lft forever\n"
                       "3: eth1 inet6 fe80::1/64 scope link\n3 eth1 inet 1.2.3.4/24\n";
    assert_int_equal(rdma_parse_ipv4(ip_o, a, 2), 2);
    assert_string_equal(a[1].ifname, "enp1s0f0np0");
    assert_string_equal(a[1].ipv4, "10.10.10.11");
    assert_int_equal(a[1].prefix, 24);
    struct buf big = BUF_INIT;
    for (int i = 0; i < 5000; i++)
        buf_printf(&big, "dev/ports/1/gids/%d:0000:0000:0000:0000:0000:ffff:0a00:0001\n", i);
    assert_int_equal(rdma_parse_sysfs(buf_str(&big), p, 2), 1);
    assert_int_equal(p[0].ngids, RDMA_MAX_GIDS);
    buf_free(&big);
}

static void error_counters_summed(void **st)
{
    (void)st;
    struct rdma_port p[1];
    const char *text = "dev/ports/1/state:4: ACTIVE\n"
                       "dev/ports/1/counters/port_rcv_data:1000\n"
                       "dev/ports/1/counters/symbol_error:3\n"
                       "dev/ports/1/counters/link_downed:1\n"
                       "dev/ports/1/hw_counters/out_of_sequence:5\n"
                       "dev/ports/1/hw_counters/rx_write_requests:99999\n"; /* not an error */
    assert_int_equal(rdma_parse_sysfs(text, p, 1), 1);
    assert_true(p[0].errors.ok);
    assert_true(p[0].errors.v == 9);
    assert_true(p[0].rcv_bytes.v == 4000); /* 4-octet units */
    assert_int_equal(rdma_parse_sysfs("dev/ports/1/state:4: ACTIVE\n", p, 1), 1);
    assert_false(p[0].errors.ok); /* no counter file: n/a, not 0 */
}

static void verbs_without_rdma(void **st)
{
    (void)st;
    struct buf msg = BUF_INIT;
    /* no RDMA hardware here: the answer is "none", never a crash or error */
    assert_true(rdma_verbs_probe(&msg) >= 0);
    assert_non_null(strstr(buf_str(&msg), "libibverbs"));
    buf_free(&msg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(head_tree),
        cmocka_unit_test(worker_tree_gid5),
        cmocka_unit_test(overrides),
        cmocka_unit_test(hca_list_whole_names),
        cmocka_unit_test(no_ipv4_no_active),
        cmocka_unit_test(remote_snippet_matches_local_walk),
        cmocka_unit_test(hostile_text),
        cmocka_unit_test(verbs_without_rdma),
        cmocka_unit_test(error_counters_summed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
