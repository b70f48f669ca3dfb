#include "interrupt.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

static atomic_int g_token;
static atomic_int g_sig;
static atomic_int g_catching;
static atomic_int g_taken; /* nonzero once interrupt_take ran: the signal it took, or -1 */
static void (*_Atomic g_usr)(int);
/* The self-pipe: one byte written when the first caught signal comes, never
 * read, so its read end stays readable from then on, as the token stays set */
static int g_pipe[2] = {-1, -1};

static void on_signal(int sig)
{
    /* not handled, or a second Ctrl-C (an operator who will not wait for
     * the clean-up): what the signal does by default. A repeated SIGHUP or
     * SIGTERM is no such choice - an ssh hangup often comes twice - and
     * must not cut a clean-up (the console's guard handover) short. */
    if (!atomic_load(&g_catching) ||
        (sig == SIGINT && (atomic_load(&g_sig) == SIGINT || atomic_load(&g_taken)))) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    if (atomic_load(&g_taken))
        return; /* a clean-up that took the first signal runs to its end */
    if (!atomic_load(&g_sig)) {
        atomic_store(&g_sig, sig);
        if (g_pipe[1] >= 0) {
            ssize_t w = write(g_pipe[1], "!", 1); /* async-signal-safe; full: already readable */
            (void)w;
        }
    }
    atomic_store(&g_token, 1);
}

static void on_usr(int sig)
{
    void (*fn)(int) = atomic_load(&g_usr);
    if (fn)
        fn(sig);
}

void interrupt_install(void)
{
    if (g_pipe[0] < 0 && pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
        g_pipe[0] = g_pipe[1] = -1; /* no fd to wait on: the waits that take one poll the token */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_signal;
    /* no SA_RESTART: a blocking read or poll wakes to look at the flag */
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction old;
        /* a signal ignored by whoever started us stays ignored (nohup) */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(sigs[i], &sa, NULL);
    }
    sa.sa_handler = on_usr;
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGUSR2, &sa, NULL);
}

void interrupt_catch(void)
{
    atomic_store(&g_catching, 1);
}

int interrupt_take(void)
{
    int sig = atomic_load(&g_sig);
    /* clean-up mode from now on, whether a signal or a failure began it */
    atomic_store(&g_taken, sig ? sig : -1);
    char b[16];
    while (g_pipe[0] >= 0 && read(g_pipe[0], b, sizeof b) > 0)
        ;
    atomic_store(&g_sig, 0);
    atomic_store(&g_token, 0);
    return sig;
}

int interrupt_pending(void)
{
    return atomic_load(&g_sig);
}

atomic_int *interrupt_token(void)
{
    return &g_token;
}

int interrupt_fd(void)
{
    return g_pipe[0];
}

const char *interrupt_name(int sig)
{
    switch (sig) {
    case SIGINT:
        return "SIGINT (Ctrl-C)";
    case SIGTERM:
        return "SIGTERM";
    case SIGHUP:
        return "SIGHUP (the terminal went away)";
    default:
        return "a signal";
    }
}

void interrupt_on_usr(void (*fn)(int sig))
{
    atomic_store(&g_usr, fn);
}

bool cancel_fd_set(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return fd >= 0 && poll(&p, 1, 0) > 0;
}
