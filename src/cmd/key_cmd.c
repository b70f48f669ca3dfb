/* `dsv41-top key`: the API key file rank 0 serves with - where it is, whether
 * its mode and owner are safe, when it was written, its fingerprint; the key
 * itself only to a terminal; a new one (--rotate). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "apikey.h"
#include "commands.h"
#include "pi.h"
#include "usage.h"

const struct usage_doc key_doc = {
    "key", "[--json]\n--show\n--rotate [--restart] [--json]",
    "the API key: where it is, its fingerprint; a new one",
    "The API key rank 0 requires (API_KEY_FILE, default STATE_DIR/api_key; launch creates it "
    "once). Without options: its path, mode and owner (a warning unless 0600 and yours), when "
    "it was written, and its fingerprint - never the key.\n\n"
    "The fingerprint is \"SHA256:\" and the unpadded base64 of the key's SHA-256, as ssh-keygen "
    "-l shows a key's. To compare a laptop's key with it: printf %s \"$DSV41_API_KEY\" | openssl "
    "dgst -sha256 -binary | base64 | tr -d =",
    (const struct usage_exit[]){{0, "the key is there and safe (or was rotated)"},
                                {1, "it is missing or a check warns"},
                                {2, "a usage error"},
                                {-1, NULL}},
    (const struct usage_opt[]){
        {"--show", NULL, "print the key, only when stdout is a terminal (never into a pipe or file)"},
        {"--rotate", NULL,
         "write a new random key (0600, atomically: a temporary beside the file, fsync, rename); "
         "the old file's bytes are overwritten. A symbolic link at the path is refused, never "
         "followed. A running rank 0 keeps serving the old key until it restarts."},
        {"--restart", NULL,
         "with --rotate: restart the deployment (dsv41-top restart) so rank 0 reads the new key. "
         "The workers' ranks restart too: they cannot outlive rank 0 (their NCCL communicator "
         "goes with it, and a new rank 0 waits for them)."},
        {"--json", NULL, "path, exists, mode, owner, mtime, fingerprint, problems; never the key "
                         "(with --rotate: the new key's; not with --restart)"},
        {NULL, NULL, NULL}}};
/* What `key` reports of the file, from lstat: a link is described, never
 * followed. */
struct key_file {
    const char *path;
    bool exists, is_link, is_reg;
    char link_to[512];
    struct stat st;
    bool mode_ok, owner_ok;
    char fp[APIKEY_FP_SIZE]; /* "" when the key could not be read */
    struct buf why;          /* why there is no fingerprint */
};

static void key_look(const char *path, struct key_file *k)
{
    memset(k, 0, sizeof *k);
    k->path = path;
    if (lstat(path, &k->st) < 0) {
        if (errno != ENOENT)
            buf_printf(&k->why, "cannot look at %s: %s", path, strerror(errno));
        return;
    }
    k->exists = true;
    k->is_link = S_ISLNK(k->st.st_mode);
    k->is_reg = S_ISREG(k->st.st_mode);
    if (k->is_link) {
        ssize_t n = readlink(path, k->link_to, sizeof k->link_to - 1);
        k->link_to[n > 0 ? n : 0] = '\0';
    }
    k->mode_ok = k->is_reg && (k->st.st_mode & 0777) == 0600;
    k->owner_ok = k->st.st_uid == geteuid();
    if (!k->is_reg)
        return;
    struct buf key = BUF_INIT;
    if (apikey_read(path, &key, &k->why) == 0)
        apikey_fingerprint(key.data, key.len, k->fp);
    apikey_scrub(&key);
}

static void user_name(uid_t uid, char *out, size_t sz)
{
    struct passwd pw, *res = NULL;
    char tmp[1024];
    if (getpwuid_r(uid, &pw, tmp, sizeof tmp, &res) == 0 && res)
        snprintf(out, sz, "%s", res->pw_name);
    else
        snprintf(out, sz, "uid %u", (unsigned)uid);
}

