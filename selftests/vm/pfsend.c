// SPDX-License-Identifier: GPL-2.0
/*
 * pfsend - a small traffic generator for the pktfilt VM tests.
 *
 * Sends packets through ordinary sockets, so that what the kernel sees is
 * what a real application would produce:
 *
 *   pfsend udp  [-6] --dst ADDR --dport N [--src ADDR] [--sport N] [--size N]
 *               [--flows N]
 *   pfsend tcp  [-6] --dst ADDR --dport N [--src ADDR] [--sport N]
 *   pfsend icmp [-6] --dst ADDR [--src ADDR] [--id N]
 *   pfsend udp-listen [-6] --port N [--src ADDR] [--timeout S] [--ready FILE]
 *                     [--tstamp-wait S]
 *   pfsend tcp-stream [-6] --dst ADDR --dport N [--src ADDR] [--sport N] [--size N]
 *   pfsend tcp-sink   [-6] --port N [--src ADDR] [--timeout S] [--ready FILE]
 *
 * or builds them byte by byte, for the odd packets no socket would send:
 *
 *   pfsend raw [-6] --dev IFNAME --dst-mac MAC --src ADDR --dst ADDR
 *              [--proto udp|tcp|icmp|NUM] [--sport N] [--dport N] [--id N]
 *              [--size N] [--trunc N] [--trailer N] [--udp-len N] [--ip-len N]
 *              [--ip-opts] [--ext hbh,dst,frag,...] [--frag N] [--reverse]
 *              [--drop-first] [--ident N]
 *
 * and sets the offloads that decide whether a receiver sees merged skbs:
 *
 *   pfsend offload --dev IFNAME [--gro on|off] [--tso on|off]
 *
 * and taps a device as tcpdump does:
 *
 *   pfsend tap --dev IFNAME [--timeout S] [--ready FILE]
 *
 * Common options: --count N (default 1), --mark N (SO_MARK),
 * --interval-us N (pause between packets), -q/--quiet.
 *
 * udp   sendto()s N datagrams, each "pfsend udp I\n", or --size N bytes
 *       (more than the MTU: the kernel fragments it). --flows F: from F
 *       sockets in turn, bound to --sport, --sport + 1, ... (F flows, each
 *       its N datagrams; never connected, so no socket gives its skbs a
 *       hash of its own: sk_txhash is set by connect()).
 * tcp   N times: a non-blocking connect(), waiting up to 1 s for it to
 *       complete or be refused, then close with SO_LINGER 0 (an RST if it
 *       connected, and no TIME_WAIT, so the same --sport can be reused). To a
 *       closed port that is exactly one SYN answered by one RST.
 * icmp  N echo requests (ICMP or ICMPv6) through a raw socket, identifier
 *       --id (default: pid), sequence 1..N. Replies are not waited for.
 * udp-listen  binds --port (on --src, default any address), receives until
 *       --count datagrams arrived or --timeout seconds (default 5) passed,
 *       and prints "received N". --ready FILE is created once bound, so a
 *       script can start the listener in the background and wait for it.
 *       --tstamp-wait S: with SO_TIMESTAMPNS on, waits S seconds after the
 *       first datagram is readable before it reads any, then prints for each
 *       "datagram sport=P age_ms=A": the age of its receive timestamp when
 *       read (age_ms=none: no timestamp). A datagram the kernel stamped on
 *       receipt is about S seconds old; one the stack left unstamped is
 *       stamped by recvmsg() itself (__sock_recv_timestamp()): about 0.
 * tcp-stream  connects (blocking), writes --size bytes (default 65536) in
 *       one go, shuts its side down, reads until the peer closes, closes;
 *       prints "sent N bytes". Use a new --sport each time (TIME_WAIT).
 * tcp-sink  listens on --port, accepts one connection, reads until EOF and
 *       closes; prints "received N bytes". --ready and --timeout as above.
 * raw   N times one transport segment, in IPv4 or IPv6, written to --dev
 *       through an AF_PACKET socket (SOCK_DGRAM: the kernel adds the
 *       Ethernet header, to --dst-mac), so it reaches the peer exactly as
 *       built, bypassing the sender's IP stack. The segment is a UDP
 *       datagram (default), a TCP SYN (seq 1000+I), an ICMP/ICMPv6 echo
 *       request (--id, sequence I+1) or, for another protocol number, bare
 *       payload: its header plus --size payload bytes (default 16, TCP 0),
 *       checksums right over the whole segment. Then:
 *         --trunc N    only the first N bytes of the segment are sent; the IP
 *                      length fields say so (the IP layer accepts the
 *                      packet; its transport header is short)
 *         --trailer N  N more bytes after the IP packet, beyond what its
 *                      length field covers (the receiver trims them): the
 *                      rest of the untruncated segment, then zeros, i.e.
 *                      exactly what a read past the packet's end would see
 *         --udp-len N  the UDP length field (default: the real length)
 *         --ip-len N   the IPv4 total length / IPv6 payload length field
 *         --ip-opts    IPv4: 4 bytes of options (NOP NOP NOP EOL), IHL 6
 *         --ext LIST   IPv6: extension headers in this order, 8 bytes each:
 *                      hbh (hop-by-hop, PadN), dst (destination options,
 *                      PadN), frag (fragment header; alone: an atomic
 *                      fragment, offset 0, M=0)
 *         --frag N     fragment: N bytes of fragmentable part per fragment
 *                      (a multiple of 8). IPv6: the fragment header goes
 *                      where "frag" is in --ext, else after the other
 *                      extension headers; those before it are repeated in
 *                      every fragment, those after it are fragmented
 *         --reverse    send the fragments last first
 *         --drop-first leave out the first fragment (never reassembled; no
 *                      ICMP time exceeded either, as that needs the first)
 *         --ident N    IPv4 ID / IPv6 fragment identification of the first
 *                      packet, +1 for each next one (default: from the
 *                      clock and the pid)
 * offload  sets GRO / TSO on --dev through the SIOCETHTOOL ioctl (what
 *       "ethtool -K DEV gro on tso off" does), reads them back and prints
 *       "DEV: gro on|off tso on|off". On veth, GRO on enables NAPI on the
 *       receive side, and the peer's TSO off makes it send MTU-sized packets
 *       that the receiver's GRO then merges.
 *
 * tap   an AF_PACKET socket (SOCK_RAW, ETH_P_ALL) bound to --dev, so that
 *       the device's receive delivers every frame to it (the kernel's
 *       packet_rcv()); counts frames until --count arrived or --timeout
 *       passed, prints "tapped N". --ready as for udp-listen.
 *
 * Exit status: 0 on success; 1 on a usage or socket error (with a message on
 * stderr; for tcp a refused connect is the expected result, not an error, but
 * a connect that times out is); 2 for udp-listen when fewer than --count
 * datagrams arrived before the timeout, and for tcp-sink when no connection
 * came or it was not closed before the timeout.
 *
 * Built static (gcc -static -std=c11) into the VM's initramfs.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/ethtool.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum mode { M_UDP, M_TCP, M_ICMP, M_UDP_LISTEN, M_TCP_STREAM, M_TCP_SINK,
	    M_RAW, M_OFFLOAD, M_TAP };

/* IPv6 extension headers pfsend raw can write (their next-header values). */
#define EXT_HBH 0
#define EXT_FRAG 44
#define EXT_DST 60
#define MAX_EXT 8

