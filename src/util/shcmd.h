/* shcmd: the one place a command for a shell is made. A command is a fixed
 * script - string literals only, enforced at compile time - and the values
 * it works on, which reach the script only as positional parameters ("$1",
 * "$@"): no value is ever parsed by a shell, whatever bytes it holds.
 *
 * Locally the script runs as argv {"/bin/sh", "-c", SCRIPT, "dsv41", ARG...}
 * with no quoting at all. For a remote node the line given to the account's
 * login shell is `exec /bin/sh -c 'SCRIPT' dsv41 'ARG'...`, quoted so that
 * sh, bash, zsh, fish, csh and tcsh all read the same words (fish treats \\
 * inside quotes, csh !, and csh cannot quote a newline at all: a command with
 * a newline travels escaped and is rebuilt by /bin/sh). */
#ifndef DSV41_SHCMD_H
#define DSV41_SHCMD_H

#include <stdbool.h>

#include "buf.h"
#include "strv.h"

struct shcmd {
    struct buf script;
    struct strv args;
    bool failed; /* an allocation failed: rendering fails too */
};

#define SHCMD_INIT {BUF_INIT, STRV_INIT, false}

/* Appends script text. Only a string literal compiles ("" text ""), so a
 * value can never become script: values go through shcmd_arg. */
#define shcmd_script(c, text) shcmd_script_literal_((c), "" text "")
void shcmd_script_literal_(struct shcmd *c, const char *literal);
/* Appends one positional parameter. */
void shcmd_arg(struct shcmd *c, const char *value);
void shcmd_argf(struct shcmd *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void shcmd_args(struct shcmd *c, const struct strv *values);
/* A program and its arguments, NULL-terminated, with no script of our own
 * (exec "$@"). */
void shcmd_exec(struct shcmd *c, const char *prog, ...) __attribute__((sentinel));
/* True for a command made by shcmd_exec alone: it can start without a
 * shell (args.v is then its argv, looked up in PATH). */
bool shcmd_plain_exec(const struct shcmd *c);
/* The line for a remote account's login shell. -1 when an allocation failed. */
int shcmd_line(const struct shcmd *c, struct buf *out);
/* The argv that runs it locally (/bin/sh -c ...), for posix_spawn. */
int shcmd_argv(const struct shcmd *c, struct strv *argv);
void shcmd_free(struct shcmd *c);

/* A word quoted so that every shell above reads it back as it is. */
int shcmd_quote(struct buf *b, const char *word);
/* A word of rsync's -e command: rsync splits that itself, no shell, and
 * reads '' inside single quotes as one quote. */
int shcmd_quote_rsync(struct buf *b, const char *word);
/* A word of an OpenSSH option value (UserKnownHostsFile=...): ssh splits
 * those on blanks itself, honouring double quotes and \ escapes. */
int shcmd_quote_openssh(struct buf *b, const char *word);
/* Words joined with ' ', each quoted when it needs it (for people to read
 * and paste: `launch --dry-run`). */
int shcmd_join(const struct strv *words, struct buf *out);

#endif
