/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Renderings of parsed function_graph traces (fgraph.h): the packets'
 * original lines, JSON Lines, folded stacks, a flame graph in SVG.
 *
 * Each returns 0, or a negative errno if writing @out failed or memory ran
 * out. Folded stacks and SVG need whole graphs: they skip incomplete
 * packets with a warning on stderr.
 */
#ifndef PKTFILT_RENDER_H
#define PKTFILT_RENDER_H

#include <stdint.h>
#include <stdio.h>

#include "fgraph.h"

/*
 * Text: for each packet a header line, then its function_graph lines as
 * the kernel printed them (other CPUs' lines taken out; a pktfilt_free
 * inside the graph among them, at its point):
 *
 *   # packet 1 (rx, id 1): udp 10.9.0.1:4000 -> 10.9.0.2:9000 ifindex 2 netns 4026532165 cpu 1
 *
 * with " [INCOMPLETE: why]" at its end if it is; SEQ, STAGE and ID come
 * from the event. If its fate is known, a second header line,
 * "# dropped: REASON in FUNC" ("in FUNC" only if the kernel named it) or
 * "# consumed". Packets are separated by an empty line.
 */
int pf_render_text(FILE *out, const struct pf_trace *trace);
int pf_render_text_packet(FILE *out, const struct pf_packet *pkt);

/*
 * JSON Lines: one object per packet, its members seq, stage, id, cpu,
 * proto, saddr, daddr, sport, dport, ifindex, netns, fate ("dropped",
 * "consumed" or null: unknown), drop ({"reason": R, "func": F or null}
 * if dropped, else null), complete, incomplete (the reasons, a string, or
 * null), graph: the root call, or null,
 *
 *   {"func": "udp_rcv", "duration_ns": 6537750, "children": [...]}
 *
 * and filter: the renderer's pf_render_opts.filter, or null (unknown:
 * always so here and in pf_render_json_packet()). duration_ns is null for
 * a call whose return is missing.
 */
int pf_render_json(FILE *out, const struct pf_trace *trace);
int pf_render_json_packet(FILE *out, const struct pf_packet *pkt);

/*
 * Folded stacks, as flamegraph.pl, inferno or speedscope read them: one
 * "root;child;...;leaf WEIGHT" line per distinct stack, the weights in ns,
 * merged across all the complete packets given, sorted by stack.
 *
 * WEIGHT is the self time of the call: its duration minus its children's.
 * The printed durations are rounded down (to 1 us at worst, past 10 ms),
 * so children may add up to more than their parent: a self time below 0
 * is taken as 0, and what that adds is taken back from the root's self
 * time (then from its descendants' in call order, should the root's not
 * suffice). So the weights of one packet always add up exactly to its
 * root's duration_ns.
 */
int pf_render_folded(FILE *out, const struct pf_trace *trace);

/*
 * The self times described above, for @pkt's nodes in depth-first
 * pre-order (the root first), into @weights[0..n). Returns the number of
 * nodes (fill nothing if it exceeds @n, so call with 0 to count).
 */
size_t pf_self_times(const struct pf_packet *pkt, uint64_t *weights, size_t n);

/*
 * A self-contained SVG: for each complete packet, a header with its seq,
 * stage, id, tuple, total time and fate, and an icicle graph (the root on
 * top, callees below it, each call as wide as its duration, in call order
 * from the left); the packets one under the other, each on its own time
 * scale. Hovering a call shows its name, duration and share of the
 * packet; an inline script zooms to a call clicked and searches the
 * names, with a count, as flamegraph.pl's SVGs do.
 */
int pf_render_svg(FILE *out, const struct pf_trace *trace);

