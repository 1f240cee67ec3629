/* SPDX-License-Identifier: MIT */
/*
 * TCP sockets: listen, accept, connect (IPv4 and IPv6 via getaddrinfo), and
 * what their queues hold (SIOCINQ, SIOCOUTQ, SIOCATMARK).
 */
#ifndef DND_NET_H
#define DND_NET_H

#include <sys/socket.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * -w: window > 0 sets the buffer of the data's direction on fd, SO_SNDBUF
 * where the data leaves (sender) and SO_RCVBUF where it arrives, which
 * also ends the kernel's autotuning of that buffer. Set before listen() or
 * connect(), so the window scale is negotiated with it; a listener's
 * connections inherit it. Which end listens says nothing of the direction
 * (dnd serve accepts pushes and pulls): the caller says.
 */
void net_window(int fd, int window, bool sender);

/*
 * --mptcp: from then on net_listen() and net_connect() in this process
 * make IPPROTO_MPTCP sockets (on), or plain TCP ones (off, the default).
 * net_mptcp_check() (net_mptcp.h) says first whether the kernel can.
 */
void net_use_mptcp(bool on);

/*
 * Listens on bind_addr (NULL: every address, IPv6 and IPv4) at port, with
 * net_window(window, sender) on the listener. Returns the fd, or -errno
 * with a message in err.
 */
int net_listen(const char *bind_addr, uint16_t port, int window, bool sender,
	       char *err, size_t len);

/* Accepts one connection (blocking; EINTR ends the wait). Returns the fd
 * with the peer's "addr port" in peer, or -errno. */
int net_accept(int lfd, char *peer, size_t len);

/*
 * Connects to host:port trying each address getaddrinfo returns; while the
 * answer is "connection refused", retries for up to retry_s seconds (so a
 * sender may start just before its receiver), saying so on stderr at the
 * first refusal; retry_s 0 fails at once, as iperf3. net_window(window,
 * sender) before connect(); each attempt waits at most wait_s (0: the
 * kernel's own limit). Returns the fd, or -errno with a message in err.
 */
int net_connect(const char *host, uint16_t port, int window, bool sender,
		double retry_s, double wait_s, char *peer, size_t peerlen,
		char *err, size_t len);

/*
 * Leaves delayed-ACK "pingpong" mode: a receiver that answered the sender
 * (dnd's accept message) would otherwise delay its ACKs up to 40 ms, and
 * a sender with one send in flight (io_uring SEND_ZC) waits for each.
 */
void net_quickack(int fd);

/* Sets TCP_NODELAY and, when secs > 0, SO_RCVTIMEO/SO_SNDTIMEO. */
int net_tune(int fd, double secs);

/* --rate on one stream: SO_MAX_PACING_RATE in bytes per second, which also
 * turns on TCP's own pacing (no fq qdisc needed); 0 leaves it. 0 or -errno. */
int net_pace(int fd, uint64_t bytes_per_s);

/* -C on one stream: TCP_CONGESTION name; NULL leaves the kernel's default.
 * 0 or -errno. */
int net_congestion(int fd, const char *name);

/* The congestion control fd runs, into buf ("" when unknown). */
void net_congestion_get(int fd, char *buf, size_t len);

/* Whether -C name can run, tried on a socket of our own (as root that may
 * load its module, tcp_NAME, so the list can grow). 0, or -errno with the
 * cause and the names to use instead in why. */
int net_congestion_check(const char *name, char *why, size_t len);

/* Sends or receives exactly n bytes (blocking). 0, -errno, or -ENODATA when
 * the peer closed first. */
/* Waits until fd is ready for ev (POLLIN, POLLOUT) by deadline
 * (stats_now() seconds): 0, -ETIMEDOUT, -EINTR once io_stop_signal is
 * set, or -errno. A signal that does not stop the run is waited out. */
int net_wait_by(int fd, short ev, double deadline);
int net_send_all(int fd, const void *buf, size_t n);
int net_recv_all(int fd, void *buf, size_t n);

/* The buffer sizes the kernel actually gave (doubled from what was asked). */
void net_bufs(int fd, int *sndbuf, int *rcvbuf);

/* TCP_INFO; returns 0 or -errno. */
int net_tcp_info(int fd, struct tcp_info *ti);

/*
 * Bytes waiting to be read on fd (SIOCINQ; the same request is FIONREAD,
 * so a pipe answers too). Returns the count (>= 0) or -errno. Never blocks.
 */
int net_inq(int fd);

/*
 * Bytes in socket fd's send queue that the peer has not acknowledged yet
 * (SIOCOUTQ): 0 once all that was sent has arrived. Returns the count or
 * -errno.
 */
int net_outq(int fd);
/*
 * Ends our side of fd (FIN after what is queued) and waits, at most secs,
 * until the peer's TCP has acknowledged all of it: a close() with unread
 * bytes in our receive queue then resets the connection, and a reset
 * drops what the peer had not yet been sent. 0, or -ETIMEDOUT, or -errno.
 */
int net_deliver(int fd, double secs);

/*
 * 1 when the next byte to read on fd is TCP urgent data's mark
 * (SIOCATMARK): splice() stops there. 0 when it is not, or -errno.
 */
int net_at_mark(int fd);

/* Non-blocking helpers for the relay and its load generator. */

/* Sets O_NONBLOCK on fd. Returns 0 or -errno. */
int net_nonblock(int fd);

/*
 * net_listen() made non-blocking with a backlog of `backlog` (listen() may
 * be called again to resize the queue; net_listen's 16 would drop the SYNs
 * of a thousand flows connecting at once). Returns the fd or -errno.
 */
int net_listen_nb(const char *bind_addr, uint16_t port, int backlog,
		  char *err, size_t len);

/*
 * Resolves host:port to its first address (numeric or by name). Returns 0
 * with *ss and *sl set, or -errno with a message in err.
 */
int net_addr(const char *host, uint16_t port, struct sockaddr_storage *ss,
	     socklen_t *sl, char *err, size_t len);

/* True for 127.0.0.0/8, ::1, ::ffff:127.0.0.0/104 and AF_UNIX addresses. */
bool net_addr_loopback(const struct sockaddr *sa, socklen_t sl);

/*
 * 1 when host resolves and every address it resolves to is on loopback
 * (net_addr_loopback), 0 when one is not, or -errno with a message in err
 * when it does not resolve.
 */
int net_host_loopback(const char *host, char *err, size_t len);

/* Formats an address as "1.2.3.4:80" or "[::1]:80". */
void net_addr_str(const struct sockaddr *sa, socklen_t sl, char *out,
		  size_t len);

/*
 * Starts a non-blocking connect (socket is O_NONBLOCK|O_CLOEXEC). Returns
 * the fd with *pending true while the handshake runs (wait for EPOLLOUT,
 * then ask net_connect_done()), or -errno when it failed at once.
 */
int net_connect_nb(const struct sockaddr *sa, socklen_t sl, bool *pending);

/*
 * After EPOLLOUT on a pending connect: 0 connected, -EINPROGRESS still
 * running (a stale wakeup), or the -errno it failed with.
 */
int net_connect_done(int fd);

/*
 * Splits "HOST:PORT", "[V6ADDR]:PORT" or (when host_optional) "PORT" into
 * host (empty when absent) and port 1..65535 (0 too when any_port: a
 * listener that takes any free port). Returns 0, or -EINVAL with the
 * reason in err.
 */
int net_split_hostport(const char *arg, bool host_optional, bool any_port,
		       char *host, size_t hlen, uint16_t *port, char *err,
		       size_t len);

#endif
