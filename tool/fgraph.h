/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The text of ftrace's function_graph tracer (tracefs "trace" or
 * "trace_pipe"), parsed into the call trees of the packets pktfilt traced.
 *
 * A traced packet is a pktfilt_packet event line, then, on the same CPU,
 * one graph rooted at the function the event's root= names
 * (netif_receive_skb_core or ip_rcv at stage rx, nf_hook_slow at tx, ...)
 * or, for events without root= (pktfilt version 1), at a protocol
 * handler the module wraps (tcp_v4_rcv, udp_rcv, icmp_rcv, tcp_v6_rcv,
 * udpv6_rcv, icmpv6_rcv). One packet followed
 * through several stages has one event and graph per stage, all with the
 * same id=. A pktfilt_free event (in a graph or not, on any CPU) tells
 * how the packet with its id ended: the first one of an id is given to
 * every packet of that id still open or waiting for it (see
 * PF_FGRAPH_FREE_WAIT). The lines of
 * several CPUs may interleave: each CPU has its own state. Pure text
 * processing: no system access, safe on any input (the parser is meant to
 * be fuzzed), and bounded in depth (PF_FGRAPH_MAX_DEPTH).
 *
 * Nesting is read from the indentation the kernel prints (two spaces per
 * call depth) and checked against the braces: an entry "f() {" opens a
 * node, the "}" at the same depth closes it and carries its duration, a
 * leaf "f();" carries its own. Where they disagree (events lost in the
 * ring buffer), the nodes whose return is missing are left incomplete and
 * so is their packet, instead of shifting the rest of the graph.
 */
#ifndef PKTFILT_FGRAPH_H
#define PKTFILT_FGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Nodes deeper than this below a packet's root are not kept. */
#define PF_FGRAPH_MAX_DEPTH	512
/* The most bytes data= may carry (pcapng's usual snap length). */
#define PF_FGRAPH_MAX_DATA	65535
/* Lines longer than this are cut there (the kernel's are < 4096). */
#define PF_FGRAPH_MAX_LINE	(1U << 20)
/*
 * funcgraph-args' list, between the parentheses, longer than this is not
 * kept (the kernel's: at most 6 arguments and "..."); a return value
 * (funcgraph-retval) longer than this is not one.
 */
#define PF_FGRAPH_MAX_ARGS	2048
#define PF_FGRAPH_MAX_RET	24
/* CPU numbers at or above this are not believed. */
#define PF_FGRAPH_MAX_CPU	8192
/*
 * A packet whose event has id= and whose graph ended before a pktfilt_free
 * of its id came waits for one (it is not done); past this many waiting,
 * the one that waited longest stops waiting, its fate unknown. So at most
 * this many finished graphs more are held in memory.
 */
#define PF_FGRAPH_FREE_WAIT	64

struct pf_node {
	char *func;		/* as printed: "udp_rcv", "veth_xmit [veth]" */
	uint64_t duration_ns;	/* inclusive; 0 unless complete */
	struct pf_node **children;	/* in call order */
	size_t nchildren;
	bool complete;		/* its return (or leaf line) was seen */
	bool has_start;		/* the trace has funcgraph-abstime: */
	uint64_t start_ns;	/* its entry's timestamp (us precision) */
	/*
	 * funcgraph-args: the arguments as printed between the parentheses,
	 * "skb=0xffff8881..., len=42", NULL if none were (see pf_args_next()).
	 * funcgraph-retval: the return value as printed, "0x0" or "-22" (an
	 * error code, in decimal unless funcgraph-retval-hex), NULL if none.
	 */
	char *args;
	char *ret;
	/* private to the parser */
	size_t cap;
	unsigned int depth;	/* below the packet's root */
	bool outside;		/* in a detached call's tree, not the graph */
};

/* Why a packet is incomplete: bits of pf_packet.incomplete. */
enum pf_incomplete {
	PF_INC_LOST	= 1U << 0,	/* the ring buffer lost events meanwhile */
	PF_INC_EOF	= 1U << 1,	/* the trace ends inside the graph */
	PF_INC_NO_GRAPH	= 1U << 2,	/* no handler's graph after the event */
	PF_INC_NESTING	= 1U << 3,	/* entries or returns missing inside */
	PF_INC_CUT	= 1U << 4,	/* next event on its CPU came first */
	PF_INC_DEPTH	= 1U << 5,	/* deeper than PF_FGRAPH_MAX_DEPTH */
};

