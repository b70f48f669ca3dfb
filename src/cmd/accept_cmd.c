/* `dsv41-top accept IMAGE@sha256:DIGEST`: a maintenance window in which the
 * candidate image replaces the accepted one, is measured beside the
 * baseline's evidence, and is promoted or rolled back - never half. The
 * suite, the verdict and the report are src/accept's; the window is
 * accept_window.c's; here: the options and every check that must pass
 * before anything stops (the references pinned, the baseline's evidence of
 * this configuration, the candidate on every node by its digest, the
 * operator's yes). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "accept_int.h"
#include "api.h"
#include "apikey.h"
#include "cluster.h"
#include "commands.h"
#include "fixstr.h"
#include "interrupt.h"
#include "shcmd.h"
#include "text.h"
#include "usage.h"

const struct usage_doc accept_doc = {
    "accept", "IMAGE@sha256:DIGEST",
    "measure a candidate image beside the accepted one; promote or roll back",
    "A maintenance window: pulls the candidate on every node and checks each runtime reports the "
    "digest asked for; shows the plan and asks (unless --yes); waits for an idle server; stops "
    "the baseline; launches the candidate with the same configuration; runs smoke, the six gates, "
    "the seed's bench table and output drift (64 windows, prompt logprobs, against the baseline's "
    "evidence); then promotes (IMG pinned in the config file, a .bak kept) or rolls back (the "
    "baseline relaunched and smoke-tested). Ctrl-C, a dead node or a failed launch roll back "
    "too. The report: STATE_DIR/accept/TIME-DIGEST12/report.md and report.json. --baseline "
    "records the running image's evidence first, changing nothing.",
    (const struct usage_exit[]){
        {ACCEPT_PROMOTED, "promoted (--baseline: recorded; --list: listed)"},
        {ACCEPT_ROLLED_BACK, "the candidate failed, or was interrupted: rolled back, the baseline "
                             "serving (--baseline: the suite did not finish)"},
        {ACCEPT_USAGE, "a usage error, or the image is not pinned by digest"},
        {ACCEPT_REFUSED, "refused before anything stopped: a digest that differs, no baseline "
                         "evidence, a busy server, no confirmation"},
        {ACCEPT_BROKEN, "the rollback failed: the deployment is not as it was (the report says "
                        "what to do)"},
        {-1, NULL}},
    (const struct usage_opt[]){
        {"--baseline", NULL, "measure the running image as the baseline; stop nothing"},
        {"--list", NULL, "the history of acceptances"},
        {"--yes", NULL, "no question before the window"},
        {"--force", NULL, "do not wait for running requests to end"},
        {"--idle-wait", "SEC", "how long to wait for an idle server (default 300)"},
        {"--ctx", "N", "tokens of filler in the context gate (default 175000)"},
        {"--timeout", "SEC", "how long one request may take (default 1800)"},
        {"--ready-timeout", "SEC", "how long a launch may take (default READY_TIMEOUT)"},
        {NULL, NULL, NULL}}};

static int numarg(const char *s, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || v <= 0 || v > 7 * 86400)
        return -1;
    *out = (int)v;
    return 0;
}

/* The accepted image: STATE_DIR/accept/accepted, else IMG. */
static void read_accepted(const struct accept_run *r, char *out, size_t sz)
{
    struct buf p = BUF_INIT, b = BUF_INIT;
    buf_printf(&p, "%s/accepted", r->accept_dir);
    if (buf_read_file(&b, buf_str(&p), 4096) == 0 && b.len)
        text_copy_field(out, sz, buf_str(&b), strcspn(buf_str(&b), "\n"));
    else
        snprintf(out, sz, "%s", config_str(r->c, CFG_IMG));
    buf_free(&p);
    buf_free(&b);
}

/* The image a rollback relaunches must be known good before anything stops:
 * pinned by digest (a moved tag would roll back to another image) and a
 * value IMG takes. */
static int baseline_ok(const struct accept_run *r, struct buf *err)
{
    struct accept_ref ref;
    if (accept_ref_parse(r->base_ref, &ref, err) < 0) {
        buf_printf(err, " (the baseline, %s: pin IMG by digest and record it with accept "
                        "--baseline)",
                   config_str(r->c, CFG_IMG)[0] ? "IMG" : "STATE_DIR/accept/accepted");
        return -1;
    }
    struct config cc;
    if (config_copy(&cc, r->c) < 0)
        return buf_puts(err, "out of memory"), -1;
    int rc = config_override(&cc, CFG_IMG, r->base_ref, err);
    config_free(&cc);
    return rc;
}

