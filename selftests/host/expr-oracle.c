// SPDX-License-Identifier: GPL-2.0
/*
 * The filter expressions' oracle (issue 15): a corpus of varied IPv4 and
 * IPv6 packets, a list of pcap-filter(7) expressions, and what libpcap in
 * user space decides for each pair. selftests/vm/tests/expr.sh injects the
 * corpus in a VM with each expression armed in the module (pktfilt set
 * --at rx) and compares the module's decisions with these, packet for
 * packet.
 *
 *	expr-oracle gen DIR	write DIR/corpus and DIR/cases
 *	expr-oracle --check DIR	regenerate them and compare with DIR's
 *				(and check the tool's compiler against
 *				libpcap's own); "expr-oracle: N passed, M
 *				failed"
 *
 * DIR is selftests/vm/expr (committed; selftests/host/expr-oracle-test
 * runs --check in make check, so the files are what this host's libpcap
 * decides).
 *
 * corpus: one packet a line, "N HEX DESCRIPTION", the packet from its IP
 * header on. N is its identity: packet N's source address is 10.77.0.N
 * (IPv4) or fd77::N (IPv6, N written in hex digits that read as the
 * decimal N), the saddr= of the module's pktfilt_packet event.
 *
 * cases: one case a line, "FLAGS<TAB>EXPRESSION<TAB>N N N ...": the
 * packets that match, in corpus order ("-": none; FLAGS "-": the expression
 * alone). The expected decision of an expression alone is libpcap's,
 * pcap_offline_filter() on the program pcap_compile() gives for DLT_RAW,
 * exactly what tcpdump would decide on these bytes. With FLAGS (pktfilt's
 * structured predicates, ANDed), the flags' part is computed here from the
 * packet's own description as the module's key sees it (the protocol after
 * IPv6 extension headers, no ports in a later fragment).
 */
#include <arpa/inet.h>
#include <pcap/pcap.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"

#define MAXPKT	64
#define PKTLEN	6000

struct pkt {
	int n;			/* identity: 10.77.0.N, fd77::N */
	int v6;
	int proto;		/* what the module's key says: after ext headers */
	int has_ports;		/* TCP/UDP and not a later fragment */
	int sport, dport;
	unsigned char b[PKTLEN];
	int len;
	char desc[96];
};

static struct pkt corpus[MAXPKT];
static int ncorpus;

/* The expressions: ports, ranges, nets, protocols, TCP flags, byte
 * offsets, IPv6, fragments, negation. */
static const char *const exprs[] = {
	"ip",
	"ip6",
	"tcp",
	"udp",
	"icmp",
	"icmp6",
	"tcp dst port 443",
	"port 53 or port 853",
	"udp and (port 53 or port 853)",
	"tcp portrange 1000-2000",
	"udp dst portrange 5000-5100",
	"src portrange 40000-40010",
	"src net 10.77.0.0/28",
	"dst net 10.9.0.0/24",
	"host 10.77.0.3 or host 10.77.0.22",
	"src host fd77::42 or dst host fd00::4",
	"ip6 and src net fd77::40/124",
	"tcp[tcpflags] & tcp-syn != 0",
	"tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn",
	"tcp[tcpflags] & (tcp-rst|tcp-fin) != 0",
	"tcp[13] = 0x18",
	"tcp dst port 443 and src net 10.77.0.0/26 and tcp[tcpflags] & tcp-syn != 0",
	"ip[8] < 5",
	"ip[1] & 0xfc = 0xb8",
	"ip[0] & 0xf != 5",
	"ip[6:2] & 0x1fff != 0",
	"ip[6] & 0x20 != 0",
	"ip[6:2] & 0x4000 != 0",
	"ip6[6] = 44",
	"ip6 and ip6[7] < 10",
	"ip6[0:4] & 0x0ff00000 = 0x0b800000",
	"icmp[icmptype] = icmp-echo",
	"icmp[icmptype] != icmp-echo and icmp[icmptype] != icmp-echoreply",
	"icmp6 and ip6[40] = 128",
	"icmp6 and ip6[40] >= 133 and ip6[40] <= 137",
	"ip proto 47 or ip proto 132",
	"ip multicast or ip6 multicast",
	"ip broadcast",
	"len > 200",
	"less 60",
	/* Ethernet padding after a short IPv4 packet is not the packet's. */
	"less 45",
	"ip[44] = 0",
	"udp[8:2] = 0x1234",
	"tcp[20:4] = 0x47455420",
	"not tcp",
	"not (src net 10.77.0.0/27) and ip",
	"(tcp or udp) and not port 53 and not port 443",
	"ip[9] = 17 and udp[2:2] >= 5000",
	"ip6 and tcp and ip6[53] & 0x12 = 0x02",
};

