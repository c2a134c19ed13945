/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pktfilt_packet trace event: written right before the graph of each
 * traced packet, so the reader knows which packet the graph belongs to:
 * its stage, its packet id (the same at every stage of one packet) and the
 * function the graph starts at. pktfilt_free: how a traced packet ended.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM pktfilt

#if !defined(PKTFILT_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define PKTFILT_TRACE_H

#include <linux/in.h>
#include <linux/inet.h>
#include <linux/kallsyms.h>
#include <linux/trace_seq.h>
#include <linux/tracepoint.h>
#ifdef PF_DROP_REASON_NAMES
#include <net/dropreason.h>
#endif

#include <pktfilt.h>

#include "internal.h"

#ifndef PKTFILT_TRACE_ADDR
#define PKTFILT_TRACE_ADDR
/*
 * An address as the trace's reader sees it, "10.9.0.2" or "fd00::2",
 * formatted when the trace is read (TP_printk), into the seq buffer @p.
 */
static inline const char *pf_trace_addr(struct trace_seq *p, u8 family,
					const u8 *addr)
{
	const char *ret = trace_seq_buffer_ptr(p);

	if (family == PF_FAMILY_IPV4)
		trace_seq_printf(p, "%pI4", addr);
	else
		trace_seq_printf(p, "%pI6c", addr);
	trace_seq_putc(p, 0);
	return ret;
}

/*
 * " func=caller+off/size" for pktfilt_free, or nothing where the kernel's
 * address is not the caller's: 0 (it did not say), or function_graph's
 * return trampoline, which stands where the caller's address was while
 * the freeing function is traced (report finds the caller in the graph).
 * When the trace is read, not when the packet is freed.
 */
static inline const char *pf_trace_func(struct trace_seq *p,
					const void *location)
{
	const char *ret = trace_seq_buffer_ptr(p);
	char sym[KSYM_SYMBOL_LEN];

	if (location) {
		sprint_symbol(sym, (unsigned long)location);
		if (strncmp(sym, "return_to_handler+", 18))
			trace_seq_printf(p, " func=%s", sym);
	}
	trace_seq_putc(p, 0);
	return ret;
}

/*
 * A name of pktfilt_nft's, cut to @len - 1: copied inline, since the
 * event is recorded inside a graph, where a call to the kernel's string
 * functions would show.
 */
static __always_inline void pf_trace_name(char *dst, const char *src,
					  int len)
{
	int i;

	for (i = 0; i < len - 1 && src[i]; i++)
		dst[i] = src[i];
	dst[i] = 0;
}
#endif

/*
 * Version 6: len= the packet's length from its network header, rt_ns= the
 * wall-clock time (graph times use the trace clock), data= its first
 * @caplen bytes from the network header, in hex (pf_caplen()). Copied
 * only here, for a traced packet: an untraced one pays nothing.
 */
TRACE_EVENT(pktfilt_packet,

	TP_PROTO(const struct pf_key *key, u64 seq, unsigned int cpu,
		 u8 stage, u64 id, u8 root, u64 held_ns,
		 const struct sk_buff *skb, u32 len, u32 caplen),

	TP_ARGS(key, seq, cpu, stage, id, root, held_ns, skb, len, caplen),

	TP_STRUCT__entry(
		__field(u64, seq)
		__field(unsigned int, cpu)
		__field(u8, proto)
		__field(u8, family)
		__array(u8, saddr, 16)
		__array(u8, daddr, 16)
		__field(u16, sport)
		__field(u16, dport)
		__field(int, ifindex)
		__field(unsigned int, netns)
		__field(u8, stage)
		__field(u64, id)
		__field(u8, root)
		__field(u64, held_ns)
		__field(u32, len)
		__field(u64, rt_ns)
		__dynamic_array(u8, data, caplen)
	),

	/* Raw bytes only: formatting (vsprintf) is left to the reader. */
	TP_fast_assign(
		__entry->seq = seq;
		__entry->cpu = cpu;
		__entry->proto = key->proto;
		__entry->family = key->family;
		memcpy(__entry->saddr, key->saddr, 16);
		memcpy(__entry->daddr, key->daddr, 16);
		__entry->sport = key->sport;
		__entry->dport = key->dport;
		__entry->ifindex = key->ifindex;
		__entry->netns = key->netns;
		__entry->stage = stage;
		__entry->id = id;
		__entry->root = root;
		__entry->held_ns = held_ns;
		__entry->len = len;
		__entry->rt_ns = ktime_get_real_ns();
		if (caplen && skb_copy_bits(skb, skb_network_offset(skb),
					    __get_dynamic_array(data), caplen))
			memset(__get_dynamic_array(data), 0, caplen);
	),

	TP_printk("seq=%llu cpu=%u proto=%s saddr=%s daddr=%s sport=%u dport=%u ifindex=%d netns=%u stage=%s id=%llu root=%s held_ns=%llu len=%u rt_ns=%llu data=%s",
		  __entry->seq, __entry->cpu,
		  __print_symbolic(__entry->proto,
				   { IPPROTO_ICMP, "icmp" },
				   { IPPROTO_TCP, "tcp" },
				   { IPPROTO_UDP, "udp" },
				   { IPPROTO_ICMPV6, "icmpv6" }),
		  pf_trace_addr(p, __entry->family, __entry->saddr),
		  pf_trace_addr(p, __entry->family, __entry->daddr),
		  __entry->sport, __entry->dport,
		  __entry->ifindex, __entry->netns,
		  __print_symbolic(__entry->stage,
				   { PKTFILT_STAGE_L4, "l4" },
				   { PKTFILT_STAGE_RX, "rx" },
				   { PKTFILT_STAGE_TX, "tx" }),
		  __entry->id,
		  __print_symbolic(__entry->root,
				   { PF_ROOT_TCP4, "tcp_v4_rcv" },
				   { PF_ROOT_UDP4, "udp_rcv" },
				   { PF_ROOT_ICMP4, "icmp_rcv" },
				   { PF_ROOT_TCP6, "tcp_v6_rcv" },
				   { PF_ROOT_UDP6, "udpv6_rcv" },
				   { PF_ROOT_ICMP6, "icmpv6_rcv" },
				   { PF_ROOT_IP_RCV, "ip_rcv" },
				   { PF_ROOT_IPV6_RCV, "ipv6_rcv" },
				   { PF_ROOT_NF_OUT, "nf_hook_slow" },
				   { PF_ROOT_NETIF_CORE, "netif_receive_skb_core" }),
		  __entry->held_ns, __entry->len, __entry->rt_ns,
		  __print_hex_str(__get_dynamic_array(data),
				  __get_dynamic_array_len(data)))
);

