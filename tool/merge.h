/* SPDX-License-Identifier: GPL-2.0 */
/*
 * "pktfilt merge": the traces of several machines joined into journeys.
 *
 * Each machine's trace is read once, streaming (fgraph.h). Of each
 * packet graph (one stage of one packet) only a small record stays in
 * memory: its packet id, stage, seq, wall-clock time (rt_ns=) and three
 * 64-bit hashes of what of its first bytes survives the wire (the match
 * keys, below); its rendering (text or JSON, as report prints it) goes
 * to a temporary file and is read back, one graph at a time, when its
 * journey is written. So memory grows by about 160 bytes per graph at
 * the peak (matching), whatever the graph's size, plus one graph at a
 * time.
 *
 * A machine's packet is its graphs with one packet id. Machine S's
 * packet whose last sent graph (tx, or an rx graph that forwarded it:
 * ip_forward() or ip6_forward() in it, a router's, since a forwarded
 * packet passes no tx stage) has the same key as machine R's packet's
 * first received graph (rx, else l4) was sent by S and received by R:
 * a link S -> R. Keys, tried in this order:
 *   bytes: the IP version, addresses, protocol, IPv4 identification or
 *          IPv6 fragment id, fragment offset and more-fragments flag,
 *          total length, IPv6 flow label; TCP ports, sequence and
 *          acknowledgment numbers and flags (FIN..URG); UDP ports; ICMP
 *          and ICMPv6 type, code, id and sequence; the payload's length
 *          and a hash of its first 16 bytes;
 *   nat:   the same without the addresses, ports and ICMP id (what NAT
 *          rewrites);
 *   ip:    the IP header's fields of "bytes" alone, only where one of
 *          the two graphs lacks the transport header's bytes.
 * Hop limit, checksums, TOS and the IPv4 DF flag are not in any key; but
 * a link S -> R needs R's TTL (hop limit) at most what S's packet left
 * with (a forwarding rx graph's less one: its bytes are from before the
 * decrement), routers only lowering it. Between two machines that both
 * forward the packet (each rx graph sent and received at once, the same
 * bytes) that alone tells the way.
 * One packet links to at most one packet of each other machine in each
 * direction. Where one key is on exactly one packet of each side, the
 * link is sure; where several packets on a side share a key
 * (retransmissions, duplicates), each received copy is linked to the
 * latest copy sent before it (by the clock offset known from the sure
 * links), in order, and copies left over stay alone.
 *
 * Clocks: a graph's time is its event's wall clock (rt_ns=); a received
 * graph's is that less held_ns=, how long a lazy filter held the packet
 * at the stage before its replay (when the event is written). For
 * machines a < b, the offset o = clock_b - clock_a. A sure
 * link a -> b bounds it from above (o <= t_b - t_a: the one-way time is
 * never negative), one b -> a from below (o >= t_b - t_a): the interval
 * [max over b -> a, min over a -> b], as Trace Compass's convex hull
 * method with a constant offset. The estimate is its middle; with one
 * direction only, the offset has one bound and one-way times one bound.
 */
#ifndef PKTFILT_MERGE_H
#define PKTFILT_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fgraph.h"

struct pf_cmd;

extern const char pf_merge_synopsis[];
extern const char pf_merge_help[];
extern const char pf_merge_examples[];

/*
 * Run "pktfilt merge" (its arguments after "merge"). Exit status: 0,
 * 1 incomplete packets, lost events or an I/O error, 2 usage error.
 */
int pf_merge_run(const struct pf_cmd *cmd, int argc, char **argv);

/* More machines than this are refused. */
#define PF_MERGE_MAX_MACHINES	64
/* The payload's bytes hashed into the keys. */
#define PF_MERGE_PAYLOAD	16

enum pf_merge_format {
	PF_MERGE_TEXT,
	PF_MERGE_JSON,
	PF_MERGE_PCAPNG,	/* the graphs' bytes, frame.packet_id the journey */
	PF_MERGE_HTML,		/* a page, the machines as lanes */
};

enum pf_merge_tier {
	PF_MERGE_BYTES,
	PF_MERGE_NAT,
	PF_MERGE_IP,
	PF_MERGE_TIERS,
};

/* A pair of machines' clocks: o = clock of b - clock of a (a < b). */
struct pf_merge_clock {
	bool has_lo, has_hi;
	int64_t lo, hi;		/* ns, the bounds that are known */
	uint64_t n_ab, n_ba;	/* sure links a -> b, b -> a */
	uint64_t links;		/* all links, either way */
};

struct pf_merge_stats {
	uint64_t graphs;	/* packet graphs read */
	uint64_t packets;	/* machines' packets (ids) */
	uint64_t keyless;	/* ... without bytes to match */
	uint64_t tx;		/* ... sent: with a tx graph with bytes */
	uint64_t links;
	uint64_t journeys;	/* written */
	uint64_t alone;		/* ... of one machine's packet only */
	uint64_t incomplete;	/* graphs not complete */
	bool lost;		/* a trace lost events */
};

struct pf_merge;

/*
 * @in_memory: keep the renderings in memory, not in a temporary file
 * (tests, fuzzing). NULL with errno set on failure.
 */
struct pf_merge *pf_merge_new(enum pf_merge_format fmt, bool in_memory);

/*
 * The machines' traces, one after the other: begin (its name, copied),
 * feed its text in any chunks, end. Each returns 0 or a negative errno.
 */
int pf_merge_begin(struct pf_merge *m, const char *name);
int pf_merge_feed(struct pf_merge *m, const char *buf, size_t len);
int pf_merge_end(struct pf_merge *m);

/*
 * Match (once), then write the journeys to @out: 0 or a negative errno.
 */
int pf_merge_write(struct pf_merge *m, FILE *out);

/* After pf_merge_write(): the clocks of machines @a < @b, the counts. */
const struct pf_merge_clock *pf_merge_clock(const struct pf_merge *m,
					    size_t a, size_t b);
const struct pf_merge_stats *pf_merge_stats(const struct pf_merge *m);
void pf_merge_free(struct pf_merge *m);

/*
 * The keys of a packet's first bytes (from its IP header), @caplen of
 * its @len: have[t] false where there is no key of tier t. For tests.
 */
struct pf_merge_keys {
	bool have[PF_MERGE_TIERS];
	uint64_t k[PF_MERGE_TIERS];
};
void pf_merge_keys(const unsigned char *data, uint32_t caplen,
		   struct pf_merge_keys *keys);

#endif /* PKTFILT_MERGE_H */