/* Expressions ANDed with pktfilt's structured predicates. */
static const struct {
	const char *flags;	/* as given to pktfilt set */
	int proto, dport;	/* -1: not given */
	const char *expr;
} anded[] = {
	{ "--proto udp", IPPROTO_UDP, -1, "port 53 or port 853" },
	{ "--proto udp", IPPROTO_UDP, -1, "ip6" },
	{ "--proto tcp --dport 443", IPPROTO_TCP, 443, "tcp[tcpflags] & tcp-syn != 0" },
	{ "--dport 53", -1, 53, "not ip[6:2] & 0x1fff != 0" },
	{ "--proto icmp", IPPROTO_ICMP, -1, "icmp[icmptype] = icmp-echo or ip[8] < 5" },
};

/* --- building packets --------------------------------------------------- */

static void put16(unsigned char *p, unsigned int v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static void put32(unsigned char *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xffff);
}

static uint32_t sum16(const unsigned char *p, int len, uint32_t s)
{
	int i;

	for (i = 0; i + 1 < len; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	return s;
}

static unsigned int fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return ~s & 0xffff;
}

/* A transport segment: what goes after the IP header(s). */
struct l4 {
	int proto;
	unsigned char b[PKTLEN];
	int len;
	int csum_off;		/* -1: none */
	int sport, dport;
};

/* TCP: flags, and @optlen bytes of options (a multiple of 4). */
static void tcp(struct l4 *s, int sport, int dport, int flags, int optlen,
		const char *data)
{
	int dlen = data ? (int)strlen(data) : 0, hl = 20 + optlen, i;

	memset(s, 0, sizeof(*s));
	s->proto = IPPROTO_TCP;
	s->sport = sport;
	s->dport = dport;
	put16(s->b, sport);
	put16(s->b + 2, dport);
	put32(s->b + 4, 0x10000000u + (uint32_t)sport * 7);
	put32(s->b + 8, flags & 0x10 ? 0x20000000u + (uint32_t)dport : 0);
	s->b[12] = (hl / 4) << 4;
	s->b[13] = flags;
	put16(s->b + 14, 64240);
	for (i = 0; i < optlen; i += 4) {
		if (i == 0) {		/* MSS 1460 */
			s->b[20] = 2;
			s->b[21] = 4;
			put16(s->b + 22, 1460);
		} else if (i + 4 == optlen && optlen >= 12) {	/* wscale */
			s->b[20 + i] = 1;
			s->b[21 + i] = 3;
			s->b[22 + i] = 3;
			s->b[23 + i] = 7;
		} else {		/* NOPs */
			memset(s->b + 20 + i, 1, 4);
		}
	}
	memcpy(s->b + hl, data ? data : "", dlen);
	s->len = hl + dlen;
	s->csum_off = 16;
}

/* UDP with @dlen bytes of payload, the first two 0x1234 when @magic. */
static void udp(struct l4 *s, int sport, int dport, int dlen, int magic)
{
	int i;

	memset(s, 0, sizeof(*s));
	s->proto = IPPROTO_UDP;
	s->sport = sport;
	s->dport = dport;
	put16(s->b, sport);
	put16(s->b + 2, dport);
	put16(s->b + 4, 8 + dlen);
	for (i = 0; i < dlen; i++)
		s->b[8 + i] = (unsigned char)(0x41 + i % 26);
	if (magic && dlen >= 2)
		put16(s->b + 8, 0x1234);
	s->len = 8 + dlen;
	s->csum_off = 6;
}

/* ICMP or ICMPv6 (@proto): type, code, @dlen bytes after the 8. */
static void icmp(struct l4 *s, int proto, int type, int code, int dlen)
{
	int i;

	memset(s, 0, sizeof(*s));
	s->proto = proto;
	s->b[0] = type;
	s->b[1] = code;
	put16(s->b + 4, 0x4242);	/* echo id, or unused */
	put16(s->b + 6, 1);
	for (i = 0; i < dlen; i++)
		s->b[8 + i] = (unsigned char)i;
	s->len = 8 + dlen;
	s->csum_off = 2;
}

/* Other protocols: @len bytes. */
static void rawl4(struct l4 *s, int proto, int len)
{
	int i;

	memset(s, 0, sizeof(*s));
	s->proto = proto;
	for (i = 0; i < len; i++)
		s->b[i] = (unsigned char)(i * 7);
	if (proto == 47)	/* GRE: no flags, IPv4 payload */
		put16(s->b + 2, 0x0800);
	s->len = len;
	s->csum_off = -1;
}

