/* shcmd: see shcmd.h. */
#include "shcmd.h"

#include <stdarg.h>
#include <string.h>

/* $0 of the script: what sh names in its own error messages. */
#define SHCMD_NAME "dsv41"

void shcmd_script_literal_(struct shcmd *c, const char *literal)
{
    if (buf_puts(&c->script, literal) < 0)
        c->failed = true;
}

void shcmd_arg(struct shcmd *c, const char *value)
{
    if (strv_add(&c->args, value) < 0)
        c->failed = true;
}

void shcmd_argf(struct shcmd *c, const char *fmt, ...)
{
    struct buf b = BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    int rc = buf_vprintf(&b, fmt, ap);
    va_end(ap);
    if (rc < 0)
        c->failed = true;
    else
        shcmd_arg(c, buf_str(&b));
    buf_free(&b);
}

void shcmd_args(struct shcmd *c, const struct strv *values)
{
    for (int i = 0; i < values->n; i++)
        shcmd_arg(c, values->v[i]);
}

void shcmd_exec(struct shcmd *c, const char *prog, ...)
{
    shcmd_script(c, "exec \"$@\"");
    shcmd_arg(c, prog);
    va_list ap;
    va_start(ap, prog);
    for (const char *a; (a = va_arg(ap, const char *));)
        shcmd_arg(c, a);
    va_end(ap);
}

/* Inside single quotes every shell keeps bytes as they are, except fish
 * (\\ and \' are escapes there) and csh (! is history): those three leave
 * the quotes and come back escaped, which all of them read alike. */
int shcmd_quote(struct buf *b, const char *word)
{
    int rc = buf_puts(b, "'");
    for (const char *p = word; *p && rc == 0; p++) {
        if (*p == '\'')
            rc = buf_puts(b, "'\"'\"'");
        else if (*p == '\\')
            rc = buf_puts(b, "'\\\\'");
        else if (*p == '!')
            rc = buf_puts(b, "'\\!'");
        else
            rc = buf_append(b, p, 1);
    }
    return rc ? rc : buf_puts(b, "'");
}

int shcmd_quote_rsync(struct buf *b, const char *word)
{
    int rc = buf_puts(b, "'");
    for (const char *p = word; *p && rc == 0; p++)
        rc = *p == '\'' ? buf_puts(b, "''") : buf_append(b, p, 1);
    return rc ? rc : buf_puts(b, "'");
}

int shcmd_quote_openssh(struct buf *b, const char *word)
{
    int rc = buf_puts(b, "\"");
    for (const char *p = word; *p && rc == 0; p++)
        rc = (*p == '"' || *p == '\\') ? buf_printf(b, "\\%c", *p) : buf_append(b, p, 1);
    return rc ? rc : buf_puts(b, "\"");
}

static bool plain_word(const char *w)
{
    if (!*w)
        return false;
    for (const char *p = w; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,@%+",
                    *p))
            return false;
    return true;
}

int shcmd_join(const struct strv *words, struct buf *out)
{
    for (int i = 0; i < words->n; i++) {
        if (i && buf_puts(out, " ") < 0)
            return -1;
        const char *w = words->v[i];
        if ((plain_word(w) ? buf_puts(out, w) : shcmd_quote(out, w)) < 0)
            return -1;
    }
    return 0;
}

static bool has_newline(const struct shcmd *c)
{
    if (strchr(buf_str(&c->script), '\n'))
        return true;
    for (int i = 0; i < c->args.n; i++)
        if (strchr(c->args.v[i], '\n'))
            return true;
    return false;
}

static int quoted_args(const struct shcmd *c, struct buf *out)
{
    for (int i = 0; i < c->args.n; i++)
        if (buf_puts(out, " ") < 0 || shcmd_quote(out, c->args.v[i]) < 0)
            return -1;
    return 0;
}

int shcmd_line(const struct shcmd *c, struct buf *out)
{
    if (c->failed)
        return -1;
    if (!has_newline(c)) {
        if (buf_puts(out, "exec /bin/sh -c ") < 0 || shcmd_quote(out, buf_str(&c->script)) < 0 ||
            buf_puts(out, " " SHCMD_NAME) < 0)
            return -1;
        return quoted_args(c, out);
    }
    /* csh cannot quote a newline: the script and its parameters travel as
     * one line with \n and \\ escapes, which printf %b turns back. */
    struct buf plain = BUF_INIT, esc = BUF_INIT;
    int rc = buf_puts(&plain, "set --");
    rc |= quoted_args(c, &plain);
    rc |= buf_puts(&plain, "\n");
    rc |= buf_puts(&plain, buf_str(&c->script));
    for (const char *p = buf_str(&plain); *p && rc == 0; p++)
        rc = *p == '\n' ? buf_puts(&esc, "\\n") : *p == '\\' ? buf_puts(&esc, "\\\\")
                                                             : buf_append(&esc, p, 1);
    rc |= buf_puts(out, "exec /bin/sh -c 'eval \"$(printf %b \"$1\")\"' " SHCMD_NAME " ");
    rc |= shcmd_quote(out, buf_str(&esc));
    buf_free(&plain);
    buf_free(&esc);
    return rc ? -1 : 0;
}

bool shcmd_plain_exec(const struct shcmd *c)
{
    return !c->failed && c->args.n > 0 && strcmp(buf_str(&c->script), "exec \"$@\"") == 0;
}

int shcmd_argv(const struct shcmd *c, struct strv *argv)
{
    if (c->failed)
        return -1;
    int rc = strv_add(argv, "/bin/sh");
    rc |= strv_add(argv, "-c");
    rc |= strv_add(argv, buf_str(&c->script));
    rc |= strv_add(argv, SHCMD_NAME);
    for (int i = 0; i < c->args.n && rc == 0; i++)
        rc = strv_add(argv, c->args.v[i]);
    return rc ? -1 : 0;
}

void shcmd_free(struct shcmd *c)
{
    buf_free(&c->script);
    strv_free(&c->args);
    c->failed = false;
}