/* The baseline's evidence was measured under this configuration. */
static int same_configuration(const struct accept_run *r, struct buf *err)
{
    struct buf p = BUF_INIT, b = BUF_INIT;
    buf_printf(&p, "%s/report.json", r->base_dir);
    cJSON *j = buf_read_file(&b, buf_str(&p), 1 << 24) == 0 ? cJSON_Parse(buf_str(&b)) : NULL;
    cJSON *h = cJSON_GetObjectItemCaseSensitive(j, "config_hash");
    int rc = 0;
    if (!cJSON_IsString(h)) {
        buf_printf(err, "the baseline's evidence has no readable report (%s)", buf_str(&p));
        rc = -1;
    } else if (strcmp(h->valuestring, r->hash) != 0) {
        char was[20];
        text_copy_field(was, sizeof was, h->valuestring, strlen(h->valuestring));
        buf_printf(err, "the baseline was measured under another configuration (hash %s, now "
                        "%s): record it again with dsv41-top accept --baseline",
                   was, r->hash);
        rc = -1;
    }
    cJSON_Delete(j);
    buf_free(&p);
    buf_free(&b);
    return rc;
}

/* The image's id on the head, noted in images.tsv: the console names a
 * rank's container (which its runtime reports by id) by this reference. */
static void note_image(const struct accept_run *r, const char *ref)
{
    struct shcmd s = SHCMD_INIT;
    struct ssh_result res;
    struct buf err = BUF_INIT;
    shcmd_exec(&s, config_str(r->c, CFG_RUNTIME), "image", "inspect", "--format", "{{.Id}}", "--",
               ref, (char *)NULL);
    if (node_run_local(&s, 60000, 1 << 16, &res, &err) == 0) {
        char id[80];
        text_clean(id, sizeof id, buf_str(&res.out), strcspn(buf_str(&res.out), "\n"));
        if (res.exit_status == 0 && id[0])
            accept_note_image(r->accept_dir, id, ref);
        ssh_result_free(&res);
    }
    shcmd_free(&s);
    buf_free(&err);
}

/* Pulls the candidate on every node and asks each runtime which digests
 * it has for it: all must list the one asked for. */
static int pull_everywhere(struct accept_run *r, const struct accept_ref *ref)
{
    struct cluster cl;
    if (cluster_open_for("accept", r->c, &cl) < 0)
        return -1;
    const char *rt = config_str(r->c, CFG_RUNTIME);
    int bad = 0;
    size_t dl = 0;
    for (int i = 0; i < cl.n && !interrupt_pending(); i++) {
        struct cluster_node *cn = &cl.nodes[i];
        struct shcmd s = SHCMD_INIT;
        struct ssh_result res;
        struct buf err = BUF_INIT;
        printf("%s: pulling %s\n", cn->name, ref->ref);
        fflush(stdout);
        shcmd_exec(&s, rt, "pull", "--", ref->ref, (char *)NULL);
        int rc = node_run_cancel(&cn->node, &s, 3600 * 1000, interrupt_token(), &res, &err);
        shcmd_free(&s);
        char why[300] = "";
        if (rc < 0) {
            text_copy_field(why, sizeof why, buf_str(&err), err.len);
        } else {
            if (res.exit_status != 0)
                text_copy_field(why, sizeof why, buf_str(&res.err), res.err.len);
            ssh_result_free(&res);
        }
        if (!why[0]) {
            s = (struct shcmd)SHCMD_INIT;
            shcmd_exec(&s, rt, "image", "inspect", "--format", "{{json .RepoDigests}}", "--",
                       ref->ref, (char *)NULL);
            if (node_run(&cn->node, &s, 60000, &res, &err) < 0) {
                text_copy_field(why, sizeof why, buf_str(&err), err.len);
            } else {
                if (!accept_digest_listed(buf_str(&res.out), ref->digest)) {
                    char got[200];
                    text_copy_field(got, sizeof got, buf_str(&res.out), res.out.len);
                    snprintf(why, sizeof why, "its runtime reports %s, not %.19s...", got,
                             ref->digest);
                }
                ssh_result_free(&res);
            }
            shcmd_free(&s);
        }
        buf_free(&err);
        if (why[0]) {
            printf("%s: refused: %s\n", cn->name, why);
            bad++;
        } else {
            printf("%s: %s present\n", cn->name, ref->digest);
            fixstr_appendf(r->digests, sizeof r->digests, &dl, "%s%s %.19s", dl ? "; " : "",
                           cn->name, ref->digest);
        }
    }
    cluster_close(&cl);
    if (bad || interrupt_pending())
        return -1;
    note_image(r, ref->ref);
    return 0;
}

static bool confirm(const struct accept_run *r)
{
    printf("the plan: stop %s; launch %s with the same configuration (hash %s); run smoke, the "
           "six gates, the bench and output drift; promote it, or roll back to the baseline. "
           "The API is down meanwhile.\n",
           r->base_ref, r->cand, r->hash);
    if (!isatty(STDIN_FILENO)) {
        printf("refused: no terminal to ask; add --yes to go ahead\n");
        return false;
    }
    printf("go ahead? [y/N] ");
    fflush(stdout);
    char line[16] = "";
    return fgets(line, sizeof line, stdin) && (line[0] == 'y' || line[0] == 'Y');
}

static int usage(FILE *f, int rc)
{
    usage_print(f, &accept_doc);
    return rc;
}