static struct pkt *newpkt(int n, int v6, const char *fmt, ...)
{
	struct pkt *p = &corpus[ncorpus++];
	va_list ap;

	if (ncorpus > MAXPKT) {
		fprintf(stderr, "expr-oracle: more than %d packets\n", MAXPKT);
		exit(2);
	}
	memset(p, 0, sizeof(*p));
	p->n = n;
	p->v6 = v6;
	va_start(ap, fmt);
	vsnprintf(p->desc, sizeof(p->desc), fmt, ap);
	va_end(ap);
	return p;
}

/*
 * The module's key (module/key.c): the protocol after IPv6's extension
 * headers as ipv6_skip_exthdr() finds it, which stops at the fragment
 * header of a later fragment (so its protocol is 44, where an IPv4 later
 * fragment's is its header's); ports only in an unfragmented packet or
 * a first fragment.
 */
static void key_of(struct pkt *p, const struct l4 *s, int later_frag)
{
	p->proto = p->v6 && later_frag ? 44 : s->proto;
	if (!later_frag && (s->proto == IPPROTO_TCP || s->proto == IPPROTO_UDP)) {
		p->has_ports = 1;
		p->sport = s->sport;
		p->dport = s->dport;
	}
}

/*
 * IPv4 packet N to @dst: TTL, TOS, the flags and fragment offset field
 * (@frag: 0x4000 DF, 0x2000 MF, offset in 8-byte units), options, the
 * segment (for a later fragment, @s's bytes from @frag's offset on, and
 * its checksum is left as is).
 */
static void ip4(int n, const char *dst, int ttl, int tos, int frag,
		const unsigned char *opt, int optlen, struct l4 *s,
		const char *desc)
{
	struct pkt *p = newpkt(n, 0, "%s", desc);
	unsigned char *h = p->b;
	int hl = 20 + optlen, off = (frag & 0x1fff) * 8, body;
	char src[32];

	snprintf(src, sizeof(src), "10.77.0.%d", n);
	h[0] = 0x40 | hl / 4;
	h[1] = tos;
	put16(h + 4, 0x1000 + n);
	put16(h + 6, frag);
	h[8] = ttl;
	h[9] = s->proto;
	inet_pton(AF_INET, src, h + 12);
	inet_pton(AF_INET, dst, h + 16);
	memcpy(h + 20, opt, optlen);
	if (s->csum_off >= 0 && !off) {
		unsigned char ph[12];

		memcpy(ph, h + 12, 8);
		ph[8] = 0;
		ph[9] = s->proto;
		put16(ph + 10, s->len);
		put16(s->b + s->csum_off, 0);
		put16(s->b + s->csum_off,
		      fold(sum16(s->b, s->len,
				 s->proto == IPPROTO_ICMP ? 0 : sum16(ph, 12, 0))));
	}
	body = s->len - off;
	if (frag & 0x2000 && body > 24)		/* a first or middle fragment */
		body = 24;
	memcpy(h + hl, s->b + off, body);
	p->len = hl + body;
	put16(h + 2, p->len);
	put16(h + 10, fold(sum16(h, hl, 0)));
	key_of(p, s, off != 0);
}

/* Extension headers for ip6(): their types, in order. */
#define EH_HBH	0
#define EH_DST	60
#define EH_RT	43
#define EH_FRAG	44

/*
 * IPv6 packet N to @dst: traffic class, flow label, hop limit, extension
 * headers @eh[0..neh) (a fragment header's offset is @fragoff in 8-byte
 * units, with M set when @more), then the segment (a later fragment: its
 * bytes from the offset on).
 */
static void ip6(int n, const char *dst, int tclass, unsigned int flow,
		int hlim, const int *eh, int neh, int fragoff, int more,
		struct l4 *s, const char *desc)
{
	struct pkt *p = newpkt(n, 1, "%s", desc);
	unsigned char *h = p->b, *e;
	int i, hl = 40, off = fragoff * 8, body;
	char src[32];

