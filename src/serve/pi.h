/* pi: the Pi coding agent connected to the deployment. What to run on a
 * laptop (the install command with the head's address, the key line - the
 * key itself never shown - and the pi command), shared by `dsv41-top pi` and
 * the console's overlay; and `pi --check`: the provider entry pi/install.sh
 * writes, the extension, the key variable, and one request the way Pi sends
 * it. */
#ifndef DSV41_PI_H
#define DSV41_PI_H

#include <stdbool.h>
#include <stdio.h>

#include "config.h"
#include "strv.h"

#define PI_PROVIDER "dsv41-sparks"
#define PI_MODEL "deepseek-v4.1-flash"

/* The dsv41-sparks entry of a Pi configuration (models.json). */
struct pi_entry {
    char base_url[512];
    char key_env[128]; /* the variable its apiKey names ("$NAME"); "" when literal */
    bool key_literal;  /* a key written into the file: works, but it should not be there */
    char model[128];
    char low_effort[32]; /* what thinking level "low" sends as reasoning_effort */
};

/* Pi's configuration directory: PI_CODING_AGENT_DIR, else ~/.pi/agent. */
void pi_config_dir(char *out, size_t sz);
/* 0 with the entry; -1 with why (no file, not JSON, no such provider). */
int pi_read_entry(const char *dir, struct pi_entry *e, char *why, size_t whysz);
/* Where pi/install.sh is on this machine (installed or beside the build);
 * "" when it cannot be found. */
void pi_share_dir(char *out, size_t sz);
/* The lines to run on a laptop, for url (NULL: the head's address from the
 * settings and this host's name). */
void pi_connect_lines(const struct config *c, const char *url, struct strv *lines);
/* The checks, a PASS/FAIL line each to out; the number that failed. */
int pi_check(const char *dir, int timeout_ms, FILE *out);

#endif
