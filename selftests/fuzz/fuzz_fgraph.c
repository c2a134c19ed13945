// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness of the trace reader (tool/fgraph.c) and every renderer
 * (tool/render*.c). The input is a trace, its first byte a seed:
 *
 * - parsed whole (pf_fgraph_parse_buf), then rendered as text, JSON,
 *   folded stacks, SVG and HTML;
 * - fed again in chunks of varying size (1 byte to 64 KiB, as "pktfilt
 *   trace" reads tracefs), which must give the same packets and counts;
 * - fed a third time to the streaming reader (pf_fgraph_new_stream()),
 *   each packet rendered as it completes, which must see the same packets;
 * - for each complete packet, its folded weights add up to its duration;
 * - the packet ids, stages and fates (pktfilt_free) are the same each way.
 *
 * Any crash, sanitizer report, leak or broken invariant (abort()) is a bug.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fgraph.h"
#include "render.h"

static FILE *null_out;

static void check(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_fgraph: invariant broken: %s\n", what);
		abort();
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	null_out = fopen("/dev/null", "w");
	return 0;
}

static uint32_t rng(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void render_all(const struct pf_trace *t)
{
	int (*const fns[])(FILE *, const struct pf_trace *) = {
		pf_render_text, pf_render_json, pf_render_folded,
		pf_render_svg, pf_render_html, pf_render_pcapng,
	};
	FILE *saved = stderr;
	size_t k;

	stderr = null_out;	/* the renderers' warnings */
	for (k = 0; k < sizeof(fns) / sizeof(fns[0]); k++)
		check(fns[k](null_out, t) == 0, "renderer failed");
	stderr = saved;
}

static void check_weights(const struct pf_trace *t)
{
	size_t i, j, n;

	for (i = 0; i < t->npackets; i++) {
		const struct pf_packet *pkt = t->packets[i];
		uint64_t *w, sum = 0;

		/* data= as the event said: within len=, all there. */
		check(pkt->caplen <= pkt->len && (!pkt->caplen || pkt->data) &&
		      (pkt->has_data || !pkt->caplen),
		      "packet bytes past their length");
		if (!pkt->complete)
			continue;
		check(pkt->graph != NULL, "complete packet without graph");
		n = pf_self_times(pkt, NULL, 0);
		w = malloc(n * sizeof(*w));
		if (!w)
			return;
		pf_self_times(pkt, w, n);
		for (j = 0; j < n; j++)
			sum = sum + w[j] < sum ? UINT64_MAX : sum + w[j];
		if (pkt->graph->duration_ns < UINT64_MAX / 2)
			check(sum == pkt->graph->duration_ns,
			      "self times do not add up to the root's duration");
		free(w);
	}
}

#ifdef PF_FGRAPH_STREAM
struct stream_seen {
	size_t packets, incomplete, fates[3];
	struct pf_render *r[4];
};

static int on_packet(void *arg, const struct pf_packet *pkt)
{
	struct stream_seen *s = arg;
	size_t k;

	s->packets++;
	s->incomplete += !pkt->complete;
	check(pkt->done, "a packet streamed before it is done");
	if ((unsigned int)pkt->fate < 3)
		s->fates[pkt->fate]++;
	for (k = 0; k < 4; k++)
		if (pf_render_packet(s->r[k], pkt))
			return -1;
	return 0;
}
#endif

/* The same calls: names, arguments, return values, nesting. */
static bool same_calls(const struct pf_node *a, const struct pf_node *b)
{
	size_t i;

	if (!a || !b)
		return a == b;
	if (strcmp(a->func, b->func) || !a->args != !b->args ||
	    !a->ret != !b->ret || (a->args && strcmp(a->args, b->args)) ||
	    (a->ret && strcmp(a->ret, b->ret)) ||
	    a->nchildren != b->nchildren)
		return false;
	for (i = 0; i < a->nchildren; i++)
		if (!same_calls(a->children[i], b->children[i]))
			return false;
	return true;
}

/*
 * What fgraph.c keeps: argument lists of printable ASCII, at most
 * PF_FGRAPH_MAX_ARGS, that pf_args_next() splits into as many items as
 * it has top-level ", "; return values "0x" + hex or "-" + digits.
 */
static bool calls_sane(const struct pf_node *n)
{
	struct pf_arg arg;
	size_t i, pos = 0, items = 0;

	if (!n)
		return true;
	if (n->args) {
		size_t len = strlen(n->args);

		if (!len || len > PF_FGRAPH_MAX_ARGS)
			return false;
		for (i = 0; i < len; i++)
			if (n->args[i] < 0x20 || n->args[i] > 0x7e)
				return false;
		while (pf_args_next(n->args, &pos, &arg)) {
			if (pos > len || arg.value + arg.value_len > n->args + len)
				return false;
			if (++items > len)
				return false;
		}
	}
	if (n->ret) {
		size_t len = strlen(n->ret);

		if (len < 2 || len > PF_FGRAPH_MAX_RET ||
		    (n->ret[0] != '-' && strncmp(n->ret, "0x", 2)))
			return false;
	}
	for (i = 0; i < n->nchildren; i++)
		if (!calls_sane(n->children[i]))
			return false;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data + 1;
	struct pf_trace *whole, *chunked;
	struct pf_fgraph *p;
	uint32_t seed;
	size_t len, off, i;

	if (!size)
		return 0;
	seed = data[0] * 2654435761u + 1;
	len = size - 1;

	whole = pf_fgraph_parse_buf(buf, len);
	if (!whole)
		return 0;	/* out of memory */
	render_all(whole);
	check_weights(whole);
	check(pf_trace_incomplete(whole) <= whole->npackets, "counts");

	p = pf_fgraph_new();
	if (!p)
		goto out;
	for (off = 0; off < len;) {
		uint32_t r = rng(&seed);
		size_t n = r % 4 == 0 ? 1 + r % 7 : r % 4 == 1 ?
			   1 + (r >> 4) % 65536 : 1 + (r >> 4) % 512;

		if (n > len - off)
			n = len - off;
		if (pf_fgraph_feed(p, buf + off, n))
			break;
		off += n;
	}
	chunked = pf_fgraph_finish(p);
	if (chunked) {
		check(chunked->npackets == whole->npackets,
		      "chunks change the packets");
		check(chunked->stats.lines == whole->stats.lines,
		      "chunks change the lines");
		check(chunked->stats.garbage == whole->stats.garbage,
		      "chunks change the garbage");
		check(chunked->stats.frees == whole->stats.frees &&
		      chunked->stats.frees_unmatched ==
		      whole->stats.frees_unmatched,
		      "chunks change the frees");
		for (i = 0; i < whole->npackets; i++) {
			check(chunked->packets[i]->seq == whole->packets[i]->seq,
			      "chunks change a seq");
			check(chunked->packets[i]->complete ==
			      whole->packets[i]->complete,
			      "chunks change completeness");
			check(chunked->packets[i]->raw_len ==
			      whole->packets[i]->raw_len,
			      "chunks change a packet's text");
			check(chunked->packets[i]->id == whole->packets[i]->id &&
			      !strcmp(chunked->packets[i]->stage,
				      whole->packets[i]->stage),
			      "chunks change an id or a stage");
			check(same_calls(chunked->packets[i]->graph,
					 whole->packets[i]->graph),
			      "chunks change a call, its arguments or return value");
			check(calls_sane(whole->packets[i]->graph),
			      "arguments or a return value not as parsed");
			check(chunked->packets[i]->fate ==
			      whole->packets[i]->fate &&
			      !strcmp(chunked->packets[i]->drop_reason,
				      whole->packets[i]->drop_reason),
			      "chunks change a fate");
		}
		pf_trace_free(chunked);
	}

#ifdef PF_FGRAPH_STREAM
	{
		struct stream_seen s = { 0 };
		static const enum pf_format fmts[4] = {
			PF_FORMAT_TEXT, PF_FORMAT_JSON, PF_FORMAT_FOLDED,
			PF_FORMAT_SVG,
		};
		struct pf_trace *st = NULL;
		FILE *saved = stderr;
		bool ok = true;

		stderr = null_out;
		for (i = 0; i < 4; i++) {
			s.r[i] = pf_render_new(fmts[i], null_out, NULL);
			ok = ok && s.r[i];
		}
		p = ok ? pf_fgraph_new_stream(on_packet, &s) : NULL;
		if (p) {
			for (off = 0; off < len;) {
				size_t n = 1 + rng(&seed) % 8192;

				if (n > len - off)
					n = len - off;
				if (pf_fgraph_feed(p, buf + off, n))
					break;
				off += n;
			}
			st = pf_fgraph_finish(p);
		}
		for (i = 0; i < 4; i++)
			if (s.r[i])
				pf_render_end(s.r[i]);
		stderr = saved;
		if (st) {
			check(s.packets == whole->npackets,
			      "streaming changes the packets");
			check(s.incomplete == pf_trace_incomplete(whole),
			      "streaming changes completeness");
			check(pf_trace_incomplete(st) ==
			      pf_trace_incomplete(whole), "streamed counts");
			for (i = 0; i < whole->npackets; i++)
				if ((unsigned int)whole->packets[i]->fate < 3)
					s.fates[whole->packets[i]->fate]--;
			check(!s.fates[0] && !s.fates[1] && !s.fates[2],
			      "streaming changes the fates");
			pf_trace_free(st);
		}
	}
#endif
out:
	pf_trace_free(whole);
	return 0;
}