/* Long options without a short letter. */
enum {
	OPT_SIZE = 256, OPT_DEV, OPT_DST_MAC, OPT_PROTO, OPT_TRUNC, OPT_TRAILER, OPT_UDP_LEN,
	OPT_IP_LEN, OPT_IP_OPTS, OPT_EXT, OPT_FRAG, OPT_REVERSE, OPT_DROP_FIRST, OPT_IDENT,
	OPT_GRO, OPT_TSO, OPT_TSTAMP_WAIT, OPT_FLOWS,
};

struct opts {
	enum mode mode;
	int family;		/* AF_INET or AF_INET6 */
	const char *dst, *src;
	unsigned int sport, dport, port;
	unsigned long count;
	unsigned int flows;	/* udp: sockets from --sport on; 0: one */
	bool have_mark;
	unsigned int mark;
	unsigned long interval_us;
	unsigned int timeout_s;
	unsigned int tstamp_wait_s;	/* udp-listen: 0, or SO_TIMESTAMPNS and wait */
	unsigned int echo_id;
	bool have_id;
	const char *ready;
	bool quiet;
	long size;		/* payload bytes; -1: the mode's default */
	/* raw */
	const char *dev;
	bool have_mac;
	uint8_t dst_mac[6];
	int proto;		/* IPPROTO_*, default UDP */
	long trunc, trailer, udp_len, ip_len;	/* -1: not given */
	bool ip_opts;
	int ext[MAX_EXT];	/* EXT_*, in wire order */
	int n_ext;
	unsigned long frag;	/* 0: do not fragment */
	bool reverse, drop_first;
	bool have_ident;
	uint32_t ident;
	/* offload: -1 leave, 0 off, 1 on */
	int gro, tso;
};

/* Either address family, plus its length for bind()/connect()/sendto(). */
struct addr {
	struct sockaddr_storage ss;
	socklen_t len;
};

static void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...)
{
	va_list ap;

	fputs("pfsend: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* die() with ": strerror(errno)" appended. */
#define die_errno(fmt, ...) die(fmt ": %s", ##__VA_ARGS__, strerror(errno))

static void usage(FILE *f)
{
	fputs("usage: pfsend udp|tcp  [-6] --dst ADDR --dport N [--src ADDR] [--sport N] [--size N (udp)]\n"
	      "                       [--flows N (udp)]\n"
	      "       pfsend icmp     [-6] --dst ADDR [--src ADDR] [--id N]\n"
	      "       pfsend udp-listen [-6] --port N [--src ADDR] [--timeout S] [--ready FILE]\n"
	      "                         [--tstamp-wait S]\n"
	      "       pfsend tcp-stream [-6] --dst ADDR --dport N [--src ADDR] [--sport N] [--size N]\n"
	      "       pfsend tcp-sink   [-6] --port N [--src ADDR] [--timeout S] [--ready FILE]\n"
	      "       pfsend raw [-6] --dev IFNAME --dst-mac MAC --src ADDR --dst ADDR\n"
	      "                  [--proto udp|tcp|icmp|NUM] [--sport N] [--dport N] [--id N]\n"
	      "                  [--size N] [--trunc N] [--trailer N] [--udp-len N] [--ip-len N]\n"
	      "                  [--ip-opts] [--ext hbh,dst,frag,...] [--frag N] [--reverse]\n"
	      "                  [--drop-first] [--ident N]\n"
	      "       pfsend offload --dev IFNAME [--gro on|off] [--tso on|off]\n"
	      "       pfsend tap --dev IFNAME [--timeout S] [--ready FILE]\n"
	      "common: [--count N] [--mark N] [--interval-us N] [-q|--quiet]\n", f);
}

static unsigned long parse_num(const char *opt, const char *s, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || *s == '-' || v > max)
		die("bad value for %s: '%s' (0..%lu)", opt, s, max);
	return v;
}

/* Fill @a with @host (may be NULL: the wildcard address) and @port. */
static void make_addr(struct addr *a, int family, const char *host, unsigned int port)
{
	memset(a, 0, sizeof(*a));
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&a->ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		sin->sin_addr.s_addr = htonl(INADDR_ANY);
		if (host && inet_pton(AF_INET, host, &sin->sin_addr) != 1)
			die("'%s' is not an IPv4 address (use -6 for IPv6)", host);
		a->len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&a->ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		sin6->sin6_addr = in6addr_any;
		if (host && inet_pton(AF_INET6, host, &sin6->sin6_addr) != 1)
			die("'%s' is not an IPv6 address", host);
		a->len = sizeof(*sin6);
	}
}

static void set_int_opt(int fd, int level, int name, int val, const char *what)
{
	if (setsockopt(fd, level, name, &val, sizeof(val)) < 0)
		die_errno("setsockopt(%s)", what);
}

/* A socket with the options every mode shares (SO_MARK). */
static int open_socket(const struct opts *o, int type, int proto)
{
	int fd = socket(o->family, type | SOCK_CLOEXEC, proto);

	if (fd < 0)
		die_errno("socket");
	if (o->have_mark)
		set_int_opt(fd, SOL_SOCKET, SO_MARK, (int)o->mark, "SO_MARK");
	return fd;
}

