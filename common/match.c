// SPDX-License-Identifier: GPL-2.0
/*
 * The predicate matcher, compiled into pktfilt.ko (by module/match.c) and
 * into the user-space unit tests and fuzzers. No kernel or libc calls: only
 * the key the hook extracted.
 */
#include "match.h"

static int pf_addr_len(__u8 family)
{
	return family == PF_FAMILY_IPV4 ? 4 : 16;
}

static int pf_prefix_match(const __u8 *a, const __u8 *b, unsigned int plen)
{
	unsigned int i, bytes = plen / 8, bits = plen % 8;

	for (i = 0; i < bytes; i++)
		if (a[i] != b[i])
			return 0;
	if (bits) {
		__u8 mask = (__u8)(0xff << (8 - bits));

		if ((a[bytes] ^ b[bytes]) & mask)
			return 0;
	}
	return 1;
}

static int pf_addr_match(const struct pf_addr_pred *p, __u8 family,
			 const __u8 *addr)
{
	if (!p->family)
		return 1;
	/* An IPv4 predicate never matches an IPv6 packet, and back. */
	if (p->family != family)
		return 0;
	return pf_prefix_match(p->addr, addr, p->plen);
}

static int pf_port_match(const struct pf_port_pred *p, int has_ports,
			 __u16 port)
{
	if (!p->set)
		return 1;
	/* A port predicate never matches a packet without ports (ICMP). */
	if (!has_ports)
		return 0;
	return port >= p->min && port <= p->max;
}

int pf_match(const struct pf_spec *spec, const struct pf_key *key)
{
	if (spec->proto && spec->proto != key->proto)
		return 0;
	if (spec->ifindex && spec->ifindex != key->ifindex)
		return 0;
	if (spec->netns && spec->netns != key->netns)
		return 0;
	if (spec->has_mark &&
	    (key->mark & spec->mark_mask) != (spec->mark & spec->mark_mask))
		return 0;
	if (!pf_addr_match(&spec->saddr, key->family, key->saddr))
		return 0;
	if (!pf_addr_match(&spec->daddr, key->family, key->daddr))
		return 0;
	if (!pf_port_match(&spec->sport, key->has_ports, key->sport))
		return 0;
	if (!pf_port_match(&spec->dport, key->has_ports, key->dport))
		return 0;
	return 1;
}

static void pf_quick_range(const struct pf_port_pred *p, __u16 *min,
			   __u16 *span)
{
	*min = p->set ? p->min : 0;
	*span = p->set ? (__u16)(p->max - p->min) : 0xffff;
}

/* The IPv4 prefix of @p as a value and a mask in header byte order. */
static void pf_quick_v4(const struct pf_addr_pred *p, __u32 *addr,
			__u32 *mask)
{
	__u8 m[4] = { 0 };
	unsigned int i;

	*addr = 0;
	*mask = 0;
	if (p->family != PF_FAMILY_IPV4)
		return;
	for (i = 0; i < 4; i++) {
		if (p->plen >= 8 * (i + 1))
			m[i] = 0xff;
		else if (p->plen > 8 * i)
			m[i] = (__u8)(0xff << (8 * (i + 1) - p->plen));
	}
	__builtin_memcpy(mask, m, 4);
	__builtin_memcpy(addr, p->addr, 4);
	*addr &= *mask;
}

/* The port bytes of the header, and which of them the spec fixes. */
static void pf_quick_raw(const struct pf_spec *spec, __u32 *mask, __u32 *val)
{
	__u8 m[4] = { 0 }, v[4] = { 0 };

	if (spec->sport.set) {
		m[0] = m[1] = 0xff;
		v[0] = (__u8)(spec->sport.min >> 8);
		v[1] = (__u8)spec->sport.min;
	}
	if (spec->dport.set) {
		m[2] = m[3] = 0xff;
		v[2] = (__u8)(spec->dport.min >> 8);
		v[3] = (__u8)spec->dport.min;
	}
	__builtin_memcpy(mask, m, 4);
	__builtin_memcpy(val, v, 4);
}

void pf_quick_init(struct pf_quick *q, const struct pf_spec *spec)
{
	q->ports = spec->sport.set || spec->dport.set;
	q->ports_exact = q->ports &&
		(!spec->sport.set || spec->sport.min == spec->sport.max) &&
		(!spec->dport.set || spec->dport.min == spec->dport.max);
	pf_quick_raw(spec, &q->pmask, &q->pval);
	pf_quick_range(&spec->sport, &q->sport_min, &q->sport_span);
	pf_quick_range(&spec->dport, &q->dport_min, &q->dport_span);
	q->v4 = spec->saddr.family == PF_FAMILY_IPV4 ||
		spec->daddr.family == PF_FAMILY_IPV4;
	pf_quick_v4(&spec->saddr, &q->saddr, &q->smask);
	pf_quick_v4(&spec->daddr, &q->daddr, &q->dmask);
}

static int pf_addr_pred_valid(const struct pf_addr_pred *p)
{
	if (!p->family)
		return 1;
	if (p->family != PF_FAMILY_IPV4 && p->family != PF_FAMILY_IPV6)
		return 0;
	return p->plen <= pf_addr_len(p->family) * 8;
}

int pf_spec_valid(const struct pf_spec *spec)
{
	/* Mixed families can never match a packet: reject, do not arm. */
	if (spec->saddr.family && spec->daddr.family &&
	    spec->saddr.family != spec->daddr.family)
		return 0;
	if (!pf_addr_pred_valid(&spec->saddr) ||
	    !pf_addr_pred_valid(&spec->daddr))
		return 0;
	if (spec->sport.set && spec->sport.min > spec->sport.max)
		return 0;
	if (spec->dport.set && spec->dport.min > spec->dport.max)
		return 0;
	/* ICMP only exists over IPv4, ICMPv6 only over IPv6. */
	if (spec->proto == 1 && (spec->saddr.family == PF_FAMILY_IPV6 ||
				 spec->daddr.family == PF_FAMILY_IPV6))
		return 0;
	if (spec->proto == 58 && (spec->saddr.family == PF_FAMILY_IPV4 ||
				  spec->daddr.family == PF_FAMILY_IPV4))
		return 0;
	/* ICMP has no ports: a port predicate could never match. */
	if ((spec->proto == 1 || spec->proto == 58) &&
	    (spec->sport.set || spec->dport.set))
		return 0;
	return 1;
}
