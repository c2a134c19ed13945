// SPDX-License-Identifier: GPL-2.0
/*
 * The chrome renderer: the Trace Event Format that Perfetto and
 * chrome://tracing open, for pf_render_new()'s packets and for the packets
 * pktfilt diff compares (pf_render_chrome_processes()). See render.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "render_int.h"

/* Between packets laid out one after the other (no timestamps): 10 us. */
#define CHROME_GAP_NS	10000

/*
 * The document being written. Its packets go to the current process, pid
 * (0 until one is named: then 1 "pktfilt"), each on its CPU's track; its
 * timeline starts at 0, its abstime timestamps less base.
 */
struct pf_chrome {
	struct pf_obuf ob;
	bool started;		/* "{"traceEvents":[" written */
	size_t nevents;
	unsigned int pid;	/* the current process */
	uint64_t base;		/* subtracted from the timestamps */
	uint64_t cursor;	/* where the next untimed packet starts */
	uint64_t *cpu_end;	/* [cpu]: the end of its last packet */
	unsigned char *cpu_seen;	/* [cpu]: its thread_name written */
	const struct pf_packet *pkt;	/* the packet being written */
	const char *filter;	/* for otherData; NULL: unknown */
};

/* Large (the buffer, a byte and a time per CPU): on the heap. */
struct pf_chrome *chrome_new(FILE *out, const char *filter)
{
	struct pf_chrome *c = calloc(1, sizeof(*c));

