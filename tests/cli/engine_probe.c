/* engine-probe: the engine module's calls from the command line, for
 * tests/cli/test_engine.sh against a real podman API service. Exit 0 on
 * success, 3 for ENGINE_NOSUCH, 4 for ENGINE_NOT_RUNNING, 1 on an error
 * (the message on stderr), 2 on a usage error.
 *
 *   engine-probe ping SOCK
 *   engine-probe inspect SOCK NAME        one normalised line (below)
 *   engine-probe cli-line 'LINE'          a CLI inspect line, normalised the same way
 *   engine-probe logs SOCK NAME TAIL FOLLOW MAX TIMEOUT_MS   "STREAM text" lines
 *   engine-probe kill SOCK NAME SIGNAL
 *   engine-probe stop SOCK NAME T
 *   engine-probe socket RUNTIME [SETTING]
 *   engine-probe hang TIMEOUT_MS          a socket that accepts and never answers
 *
 * The normalised line: name|running|pid|started (epoch s)|exit|oom|image|managed,
 * so podman's CLI ("... +0000 UTC") and API (RFC 3339) times compare. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "mono.h"

/* the exit status for rc; err printed and freed */
static int code(int rc, struct buf *err)
{
    if (rc != 0 && err->len)
        fprintf(stderr, "%s\n", buf_str(err));
    buf_free(err);
    return rc == 0 ? 0 : rc == ENGINE_NOSUCH ? 3 : rc == ENGINE_NOT_RUNNING ? 4 : 1;
}

static void print_container(const struct container_info *c)
{
    time_t t;
    char started[32] = "n/a";
    if (inspect_parse_started(c->started, &t) == 0)
        snprintf(started, sizeof started, "%lld", (long long)t);
    printf("%s|%d|%ld|%s|%d|%d|%s|%d\n", c->name, c->running, c->pid, started, c->exit_code,
           c->oom_killed, c->image, c->managed);
}

struct lines {
    int n, max;
};

static int on_line(void *ctx, int stream, const char *line, size_t len)
{
    struct lines *l = ctx;
    printf("%d %.*s\n", stream, (int)len, line);
    fflush(stdout);
    return l->max && ++l->n >= l->max;
}

static void *hold(void *arg)
{
    int lfd = *(int *)arg;
    for (;;) {
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0 && errno != EINTR)
            return NULL;
        /* kept open, never read, never answered */
    }
}

static int hang(long timeout_ms)
{
    char dir[] = "/tmp/engine-probe-hang.XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s/hang.sock", dir);
    int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) < 0 || listen(lfd, 8) < 0) {
        perror("hang listener");
        return 1;
    }
    pthread_t th;
    pthread_create(&th, NULL, hold, &lfd);
    pthread_detach(th);
    struct buf err = BUF_INIT;
    struct container_info c;
    long long t0 = mono_ms();
    int rc = engine_inspect(a.sun_path, "dsv41-r0", timeout_ms, &c, &err);
    long long took = mono_ms() - t0;
    printf("inspect rc=%d after %lld ms: %s\n", rc, took, buf_str(&err));
    buf_reset(&err);
    struct engine_logs_opt o = {.follow = true, .tail = 0, .timeout_ms = timeout_ms, .cancel_fd = -1};
    t0 = mono_ms();
    int rc2 = engine_logs(a.sun_path, "dsv41-r0", &o, on_line, &(struct lines){0, 0}, &err);
    took = mono_ms() - t0;
    printf("logs rc=%d after %lld ms: %s\n", rc2, took, buf_str(&err));
    unlink(a.sun_path);
    rmdir(dir);
    buf_free(&err);
    return rc == -1 && rc2 == -1 ? 0 : 1;
}

struct later {
    int fd;
    long ms;
};

static void *write_later(void *arg)
{
    struct later *l = arg;
    struct timespec ts = {l->ms / 1000, (l->ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    ssize_t w = write(l->fd, "x", 1);
    (void)w;
    return NULL;
}

/* engine_stop_cancel with its cancel fd written after ms: prints how long
 * the call took, exits 5 when it says cancelled */
static int stop_cancel(const char *sock, const char *name, int t, long ms)
{
    int p[2];
    if (pipe(p) < 0)
        return 1;
    struct later l = {p[1], ms};
    pthread_t th;
    pthread_create(&th, NULL, write_later, &l);
    struct buf err = BUF_INIT;
    long long t0 = mono_ms();
    int rc = engine_stop_cancel(sock, name, t, p[0], &err);
    printf("stop rc=%d after %lld ms: %s\n", rc, mono_ms() - t0, buf_str(&err));
    pthread_join(th, NULL);
    close(p[0]);
    close(p[1]);
    buf_free(&err);
    return rc == ENGINE_CANCELLED ? 5 : rc == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    struct buf err = BUF_INIT;
    struct container_info c;
    const char *cmd = argc > 1 ? argv[1] : "";
    if (strcmp(cmd, "ping") == 0 && argc == 3)
        return code(engine_ping(argv[2], 5000, &err), &err);
    if (strcmp(cmd, "inspect") == 0 && argc == 4) {
        int rc = engine_inspect(argv[2], argv[3], 5000, &c, &err);
        if (rc == 0)
            print_container(&c);
        return code(rc, &err);
    }
    if (strcmp(cmd, "cli-line") == 0 && argc == 3) {
        if (inspect_parse_line(argv[2], &c) < 0)
            return 1;
        print_container(&c);
        return 0;
    }
    if (strcmp(cmd, "logs") == 0 && argc == 8) {
        struct engine_logs_opt o = {.tail = atoi(argv[4]), .follow = atoi(argv[5]) != 0,
                                    .timeout_ms = atol(argv[7]), .cancel_fd = -1};
        struct lines l = {0, atoi(argv[6])};
        return code(engine_logs(argv[2], argv[3], &o, on_line, &l, &err), &err);
    }
    if (strcmp(cmd, "kill") == 0 && argc == 5)
        return code(engine_kill(argv[2], argv[3], argv[4], 5000, &err), &err);
    if (strcmp(cmd, "stop") == 0 && argc == 5)
        return code(engine_stop(argv[2], argv[3], atoi(argv[4]), &err), &err);
    if (strcmp(cmd, "stop-cancel") == 0 && argc == 6)
        return stop_cancel(argv[2], argv[3], atoi(argv[4]), atol(argv[5]));
    if (strcmp(cmd, "remove") == 0 && argc == 4)
        return code(engine_remove(argv[2], argv[3], 5000, &err), &err);
    if (strcmp(cmd, "socket") == 0 && (argc == 3 || argc == 4)) {
        char path[256];
        int rc = engine_socket(argv[2], argc == 4 ? argv[3] : NULL, path, sizeof path, &err);
        if (rc == 0)
            printf("%s\n", path);
        return code(rc, &err);
    }
    if (strcmp(cmd, "hang") == 0 && argc == 3)
        return hang(atol(argv[2]));
    fprintf(stderr, "usage: engine-probe ping|inspect|cli-line|logs|kill|stop|stop-cancel|remove|socket|hang ...\n");
    return 2;
}
