/* console: `dsv41-top` without a command. Sets up the terminal, starts the
 * collector (monitor), and runs the UI loop: poll() on the keyboard and
 * state's wake pipe, redraw when something changed (at most 20 times a
 * second for state; at once for a key). */
#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "interrupt.h"
#include "cluster.h"
#include "draw.h"
#include "draw_util.h"
#include "help.h"
#include "textbox.h"
#include "job.h"
#include "keys.h"
#include "tui.h"
#include "usage.h"

const struct usage_doc console_doc = {
    NULL, "[--config FILE] [--set KEY=VALUE]... [CONSOLE OPTIONS]",
    "the console: every node live, keys that run the deployment",
    "The console: every node's memory, GPU and RDMA links, the server, both ranks' logs and the "
    "jobs, live; keys start, stop, smoke-test and bench (press ?).",
    NULL,
    (const struct usage_opt[]){
        {"--interval", "SEC", "sampling interval (0.2 to 3600, default 1)"},
        {"--theme", "NAME", "colour theme (dark, light, high-contrast, mono, or your own)"},
        {"--no-color, --no-colour", NULL, "no colour (also when NO_COLOR is set)"},
        {"--ascii", NULL, "ASCII only (also when the locale is not UTF-8)"},
        {"--blocks", NULL, "history graphs in block characters (fonts without braille)"},
        {"--mouse", NULL, "click a pane to focus it, wheel to scroll a log"},
        {"--readonly, --read-only", NULL, "watch only: the keys that change the deployment are off"},
        {"--title", "TEXT", "shown in the header (which cluster this is)"},
        {NULL, NULL, NULL}}};
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int parse_args(struct ui *u, int argc, char **argv, const char **theme)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--ascii") == 0)
            u->ascii = true;
        else if (strcmp(a, "--blocks") == 0)
            u->blocks = true;
        else if (strcmp(a, "--no-color") == 0 || strcmp(a, "--no-colour") == 0)
            u->color = false;
        else if (strcmp(a, "--readonly") == 0 || strcmp(a, "--read-only") == 0)
            u->readonly = true;
        else if (strcmp(a, "--mouse") == 0)
            u->mouse = true;
        else if (strcmp(a, "--title") == 0 && i + 1 < argc)
            snprintf(u->title, sizeof u->title, "%s", argv[++i]);
        else if (strcmp(a, "--theme") == 0 && i + 1 < argc)
            *theme = argv[++i];
        else if (strcmp(a, "--interval") == 0 && i + 1 < argc && atof(argv[i + 1]) >= 0.2 &&
                 atof(argv[i + 1]) <= 3600)
            u->interval_ms = (int)(atof(argv[++i]) * 1000);
        else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage_print(stdout, &console_doc);
            return 1;
        } else {
            fprintf(stderr, "dsv41-top: unknown console option '%s' (--interval needs 0.2..3600 s)\n\n",
                    a);
            usage_print(stderr, &console_doc);
            return 2;
        }
    }
    return 0;
}

void keys_search_entered(struct ui *u);
void keys_filter_entered(struct ui *u);

/* A key while a prompt is open: text entry or y/N. */
static void prompt_key(struct ui *u, int ch)
{
    if (u->prompt == PROMPT_CONFIRM) {
        void (*yes)(struct ui *) = u->on_yes;
        u->prompt = PROMPT_NONE;
        if ((ch == 'y' || ch == 'Y') && yes)
            yes(u);
        else
            state_say(u->s, "cancelled");
        return;
    }
    size_t n = strlen(u->input);
    if (ch == 27) { /* Esc */
        u->prompt = PROMPT_NONE;
    } else if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
        enum prompt p = u->prompt;
        u->prompt = PROMPT_NONE;
        if (p == PROMPT_SEARCH)
            keys_search_entered(u);
        else
            keys_filter_entered(u);
    } else if ((ch == KEY_BACKSPACE || ch == 127 || ch == 8) && n) {
        u->input[n - 1] = '\0';
    } else if (ch >= 0x20 && ch < 0x7f && n + 1 < sizeof u->input) {
        u->input[n] = (char)ch;
        u->input[n + 1] = '\0';
    }
}

/* Lines one wheel notch scrolls a log, as terminals usually do. */
#define WHEEL_LINES 3

