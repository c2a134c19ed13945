// SPDX-License-Identifier: GPL-2.0
/*
 * pfsend - a small traffic generator for the pktfilt VM tests.
 *
 * Sends packets through ordinary sockets, so that what the kernel sees is
 * what a real application would produce:
 *
 *   pfsend udp  [-6] --dst ADDR --dport N [--src ADDR] [--sport N]
 *   pfsend tcp  [-6] --dst ADDR --dport N [--src ADDR] [--sport N]
 *   pfsend icmp [-6] --dst ADDR [--src ADDR] [--id N]
 *   pfsend udp-listen [-6] --port N [--src ADDR] [--timeout S] [--ready FILE]
 *
 * Common options: --count N (default 1), --mark N (SO_MARK),
 * --interval-us N (pause between packets), -q/--quiet.
 *
 * udp   sendto()s N datagrams.
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
 *
 * Exit status: 0 on success; 1 on a usage or socket error (with a message on
 * stderr; for tcp a refused connect is the expected result, not an error, but
 * a connect that times out is); 2 for udp-listen when fewer than --count
 * datagrams arrived before the timeout.
 *
 * Built static (gcc -static -std=c11) into the VM's initramfs.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
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
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum mode { M_UDP, M_TCP, M_ICMP, M_UDP_LISTEN };

struct opts {
	enum mode mode;
	int family;		/* AF_INET or AF_INET6 */
	const char *dst, *src;
	unsigned int sport, dport, port;
	unsigned long count;
	bool have_mark;
	unsigned int mark;
	unsigned long interval_us;
	unsigned int timeout_s;
	unsigned int echo_id;
	bool have_id;
	const char *ready;
	bool quiet;
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
	fputs("usage: pfsend udp|tcp  [-6] --dst ADDR --dport N [--src ADDR] [--sport N]\n"
	      "       pfsend icmp     [-6] --dst ADDR [--src ADDR] [--id N]\n"
	      "       pfsend udp-listen [-6] --port N [--src ADDR] [--timeout S] [--ready FILE]\n"
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

static void send_udp(const struct opts *o)
{
	struct addr dst;
	char buf[64];
	unsigned long i;
	int fd;

	make_addr(&dst, o->family, o->dst, o->dport);
	fd = open_socket(o, SOCK_DGRAM, 0);
	set_int_opt(fd, SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR");
	maybe_bind(o, fd, o->sport);

	for (i = 0; i < o->count; i++) {
		int n = snprintf(buf, sizeof(buf), "pfsend udp %lu\n", i + 1);

		if (sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&dst.ss, dst.len) < 0)
			die_errno("sendto %s port %u", o->dst, o->dport);
		pause_between(o, i);
	}
	close(fd);
	if (!o->quiet)
		printf("pfsend: udp: sent %lu\n", o->count);
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

static int udp_listen(const struct opts *o)
{
	long long deadline = now_ms() + (long long)o->timeout_s * 1000;
	unsigned long received = 0;
	struct addr local;
	char buf[65536];
	int fd;

	make_addr(&local, o->family, o->src, o->port);
	fd = open_socket(o, SOCK_DGRAM, 0);
	set_int_opt(fd, SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR");
	if (bind(fd, (struct sockaddr *)&local.ss, local.len) < 0)
		die_errno("bind %s port %u", o->src ? o->src : "(any)", o->port);

	if (o->ready) {
		int rfd = open(o->ready, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (rfd < 0)
			die_errno("create %s", o->ready);
		close(rfd);
	}

	while (received < o->count) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		long long left = deadline - now_ms();
		int r;

		if (left <= 0)
			break;
		r = poll(&pfd, 1, left > INT_MAX ? INT_MAX : (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die_errno("poll");
		if (r == 0)
			break;
		if (recv(fd, buf, sizeof(buf), 0) < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			die_errno("recv");
		}
		received++;
	}
	close(fd);
	printf("received %lu\n", received);
	return received == o->count ? 0 : 2;
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
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .family = AF_INET, .count = 1, .timeout_s = 5 };
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
		default: usage(stderr); return 1;
		}
	}
	if (optind < argc)
		die("unexpected argument '%s'", argv[optind]);

	if (o.mode == M_UDP_LISTEN) {
		if (!o.port)
			die("udp-listen needs --port");
		return udp_listen(&o);
	}
	if (!o.dst)
		die("%s needs --dst", m);
	if (o.mode != M_ICMP && !o.dport)
		die("%s needs --dport", m);

	/* Unbuffered: a test may read our output while we still run. */
	setvbuf(stdout, NULL, _IONBF, 0);
	switch (o.mode) {
	case M_UDP: send_udp(&o); break;
	case M_TCP: send_tcp(&o); break;
	case M_ICMP: send_icmp(&o); break;
	case M_UDP_LISTEN: break;	/* handled above */
	}
	return 0;
}