	snprintf(src, sizeof(src), "fd77::%d", n);
	put32(h, 0x60000000u | (uint32_t)tclass << 20 | (flow & 0xfffff));
	h[6] = neh ? eh[0] : s->proto;
	h[7] = hlim;
	inet_pton(AF_INET6, src, h + 8);
	inet_pton(AF_INET6, dst, h + 24);
	for (i = 0; i < neh; i++) {
		e = h + hl;
		memset(e, 0, 8);
		e[0] = i + 1 < neh ? eh[i + 1] : s->proto;
		switch (eh[i]) {
		case EH_HBH:
		case EH_DST:
			e[2] = 1;	/* PadN */
			e[3] = 4;
			break;
		case EH_RT:
			e[2] = 0;	/* type 0, no segments left */
			e[3] = 0;
			break;
		case EH_FRAG:
			put16(e + 2, (unsigned int)fragoff << 3 | (more ? 1 : 0));
			put32(e + 4, 0x77000000u + (uint32_t)n);
			break;
		}
		hl += 8;
	}
	if (s->csum_off >= 0 && !off) {
		unsigned char ph[40];

		memcpy(ph, h + 8, 32);
		put32(ph + 32, s->len);
		put32(ph + 36, s->proto);
		put16(s->b + s->csum_off, 0);
		put16(s->b + s->csum_off, fold(sum16(s->b, s->len, sum16(ph, 40, 0))));
	}
	body = s->len - off;
	if (more && body > 24)
		body = 24;
	memcpy(h + hl, s->b + off, body);
	p->len = hl + body;
	put16(h + 4, p->len - 40);
	key_of(p, s, off != 0);
}

#define F_FIN	0x01
#define F_SYN	0x02
#define F_RST	0x04
#define F_PSH	0x08
#define F_ACK	0x10
#define F_URG	0x20
#define F_ECE	0x40
#define F_CWR	0x80

