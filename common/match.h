/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The predicate matcher. Plain C over <linux/types.h> so that the module and
 * the user-space unit tests compile the very same code, and the tool fills
 * the very same struct pf_spec.
 */
#ifndef PKTFILT_MATCH_H
#define PKTFILT_MATCH_H

#include <linux/types.h>

#define PF_FAMILY_IPV4	4
#define PF_FAMILY_IPV6	6

/* An address predicate: family 0 means "any address". */
struct pf_addr_pred {
	__u8 family;		/* PF_FAMILY_IPV4, PF_FAMILY_IPV6 or 0 */
	__u8 plen;		/* prefix length, <= 32 or <= 128 */
	__u8 addr[16];		/* network order; IPv4 in the first 4 bytes */
};

/* A port predicate: set 0 means "any port". */
struct pf_port_pred {
	__u8 set;
	__u16 min;
	__u16 max;
};

/* The predicates of one filter; every field that is set must match. */
struct pf_spec {
	__u8 proto;		/* IPPROTO_* number, 0 = any */
	struct pf_addr_pred saddr;
	struct pf_addr_pred daddr;
	struct pf_port_pred sport;
	struct pf_port_pred dport;
	__u32 ifindex;		/* 0 = any */
	__u32 netns;		/* netns inode number, 0 = any */
	__u8 has_mark;
	__u32 mark;
	__u32 mark_mask;
};

/* What the hook extracted from one packet. */
struct pf_key {
	__u8 family;		/* PF_FAMILY_IPV4 or PF_FAMILY_IPV6 */
	__u8 proto;		/* IPPROTO_* number of the hooked handler */
	__u8 has_ports;		/* TCP/UDP with a complete port pair */
	__u8 saddr[16];
	__u8 daddr[16];
	__u16 sport;		/* host order */
	__u16 dport;
	__u32 ifindex;
	__u32 netns;
	__u32 mark;
};

/*
 * A necessary condition of pf_match() on the ports and IPv4 addresses only,
 * which the hook tests on the packet's bytes in place before it builds a
 * key: most packets a filter does not want are told apart there. A packet
 * it rejects never matches the spec; one it passes may or may not.
 * Ranges are kept as (min, max - min): "in range" is one unsigned compare.
 */
struct pf_quick {
	__u8 ports;		/* a port predicate: packets without ports fail */
	__u8 ports_exact;	/* no range: pmask and pval say it all */
	__u8 v4;		/* an IPv4 address predicate */
	__u16 sport_min, sport_span;
	__u16 dport_min, dport_span;
	__u32 pmask, pval;	/* the 4 port bytes, as in the header */
	__u32 saddr, smask;	/* network order, as in the header */
	__u32 daddr, dmask;
};

/* Fills @q from a spec that pf_spec_valid() accepted. */
void pf_quick_init(struct pf_quick *q, const struct pf_spec *spec);

/* @sport, @dport in host order. Returns 1 if no packet with them matches. */
static inline int pf_quick_reject_ports(const struct pf_quick *q,
					__u16 sport, __u16 dport)
{
	return (__u16)(sport - q->sport_min) > q->sport_span ||
	       (__u16)(dport - q->dport_min) > q->dport_span;
}

/*
 * @raw: the 4 bytes of source and destination port as in the header (and
 * as memcpy() puts them into a __u32). Exact ports only (ports_exact).
 */
static inline int pf_quick_reject_raw(const struct pf_quick *q, __u32 raw)
{
	return (raw & q->pmask) != q->pval;
}

/* @saddr, @daddr as in the IPv4 header. Returns 1 if no such packet matches. */
static inline int pf_quick_reject_v4(const struct pf_quick *q,
				     __u32 saddr, __u32 daddr)
{
	return ((saddr ^ q->saddr) & q->smask) ||
	       ((daddr ^ q->daddr) & q->dmask);
}

/* Returns 1 if @key satisfies every predicate of @spec, 0 otherwise. */
int pf_match(const struct pf_spec *spec, const struct pf_key *key);

/* Returns 1 if @spec is self-consistent (lengths, ranges), 0 otherwise. */
int pf_spec_valid(const struct pf_spec *spec);

#endif /* PKTFILT_MATCH_H */
