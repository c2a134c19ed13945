// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the predicate matcher, common/match.c, the very code the
 * module runs. Each predicate alone, then together; for every comparison
 * the matching value and its nearest misses.
 */
#include <arpa/inet.h>
#include <string.h>

#include "kselftest_harness.h"
#include "match.h"

#define TCP	6
#define UDP	17
#define ICMP	1
#define ICMPV6	58

static void set_addr(__u8 *dst, const char *s)
{
	memset(dst, 0, 16);
	if (strchr(s, ':'))
		inet_pton(AF_INET6, s, dst);
	else
		inet_pton(AF_INET, s, dst);
}

static struct pf_key key(__u8 proto, const char *saddr, const char *daddr,
			 __u16 sport, __u16 dport)
{
	struct pf_key k;

	memset(&k, 0, sizeof(k));
	k.family = strchr(saddr, ':') ? PF_FAMILY_IPV6 : PF_FAMILY_IPV4;
	k.proto = proto;
	k.has_ports = proto == TCP || proto == UDP;
	set_addr(k.saddr, saddr);
	set_addr(k.daddr, daddr);
	k.sport = sport;
	k.dport = dport;
	k.ifindex = 2;
	k.netns = 4026531840u;
	return k;
}

static void pred(struct pf_addr_pred *p, const char *addr, int plen)
{
	memset(p, 0, sizeof(*p));
	p->family = strchr(addr, ':') ? PF_FAMILY_IPV6 : PF_FAMILY_IPV4;
	p->plen = (__u8)plen;
	set_addr(p->addr, addr);
}

static void ports(struct pf_port_pred *p, __u16 min, __u16 max)
{
	p->set = 1;
	p->min = min;
	p->max = max;
}

/* Flip bit @bit (0 = most significant) of an address. */
static void flip(__u8 *addr, int bit)
{
	addr[bit / 8] ^= (__u8)(0x80 >> (bit % 8));
}

TEST(empty_spec_matches_everything)
{
	struct pf_spec s;
	struct pf_key k;

	memset(&s, 0, sizeof(s));
	k = key(TCP, "10.0.0.1", "10.0.0.2", 1, 2);
	EXPECT_EQ(1, pf_match(&s, &k));
	k = key(UDP, "2001:db8::1", "2001:db8::2", 53, 53);
	EXPECT_EQ(1, pf_match(&s, &k));
	k = key(ICMP, "192.0.2.1", "192.0.2.2", 0, 0);
	EXPECT_EQ(1, pf_match(&s, &k));
	k = key(ICMPV6, "::1", "::1", 0, 0);
	EXPECT_EQ(1, pf_match(&s, &k));
	EXPECT_EQ(1, pf_spec_valid(&s));
}

TEST(proto_alone)
{
	static const __u8 protos[] = { TCP, UDP, ICMP, ICMPV6 };
	struct pf_spec s;
	struct pf_key k;
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(protos); i++) {
		memset(&s, 0, sizeof(s));
		s.proto = protos[i];
		for (j = 0; j < ARRAY_SIZE(protos); j++) {
			const char *a = protos[j] == ICMPV6 ? "::1" : "10.0.0.1";

			k = key(protos[j], a, a, 0, 0);
			EXPECT_EQ(i == j, pf_match(&s, &k)) {
				TH_LOG("spec proto %u, packet proto %u",
				       protos[i], protos[j]);
			}
		}
	}
	/* TCP over IPv6 too: proto says nothing about the family. */
	s.proto = TCP;
	k = key(TCP, "2001:db8::1", "2001:db8::2", 1, 2);
	EXPECT_EQ(1, pf_match(&s, &k));
}

TEST(saddr_v4_exact_and_one_bit_off)
{
	struct pf_spec s;
	struct pf_key k = key(TCP, "192.0.2.1", "198.51.100.7", 1000, 80);
	int bit;

	memset(&s, 0, sizeof(s));
	pred(&s.saddr, "192.0.2.1", 32);
	EXPECT_EQ(1, pf_match(&s, &k));
	for (bit = 0; bit < 32; bit++) {
		struct pf_key near = k;

		flip(near.saddr, bit);
		EXPECT_EQ(0, pf_match(&s, &near)) {
			TH_LOG("bit %d flipped still matches", bit);
		}
	}
	/* The destination is not the source. */
	k = key(TCP, "198.51.100.7", "192.0.2.1", 1000, 80);
	EXPECT_EQ(0, pf_match(&s, &k));
}