static void build_corpus(void)
{
	static const unsigned char ra[] = { 0x94, 0x04, 0x00, 0x00 };
	static const unsigned char rr[] = { 0x01, 0x01, 0x07, 0x0b, 0x04,
					    0, 0, 0, 0, 0, 0, 0, 0x00, 0x00, 0x00, 0x00 };
	unsigned char ts[40];
	struct l4 s, in;
	int eh[4];

	memset(ts, 0, sizeof(ts));	/* timestamp: the most options there are */
	ts[0] = 0x44;
	ts[1] = 40;
	ts[2] = 5;

	/* IPv4: TCP. */
	tcp(&s, 40000, 443, F_SYN, 4, NULL);
	ip4(1, "10.9.0.2", 64, 0, 0x4000, NULL, 0, &s, "tcp SYN 40000>443, mss");
	tcp(&s, 443, 40001, F_SYN | F_ACK, 4, NULL);
	ip4(2, "10.9.0.2", 64, 0, 0x4000, NULL, 0, &s, "tcp SYN|ACK 443>40001");
	tcp(&s, 40002, 443, F_ACK, 0, NULL);
	ip4(3, "10.9.0.2", 64, 0, 0x4000, NULL, 0, &s, "tcp ACK 40002>443");
	tcp(&s, 40003, 80, F_PSH | F_ACK, 0, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
	ip4(4, "10.9.0.2", 64, 0, 0x4000, NULL, 0, &s, "tcp PSH|ACK 40003>80, GET");
	tcp(&s, 40004, 22, F_FIN | F_ACK, 0, NULL);
	ip4(5, "10.9.0.2", 64, 0, 0x4000, NULL, 0, &s, "tcp FIN|ACK 40004>22");
	tcp(&s, 40005, 1500, F_RST, 0, NULL);
	ip4(6, "10.9.0.2", 64, 0, 0, NULL, 0, &s, "tcp RST 40005>1500");
	tcp(&s, 999, 2000, F_SYN, 4, NULL);
	ip4(7, "10.9.0.2", 64, 0, 0x4000, NULL, 0, &s, "tcp SYN 999>2000");
	tcp(&s, 40007, 2001, F_SYN | F_ECE | F_CWR, 4, NULL);
	ip4(8, "10.9.0.2", 64, 0, 0x4000, NULL, 0, &s, "tcp SYN|ECE|CWR 40007>2001");
	tcp(&s, 1000, 8080, F_FIN | F_SYN | F_RST | F_PSH | F_ACK | F_URG, 0, NULL);
	ip4(9, "10.9.0.2", 64, 0, 0, NULL, 0, &s, "tcp all flags 1000>8080");
	tcp(&s, 12345, 3000, 0, 0, NULL);
	ip4(10, "10.9.0.2", 64, 0, 0, NULL, 0, &s, "tcp no flags 12345>3000");

	/* IPv4: UDP. */
	udp(&s, 40010, 53, 30, 1);
	ip4(11, "10.9.0.2", 64, 0, 0, NULL, 0, &s, "udp 40010>53, 0x1234");
	udp(&s, 53, 40011, 300, 0);
	ip4(12, "10.9.0.2", 64, 0, 0, NULL, 0, &s, "udp 53>40011, 300 bytes");
	udp(&s, 40012, 853, 40, 0);
	ip4(13, "10.9.0.2", 64, 0, 0x4000, NULL, 0, &s, "udp 40012>853");
	udp(&s, 40013, 5000, 20, 1);
	ip4(14, "10.9.0.2", 64, 0, 0, NULL, 0, &s, "udp 40013>5000, 0x1234");
	udp(&s, 40014, 5100, 20, 0);
	ip4(15, "10.9.0.2", 64, 0, 0, NULL, 0, &s, "udp 40014>5100");
	udp(&s, 40015, 5101, 20, 0);
	ip4(16, "10.9.0.2", 64, 0, 0, NULL, 0, &s, "udp 40015>5101");
	udp(&s, 40016, 4999, 20, 0);
	ip4(17, "10.9.0.2", 64, 0, 0, NULL, 0, &s, "udp 40016>4999");
	udp(&s, 5353, 5353, 40, 0);
	ip4(18, "224.0.0.251", 255, 0, 0, NULL, 0, &s, "udp 5353>5353 to 224.0.0.251");
	udp(&s, 40018, 9000, 12, 0);
	ip4(19, "10.9.0.2", 1, 0, 0, NULL, 0, &s, "udp 40018>9000, ttl 1");
	udp(&s, 40019, 123, 48, 0);
	ip4(20, "10.9.0.2", 3, 0xb8, 0, NULL, 0, &s, "udp 40019>123, tos 0xb8, ttl 3");

	/* IPv4: ICMP. */
	icmp(&s, IPPROTO_ICMP, 8, 0, 56);
	ip4(21, "10.9.0.2", 64, 0, 0x4000, NULL, 0, &s, "icmp echo request");
	icmp(&s, IPPROTO_ICMP, 0, 0, 56);
	ip4(22, "10.9.0.2", 64, 0, 0, NULL, 0, &s, "icmp echo reply");
	icmp(&s, IPPROTO_ICMP, 3, 3, 0);
	udp(&in, 53, 40022, 0, 0);	/* the quoted datagram: IP + 8 bytes */
	{
		unsigned char *q = s.b + 8;

		q[0] = 0x45;
		put16(q + 2, 28);
		q[8] = 64;
		q[9] = IPPROTO_UDP;
		inet_pton(AF_INET, "10.9.0.2", q + 12);
		inet_pton(AF_INET, "10.77.0.23", q + 16);
		put16(q + 10, fold(sum16(q, 20, 0)));
		memcpy(q + 20, in.b, 8);
		s.len = 8 + 28;
	}
	ip4(23, "10.9.0.2", 64, 0xc0, 0, NULL, 0, &s, "icmp port unreachable, quoting udp 53>40022");
	icmp(&s, IPPROTO_ICMP, 11, 0, 28);
	ip4(24, "10.9.0.2", 64, 0xc0, 0, NULL, 0, &s, "icmp time exceeded");
	icmp(&s, IPPROTO_ICMP, 8, 0, 1000);
	ip4(25, "10.9.0.2", 64, 0, 0x4000, NULL, 0, &s, "icmp echo request, 1000 bytes");

	/* IPv4: options. */
	udp(&s, 40026, 53, 20, 0);
	ip4(26, "10.9.0.2", 1, 0, 0, ra, sizeof(ra), &s, "udp 40026>53, router alert, ttl 1");
	tcp(&s, 40027, 443, F_SYN, 4, NULL);
	ip4(27, "10.9.0.2", 64, 0, 0x4000, rr, sizeof(rr), &s, "tcp SYN 40027>443, record route");
	tcp(&s, 40028, 443, F_ACK, 0, NULL);
	ip4(28, "10.9.0.4", 64, 0, 0x4000, ts, sizeof(ts), &s, "tcp ACK 40028>443, 40 bytes of options");

	/* IPv4: fragments. */
	udp(&s, 40029, 53, 60, 0);
	ip4(29, "10.9.0.2", 64, 0, 0x2000, NULL, 0, &s, "udp 40029>53, first fragment");
	udp(&s, 40030, 53, 60, 0);
	put16(s.b + 24, 53);		/* "port 53" at the later fragment's start */
	put16(s.b + 26, 53);
	ip4(30, "10.9.0.2", 64, 0, 3, NULL, 0, &s, "udp, last fragment at 24, 53 53 where ports were");
	tcp(&s, 40031, 443, F_SYN | F_ACK, 0, "........................................");
	ip4(31, "10.9.0.2", 64, 0, 0x2000 | 2, NULL, 0, &s, "tcp, middle fragment at 16");

	/* IPv4: others. */
	tcp(&s, 40032, 443, F_SYN, 12, NULL);
	ip4(32, "10.9.0.4", 64, 0x10, 0x4000, NULL, 0, &s, "tcp SYN 40032>443 to 10.9.0.4, tos 0x10, mss nop wscale");
	rawl4(&s, 47, 24);
	ip4(33, "10.9.0.2", 64, 0, 0, NULL, 0, &s, "gre");
	tcp(&s, 40034, 443, F_SYN, 4, NULL);
	ip4(34, "192.0.2.7", 64, 0, 0x4000, NULL, 0, &s, "tcp SYN 40034>443 to 192.0.2.7");
	tcp(&s, 40035, 443, F_ACK | F_URG, 20, NULL);
	ip4(35, "10.9.0.2", 255, 0, 0x4000, NULL, 0, &s, "tcp ACK|URG 40035>443, 20 bytes of options, ttl 255");
	udp(&s, 40036, 7, 0, 0);
	ip4(36, "10.9.0.2", 64, 0, 0, NULL, 0, &s, "udp 40036>7, empty");
	icmp(&s, IPPROTO_ICMP, 8, 0, 0);
	ip4(37, "10.9.0.2", 2, 0x04, 0, NULL, 0, &s, "icmp echo request, ttl 2, tos 0x04, 28 bytes");
	rawl4(&s, 132, 28);
	ip4(38, "10.9.0.2", 64, 0, 0x4000, NULL, 0, &s, "sctp (bytes)");
	udp(&s, 40039, 67, 20, 0);
	ip4(39, "255.255.255.255", 64, 0, 0, NULL, 0, &s, "udp 40039>67 to 255.255.255.255");

	/* IPv6. */
	tcp(&s, 40041, 443, F_SYN, 4, NULL);
	ip6(41, "fd00::2", 0, 0, 64, NULL, 0, 0, 0, &s, "tcp SYN 40041>443");
	tcp(&s, 443, 40042, F_SYN | F_ACK, 4, NULL);
	ip6(42, "fd00::2", 0, 0, 64, NULL, 0, 0, 0, &s, "tcp SYN|ACK 443>40042");
	tcp(&s, 40043, 80, F_PSH | F_ACK, 0, "GET /index.html HTTP/1.1\r\n\r\n");
	ip6(43, "fd00::2", 0, 0x54321, 64, NULL, 0, 0, 0, &s, "tcp PSH|ACK 40043>80, GET, flow 0x54321");
	udp(&s, 40044, 53, 30, 1);
	ip6(44, "fd00::2", 0, 0, 64, NULL, 0, 0, 0, &s, "udp 40044>53, 0x1234");
	udp(&s, 40045, 853, 30, 0);
	ip6(45, "fd00::2", 0, 0, 64, NULL, 0, 0, 0, &s, "udp 40045>853");
	udp(&s, 40046, 5050, 30, 0);
	ip6(46, "fd00::4", 0, 0, 64, NULL, 0, 0, 0, &s, "udp 40046>5050 to fd00::4");
	icmp(&s, IPPROTO_ICMPV6, 128, 0, 56);
	ip6(47, "fd00::2", 0, 0, 64, NULL, 0, 0, 0, &s, "icmp6 echo request");
	icmp(&s, IPPROTO_ICMPV6, 129, 0, 56);
	ip6(48, "fd00::2", 0, 0, 64, NULL, 0, 0, 0, &s, "icmp6 echo reply");
	icmp(&s, IPPROTO_ICMPV6, 135, 0, 16);
	inet_pton(AF_INET6, "fd00::2", s.b + 8);
	ip6(49, "ff02::1:ff00:2", 0, 0, 255, NULL, 0, 0, 0, &s, "icmp6 neighbour solicitation");
	icmp(&s, IPPROTO_ICMPV6, 1, 4, 48);
	ip6(50, "fd00::2", 0, 0, 64, NULL, 0, 0, 0, &s, "icmp6 port unreachable");
	eh[0] = EH_HBH;
	udp(&s, 40051, 53, 20, 0);
	ip6(51, "fd00::2", 0, 0, 1, eh, 1, 0, 0, &s, "hop-by-hop, udp 40051>53, hop limit 1");
	eh[0] = EH_DST;
	tcp(&s, 40052, 443, F_SYN, 4, NULL);
	ip6(52, "fd00::2", 0, 0, 64, eh, 1, 0, 0, &s, "destination options, tcp SYN 40052>443");
	eh[0] = EH_FRAG;
	udp(&s, 40053, 53, 60, 0);
	ip6(53, "fd00::2", 0, 0, 64, eh, 1, 0, 1, &s, "fragment header, first fragment, udp 40053>53");
	udp(&s, 40054, 53, 60, 0);
	ip6(54, "fd00::2", 0, 0, 64, eh, 1, 2, 0, &s, "fragment header, last fragment at 16, udp");
	eh[0] = EH_RT;
	tcp(&s, 40055, 22, F_SYN, 0, NULL);
	ip6(55, "fd00::2", 0, 0, 64, eh, 1, 0, 0, &s, "routing header, tcp SYN 40055>22");
	udp(&s, 40056, 123, 48, 0);
	ip6(56, "fd00::2", 0xb8, 0x12345, 64, NULL, 0, 0, 0, &s, "udp 40056>123, class 0xb8, flow 0x12345");
	udp(&s, 40057, 9000, 1200, 0);
	ip6(57, "fd00::2", 0, 0, 64, NULL, 0, 0, 0, &s, "udp 40057>9000, 1200 bytes");
	icmp(&s, IPPROTO_ICMPV6, 128, 0, 8);
	ip6(58, "fd00::4", 0, 0, 2, NULL, 0, 0, 0, &s, "icmp6 echo request to fd00::4, hop limit 2");
	eh[0] = EH_HBH;
	eh[1] = EH_DST;
	eh[2] = EH_FRAG;
	tcp(&s, 40059, 443, F_SYN, 4, NULL);
	ip6(59, "fd00::2", 0, 0, 64, eh, 3, 0, 1, &s, "hop-by-hop, dst options, first fragment, tcp SYN 40059>443");
	udp(&s, 5353, 5353, 40, 0);
	ip6(60, "ff02::fb", 0, 0, 255, NULL, 0, 0, 0, &s, "udp 5353>5353 to ff02::fb");

	/*
	 * Non-linear at the hooks: an AF_PACKET send of a page or more puts
	 * all but the first 14 bytes in page fragments (packet_alloc_skb()),
	 * so the headers are not in the linear part at rx (the VM's veths
	 * have a 9000-byte MTU for them).
	 */
	icmp(&s, IPPROTO_ICMP, 8, 0, 5000);
	ip4(61, "10.9.0.2", 64, 0, 0x4000, NULL, 0, &s, "icmp echo request, 5000 bytes, non-linear");
	udp(&s, 40062, 53, 4800, 1);
	ip6(62, "fd00::2", 0, 0, 64, NULL, 0, 0, 0, &s, "udp 40062>53, 4800 bytes, non-linear");
}

/* --- the decisions ------------------------------------------------------ */

static char *out;
static size_t outlen, outcap;

static void emit(const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(out + outlen, outcap - outlen, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < outcap - outlen)
			break;
		outcap = outcap * 2 + (size_t)n + 4096;
		out = realloc(out, outcap);
		if (!out)
			exit(2);
	}
	outlen += (size_t)n;
}