/* How a packet ended, from the pktfilt_free event of its id. */
enum pf_fate {
	PF_FATE_UNKNOWN,	/* no pktfilt_free of its id (in time) */
	PF_FATE_CONSUMED,	/* reason=CONSUMED: a normal end */
	PF_FATE_DROPPED,	/* any other reason */
};

/*
 * One nftables verdict of the packet, from a pktfilt_nft event inside its
 * graph (module/nft.c): nf_tables' own trace of the packet, at its place.
 */
#define PF_NFT_NAME	64
struct pf_nft {
	char family[8];		/* "inet", "ip", "ip6", "bridge", ... */
	char table[PF_NFT_NAME];
	char chain[PF_NFT_NAME];
	uint64_t handle;	/* the rule's, 0: none (a policy, a return) */
	char type[8];		/* "rule", "return", "policy" */
	char verdict[12];	/* "accept", "drop", "jump", "continue", ... */
	char target[PF_NFT_NAME];	/* jump/goto's chain, "" if none */
	char *rule;		/* the rule's text (rule=), NULL if unknown */
	unsigned long netns;	/* the namespace's inode, whose ruleset */
	char in[PF_NFT_NAME];	/* the innermost call open around it */
	uint64_t at_ns;		/* that call's start (funcgraph-abstime) */
	bool has_at;
	/* That call in the packet's graph, and its callees before it. */
	const struct pf_node *node;	/* NULL in a copy (diff) */
	size_t after;
};

struct pf_packet {
	/* From the pktfilt_packet event; 0 or "" where it lacks a field. */
	uint64_t seq;
	char stage[8];		/* "l4", "rx", "tx"; "l4" without stage= */
	uint64_t id;		/* the packet id; the seq without id= */
	bool has_id;		/* the event had id= (so a free may come) */
	char root[64];		/* root=, "" without: a protocol handler */
	unsigned int cpu;	/* the event's cpu=, else the line's CPU */
	char proto[8];		/* "tcp", "udp", "icmp", "icmpv6" */
	char saddr[46], daddr[46];
	unsigned int sport, dport;	/* 0 for ICMP */
	int ifindex;
	unsigned long netns;	/* inode */
	uint64_t held_ns;	/* held by a lazy filter before it (held_ns=) */
	/*
	 * Version 6: the packet's first bytes from its network header
	 * (data=, in hex), its length from there (len=) and the wall-clock
	 * time of the event (rt_ns=). has_data false: an older module's
	 * event, without data=.
	 */
	bool has_data;
	uint32_t len;
	uint64_t rt_ns;
	uint32_t caplen;	/* bytes in data, at most len */
	unsigned char *data;	/* NULL if caplen is 0 */

	/* From the first pktfilt_free event of its id, if any. */
	enum pf_fate fate;
	char drop_reason[48];	/* the kernel's name, "CONSUMED" too */
	char drop_func[128];	/* func= without +OFF/SIZE, "" if 0x0 */

	/* Its nftables verdicts (pktfilt_nft events in its graph), in order. */
	struct pf_nft *nft;
	size_t nnft;

	struct pf_node *graph;	/* the handler's call tree, NULL if none */
	bool complete;		/* root returned and nothing missing */
	unsigned int incomplete;	/* enum pf_incomplete bits */
	bool done;		/* no line will be added any more */
	char *raw_text;		/* this packet's lines, each ending in \n */
	size_t raw_len;
	/* private to the parser */
	size_t raw_cap;
	struct pf_chunk *chunks;	/* its nodes and their names */
};

struct pf_trace_stats {
	uint64_t lines;		/* lines read, the truncated last one too */
	uint64_t events;	/* pktfilt_packet events */
	uint64_t lost_reports;	/* "CPU:N [LOST ...]" lines */
	uint64_t lost_events;	/* the sum of their counts, saturated */
	bool lost_saturated;	/* ... at UINT64_MAX: at least that many */
	uint64_t lost_unknown;	/* "[LOST EVENTS]" lines: count unknown */
	uint64_t noise;		/* depth-0 calls outside any packet's graph */
	uint64_t stray;		/* deeper calls/returns outside any graph */
	uint64_t orphans;	/* returns inside a graph without their entry */
	uint64_t garbage;	/* lines not understood */
	uint64_t frees;		/* pktfilt_free events understood */
	uint64_t frees_unmatched;	/* of them, first of their id, no packet */
	uint64_t nft;		/* pktfilt_nft events given to a packet */
	bool truncated;		/* the last line had no newline and is cut */
	uint64_t streamed;	/* packets handed to a pf_packet_fn */
	uint64_t streamed_incomplete;	/* of them, not complete */
};