TEST(daddr_v6_exact_and_one_bit_off)
{
	struct pf_spec s;
	struct pf_key k = key(UDP, "2001:db8::1", "2001:db8:0:1::53", 5353, 53);
	int bit;

	memset(&s, 0, sizeof(s));
	pred(&s.daddr, "2001:db8:0:1::53", 128);
	EXPECT_EQ(1, pf_match(&s, &k));
	for (bit = 0; bit < 128; bit++) {
		struct pf_key near = k;

		flip(near.daddr, bit);
		EXPECT_EQ(0, pf_match(&s, &near)) {
			TH_LOG("bit %d flipped still matches", bit);
		}
	}
	k = key(UDP, "2001:db8:0:1::53", "2001:db8::1", 53, 5353);
	EXPECT_EQ(0, pf_match(&s, &k));
}

/*
 * For a prefix of length L: flipping the last bit inside it (L-1) must
 * miss, flipping the first bit after it (L) must still match.
 */
static int prefix_edges(struct __test_metadata *_metadata, const char *addr,
			int plen, int bits)
{
	struct pf_spec s;
	struct pf_key k, near;
	int ok = 1;

	memset(&s, 0, sizeof(s));
	pred(&s.saddr, addr, plen);
	k = key(TCP, addr, addr, 1, 1);
	if (!pf_match(&s, &k)) {
		TH_LOG("%s/%d does not match itself", addr, plen);
		ok = 0;
	}
	if (plen > 0) {
		near = k;
		flip(near.saddr, plen - 1);
		if (pf_match(&s, &near)) {
			TH_LOG("%s/%d: bit %d flipped still matches", addr,
			       plen, plen - 1);
			ok = 0;
		}
	}
	if (plen < bits) {
		near = k;
		flip(near.saddr, plen);
		if (!pf_match(&s, &near)) {
			TH_LOG("%s/%d: bit %d (outside) flipped misses", addr,
			       plen, plen);
			ok = 0;
		}
	}
	if (!pf_spec_valid(&s)) {
		TH_LOG("%s/%d not valid", addr, plen);
		ok = 0;
	}
	return ok;
}

TEST(prefix_edges_v4)
{
	static const int lens[] = { 0, 1, 7, 8, 9, 31, 32 };
	size_t i;
	int plen;

	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		EXPECT_EQ(1, prefix_edges(_metadata, "10.0.0.0", lens[i], 32));
		EXPECT_EQ(1, prefix_edges(_metadata, "255.255.255.255",
					  lens[i], 32));
	}
	for (plen = 0; plen <= 32; plen++)
		EXPECT_EQ(1, prefix_edges(_metadata, "192.0.2.129", plen, 32));
}

TEST(prefix_edges_v6)
{
	static const int lens[] = { 0, 1, 7, 8, 9, 31, 32, 127, 128 };
	size_t i;
	int plen;

	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		EXPECT_EQ(1, prefix_edges(_metadata, "2001:db8::", lens[i],
					  128));
		EXPECT_EQ(1, prefix_edges(_metadata,
			"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", lens[i], 128));
	}
	for (plen = 0; plen <= 128; plen++)
		EXPECT_EQ(1, prefix_edges(_metadata, "2001:db8:8000::8001",
					  plen, 128));
}