	if (c) {
		c->cpu_end = calloc(PF_FGRAPH_MAX_CPU + 1, sizeof(uint64_t));
		c->cpu_seen = calloc(PF_FGRAPH_MAX_CPU + 1, 1);
	}
	if (!c || !c->cpu_end || !c->cpu_seen) {
		if (c) {
			free(c->cpu_end);
			free(c->cpu_seen);
		}
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	c->ob.out = out;
	c->filter = filter;
	return c;
}

void chrome_free(struct pf_chrome *c)
{
	if (!c)
		return;
	free(c->cpu_end);
	free(c->cpu_seen);
	free(c);
}

/* A timestamp on the current process's timeline. */
static uint64_t chrome_at(const struct pf_chrome *c, uint64_t ns)
{
	return ns > c->base ? ns - c->base : 0;
}

static void chrome_ts(struct pf_obuf *b, uint64_t ns)
{
	char frac[4] = { '.', (char)('0' + ns % 1000 / 100),
			 (char)('0' + ns % 100 / 10), (char)('0' + ns % 10) };

	ob_u64(b, ns / 1000, false);
	ob_put(b, frac, sizeof(frac));
}

static void chrome_sep(struct pf_chrome *c)
{
	if (c->nevents++)
		ob_lit(&c->ob, ",\n");
}

static void chrome_start(struct pf_chrome *c)
{
	if (c->started)
		return;
	c->started = true;
	ob_lit(&c->ob, "{\"traceEvents\":[\n");
}

/*
 * From now on the packets are process @pid's, named @name (and sorted by
 * pid if @sort), on a timeline of its own: its tracks named anew, its
 * untimed packets from 0.
 */
static void chrome_process(struct pf_chrome *c, unsigned int pid,
			   const char *name, bool sort)
{
	struct pf_obuf *b = &c->ob;

	chrome_start(c);
	c->pid = pid;
	c->base = 0;
	c->cursor = 0;
	memset(c->cpu_end, 0, (PF_FGRAPH_MAX_CPU + 1) * sizeof(uint64_t));
	memset(c->cpu_seen, 0, PF_FGRAPH_MAX_CPU + 1);
	chrome_sep(c);
	ob_lit(b, "{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":");
	ob_u64(b, pid, false);
	ob_lit(b, ",\"tid\":0,\"args\":{\"name\":");
	json_str(b, name);
	ob_lit(b, "}}");
	if (!sort)
		return;
	chrome_sep(c);
	ob_lit(b, "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"ts\":0,"
		  "\"pid\":");
	ob_u64(b, pid, false);
	ob_lit(b, ",\"tid\":0,\"args\":{\"sort_index\":");
	ob_u64(b, pid, false);
	ob_lit(b, "}}");
}

/* The packets of pf_render_new()'s output: all process 1's. */
void chrome_default_process(struct pf_chrome *c)
{
	if (!c->pid)
		chrome_process(c, 1, "pktfilt", false);
}

/* A track per CPU, named once, in CPU order. */
static void chrome_cpu(struct pf_chrome *c, unsigned int cpu)
{
	struct pf_obuf *b = &c->ob;

	if (c->cpu_seen[cpu])
		return;
	c->cpu_seen[cpu] = 1;
	chrome_sep(c);
	ob_lit(b, "{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":0,\"pid\":");
	ob_u64(b, c->pid, false);
	ob_lit(b, ",\"tid\":");
	ob_u64(b, cpu, false);
	ob_lit(b, ",\"args\":{\"name\":\"CPU ");
	ob_u64(b, cpu, false);
	ob_lit(b, "\"}}");
	chrome_sep(c);
	ob_lit(b, "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"ts\":0,"
		  "\"pid\":");
	ob_u64(b, c->pid, false);
	ob_lit(b, ",\"tid\":");
	ob_u64(b, cpu, false);
	ob_lit(b, ",\"args\":{\"sort_index\":");
	ob_u64(b, cpu, false);
	ob_lit(b, "}}");
}

/* The packet's fields, as the root slice's "args" members. */
static void chrome_packet_args(struct pf_obuf *b, const struct pf_packet *pkt)
{
	char why[160];

	ob_lit(b, "\"seq\":");
	ob_u64(b, pkt->seq, false);
	ob_lit(b, ",\"stage\":");
	json_str(b, pkt->stage);
	ob_lit(b, ",\"id\":");
	ob_u64(b, pkt->id, false);
	ob_lit(b, ",\"proto\":");
	json_str(b, pkt->proto);
	ob_lit(b, ",\"saddr\":");
	json_str(b, pkt->saddr);
	ob_lit(b, ",\"daddr\":");
	json_str(b, pkt->daddr);
	ob_lit(b, ",\"sport\":");
	ob_u64(b, pkt->sport, false);
	ob_lit(b, ",\"dport\":");
	ob_u64(b, pkt->dport, false);
	ob_lit(b, ",\"ifindex\":");
	ob_int(b, pkt->ifindex);
	ob_lit(b, ",\"netns\":");
	ob_u64(b, pkt->netns, false);
	ob_lit(b, ",\"cpu\":");
	ob_u64(b, pkt->cpu, false);
	switch (pkt->fate) {
	case PF_FATE_CONSUMED:
		ob_lit(b, ",\"fate\":\"consumed\"");
		break;
	case PF_FATE_DROPPED:
		ob_lit(b, ",\"fate\":\"dropped\",\"drop_reason\":");
		json_str(b, pkt->drop_reason);
		if (pkt->drop_func[0]) {
			ob_lit(b, ",\"drop_func\":");
			json_str(b, pkt->drop_func);
		}
		break;
	default:
		ob_lit(b, ",\"fate\":null");
		break;
	}
	if (pkt->fate == PF_FATE_DROPPED && pf_nft_fate(pkt)) {
		char by[4 * PF_NFT_NAME + 1024];

		pf_nft_format(pf_nft_fate(pkt), by, sizeof(by), false);
		ob_lit(b, ",\"drop_by\":");
		json_str(b, by);
	}
	if (pkt->complete) {
		ob_lit(b, ",\"complete\":true");
	} else {
		ob_lit(b, ",\"complete\":false,\"incomplete\":");
		json_str(b, pf_incomplete_str(pkt->incomplete, why,
					      sizeof(why)));
	}
}

/*
 * The nftables verdicts given inside @node after its first @after callees
 * (pktfilt_nft events): instants at @ts, on the packet's CPU.
 */
static void chrome_nft(struct pf_chrome *c, const struct pf_node *node,
		       size_t after, uint64_t ts)
{
	struct pf_obuf *b = &c->ob;
	char name[4 * PF_NFT_NAME + 1024];
	size_t i;

	for (i = 0; i < c->pkt->nnft; i++) {
		const struct pf_nft *e = &c->pkt->nft[i];

		if (e->node != node || e->after != after)
			continue;
		pf_nft_format(e, name, sizeof(name), true);
		chrome_sep(c);
		ob_lit(b, "{\"name\":");
		json_str(b, name);
		ob_lit(b, ",\"cat\":\"nft\",\"ph\":\"i\",\"s\":\"t\",\"ts\":");
		chrome_ts(b, ts);
		ob_lit(b, ",\"pid\":");
		ob_u64(b, c->pid, false);
		ob_lit(b, ",\"tid\":");
		ob_u64(b, c->pkt->cpu, false);
		ob_lit(b, ",\"args\":{\"family\":");
		json_str(b, e->family);
		ob_lit(b, ",\"table\":");
		json_str(b, e->table);
		ob_lit(b, ",\"chain\":");
		json_str(b, e->chain);
		ob_lit(b, ",\"handle\":");
		ob_u64(b, e->handle, false);
		ob_lit(b, ",\"type\":");
		json_str(b, e->type);
		ob_lit(b, ",\"verdict\":");
		json_str(b, e->verdict);
		ob_lit(b, ",\"target\":");
		json_str_or_null(b, e->target[0] ? e->target : NULL);
		ob_lit(b, ",\"rule\":");
		json_str_or_null(b, e->rule);
		ob_lit(b, "}}");
	}
}

/*
 * @node's slice from @start, its callees first (nested inside it: each
 * starts where the one before ended, or at its own timestamp if later,
 * and none reaches past @limit or its caller's end). Returns its end.
 */
static uint64_t chrome_node(struct pf_chrome *c, const struct pf_node *node,
			    uint64_t start, uint64_t limit, bool root)
{
	struct pf_obuf *b = &c->ob;
	uint64_t end, cur = start;
	bool clipped = false;
	size_t i;

	if (node->complete) {
		end = add_sat(start, node->duration_ns);
		if (end > limit) {
			end = limit;
			clipped = true;
		}
	} else {
		end = limit;
	}
	for (i = 0; i < node->nchildren; i++) {
		const struct pf_node *k = node->children[i];
		uint64_t ks = cur;

		if (k->has_start && chrome_at(c, k->start_ns) > ks)
			ks = chrome_at(c, k->start_ns);
		if (ks > end)
			ks = end;
		if (c->pkt->nnft)
			chrome_nft(c, node, i, cur);
		cur = chrome_node(c, k, ks, end, false);
	}
	if (c->pkt->nnft)
		chrome_nft(c, node, node->nchildren, cur);
	if (!node->complete)
		end = cur;	/* its return is missing: to its last callee */
	chrome_sep(c);
	ob_lit(b, "{\"name\":");
	json_str(b, node->func);
	if (root)
		ob_lit(b, ",\"cat\":\"packet\"");
	else
		ob_lit(b, ",\"cat\":\"call\"");
	ob_lit(b, ",\"ph\":\"X\",\"ts\":");
	chrome_ts(b, start);
	ob_lit(b, ",\"dur\":");
	chrome_ts(b, end - start);
	ob_lit(b, ",\"pid\":");
	ob_u64(b, c->pid, false);
	ob_lit(b, ",\"tid\":");
	ob_u64(b, c->pkt->cpu, false);
	if (root || clipped || !node->complete || node->args || node->ret) {
		bool comma = false;

		ob_lit(b, ",\"args\":{");
		if (root) {
			chrome_packet_args(b, c->pkt);
			comma = true;
		}
		comma = json_call_extras(b, node, comma);
		if (!node->complete) {
			if (comma)
				ob_char(b, ',');
			ob_lit(b, "\"returned\":false");
			comma = true;
		}
		if (clipped) {
			if (comma)
				ob_char(b, ',');
			ob_lit(b, "\"duration_ns\":");
			ob_u64(b, node->duration_ns, false);
		}
		ob_char(b, '}');
	}
	ob_char(b, '}');
	return end;
}

void chrome_packet(struct pf_chrome *c, const struct pf_packet *pkt)
{
	struct pf_obuf *b = &c->ob;
	unsigned int cpu = pkt->cpu < PF_FGRAPH_MAX_CPU ? pkt->cpu :
			   PF_FGRAPH_MAX_CPU;
	uint64_t start, end;

	c->pkt = pkt;
	chrome_cpu(c, cpu);
	start = pkt->graph && pkt->graph->has_start ?
		chrome_at(c, pkt->graph->start_ns) : c->cursor;
	if (start < c->cpu_end[cpu])
		start = c->cpu_end[cpu];	/* after its CPU's last one */
	if (!pkt->graph) {
		/* No graph: an instant on its CPU, with the packet's args. */
		chrome_sep(c);
		ob_lit(b, "{\"name\":\"packet without a graph\",\"cat\":\"packet\","
			  "\"ph\":\"i\",\"s\":\"t\",\"ts\":");
		chrome_ts(b, start);
		ob_lit(b, ",\"pid\":");
		ob_u64(b, c->pid, false);
		ob_lit(b, ",\"tid\":");
		ob_u64(b, cpu, false);
		ob_lit(b, ",\"args\":{");
		chrome_packet_args(b, pkt);
		ob_lit(b, "}}");
		end = start;
	} else {
		end = chrome_node(c, pkt->graph, start, UINT64_MAX, true);
	}
	c->cpu_end[cpu] = end;
	if (add_sat(end, CHROME_GAP_NS) > c->cursor)
		c->cursor = add_sat(end, CHROME_GAP_NS);
	ob_flush(b);
}

void chrome_end(struct pf_chrome *c)
{
	chrome_start(c);
	ob_lit(&c->ob, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":"
		       "{\"generator\":\"pktfilt\",\"filter\":");
	json_str_or_null(&c->ob, c->filter);
	ob_lit(&c->ob, "}}\n");
	ob_flush(&c->ob);
}


int pf_render_chrome_processes(FILE *out,
			       const struct pf_packet *const *pkts,
			       const char *const *names, size_t n)
{
	struct pf_chrome *c = chrome_new(out, NULL);
	size_t i;

	if (!c)
		return -ENOMEM;
	chrome_start(c);
	for (i = 0; i < n; i++) {
		const struct pf_packet *pkt = pkts[i];

		chrome_process(c, (unsigned int)i + 1, names[i], true);
		/* With abstime: the root's timestamp is the process's 0. */
		if (pkt->graph && pkt->graph->has_start)
			c->base = pkt->graph->start_ns;
		chrome_packet(c, pkt);
	}
	chrome_end(c);
	chrome_free(c);
	return out_status(out);
}
