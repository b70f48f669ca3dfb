#include "usage.h"

#include <string.h>

#define WIDTH 80
#define OPT_COL 22 /* where an option's help starts */

static bool is_option(const struct usage_opt *o)
{
    return o->flag[0] == '-';
}

/* A value that runs until the next flag ("N..."). */
static bool takes_many(const struct usage_opt *o)
{
    size_t n = o->arg ? strlen(o->arg) : 0;
    return n > 3 && strcmp(o->arg + n - 3, "...") == 0;
}

void usage_each_flag(const struct usage_opt *o, void (*fn)(void *ctx, const char *flag, size_t n),
                     void *ctx)
{
    for (const char *p = o->flag; *p;) {
        size_t n = strcspn(p, ",");
        fn(ctx, p, n);
        p += n;
        while (*p == ',' || *p == ' ')
            p++;
    }
}

struct find_ctx {
    const char *word;
    size_t n;
    bool hit;
};

static void match_flag(void *ctx, const char *flag, size_t n)
{
    struct find_ctx *f = ctx;
    if (n == f->n && strncmp(flag, f->word, n) == 0)
        f->hit = true;
}

const struct usage_opt *usage_find(const struct usage_doc *d, const char *word)
{
    /* "--timeout=5" is "--timeout" with its value */
    struct find_ctx f = {word, strcspn(word, "="), false};
    for (const struct usage_opt *o = d->opts; o && o->flag; o++) {
        if (!is_option(o))
            continue;
        usage_each_flag(o, match_flag, &f);
        if (f.hit)
            return o;
    }
    return NULL;
}

const struct usage_exit USAGE_EXITS_PLAIN[] = {{0, "done"}, {2, "a usage error"}, {-1, NULL}};

const struct usage_exit *usage_exits(const struct usage_doc *d)
{
    return d->exits ? d->exits : USAGE_EXITS_PLAIN;
}

void usage_prog(struct buf *b, const struct usage_doc *d)
{
    if (d->name && strncmp(d->name, "dsv41-", 6) == 0)
        buf_puts(b, d->name);
    else
        buf_printf(b, "dsv41-top%s%s", d->name ? " " : "", d->name ? d->name : "");
}

void usage_synopsis(struct buf *b, const struct usage_doc *d)
{
    if (d->synopsis) {
        buf_puts(b, d->synopsis);
        return;
    }
    const char *sep = "";
    for (const struct usage_opt *o = d->opts; o && o->flag; o++) {
        if (is_option(o)) {
            /* the first name stands for its aliases */
            size_t n = strcspn(o->flag, ",");
            buf_printf(b, "%s[%.*s%s%s]", sep, (int)n, o->flag, o->arg ? " " : "",
                       o->arg ? o->arg : "");
        } else {
            buf_printf(b, "%s[%s]", sep, o->flag);
        }
        sep = " ";
    }
}

void usage_wrap(FILE *f, const char *text, int indent, int width)
{
    int col = indent; /* the caller has written the first line's indent */
    bool line_empty = true;
    for (const char *p = text; *p;) {
        if (p[0] == '\n' && p[1] == '\n') { /* a new paragraph */
            fprintf(f, "\n\n%*s", indent, "");
            col = indent;
            line_empty = true;
            p += 2;
            continue;
        }
        if (*p == ' ' || *p == '\n') {
            p++;
            continue;
        }
        size_t n = strcspn(p, " \n");
        if (!line_empty && col + 1 + (int)n > width) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
            line_empty = true;
        }
        if (!line_empty) {
            fputc(' ', f);
            col++;
        }
        fwrite(p, 1, n, f);
        col += (int)n;
        line_empty = false;
        p += n;
    }
}