/* Bind to --src/--sport when either was given. */
static void maybe_bind(const struct opts *o, int fd, unsigned int sport)
{
	struct addr a;

	if (!o->src && !sport)
		return;
	make_addr(&a, o->family, o->src, sport);
	if (bind(fd, (struct sockaddr *)&a.ss, a.len) < 0)
		die_errno("bind %s port %u", o->src ? o->src : "(any)", sport);
}

static void pause_between(const struct opts *o, unsigned long i)
{
	struct timespec ts;

	if (!o->interval_us || i + 1 >= o->count)
		return;
	ts.tv_sec = (time_t)(o->interval_us / 1000000);
	ts.tv_nsec = (long)(o->interval_us % 1000000) * 1000;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void send_udp_flow(const struct opts *o, const struct addr *dst,
			  unsigned int sport)
{
	static char buf[65536];
	unsigned long i;
	size_t j;
	int fd;

	fd = open_socket(o, SOCK_DGRAM, 0);
	set_int_opt(fd, SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR");
	maybe_bind(o, fd, sport);

	for (i = 0; i < o->count; i++) {
		size_t n = (size_t)snprintf(buf, sizeof(buf), "pfsend udp %lu\n", i + 1);

		if (o->size >= 0) {
			/* The text, then a byte pattern, cut to --size. */
			for (j = n; j < (size_t)o->size; j++)
				buf[j] = (char)('a' + j % 26);
			n = (size_t)o->size;
		}
		if (sendto(fd, buf, n, 0, (const struct sockaddr *)&dst->ss, dst->len) < 0)
			die_errno("sendto %s port %u", o->dst, o->dport);
		pause_between(o, i);
	}
	close(fd);
}

static void send_udp(const struct opts *o)
{
	unsigned int f, flows = o->flows ? o->flows : 1;
	struct addr dst;

	if (o->size >= 65536)
		die("--size %ld: too large for a datagram", o->size);
	if (o->flows && (!o->sport || o->sport + o->flows - 1 > 65535))
		die("--flows %u needs a --sport with room for them", o->flows);
	make_addr(&dst, o->family, o->dst, o->dport);
	for (f = 0; f < flows; f++)
		send_udp_flow(o, &dst, o->flows ? o->sport + f : o->sport);
	if (!o->quiet)
		printf("pfsend: udp: sent %lu\n", o->count * flows);
}

/*
 * One TCP connection attempt. Returns 1 if it connected, 0 if it was refused;
 * anything else is fatal.
 */
static int tcp_attempt(const struct opts *o, const struct addr *dst)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	struct pollfd pfd;
	socklen_t len;
	int fd, err, r;

	fd = open_socket(o, SOCK_STREAM | SOCK_NONBLOCK, 0);
	set_int_opt(fd, SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR");
	/* Abortive close: RST instead of FIN, no TIME_WAIT on our side. */
	if (setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)) < 0)
		die_errno("setsockopt(SO_LINGER)");
	maybe_bind(o, fd, o->sport);

	if (connect(fd, (const struct sockaddr *)&dst->ss, dst->len) == 0) {
		err = 0;	/* done at once (possible over loopback) */
	} else if (errno == ECONNREFUSED) {
		err = ECONNREFUSED;
	} else if (errno != EINPROGRESS) {
		die_errno("connect %s port %u", o->dst, o->dport);
	} else {
		pfd.fd = fd;
		pfd.events = POLLOUT;
		do
			r = poll(&pfd, 1, 1000);
		while (r < 0 && errno == EINTR);
		if (r < 0)
			die_errno("poll");
		if (r == 0)
			die("connect %s port %u: timed out after 1 s", o->dst, o->dport);
		len = sizeof(err);
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
			die_errno("getsockopt(SO_ERROR)");
	}
	if (err && err != ECONNREFUSED) {
		errno = err;
		die_errno("connect %s port %u", o->dst, o->dport);
	}
	close(fd);
	return err == 0;
}

static void send_tcp(const struct opts *o)
{
	unsigned long i, connected = 0;
	struct addr dst;

	make_addr(&dst, o->family, o->dst, o->dport);
	for (i = 0; i < o->count; i++) {
		connected += (unsigned long)tcp_attempt(o, &dst);
		pause_between(o, i);
	}
	if (!o->quiet)
		printf("pfsend: tcp: %lu attempts, %lu connected, %lu refused\n",
		       o->count, connected, o->count - connected);
}

/* RFC 1071 Internet checksum (needed for ICMPv4 only; the kernel fills in
 * the ICMPv6 one, which covers a pseudo-header). */
static uint16_t inet_csum(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint32_t sum = 0;

	for (; len > 1; p += 2, len -= 2)
		sum += (uint32_t)p[0] << 8 | p[1];
	if (len)
		sum += (uint32_t)p[0] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((uint16_t)~sum);
}