TEST(prefix_known_values)
{
	struct pf_spec s;
	struct pf_key k;

	memset(&s, 0, sizeof(s));
	pred(&s.daddr, "10.0.0.0", 7);		/* 10 and 11 */
	k = key(TCP, "1.1.1.1", "11.255.0.1", 1, 1);
	EXPECT_EQ(1, pf_match(&s, &k));
	k = key(TCP, "1.1.1.1", "12.0.0.0", 1, 1);
	EXPECT_EQ(0, pf_match(&s, &k));
	pred(&s.daddr, "10.0.0.0", 9);		/* 10.0-127 */
	k = key(TCP, "1.1.1.1", "10.127.255.255", 1, 1);
	EXPECT_EQ(1, pf_match(&s, &k));
	k = key(TCP, "1.1.1.1", "10.128.0.0", 1, 1);
	EXPECT_EQ(0, pf_match(&s, &k));
	pred(&s.daddr, "10.0.0.0", 31);		/* .0 and .1 */
	k = key(TCP, "1.1.1.1", "10.0.0.1", 1, 1);
	EXPECT_EQ(1, pf_match(&s, &k));
	k = key(TCP, "1.1.1.1", "10.0.0.2", 1, 1);
	EXPECT_EQ(0, pf_match(&s, &k));
	/* Host bits in the predicate do not matter. */
	pred(&s.daddr, "10.1.2.3", 8);
	k = key(TCP, "1.1.1.1", "10.200.0.0", 1, 1);
	EXPECT_EQ(1, pf_match(&s, &k));
	pred(&s.daddr, "2001:db8::", 127);	/* ::0 and ::1 */
	k = key(TCP, "::1", "2001:db8::1", 1, 1);
	EXPECT_EQ(1, pf_match(&s, &k));
	k = key(TCP, "::1", "2001:db8::2", 1, 1);
	EXPECT_EQ(0, pf_match(&s, &k));
}

TEST(ipv4_predicate_never_matches_ipv6_packet)
{
	struct pf_spec s;
	struct pf_key k;

	memset(&s, 0, sizeof(s));
	pred(&s.saddr, "0.0.0.0", 0);		/* any IPv4 source */
	k = key(TCP, "10.0.0.1", "10.0.0.2", 1, 1);
	EXPECT_EQ(1, pf_match(&s, &k));
	k = key(TCP, "2001:db8::1", "2001:db8::2", 1, 1);
	EXPECT_EQ(0, pf_match(&s, &k));
	/* Not even the IPv4-mapped address of a matching IPv4 one. */
	pred(&s.saddr, "10.0.0.1", 32);
	k = key(TCP, "::ffff:10.0.0.1", "::ffff:10.0.0.2", 1, 1);
	EXPECT_EQ(0, pf_match(&s, &k));
	/* Nor with the address bytes of the IPv4 one at the front. */
	k.saddr[0] = 10, k.saddr[1] = 0, k.saddr[2] = 0, k.saddr[3] = 1;
	EXPECT_EQ(0, pf_match(&s, &k));

	memset(&s, 0, sizeof(s));
	pred(&s.daddr, "0.0.0.0", 0);
	k = key(UDP, "::1", "::1", 1, 1);
	EXPECT_EQ(0, pf_match(&s, &k));
}

TEST(ipv6_predicate_never_matches_ipv4_packet)
{
	struct pf_spec s;
	struct pf_key k;

	memset(&s, 0, sizeof(s));
	pred(&s.saddr, "::", 0);		/* any IPv6 source */
	k = key(TCP, "2001:db8::1", "2001:db8::2", 1, 1);
	EXPECT_EQ(1, pf_match(&s, &k));
	k = key(TCP, "10.0.0.1", "10.0.0.2", 1, 1);
	EXPECT_EQ(0, pf_match(&s, &k));
	memset(&s, 0, sizeof(s));
	pred(&s.daddr, "::", 0);
	EXPECT_EQ(0, pf_match(&s, &k));
}

