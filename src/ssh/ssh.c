#include "ssh.h"

#include <errno.h>
#include <libssh2.h>
#include <libssh2_sftp.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/evp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "knownhosts.h"
#include "mono.h"
#include "sshjump.h"

#include "ssh_conn.h"

int ssh_global_init(void)
{
    return libssh2_init(0) == 0 ? 0 : -1;
}

const char *ssh_last_error(LIBSSH2_SESSION *s)
{
    char *msg = NULL;
    libssh2_session_last_error(s, &msg, NULL, 0);
    return msg && *msg ? msg : "unknown error";
}

static int tcp_connect(const char *name, const struct ssh_target *t, int timeout_ms,
                       struct buf *err)
{
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_socktype = SOCK_STREAM;
    char port[16];
    snprintf(port, sizeof port, "%d", t->port);
    int gai = getaddrinfo(t->host, port, &hints, &res);
    if (gai) {
        buf_printf(err, "%s: cannot resolve '%s': %s (check WORKER and ~/.ssh/config HostName)",
                   name, t->host, gai_strerror(gai));
        return -1;
    }
    int fd = -1, last = 0;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                    ai->ai_protocol);
        if (fd < 0) {
            last = errno;
            continue;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        if (errno == EINPROGRESS) {
            struct pollfd p = {fd, POLLOUT, 0};
            int pr = poll(&p, 1, timeout_ms);
            int soerr = 0;
            socklen_t sl = sizeof soerr;
            if (pr == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr == 0)
                break;
            last = pr == 0 ? ETIMEDOUT : soerr ? soerr : errno;
        } else {
            last = errno;
        }
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        buf_printf(err, "%s: cannot connect to %s port %d: %s (is the node up and sshd running? "
                   "try `ssh -p %d %s@%s`)",
                   name, t->host, t->port, strerror(last), t->port, t->user, t->host);
        return -1;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static int knownhost_type(int hostkey_type, const char **label)
{
    switch (hostkey_type) {
    case LIBSSH2_HOSTKEY_TYPE_RSA:
        *label = "RSA";
        return LIBSSH2_KNOWNHOST_KEY_SSHRSA;
    case LIBSSH2_HOSTKEY_TYPE_DSS:
        *label = "DSA";
        return LIBSSH2_KNOWNHOST_KEY_SSHDSS;
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_256:
        *label = "ECDSA";
        return LIBSSH2_KNOWNHOST_KEY_ECDSA_256;
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_384:
        *label = "ECDSA";
        return LIBSSH2_KNOWNHOST_KEY_ECDSA_384;
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_521:
        *label = "ECDSA";
        return LIBSSH2_KNOWNHOST_KEY_ECDSA_521;
    case LIBSSH2_HOSTKEY_TYPE_ED25519:
        *label = "ED25519";
        return LIBSSH2_KNOWNHOST_KEY_ED25519;
    }
    *label = "unknown";
    return LIBSSH2_KNOWNHOST_KEY_UNKNOWN;
}

/* OpenSSH's fingerprint form: "SHA256:" + unpadded base64. */
static void fingerprint(LIBSSH2_SESSION *s, char *out, size_t outsz)
{
    const unsigned char *h = (const unsigned char *)libssh2_hostkey_hash(
        s, LIBSSH2_HOSTKEY_HASH_SHA256);
    if (!h) {
        snprintf(out, outsz, "(no fingerprint)");
        return;
    }
    unsigned char b64[64];
    int n = EVP_EncodeBlock(b64, h, 32);
    while (n > 0 && b64[n - 1] == '=')
        n--;
    snprintf(out, outsz, "SHA256:%.*s", n, b64);
}

static int check_host_key(struct ssh_conn *c, const struct ssh_target *t, const char *known_hosts,
                          struct buf *err)
{
    size_t len;
    int type;
    const char *key = libssh2_session_hostkey(c->s, &len, &type);
    if (!key) {
        buf_printf(err, "%s: %s sent no host key", c->name, t->host);
        return -1;
    }
    const char *label;
    int kt = knownhost_type(type, &label);
    char fp[80];
    fingerprint(c->s, fp, sizeof fp);
    LIBSSH2_KNOWNHOSTS *kh = libssh2_knownhost_init(c->s);
    if (!kh) {
        buf_printf(err, "%s: out of memory", c->name);
        return -1;
    }
    int rc = -1;
    /* SSH_KNOWN_HOSTS, and the ssh config's UserKnownHostsFile for this host
     * too: a key known in either is known, as OpenSSH reads several files */
    const char *files[2] = {known_hosts, t->known_hosts};
    for (int i = 0; i < 2; i++) {
        if (!files[i][0] || (i && strcmp(files[1], files[0]) == 0))
            continue;
        if (libssh2_knownhost_readfile(kh, files[i], LIBSSH2_KNOWNHOST_FILE_OPENSSH) < 0 &&
            access(files[i], F_OK) == 0) {
            buf_printf(err, "%s: cannot read known_hosts file %s: %s", c->name, files[i],
                       ssh_last_error(c->s));
            goto out;
        }
    }
    struct libssh2_knownhost *found = NULL;
    int check = libssh2_knownhost_checkp(kh, t->host, t->port, key, len,
                                         LIBSSH2_KNOWNHOST_TYPE_PLAIN |
                                             LIBSSH2_KNOWNHOST_KEYENC_RAW | kt,
                                         &found);
    char hostspec[300];
    if (t->port == 22)
        snprintf(hostspec, sizeof hostspec, "%s", t->host);
    else
        snprintf(hostspec, sizeof hostspec, "[%s]:%d", t->host, t->port);
    switch (check) {
    case LIBSSH2_KNOWNHOST_CHECK_MATCH:
        rc = 0;
        break;
    case LIBSSH2_KNOWNHOST_CHECK_MISMATCH:
        buf_printf(err,
                   "%s: HOST KEY CHANGED for %s: it now offers %s %s, which does not match %s. "
                   "This may be an attack or a reinstalled node. If the node was reinstalled, "
                   "remove the old key with `ssh-keygen -R '%s' -f %s` and accept the new one "
                   "with `ssh -p %d %s@%s` (compare the fingerprint first)",
                   c->name, hostspec, label, fp, known_hosts, hostspec, known_hosts, t->port,
                   t->user, t->host);
        break;
    case LIBSSH2_KNOWNHOST_CHECK_NOTFOUND:
        buf_printf(err,
                   "%s: unknown host key for %s (%s %s), not in %s. Check the fingerprint on "
                   "the node (`ssh-keygen -lf /etc/ssh/ssh_host_%s_key.pub`), then accept it "
                   "with `ssh -p %d %s@%s` once, or `ssh-keyscan -p %d %s >> %s`",
                   c->name, hostspec, label, fp, known_hosts,
                   type == LIBSSH2_HOSTKEY_TYPE_ED25519 ? "ed25519"
                   : type == LIBSSH2_HOSTKEY_TYPE_RSA   ? "rsa"
                                                        : "ecdsa",
                   t->port, t->user, t->host, t->port, t->host, known_hosts);
        break;
    default:
        buf_printf(err, "%s: cannot check the host key of %s: %s", c->name, hostspec,
                   ssh_last_error(c->s));
    }
out:
    libssh2_knownhost_free(kh);
    return rc;
}

/* OpenSSH's rule: ask the server first for the key types known_hosts holds
 * for this host, then the rest in libssh2's order. */
static void prefer_known_types(struct ssh_conn *c, const struct ssh_target *t,
                               const char *known_hosts)
{
    const char **algs = NULL;
    int n = libssh2_session_supported_algs(c->s, LIBSSH2_METHOD_HOSTKEY, &algs);
    if (n <= 0)
        return;
    struct buf all = BUF_INIT, pref = BUF_INIT;
    for (int i = 0; i < n; i++)
        buf_printf(&all, "%s%s", i ? "," : "", algs[i]);
    libssh2_free(c->s, (void *)algs);
    struct buf text = BUF_INIT;
    if (buf_read_file(&text, known_hosts, 16u << 20) < 0)
        buf_reset(&text);
    if (t->known_hosts[0] && strcmp(t->known_hosts, known_hosts) != 0 &&
        (buf_puts(&text, "\n") < 0 || buf_read_file(&text, t->known_hosts, 16u << 20) < 0)) {
        /* a missing second file holds nothing */
    }
    knownhosts_pref_text(buf_str(&text), t->host, t->port, buf_str(&all), &pref);
    buf_free(&text);
    if (pref.len)
        libssh2_session_method_pref(c->s, LIBSSH2_METHOD_HOSTKEY, buf_str(&pref));
    buf_free(&all);
    buf_free(&pref);
}

static int authenticate(struct ssh_conn *c, const struct ssh_target *t, struct buf *err)
{
    const char *tried_agent = "";
    /* IdentitiesOnly: the named files, not whatever the agent holds */
    if (getenv("SSH_AUTH_SOCK") && *getenv("SSH_AUTH_SOCK") && !t->identities_only) {
        LIBSSH2_AGENT *agent = libssh2_agent_init(c->s);
        tried_agent = ", the ssh agent (no key accepted)";
        if (agent && libssh2_agent_connect(agent) == 0 && libssh2_agent_list_identities(agent) == 0) {
            struct libssh2_agent_publickey *id = NULL, *prev = NULL;
            while (libssh2_agent_get_identity(agent, &id, prev) == 0) {
                if (libssh2_agent_userauth(agent, t->user, id) == 0) {
                    libssh2_agent_disconnect(agent);
                    libssh2_agent_free(agent);
                    return 0;
                }
                prev = id;
            }
        }
        if (agent) {
            libssh2_agent_disconnect(agent);
            libssh2_agent_free(agent);
        }
    }
    int tried = 0;
    for (int i = 0; i < t->nids; i++) {
        if (access(t->ids[i], R_OK) != 0)
            continue;
        tried++;
        /* The public half is derived from the private key; no passphrase:
         * keys with one belong in the agent. */
        if (libssh2_userauth_publickey_fromfile(c->s, t->user, NULL, t->ids[i], NULL) == 0)
            return 0;
        if (libssh2_session_last_errno(c->s) == LIBSSH2_ERROR_TIMEOUT)
            break;
    }
    buf_printf(err,
               "%s: %s@%s refused our keys (tried %d identity file%s%s). Add your public key to "
               "~%s/.ssh/authorized_keys on the node (`ssh-copy-id -p %d %s@%s`), load a "
               "passphrase-protected key into ssh-agent, or name it with IdentityFile in "
               "~/.ssh/config",
               c->name, t->user, t->host, tried, tried == 1 ? "" : "s", tried_agent, t->user,
               t->port, t->user, t->host);
    return -1;
}

/* libssh2 reads the socket through this: any byte from the node, whatever
 * it answers (a channel's data, a window adjust, a ping's reply), is a sign
 * of life. */
static LIBSSH2_RECV_FUNC(counting_recv)
{
    struct ssh_conn *c = *abstract;
    ssize_t n = recv(socket, buffer, length, flags);
    if (n > 0) {
        c->last_rx = mono_ms();
        c->rx_bytes += (unsigned long long)n;
    }
    return n < 0 ? -errno : n;
}

struct ssh_conn *ssh_connect(const char *name, const struct ssh_target *t, const char *known_hosts,
                             int timeout_ms, struct buf *err)
{
    struct ssh_conn *c = calloc(1, sizeof *c);
    if (!c) {
        buf_printf(err, "%s: out of memory", name);
        return NULL;
    }
    snprintf(c->name, sizeof c->name, "%s", name);
    snprintf(c->host, sizeof c->host, "%s", t->host);
    if (t->jump[0]) {
        c->jump = sshjump_open(name, t, known_hosts, timeout_ms, err);
        c->fd = c->jump ? sshjump_fd(c->jump) : -1;
    } else {
        c->fd = tcp_connect(name, t, t->connect_timeout_s ? t->connect_timeout_s * 1000
                                                           : timeout_ms, err);
    }
    if (c->fd < 0) {
        free(c);
        return NULL;
    }
    /* Handshake and auth run in libssh2's blocking mode under a session
     * timeout (it waits on the O_NONBLOCK socket itself); commands then
     * switch the session to non-blocking. */
    c->s = libssh2_session_init_ex(NULL, NULL, NULL, c);
    if (c->s)
        libssh2_session_callback_set(c->s, LIBSSH2_CALLBACK_RECV, (void *)counting_recv);
    if (!c->s) {
        buf_printf(err, "%s: cannot create an ssh session", name);
        goto fail;
    }
    libssh2_session_set_timeout(c->s, timeout_ms);
    prefer_known_types(c, t, known_hosts);
    if (libssh2_session_handshake(c->s, c->fd) != 0) {
        buf_printf(err, "%s: ssh handshake with %s:%d failed: %s (is it an ssh server?)", name,
                   t->host, t->port, ssh_last_error(c->s));
        goto fail;
    }
    if (check_host_key(c, t, known_hosts, err) < 0)
        goto fail;
    if (authenticate(c, t, err) < 0)
        goto fail;
    /* No reply wanted: libssh2 1.10 queues the replies to its keepalives
     * (SSH_MSG_REQUEST_FAILURE) on the session forever, one per interval.
     * These only keep NAT and firewalls open; ssh_ping asks for answers. */
    libssh2_keepalive_config(c->s, 0, t->alive_interval_s ? (unsigned)t->alive_interval_s : 10);
    libssh2_session_set_blocking(c->s, 0);
    c->last_rx = mono_ms();
    return c;
fail:
    ssh_close(c);
    return NULL;
}

/* Waits for the socket in the direction libssh2 is blocked on. */
static int wait_socket(struct ssh_conn *c, long long deadline)
{
    long long left = deadline - mono_ms();
    if (left <= 0)
        return -1;
    int dir = libssh2_session_block_directions(c->s);
    struct pollfd p = {c->fd, 0, 0};
    if (dir & LIBSSH2_SESSION_BLOCK_INBOUND)
        p.events |= POLLIN;
    if (dir & LIBSSH2_SESSION_BLOCK_OUTBOUND)
        p.events |= POLLOUT;
    if (!p.events)
        p.events = POLLIN;
    int r = poll(&p, 1, left > 1000 ? 1000 : (int)left);
    return r < 0 && errno != EINTR ? -1 : 0;
}

void ssh_bury(struct ssh_conn *c, struct grave g)
{
    if (c->ngrave < GRAVE_MAX)
        c->grave[c->ngrave++] = g;
    /* else: left to the session's end, which frees its channels */
}

bool ssh_again(struct ssh_conn *c)
{
    return libssh2_session_last_errno(c->s) == LIBSSH2_ERROR_EAGAIN;
}

/* One try at each buried thing; what is done leaves the list. */
static void reap(struct ssh_conn *c)
{
    for (int i = 0; i < c->ngrave;) {
        struct grave *g = &c->grave[i];
        if (g->h && libssh2_sftp_close_handle(g->h) != LIBSSH2_ERROR_EAGAIN)
            g->h = NULL;
        if (!g->h && g->sftp && libssh2_sftp_shutdown(g->sftp) != LIBSSH2_ERROR_EAGAIN)
            g->sftp = NULL;
        if (!g->h && !g->sftp && g->ch && libssh2_channel_free(g->ch) != LIBSSH2_ERROR_EAGAIN)
            g->ch = NULL;
        if (!g->h && !g->sftp && !g->ch)
            c->grave[i] = c->grave[--c->ngrave];
        else
            i++;
    }
}

int ssh_keepalive(struct ssh_conn *c)
{
    int next;
    reap(c);
    return libssh2_keepalive_send(c->s, &next) == 0 ||
                   libssh2_session_last_errno(c->s) == LIBSSH2_ERROR_EAGAIN
               ? 0
               : -1;
}

enum chan_state { CH_OPEN, CH_EXEC, CH_RUN, CH_CLOSE, CH_WAIT, CH_DONE };

struct ssh_chan {
    enum chan_state st;
    LIBSSH2_CHANNEL *ch;
    char *cmd;
    struct buf in; /* stdin not yet written */
    size_t in_off;
    bool eof_sent;
    int exit_status;
    long long wait_since; /* CH_CLOSE, CH_WAIT: when the EOF came (mono_ms) */
    bool hold; /* stdout: stop reading at max instead of dropping */
    bool full; /* the last step stopped reading at max: more is waiting */
};

struct ssh_chan *ssh_chan_new(const char *cmd)
{
    struct ssh_chan *ch = calloc(1, sizeof *ch);
    if (!ch)
        return NULL;
    ch->cmd = strdup(cmd);
    if (!ch->cmd) {
        free(ch);
        return NULL;
    }
    ch->exit_status = -1;
    return ch;
}

int ssh_chan_write(struct ssh_chan *ch, const char *data, size_t len)
{
    return buf_append(&ch->in, data, len);
}

void ssh_chan_hold(struct ssh_chan *ch)
{
    ch->hold = true;
}

bool ssh_chan_full(const struct ssh_chan *ch)
{
    return ch && ch->full;
}

bool ssh_chan_opening(const struct ssh_chan *ch)
{
    return ch->st == CH_OPEN;
}

int ssh_chan_exit_status(const struct ssh_chan *ch)
{
    return ch->exit_status;
}

void ssh_chan_free(struct ssh_conn *c, struct ssh_chan *ch)
{
    if (!ch)
        return;
    if (ch->ch && libssh2_channel_free(ch->ch) == LIBSSH2_ERROR_EAGAIN && c)
        ssh_bury(c, (struct grave){.ch = ch->ch});
    buf_free(&ch->in);
    free(ch->cmd);
    free(ch);
}

int ssh_fd(const struct ssh_conn *c)
{
    return c->fd;
}

short ssh_poll_events(struct ssh_conn *c)
{
    int dir = libssh2_session_block_directions(c->s);
    short ev = POLLIN; /* always: the peer may send on any channel */
    if (dir & LIBSSH2_SESSION_BLOCK_OUTBOUND)
        ev |= POLLOUT;
    return ev;
}

int ssh_ping_step(struct ssh_conn *c)
{
    LIBSSH2_CHANNEL *ch = libssh2_channel_open_session(c->s);
    if (ch) {
        if (libssh2_channel_free(ch) == LIBSSH2_ERROR_EAGAIN)
            ssh_bury(c, (struct grave){.ch = ch});
        return 1;
    }
    int e = libssh2_session_last_errno(c->s);
    if (e == LIBSSH2_ERROR_EAGAIN)
        return 0;
    /* a refusal (MaxSessions reached, say) is an answer too */
    return e == LIBSSH2_ERROR_CHANNEL_FAILURE ? 1 : -1;
}

long long ssh_last_rx(const struct ssh_conn *c)
{
    return c->last_rx;
}

unsigned long long ssh_rx_bytes(const struct ssh_conn *c)
{
    return c->rx_bytes;
}

/* 1 when something was read, 0 when nothing, <0 on a channel error. With
 * *full (a held stream) it stops at max and leaves the rest in the channel:
 * its window closes and the remote command waits, nothing is lost. */
int ssh_read_stream(LIBSSH2_CHANNEL *ch, int stream, struct buf *b, size_t max, bool *full)
{
    char tmp[16384];
    ssize_t n = 0;
    int got = 0;
    if (full)
        *full = false;
    for (;;) {
        size_t want = sizeof tmp;
        if (full) {
            if (b->len >= max) {
                *full = true;
                break;
            }
            if (max - b->len < want)
                want = max - b->len;
        }
        if ((n = libssh2_channel_read_ex(ch, stream, tmp, want)) <= 0)
            break;
        size_t room = b->len < max ? max - b->len : 0;
        if (buf_append(b, tmp, (size_t)n < room ? (size_t)n : room) < 0)
            return -1;
        got = 1;
    }
    if (n < 0 && n != LIBSSH2_ERROR_EAGAIN)
        return (int)n;
    return got;
}

/* The remote command's status as a local shell reports it: 128+N when the
 * signal N ended it (the exit status is then 0, as if it had succeeded). */
static int exit_code(LIBSSH2_SESSION *s, LIBSSH2_CHANNEL *ch)
{
    char *sig = NULL;
    size_t len = 0;
    if (libssh2_channel_get_exit_signal(ch, &sig, &len, NULL, NULL, NULL, NULL) == 0 && sig) {
        int num = 0;
        for (int i = 1; i < NSIG && !num; i++) {
            const char *abbrev = sigabbrev_np(i);
            if (abbrev && strlen(abbrev) == len && memcmp(abbrev, sig, len) == 0)
                num = i;
        }
        libssh2_free(s, sig);
        return 128 + (num ? num : 127); /* an unknown name still reads as a signal */
    }
    return libssh2_channel_get_exit_status(ch);
}

/* A close waiting on the node (CH_CLOSE, CH_WAIT): 0 to be stepped again,
 * 1 when the command has had its grace and is done without a status. */
static int close_waited(struct ssh_chan *ch)
{
    if (mono_ms() - ch->wait_since < SSH_CLOSE_GRACE_MS)
        return 0;
    ch->st = CH_DONE;
    return 1;
}

int ssh_chan_step(struct ssh_conn *c, struct ssh_chan *ch, bool may_open, struct buf *out,
                  struct buf *err, size_t max, struct buf *why)
{
    int rc;
    for (;;) {
        switch (ch->st) {
        case CH_OPEN:
            if (!may_open)
                return 0;
            ch->ch = libssh2_channel_open_session(c->s);
            if (!ch->ch) {
                if (libssh2_session_last_errno(c->s) == LIBSSH2_ERROR_EAGAIN)
                    return 0;
                goto fail;
            }
            ch->st = CH_EXEC;
            break;
        case CH_EXEC:
            rc = libssh2_channel_exec(ch->ch, ch->cmd);
            if (rc == LIBSSH2_ERROR_EAGAIN)
                return 0;
            if (rc)
                goto fail;
            ch->st = CH_RUN;
            break;
        case CH_RUN: {
            while (ch->in_off < ch->in.len) {
                ssize_t w = libssh2_channel_write(ch->ch, ch->in.data + ch->in_off,
                                                  ch->in.len - ch->in_off);
                if (w == LIBSSH2_ERROR_EAGAIN)
                    break;
                if (w < 0)
                    goto fail;
                ch->in_off += (size_t)w;
            }
            if (ch->in_off == ch->in.len && ch->in_off) {
                buf_reset(&ch->in);
                ch->in_off = 0;
            }
            bool *full = ch->hold ? &ch->full : NULL;
            int a = ssh_read_stream(ch->ch, 0, out, max, full);
            int b = ssh_read_stream(ch->ch, SSH_EXTENDED_DATA_STDERR, err, max, NULL);
            if (a < 0 || b < 0)
                goto fail;
            if (ch->full || !libssh2_channel_eof(ch->ch))
                return 0;
            /* The EOF may have been processed while reading the other
             * stream: drain what arrived before it. */
            if (ssh_read_stream(ch->ch, 0, out, max, full) < 0 ||
                ssh_read_stream(ch->ch, SSH_EXTENDED_DATA_STDERR, err, max, NULL) < 0)
                goto fail;
            if (ch->full)
                return 0;
            ch->st = CH_CLOSE;
            ch->wait_since = mono_ms();
            break;
        }
        case CH_CLOSE:
            rc = libssh2_channel_close(ch->ch);
            if (rc == LIBSSH2_ERROR_EAGAIN)
                return close_waited(ch);
            if (rc)
                goto fail;
            ch->st = CH_WAIT;
            break;
        case CH_WAIT:
            /* libssh2's close (1.10 to 1.11.1, channel.c
             * _libssh2_channel_close) stops waiting for the node's CLOSE
             * at the first packet it reads for any channel of the session:
             * with another channel sending, it returned before the node's
             * exit-status had come, which then read as 0 (RFC 4254 §6.10
             * sends it before the CLOSE; OpenSSH may send the EOF first).
             * The status is read once the CLOSE is in. OpenSSH sends it
             * when the command ends: one that closed its output and lives
             * on is given SSH_CLOSE_GRACE_MS, then its status is "none" (-1),
             * never a success, and a stream without a deadline ends. */
            rc = libssh2_channel_wait_closed(ch->ch);
            if (rc == LIBSSH2_ERROR_EAGAIN)
                return close_waited(ch);
            if (rc)
                goto fail;
            ch->exit_status = exit_code(c->s, ch->ch);
            ch->st = CH_DONE;
            return 1;
        case CH_DONE:
            return 1;
        }
    }
fail:
    buf_printf(why, "%s: ssh session to %s failed: %s", c->name, c->host, ssh_last_error(c->s));
    return -1;
}

void ssh_close(struct ssh_conn *c)
{
    if (!c)
        return;
    if (c->s) {
        /* Best effort: a dead peer must not stall the close. */
        libssh2_session_set_blocking(c->s, 0);
        libssh2_session_disconnect(c->s, "bye");
        /* A session with channels still open (buried ones that were not
         * done closing) answers EAGAIN in non-blocking mode and frees
         * nothing (valgrind caught the lost session): up to a second for
         * the node to answer, then the socket is shut, which turns every
         * wait into an error, and the rest is freed without the node. */
        long long deadline = mono_ms() + 1000;
        int rc;
        while ((rc = libssh2_session_free(c->s)) == LIBSSH2_ERROR_EAGAIN && mono_ms() < deadline)
            wait_socket(c, deadline);
        if (rc == LIBSSH2_ERROR_EAGAIN) {
            shutdown(c->fd, SHUT_RDWR);
            for (int i = 0; i < 100 && libssh2_session_free(c->s) == LIBSSH2_ERROR_EAGAIN; i++)
                ;
        }
    }
    if (c->jump)
        sshjump_close(c->jump); /* its socket is c->fd */
    else if (c->fd >= 0)
        close(c->fd);
    free(c);
}

LIBSSH2_CHANNEL *ssh_direct_tcpip(struct ssh_conn *c, const char *host, int port, int timeout_ms,
                                  struct buf *why)
{
    long long deadline = mono_ms() + timeout_ms;
    for (;;) {
        LIBSSH2_CHANNEL *ch = libssh2_channel_direct_tcpip_ex(c->s, host, port, "127.0.0.1", 22);
        if (ch)
            return ch;
        if (libssh2_session_last_errno(c->s) != LIBSSH2_ERROR_EAGAIN) {
            buf_puts(why, ssh_last_error(c->s));
            return NULL;
        }
        if (wait_socket(c, deadline) < 0) {
            buf_puts(why, "timed out");
            return NULL;
        }
    }
}

void ssh_result_free(struct ssh_result *r)
{
    buf_free(&r->out);
    buf_free(&r->err);
}

/* direct-streamlocal@openssh.com (OpenSSH PROTOCOL §2.4): the channel's
 * open message is the socket's path, a reserved string and a reserved
 * uint32. libssh2 1.11 has libssh2_channel_direct_streamlocal_ex; 1.10 does
 * not, so the message is formed here and the channel opened by type. */