static void send_icmp(const struct opts *o)
{
	/* 8-byte header + 56 bytes of payload, like ping(8). */
	union {
		struct icmphdr v4;
		struct icmp6_hdr v6;
		uint8_t raw[64];
	} pkt;
	uint16_t id = (uint16_t)(o->have_id ? o->echo_id : (unsigned int)getpid());
	struct addr dst;
	unsigned long i;
	size_t j;
	int fd;

	make_addr(&dst, o->family, o->dst, 0);
	fd = open_socket(o, SOCK_RAW, o->family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6);
	maybe_bind(o, fd, 0);

	for (i = 0; i < o->count; i++) {
		uint16_t seq = (uint16_t)(i + 1);

		memset(&pkt, 0, sizeof(pkt));
		for (j = 8; j < sizeof(pkt.raw); j++)
			pkt.raw[j] = (uint8_t)j;
		if (o->family == AF_INET) {
			pkt.v4.type = ICMP_ECHO;
			pkt.v4.un.echo.id = htons(id);
			pkt.v4.un.echo.sequence = htons(seq);
			pkt.v4.checksum = inet_csum(pkt.raw, sizeof(pkt.raw));
		} else {
			pkt.v6.icmp6_type = ICMP6_ECHO_REQUEST;
			pkt.v6.icmp6_id = htons(id);
			pkt.v6.icmp6_seq = htons(seq);
		}
		if (sendto(fd, pkt.raw, sizeof(pkt.raw), 0, (struct sockaddr *)&dst.ss, dst.len) < 0)
			die_errno("sendto %s", o->dst);
		pause_between(o, i);
	}
	close(fd);
	if (!o->quiet)
		printf("pfsend: icmp: sent %lu echo requests, id %u\n", o->count, id);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits until @fd is readable (true) or the deadline passed (false). */
static bool readable_before(int fd, long long deadline)
{
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		long long left = deadline - now_ms();
		int r;

		if (left <= 0)
			return false;
		r = poll(&pfd, 1, left > INT_MAX ? INT_MAX : (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die_errno("poll");
		return r > 0;
	}
}

/* Creates --ready FILE, if given. */
static void say_ready(const struct opts *o)
{
	int rfd;

	if (!o->ready)
		return;
	rfd = open(o->ready, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (rfd < 0)
		die_errno("create %s", o->ready);
	close(rfd);
}

/*
 * Says it is ready (--ready FILE), then receives on @fd until --count
 * messages came or @deadline passed; closes @fd. Returns how many came.
 */
static unsigned long ready_and_count(const struct opts *o, int fd,
				     long long deadline)
{
	unsigned long n = 0;
	static char buf[65536];

	say_ready(o);
	while (n < o->count) {
		if (!readable_before(fd, deadline))
			break;
		if (recv(fd, buf, sizeof(buf), 0) < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			die_errno("recv");
		}
		n++;
	}
	close(fd);
	return n;
}

/*
 * udp-listen --tstamp-wait: as ready_and_count(), but waits the given time
 * once the first datagram is readable, then prints each one's source port
 * and the age of its SO_TIMESTAMPNS timestamp (CLOCK_REALTIME) when read.
 */
static unsigned long ready_and_ages(const struct opts *o, int fd,
				    long long deadline)
{
	static char buf[65536];
	unsigned long n = 0;

	say_ready(o);
	if (!readable_before(fd, deadline)) {
		close(fd);
		return 0;
	}
	sleep(o->tstamp_wait_s);
	while (n < o->count) {
		union {
			char buf[CMSG_SPACE(sizeof(struct timespec))];
			struct cmsghdr align;
		} control;
		struct sockaddr_storage from;
		struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
		struct msghdr msg = {
			.msg_name = &from, .msg_namelen = sizeof(from),
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = control.buf, .msg_controllen = sizeof(control.buf),
		};
		struct cmsghdr *cm;
		struct timespec now, ts;
		bool have_ts = false;
		unsigned int sport;

		if (!readable_before(fd, deadline))
			break;
		if (recvmsg(fd, &msg, 0) < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			die_errno("recvmsg");
		}
		clock_gettime(CLOCK_REALTIME, &now);
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SO_TIMESTAMPNS) {
				memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
				have_ts = true;
			}
		}
		sport = from.ss_family == AF_INET6 ?
			ntohs(((struct sockaddr_in6 *)&from)->sin6_port) :
			ntohs(((struct sockaddr_in *)&from)->sin_port);
		if (have_ts)
			printf("datagram sport=%u age_ms=%lld\n", sport,
			       ((long long)now.tv_sec - ts.tv_sec) * 1000 +
			       (now.tv_nsec - ts.tv_nsec) / 1000000);
		else
			printf("datagram sport=%u age_ms=none\n", sport);
		n++;
	}
	close(fd);
	return n;
}

static int udp_listen(const struct opts *o)
{
	long long deadline = now_ms() + (long long)o->timeout_s * 1000;
	unsigned long received;
	struct addr local;
	int fd;

	make_addr(&local, o->family, o->src, o->port);
	fd = open_socket(o, SOCK_DGRAM, 0);
	set_int_opt(fd, SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR");
	if (bind(fd, (struct sockaddr *)&local.ss, local.len) < 0)
		die_errno("bind %s port %u", o->src ? o->src : "(any)", o->port);

	if (o->tstamp_wait_s) {
		set_int_opt(fd, SOL_SOCKET, SO_TIMESTAMPNS, 1, "SO_TIMESTAMPNS");
		received = ready_and_ages(o, fd, deadline);
	} else {
		received = ready_and_count(o, fd, deadline);
	}
	printf("received %lu\n", received);
	return received == o->count ? 0 : 2;
}

static int tap(const struct opts *o)
{
	long long deadline = now_ms() + (long long)o->timeout_s * 1000;
	struct sockaddr_ll sll;
	int fd;

	if (!o->dev)
		die("tap needs --dev");
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = (int)if_nametoindex(o->dev);
	if (!sll.sll_ifindex)
		die_errno("no device %s", o->dev);
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	if (fd < 0)
		die_errno("socket(AF_PACKET)");
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0)
		die_errno("bind to %s", o->dev);
	printf("tapped %lu\n", ready_and_count(o, fd, deadline));
	return 0;
}

/* Accept, with poll(), until the deadline; -1 when it passed. */
static int accept_until(int lfd, long long deadline)
{
	for (;;) {
		int fd;

		if (!readable_before(lfd, deadline))
			return -1;
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			return fd;
		if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED)
			die_errno("accept");
	}
}