/*
 * The Trace Event Format that Perfetto (ui.perfetto.dev) and
 * chrome://tracing open, as one JSON object {"traceEvents": [...],
 * "displayTimeUnit": "ns", "otherData": {"generator": "pktfilt",
 * "filter": F}} (F as JSON's filter above): process 1 "pktfilt",
 * a track (thread) per CPU, tid = the CPU, named "CPU N" by "M" events;
 * each call of a packet's graph a complete event ("ph": "X", "ts" and
 * "dur" in microseconds, 3 decimals: ns exact) nested in its caller's;
 * the root's "cat" is "packet" and its "args" the packet's seq, stage,
 * id, proto, saddr, daddr, sport, dport, ifindex, netns, cpu, fate
 * (drop_reason, drop_func), complete (incomplete). A packet without a
 * graph is an instant event ("ph": "i") with those args.
 *
 * Times: with funcgraph-abstime in the trace, each call starts at its
 * timestamp (microseconds), moved later where it would start before its
 * caller or the callee before it ended. Without (pktfilt trace's
 * setting), the packets are laid out one after the other in the order of
 * their events, 10 us apart, and each call's callees one after the
 * other from its start. A callee never reaches past its caller's end:
 * the durations are truncated to fit, the callees may add up to more
 * than their caller (args.duration_ns then keeps the real one). A call
 * whose return is missing lasts until its last callee's end, with
 * args.returned false.
 */
int pf_render_chrome(FILE *out, const struct pf_trace *trace);

/*
 * One self-contained HTML page to explore the packets in a browser
 * (nothing fetched: it works offline, from file://): the packet list,
 * each packet's call tree (collapsible, durations and self times, slow
 * calls, the fate at its place, calls that did not return), a search by
 * name (substring or glob) and an icicle graph to zoom, linked to the
 * tree. The data is JSON in <script type="application/json"> elements,
 * one pair (header, graph) per packet, written as the packets come; the
 * graph flat in call order, [NAME, DURATION_NS or null, CALLEES, ...].
 * Incomplete packets are included, marked.
 */
int pf_render_html(FILE *out, const struct pf_trace *trace);
/* pcapng (pcapng.c): the packets with bytes (version 6 events). */
int pf_render_pcapng(FILE *out, const struct pf_trace *trace);

/*
 * The same format for packets to be compared (pktfilt diff): @pkts[i] is
 * process i + 1, named @names[i] and sorted so, with a track per CPU as
 * above; each process's packet starts at time 0 (with funcgraph-abstime,
 * its calls at their timestamps less its root's), so that the packets'
 * calls line up. otherData's filter is null.
 */
int pf_render_chrome_processes(FILE *out,
			       const struct pf_packet *const *pkts,
			       const char *const *names, size_t n);

/*
 * Streaming: a renderer given the packets one by one (as a streaming
 * parser, pf_fgraph_new_stream(), hands them over), which writes each as
 * it comes where it can (text, JSON: the same output as above) and keeps
 * only what the end needs: the distinct stacks for folded, the drawn
 * packets in a temporary file for SVG (whose header needs the height).
 * @opts (NULL: none) says what the output tells besides the packets: its
 * filter, the pf_format_filter() words of the filter that traced them
 * ("--proto udp --count 1 --at rx 'udp port 53'"), copied; NULL if
 * unknown (a trace read from a file).
 * pf_render_new() returns NULL with errno set on failure;
 * pf_render_packet() returns 0 or the first error (writing, memory);
 * pf_render_end() writes what remains, flushes, frees @r, and returns 0
 * or the first error.
 */
enum pf_format {
	PF_FORMAT_TEXT,
	PF_FORMAT_JSON,
	PF_FORMAT_FOLDED,
	PF_FORMAT_SVG,
	PF_FORMAT_CHROME,
	PF_FORMAT_HTML,
	PF_FORMAT_PCAPNG,	/* pcapng.c: the packets' bytes */
};

struct pf_render;

struct pf_resolver;

struct pf_render_opts {
	const char *filter;
	/*
	 * pcapng: names the interfaces (ifindex, netns) where it can, e.g.
	 * pf_system_resolver for packets of this machine; NULL: by number.
	 */
	const struct pf_resolver *names;
};

struct pf_render *pf_render_new(enum pf_format fmt, FILE *out,
				const struct pf_render_opts *opts);
int pf_render_packet(struct pf_render *r, const struct pf_packet *pkt);
int pf_render_end(struct pf_render *r);

/* Length of the valid UTF-8 sequence at @s (of @n bytes), 0 if invalid. */
size_t pf_utf8_len(const unsigned char *s, size_t n);

/* "10.9.0.1:4000", "[fd00::1]:4000", or the bare address without ports. */
void pf_print_endpoint(FILE *out, const struct pf_packet *pkt,
		       const char *addr, unsigned int port);

#endif /* PKTFILT_RENDER_H */
