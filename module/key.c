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
#include <linux/netdevice.h>
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