static int failed, passed;

static void result(int good, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", good ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (good)
		passed++;
	else
		failed++;
}

/*
 * libpcap's decision for every packet (@match), and the tool's compiler
 * and interpreter (tool/expr.c) checked against it. Returns how many match.
 */
static int decide(const char *expr, int *match, int check)
{
	static struct sock_filter insns[PF_BPF_MAX];
	struct bpf_program prog;
	struct pcap_pkthdr hdr;
	char err[512];
	pcap_t *p;
	unsigned int n, i;
	int k, m = 0, same = 1;

	p = pcap_open_dead(DLT_RAW, 65535);
	/* Netmask 0: tcpdump's when it reads a file, as tool/expr.c. */
	if (!p || pcap_compile(p, &prog, expr, 1, 0)) {
		fprintf(stderr, "expr-oracle: '%s': %s\n", expr, p ? pcap_geterr(p) : "pcap_open_dead");
		exit(2);
	}
	n = pf_expr_compile(expr, insns, err, sizeof(err));
	if (n != prog.bf_len)
		same = 0;
	for (i = 0; same && i < n; i++)
		same = insns[i].code == prog.bf_insns[i].code &&
		       insns[i].jt == prog.bf_insns[i].jt &&
		       insns[i].jf == prog.bf_insns[i].jf &&
		       insns[i].k == prog.bf_insns[i].k;
	for (k = 0; k < ncorpus; k++) {
		memset(&hdr, 0, sizeof(hdr));
		hdr.caplen = hdr.len = (bpf_u_int32)corpus[k].len;
		match[k] = pcap_offline_filter(&prog, &hdr, corpus[k].b) != 0;
		if (n && !!pf_expr_run(insns, n, corpus[k].b, (unsigned int)corpus[k].len) != match[k])
			same = 0;
		m += match[k];
	}
	if (check) {
		result(same, "'%s': tool/expr.c compiles libpcap's program (%u instructions) and runs it as pcap_offline_filter()",
		       expr, prog.bf_len);
		result(m > 0 && m < ncorpus, "'%s': matches %d of the %d packets (some, not all)",
		       expr, m, ncorpus);
	}
	pcap_freecode(&prog);
	pcap_close(p);
	return m;
}