static void mouse_event(struct ui *u)
{
    MEVENT ev;
    if (getmouse(&ev) != OK)
        return;
    for (int p = 0; p < PANE_COUNT; p++) {
        struct rect r = u->l.pane[p];
        if (!r.h || ev.y < r.y || ev.y >= r.y + r.h || ev.x < r.x || ev.x >= r.x + r.w)
            continue;
        u->focus = p;
        if (p != PANE_LOG0 && p != PANE_LOG1)
            return; /* the wheel scrolls logs only */
        int key = ev.bstate & BUTTON4_PRESSED ? KEY_UP : 0;
#ifdef BUTTON5_PRESSED
        if (ev.bstate & BUTTON5_PRESSED)
            key = KEY_DOWN;
#endif
        for (int i = 0; key && i < WHEEL_LINES; i++)
            keys_dispatch(u, key);
        return;
    }
}

static void handle_key(struct ui *u, int ch)
{
    if (ch == KEY_RESIZE)
        return;
    if (ch == KEY_MOUSE) {
        mouse_event(u);
        return;
    }
    if (u->prompt != PROMPT_NONE) {
        prompt_key(u, ch);
        return;
    }
    if (u->box.n) { /* a text overlay: any key closes it */
        strv_free(&u->box);
        return;
    }
    if (u->help) { /* Space pages through the keys; any other key closes */
        int n;
        keys_table(&n);
        u->help = ch == ' ' && u->help < help_pages(u, n) ? u->help + 1 : 0;
        return;
    }
    if (u->l.too_small && ch != 'q')
        return;
    if (!keys_dispatch(u, ch) && ch != ERR)
        state_say(u->s, "key not bound: press ? for the keys");
}

static void setup_terminal(struct ui *u)
{
    /* Esc alone must not wait a second for a sequence that never comes */
    set_escdelay(25);
    initscr();
    /* out of curses mode and back before anything is drawn: ncurses 6.4
     * flushes its output on every cursor move until the screen has once
     * been resumed (_nc_mvcur flushes while _endwin is still ewInitial;
     * doupdate after endwin sets ewRunning), which wrote each frame a
     * write() per screen line - 78 for the overview, each a wakeup of the
     * terminal's side of the pty (and a packet over ssh -t). After it a
     * frame goes out in one write() from ncurses' frame-sized buffer. */
    endwin();
    refresh();
    /* no look at the keyboard in the middle of a refresh (a poll() every
     * five lines, seven a frame): the loop reads every key before it draws,
     * so there is no typed-ahead key for ncurses to cut an update short for */
    typeahead(-1);
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    curs_set(0);
    if (u->color && has_colors()) {
        start_color();
        use_default_colors();
        draw_apply_theme(u);
    } else {
        u->color = false;
    }
    if (u->mouse)
        mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON4_PRESSED
#ifdef BUTTON5_PRESSED
                      | BUTTON5_PRESSED
#endif
                  , NULL);
}

/* An explicit --theme that cannot be used stops the console with the file
 * and line; a missing default falls back to the built-in mono theme. */
static int load_theme(struct ui *u, const char *name, bool explicit)
{
    u->nthemes = theme_list(u->themes, TUI_MAX_THEMES);
    char err[400];
    if (!u->color) {
        theme_mono(&u->theme);
        return 0;
    }
    if (theme_load(name, &u->theme, err, sizeof err) < 0) {
        if (explicit) {
            fprintf(stderr, "dsv41-top: %s\n", err);
            return -1;
        }
        state_say(u->s, "%s; using the built-in mono theme", err);
        theme_mono(&u->theme);
    }
    for (int i = 0; i < u->nthemes; i++)
        if (strcmp(u->themes[i], u->theme.name) == 0)
            u->theme_idx = i;
    return 0;
}

