/* keys: every key of the console, once. Dispatch, the '?' overlay and the
 * README's keys section all read this table. */
#include <curses.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "config.h"
#include "draw_util.h"
#include "job.h"
#include "keys.h"
#include "pi.h"

static void confirm(struct ui *u, const char *question, void (*yes)(struct ui *u))
{
    u->prompt = PROMPT_CONFIRM;
    snprintf(u->question, sizeof u->question, "%s (y/N)", question);
    u->on_yes = yes;
}

static void run_job(struct ui *u, const char *name, char *const argv[])
{
    if (job_running(u->s, name)) {
        state_say(u->s, "%s is already running", name);
        return;
    }
    if (job_start(u->s, name, argv))
        monitor_poke(u->mon);
}

/* STATE_DIR/<kind>/<kind>-YYYYmmdd-HHMMSS.json: kept for the jobs tab. */
static void result_path(struct ui *u, const char *kind, char *out, size_t sz)
{
    char dir[700];
    snprintf(dir, sizeof dir, "%s/%s", u->state_dir, kind);
    mkdir(u->state_dir, 0700);
    mkdir(dir, 0700);
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    snprintf(out, sz, "%s/%s-%s.json", dir, kind, stamp);
}

static void do_start(struct ui *u)
{
    char *argv[] = {"launch", NULL};
    run_job(u, "launch", argv);
}

static void yes_stop(struct ui *u)
{
    char *argv[] = {"stop", NULL};
    run_job(u, "stop", argv);
}

static void do_stop(struct ui *u)
{
    confirm(u, "Stop the deployment: remove the ranks on every node?", yes_stop);
}

static void yes_restart(struct ui *u)
{
    char *argv[] = {"restart", NULL};
    run_job(u, "restart", argv);
}

static void do_restart(struct ui *u)
{
    confirm(u, "Restart the deployment (stop, then launch)?", yes_restart);
}

static void do_smoke(struct ui *u)
{
    char *argv[] = {"smoke", NULL};
    run_job(u, "smoke", argv);
}

static void do_bench(struct ui *u)
{
    char out[1024];
    result_path(u, "bench", out, sizeof out);
    char *argv[] = {"bench", "--out", out, "--label", "console", NULL};
    run_job(u, "bench", argv);
}

static void do_gates(struct ui *u)
{
    char out[1024];
    result_path(u, "gates", out, sizeof out);
    char *argv[] = {"gates", "--out", out, NULL};
    run_job(u, "gates", argv);
}

/* accept CANDIDATE_IMG: a maintenance window, so it asks first; its steps
 * and verdict are the job's lines. */
static void yes_accept(struct ui *u)
{
    char *argv[] = {"accept", "--yes", (char *)config_str(u->c, CFG_CANDIDATE_IMG), NULL};
    run_job(u, "accept", argv);
}

static void do_accept(struct ui *u)
{
    const char *img = config_str(u->c, CFG_CANDIDATE_IMG);
    if (!img[0] || !strstr(img, "@sha256:")) {
        state_say(u->s, "set CANDIDATE_IMG=NAME@sha256:DIGEST in the config file first (%s)",
                  img[0] ? "it is not pinned by digest" : "it is empty");
        return;
    }
    char q[160];
    const char *at = strstr(img, "@sha256:");
    snprintf(q, sizeof q, "Accept the candidate %.12s (CANDIDATE_IMG)? The API is down meanwhile",
             at + 8);
    confirm(u, q, yes_accept);
}

/* The checkpoint on every node, one after another, with a progress line
 * every second for the jobs pane. */
static void do_verify(struct ui *u)
{
    char *argv[] = {"verify", "--all", "--progress", "1", NULL};
    run_job(u, "verify", argv);
}

/* The checkpoint to every worker, then verified there. */
static void do_copy(struct ui *u)
{
    char *argv[] = {"copy-to-peer", "--progress", "1", NULL};
    run_job(u, "copy", argv);
}

/* The checkpoint from the hub into MODEL_DIR; a rerun resumes. Asks first:
 * it may be hundreds of GB. */
static void yes_download(struct ui *u)
{
    char *argv[] = {"download", "--progress", "1", NULL};
    run_job(u, "download", argv);
}

static void do_download(struct ui *u)
{
    char q[120];
    state_lock(u->s);
    bool resume = u->s->download.have && u->s->download.verified < u->s->download.files;
    state_unlock(u->s);
    snprintf(q, sizeof q, "%s the checkpoint from the hub into MODEL_DIR?",
             resume ? "Resume the download of" : "Download");
    confirm(u, q, yes_download);
}

/* The same, each file also sent to the workers as soon as it is verified
 * here (download --to-workers): the download and the copy overlap. */
