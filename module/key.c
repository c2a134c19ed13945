// SPDX-License-Identifier: GPL-2.0
/*
 * Key extraction: what one received packet looks like to the matcher.
 *
 * Runs in the protocol handler slot, so the IP layer has validated the
 * network header and pulled it; skb->data is at the transport header. Every
 * read still goes through skb_header_pointer(), which checks the length and
 * copes with non-linear skbs: a packet shorter than its headers claim simply
 * has no ports.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/icmp.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/jhash.h>
#include <linux/netdevice.h>
#include <linux/tcp.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>

#include "internal.h"

static bool notrace pf_key_ports(const struct sk_buff *skb, struct pf_key *key)
{
	__be16 buf[2];
	const __be16 *ports;

	if (key->proto != IPPROTO_TCP && key->proto != IPPROTO_UDP)
		return true;
	ports = skb_header_pointer(skb, skb_transport_offset(skb),
				   sizeof(buf), buf);
	if (!ports)
		return true;
	key->sport = ntohs(ports[0]);
	key->dport = ntohs(ports[1]);
	key->has_ports = 1;
	return true;
}

bool notrace pf_key_from_skb(const struct sk_buff *skb, enum pf_slot slot,
			     struct pf_key *key)
{
	int noff = skb_network_offset(skb);

	memset(key, 0, sizeof(*key));
	key->proto = pf_slot_proto(slot);
	key->family = pf_slot_family(slot);

	if (key->family == PF_FAMILY_IPV4) {
		struct iphdr buf;
		const struct iphdr *iph;

		iph = skb_header_pointer(skb, noff, sizeof(buf), &buf);
		if (!iph || iph->version != 4)
			return false;
		memcpy(key->saddr, &iph->saddr, 4);
		memcpy(key->daddr, &iph->daddr, 4);
	} else {
		struct ipv6hdr buf;
		const struct ipv6hdr *ip6h;

		ip6h = skb_header_pointer(skb, noff, sizeof(buf), &buf);
		if (!ip6h || ip6h->version != 6)
			return false;
		memcpy(key->saddr, &ip6h->saddr, 16);
		memcpy(key->daddr, &ip6h->daddr, 16);
	}

	/* skb_iif is the device the packet came in on, even under a VRF. */
	key->ifindex = skb->skb_iif;
	if (skb->dev) {
		if (!key->ifindex)
			key->ifindex = skb->dev->ifindex;
		key->netns = dev_net(skb->dev)->ns.inum;
	}
	key->mark = skb->mark;
	return pf_key_ports(skb, key);
}

/*
 * @fp mixed with what the transport header of a first fragment at @toff
 * tells of the packet: what neither NAT nor forwarding changes, and the
 * next packet of its flow does not share. An IPv6 header has nothing of
 * the kind (the segments of a TCP stream are equal but for the payload),
 * and one skb is soon reused for the next segment of a flow whose free no
 * tracepoint reported (follow.c). TCP: the sequence and acknowledgment
 * numbers and the flags. ICMP and ICMPv6: type, code and the echo's
 * sequence number (its id is NAT's). UDP: nothing (ports and checksum are
 * NAT's); its frees pass the tracepoints.
 */
static u32 notrace pf_key_l4_fp(const struct sk_buff *skb, int toff, u8 proto,
				u32 fp)
{
	switch (proto) {
	case IPPROTO_TCP: {
		const struct tcphdr *th;
		struct tcphdr tbuf;

		th = skb_header_pointer(skb, toff, sizeof(tbuf), &tbuf);
		if (!th)
			return fp;
		/* Byte 13: the flags (net/tcp.h's tcp_flag_byte()). */
		return jhash_3words(fp, ntohl(th->seq),
				    ntohl(th->ack_seq) ^ ((const u8 *)th)[13], 0);
	}
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6: {
		/* ICMPv6's first 8 bytes are laid out as ICMP's. */
		const struct icmphdr *ih;
		struct icmphdr ibuf;

		ih = skb_header_pointer(skb, toff, sizeof(ibuf), &ibuf);
		if (!ih)
			return fp;
		return jhash_2words(fp, (u32)ih->type << 24 |
				    (u32)ih->code << 16 |
				    ntohs(ih->un.echo.sequence), 0);
	}
	}
	return fp;
}

/*
 * The key of a packet whose network header starts at skb_network_offset()
 * and nothing else is known yet: at IP receive (before the IP layer checked
 * the header) and at IP output. The protocol and the ports come from the
 * header chain; a later fragment has no ports. @fp gets a fingerprint of the
 * header fields that neither NAT nor forwarding changes (lengths, IPv4's
 * identification, IPv6's flow label, and pf_key_l4_fp()'s), by which
 * follow.c knows the packet again at a later stage. @ifindex: the input or output device's.
 */
