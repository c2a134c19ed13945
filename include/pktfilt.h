/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * pktfilt generic netlink UAPI, shared by pktfilt.ko and the pktfilt tool.
 *
 * Family "pktfilt", version PKTFILT_GENL_VERSION. All integers are in host
 * byte order except the IPv4/IPv6 addresses, which are in network order.
 *
 * SET carries the predicates; the kernel refuses (with an extack message):
 * a *_PLEN without its address, SADDR4 with SADDR6 (or DADDR4 with DADDR6),
 * a *_PORT_MAX without its *_PORT_MIN or below it, MARK_MASK without MARK,
 * and predicates that can never match (mixed families, ICMP with IPv6,
 * ICMPv6 with IPv4, ports with ICMP). IFINDEX alone matches that index in
 * every network namespace; add NETNS to name one interface.
 *
 * Permissions: SET, CLEAR and GET need CAP_NET_ADMIN in the initial user
 * namespace (EPERM from the generic netlink core otherwise), and so does
 * joining the "events" group. STATS is open to every user of the initial
 * network namespace; from another network namespace it needs CAP_NET_ADMIN
 * too. SET refuses with ESRCH while set_ftrace_pid is empty.
 *
 * GET replies carry STATE and STATS always, and PROBLEM when the module
 * cannot arm (a tracefs handler it watches is missing on this kernel) or is
 * pinned in memory (another module took over a slot it had wrapped); when armed, the predicates,
 * COUNT, FLAGS, FILTER_ID and (COUNT > 0) REMAINING; when idle, REASON if a
 * filter was disarmed before. STATS replies are GET replies without the
 * predicates.
 *
 * PACKET notifications carry SEQ, CPU, PROTO, SADDR4/6, DADDR4/6, SPORT and
 * DPORT (0 for ICMP), IFINDEX, NETNS and MARK of each traced graph, and
 * (version 2) its STAGE and PACKET_ID: one packet traced at several stages
 * (sent, then received in another namespace; received, then forwarded)
 * gives one notification per graph, all with the same PACKET_ID.
 */
#ifndef _UAPI_PKTFILT_H
#define _UAPI_PKTFILT_H

#define PKTFILT_GENL_NAME	"pktfilt"
/*
 * 2: stages (PKTFILT_A_STAGES) and packet ids, a classic BPF program
 * (PKTFILT_A_BPF, PKTFILT_A_EXPR). A SET without STAGES traces at
 * PKTFILT_STAGE_L4 only, as version 1 did.
 */
/*
 * 3: lazy filters (PKTFILT_F_LAZY, PKTFILT_A_HOLD_MS, HELD and READY),
 * PKTFILT_A_LAZY, PKTFILT_A_HELD_NS and the hold counters.
 * 4: the process that armed a lazy filter may write current_tracer and
 * set_ftrace_pid while the filter waits (pktfilt trace waits with the
 * tracer nop and no PID filter); READY checks set_ftrace_pid.
 * 5: tx goes on from LOCAL_OUT's hooks after the module's and the okfn,
 * not again from ip_local_out(): the tx graph's root is nf_hook_slow().
 * 6: the pktfilt_packet trace event carries the packet's first bytes from
 * its network header (len=, rt_ns=, data=), PKTFILT_A_SNAPLEN of them.
 * 7: PKTFILT_A_RX_FROM_IP.
 */
#define PKTFILT_GENL_VERSION	7
#define PKTFILT_MCGRP_EVENTS	"events"

enum pktfilt_cmd {
	PKTFILT_CMD_UNSPEC,
	PKTFILT_CMD_SET,	/* arm a filter, replacing any armed one (admin) */
	PKTFILT_CMD_GET,	/* reply: the armed filter, state and counters */
	PKTFILT_CMD_CLEAR,	/* disarm (admin) */
	PKTFILT_CMD_STATS,	/* reply: state and counters only */
	PKTFILT_CMD_PACKET,	/* multicast to "events": a packet was traced */
	/*
	 * Version 3, lazy filters (PKTFILT_F_LAZY). HELD: multicast to
	 * "events" when a lazy filter holds its first packet (FILTER_ID,
	 * HELD): the scope is to be patched now. READY (admin, FILTER_ID):
	 * the scope is patched; the held packets are replayed, traced.
	 */
	PKTFILT_CMD_HELD,
	PKTFILT_CMD_READY,

	__PKTFILT_CMD_MAX,
	PKTFILT_CMD_MAX = __PKTFILT_CMD_MAX - 1
};

/* Values of PKTFILT_A_PROTO: the IPPROTO_* numbers. */
#define PKTFILT_PROTO_ICMP	1
#define PKTFILT_PROTO_TCP	6
#define PKTFILT_PROTO_UDP	17
#define PKTFILT_PROTO_ICMPV6	58