#ifndef PKTFILT_TRACE_REASONS
#define PKTFILT_TRACE_REASONS
/* The kernel's drop reasons as its kfree_skb event names them. */
#undef PF_FN
#undef PF_FNe
#define PF_FN(reason)	{ SKB_DROP_REASON_##reason, #reason },
#define PF_FNe(reason)	{ SKB_DROP_REASON_##reason, #reason }
/* No names before 6.0: a drop's reason is UNKNOWN (5.10) or a number. */
#ifdef PF_DROP_REASON_NAMES
#define PF_DROP_REASONS	DEFINE_DROP_REASON(PF_FN, PF_FNe)
#else
#define PF_DROP_REASONS	{ PF_FREE_UNKNOWN, "UNKNOWN" }
#endif
#endif

TRACE_EVENT(pktfilt_free,

	TP_PROTO(u64 id, int reason, const void *location),

	TP_ARGS(id, reason, location),

	TP_STRUCT__entry(
		__field(u64, id)
		__field(int, reason)
		__field(const void *, location)
	),

	TP_fast_assign(
		__entry->id = id;
		__entry->reason = reason;
		__entry->location = location;
	),

	TP_printk("id=%llu reason=%s%s", __entry->id,
		  __print_symbolic(__entry->reason,
				   { PF_FREE_CONSUMED, "CONSUMED" },
				   PF_DROP_REASONS),
		  pf_trace_func(p, __entry->location))
);

/*
 * pktfilt_nft: one nftables verdict for the traced packet @id, as
 * nf_tables' own trace would send it (nft.c): the table (family, name)
 * and chain, the rule's handle (0: none), the trace's type (rule, return,
 * policy), the verdict (the policy's for a policy), a jump or goto's
 * target chain, the namespace's inode (whose ruleset it is). Names longer than PF_NFT_NAME - 1 are cut.
 */
#define PF_NFT_NAME	64

TRACE_EVENT(pktfilt_nft,

	TP_PROTO(u64 id, u8 family, const char *table, const char *chain,
		 u64 handle, u8 type, int verdict, const char *target,
		 unsigned int netns),

	TP_ARGS(id, family, table, chain, handle, type, verdict, target,
		netns),

	TP_STRUCT__entry(
		__field(u64, id)
		__field(u64, handle)
		__field(int, verdict)
		__field(unsigned int, netns)
		__field(u8, family)
		__field(u8, type)
		__array(char, table, PF_NFT_NAME)
		__array(char, chain, PF_NFT_NAME)
		__array(char, target, PF_NFT_NAME)
	),

	TP_fast_assign(
		__entry->id = id;
		__entry->handle = handle;
		__entry->verdict = verdict;
		__entry->netns = netns;
		__entry->family = family;
		__entry->type = type;
		pf_trace_name(__entry->table, table, PF_NFT_NAME);
		pf_trace_name(__entry->chain, chain, PF_NFT_NAME);
		pf_trace_name(__entry->target, target, PF_NFT_NAME);
	),

	/* Numbers as in linux/netfilter.h and linux/netfilter/nf_tables.h. */
	TP_printk("id=%llu family=%s table=%s chain=%s handle=%llu type=%s verdict=%s target=%s netns=%u",
		  __entry->id,
		  __print_symbolic(__entry->family,
				   { 1, "inet" }, { 2, "ip" }, { 3, "arp" },
				   { 5, "netdev" }, { 7, "bridge" },
				   { 10, "ip6" }),
		  __entry->table, __entry->chain, __entry->handle,
		  __print_symbolic(__entry->type,
				   { 1, "policy" }, { 2, "return" },
				   { 3, "rule" }),
		  __print_symbolic(__entry->verdict,
				   { 0, "drop" }, { 1, "accept" },
				   { 2, "stolen" }, { 3, "queue" },
				   { 4, "repeat" }, { -1, "continue" },
				   { -2, "break" }, { -3, "jump" },
				   { -4, "goto" }, { -5, "return" }),
		  __entry->target[0] ? __entry->target : "-",
		  __entry->netns)
);

#endif /* PKTFILT_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