static void yes_download_copy(struct ui *u)
{
    char *argv[] = {"download", "--to-workers", "--progress", "1", NULL};
    run_job(u, "download", argv);
}

static void do_download_copy(struct ui *u)
{
    confirm(u, "Download the checkpoint and copy each file to the workers as it is verified?",
            yes_download_copy);
}

/* What to run on a laptop to connect Pi, in an overlay (nothing is run). */
static void do_pi(struct ui *u)
{
    strv_free(&u->box);
    pi_connect_lines(u->c, NULL, &u->box);
    snprintf(u->box_title, sizeof u->box_title,
             "Connect Pi from a laptop (dsv41-top pi prints the same; any key closes)");
    u->dirty = true;
}

static void yes_cancel(struct ui *u)
{
    char name[24];
    unsigned id = job_newest_running(u->s, name, sizeof name);
    if (id)
        job_cancel(u->s, id);
}

static void do_cancel(struct ui *u)
{
    char name[24], q[80];
    if (!job_newest_running(u->s, name, sizeof name)) {
        state_say(u->s, "no job is running");
        return;
    }
    snprintf(q, sizeof q, "Cancel the running %s job?", name);
    confirm(u, q, yes_cancel);
}

static void yes_quit(struct ui *u)
{
    u->quit = true;
}

static void do_quit(struct ui *u)
{
    char name[24];
    /* its rollback must not be cut: quitting would end the job */
    if (job_running(u->s, "accept")) {
        state_say(u->s, "an acceptance is running: wait for its verdict, or c to cancel it (it "
                        "rolls back), then quit");
        return;
    }
    if (job_newest_running(u->s, name, sizeof name))
        confirm(u, "A job is running; quit and cancel it?", yes_quit);
    else
        u->quit = true;
}

static void do_help(struct ui *u)
{
    u->help = u->help ? 0 : 1;
}

static const int FOCUS_ORDER[] = {PANE_NODES,    PANE_SERVER, PANE_FABRIC, PANE_JOBS,
                                  PANE_DOWNLOAD, PANE_LOG0,   PANE_LOG1};

static void focus_step(struct ui *u, int dir)
{
    int n = (int)(sizeof FOCUS_ORDER / sizeof *FOCUS_ORDER), at = 0;
    for (int i = 0; i < n; i++)
        if (FOCUS_ORDER[i] == u->focus)
            at = i;
    for (int k = 1; k <= n; k++) { /* the next pane that is on screen */
        int p = FOCUS_ORDER[((at + dir * k) % n + n) % n];
        if (u->l.pane[p].h > 0) {
            u->focus = p;
            return;
        }
    }
}

static void do_focus_next(struct ui *u)
{
    focus_step(u, +1);
}

static void do_focus_prev(struct ui *u)
{
    focus_step(u, -1);
}

static void do_zoom(struct ui *u)
{
    u->lo.zoom = u->lo.zoom >= 0 ? -1 : u->focus;
}

static void set_tab(struct ui *u, enum tab t)
{
    u->lo.tab = t;
    u->lo.zoom = -1;
}

static void do_tab1(struct ui *u)
{
    set_tab(u, TAB_OVERVIEW);
}

static void do_tab2(struct ui *u)
{
    set_tab(u, TAB_LOGS);
    if (u->focus != PANE_LOG0 && u->focus != PANE_LOG1)
        u->focus = PANE_LOG0;
}

static void do_tab3(struct ui *u)
{
    set_tab(u, TAB_JOBS);
    u->focus = PANE_JOBS;
}

static void do_page(struct ui *u)
{
    int pages = u->l.ncols > 0 ? (u->s->nnodes + u->l.ncols - 1) / u->l.ncols : 1;
    u->node_page = pages > 0 ? (u->node_page + 1) % pages : 0;
}

static void do_theme(struct ui *u)
{
    if (!u->color) {
        state_say(u->s, "colour is off (NO_COLOR or --no-color): the mono theme stays");
        return;
    }
    if (u->nthemes == 0) {
        state_say(u->s, "no theme files found");
        return;
    }
    for (int tries = 0; tries < u->nthemes; tries++) {
        u->theme_idx = (u->theme_idx + 1) % u->nthemes;
        char err[300];
        struct theme t;
        if (theme_load(u->themes[u->theme_idx], &t, err, sizeof err) == 0) {
            u->theme = t;
            draw_apply_theme(u);
            state_say(u->s, "theme %s", t.name);
            return;
        }
        state_say(u->s, "%s", err);
    }
}

int keys_log_index(const struct ui *u)
{
    return u->focus == PANE_LOG1 && u->s->nranks > 1 ? 1 : 0;
}

static struct logview *cur_log(struct ui *u)
{
    return &u->lv[keys_log_index(u)];
}

static const struct logbuf *cur_buf(struct ui *u)
{
    return &u->s->ranks[u->log_rank[keys_log_index(u)]].log;
}