bool notrace pf_key_from_ip(const struct sk_buff *skb, u8 family,
			    int ifindex, const struct net *net,
			    struct pf_key *key, u32 *fp)
{
	int noff = skb_network_offset(skb), toff;
	bool ports = true;

	memset(key, 0, sizeof(*key));
	key->family = family;
	if (family == PF_FAMILY_IPV4) {
		struct iphdr buf;
		const struct iphdr *iph;

		iph = skb_header_pointer(skb, noff, sizeof(buf), &buf);
		if (!iph || iph->version != 4 || iph->ihl < 5)
			return false;
		key->proto = iph->protocol;
		memcpy(key->saddr, &iph->saddr, 4);
		memcpy(key->daddr, &iph->daddr, 4);
		toff = noff + iph->ihl * 4;
		if (iph->frag_off & htons(IP_OFFSET))
			ports = false;
		*fp = ((u32)ntohs(iph->id) << 16 | ntohs(iph->tot_len)) ^
		      iph->protocol;
	} else {
		struct ipv6hdr buf;
		const struct ipv6hdr *ip6h;
		__be16 frag_off = 0;
		u8 nexthdr;

		ip6h = skb_header_pointer(skb, noff, sizeof(buf), &buf);
		if (!ip6h || ip6h->version != 6)
			return false;
		memcpy(key->saddr, &ip6h->saddr, 16);
		memcpy(key->daddr, &ip6h->daddr, 16);
		*fp = (((u32)ip6h->flow_lbl[0] & 0x0f) << 24 |
		       (u32)ip6h->flow_lbl[1] << 16 | ip6h->flow_lbl[2] << 8) ^
		      ntohs(ip6h->payload_len) ^ ip6h->nexthdr;
		nexthdr = ip6h->nexthdr;
		toff = noff + sizeof(*ip6h);
		/*
		 * The walk only where there is something to walk: the free
		 * probes ask here inside a graph, where each call shows.
		 */
		if (ipv6_ext_hdr(nexthdr))
			toff = ipv6_skip_exthdr(skb, toff, &nexthdr, &frag_off);
		if (toff < 0)
			return false;
		key->proto = nexthdr;
		if (frag_off & htons(IP6_OFFSET))
			ports = false;
	}
	key->ifindex = ifindex;
	if (net)
		key->netns = net->ns.inum;
	key->mark = skb->mark;
	if (ports)
		*fp = pf_key_l4_fp(skb, toff, key->proto, *fp);
	if (ports && (key->proto == IPPROTO_TCP || key->proto == IPPROTO_UDP)) {
		__be16 buf[2];
		const __be16 *p = skb_header_pointer(skb, toff, sizeof(buf), buf);

		if (p) {
			key->sport = ntohs(p[0]);
			key->dport = ntohs(p[1]);
			key->has_ports = 1;
		}
	}
	return true;
}

/*
 * Can pf_key_fingerprint() be computed for @skb without calling out of
 * line (skb_copy_bits() for bytes outside the linear part, also when the
 * packet is too short for them; ipv6_skip_exthdr())? The free probes ask
 * first: inside a graph each such call would show.
 */
bool notrace pf_key_fingerprint_inline(const struct sk_buff *skb, u8 family)
{
	int noff = skb_network_offset(skb), hl = skb_headlen(skb), toff;
	const u8 *nh;
	u8 proto;

	/*
	 * Past the IP header (an L4 handler's free) the offset is negative:
	 * the header is still in the linear part, before skb->data.
	 */
	if (skb->network_header == (typeof(skb->network_header))~0U)
		return false;
	nh = skb_network_header(skb);
	if (nh < skb->head || hl < noff + (family == PF_FAMILY_IPV4 ? 20 : 40))
		return false;
	if (family == PF_FAMILY_IPV4) {
		/* A later fragment: no transport header is read. */
		if ((nh[6] & 0x1f) | nh[7])
			return true;
		toff = noff + (nh[0] & 0x0f) * 4;
		proto = nh[9];
	} else {
		proto = nh[6];
		if (ipv6_ext_hdr(proto))
			return false;
		toff = noff + 40;
	}
	switch (proto) {
	case IPPROTO_TCP:
		return hl >= toff + (int)sizeof(struct tcphdr);
	case IPPROTO_UDP:
		return hl >= toff + 4;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		return hl >= toff + (int)sizeof(struct icmphdr);
	}
	return true;
}

/* The fingerprint of pf_key_from_ip(), for a packet at its L4 handler. */
u32 notrace pf_key_fingerprint(const struct sk_buff *skb, u8 family)
{
	struct pf_key key;
	u32 fp = 0;

	if (!pf_key_from_ip(skb, family, 0, NULL, &key, &fp))
		return 0;
	return fp;
}
