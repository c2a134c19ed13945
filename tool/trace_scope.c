// SPDX-License-Identifier: GPL-2.0
/*
 * "pktfilt trace": what it records. The default set_ftrace_filter scope,
 * the graph roots a filter reaches, the ring buffer's size. Pure, for the
 * tests too (selftests/unit/tracefs_test.c).
 */
#include "pktfilt.h"
#include "tracecmd.h"

#define PF_BUF_KB_PACKET	1024
#define PF_BUF_KB_UNLIMITED	16384
#define PF_BUF_KB_MAX		65536

const char *const pf_trace_default_scope[] = {
	/* device receive and transmit, qdiscs, drivers, the bridge */
	"__netif_*", "netif_*", "__dev_queue_xmit", "dev_queue_xmit*",
	"dev_hard_start_xmit", "validate_xmit_*", "sch_*", "__qdisc_*",
	"qdisc_*", "pfifo_*", "fq_codel_*", "veth_*", "virtnet_*", "start_xmit",
	"loopback_xmit", "eth_*", "br_*", "dev_forward_skb*",
	"__dev_forward_skb*", "enqueue_to_backlog",
	/* the receive core: taps, tc ingress and its actions, VLAN */
	"deliver_skb", "packet_rcv", "tpacket_rcv", "tcf_*", "tcx_*",
	"*_classify", "vlan_*", "__vlan_*", "do_xdp_generic",
	/* the protocols */
	"tcp_*", "__tcp_*", "udp*", "__udp*", "icmp*", "ping_*",
	/* IP, routing, neighbours */
	"ip_*", "__ip_*", "ipv4_*", "ip6_*", "__ip6_*", "ipv6_*", "fib_*",
	"fib6_*", "rt6_*", "dst_*", "neigh_*",
	/* sockets: lookup, queueing, the owner's backlog, wakeups */
	"inet_*", "__inet_*", "inet6_*", "__inet6_*", "sock_*", "__sock_*",
	"sk_*", "__sk_*", "lock_sock*", "release_sock", "__release_sock",
	"__wake_up*",
	/* netfilter and IPsec policy */
	"nf_*", "__nf_*", "nft_*", "xfrm*", "__xfrm*",
	/* LSM */
	"security_*", "selinux_*", "apparmor_*",
	/* skb and slab allocation */
	"skb_*", "__skb_*", "kfree_skb*", "consume_skb", "__alloc_skb",
	"kmem_cache_alloc*", "kmem_cache_free", "kmalloc*", "__kmalloc*",
	"kfree",
	/* locking */
	"_raw_spin_lock*", "_raw_spin_unlock*",
	NULL
};

size_t pf_trace_roots(const struct pf_spec *spec, __u32 stages,
		      unsigned int version, const char **roots, size_t max)
{
	static const struct {
		const char *name;
		__u8 stage;
		__u8 proto;	/* 0: any protocol */
		__u8 family;	/* 0: either */
		__u8 min_version, max_version;	/* the module's; 0: any */
	} handlers[] = {
		{ "tcp_v4_rcv",	PKTFILT_STAGE_L4, PKTFILT_PROTO_TCP, PF_FAMILY_IPV4, 0, 0 },
		{ "udp_rcv",	PKTFILT_STAGE_L4, PKTFILT_PROTO_UDP, PF_FAMILY_IPV4, 0, 0 },
		{ "icmp_rcv",	PKTFILT_STAGE_L4, PKTFILT_PROTO_ICMP, PF_FAMILY_IPV4, 0, 0 },
		{ "tcp_v6_rcv",	PKTFILT_STAGE_L4, PKTFILT_PROTO_TCP, PF_FAMILY_IPV6, 0, 0 },
		{ "udpv6_rcv",	PKTFILT_STAGE_L4, PKTFILT_PROTO_UDP, PF_FAMILY_IPV6, 0, 0 },
		{ "icmpv6_rcv",	PKTFILT_STAGE_L4, PKTFILT_PROTO_ICMPV6, PF_FAMILY_IPV6, 0, 0 },
		/* rx from the device; ip_rcv() for what is not seen there */
		{ "netif_receive_skb_core", PKTFILT_STAGE_RX, 0, 0, 0, 0 },
		{ "ip_rcv",	PKTFILT_STAGE_RX, 0, PF_FAMILY_IPV4, 0, 0 },
		{ "ipv6_rcv",	PKTFILT_STAGE_RX, 0, PF_FAMILY_IPV6, 0, 0 },
		/* tx: the LOCAL_OUT hooks after the module's (version 5) */
		{ "nf_hook_slow", PKTFILT_STAGE_TX, 0, 0, 5, 0 },
		/* before: the module sent the packet again */
		{ "ip_local_out", PKTFILT_STAGE_TX, 0, PF_FAMILY_IPV4, 0, 4 },
		{ "ip6_local_out", PKTFILT_STAGE_TX, 0, PF_FAMILY_IPV6, 0, 4 },
	};
	__u8 family = spec->saddr.family ? spec->saddr.family :
		      spec->daddr.family;
	size_t i, n = 0;

	if (!stages)
		stages = 1U << PKTFILT_STAGE_L4;	/* a version 1 module */
	/* ICMP is IPv4's, ICMPv6 IPv6's, at every stage. */
	if (!family && spec->proto == PKTFILT_PROTO_ICMP)
		family = PF_FAMILY_IPV4;
	if (!family && spec->proto == PKTFILT_PROTO_ICMPV6)
		family = PF_FAMILY_IPV6;
	for (i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++) {
		if (!(stages & (1U << handlers[i].stage)))
			continue;
		if (version < handlers[i].min_version ||
		    (handlers[i].max_version && version > handlers[i].max_version))
			continue;
		if (spec->proto && handlers[i].proto &&
		    spec->proto != handlers[i].proto)
			continue;
		if (family && handlers[i].family &&
		    family != handlers[i].family)
			continue;
		/* Ports: only TCP and UDP have them. */
		if ((spec->sport.set || spec->dport.set) && handlers[i].proto &&
		    handlers[i].proto != PKTFILT_PROTO_TCP &&
		    handlers[i].proto != PKTFILT_PROTO_UDP)
			continue;
		if (n < max)
			roots[n] = handlers[i].name;
		n++;
	}
	return n;
}

unsigned long pf_trace_buffer_kb(__u32 count, unsigned long ncpus,
				 unsigned long mem_kb, bool args)
{
	unsigned long kb, per = PF_BUF_KB_PACKET;

	if (args)
		per += per / 2;
	if (!count)
		kb = args ? PF_BUF_KB_UNLIMITED + PF_BUF_KB_UNLIMITED / 2 :
			    PF_BUF_KB_UNLIMITED;
	else if (count >= PF_BUF_KB_MAX / per)
		kb = PF_BUF_KB_MAX;
	else
		kb = (unsigned long)count * per;
	if (kb > PF_BUF_KB_MAX)
		kb = PF_BUF_KB_MAX;
	if (mem_kb && ncpus && kb > mem_kb / 4 / ncpus)
		kb = mem_kb / 4 / ncpus;
	return kb;
}