/* The problems a key file has, each with its fix; the count. */
static int key_problems(const struct key_file *k, struct strv *out)
{
    if (!k->exists) {
        strv_addf(out,
                  "no API key at %s: create one with `dsv41-top key --rotate` (or "
                  "`dsv41-top launch` creates it)",
                  k->path);
        return out->n;
    }
    if (k->is_link)
        strv_addf(out,
                  "%s is a symbolic link (to %s): launch refuses to read a key through a "
                  "link; remove it and run `dsv41-top key --rotate`, or set API_KEY_FILE to "
                  "the file itself",
                  k->path, k->link_to);
    else if (!k->is_reg)
        strv_addf(out, "%s is not a regular file: remove it and run `dsv41-top key --rotate`",
                  k->path);
    if (k->is_reg && !k->mode_ok)
        strv_addf(out, "mode %04o, not 0600%s: chmod 600 %s", (unsigned)(k->st.st_mode & 07777),
                  k->st.st_mode & 077 ? " (others can read the key: rotate it too)" : "", k->path);
    if (!k->is_link && !k->owner_ok) {
        char who[64];
        user_name(k->st.st_uid, who, sizeof who);
        strv_addf(out, "owned by %s, not by you (uid %u): chown it, or run as its owner", who,
                  (unsigned)geteuid());
    }
    if (k->is_reg && !k->fp[0] && k->why.len && k->mode_ok)
        strv_addf(out, "%s", buf_str(&k->why));
    return out->n;
}

static void iso_time(time_t t, char *out, size_t sz)
{
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(out, sz, "%Y-%m-%d %H:%M:%S %z", &tm);
}

static void age(time_t t, char *out, size_t sz)
{
    double s = difftime(time(NULL), t);
    if (s < 0)
        snprintf(out, sz, "in the future: check the clock");
    else if (s < 120)
        snprintf(out, sz, "%.0f s ago", s);
    else if (s < 7200)
        snprintf(out, sz, "%.0f min ago", s / 60);
    else if (s < 172800)
        snprintf(out, sz, "%.0f h ago", s / 3600);
    else
        snprintf(out, sz, "%.0f days ago", s / 86400);
}

static void print_text(const struct config *c, const struct key_file *k, const struct strv *pr)
{
    printf("key file     %s\n", k->path);
    if (k->exists && !k->is_link) {
        char who[64], when[64], ago[48];
        user_name(k->st.st_uid, who, sizeof who);
        iso_time(k->st.st_mtime, when, sizeof when);
        age(k->st.st_mtime, ago, sizeof ago);
        printf("mode         %04o, owner %s%s\n", (unsigned)(k->st.st_mode & 07777), who,
               k->mode_ok && k->owner_ok ? ": ok" : "");
        printf("written      %s (%s)\n", when, ago);
    }
    printf("fingerprint  %s\n", k->fp[0] ? k->fp : "n/a");
    const char *env = config_str(c, CFG_DSV41_API_KEY);
    if (env && env[0]) {
        char efp[APIKEY_FP_SIZE];
        apikey_fingerprint(env, strlen(env), efp);
        printf("note: DSV41_API_KEY is set here (fingerprint %s%s): dsv41-top's own requests "
               "(smoke, bench, launch's readiness check) send it, not the file\n",
               efp,
               !k->fp[0]                 ? ""
               : strcmp(efp, k->fp) == 0 ? ", the file's key"
                                         : ", NOT the file's key");
    }
    for (int i = 0; i < pr->n; i++)
        printf("%s: %s\n", k->exists ? "warning" : "error", pr->v[i]);
}

static int print_json(const struct key_file *k, const struct strv *pr)
{
    cJSON *j = cJSON_CreateObject();
    if (!j)
        return -1;
    cJSON_AddStringToObject(j, "path", k->path);
    cJSON_AddBoolToObject(j, "exists", k->exists);
    cJSON_AddBoolToObject(j, "symlink", k->is_link);
    if (k->exists && !k->is_link) {
        char mode[8], when[64];
        snprintf(mode, sizeof mode, "%04o", (unsigned)(k->st.st_mode & 07777));
        cJSON_AddStringToObject(j, "mode", mode);
        cJSON_AddNumberToObject(j, "owner_uid", (double)k->st.st_uid);
        cJSON_AddBoolToObject(j, "mode_ok", k->mode_ok);
        cJSON_AddBoolToObject(j, "owner_ok", k->owner_ok);
        cJSON_AddNumberToObject(j, "mtime", (double)k->st.st_mtime);
        iso_time(k->st.st_mtime, when, sizeof when);
        cJSON_AddStringToObject(j, "mtime_local", when);
    } else {
        cJSON_AddNullToObject(j, "mode");
        cJSON_AddNullToObject(j, "mtime");
    }
    if (k->fp[0])
        cJSON_AddStringToObject(j, "fingerprint", k->fp);
    else
        cJSON_AddNullToObject(j, "fingerprint");
    cJSON *a = cJSON_AddArrayToObject(j, "problems");
    for (int i = 0; a && i < pr->n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(pr->v[i]));
    char *s = cJSON_Print(j);
    cJSON_Delete(j);
    if (!s)
        return -1;
    printf("%s\n", s);
    free(s);
    return 0;
}