static int tcp_sink(const struct opts *o)
{
	long long deadline = now_ms() + (long long)o->timeout_s * 1000;
	unsigned long long received = 0;
	static char buf[65536];
	struct addr local;
	bool eof = false;
	int lfd, fd;

	make_addr(&local, o->family, o->src, o->port);
	lfd = open_socket(o, SOCK_STREAM | SOCK_NONBLOCK, 0);
	set_int_opt(lfd, SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR");
	if (bind(lfd, (struct sockaddr *)&local.ss, local.len) < 0)
		die_errno("bind %s port %u", o->src ? o->src : "(any)", o->port);
	if (listen(lfd, 1) < 0)
		die_errno("listen");
	if (o->ready) {
		int rfd = open(o->ready, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (rfd < 0)
			die_errno("create %s", o->ready);
		close(rfd);
	}

	fd = accept_until(lfd, deadline);
	close(lfd);
	while (fd >= 0 && !eof) {
		ssize_t n;

		if (!readable_before(fd, deadline))
			break;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			die_errno("recv");
		}
		if (n == 0)
			eof = true;
		received += (unsigned long long)n;
	}
	if (fd >= 0)
		close(fd);
	printf("received %llu bytes\n", received);
	return eof ? 0 : 2;
}

static void tcp_stream(const struct opts *o)
{
	size_t size = o->size >= 0 ? (size_t)o->size : 65536, off = 0;
	struct addr dst;
	char *buf, tmp[4096];
	size_t j;
	int fd;

	buf = malloc(size ? size : 1);
	if (!buf)
		die("out of memory");
	for (j = 0; j < size; j++)
		buf[j] = (char)('a' + j % 26);
	make_addr(&dst, o->family, o->dst, o->dport);
	fd = open_socket(o, SOCK_STREAM, 0);
	set_int_opt(fd, SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR");
	maybe_bind(o, fd, o->sport);
	if (connect(fd, (struct sockaddr *)&dst.ss, dst.len) < 0)
		die_errno("connect %s port %u", o->dst, o->dport);
	while (off < size) {
		ssize_t n = send(fd, buf + off, size - off, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die_errno("send");
		off += (size_t)n;
	}
	if (shutdown(fd, SHUT_WR) < 0)
		die_errno("shutdown");
	/* Until the sink closes: its FIN, not ours, ends the exchange. */
	for (;;) {
		ssize_t n = recv(fd, tmp, sizeof(tmp), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die_errno("recv");
		if (n == 0)
			break;
	}
	close(fd);
	free(buf);
	if (!o->quiet)
		printf("pfsend: tcp-stream: sent %zu bytes\n", size);
}

/* --- raw packets ----------------------------------------------------------- */

/* One's complement sum of big-endian 16-bit words, unfolded. @len may be odd
 * only for the last piece of a checksum. */
static uint32_t sum16(const void *data, size_t len, uint32_t sum)
{
	const uint8_t *p = data;

	for (; len > 1; p += 2, len -= 2)
		sum += (uint32_t)p[0] << 8 | p[1];
	if (len)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

/* Fold and complement, in network order. */
static uint16_t csum_fold16(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((uint16_t)~sum);
}

static void put16(uint8_t *p, unsigned int v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xffff);
}

struct rawctx {
	const struct opts *o;
	int v6;
	uint8_t saddr[16], daddr[16];
	int fd;
	struct sockaddr_ll sll;
	unsigned long frames;
	uint32_t ident0;	/* IPv4 ID / fragment identification of packet 0 */
};

/* The pseudo-header sum for a transport segment of @len bytes. */
static uint32_t pseudo_sum(const struct rawctx *c, size_t len)
{
	uint8_t ph[40];

	memset(ph, 0, sizeof(ph));
	if (!c->v6) {
		memcpy(ph, c->saddr, 4);
		memcpy(ph + 4, c->daddr, 4);
		ph[9] = (uint8_t)c->o->proto;
		put16(ph + 10, (unsigned int)len);
		return sum16(ph, 12, 0);
	}
	memcpy(ph, c->saddr, 16);
	memcpy(ph + 16, c->daddr, 16);
	put32(ph + 32, (uint32_t)len);
	ph[39] = (uint8_t)c->o->proto;
	return sum16(ph, 40, 0);
}

/* Builds packet @i's whole transport segment into @seg; returns its length. */
static size_t build_segment(const struct rawctx *c, uint8_t *seg, unsigned long i)
{
	const struct opts *o = c->o;
	size_t hl, len, j;
	long size = o->size;
	uint16_t ck;

	switch (o->proto) {
	case IPPROTO_UDP: hl = 8; break;
	case IPPROTO_TCP: hl = 20; break;
	case IPPROTO_ICMP: case IPPROTO_ICMPV6: hl = 8; break;
	default: hl = 0; break;
	}
	if (size < 0)
		size = o->proto == IPPROTO_TCP ? 0 : 16;
	len = hl + (size_t)size;
	if (len > 65535 - 40 - 8 * MAX_EXT)
		die("--size %ld: too large", size);
	memset(seg, 0, len);
	for (j = hl; j < len; j++)
		seg[j] = (uint8_t)('A' + (j - hl) % 26);

	switch (o->proto) {
	case IPPROTO_UDP:
		put16(seg, o->sport);
		put16(seg + 2, o->dport);
		put16(seg + 4, o->udp_len >= 0 ? (unsigned int)o->udp_len : (unsigned int)len);
		ck = csum_fold16(sum16(seg, len, pseudo_sum(c, len)));
		memcpy(seg + 6, &ck, 2);
		if (!seg[6] && !seg[7])
			seg[6] = seg[7] = 0xff;		/* 0 means "none" */
		break;
	case IPPROTO_TCP:
		put16(seg, o->sport);
		put16(seg + 2, o->dport);
		put32(seg + 4, (uint32_t)(1000 + i));	/* seq */
		seg[12] = 5 << 4;			/* data offset */
		seg[13] = 0x02;				/* SYN */
		put16(seg + 14, 65535);			/* window */
		ck = csum_fold16(sum16(seg, len, pseudo_sum(c, len)));
		memcpy(seg + 16, &ck, 2);
		break;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		seg[0] = c->v6 ? ICMP6_ECHO_REQUEST : ICMP_ECHO;
		put16(seg + 4, o->have_id ? o->echo_id : (unsigned int)getpid() & 0xffff);
		put16(seg + 6, (unsigned int)(i + 1) & 0xffff);
		ck = csum_fold16(sum16(seg, len, c->v6 ? pseudo_sum(c, len) : 0));
		memcpy(seg + 2, &ck, 2);
		break;
	}
	return len;
}

static void raw_emit(struct rawctx *c, const uint8_t *frame, size_t len)
{
	if (sendto(c->fd, frame, len, 0, (const struct sockaddr *)&c->sll, sizeof(c->sll)) < 0)
		die_errno("sendto %s (%zu bytes)", c->o->dev, len);
	c->frames++;
}

/* One packet's worth of what follows the IP header. */
struct piece {
	const uint8_t *unfrag;	/* IPv6 extension headers before the fragment header */
	size_t unfrag_len;
	uint8_t first_nh;	/* IPv6: next header after the IPv6 header */
	bool fragment;		/* carries a fragment header (IPv6) / fragment fields (IPv4) */
	uint8_t frag_nh;	/* IPv6: the fragment header's next header */
	size_t offset;		/* of @body in the fragmentable part */
	bool more;
	const uint8_t *body;
	size_t body_len;
};

/*
 * Writes the network header (and, for IPv6, the unfragmentable extension
 * headers and the fragment header if @pc has one) to @pkt, followed by
 * @pc's body; returns the packet's length. @iplen is what the header's
 * length field says (negative: the real length).
 */
static size_t build_packet(const struct rawctx *c, uint8_t *pkt, const struct piece *pc,
			   uint32_t ident, long iplen)
{
	const struct opts *o = c->o;
	size_t hl, n;

	if (!c->v6) {
		uint16_t ck;

		hl = o->ip_opts ? 24 : 20;
		n = hl + pc->body_len;
		memset(pkt, 0, hl);
		pkt[0] = (uint8_t)(0x40 | hl / 4);
		put16(pkt + 2, iplen >= 0 ? (unsigned int)iplen : (unsigned int)n);
		put16(pkt + 4, ident & 0xffff);
		put16(pkt + 6, (unsigned int)(pc->offset / 8) | (pc->more ? 0x2000 : 0));
		pkt[8] = 64;
		pkt[9] = (uint8_t)o->proto;
		memcpy(pkt + 12, c->saddr, 4);
		memcpy(pkt + 16, c->daddr, 4);
		if (o->ip_opts) {
			pkt[20] = pkt[21] = pkt[22] = 1;	/* NOP */
			pkt[23] = 0;				/* EOL */
		}
		ck = csum_fold16(sum16(pkt, hl, 0));
		memcpy(pkt + 10, &ck, 2);
		memcpy(pkt + hl, pc->body, pc->body_len);
		return n;
	}
	hl = 40 + pc->unfrag_len + (pc->fragment ? 8 : 0);
	n = hl + pc->body_len;
	memset(pkt, 0, 40);
	pkt[0] = 0x60;
	put16(pkt + 4, iplen >= 0 ? (unsigned int)iplen : (unsigned int)(n - 40));
	pkt[6] = pc->first_nh;
	pkt[7] = 64;
	memcpy(pkt + 8, c->saddr, 16);
	memcpy(pkt + 24, c->daddr, 16);
	memcpy(pkt + 40, pc->unfrag, pc->unfrag_len);
	if (pc->fragment) {
		uint8_t *fh = pkt + 40 + pc->unfrag_len;

		memset(fh, 0, 8);
		fh[0] = pc->frag_nh;
		put16(fh + 2, (unsigned int)pc->offset | (pc->more ? 1 : 0));
		put32(fh + 4, ident);
	}
	memcpy(pkt + hl, pc->body, pc->body_len);
	return n;
}

/* An 8-byte extension header: next header, length 0, one PadN option (type
 * 1, 4 bytes of zeros) filling the 6 bytes of options. */
static void put_ext(uint8_t *p, uint8_t nh)
{
	memset(p, 0, 8);
	p[0] = nh;
	p[2] = 1;
	p[3] = 4;
}

static void raw_one(struct rawctx *c, unsigned long i)
{
	static uint8_t seg[65536], fragable[65536 + 8 * MAX_EXT], unfrag[8 * MAX_EXT];
	static uint8_t pkt[65536 + 256];
	const struct opts *o = c->o;
	size_t seg_len, sent_len, fl = 0, ul = 0, nfrag, k, idx;
	uint32_t ident = c->ident0 + (uint32_t)i;
	int fpos = -1, e;
	struct piece pc;

	seg_len = build_segment(c, seg, i);
	sent_len = o->trunc >= 0 && (size_t)o->trunc < seg_len ? (size_t)o->trunc : seg_len;

	memset(&pc, 0, sizeof(pc));
	pc.first_nh = (uint8_t)o->proto;
	if (c->v6) {
		int l[MAX_EXT + 1], n = o->n_ext;

		/* The chain, with the fragment header at its end if --frag
		 * asks for one that --ext does not place. */
		memcpy(l, o->ext, sizeof(o->ext));
		for (e = 0; e < n; e++)
			if (l[e] == EXT_FRAG)
				fpos = e;
		if (o->frag && fpos < 0) {
			fpos = n;
			l[n++] = EXT_FRAG;
		}
		if (n)
			pc.first_nh = (uint8_t)l[0];
		for (e = 0; e < n; e++) {
			uint8_t nh = e + 1 < n ? (uint8_t)l[e + 1] : (uint8_t)o->proto;

			if (l[e] == EXT_FRAG) {
				pc.fragment = true;
				pc.frag_nh = nh;
			} else if (e < fpos) {
				put_ext(unfrag + ul, nh);
				ul += 8;
			} else {
				put_ext(fragable + fl, nh);
				fl += 8;
			}
		}
		pc.unfrag = unfrag;
		pc.unfrag_len = ul;
	}
	memcpy(fragable + fl, seg, sent_len);
	fl += sent_len;

	if (!o->frag) {
		size_t n;

		pc.body = fragable;
		pc.body_len = fl;
		n = build_packet(c, pkt, &pc, ident, o->ip_len);
		if (o->trailer > 0) {
			/* What lies beyond the packet: the rest of the segment. */
			for (k = 0; k < (size_t)o->trailer; k++)
				pkt[n + k] = sent_len + k < seg_len ? seg[sent_len + k] : 0;
			n += (size_t)o->trailer;
		}
		raw_emit(c, pkt, n);
		return;
	}

	nfrag = (fl + o->frag - 1) / o->frag;
	if (!nfrag)
		nfrag = 1;
	for (k = 0; k < nfrag; k++) {
		size_t n;

		idx = o->reverse ? nfrag - 1 - k : k;
		if (o->drop_first && idx == 0)
			continue;
		pc.offset = idx * o->frag;
		pc.body = fragable + pc.offset;
		pc.body_len = fl - pc.offset < o->frag ? fl - pc.offset : o->frag;
		pc.more = idx + 1 < nfrag;
		n = build_packet(c, pkt, &pc, ident, -1);
		raw_emit(c, pkt, n);
	}
}

static void parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	char end;
	int k;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &end) != 6)
		die("bad --dst-mac '%s' (want aa:bb:cc:dd:ee:ff)", s);
	for (k = 0; k < 6; k++) {
		if (b[k] > 0xff)
			die("bad --dst-mac '%s'", s);
		mac[k] = (uint8_t)b[k];
	}
}

static void parse_ext(struct opts *o, const char *list)
{
	char *copy = strdup(list), *tok, *save = NULL;

	if (!copy)
		die("out of memory");
	o->n_ext = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int t;

		if (!strcmp(tok, "hbh"))
			t = EXT_HBH;
		else if (!strcmp(tok, "dst"))
			t = EXT_DST;
		else if (!strcmp(tok, "frag"))
			t = EXT_FRAG;
		else
			die("--ext: unknown header '%s' (hbh, dst, frag)", tok);
		if (o->n_ext == MAX_EXT)
			die("--ext: at most %d headers", MAX_EXT);
		o->ext[o->n_ext++] = t;
	}
	free(copy);
}