/*
 * Where a packet is traced (PKTFILT_A_STAGE; bit 1 << stage in
 * PKTFILT_A_STAGES):
 *  L4: the IP protocol handler only (tcp_v4_rcv(), udp_rcv(), ...);
 *  RX: the receive from the device on (netif_receive_skb_core(): taps,
 *      tc ingress, bridge/VLAN handlers, the protocol dispatch), then IP
 *      receive: netfilter, routing, local delivery to the socket or
 *      forwarding and the output to the next device (a packet not seen at
 *      the device: from ip_rcv(), ipv6_rcv() on);
 *  TX: a locally generated packet from netfilter's LOCAL_OUT (the
 *      OUTPUT hooks, then the output: routing, POSTROUTING, neighbours,
 *      the qdisc) to the driver's transmit.
 */
enum pktfilt_stage {
	PKTFILT_STAGE_L4,
	PKTFILT_STAGE_RX,
	PKTFILT_STAGE_TX,

	__PKTFILT_STAGE_MAX,
	PKTFILT_STAGE_MAX = __PKTFILT_STAGE_MAX - 1
};

#define PKTFILT_STAGES_ALL	((1U << __PKTFILT_STAGE_MAX) - 1)

/* Bits of PKTFILT_A_FLAGS (SET). */
/*
 * On the new SET: refuse to replace an armed filter that another socket set
 * with PKTFILT_F_OWNED (a running `pktfilt trace`). A plain SET or CLEAR
 * still replaces or removes it.
 */
#define PKTFILT_F_EXCLUSIVE	(1U << 0)
/* Clear the filter when the socket that armed it is closed. */
#define PKTFILT_F_OWNED		(1U << 1)
/*
 * Lazy (version 3): the scope is not patched while the filter waits. The
 * first matching packet is held at its stage's hook and HELD is sent; the
 * owner patches the scope and sends READY, and the held packets are
 * replayed, traced. Not answered within HOLD_MS, they go on untraced.
 */
#define PKTFILT_F_LAZY		(1U << 2)
#define PKTFILT_F_ALL		(PKTFILT_F_EXCLUSIVE | PKTFILT_F_OWNED | \
				 PKTFILT_F_LAZY)

/* Values of PKTFILT_A_LAZY: where a lazy filter is. */
enum pktfilt_lazy {
	PKTFILT_LAZY_WAITING,	/* nothing patched, no packet held */
	PKTFILT_LAZY_HOLDING,	/* a packet held, the scope being patched */
	PKTFILT_LAZY_ARMED,	/* the scope patched: packets traced */
};

/* Values of PKTFILT_A_STATE. */
enum pktfilt_state {
	PKTFILT_STATE_IDLE,	/* nothing armed, no hook installed */
	PKTFILT_STATE_ARMED,	/* hooks installed, matching packets traced */
};

enum pktfilt_attr {
	PKTFILT_A_UNSPEC,
	PKTFILT_A_PAD,

	/* Predicates (SET, and echoed by GET). Each is optional; all AND. */
	PKTFILT_A_PROTO,	/* u8, one of PKTFILT_PROTO_* */
	PKTFILT_A_SADDR4,	/* be32 */
	PKTFILT_A_SADDR6,	/* 16 bytes */
	PKTFILT_A_SADDR_PLEN,	/* u8 prefix length, default full length */
	PKTFILT_A_DADDR4,	/* be32 */
	PKTFILT_A_DADDR6,	/* 16 bytes */
	PKTFILT_A_DADDR_PLEN,	/* u8 */
	PKTFILT_A_SPORT_MIN,	/* u16 */
	PKTFILT_A_SPORT_MAX,	/* u16, default SPORT_MIN */
	PKTFILT_A_DPORT_MIN,	/* u16 */
	PKTFILT_A_DPORT_MAX,	/* u16, default DPORT_MIN */
	PKTFILT_A_IFINDEX,	/* u32, input interface */
	PKTFILT_A_NETNS,	/* u32, inode number of the packet's netns */
	PKTFILT_A_MARK,		/* u32, skb->mark value */
	PKTFILT_A_MARK_MASK,	/* u32, default 0xffffffff */
	PKTFILT_A_COUNT,	/* u32 packets to trace, default 1, 0 = no limit */
	PKTFILT_A_FLAGS,	/* u32, PKTFILT_F_* */

	/* State and counters (GET, STATS replies). */
	PKTFILT_A_STATE,	/* u8, enum pktfilt_state */
	PKTFILT_A_REMAINING,	/* u32, packets left to trace (COUNT > 0) */
	PKTFILT_A_FILTER_ID,	/* u32, increases with every SET */
	PKTFILT_A_STATS,	/* nested, enum pktfilt_stat */
	PKTFILT_A_REASON,	/* string, why the last filter was disarmed */