static void emit_ids(const int *match)
{
	int k, any = 0;

	for (k = 0; k < ncorpus; k++) {
		if (match[k]) {
			emit("%s%d", any ? " " : "", corpus[k].n);
			any = 1;
		}
	}
	emit("%s\n", any ? "" : "-");
}

static void generate(int check, char **corpus_txt, char **cases_txt)
{
	int match[MAXPKT], k, i;
	size_t e;

	out = NULL;
	outlen = outcap = 0;
	emit("# The filter expressions' oracle corpus, written by selftests/host/expr-oracle\n"
	     "# (do not edit: change that and run it with gen). One packet a line, from\n"
	     "# its IP header on: N HEX DESCRIPTION; its source is 10.77.0.N or fd77::N.\n");
	for (k = 0; k < ncorpus; k++) {
		emit("%d ", corpus[k].n);
		for (i = 0; i < corpus[k].len; i++)
			emit("%02x", corpus[k].b[i]);
		emit(" %s %s\n", corpus[k].v6 ? "ip6" : "ip", corpus[k].desc);
	}
	*corpus_txt = out;

	out = NULL;
	outlen = outcap = 0;
	emit("# The filter expressions' oracle cases, written by selftests/host/expr-oracle\n"
	     "# (do not edit). FLAGS<TAB>EXPRESSION<TAB>the packets (N of corpus) that match:\n"
	     "# libpcap's decisions (pcap_offline_filter), ANDed with pktfilt's FLAGS.\n");
	for (e = 0; e < sizeof(exprs) / sizeof(exprs[0]); e++) {
		decide(exprs[e], match, check);
		emit("-\t%s\t", exprs[e]);
		emit_ids(match);
	}
	for (e = 0; e < sizeof(anded) / sizeof(anded[0]); e++) {
		decide(anded[e].expr, match, 0);
		for (k = 0; k < ncorpus; k++) {
			const struct pkt *p = &corpus[k];

			if (anded[e].proto >= 0 && p->proto != anded[e].proto)
				match[k] = 0;
			if (anded[e].dport >= 0 && (!p->has_ports || p->dport != anded[e].dport))
				match[k] = 0;
		}
		emit("%s\t%s\t", anded[e].flags, anded[e].expr);
		emit_ids(match);
	}
	*cases_txt = out;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static int spill(const char *dir, const char *name, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		perror(path);
		return 1;
	}
	return 0;
}

