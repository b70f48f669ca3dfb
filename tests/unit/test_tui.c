/* The console's pure parts: themes, graphs, the key table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw_util.h"
#include "graph.h"
#include "help.h"
#include "keys.h"
#include "theme.h"

static void theme_parses(void **st)
{
    (void)st;
    struct theme t;
    char err[300];
    const char *text = "# comment\n\nnormal = default, default\n"
                       "title = cyan, black, bold, underline  # trailing comment\n"
                       "bad = bright-red, 236\n";
    assert_int_equal(theme_parse(text, "x.theme", &t, err, sizeof err), 0);
    assert_int_equal(t.role[ROLE_TITLE].fg, 6);
    assert_int_equal(t.role[ROLE_TITLE].bg, 0);
    assert_int_equal(t.role[ROLE_TITLE].attrs, THEME_BOLD | THEME_UNDERLINE);
    assert_int_equal(t.role[ROLE_BAD].fg, 9);
    assert_int_equal(t.role[ROLE_BAD].bg, 236);
    assert_int_equal(t.role[ROLE_NORMAL].fg, -1);
}

static void theme_errors_name_file_and_line(void **st)
{
    (void)st;
    struct theme t;
    char err[300];
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"normal = default, default\ntitle = purple, default\n", "f.theme:2: 'purple' is not a colour"},
        {"nope = red, black\n", "f.theme:1: unknown role 'nope'"},
        {"\n\ntitle red black\n", "f.theme:3: expected ROLE = FG, BG"},
        {"title = red\n", "f.theme:1: 'title' needs a foreground and a background"},
        {"title = red, black, blink\n", "f.theme:1: 'blink' is not an attribute"},
        {"title = red, 256\n", "f.theme:1: '256' is not a colour"},
        {"title = red, black\ntitle = red, black\n", "f.theme:2: role 'title' given twice"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        assert_int_equal(theme_parse(cases[i].text, "f.theme", &t, err, sizeof err), -1);
        if (!strstr(err, cases[i].want))
            fail_msg("case %zu: got '%s'", i, err);
    }
}

static void shipped_themes_parse(void **st)
{
    (void)st;
    const char *names[] = {"dark", "light", "high-contrast", "mono"};
    for (size_t i = 0; i < 4; i++) {
        char path[256], err[300];
        snprintf(path, sizeof path, "%s/../../themes/%s.theme", getenv("DSV41_FIXTURES") ? getenv("DSV41_FIXTURES") : "tests/fixtures", names[i]);
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        char text[8192];
        size_t n = fread(text, 1, sizeof text - 1, f);
        text[n] = '\0';
        fclose(f);
        struct theme t;
        if (theme_parse(text, path, &t, err, sizeof err) != 0)
            fail_msg("%s", err);
    }
}

static void graph_braille_and_ascii(void **st)
{
    (void)st;
    float v[8] = {0, 1, 2, 3, 4, 5, 6, 8};
    char rows[2][256];
    graph_render(v, 8, 0, 8, 4, 2, GLYPH_BRAILLE, &rows[0][0], sizeof rows[0]);
    /* bottom row: 4 braille cells (3 bytes each); top row: the two older
     * cells stay below it (spaces), the two newer reach into it */
    assert_int_equal(strlen(rows[1]), 12);
    assert_int_equal(strlen(rows[0]), 8);
    assert_memory_equal(rows[0], "  ", 2);
    /* the newest value (8, full scale) fills the right dot column: U+28B8 | U+2847 bits */
    assert_true((unsigned char)rows[0][5] == 0xe2);
    graph_render(v, 8, 0, 8, 8, 2, GLYPH_ASCII, &rows[0][0], sizeof rows[0]);
    assert_string_equal(rows[1], "_#######");
    assert_string_equal(rows[0], "      ##"); /* 6 and 8 of 8 round to the top row */
    float gap[3] = {NAN, NAN, NAN};
    graph_render(gap, 3, 0, 1, 3, 1, GLYPH_ASCII, &rows[0][0], sizeof rows[0]);
    assert_string_equal(rows[0], "   "); /* no sample: blank, not zero */
    char g[64];
    graph_gauge(0.5, 10, GLYPH_ASCII, g, sizeof g);
    assert_string_equal(g, "#####-----");
    graph_gauge(NAN, 4, GLYPH_ASCII, g, sizeof g);
    assert_string_equal(g, "----");
    graph_gauge(1.0, 3, GLYPH_BLOCK, g, sizeof g);
    assert_string_equal(g, "\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88");
}

