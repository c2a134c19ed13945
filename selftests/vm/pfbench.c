// SPDX-License-Identifier: GPL-2.0
/*
 * pfbench - the traffic of make bench: UDP request/response and a TCP
 * stream, for a fixed time, with a count of what went through.
 *
 *   pfbench udp-echo   --port N [--cpu N]
 *   pfbench tcp-sink   --port N [--cpu N]
 *   pfbench udp-rr     --dst ADDR --port N --seconds S [--size N] [--cpu N]
 *   pfbench tcp-stream --dst ADDR --port N --seconds S [--size N] [--cpu N]
 *   pfbench now
 *
 * The servers bind the wildcard address of ADDR's family (IPv6 with
 * IPV6_V6ONLY off, so both) and run until killed. udp-rr sends a --size
 * byte datagram (default 64), waits for the echo, and again, for S seconds
 * (one lost datagram costs a 100 ms timeout and is counted); tcp-stream
 * writes --size byte blocks (default 65536) for S seconds. The clients print
 * one line: "pfbench: MODE ops=N bytes=N lost=N seconds=F" (ops: echoed
 * transactions, or write() calls). "now" prints CLOCK_MONOTONIC in
 * nanoseconds, to time what happens between two calls. Exit status 0, 1 on
 * an error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MAX_SIZE 65536

static char buf[MAX_SIZE];

static void usage(void)
{
	fprintf(stderr,
		"usage: pfbench udp-echo|tcp-sink --port N [--cpu N]\n"
		"       pfbench udp-rr|tcp-stream --dst ADDR --port N --seconds S [--size N] [--cpu N]\n"
		"       pfbench now\n");
	exit(1);
}

static void die(const char *what)
{
	fprintf(stderr, "pfbench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static long number(const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < min || v > max) {
		fprintf(stderr, "pfbench: bad number '%s'\n", s);
		exit(1);
	}
	return v;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ADDR and PORT as a sockaddr; NULL ADDR: the IPv6 wildcard. */
static socklen_t sockaddr_of(const char *addr, int port,
			     struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (addr && strchr(addr, ':') == NULL) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		if (inet_pton(AF_INET, addr, &sin->sin_addr) != 1)
			goto bad;
		return sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		if (addr && inet_pton(AF_INET6, addr, &sin6->sin6_addr) != 1)
			goto bad;
		if (!addr)
			sin6->sin6_addr = in6addr_any;
		return sizeof(*sin6);
	}
bad:
	fprintf(stderr, "pfbench: bad address '%s'\n", addr);
	exit(1);
}

static int server_socket(int type, int port)
{
	struct sockaddr_storage ss;
	socklen_t len = sockaddr_of(NULL, port, &ss);
	int fd, off = 0, on = 1;

	fd = socket(AF_INET6, type, 0);
	if (fd < 0)
		die("socket");
	if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)) ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)))
		die("setsockopt");
	if (bind(fd, (struct sockaddr *)&ss, len))
		die("bind");
	return fd;
}

static void udp_echo(int port)
{
	int fd = server_socket(SOCK_DGRAM, port);

	for (;;) {
		struct sockaddr_storage from;
		socklen_t flen = sizeof(from);
		ssize_t n;

		n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &flen);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("recvfrom");
		}
		sendto(fd, buf, n, 0, (struct sockaddr *)&from, flen);
	}
}

static void tcp_sink(int port)
{
	int fd = server_socket(SOCK_STREAM, port);

	if (listen(fd, 16))
		die("listen");
	for (;;) {
		int c = accept(fd, NULL, NULL);

		if (c < 0) {
			if (errno == EINTR)
				continue;
			die("accept");
		}
		while (read(c, buf, sizeof(buf)) > 0)
			;
		close(c);
	}
}

static int client_socket(int type, const char *dst, int port)
{
	struct sockaddr_storage ss;
	socklen_t len = sockaddr_of(dst, port, &ss);
	int fd;

	fd = socket(ss.ss_family, type, 0);
	if (fd < 0)
		die("socket");
	if (connect(fd, (struct sockaddr *)&ss, len))
		die("connect");
	return fd;
}

static void udp_rr(const char *dst, int port, double seconds, int size)
{
	struct timeval tmo = { .tv_sec = 0, .tv_usec = 100000 };
	int fd = client_socket(SOCK_DGRAM, dst, port);
	long ops = 0, lost = 0;
	double t0 = now(), t;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo)))
		die("setsockopt");
	do {
		if (send(fd, buf, size, 0) != size)
			die("send");
		if (recv(fd, buf, sizeof(buf), 0) < 0) {
			if (errno != EAGAIN && errno != EINTR)
				die("recv");
			lost++;
		} else {
			ops++;
		}
		t = now() - t0;
	} while (t < seconds);
	printf("pfbench: udp-rr ops=%ld bytes=%ld lost=%ld seconds=%.3f\n",
	       ops, ops * size, lost, t);
}

static void tcp_stream(const char *dst, int port, double seconds, int size)
{
	int fd = client_socket(SOCK_STREAM, dst, port);
	long ops = 0, bytes = 0;
	double t0 = now(), t;

	do {
		ssize_t n = write(fd, buf, size);

		if (n < 0)
			die("write");
		ops++;
		bytes += n;
		t = now() - t0;
	} while (t < seconds);
	close(fd);
	printf("pfbench: tcp-stream ops=%ld bytes=%ld lost=0 seconds=%.3f\n",
	       ops, bytes, t);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dst", required_argument, NULL, 'd' },
		{ "port", required_argument, NULL, 'p' },
		{ "seconds", required_argument, NULL, 's' },
		{ "size", required_argument, NULL, 'z' },
		{ "cpu", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	const char *mode, *dst = NULL;
	int port = 0, size = 0, cpu = -1, o;
	double seconds = 0;

	if (argc < 2)
		usage();
	mode = argv[1];
	if (!strcmp(mode, "now") && argc == 2) {
		printf("%.0f\n", now() * 1e9);
		return 0;
	}
	optind = 2;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'd': dst = optarg; break;
		case 'p': port = number(optarg, 1, 65535); break;
		case 's': seconds = number(optarg, 1, 3600); break;
		case 'z': size = number(optarg, 1, MAX_SIZE); break;
		case 'c': cpu = number(optarg, 0, CPU_SETSIZE - 1); break;
		default: usage();
		}
	}
	if (optind != argc || !port)
		usage();
	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			die("sched_setaffinity");
	}
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (!strcmp(mode, "udp-echo")) {
		udp_echo(port);
	} else if (!strcmp(mode, "tcp-sink")) {
		tcp_sink(port);
	} else if (!strcmp(mode, "udp-rr") || !strcmp(mode, "tcp-stream")) {
		if (!dst || !seconds)
			usage();
		if (mode[0] == 'u')
			udp_rr(dst, port, seconds, size ? size : 64);
		else
			tcp_stream(dst, port, seconds, size ? size : MAX_SIZE);
	} else {
		usage();
	}
	return 0;
}