static void log_scroll(struct ui *u, long lines)
{
    struct logview *v = cur_log(u);
    state_lock(u->s);
    const struct logbuf *lb = cur_buf(u);
    uint64_t first = lb->first, last = lb->end ? lb->end - 1 : 0;
    state_unlock(u->s);
    uint64_t b = v->follow ? last : v->bottom;
    long long nb = (long long)b + lines;
    if (nb < (long long)first)
        nb = (long long)first;
    v->follow = nb >= (long long)last;
    v->bottom = v->follow ? last : (uint64_t)nb;
}

static int page_rows(struct ui *u)
{
    int p = keys_log_index(u) ? PANE_LOG1 : PANE_LOG0;
    int h = u->l.pane[p].h - 1;
    return h > 1 ? h : 1;
}

static void do_up(struct ui *u)
{
    log_scroll(u, -1);
}
static void do_down(struct ui *u)
{
    log_scroll(u, +1);
}
static void do_pgup(struct ui *u)
{
    log_scroll(u, -page_rows(u));
}
static void do_pgdn(struct ui *u)
{
    log_scroll(u, +page_rows(u));
}
static void do_home(struct ui *u)
{
    log_scroll(u, -(1L << 40));
}

static void do_follow(struct ui *u)
{
    struct logview *v = cur_log(u);
    if (v->follow) {
        log_scroll(u, 0);
        v->follow = false; /* pause where it is */
        state_lock(u->s);
        v->bottom = cur_buf(u)->end ? cur_buf(u)->end - 1 : 0;
        state_unlock(u->s);
    } else {
        v->follow = true;
    }
    state_say(u->s, "log of r%d: %s", u->log_rank[keys_log_index(u)],
              v->follow ? "following" : "paused");
}

/* With more ranks than log panes: the focused pane shows the next rank. */
static void do_rank(struct ui *u)
{
    int i = keys_log_index(u), n = u->s->nranks > 0 ? u->s->nranks : 1;
    u->log_rank[i] = (u->log_rank[i] + 1) % n;
    u->lv[i] = (struct logview){.follow = true, .hit = -1, .wrap = u->lv[i].wrap};
    state_say(u->s, "log pane %d shows r%d", i + 1, u->log_rank[i]);
}

static void do_wrap(struct ui *u)
{
    cur_log(u)->wrap = !cur_log(u)->wrap;
}

/* Moves the view to the next line from the current one that matches
 * (needle, or an error line when NULL) in direction dir. */
static void find(struct ui *u, const char *needle, int dir)
{
    struct logview *v = cur_log(u);
    state_lock(u->s);
    const struct logbuf *lb = cur_buf(u);
    uint64_t from = v->hit >= 0 ? (uint64_t)v->hit : v->follow ? lb->end : v->bottom + 1;
    int64_t at = logbuf_find(lb, from, dir, needle);
    state_unlock(u->s);
    if (at < 0) {
        state_say(u->s, "%s%s%s: no %s match", needle ? "'" : "", needle ? needle : "error line",
                  needle ? "'" : "", dir < 0 ? "older" : "newer");
        return;
    }
    v->hit = at;
    v->follow = false;
    int half = page_rows(u) / 2;
    v->bottom = (uint64_t)at + (uint64_t)half;
    state_lock(u->s);
    if (v->bottom >= cur_buf(u)->end)
        v->bottom = cur_buf(u)->end - 1;
    state_unlock(u->s);
}

static void do_search(struct ui *u)
{
    u->prompt = PROMPT_SEARCH;
    u->input[0] = '\0';
}

static void do_next(struct ui *u)
{
    if (!u->search[0])
        state_say(u->s, "no search yet: press / first");
    else
        find(u, u->search, u->search_dir);
}

static void do_prev(struct ui *u)
{
    if (u->search[0])
        find(u, u->search, -u->search_dir);
}

static void do_error(struct ui *u)
{
    find(u, NULL, -1);
}

static void do_error_newer(struct ui *u)
{
    find(u, NULL, +1);
}

static void do_filter(struct ui *u)
{
    u->prompt = PROMPT_FILTER;
    snprintf(u->input, sizeof u->input, "%s", cur_log(u)->filter);
}

/* Called by the console when a search prompt is entered. */
void keys_search_entered(struct ui *u);
void keys_search_entered(struct ui *u)
{
    snprintf(u->search, sizeof u->search, "%s", u->input);
    u->search_dir = -1;
    cur_log(u)->hit = -1;
    if (u->search[0])
        find(u, u->search, -1);
}

void keys_filter_entered(struct ui *u);
void keys_filter_entered(struct ui *u)
{
    snprintf(cur_log(u)->filter, sizeof cur_log(u)->filter, "%s", u->input);
    state_say(u->s, u->input[0] ? "filter: lines with '%s'" : "filter off%s", u->input);
}