static void key_table_is_sane(void **st)
{
    (void)st;
    int n;
    const struct key_entry *k = keys_table(&n);
    assert_true(n > 20);
    for (int i = 0; i < n; i++) {
        assert_non_null(k[i].label);
        assert_true(strlen(k[i].help) > 5);
        for (int j = i + 1; j < n; j++)
            if (k[i].key == k[j].key)
                fail_msg("key '%s' bound twice", k[i].label);
    }
    /* every action that changes the deployment is marked, so --readonly refuses it */
    const char *actions = "sSRtbgc";
    for (const char *a = actions; *a; a++) {
        bool found = false;
        for (int i = 0; i < n; i++)
            if (k[i].key == *a) {
                found = true;
                assert_true(k[i].action);
            }
        assert_true(found);
    }
}

/* glyph_next: what put() draws and what the log pane measures for wrapping
 * come from one step, so they cannot disagree. */
static void glyphs_measured_as_drawn(void **st)
{
    (void)st;
    assert_non_null(setlocale(LC_CTYPE, "C.UTF-8"));
    mbstate_t ms;
    memset(&ms, 0, sizeof ms);
    struct glyph g = glyph_next("a", &ms, false);
    assert_true(g.n == 1 && g.cols == 1 && g.raw);
    g = glyph_next("\x1b[2J", &ms, false); /* a control byte: one '?' */
    assert_true(g.n == 1 && g.cols == 1 && !g.raw);
    g = glyph_next("\xc3\xa9", &ms, false); /* e acute: 2 bytes, 1 column */
    assert_true(g.n == 2 && g.cols == 1 && g.raw);
    g = glyph_next("\xe6\x97\xa5", &ms, false); /* a CJK ideograph: 2 columns */
    assert_true(g.n == 3 && g.cols == 2 && g.raw);
    g = glyph_next("\xe6\x97\xa5", &ms, true); /* --ascii: one '?' */
    assert_true(g.n == 3 && g.cols == 1 && !g.raw);
    g = glyph_next("\xff\xfe", &ms, false); /* invalid: one byte, one '?' */
    assert_true(g.n == 1 && g.cols == 1 && !g.raw);
    g = glyph_next("\xe6\x97", &ms, false); /* cut short: one byte at a time */
    assert_true(g.n == 1 && g.cols == 1 && !g.raw);
    g = glyph_next("x", &ms, false); /* and the state is clean after it */
    assert_true(g.n == 1 && g.raw);
}

/* The help overlay pages when the terminal is too short for the table, and
 * every key is on some page. */
static void help_paging(void **st)
{
    (void)st;
    int n;
    keys_table(&n);
    struct ui u;
    memset(&u, 0, sizeof u);
    u.w = 300, u.h = 100;
    assert_int_equal(help_pages(&u, n), 1);
    u.w = 80, u.h = 24; /* 22 rows: the box, 18 keys a page */
    assert_int_equal(help_pages(&u, n), (n + 17) / 18);
    assert_true(help_pages(&u, n) >= 2);
    u.h = 5; /* tiny: one key a page, never zero */
    assert_int_equal(help_pages(&u, n), n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(theme_parses),
        cmocka_unit_test(theme_errors_name_file_and_line),
        cmocka_unit_test(shipped_themes_parse),
        cmocka_unit_test(graph_braille_and_ascii),
        cmocka_unit_test(key_table_is_sane),
        cmocka_unit_test(glyphs_measured_as_drawn),
        cmocka_unit_test(help_paging),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