TEST(port_ranges)
{
	struct pf_spec s;
	struct pf_key k = key(TCP, "10.0.0.1", "10.0.0.2", 0, 0);
	static const struct {
		__u16 min, max, port;
		int match;
	} cases[] = {
		{ 1000, 2000,   999, 0 }, { 1000, 2000,  1000, 1 },
		{ 1000, 2000,  1500, 1 }, { 1000, 2000,  2000, 1 },
		{ 1000, 2000,  2001, 0 }, {   80,   80,    79, 0 },
		{   80,   80,    80, 1 }, {   80,   80,    81, 0 },
		{    0,    0,     0, 1 }, {    0,    0,     1, 0 },
		{    0, 65535,    0, 1 }, {    0, 65535, 65535, 1 },
		{ 65535, 65535, 65535, 1 }, { 65535, 65535, 65534, 0 },
		{    1, 65534,    0, 0 }, {    1, 65534, 65535, 0 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		/* Once as the source port, once as the destination. */
		memset(&s, 0, sizeof(s));
		ports(&s.sport, cases[i].min, cases[i].max);
		k.sport = cases[i].port;
		k.dport = 7;
		EXPECT_EQ(cases[i].match, pf_match(&s, &k)) {
			TH_LOG("sport %u-%u vs %u", cases[i].min, cases[i].max,
			       cases[i].port);
		}
		memset(&s, 0, sizeof(s));
		ports(&s.dport, cases[i].min, cases[i].max);
		k.sport = 7;
		k.dport = cases[i].port;
		EXPECT_EQ(cases[i].match, pf_match(&s, &k)) {
			TH_LOG("dport %u-%u vs %u", cases[i].min, cases[i].max,
			       cases[i].port);
		}
	}
}

TEST(ports_never_match_icmp)
{
	struct pf_spec s;
	struct pf_key k;

	memset(&s, 0, sizeof(s));
	ports(&s.sport, 0, 65535);		/* any port at all */
	k = key(ICMP, "10.0.0.1", "10.0.0.2", 0, 0);
	EXPECT_EQ(0, pf_match(&s, &k));
	k = key(ICMPV6, "::1", "::2", 0, 0);
	EXPECT_EQ(0, pf_match(&s, &k));
	k = key(UDP, "10.0.0.1", "10.0.0.2", 0, 0);
	EXPECT_EQ(1, pf_match(&s, &k));

	memset(&s, 0, sizeof(s));
	ports(&s.dport, 0, 0);			/* zeroed key ports */
	k = key(ICMP, "10.0.0.1", "10.0.0.2", 0, 0);
	EXPECT_EQ(0, pf_match(&s, &k));
	/* A TCP packet without a complete port pair neither. */
	k = key(TCP, "10.0.0.1", "10.0.0.2", 0, 0);
	k.has_ports = 0;
	EXPECT_EQ(0, pf_match(&s, &k));
}

TEST(mark_with_mask)
{
	struct pf_spec s;
	struct pf_key k = key(TCP, "10.0.0.1", "10.0.0.2", 1, 2);

	memset(&s, 0, sizeof(s));
	s.has_mark = 1;
	s.mark = 0x10;
	s.mark_mask = 0xffffffff;
	k.mark = 0x10;
	EXPECT_EQ(1, pf_match(&s, &k));
	k.mark = 0x11;
	EXPECT_EQ(0, pf_match(&s, &k));
	k.mark = 0x80000010;
	EXPECT_EQ(0, pf_match(&s, &k));
	k.mark = 0;
	EXPECT_EQ(0, pf_match(&s, &k));

	s.mark_mask = 0xff;			/* low byte only */
	k.mark = 0xabcd0010;
	EXPECT_EQ(1, pf_match(&s, &k));
	k.mark = 0x00000110;
	EXPECT_EQ(1, pf_match(&s, &k));
	k.mark = 0x00000018;
	EXPECT_EQ(0, pf_match(&s, &k));

	s.mark = 0xff10;			/* value bits outside the mask */
	k.mark = 0x10;
	EXPECT_EQ(1, pf_match(&s, &k));

	s.mark_mask = 0;			/* everything */
	k.mark = 0x12345678;
	EXPECT_EQ(1, pf_match(&s, &k));

	s.has_mark = 0;				/* not a predicate */
	s.mark = 1;
	s.mark_mask = 0xffffffff;
	k.mark = 2;
	EXPECT_EQ(1, pf_match(&s, &k));
}

TEST(ifindex_and_netns)
{
	struct pf_spec s;
	struct pf_key k = key(UDP, "10.0.0.1", "10.0.0.2", 1, 2);

	memset(&s, 0, sizeof(s));
	s.ifindex = 2;
	EXPECT_EQ(1, pf_match(&s, &k));
	k.ifindex = 3;
	EXPECT_EQ(0, pf_match(&s, &k));
	k.ifindex = 1;
	EXPECT_EQ(0, pf_match(&s, &k));

	memset(&s, 0, sizeof(s));
	k.ifindex = 2;
	s.netns = 4026531840u;
	EXPECT_EQ(1, pf_match(&s, &k));
	k.netns = 4026531841u;
	EXPECT_EQ(0, pf_match(&s, &k));
	k.netns = 4026531839u;
	EXPECT_EQ(0, pf_match(&s, &k));

	/* The same ifindex in another namespace is another interface. */
	s.ifindex = 2;
	k.netns = 4026532000u;
	EXPECT_EQ(0, pf_match(&s, &k));
	k.netns = 4026531840u;
	EXPECT_EQ(1, pf_match(&s, &k));
}

/* Everything set; then each field of the packet off by one. */
TEST(all_predicates_together)
{
	struct pf_spec s;
	struct pf_key k = key(TCP, "192.0.2.10", "198.51.100.20", 40000, 443);
	struct pf_key near;
	int i;

	memset(&s, 0, sizeof(s));
	s.proto = TCP;
	pred(&s.saddr, "192.0.2.0", 24);
	pred(&s.daddr, "198.51.100.20", 32);
	ports(&s.sport, 32768, 60999);
	ports(&s.dport, 443, 443);
	s.ifindex = 2;
	s.netns = 4026531840u;
	s.has_mark = 1;
	s.mark = 0x1;
	s.mark_mask = 0x1;
	k.mark = 0x101;
	ASSERT_EQ(1, pf_spec_valid(&s));
	ASSERT_EQ(1, pf_match(&s, &k));

	for (i = 0; i < 10; i++) {
		near = k;
		switch (i) {
		case 0:
			near.proto = UDP;
			break;
		case 1:
			flip(near.saddr, 23);
			break;
		case 2:
			flip(near.daddr, 31);
			break;
		case 3:
			near.sport = 32767;
			break;
		case 4:
			near.sport = 61000;
			break;
		case 5:
			near.dport = 444;
			break;
		case 6:
			near.ifindex = 3;
			break;
		case 7:
			near.netns++;
			break;
		case 8:
			near.mark = 0x100;
			break;
		case 9:
			near.family = PF_FAMILY_IPV6;
			break;
		}
		EXPECT_EQ(0, pf_match(&s, &near)) {
			TH_LOG("mutation %d still matches", i);
		}
	}
	/* Outside the predicates: any value. */
	near = k;
	flip(near.saddr, 24);
	near.mark = 0xffffffff;
	EXPECT_EQ(1, pf_match(&s, &near));
}

TEST(spec_valid_accepts)
{
	struct pf_spec s;

	memset(&s, 0, sizeof(s));
	EXPECT_EQ(1, pf_spec_valid(&s));
	pred(&s.saddr, "10.0.0.0", 32);
	pred(&s.daddr, "10.0.0.0", 0);
	s.proto = ICMP;
	EXPECT_EQ(1, pf_spec_valid(&s));
	memset(&s, 0, sizeof(s));
	pred(&s.saddr, "::", 128);
	s.proto = ICMPV6;
	EXPECT_EQ(1, pf_spec_valid(&s));
	s.proto = TCP;
	ports(&s.sport, 5, 5);
	ports(&s.dport, 0, 65535);
	EXPECT_EQ(1, pf_spec_valid(&s));
	s.proto = 0;				/* ports without proto */
	EXPECT_EQ(1, pf_spec_valid(&s));
}

TEST(spec_valid_rejects)
{
	struct pf_spec s;

	memset(&s, 0, sizeof(s));
	pred(&s.saddr, "10.0.0.1", 32);
	pred(&s.daddr, "2001:db8::1", 128);
	EXPECT_EQ(0, pf_spec_valid(&s));	/* mixed families */

	memset(&s, 0, sizeof(s));
	pred(&s.saddr, "10.0.0.1", 33);
	EXPECT_EQ(0, pf_spec_valid(&s));
	memset(&s, 0, sizeof(s));
	pred(&s.daddr, "10.0.0.1", 255);
	EXPECT_EQ(0, pf_spec_valid(&s));
	memset(&s, 0, sizeof(s));
	pred(&s.daddr, "2001:db8::1", 129);
	EXPECT_EQ(0, pf_spec_valid(&s));
	memset(&s, 0, sizeof(s));
	pred(&s.saddr, "10.0.0.1", 32);
	s.saddr.family = 5;			/* neither 4 nor 6 */
	EXPECT_EQ(0, pf_spec_valid(&s));

	memset(&s, 0, sizeof(s));
	ports(&s.sport, 81, 80);
	EXPECT_EQ(0, pf_spec_valid(&s));
	memset(&s, 0, sizeof(s));
	ports(&s.dport, 65535, 0);
	EXPECT_EQ(0, pf_spec_valid(&s));

	memset(&s, 0, sizeof(s));
	s.proto = ICMP;
	pred(&s.daddr, "2001:db8::1", 128);
	EXPECT_EQ(0, pf_spec_valid(&s));
	memset(&s, 0, sizeof(s));
	s.proto = ICMPV6;
	pred(&s.saddr, "10.0.0.1", 0);
	EXPECT_EQ(0, pf_spec_valid(&s));

	memset(&s, 0, sizeof(s));
	s.proto = ICMP;
	ports(&s.dport, 0, 65535);
	EXPECT_EQ(0, pf_spec_valid(&s));
	memset(&s, 0, sizeof(s));
	s.proto = ICMPV6;
	ports(&s.sport, 1, 1);
	EXPECT_EQ(0, pf_spec_valid(&s));
}

/*
 * The hook's fast path (pf_key_quick_reject() in module/internal.h) on a
 * key: what it reads in place is what the key holds; exact ports are
 * compared as the header's raw bytes, ranges as numbers.
 */
static int quick_reject(const struct pf_spec *s, const struct pf_key *k)
{
	struct pf_quick q;
	__u32 sa, da;

	pf_quick_init(&q, s);
	if (q.ports) {
		__u8 b[4] = { (__u8)(k->sport >> 8), (__u8)k->sport,
			      (__u8)(k->dport >> 8), (__u8)k->dport };
		__u32 raw;

		memcpy(&raw, b, 4);
		if (!k->has_ports)
			return 1;
		if (q.ports_exact ? pf_quick_reject_raw(&q, raw) :
		    pf_quick_reject_ports(&q, k->sport, k->dport))
			return 1;
	}
	if (q.v4 && k->family == PF_FAMILY_IPV4) {
		memcpy(&sa, k->saddr, 4);
		memcpy(&da, k->daddr, 4);
		return pf_quick_reject_v4(&q, sa, da);
	}
	return 0;
}

/*
 * With only port and IPv4 address predicates, and an IPv4 TCP key, the
 * fast path is the whole matcher: it must agree with pf_match() on every
 * range edge and every prefix length.
 */
TEST(quick_exact_on_ports_and_v4_prefixes)
{
	static const __u16 edges[][2] = {
		{ 1000, 2000 }, { 80, 80 }, { 0, 0 }, { 0, 65535 },
		{ 65535, 65535 }, { 1, 65534 },
	};
	static const __u16 probes[] = { 0, 1, 79, 80, 81, 999, 1000, 1500,
					2000, 2001, 65534, 65535 };
	struct pf_spec s;
	struct pf_key k = key(TCP, "10.1.2.3", "192.168.77.200", 7, 7);
	size_t i, j;
	int plen, bit;

	for (i = 0; i < ARRAY_SIZE(edges); i++)
		for (j = 0; j < ARRAY_SIZE(probes); j++) {
			memset(&s, 0, sizeof(s));
			ports(&s.dport, edges[i][0], edges[i][1]);
			k.dport = probes[j];
			EXPECT_EQ(pf_match(&s, &k), !quick_reject(&s, &k)) {
				TH_LOG("dport %u-%u vs %u", edges[i][0],
				       edges[i][1], probes[j]);
			}
			memset(&s, 0, sizeof(s));
			ports(&s.sport, edges[i][0], edges[i][1]);
			k.dport = 7;
			k.sport = probes[j];
			EXPECT_EQ(pf_match(&s, &k), !quick_reject(&s, &k)) {
				TH_LOG("sport %u-%u vs %u", edges[i][0],
				       edges[i][1], probes[j]);
			}
			k.sport = 7;
		}

	for (plen = 0; plen <= 32; plen++)
		for (bit = 0; bit < 32; bit++) {
			struct pf_key m = k;

			flip(m.daddr, bit);
			memset(&s, 0, sizeof(s));
			pred(&s.daddr, "192.168.77.200", plen);
			EXPECT_EQ(pf_match(&s, &m), !quick_reject(&s, &m)) {
				TH_LOG("daddr /%d, bit %d flipped", plen, bit);
			}
			EXPECT_EQ(bit >= plen, !quick_reject(&s, &m));
			m = k;
			flip(m.saddr, bit);
			memset(&s, 0, sizeof(s));
			pred(&s.saddr, "10.1.2.3", plen);
			EXPECT_EQ(pf_match(&s, &m), !quick_reject(&s, &m)) {
				TH_LOG("saddr /%d, bit %d flipped", plen, bit);
			}
		}
}

/*
 * A small deterministic generator (xorshift32): the same cases on every
 * run. Not a power-of-two LCG, whose low bits repeat with short periods
 * and would leave whole combinations of predicates untried.
 */
static __u32 rnd_state = 2463534242u;

static __u32 rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 17;
	rnd_state ^= rnd_state << 5;
	return rnd_state;
}

