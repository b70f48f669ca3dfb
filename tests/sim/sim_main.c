/* dsv41-sim main: rank rendezvous over TCP at master-addr:master-port,
 * vLLM's startup log lines with configurable timing, then the API (rank 0) or
 * a wait on the group (headless ranks). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sim.h"
#include "sim_metrics.h"
#include "sim_hub.h"

static volatile int g_stop;
static volatile int g_peer_lost;

void sim_log(const char *fmt, ...)
{
    char ts[32];
    time_t now = time(NULL);
    strftime(ts, sizeof ts, "%m-%d %H:%M:%S", localtime(&now));
    va_list ap;
    va_start(ap, fmt);
    flockfile(stdout);
    printf("INFO %s [dsv41-sim] ", ts);
    vprintf(fmt, ap);
    putchar('\n');
    fflush(stdout);
    funlockfile(stdout);
    va_end(ap);
}

/* The first SIGTERM (or Ctrl-C) drains, as vLLM does: rank 0 takes no new
 * request and ends when those in flight have; a second one ends the rank at
 * once (it may be PID 1 of its container, where the default action of a
 * signal would be to ignore it). */
static void on_signal(int sig)
{
    if (g_stop)
        _exit(128 + sig);
    g_stop = 1;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !g_stop)
        ;
}

static int read_line(int fd, char *out, size_t sz, int timeout_ms)
{
    size_t n = 0;
    while (n + 1 < sz) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, timeout_ms) <= 0)
            return -1;
        char c;
        if (read(fd, &c, 1) != 1)
            return -1;
        if (c == '\n')
            break;
        out[n++] = c;
    }
    out[n] = '\0';
    return 0;
}

static int peers[64];
static int npeers;

/* Rank 0: wait until every other rank has joined. */
static int rendezvous_master(const struct sim_opts *o)
{
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)o->master_port);
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    if (bind(ls, (struct sockaddr *)&a, sizeof a) < 0 || listen(ls, 16) < 0) {
        fprintf(stderr, "RuntimeError: The server socket has failed to listen on port %d: %s\n",
                o->master_port, strerror(errno));
        return -1;
    }
    sim_log("waiting for %d more rank(s) on port %d", o->nnodes - 1, o->master_port);
    bool joined[64] = {false};
    int waited = 0;
    while (npeers < o->nnodes - 1 && !g_stop) {
        struct pollfd p = {ls, POLLIN, 0};
        int r = poll(&p, 1, 200);
        waited += 200;
        if (waited > o->join_timeout_ms) {
            fprintf(stderr, "RuntimeError: timed out waiting for %d rank(s) to join\n",
                    o->nnodes - 1 - npeers);
            return -1;
        }
        if (r <= 0)
            continue;
        struct sockaddr_in from;
        socklen_t fl = sizeof from;
        int fd = accept4(ls, (struct sockaddr *)&from, &fl, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        char line[128];
        int rank, nn;
        if (read_line(fd, line, sizeof line, 5000) < 0 ||
            sscanf(line, "JOIN %d %d", &rank, &nn) != 2) {
            close(fd);
            continue;
        }
        if (nn != o->nnodes || rank <= 0 || rank >= o->nnodes || joined[rank]) {
            dprintf(fd, "ERR rank 0 expects --nnodes %d and ranks 1..%d once\n", o->nnodes,
                    o->nnodes - 1);
            fprintf(stderr,
                    "RuntimeError: rank %d joined with --nnodes %d but rank 0 has --nnodes %d\n",
                    rank, nn, o->nnodes);
            close(fd);
            return -1;
        }
        dprintf(fd, "OK\n");
        joined[rank] = true;
        peers[npeers++] = fd;
        sim_log("rank %d joined from %s", rank, inet_ntoa(from.sin_addr));
    }
    close(ls);
    return g_stop ? -1 : 0;
}