/* The first line where @want and @got differ, for the message. */
static void first_diff(const char *name, const char *want, const char *got)
{
	int line = 1;

	while (*want && *want == *got) {
		if (*want == '\n')
			line++;
		want++;
		got++;
	}
	printf("# %s: line %d differs: the file has '%.80s', this host's libpcap gives '%.80s'\n",
	       name, line, got, want);
}

int main(int argc, char **argv)
{
	char *corpus_txt, *cases_txt, *old, path[4096];
	int check;
	const char *dir;

	if (argc != 3 || (strcmp(argv[1], "gen") && strcmp(argv[1], "--check"))) {
		fprintf(stderr, "usage: expr-oracle gen|--check DIR\n");
		return 2;
	}
	check = !strcmp(argv[1], "--check");
	dir = argv[2];
	build_corpus();
	generate(check, &corpus_txt, &cases_txt);
	if (!check)
		return spill(dir, "corpus", corpus_txt) || spill(dir, "cases", cases_txt);

	snprintf(path, sizeof(path), "%s/corpus", dir);
	old = slurp(path);
	result(old && !strcmp(old, corpus_txt), "%s is what expr-oracle builds", path);
	if (old && strcmp(old, corpus_txt))
		first_diff("corpus", corpus_txt, old);
	free(old);
	snprintf(path, sizeof(path), "%s/cases", dir);
	old = slurp(path);
	result(old && !strcmp(old, cases_txt), "%s holds this host's libpcap's decisions", path);
	if (old && strcmp(old, cases_txt))
		first_diff("cases", cases_txt, old);
	free(old);
	printf("expr-oracle: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
