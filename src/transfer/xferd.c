/* dsv41-xfer: the static helper that receives a copy on a worker (which has
 * nothing of ours installed): `dsv41-top copy-to-peer` pushes it, the plan
 * and a one-time token over sftp, runs it over ssh and reads its report
 * (xfer_wire.h) while its streams send the files (xfer_recv.h). It ends
 * when the copy does or the ssh channel closes. Not meant to be run by hand,
 * but it says what it does when it is. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dirs.h"
#include "xfer_recv.h"

static atomic_int g_cancel;

static void on_signal(int sig)
{
    (void)sig;
    atomic_store(&g_cancel, 1);
}


/* "ssh": the server address of this session (SSH_CONNECTION's third field). */
static int ssh_address(char *out, size_t sz)
{
    const char *c = getenv("SSH_CONNECTION");
    char a[64], b[16], s[64];
    if (!c || sscanf(c, "%63s %15s %63s", a, b, s) != 3)
        return -1;
    snprintf(out, sz, "%s", s);
    return 0;
}

static int read_token(const char *path, char *tok)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, tok, XFER_TOKEN_HEX);
    close(fd);
    unlink(path); /* one time: nobody reads it after us */
    tok[XFER_TOKEN_HEX] = '\0';
    if (n != XFER_TOKEN_HEX || strspn(tok, "0123456789abcdef") != XFER_TOKEN_HEX)
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    const char *dir = NULL, *plan_path = NULL, *token_path = NULL, *listen = NULL;
    int jobs = 4;
    bool dry_run = false;
    if (usage_wants_help(&xferd_doc, argc, argv)) {
        usage_print(stdout, &xferd_doc);
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--dir") == 0 && v)
            dir = argv[++i];
        else if (strcmp(argv[i], "--plan") == 0 && v)
            plan_path = argv[++i];
        else if (strcmp(argv[i], "--token-file") == 0 && v)
            token_path = argv[++i];
        else if (strcmp(argv[i], "--listen") == 0 && v)
            listen = argv[++i];
        else if (strcmp(argv[i], "--dry-run") == 0)
            dry_run = true;
        else if (strcmp(argv[i], "--jobs") == 0 && v)
            jobs = atoi(argv[++i]);
        else {
            dir = NULL;
            break;
        }
    }
    if (!dir || !plan_path || !token_path || !listen || jobs < 1 || jobs > 64) {
        usage_print(stderr, &xferd_doc);
        return 2;
    }
    char tok[XFER_TOKEN_HEX + 1], addr[64];
    if (read_token(token_path, tok) < 0) {
        printf("cannot read the token from %s\n", token_path);
        return 2;
    }
    bool have_ssh = ssh_address(addr, sizeof addr) == 0;
    if (strcmp(listen, "ssh") == 0) {
        if (!have_ssh) {
            printf("no SSH_CONNECTION: give --listen an address\n");
            return 2;
        }
        listen = addr;
    }
    if (dirs_make(dir, 0755) < 0) {
        printf("cannot make %s: %s\n", dir, strerror(errno));
        return 2;
    }
    struct buf text = BUF_INIT, err = BUF_INIT;
    struct xfer_plan plan;
    if (buf_read_file(&text, plan_path, 64u << 20) < 0) {
        printf("cannot read the plan %s\n", plan_path);
        return 2;
    }
    if (xfer_plan_parse(buf_str(&text), &plan, &err) < 0) {
        printf("%s\n", buf_str(&err));
        return 2;
    }
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN); /* a closed channel: the next report fails, and we stop */
    struct xfer_recv_opts o = {.dir = dir,
                               .plan = &plan,
                               .token = tok,
                               .listen = listen,
                               .fallback = have_ssh ? addr : NULL,
                               .out = stdout,
                               .in_fd = 0,
                               .cancel = &g_cancel,
                               .jobs = jobs,
                               .dry_run = dry_run};
    int rc = xfer_recv_run(&o);
    xfer_plan_free(&plan);
    buf_free(&text);
    buf_free(&err);
    return rc;
}