static void loop(struct ui *u)
{
    uint64_t drawn = (uint64_t)-1;
    double last_draw = 0;
    int last_sec = -1;
    while (!u->quit && !interrupt_pending()) {
        double now = now_s();
        uint64_t ver = __atomic_load_n(&u->s->version, __ATOMIC_ACQUIRE);
        int sec = (int)time(NULL);
        bool due = u->dirty || sec != last_sec || (ver != drawn && now - last_draw >= 0.05);
        if (due) {
            drawn = ver;
            last_sec = sec;
            u->dirty = false;
            last_draw = now;
            draw_screen(u);
            if (u->help) {
                int n;
                const struct key_entry *k = keys_table(&n);
                help_draw(u, k, n);
            }
            if (u->box.n)
                textbox_draw(u);
            refresh();
        }
        /* wake for: a key, state changes (not sooner than the 20 Hz cap), the clock */
        int to = 1000 - (int)((now - (long)now) * 1000);
        if (ver != drawn) {
            int cap = (int)((0.05 - (now - last_draw)) * 1000) + 1;
            to = cap < to ? cap : to;
        }
        struct pollfd pf[2] = {{0, POLLIN, 0}, {u->s->wake[0], POLLIN, 0}};
        int n = poll(pf, ver != drawn ? 1 : 2, to > 0 ? to : 0);
        if (n < 0 && errno != EINTR)
            break;
        if (n > 0 && pf[0].revents & (POLLHUP | POLLERR))
            break; /* the terminal went away */
        if (pf[1].revents & POLLIN)
            state_drain_wake(u->s);
        int ch;
        while ((ch = getch()) != ERR) {
            handle_key(u, ch);
            u->dirty = true;
        }
    }
}

int tui_main(const struct config *c, int argc, char **argv, char **base_args, int nbase)
{
    struct ui *u = calloc(1, sizeof *u);
    static struct state st;
    if (!u)
        return 2;
    u->c = c;
    u->s = &st;
    u->color = !getenv("NO_COLOR") || !*getenv("NO_COLOR");
    u->interval_ms = 1000;
    u->lo.zoom = -1;
    u->focus = PANE_LOG0;
    u->lv[0] = u->lv[1] = (struct logview){.follow = true, .hit = -1};
    u->log_rank[0] = 0;
    u->log_rank[1] = 1;
    u->search_dir = -1;
    const char *theme = NULL;
    int rc = parse_args(u, argc, argv, &theme);
    if (rc) {
        free(u);
        return rc == 1 ? 0 : 2;
    }
    setlocale(LC_ALL, "");
    if (strcmp(nl_langinfo(CODESET), "UTF-8") != 0)
        u->ascii = true;
    u->glyphs = u->ascii ? GLYPH_ASCII : u->blocks ? GLYPH_BLOCK : GLYPH_BRAILLE;
    if (!isatty(0) || !isatty(1)) {
        fprintf(stderr, "dsv41-top: the console needs a terminal (for scripts: dsv41-top status)\n");
        free(u);
        return 2;
    }
    snprintf(u->state_dir, sizeof u->state_dir, "%s", config_str(c, CFG_STATE_DIR));
    struct cluster *cl = calloc(1, sizeof *cl);
    if (!cl || state_init(&st) < 0 || cluster_open_for("console", c, cl) < 0) {
        free(cl);
        free(u);
        return 2;
    }
    if (load_theme(u, theme ? theme : "dark", theme != NULL) < 0) {
        cluster_close(cl);
        free(cl);
        state_free(&st);
        free(u);
        return 2;
    }
    job_set_base_args(base_args, nbase);
    /* anything the engine prints while the screen is up goes to a file */
    char logpath[700];
    snprintf(logpath, sizeof logpath, "%s/console.log", u->state_dir);
    int saved_err = dup(2);
    int lf = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    int log_errno = errno;
    bool log_ok = lf >= 0;
    if (lf < 0) /* never onto the screen: a line written there breaks the picture */
        lf = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (lf >= 0) {
        dup2(lf, 2);
        close(lf);
    }
    interrupt_catch(); /* SIGTERM, SIGHUP (ssh gone), SIGINT: a clean quit */
    signal(SIGPIPE, SIG_IGN);

    setup_terminal(u);
    if (!log_ok)
        state_say(&st, "cannot write %s (%s): the engine's own messages are dropped", logpath,
                  strerror(log_errno));
    u->mon = monitor_start(c, cl, &st, u->interval_ms);
    monitor_take_usr(u->mon); /* `guard --resolve` / `guard --stop` address this process */
    if (!u->mon)
        state_say(&st, "cannot start sampling (out of memory or threads)");
    loop(u);
    endwin();
    if (saved_err >= 0) {
        dup2(saved_err, 2);
        close(saved_err);
    }
    int left = job_shutdown(&st);
    monitor_take_usr(NULL);
    monitor_stop(u->mon);
    cluster_close(cl);
    free(cl);
    if (left) /* an acceptance still runs (its report keeps what happens) */
        fprintf(stderr, "dsv41-top: the acceptance goes on without the console: dsv41-top "
                        "accept --list shows its verdict\n");
    else /* a job's thread left running reads into the state until we exit */
        state_free(&st);
    strv_free(&u->box);
    free(u);
    return 0;
}