/* The checks before the window, in order; each refusal changes nothing. */
static int candidate(struct accept_run *r, const struct accept_ref *ref, bool yes)
{
    struct buf err = BUF_INIT;
    struct accept_ref base;
    int rc = -1;
    if (baseline_ok(r, &err) < 0)
        printf("refused: %s\n", buf_str(&err));
    else if (accept_ref_parse(r->base_ref, &base, &err) == 0 &&
             strcmp(base.digest, ref->digest) == 0)
        printf("refused: %s is the accepted image already (%s)\n", ref->digest, r->base_ref);
    else if (access(r->base_dir, F_OK) != 0)
        printf("refused: no baseline evidence on this deployment (%s): record it first with "
               "dsv41-top accept --baseline (it measures the running image, changing nothing)\n",
               r->base_dir);
    else if (same_configuration(r, &err) < 0)
        printf("refused: %s\n", buf_str(&err));
    else if (pull_everywhere(r, ref) < 0)
        printf("refused: the candidate is not the same image on every node; nothing was "
               "stopped\n");
    else if (yes || confirm(r))
        rc = 0;
    buf_free(&err);
    return rc < 0 ? ACCEPT_REFUSED : accept_window(r);
}

int cmd_accept(const struct config *c, int argc, char **argv)
{
    bool yes = false, baseline = false, list = false;
    struct accept_run r = {.c = c, .api = BUF_INIT, .key = BUF_INIT, .timeout_s = 1800,
                           .ctx = 175000, .idle_wait = 300,
                           .ready_timeout = (int)config_long(c, CFG_READY_TIMEOUT)};
    const char *img = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int *num = strcmp(a, "--idle-wait") == 0       ? &r.idle_wait
                   : strcmp(a, "--ctx") == 0           ? &r.ctx
                   : strcmp(a, "--timeout") == 0       ? &r.timeout_s
                   : strcmp(a, "--ready-timeout") == 0 ? &r.ready_timeout
                                                       : NULL;
        if (num) {
            if (i + 1 >= argc || numarg(argv[++i], num) < 0)
                return usage(stderr, ACCEPT_USAGE);
        } else if (strcmp(a, "--yes") == 0) {
            yes = true;
        } else if (strcmp(a, "--force") == 0) {
            r.force = true;
        } else if (strcmp(a, "--baseline") == 0) {
            baseline = true;
        } else if (strcmp(a, "--list") == 0) {
            list = true;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            return usage(stdout, 0);
        } else if (a[0] != '-' && !img) {
            img = a;
        } else {
            return usage(stderr, ACCEPT_USAGE);
        }
    }
    snprintf(r.accept_dir, sizeof r.accept_dir, "%s/accept", config_str(c, CFG_STATE_DIR));
    if (list)
        return accept_list(r.accept_dir, stdout) < 0 ? 1 : 0;
    /* --baseline measures what runs; an image beside it would be ambiguous */
    if (baseline == (img != NULL))
        return usage(stderr, ACCEPT_USAGE);
    struct accept_ref ref;
    struct buf err = BUF_INIT;
    if (img && accept_ref_parse(img, &ref, &err) < 0) {
        fprintf(stderr, "dsv41-top accept: %s\n", buf_str(&err));
        buf_free(&err);
        return ACCEPT_USAGE;
    }
    /* a console that started this as a job may go away: its pipe closing
     * must not end a window half-way (the report keeps what happened) */
    signal(SIGPIPE, SIG_IGN);
    r.t.bench_tol = config_num(c, CFG_ACCEPT_BENCH_TOL) / 100;
    r.t.top1 = config_num(c, CFG_ACCEPT_TOP1);
    r.t.kld = config_num(c, CFG_ACCEPT_KLD);
    mkdir(config_str(c, CFG_STATE_DIR), 0700);
    if (mkdir(r.accept_dir, 0700) < 0 && errno != EEXIST) {
        fprintf(stderr, "dsv41-top accept: cannot make %s: %s\n", r.accept_dir, strerror(errno));
        return ACCEPT_REFUSED;
    }
    char base_ref[400];
    read_accepted(&r, base_ref, sizeof base_ref);
    r.base_ref = base_ref;
    r.cand = img ? ref.ref : base_ref;
    snprintf(r.base_dir, sizeof r.base_dir, "%s/baseline", r.accept_dir);
    char stamp[32];
    time_t now = time(NULL);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime(&now));
    const char *dig = strstr(r.cand, "@sha256:");
    snprintf(r.run_dir, sizeof r.run_dir, "%s/%s-%.12s", r.accept_dir, stamp,
             dig ? dig + 8 : "unpinned");
    config_hash(c, r.hash);
    api_base_url(c, &r.api);
    int rc;
    if (api_load_key(c, &r.key, &err) < 0) {
        /* without it every request is refused: nothing to measure */
        printf("refused: %s\n", buf_str(&err));
        rc = ACCEPT_REFUSED;
    } else if (baseline) {
        if (baseline_ok(&r, &err) < 0) {
            printf("refused: %s\n", buf_str(&err));
            rc = ACCEPT_REFUSED;
        } else {
            rc = accept_record_baseline(&r);
        }
    } else {
        rc = candidate(&r, &ref, yes);
    }
    buf_free(&err);
    apikey_scrub(&r.key);
    buf_free(&r.api);
    return rc;
}
