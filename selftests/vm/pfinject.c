// SPDX-License-Identifier: GPL-2.0
/*
 * pfinject: sends IP packets given in hex as Ethernet frames, in order.
 *
 *	pfinject --dev IFNAME --dst-mac MAC [--only N[,N...]] FILE
 *
 * FILE (or - for stdin) holds one packet a line, "N HEX [ANYTHING]", the
 * packet from its IP header on (selftests/vm/expr/corpus); lines starting
 * with # and empty lines are skipped. Each goes out of IFNAME through an
 * AF_PACKET socket (SOCK_DGRAM: the kernel adds the Ethernet header, to
 * MAC, EtherType IPv4 or IPv6 by the packet's version nibble), so it
 * reaches the peer's ip_rcv()/ipv6_rcv() as these bytes. --only sends
 * just the packets numbered N. --pad pads each frame with zeros to
 * Ethernet's minimum (46 bytes after the header), as a NIC does: the IP
 * layer trims it. Prints "sent K" on success; exit status 1 on any error.
 *
 *	pfinject --raw --dev IFNAME [--only N[,N...]] FILE
 *
 * sends each packet from this network namespace through a raw IP socket
 * with its own header (IP_HDRINCL; IPv6's IPPROTO_RAW), bound to IFNAME,
 * to the packet's destination: the packets are locally generated and pass
 * netfilter's LOCAL_OUT as these bytes (IPv4: the kernel rewrites the total
 * length and the checksum, as they are). Prints "sent K" and, for the
 * packets the kernel refused, "unsent N,N..."; exit status 1 on any other
 * error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "pfinject: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "%s%s\n", errno ? ": " : "", errno ? strerror(errno) : "");
	exit(1);
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Is @n in the comma-separated list @only (NULL: every packet)? */
static int wanted(const char *only, long n)
{
	const char *p = only;
	char *end;

	if (!only)
		return 1;
	while (*p) {
		if (strtol(p, &end, 10) == n && end != p)
			return 1;
		p = *end ? end + 1 : end;
	}
	return 0;
}

/* Sends @pkt through a raw socket (fd4, fd6) to its destination. */
static int send_raw(int fd4, int fd6, unsigned int ifindex,
		    const unsigned char *pkt, size_t len)
{
	struct sockaddr_in6 sin6;
	struct sockaddr_in sin;

	if (pkt[0] >> 4 == 6) {
		if (len < 40)
			return -1;
		memset(&sin6, 0, sizeof(sin6));
		sin6.sin6_family = AF_INET6;
		memcpy(&sin6.sin6_addr, pkt + 24, 16);
		/* Link-local and multicast need the interface. */
		sin6.sin6_scope_id = ifindex;
		return sendto(fd6, pkt, len, 0, (struct sockaddr *)&sin6,
			      sizeof(sin6)) == (ssize_t)len ? 0 : -1;
	}
	if (len < 20)
		return -1;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	memcpy(&sin.sin_addr, pkt + 16, 4);
	return sendto(fd4, pkt, len, 0, (struct sockaddr *)&sin,
		      sizeof(sin)) == (ssize_t)len ? 0 : -1;
}

/* A raw socket of @family with its own IP header, bound to @dev. */
static int raw_socket(int family, const char *dev)
{
	int one = 1, fd = socket(family, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);

	if (fd < 0)
		die("socket(%s, SOCK_RAW)", family == AF_INET ? "AF_INET" : "AF_INET6");
	if (family == AF_INET &&
	    setsockopt(fd, IPPROTO_IP, IP_HDRINCL, &one, sizeof(one)))
		die("IP_HDRINCL%s", "");
	if (setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, dev, (socklen_t)strlen(dev) + 1))
		die("SO_BINDTODEVICE %s", dev);
	/* Multicast to the bound interface, as to any other address. */
	if (family == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, &(int){ (int)if_nametoindex(dev) },
		       sizeof(int)))
		die("IPV6_MULTICAST_IF%s", "");
	return fd;
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *only = NULL, *file = NULL;
	unsigned char mac[6], pkt[9000];
	static char line[32768], unsent[4096];
	int raw = 0, pad = 0, fd4 = -1, fd6 = -1;
	struct sockaddr_ll sll;
	unsigned int m[6];
	long n, sent = 0;
	char *p, *end;
	size_t len;
	FILE *f;
	int i, fd = -1, hi, lo;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--dev") && i + 1 < argc)
			dev = argv[++i];
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "--raw"))
			raw = 1;
		else if (!strcmp(argv[i], "--pad"))
			pad = 1;
		else if (!strcmp(argv[i], "--dst-mac") && i + 1 < argc) {
			if (sscanf(argv[++i], "%x:%x:%x:%x:%x:%x", &m[0], &m[1],
				   &m[2], &m[3], &m[4], &m[5]) != 6)
				die("bad --dst-mac '%s'", argv[i]);
			for (hi = 0; hi < 6; hi++)
				mac[hi] = (unsigned char)m[hi];
		} else if (!file && argv[i][0] != '-')
			file = argv[i];
		else if (!file && !strcmp(argv[i], "-"))
			file = argv[i];
		else
			die("usage: pfinject --dev IFNAME {--dst-mac MAC [--pad] | --raw} [--only N,...] FILE (not '%s')",
			    argv[i]);
	}
	errno = 0;
	if (!dev || !file || i != argc)
		die("usage: pfinject --dev IFNAME {--dst-mac MAC [--pad] | --raw} [--only N,...] FILE%s", "");
	f = strcmp(file, "-") ? fopen(file, "r") : stdin;
	if (!f)
		die("%s", file);
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_ifindex = (int)if_nametoindex(dev);
	if (!sll.sll_ifindex)
		die("interface %s", dev);
	if (raw) {
		fd4 = raw_socket(AF_INET, dev);
		fd6 = raw_socket(AF_INET6, dev);
	} else {
		fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, 0);	/* send only */
		if (fd < 0)
			die("socket(AF_PACKET)%s", "");
	}
	sll.sll_halen = 6;
	memcpy(sll.sll_addr, mac, 6);

	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		errno = 0;
		n = strtol(line, &end, 10);
		if (end == line || *end != ' ')
			die("bad line '%.40s'", line);
		if (!wanted(only, n))
			continue;
		p = end + 1;
		for (len = 0; (hi = hexval(p[0])) >= 0 && (lo = hexval(p[1])) >= 0; p += 2) {
			if (len == sizeof(pkt))
				die("packet too long: '%.40s'", line);
			pkt[len++] = (unsigned char)(hi << 4 | lo);
		}
		if (!len || (*p && *p != ' ' && *p != '\n'))
			die("bad hex in '%.40s'", line);
		if (raw) {
			if (send_raw(fd4, fd6, (unsigned int)sll.sll_ifindex, pkt, len)) {
				size_t u = strlen(unsent);

				snprintf(unsent + u, sizeof(unsent) - u, "%s%ld", u ? "," : "", n);
			} else {
				sent++;
			}
			continue;
		}
		/* Ethernet's minimum payload, as a NIC pads a short frame. */
		while (pad && len < 46)
			pkt[len++] = 0;
		sll.sll_protocol = htons(pkt[0] >> 4 == 6 ? ETH_P_IPV6 : ETH_P_IP);
		if (sendto(fd, pkt, len, 0, (struct sockaddr *)&sll, sizeof(sll)) != (ssize_t)len)
			die("sendto, packet '%.10s'", line);
		sent++;
	}
	if (ferror(f))
		die("reading %s", file);
	printf("sent %ld\n", sent);
	if (unsent[0])
		printf("unsent %s\n", unsent);
	return 0;
}