struct pf_trace {
	struct pf_packet **packets;	/* in the order of their events */
	size_t npackets;
	struct pf_trace_stats stats;
	/* private to the parser */
	size_t cap;
};

/*
 * Parse a whole trace: from a stream until EOF, or from a buffer. NULL
 * with errno set on a read error (pf_fgraph_parse) or out of memory; any
 * text at all is a valid trace.
 */
struct pf_trace *pf_fgraph_parse(FILE *in);
struct pf_trace *pf_fgraph_parse_buf(const char *buf, size_t len);
void pf_trace_free(struct pf_trace *trace);

/*
 * Incremental parsing, e.g. of trace_pipe as it is read: feed any chunks,
 * a line is parsed once its newline is in. pf_fgraph_trace() shows the
 * packets so far (a packet with done set will not change any more);
 * pf_fgraph_finish() parses what is left (an unterminated last line is
 * used only if it is whole), closes the packets still open as incomplete,
 * frees the parser and hands over the trace. pf_fgraph_feed() returns 0 or
 * -ENOMEM; after -ENOMEM the parser can only be finished or freed.
 */
struct pf_fgraph;

struct pf_fgraph *pf_fgraph_new(void);

/*
 * Streaming: the same parser, but each packet, once no line will be added
 * to it, is handed to @fn and then freed, instead of being kept in the
 * trace. So memory holds the packets still open (one per CPU at most),
 * not the trace. The packets come in the order of their events, except
 * that when more than a few hundred complete ones wait for an older
 * packet still open on another CPU, those go first. A non-zero return
 * of @fn (a negative errno) stops the parsing: pf_fgraph_feed() returns
 * it, and pf_fgraph_finish() returns NULL with errno set to it.
 * pf_fgraph_finish() hands over the last packets, then returns a trace
 * without packets: its stats (streamed, streamed_incomplete) count them.
 */
typedef int (*pf_packet_fn)(void *arg, const struct pf_packet *pkt);
struct pf_fgraph *pf_fgraph_new_stream(pf_packet_fn fn, void *arg);
int pf_fgraph_feed(struct pf_fgraph *p, const char *buf, size_t len);
const struct pf_trace *pf_fgraph_trace(const struct pf_fgraph *p);
struct pf_trace *pf_fgraph_finish(struct pf_fgraph *p);
void pf_fgraph_free(struct pf_fgraph *p);

/* Counting, streamed packets included. */
size_t pf_trace_packets(const struct pf_trace *trace);
size_t pf_trace_incomplete(const struct pf_trace *trace);
bool pf_trace_lost(const struct pf_trace *trace);

/*
 * "trace lost events, trace ends inside the graph": the reasons in
 * @incomplete, comma-separated, into @buf. Returns @buf.
 */
char *pf_incomplete_str(unsigned int incomplete, char *buf, size_t len);

/*
 * One paragraph for a human (stderr): packets, complete or not, lost
 * events, lines outside graphs or not understood, a truncated last line.
 */
void pf_trace_summary(FILE *out, const struct pf_trace *trace);

/*
 * One argument of a pf_node's args: "name=value" as print_function_args()
 * prints it (a value alone if BTF has no name; "..." past the sixth). The
 * value as printed: "42", "0xffff8881...", "?0x1" (type unknown),
 * "(STRUCT)[0x1:0x2]" (a struct by value). Not NUL-terminated.
 */
struct pf_arg {
	const char *name;	/* name_len 0: none */
	size_t name_len;
	const char *value;
	size_t value_len;
};

/*
 * The next argument of @args (a pf_node's args, or NULL) from *@pos (0 at
 * first): true with @a set and *@pos moved on, false after the last.
 */
bool pf_args_next(const char *args, size_t *pos, struct pf_arg *a);

/*
 * The verdict that decided the packet's fate: its last nftables verdict
 * if it is a drop (or queue, stolen), else NULL.
 */
const struct pf_nft *pf_nft_fate(const struct pf_packet *pkt);

/*
 * "inet filter input handle 7" (or "... policy", "... return" without a
 * rule), with @verdict ": drop" or ": jump sub" and " [RULE]", else
 * ": RULE", into @buf (snprintf's way): its length.
 */
int pf_nft_format(const struct pf_nft *e, char *buf, size_t len,
		  bool verdict);

/* The value of hexadecimal digit @c, or -1 (the trace's bytes, JSON's \u). */
static inline int pf_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif /* PKTFILT_FGRAPH_H */