static int rendezvous_join(const struct sim_opts *o)
{
    char port[16];
    snprintf(port, sizeof port, "%d", o->master_port);
    int waited = 0;
    while (!g_stop) {
        struct addrinfo hints = {0}, *res = NULL;
        hints.ai_socktype = SOCK_STREAM;
        if (getaddrinfo(o->master_addr, port, &hints, &res) == 0) {
            int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (connect(fd, res->ai_addr, res->ai_addrlen) == 0) {
                freeaddrinfo(res);
                dprintf(fd, "JOIN %d %d\n", o->node_rank, o->nnodes);
                char line[256];
                if (read_line(fd, line, sizeof line, 10000) < 0 || strcmp(line, "OK") != 0) {
                    fprintf(stderr, "RuntimeError: rank 0 refused rank %d: %s\n", o->node_rank,
                            line);
                    close(fd);
                    return -1;
                }
                sim_log("rank %d joined the group at %s:%d", o->node_rank, o->master_addr,
                        o->master_port);
                return fd;
            }
            close(fd);
            freeaddrinfo(res);
        }
        sleep_ms(200);
        waited += 200;
        if (waited > o->join_timeout_ms) {
            fprintf(stderr, "RuntimeError: cannot reach rank 0 at %s:%d\n", o->master_addr,
                    o->master_port);
            return -1;
        }
    }
    return -1;
}

static long long epoch_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Fault injection: DSV41_SIM_DIE_AT=K makes the rank die after its K-th
 * startup line (DSV41_SIM_DIE_RANK picks the rank, default all), with a
 * Python-like traceback unless DSV41_SIM_DIE_QUIET=1. */
static void maybe_die(const struct sim_opts *o, int line)
{
    const char *at = getenv("DSV41_SIM_DIE_AT");
    const char *rank = getenv("DSV41_SIM_DIE_RANK");
    if (!at || atoi(at) != line || (rank && *rank && atoi(rank) != o->node_rank))
        return;
    const char *quiet = getenv("DSV41_SIM_DIE_QUIET");
    if (!quiet || strcmp(quiet, "1") != 0) {
        fprintf(stderr, "Traceback (most recent call last):\n  File \"vllm/worker.py\", line 1\n"
                        "RuntimeError: simulated failure of rank %d\n",
                o->node_rank);
        exit(1);
    }
    exit(3);
}

/* DSV41_SIM_NCCL_DIR: the rank maps DIR/r<rank>/libnccl.so.2 as a real one
 * loads its NCCL, so /proc/PID/maps names it (the nodes-alike check hashes
 * what each rank has mapped). The mapping lasts as long as the rank. */
static void map_nccl(const struct sim_opts *o)
{
    const char *dir = getenv("DSV41_SIM_NCCL_DIR");
    if (!dir || !*dir)
        return;
    char path[512];
    snprintf(path, sizeof path, "%s/r%d/libnccl.so.2", dir, o->node_rank);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || st.st_size == 0 ||
        mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED)
        sim_log("WARNING: cannot map %s: %s", path, strerror(errno));
    if (fd >= 0)
        close(fd);
}

/* vLLM's startup phases, in order, spread over boot_ms. */
static void boot_lines(const struct sim_opts *o)
{
    /* what a rank says it holds: small by default (a test host has ~24 GiB
     * and the memory budget believes it); tests set a Spark's figure */
    const char *w = getenv("DSV41_SIM_WEIGHTS_GIB");
    char loaded[96];
    snprintf(loaded, sizeof loaded, "Model loading took %.2f GiB memory and 42.80 seconds",
             w && *w ? atof(w) : 0.61);
    const char *lines[] = {
        "Loading safetensors checkpoint shards: 100% Completed | 6/6 [00:03<00:00]",
        "Loading weights took 3.21 seconds",
        loaded,
        "torch.compile takes 12.51 s in total",
        "Available KV cache memory: 2.51 GiB",
        "GPU KV cache size: 2,023,717 tokens",
        "Capturing CUDA graphs (decode, FULL): 100% 10/10",
        "Graph capturing finished in 4 secs, took 0.31 GiB",
        "init engine (profile, create kv cache, warmup model) took 61.02 seconds",
    };
    int n = (int)(sizeof lines / sizeof lines[0]);
    for (int i = 0; i < n && !g_stop; i++) {
        sleep_ms(o->boot_ms / (n + 1));
        sim_log("%s", lines[i]);
        maybe_die(o, i + 1);
        /* an image that never becomes ready (a test image bakes it in): it
         * hangs in torch.compile, as a broken build does, until stopped */
        const char *never = getenv("DSV41_SIM_NEVER_READY");
        if (i == 2 && never && *never == '1')
            while (!g_stop)
                sleep_ms(200);
    }
}