	/* Traced packet (PACKET notifications). */
	PKTFILT_A_SEQ,		/* u64, sequence number, as in the trace event */
	PKTFILT_A_CPU,		/* u32 */
	PKTFILT_A_SPORT,	/* u16 */
	PKTFILT_A_DPORT,	/* u16 */

	/* GET, STATS replies: a condition of the module's, if any. */
	PKTFILT_A_PROBLEM,	/* string: why it cannot arm, or why it is pinned */

	/* Version 2. */
	PKTFILT_A_STAGES,	/* u32, bits 1 << PKTFILT_STAGE_* (SET, GET) */
	PKTFILT_A_STAGE,	/* u8, PKTFILT_STAGE_* of a traced graph */
	PKTFILT_A_PACKET_ID,	/* u64, the same for every graph of a packet */
	/*
	 * A classic BPF program (struct sock_filter[], 1 to 4096 of them) run
	 * on the packet from its IP header on, ANDed with the predicates:
	 * what libpcap compiles for DLT_RAW. Nonzero return: it matches.
	 */
	PKTFILT_A_BPF,		/* binary (SET) */
	PKTFILT_A_EXPR,		/* string, the expression BPF came from (SET, GET) */

	/* Version 3. */
	PKTFILT_A_HOLD_MS,	/* u32, a held packet's bound (SET, GET; lazy) */
	PKTFILT_A_LAZY,		/* u8, enum pktfilt_lazy (GET, STATS; lazy) */
	PKTFILT_A_HELD,		/* u32, packets held now (HELD, GET, STATS) */
	PKTFILT_A_HELD_NS,	/* u64, how long the packet was held (PACKET) */

	/*
	 * Version 6: how many bytes of each traced packet, from its network
	 * header, its pktfilt_packet event carries (data=), 0 to
	 * PKTFILT_SNAPLEN_MAX; PKTFILT_SNAPLEN_DEFAULT without it.
	 */
	PKTFILT_A_SNAPLEN,	/* u32 (SET, GET) */

	/*
	 * Version 7 (GET, STATS replies): this kernel's device receive cannot
	 * be hooked (ftrace cannot send a call on elsewhere: arm64 before
	 * 6.2), so rx is traced from ip_rcv() and ipv6_rcv() on.
	 */
	PKTFILT_A_RX_FROM_IP,	/* flag */

	__PKTFILT_A_MAX,
	PKTFILT_A_MAX = __PKTFILT_A_MAX - 1
};

/*
 * PKTFILT_A_SNAPLEN's bound: the event's text line (two hex digits a byte)
 * must fit the kernel's trace_seq page of 4 KiB with the event's other
 * fields and function_graph's prefix.
 */
#define PKTFILT_SNAPLEN_DEFAULT	256
#define PKTFILT_SNAPLEN_MAX	1500

/* Counters since the module was loaded, nested in PKTFILT_A_STATS. */
enum pktfilt_stat {
	PKTFILT_STAT_UNSPEC,
	PKTFILT_STAT_PAD,
	PKTFILT_STAT_SEEN,	/* u64 packets that went through a hook */
	PKTFILT_STAT_MATCHED,	/* u64 packets that matched the predicates */
	PKTFILT_STAT_TRACED,	/* u64 matching packets that were traced */
	PKTFILT_STAT_NOT_READY,	/* u64 matched, not traced: tracefs not ready */
	PKTFILT_STAT_EXHAUSTED,	/* u64 matched after the count was used up */
	/* u64 matched, not traced: the gate could not open (not expected) */
	PKTFILT_STAT_GATE_MISSED,
	/* u64 graphs of packets followed from an earlier stage (version 2) */
	PKTFILT_STAT_FOLLOWED,
	/* u64 traced packets freed with a drop reason (version 2) */
	PKTFILT_STAT_DROPPED,
	/* u64 matching packets held by a lazy filter (version 3) */
	PKTFILT_STAT_HELD,
	/* u64 held packets let go untraced: the bound passed, or disarmed */
	PKTFILT_STAT_HOLD_EXPIRED,
	/* u64 held packets dropped: their device went down or away */
	PKTFILT_STAT_HOLD_FLUSHED,
	/* u64 matching packets not held: the queue was full */
	PKTFILT_STAT_HOLD_FULL,

	__PKTFILT_STAT_MAX,
	PKTFILT_STAT_MAX = __PKTFILT_STAT_MAX - 1
};

#endif /* _UAPI_PKTFILT_H */
