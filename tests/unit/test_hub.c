/* The hub's answers parsed and checked: the revision's commit, tree pages
 * (directories skipped, hostile paths, bad sizes and oids refused, duplicates
 * and file-or-directory clashes found), the Link header's next page. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "hub.h"

#define SHA "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define OID "0123456789abcdef0123456789abcdef01234567"

static void revision(void **st)
{
    (void)st;
    char commit[41];
    struct buf err = BUF_INIT;
    assert_int_equal(hub_parse_revision("{\"id\":\"a/b\",\"sha\":\"" OID "\",\"siblings\":[]}",
                                        commit, &err),
                     0);
    assert_string_equal(commit, OID);
    assert_int_equal(hub_parse_revision("{\"sha\":\"ABC\"}", commit, &err), -1);
    assert_int_equal(hub_parse_revision("not json", commit, &err), -1);
    assert_non_null(strstr(buf_str(&err), "no commit"));
    buf_free(&err);
}

static void tree_pages(void **st)
{
    (void)st;
    struct hub_tree t = {0};
    struct buf err = BUF_INIT;
    const char *p1 = "[{\"type\":\"directory\",\"oid\":\"" OID "\",\"size\":0,\"path\":\"exl3\"},"
                     "{\"type\":\"file\",\"oid\":\"" OID "\",\"size\":82,\"path\":\"config.json\"},"
                     "{\"type\":\"file\",\"oid\":\"" OID "\",\"size\":1000,\"path\":\"exl3/qn/L00."
                     "part.safetensors\",\"lfs\":{\"oid\":\"" SHA "\",\"size\":1000,\"pointerSize\":"
                     "134}}]";
    const char *p2 = "[{\"type\":\"file\",\"oid\":\"" OID "\",\"size\":7,\"path\":\"a.json\"}]";
    assert_int_equal(hub_parse_tree(p1, &t, &err), 0);
    assert_int_equal(hub_parse_tree(p2, &t, &err), 0);
    assert_int_equal(hub_tree_check(&t, &err), 0);
    assert_int_equal(t.n, 3);
    assert_string_equal(t.f[0].path, "a.json"); /* sorted */
    const struct hub_file *f = hub_tree_find(&t, "exl3/qn/L00.part.safetensors");
    assert_non_null(f);
    assert_true(f->lfs);
    assert_string_equal(f->sha256, SHA);
    assert_int_equal(f->size, 1000);
    f = hub_tree_find(&t, "config.json");
    assert_false(f->lfs);
    assert_string_equal(f->sha1, OID);
    assert_null(hub_tree_find(&t, "exl3"));
    hub_tree_free(&t);
    buf_free(&err);
}