#define CTRL(c) ((c)&0x1f)

static const struct key_entry KEYS[] = {
    {'s', "s", "start the deployment (launch)", do_start, true},
    {'S', "S", "stop the deployment (asks first)", do_stop, true},
    {'R', "R", "restart the deployment (asks first)", do_restart, true},
    {'t', "t", "smoke test: text, tool call, vision", do_smoke, true},
    {'b', "b", "bench: prefill and decode speed (result in the jobs tab)", do_bench, true},
    {'g', "g", "the six acceptance gates", do_gates, true},
    {'A', "A", "accept CANDIDATE_IMG: measured beside the accepted image, promoted or rolled back "
               "(asks first)",
     do_accept, true},
    {'v', "v", "verify the checkpoint on every node (sha256 manifest)", do_verify, true},
    {'p', "p", "copy the checkpoint to the workers, each file verified as it lands", do_copy, true},
    {'d', "d", "download the checkpoint from the hub into MODEL_DIR, or resume it (asks first)",
     do_download, true},
    {'D', "D", "download, each file also copied to the workers once verified (asks first)",
     do_download_copy, true},
    {'P', "P", "connect Pi from a laptop: the lines to run (dsv41-top pi)", do_pi, false},
    {'c', "c", "cancel the newest running job (asks first)", do_cancel, true},
    {'\t', "Tab", "focus the next pane", do_focus_next, false},
    {KEY_BTAB, "S-Tab", "focus the previous pane", do_focus_prev, false},
    {'z', "z", "zoom the focused pane / back", do_zoom, false},
    {'1', "1", "tab: overview", do_tab1, false},
    {'2', "2", "tab: logs", do_tab2, false},
    {'3', "3", "tab: jobs, bench results, messages", do_tab3, false},
    {']', "]", "next page of nodes (more nodes than columns)", do_page, false},
    {'T', "T", "next colour theme", do_theme, false},
    {'f', "f", "log: follow / pause", do_follow, false},
    {'/', "/", "log: search older lines (Enter; empty clears)", do_search, false},
    {'n', "n", "log: next match (older)", do_next, false},
    {'N', "N", "log: previous match (newer)", do_prev, false},
    {'e', "e", "log: jump to the previous (older) error line", do_error, false},
    {'E', "E", "log: jump to the next (newer) error line", do_error_newer, false},
    {'F', "F", "log: show only lines containing a text (empty: all)", do_filter, false},
    {'w', "w", "log: wrap long lines / cut them", do_wrap, false},
    {'r', "r", "log: show the next rank in the focused log pane (3+ nodes)", do_rank, false},
    {KEY_UP, "Up", "log: scroll one line up", do_up, false},
    {'k', "k", "log: scroll one line up", do_up, false},
    {KEY_DOWN, "Down", "log: scroll one line down", do_down, false},
    {'j', "j", "log: scroll one line down", do_down, false},
    {KEY_PPAGE, "PgUp", "log: scroll a page up", do_pgup, false},
    {KEY_NPAGE, "PgDn", "log: scroll a page down (to the end: follow)", do_pgdn, false},
    {KEY_HOME, "Home", "log: oldest line kept", do_home, false},
    {KEY_END, "End", "log: follow the newest line", do_follow, false},
    {'?', "?", "this help", do_help, false},
    {'q', "q", "quit (asks when a job runs)", do_quit, false},
    {CTRL('l'), "^L", "redraw the screen", NULL, false},
};

const struct key_entry *keys_table(int *n)
{
    *n = (int)(sizeof KEYS / sizeof *KEYS);
    return KEYS;
}

bool keys_dispatch(struct ui *u, int key)
{
    for (size_t i = 0; i < sizeof KEYS / sizeof *KEYS; i++) {
        if (KEYS[i].key != key)
            continue;
        if (KEYS[i].action && u->readonly) {
            state_say(u->s, "read-only console (--readonly): '%s' is not available", KEYS[i].label);
        } else if (KEYS[i].fn == do_follow && key == KEY_END) {
            cur_log(u)->follow = true;
        } else if (KEYS[i].fn) {
            KEYS[i].fn(u);
        } else {
            clearok(curscr, TRUE);
        }
        return true;
    }
    return false;
}

void keys_markdown(FILE *f)
{
    fprintf(f, "| key | what it does |\n|---|---|\n");
    for (size_t i = 0; i < sizeof KEYS / sizeof *KEYS; i++)
        fprintf(f, "| `%s` | %s%s |\n", strcmp(KEYS[i].label, "|") ? KEYS[i].label : "\\|",
                KEYS[i].help, KEYS[i].action ? " (not with `--readonly`)" : "");
}