static int parse_proto(const char *s)
{
	if (!strcmp(s, "udp"))
		return IPPROTO_UDP;
	if (!strcmp(s, "tcp"))
		return IPPROTO_TCP;
	if (!strcmp(s, "icmp") || !strcmp(s, "icmpv6"))
		return -1;	/* the family decides */
	return (int)parse_num("--proto", s, 255);
}

static void send_raw(const struct opts *o)
{
	struct rawctx c;
	unsigned long i;
	int e, nfrag_hdr = 0;

	memset(&c, 0, sizeof(c));
	c.o = o;
	c.v6 = o->family == AF_INET6;
	if (o->have_ident) {
		c.ident0 = o->ident;
	} else {
		/* Unlike another run's, even one whose fragments still wait
		 * in a reassembly queue (--drop-first: 30 s or more). */
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		c.ident0 = (uint32_t)ts.tv_nsec ^ (uint32_t)ts.tv_sec * 2654435761u ^
			   (uint32_t)getpid() * 40503u;
	}
	if (!o->dev || !o->have_mac || !o->src || !o->dst)
		die("raw needs --dev, --dst-mac, --src and --dst");
	if (inet_pton(o->family, o->src, c.saddr) != 1 || inet_pton(o->family, o->dst, c.daddr) != 1)
		die("raw: --src/--dst must be IPv%d addresses", c.v6 ? 6 : 4);
	for (e = 0; e < o->n_ext; e++)
		nfrag_hdr += o->ext[e] == EXT_FRAG;
	if (!c.v6 && (o->n_ext))
		die("--ext is for IPv6 (-6)");
	if (c.v6 && o->ip_opts)
		die("--ip-opts is for IPv4");
	if (nfrag_hdr > 1)
		die("--ext: one frag at most");
	if (o->frag && (o->frag % 8 || o->frag > 65528))
		die("--frag %lu: a multiple of 8 below 65536", o->frag);
	if (o->frag && (o->trailer > 0 || o->ip_len >= 0))
		die("--trailer and --ip-len are for unfragmented packets");
	if (!o->frag && (o->reverse || o->drop_first))
		die("--reverse and --drop-first need --frag");
	if (o->trailer > 128)
		die("--trailer: at most 128");

	c.fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, 0);	/* protocol 0: send only */
	if (c.fd < 0)
		die_errno("socket(AF_PACKET)");
	c.sll.sll_family = AF_PACKET;
	c.sll.sll_protocol = htons(c.v6 ? ETH_P_IPV6 : ETH_P_IP);
	c.sll.sll_ifindex = (int)if_nametoindex(o->dev);
	if (!c.sll.sll_ifindex)
		die_errno("interface %s", o->dev);
	c.sll.sll_halen = 6;
	memcpy(c.sll.sll_addr, o->dst_mac, 6);
	if (o->have_mark)
		set_int_opt(c.fd, SOL_SOCKET, SO_MARK, (int)o->mark, "SO_MARK");

	for (i = 0; i < o->count; i++) {
		raw_one(&c, i);
		pause_between(o, i);
	}
	close(c.fd);
	if (!o->quiet)
		printf("pfsend: raw: sent %lu packets in %lu frames\n", o->count, c.frames);
}

