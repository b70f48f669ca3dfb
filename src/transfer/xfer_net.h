/* xfer_net: the socket calls both ends of the copy's streams make: an IP
 * address (no name lookup: the helper is static) as a sockaddr, and whole
 * reads and sends that survive EINTR and never raise SIGPIPE. */
#ifndef DSV41_XFER_NET_H
#define DSV41_XFER_NET_H

#include <stddef.h>
#include <sys/socket.h>

/* -1 when ip is neither IPv4 nor IPv6. */
int xfer_net_addr(const char *ip, int port, struct sockaddr_storage *ss, socklen_t *len);
/* The port of a bound or connected IPv4/IPv6 address. */
int xfer_net_port(const struct sockaddr_storage *ss);
/* 0 when all n bytes came (or went); -1 at an error or the end. */
int xfer_net_read(int fd, void *p, size_t n);
int xfer_net_send(int fd, const void *p, size_t n, int flags);

#endif
