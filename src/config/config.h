/* config: every setting the program reads, layered defaults <- config file <-
 * environment <- flags, each value remembering where it came from. Names are
 * the script era's environment names so existing habits carry over. */
#ifndef DSV41_CONFIG_H
#define DSV41_CONFIG_H

#include <stdbool.h>
#include <stdio.h>

#include "buf.h"
#include "config_keys.h"

enum config_source { CONFIG_SRC_DEFAULT, CONFIG_SRC_FILE, CONFIG_SRC_ENV, CONFIG_SRC_FLAG };

struct config_value {
    const char *key;
    char *value;        /* never NULL after config_load */
    enum config_source source;
    char *origin;       /* file:line for CONFIG_SRC_FILE, else NULL */
    long whole;         /* the value as a number, parsed once at load (config_long) */
    double num;
    bool is_whole, is_num; /* the whole value is one */
};

struct config {
    struct config_value *values;
    int count;
    char *file; /* the config file that was consulted (may not exist) */
};

/* Loads all layers. flags are "KEY=VALUE" strings from the command line.
 * On error returns -1 with a message in err naming the file and line. */
int config_load(struct config *c, const char *file, char *const *flags, int nflags,
                struct buf *err);
void config_free(struct config *c);
/* Every setting, its value (secrets as set/unset) and where it came from:
 * what `dsv41-top config` prints and an incident keeps. */
void config_dump(const struct config *c, FILE *f);

/* A deep copy (config_free frees it), and one setting changed in it as a
 * --set flag would (checked like every value): a command that runs another
 * with one thing different (accept: IMG) changes its copy, never the one
 * main() loaded. -1 with err when out of memory or the value is refused. */
int config_copy(struct config *dst, const struct config *src);
int config_override(struct config *c, enum config_id k, const char *value, struct buf *err);
/* A hash of the settings that shape what the server does (the checkpoint's
 * repository and revision, the nodes, TP/PP, vLLM's limits, arguments and
 * environment; not IMG, paths, ports or the console's settings): 16 hex
 * characters. Two bench runs or acceptances compare only under one hash. */
void config_hash(const struct config *c, char out[17]);
/* Sets KEY=VALUE in the config file at path, the file's other lines as they
 * were (the last KEY= line replaced, or one added), after copying the file
 * to path.bak; written to a temporary file, synced and renamed over, 0600
 * when new. VALUE is written in double quotes when it needs them. -1 with
 * err. (config_file.c) */
int config_file_set(const char *path, const char *key, const char *value, struct buf *err);

/* A setting's name ("STATE_DIR"). */
const char *config_name(enum config_id k);
/* A setting's value: never NULL after config_load. */
const char *config_str(const struct config *c, enum config_id k);
/* Its number, parsed at load as atol/strtod would (0 for an empty value). */
long config_long(const struct config *c, enum config_id k);
double config_num(const struct config *c, enum config_id k);
/* The same, -1 with a message in err when the whole value is not one. */
int config_get_long(const struct config *c, enum config_id k, long *out, struct buf *err);
int config_get_double(const struct config *c, enum config_id k, double *out, struct buf *err);
bool config_is_secret(const char *key);
const char *config_help(const char *key);
/* The i-th setting the program knows (from 0), with its default and help;
 * NULL past the last: the man page's and README's settings tables. */
const char *config_key_at(int i, const char **def, const char **help, bool *secret);
const char *config_source_name(enum config_source s);
/* The default config file path: $XDG_CONFIG_HOME/dsv41-top/config. */
int config_default_path(struct buf *out);

#endif