static void hostile_listings(void **st)
{
    (void)st;
    static const char *bad[] = {
        "{}",
        "[{\"type\":\"file\",\"oid\":\"" OID "\",\"size\":1,\"path\":\"../x\"}]",
        "[{\"type\":\"file\",\"oid\":\"" OID "\",\"size\":1,\"path\":\"/etc/passwd\"}]",
        "[{\"type\":\"file\",\"oid\":\"" OID "\",\"size\":1,\"path\":\"a/../../x\"}]",
        "[{\"type\":\"file\",\"oid\":\"" OID "\",\"size\":1,\"path\":\"a//b\"}]",
        "[{\"type\":\"file\",\"oid\":\"" OID "\",\"size\":1,\"path\":\"./a\"}]",
        "[{\"type\":\"file\",\"oid\":\"" OID "\",\"size\":1,\"path\":\"a\\nb\"}]",
        "[{\"type\":\"file\",\"oid\":\"" OID "\",\"size\":1,\"path\":\"a\\\\b\"}]",
        "[{\"type\":\"file\",\"oid\":\"" OID "\",\"size\":1,\"path\":\"x.incomplete\"}]",
        "[{\"type\":\"file\",\"oid\":\"" OID "\",\"size\":1,\"path\":\".dsv41-download.json\"}]",
        "[{\"type\":\"file\",\"oid\":\"" OID "\",\"size\":1,\"path\":\"a/s.dsv41-assemble.json\"}]",
        "[{\"type\":\"file\",\"oid\":\"" OID "\",\"size\":1,\"path\":\"a.incomplete.part01\"}]",
        "[{\"type\":\"file\",\"oid\":\"" OID "\",\"size\":1,\"path\":\"a\\u009bb\"}]",
        "[{\"type\":\"file\",\"oid\":\"" OID "\",\"size\":1,\"path\":\"evil\\u202etxt.exe\"}]",
        "[{\"type\":\"file\",\"oid\":\"" OID "\",\"size\":-1,\"path\":\"a\"}]",
        "[{\"type\":\"file\",\"oid\":\"" OID "\",\"size\":1.5,\"path\":\"a\"}]",
        "[{\"type\":\"file\",\"oid\":\"" OID "\",\"size\":1e300,\"path\":\"a\"}]",
        "[{\"type\":\"file\",\"oid\":\"" OID "\",\"size\":\"7\",\"path\":\"a\"}]",
        "[{\"type\":\"file\",\"oid\":\"xyz\",\"size\":1,\"path\":\"a\"}]",
        "[{\"type\":\"file\",\"oid\":\"" OID "\",\"size\":1,\"path\":\"a\",\"lfs\":{\"oid\":\"no\","
        "\"size\":1}}]",
        "[{\"type\":\"file\",\"oid\":\"" OID "\",\"size\":2,\"path\":\"a\",\"lfs\":{\"oid\":\"" SHA
        "\",\"size\":3}}]",
        "[{\"type\":\"file\",\"size\":1}]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct hub_tree t = {0};
        struct buf err = BUF_INIT;
        if (hub_parse_tree(bad[i], &t, &err) == 0)
            fail_msg("accepted: %s", bad[i]);
        assert_true(err.len > 0);
        assert_null(strchr(buf_str(&err), '\n')); /* a hostile name is shown cleaned */
        hub_tree_free(&t);
        buf_free(&err);
    }
    /* duplicates across pages, a file that is also a directory, nothing at all */
    static const char *pages[][2] = {
        {"[{\"type\":\"file\",\"oid\":\"" OID "\",\"size\":1,\"path\":\"a\"}]",
         "[{\"type\":\"file\",\"oid\":\"" OID "\",\"size\":1,\"path\":\"a\"}]"},
        {"[{\"type\":\"file\",\"oid\":\"" OID "\",\"size\":1,\"path\":\"a\"}]",
         "[{\"type\":\"file\",\"oid\":\"" OID "\",\"size\":1,\"path\":\"a/b\"}]"},
        {"[]", "[]"},
    };
    static const char *why[] = {"twice", "both as a file and as a directory", "no files"};
    for (size_t i = 0; i < sizeof pages / sizeof *pages; i++) {
        struct hub_tree t = {0};
        struct buf err = BUF_INIT;
        assert_int_equal(hub_parse_tree(pages[i][0], &t, &err), 0);
        assert_int_equal(hub_parse_tree(pages[i][1], &t, &err), 0);
        assert_int_equal(hub_tree_check(&t, &err), -1);
        assert_non_null(strstr(buf_str(&err), why[i]));
        hub_tree_free(&t);
        buf_free(&err);
    }
}

static void link_next(void **st)
{
    (void)st;
    char url[256];
    assert_true(hub_link_next("<https://huggingface.co/api/models/a/b/tree/main?recursive=true"
                              "&cursor=Nw>; rel=\"next\"",
                              url, sizeof url));
    assert_string_equal(url, "https://huggingface.co/api/models/a/b/tree/main?recursive=true"
                             "&cursor=Nw");
    assert_true(hub_link_next("<http://h/first>; rel=\"first\", <http://h/2>; rel=\"next\"", url,
                              sizeof url));
    assert_string_equal(url, "http://h/2");
    assert_false(hub_link_next("<http://h/first>; rel=\"prev\"", url, sizeof url));
    assert_false(hub_link_next("<file:///etc/passwd>; rel=\"next\"", url, sizeof url));
    assert_false(hub_link_next("<http://h/2", url, sizeof url));
    assert_false(hub_link_next("", url, sizeof url));
    char small[8];
    assert_false(hub_link_next("<http://host/long>; rel=\"next\"", small, sizeof small));
}

static void git_sha1(void **st)
{
    (void)st;
    char sha1[41];
    /* `printf 'hello\n' | git hash-object --stdin` */
    hub_git_sha1("hello\n", 6, sha1);
    assert_string_equal(sha1, "ce013625030ba8dba906f756967f9e9ca394464a");
    hub_git_sha1("", 0, sha1);
    assert_string_equal(sha1, "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(revision),  cmocka_unit_test(tree_pages), cmocka_unit_test(hostile_listings),
        cmocka_unit_test(link_next), cmocka_unit_test(git_sha1),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