void usage_print(FILE *f, const struct usage_doc *d)
{
    struct buf syn = BUF_INIT, prog = BUF_INIT;
    usage_synopsis(&syn, d);
    usage_prog(&prog, d);
    if (!syn.len) /* a command without options */
        fprintf(f, "usage: %s\n", buf_str(&prog));
    /* a given synopsis may hold several forms, one per line */
    for (const char *line = buf_str(&syn), *first = line; *line;) {
        size_t n = strcspn(line, "\n");
        int lead = fprintf(f, "%s %s ", line == first ? "usage:" : "      ", buf_str(&prog));
        struct buf one = BUF_INIT;
        buf_append(&one, line, n);
        usage_wrap(f, buf_str(&one), lead, WIDTH);
        buf_free(&one);
        fputc('\n', f);
        line += n;
        if (*line)
            line++;
    }
    buf_free(&syn);
    buf_free(&prog);
    if (d->text) {
        fputc('\n', f);
        usage_wrap(f, d->text, 0, WIDTH);
        fputc('\n', f);
    }
    bool any = false;
    for (const struct usage_opt *o = d->opts; o && o->flag; o++) {
        if (!any)
            fputs("\noptions:\n", f);
        any = true;
        int w = fprintf(f, "  %s%s%s", o->flag, o->arg ? " " : "", o->arg ? o->arg : "");
        if (w + 1 > OPT_COL)
            fprintf(f, "\n%*s", OPT_COL, "");
        else
            fprintf(f, "%*s", OPT_COL - w, "");
        usage_wrap(f, o->help, OPT_COL, WIDTH);
        fputc('\n', f);
    }
    fputs("\nexit status:\n", f);
    for (const struct usage_exit *e = usage_exits(d); e->code >= 0; e++) {
        int w = fprintf(f, "  %d", e->code);
        fprintf(f, "%*s", w < 6 ? 6 - w : 1, "");
        usage_wrap(f, e->when, 6, WIDTH);
        fputc('\n', f);
    }
}

/* Walks argv as the command's parser will: calls at(word, opt) for each
 * option (opt NULL when undocumented), skipping the values of those that
 * take one. Stops at "--" or when at() returns false. */
static void walk(const struct usage_doc *d, int argc, char *const *argv,
                 bool (*at)(void *ctx, const char *word, const struct usage_opt *o, bool last),
                 void *ctx)
{
    for (int i = 1; i < argc; i++) {
        const char *w = argv[i];
        if (strcmp(w, "--") == 0)
            return;
        if (w[0] != '-' || w[1] == '\0')
            continue; /* an operand (or "-", stdin) */
        const struct usage_opt *o = usage_find(d, w);
        if (!at(ctx, w, o, i + 1 >= argc))
            return;
        if (!o || !o->arg || strchr(w, '='))
            continue;
        i++; /* its value, whatever it looks like */
        if (takes_many(o))
            while (i + 1 < argc && argv[i + 1][0] != '-')
                i++;
    }
}

static bool is_help(const char *w)
{
    return strcmp(w, "--help") == 0 || strcmp(w, "-h") == 0;
}

static bool help_at(void *ctx, const char *word, const struct usage_opt *o, bool last)
{
    (void)o;
    (void)last;
    if (is_help(word))
        *(bool *)ctx = true;
    return !*(bool *)ctx;
}

bool usage_wants_help(const struct usage_doc *d, int argc, char *const *argv)
{
    bool help = false;
    walk(d, argc, argv, help_at, &help);
    return help;
}

struct check_ctx {
    const struct usage_doc *d;
    struct buf *err;
    int rc;
};

static bool check_at(void *ctx, const char *word, const struct usage_opt *o, bool last)
{
    struct check_ctx *k = ctx;
    if (is_help(word))
        return true;
    if (!o) {
        buf_printf(k->err, "%s: unknown option '%.64s' ('dsv41-top %s --help' lists them)",
                   k->d->name, word, k->d->name);
        k->rc = -1;
        return false;
    }
    if (o->arg && !strchr(word, '=') && last) {
        buf_printf(k->err, "%s: %.64s needs a value (%s)", k->d->name, word, o->arg);
        k->rc = -1;
        return false;
    }
    if (!o->arg && strchr(word, '=')) {
        buf_printf(k->err, "%s: %.64s takes no value", k->d->name, word);
        k->rc = -1;
        return false;
    }
    return true;
}

int usage_check(const struct usage_doc *d, int argc, char *const *argv, struct buf *err)
{
    struct check_ctx k = {d, err, 0};
    walk(d, argc, argv, check_at, &k);
    return k.rc;
}
