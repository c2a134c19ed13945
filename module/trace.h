/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pktfilt_packet trace event: written right before the graph of each
 * traced packet, so the reader knows which packet the graph belongs to.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM pktfilt

#if !defined(PKTFILT_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define PKTFILT_TRACE_H

#include <linux/in.h>
#include <linux/inet.h>
#include <linux/tracepoint.h>

#include "match.h"

TRACE_EVENT(pktfilt_packet,

	TP_PROTO(const struct pf_key *key, u64 seq, unsigned int cpu),

	TP_ARGS(key, seq, cpu),

	TP_STRUCT__entry(
		__field(u64, seq)
		__field(unsigned int, cpu)
		__field(u8, proto)
		__array(char, saddr, INET6_ADDRSTRLEN)
		__array(char, daddr, INET6_ADDRSTRLEN)
		__field(u16, sport)
		__field(u16, dport)
		__field(int, ifindex)
		__field(unsigned int, netns)
	),

	/* Formatted here: only traced packets get this far. */
	TP_fast_assign(
		__entry->seq = seq;
		__entry->cpu = cpu;
		__entry->proto = key->proto;
		if (key->family == PF_FAMILY_IPV4) {
			snprintf(__entry->saddr, INET6_ADDRSTRLEN, "%pI4", key->saddr);
			snprintf(__entry->daddr, INET6_ADDRSTRLEN, "%pI4", key->daddr);
		} else {
			snprintf(__entry->saddr, INET6_ADDRSTRLEN, "%pI6c", key->saddr);
			snprintf(__entry->daddr, INET6_ADDRSTRLEN, "%pI6c", key->daddr);
		}
		__entry->sport = key->sport;
		__entry->dport = key->dport;
		__entry->ifindex = key->ifindex;
		__entry->netns = key->netns;
	),

	TP_printk("seq=%llu cpu=%u proto=%s saddr=%s daddr=%s sport=%u dport=%u ifindex=%d netns=%u",
		  __entry->seq, __entry->cpu,
		  __print_symbolic(__entry->proto,
				   { IPPROTO_ICMP, "icmp" },
				   { IPPROTO_TCP, "tcp" },
				   { IPPROTO_UDP, "udp" },
				   { IPPROTO_ICMPV6, "icmpv6" }),
		  __entry->saddr, __entry->daddr,
		  __entry->sport, __entry->dport,
		  __entry->ifindex, __entry->netns)
);

#endif /* PKTFILT_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