/* --- offloads -------------------------------------------------------------- */

static int ethtool_value(int fd, const char *dev, uint32_t cmd, int set)
{
	struct ethtool_value ev = { .cmd = cmd, .data = set > 0 };
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	if (strlen(dev) >= sizeof(ifr.ifr_name))
		die("interface name '%s' too long", dev);
	strcpy(ifr.ifr_name, dev);
	ifr.ifr_data = (char *)&ev;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
		die_errno("SIOCETHTOOL %s (cmd %#x)", dev, cmd);
	return (int)ev.data;
}

static void offload(const struct opts *o)
{
	int fd, gro, tso;

	if (!o->dev)
		die("offload needs --dev");
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die_errno("socket");
	if (o->tso >= 0)
		ethtool_value(fd, o->dev, ETHTOOL_STSO, o->tso);
	if (o->gro >= 0)
		ethtool_value(fd, o->dev, ETHTOOL_SGRO, o->gro);
	gro = !!ethtool_value(fd, o->dev, ETHTOOL_GGRO, -1);
	tso = !!ethtool_value(fd, o->dev, ETHTOOL_GTSO, -1);
	close(fd);
	printf("%s: gro %s tso %s\n", o->dev, gro ? "on" : "off", tso ? "on" : "off");
	if ((o->gro >= 0 && gro != o->gro) || (o->tso >= 0 && tso != o->tso))
		die("%s: the offloads did not change as asked", o->dev);
}