/*
 * Whatever the spec and the packet, a packet the fast path rejects never
 * matches: random specs (every predicate, often near the key) against
 * random keys of every family and protocol.
 */
TEST(quick_reject_implies_no_match)
{
	static const __u8 protos[] = { 0, TCP, UDP, ICMP, ICMPV6 };
	int n, rejected = 0, matched = 0;

	for (n = 0; n < 200000; n++) {
		struct pf_spec s;
		struct pf_key k;
		int fam = rnd() % 2 ? PF_FAMILY_IPV4 : PF_FAMILY_IPV6;
		int alen = fam == PF_FAMILY_IPV4 ? 4 : 16, i;

		memset(&k, 0, sizeof(k));
		k.family = (__u8)fam;
		k.proto = protos[1 + rnd() % 4];
		k.has_ports = (k.proto == TCP || k.proto == UDP) && rnd() % 8;
		for (i = 0; i < alen; i++) {
			k.saddr[i] = (__u8)(rnd() % 4);
			k.daddr[i] = (__u8)(rnd() % 4);
		}
		if (k.has_ports) {
			k.sport = (__u16)(rnd() % 8);
			k.dport = (__u16)(rnd() % 8);
		}
		k.mark = rnd() % 4;

		memset(&s, 0, sizeof(s));
		s.proto = protos[rnd() % 5];
		if (rnd() % 2) {
			s.saddr.family = rnd() % 4 ? k.family :
				(__u8)(PF_FAMILY_IPV4 + PF_FAMILY_IPV6 - k.family);
			s.saddr.plen = (__u8)(rnd() % (8 * (s.saddr.family ==
					PF_FAMILY_IPV4 ? 4 : 16) + 1));
			for (i = 0; i < 16; i++)
				s.saddr.addr[i] = (__u8)(rnd() % 4);
		}
		if (rnd() % 2) {
			s.daddr.family = s.saddr.family ? s.saddr.family :
				(__u8)(rnd() % 2 ? PF_FAMILY_IPV4 : PF_FAMILY_IPV6);
			s.daddr.plen = (__u8)(rnd() % (8 * (s.daddr.family ==
					PF_FAMILY_IPV4 ? 4 : 16) + 1));
			for (i = 0; i < 16; i++)
				s.daddr.addr[i] = (__u8)(rnd() % 4);
		}
		if (rnd() % 2) {
			s.sport.min = (__u16)(rnd() % 8);
			ports(&s.sport, s.sport.min,
			      (__u16)(s.sport.min + rnd() % 3));
		}
		if (rnd() % 2) {
			s.dport.min = (__u16)(rnd() % 8);
			ports(&s.dport, s.dport.min,
			      (__u16)(s.dport.min + rnd() % 3));
		}
		if (rnd() % 4 == 0) {
			s.has_mark = 1;
			s.mark = rnd() % 4;
			s.mark_mask = 3;
		}
		if (!pf_spec_valid(&s))
			continue;
		if (quick_reject(&s, &k)) {
			rejected++;
			ASSERT_EQ(0, pf_match(&s, &k)) {
				TH_LOG("case %d: rejected on the fast path, but matches", n);
			}
		} else if (pf_match(&s, &k)) {
			matched++;
		}
	}
	/* The generator reaches both outcomes often, or the test means little. */
	EXPECT_LT(10000, rejected);
	EXPECT_LT(1000, matched);
}

TEST_HARNESS_MAIN