static int key_status(const struct config *c, bool json)
{
    struct key_file k;
    struct strv pr = STRV_INIT;
    key_look(config_str(c, CFG_API_KEY_FILE), &k);
    int bad = key_problems(&k, &pr);
    int rc = json ? print_json(&k, &pr) : (print_text(c, &k, &pr), 0);
    strv_free(&pr);
    buf_free(&k.why);
    return rc < 0 ? 2 : bad ? 1 : 0;
}

static int key_show(const struct config *c)
{
    const char *path = config_str(c, CFG_API_KEY_FILE);
    if (!isatty(STDOUT_FILENO)) {
        fprintf(stderr,
                "refusing to print the API key: stdout is not a terminal, and a pipe or "
                "file would keep it (a log, a scrollback file). Run `dsv41-top key "
                "--show` at a terminal, or read %s where it is needed.\n",
                path);
        return 1;
    }
    struct key_file k;
    key_look(path, &k);
    struct strv pr = STRV_INIT;
    int rc = 0;
    struct buf key = BUF_INIT, why = BUF_INIT;
    if (!k.exists || k.is_link || !k.is_reg) {
        key_problems(&k, &pr);
        fprintf(stderr, "%s\n", pr.n ? pr.v[0] : buf_str(&k.why));
        rc = 1;
    } else if (apikey_read(path, &key, &why) < 0) {
        fprintf(stderr, "%s\n", buf_str(&why));
        rc = 1;
    } else {
        fwrite(key.data, 1, key.len, stdout);
        fputc('\n', stdout);
        fflush(stdout);
    }
    apikey_scrub(&key);
    strv_free(&pr);
    buf_free(&why);
    buf_free(&k.why);
    return rc;
}

/* The line a laptop runs again to fetch the new key, as `dsv41-top pi`
 * prints it. */
static void pi_hint(const struct config *c)
{
    struct strv lines = STRV_INIT;
    pi_connect_lines(c, NULL, &lines);
    for (int i = 0; i < lines.n; i++)
        if (strncmp(lines.v[i], "export DSV41_API_KEY=", 21) == 0)
            printf("clients (Pi on a laptop) need the new key: run there again: %s\n", lines.v[i]);
    strv_free(&lines);
}

static int key_rotate(const struct config *c, bool restart, bool json)
{
    const char *path = config_str(c, CFG_API_KEY_FILE);
    char fp[APIKEY_FP_SIZE];
    enum apikey_old old;
    struct buf why = BUF_INIT;
    if (apikey_rotate(path, fp, &old, &why) < 0) {
        fprintf(stderr, "%s\n", buf_str(&why));
        buf_free(&why);
        return 1;
    }
    buf_free(&why);
    if (json) /* the new state, as `key --json` shows it */
        return key_status(c, true);
    printf("new key written to %s (mode 0600), fingerprint %s\n", path, fp);
    if (old == APIKEY_OLD_WIPED)
        printf("the old key: overwritten and removed\n");
    else if (old == APIKEY_OLD_UNLINKED)
        printf("the old key: its file removed but not overwritten (it could not be opened for "
               "writing, or another name links to it)\n");
    pi_hint(c);
    if (!restart) {
        printf("a running rank 0 still answers the old key until it restarts: dsv41-top "
               "restart (or key --rotate --restart)\n");
        return 0;
    }
    printf("restarting the deployment so rank 0 reads the new key (the workers' ranks too: "
           "they cannot outlive rank 0)\n");
    fflush(stdout);
    char name[] = "restart";
    char *av[] = {name, NULL};
    return cmd_restart(c, 1, av);
}

int cmd_key(const struct config *c, int argc, char **argv)
{
    bool show = false, rotate = false, restart = false, json = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--show") == 0) {
            show = true;
        } else if (strcmp(argv[i], "--rotate") == 0) {
            rotate = true;
        } else if (strcmp(argv[i], "--restart") == 0) {
            restart = true;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage_print(stdout, &key_doc);
            return 0;
        } else {
            fprintf(stderr, "dsv41-top key: unknown argument %s\n\n", argv[i]);
            usage_print(stderr, &key_doc);
            return 2;
        }
    }
    if ((show && (rotate || json || restart)) || (restart && (!rotate || json))) {
        fprintf(stderr, "dsv41-top key: %s\n\n",
                show      ? "--show goes alone"
                : !rotate ? "--restart goes with --rotate"
                          : "--restart prints the restart's lines: not with --json");
        usage_print(stderr, &key_doc);
        return 2;
    }
    if (show)
        return key_show(c);
    if (rotate)
        return key_rotate(c, restart, json);
    return key_status(c, json);
}