static int parse_onoff(const char *opt, const char *s)
{
	if (!strcmp(s, "on"))
		return 1;
	if (!strcmp(s, "off"))
		return 0;
	die("%s: want on or off, not '%s'", opt, s);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "dst", required_argument, NULL, 'd' },
		{ "src", required_argument, NULL, 's' },
		{ "sport", required_argument, NULL, 'S' },
		{ "dport", required_argument, NULL, 'D' },
		{ "port", required_argument, NULL, 'p' },
		{ "count", required_argument, NULL, 'c' },
		{ "mark", required_argument, NULL, 'm' },
		{ "interval-us", required_argument, NULL, 'i' },
		{ "timeout", required_argument, NULL, 't' },
		{ "id", required_argument, NULL, 'I' },
		{ "ready", required_argument, NULL, 'r' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "dev", required_argument, NULL, OPT_DEV },
		{ "dst-mac", required_argument, NULL, OPT_DST_MAC },
		{ "proto", required_argument, NULL, OPT_PROTO },
		{ "trunc", required_argument, NULL, OPT_TRUNC },
		{ "trailer", required_argument, NULL, OPT_TRAILER },
		{ "udp-len", required_argument, NULL, OPT_UDP_LEN },
		{ "ip-len", required_argument, NULL, OPT_IP_LEN },
		{ "ip-opts", no_argument, NULL, OPT_IP_OPTS },
		{ "ext", required_argument, NULL, OPT_EXT },
		{ "frag", required_argument, NULL, OPT_FRAG },
		{ "reverse", no_argument, NULL, OPT_REVERSE },
		{ "drop-first", no_argument, NULL, OPT_DROP_FIRST },
		{ "ident", required_argument, NULL, OPT_IDENT },
		{ "gro", required_argument, NULL, OPT_GRO },
		{ "tso", required_argument, NULL, OPT_TSO },
		{ "tstamp-wait", required_argument, NULL, OPT_TSTAMP_WAIT },
		{ "flows", required_argument, NULL, OPT_FLOWS },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .family = AF_INET, .count = 1, .timeout_s = 5, .size = -1,
			  .proto = IPPROTO_UDP, .trunc = -1, .trailer = -1, .udp_len = -1,
			  .ip_len = -1, .gro = -1, .tso = -1 };
	const char *m;
	int c;

	if (argc < 2) {
		usage(stderr);
		return 1;
	}
	m = argv[1];
	if (!strcmp(m, "udp"))
		o.mode = M_UDP;
	else if (!strcmp(m, "tcp"))
		o.mode = M_TCP;
	else if (!strcmp(m, "icmp"))
		o.mode = M_ICMP;
	else if (!strcmp(m, "udp-listen"))
		o.mode = M_UDP_LISTEN;
	else if (!strcmp(m, "tcp-stream"))
		o.mode = M_TCP_STREAM;
	else if (!strcmp(m, "tcp-sink"))
		o.mode = M_TCP_SINK;
	else if (!strcmp(m, "raw"))
		o.mode = M_RAW;
	else if (!strcmp(m, "offload"))
		o.mode = M_OFFLOAD;
	else if (!strcmp(m, "tap"))
		o.mode = M_TAP;
	else if (!strcmp(m, "-h") || !strcmp(m, "--help")) {
		usage(stdout);
		return 0;
	} else {
		usage(stderr);
		die("unknown mode '%s'", m);
	}

	/* Options follow the mode word. */
	optind = 2;
	while ((c = getopt_long(argc, argv, "6qh", longopts, NULL)) != -1) {
		switch (c) {
		case '6': o.family = AF_INET6; break;
		case 'd': o.dst = optarg; break;
		case 's': o.src = optarg; break;
		case 'S': o.sport = (unsigned int)parse_num("--sport", optarg, 65535); break;
		case 'D': o.dport = (unsigned int)parse_num("--dport", optarg, 65535); break;
		case 'p': o.port = (unsigned int)parse_num("--port", optarg, 65535); break;
		case 'c': o.count = parse_num("--count", optarg, ULONG_MAX); break;
		case 'm': o.mark = (unsigned int)parse_num("--mark", optarg, UINT32_MAX);
			  o.have_mark = true; break;
		case 'i': o.interval_us = parse_num("--interval-us", optarg, ULONG_MAX); break;
		case 't': o.timeout_s = (unsigned int)parse_num("--timeout", optarg, 86400); break;
		case 'I': o.echo_id = (unsigned int)parse_num("--id", optarg, 65535);
			  o.have_id = true; break;
		case 'r': o.ready = optarg; break;
		case 'q': o.quiet = true; break;
		case 'h': usage(stdout); return 0;
		case OPT_SIZE: o.size = (long)parse_num("--size", optarg, 1 << 24); break;
		case OPT_DEV: o.dev = optarg; break;
		case OPT_DST_MAC: parse_mac(optarg, o.dst_mac); o.have_mac = true; break;
		case OPT_PROTO: o.proto = parse_proto(optarg); break;
		case OPT_TRUNC: o.trunc = (long)parse_num("--trunc", optarg, 65535); break;
		case OPT_TRAILER: o.trailer = (long)parse_num("--trailer", optarg, 65535); break;
		case OPT_UDP_LEN: o.udp_len = (long)parse_num("--udp-len", optarg, 65535); break;
		case OPT_IP_LEN: o.ip_len = (long)parse_num("--ip-len", optarg, 65535); break;
		case OPT_IP_OPTS: o.ip_opts = true; break;
		case OPT_EXT: parse_ext(&o, optarg); break;
		case OPT_FRAG: o.frag = parse_num("--frag", optarg, 65535); break;
		case OPT_REVERSE: o.reverse = true; break;
		case OPT_DROP_FIRST: o.drop_first = true; break;
		case OPT_IDENT: o.ident = (uint32_t)parse_num("--ident", optarg, UINT32_MAX);
			      o.have_ident = true; break;
		case OPT_GRO: o.gro = parse_onoff("--gro", optarg); break;
		case OPT_TSO: o.tso = parse_onoff("--tso", optarg); break;
		case OPT_TSTAMP_WAIT:
			o.tstamp_wait_s = (unsigned int)parse_num("--tstamp-wait", optarg, 3600);
			break;
		case OPT_FLOWS: o.flows = (unsigned int)parse_num("--flows", optarg, 65535); break;
		default: usage(stderr); return 1;
		}
	}
	if (optind < argc)
		die("unexpected argument '%s'", argv[optind]);

	if (o.proto < 0)
		o.proto = o.family == AF_INET6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP;

	if (o.mode == M_UDP_LISTEN || o.mode == M_TCP_SINK) {
		if (!o.port)
			die("%s needs --port", m);
		return o.mode == M_UDP_LISTEN ? udp_listen(&o) : tcp_sink(&o);
	}
	if (o.mode == M_OFFLOAD) {
		offload(&o);
		return 0;
	}
	if (o.mode == M_TAP)
		return tap(&o);
	if (!o.dst)
		die("%s needs --dst", m);
	if (o.mode != M_ICMP && o.mode != M_RAW && !o.dport)
		die("%s needs --dport", m);

	/* Unbuffered: a test may read our output while we still run. */
	setvbuf(stdout, NULL, _IONBF, 0);
	switch (o.mode) {
	case M_UDP: send_udp(&o); break;
	case M_TCP: send_tcp(&o); break;
	case M_ICMP: send_icmp(&o); break;
	case M_TCP_STREAM: tcp_stream(&o); break;
	case M_RAW: send_raw(&o); break;
	case M_UDP_LISTEN: case M_TCP_SINK: case M_OFFLOAD: case M_TAP:
		break;	/* handled above */
	}
	return 0;
}