/* Rank 0 serves only once every peer has loaded (each sends one byte when
 * its startup lines are done), as vLLM's API comes up only after the
 * workers' collective init: a worker that dies while loading leaves rank 0
 * stuck, never ready, until it is stopped. */
static int wait_peers_loaded(void)
{
    for (int i = 0; i < npeers && !g_stop; i++) {
        for (;;) {
            struct pollfd p = {peers[i], POLLIN, 0};
            if (g_stop)
                return -1;
            if (poll(&p, 1, 200) <= 0)
                continue;
            char c;
            if (read(peers[i], &c, 1) == 1)
                break;
            printf("NCCL WARN peer rank closed the connection during startup\n");
            fflush(stdout);
            while (!g_stop)
                sleep_ms(200);
            return -1;
        }
    }
    return g_stop ? -1 : 0;
}

static void *watch_peers(void *arg)
{
    (void)arg;
    while (!g_stop) {
        struct pollfd p[64];
        for (int i = 0; i < npeers; i++)
            p[i] = (struct pollfd){peers[i], POLLIN, 0};
        if (poll(p, (nfds_t)npeers, 500) > 0) {
            for (int i = 0; i < npeers; i++)
                if (p[i].revents) {
                    char c;
                    if (read(peers[i], &c, 1) <= 0) {
                        /* What a dead peer does to vLLM: rank 0 keeps
                         * answering /health but produces no tokens. */
                        printf("NCCL WARN peer rank closed the connection\n");
                        fflush(stdout);
                        g_peer_lost = 1;
                        sim_engine_freeze();
                        return NULL;
                    }
                }
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc > 1 && strcmp(argv[1], "hub") == 0)
        return hub_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "receiver") == 0)
        return receiver_main(argc - 1, argv + 1);
    struct sim_opts o;
    if (sim_parse_args(argc, argv, &o) < 0)
        return 2;
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    sim_log("vLLM API server version 0.11.1 (dsv41-sim, rank %d of %d, t=%lld)", o.node_rank,
            o.nnodes, epoch_ms());
    maybe_die(&o, 0);
    /* memory held as a rank holds its weights (0 by default): the guard's
     * bench times its return after a kill (tests/bench/guard.sh) */
    const char *hold = getenv("DSV41_SIM_HOLD_MIB");
    if (hold && atol(hold) > 0) {
        static char *volatile held; /* volatile: the touching is not optimised away */
        size_t n = (size_t)atol(hold) << 20;
        held = malloc(n);
        if (held)
            memset(held, 1, n);
        sim_log("holding %s MiB", held ? hold : "0");
    }
    sim_log("non-default args: model=%s served_model_name=%s tensor_parallel_size=%d nnodes=%d",
            o.model_path, o.served_name, o.tp, o.nnodes);
    map_nccl(&o);
    if (o.node_rank > 0) {
        int fd = rendezvous_join(&o);
        if (fd < 0)
            return 1;
        boot_lines(&o);
        if (write(fd, "L", 1) != 1)
            return 1; /* rank 0 is gone */
        sim_log("headless rank %d ready", o.node_rank);
        sim_chatter_start(&g_stop);
        char c;
        while (!g_stop) {
            struct pollfd p = {fd, POLLIN, 0};
            if (poll(&p, 1, 500) > 0 && read(fd, &c, 1) <= 0) {
                fprintf(stderr, "RuntimeError: NCCL communicator was aborted: rank 0 is gone\n");
                return 1;
            }
        }
        return 0;
    }
    if (o.nnodes > 1 && rendezvous_master(&o) < 0)
        return 1;
    boot_lines(&o);
    if (wait_peers_loaded() < 0)
        return 1;
    sim_chatter_start(&g_stop);
    pthread_t th;
    bool watching = npeers > 0 && pthread_create(&th, NULL, watch_peers, NULL) == 0;
    int rc = sim_http_serve(&o, &g_stop, &g_peer_lost);
    g_stop = 1;
    if (watching)
        pthread_join(th, NULL);
    for (int i = 0; i < npeers; i++)
        close(peers[i]);
    return rc != 0 ? 1 : 0; /* a bind failure, or an engine that died */
}
