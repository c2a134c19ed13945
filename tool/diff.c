// SPDX-License-Identifier: GPL-2.0
/*
 * "pktfilt diff": where did two packets' paths through the kernel part?
 *
 * The two call trees are aligned top-down: the roots, then at each pair
 * of calls that both made, their callees, by the longest common
 * subsequence of the callees' names (as diff(1) aligns lines), after
 * taking off the common prefix and suffix. What is not aligned is a call
 * made on one side only, with everything under it. One depth-first walk
 * of the aligned pairs, in call order, then gives all the rest: the
 * first place where one side did something the other did not (the first
 * divergence), the places of one-sided calls, and the aligned calls whose
 * durations differ the most.
 *
 * Memory: the two packets (each at most PF_DIFF_MAX_NODES calls), the
 * alignment of the callees of the calls on the current path (one
 * dynamic-programming table at a time, at most PF_DIFF_MAX_CELLS cells;
 * past that the middle part is aligned greedily), and what is reported
 * (capped by --top).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "render.h"
#include "render_int.h"
#include "fgraph.h"
#include "json.h"

#define EXIT_SAME	0
#define EXIT_DIFFER	1
#define EXIT_TROUBLE	2

/* One LCS table at most this many cells (4 bytes each). */
#define PF_DIFF_MAX_CELLS	(4U << 20)
/* How far ahead the greedy alignment looks for a name. */
#define PF_DIFF_GREEDY_WINDOW	256
/* Lines of a one-sided subtree shown, per side and place. */
#define PF_DIFF_LINES		12
/* Graphs of one packet id kept, at most (one per stage). */
#define PF_DIFF_MAX_GRAPHS	8
/* A line of JSON input, at most. */
#define PF_DIFF_MAX_LINE	(256U << 20)
/* --top, at most. */
#define PF_DIFF_MAX_TOP		1000

const char pf_diff_synopsis[] =
"pktfilt diff [--format text|json|chrome|html] [--top N] [--stage STAGE]\n"
"                  [-o FILE] FILE [PACKET] [FILE] [PACKET]";

const char pf_diff_help[] =
"    pktfilt diff [--format text|json|chrome|html] [--top N] [--stage STAGE]\n"
"                 [-o FILE] FILE [PACKET] [FILE] [PACKET]\n"
"        Compare the call trees of two packets and say where their paths\n"
"        through the kernel part: \"packet 1 was delivered, packet 2 was\n"
"        dropped: where?\". Each FILE is a trace pktfilt made, raw (as\n"
"        'pktfilt trace --raw' saves it, or cat trace) or JSON Lines (as\n"
"        'report --format json' or 'trace --format json' print them);\n"
"        which one is told from its first byte ('{': JSON). - reads\n"
"        standard input. Works offline, like report.\n"
"\n"
"        The two packets, A and B:\n"
"            diff FILE PACKET PACKET     two packets of one trace\n"
"            diff FILE1 FILE2            the first packet of each\n"
"            diff FILE1 PACKET FILE2 [PACKET]\n"
"            diff FILE1 FILE2 PACKET     (the first of FILE1, and PACKET\n"
"                                        of FILE2)\n"
"        PACKET is a seq (the N of \"# packet N\", seq=N in the event;\n"
"        also seq:N), id:N, the packet id, or, in the JSON of 'pktfilt\n"
"        merge' (a journey a line), journey:N@MACHINE, the graphs of\n"
"        MACHINE's packet in journey N. A packet followed through\n"
"        several stages has one graph per stage, all with its id: id:N\n"
"        then compares the graph of a stage both packets have (the first\n"
"        of A's, in the order of the trace; a line on stderr says which\n"
"        when there was a choice), or the one --stage names. A FILE named\n"
"        like a PACKET is written ./1.\n"
"\n"
"        --format text|json|chrome|html\n"
"            text (the default), in this order:\n"
"              --- A: packet SEQ (STAGE, id ID) of FILE: the tuple, as\n"
"                  report prints it; its fate, root, duration, calls\n"
"              +++ B: the same for B\n"
"              fate, stage: each line only if they differ (A then B)\n"
"              calls: in both, only in A, only in B, and in how many\n"
"                  places\n"
"              where they part: the first place, in call order, where\n"
"                  one packet made a call the other did not, after how\n"
"                  many calls in common: the common path from the root\n"
"                  to it (the calls both made, one per line, indented by\n"
"                  depth; their callees in common before it counted, the\n"
"                  last one named), then the calls only A made there\n"
"                  (lines starting with -) and only B made (+), each\n"
"                  with its calls and duration\n"
"              return values: the calls both made whose return values\n"
"                  differ (up to --top; in traces made with ftrace's\n"
"                  funcgraph-retval, which trace sets when asked): the\n"
"                  function, A's value -> B's, the path\n"
"                  (\"nf_hook_slow  0x1 -> -1  in ip_rcv\")\n"
"              only in A, only in B: each place (up to --top) with its\n"
"                  path, the common call it comes after, and the calls\n"
"                  made on one side only, as subtrees (12 lines per side\n"
"                  at most: \"... N more calls\")\n"
"              durations: the calls both made whose durations differ\n"
"                  the most (up to --top), largest difference first: B\n"
"                  minus A, B / A, A's and B's durations, the path. A\n"
"                  call whose difference is 90% or more one callee's\n"
"                  (same sign) is left out for that callee: the list\n"
"                  names where the time went, not every caller above it.\n"
"            json: one object with the same content: \"a\" and \"b\" (the\n"
"            packets: file, seq, stage, id, cpu, proto, saddr, daddr,\n"
"            sport, dport, ifindex, netns, fate, drop, complete, root,\n"
"            duration_ns, calls), \"same\" (the exit status's answer),\n"
"            \"same_tree\", \"same_returns\", \"same_fate\", \"same_stage\",\n"
"            \"calls\"\n"
"            ({\"common\", \"only_a\", \"only_b\", \"places\"}),\n"
"            \"divergence\" (null if none: {\"common_before\", \"path\",\n"
"            \"common_siblings_before\", \"after\", \"a\", \"b\"}, a and b\n"
"            lists of {\"func\", \"calls\", \"duration_ns\"}), \"places\"\n"
"            (each {\"path\", \"after\", \"a\", \"b\"}, a and b\n"
"            {\"calls\", \"lines\": [{\"depth\", \"func\", \"duration_ns\"}],\n"
"            \"more\"}), \"durations\" (each {\"path\", \"func\",\n"
"            \"a_ns\", \"b_ns\", \"diff_ns\", \"ratio\"}) and \"returns\"\n"
"            ({\"differ\": how many, \"calls\": each {\"path\", \"func\",\n"
"            \"a\", \"b\"}, the values as strings}). A path is the list\n"
"            of the calls from the root; duration_ns is null for a call\n"
"            whose return is missing; ratio is null where A's is 0.\n"
"            chrome: the two packets as one timeline in the Trace Event\n"
"            Format (see 'pktfilt help report'), for ui.perfetto.dev: A\n"
"            is process 1, named \"A: packet SEQ (STAGE, id ID) of FILE\",\n"
"            B process 2, each with a track per CPU and its packet from\n"
"            time 0 (with funcgraph-abstime, its calls at their\n"
"            timestamps less its root's), so that their calls line up.\n"
"            The exit status is the comparison's, as with text.\n"
"            html: one self-contained page (see 'pktfilt help report'),\n"
"            the two trees side by side, A left, B right, aligned as\n"
"            text aligns them: a row per call both made (B's duration\n"
"            less A's beside it, in red where B is slower by 25% and\n"
"            1 us or more, green where faster), the calls made on one\n"
"            side only against a gap on the other (red: only A, green:\n"
"            only B). It opens with the paths to the differences\n"
"            expanded; the places are stepped through, the names\n"
"            searched as in report's page. The exit status is the\n"
"            comparison's.\n"
"\n"
"        --top N\n"
"            List N places and N durations at most (default 10,\n"
"            1-1000). The counts always cover them all.\n"
"\n"
"        --stage l4|rx|tx\n"
"            With id:N, compare the graphs of this stage.\n"
"\n"
"        -o FILE, --output FILE\n"
"            Write the comparison to FILE, not standard output.\n"
"\n"
"        HOW THE TREES ARE ALIGNED. The roots are compared, then the\n"
"        callees of each pair of calls both made, by name (as the trace\n"
"        prints it, \"veth_xmit [veth]\" included): the longest common\n"
"        subsequence of the two lists, as diff(1) aligns lines, so a call\n"
"        inserted or left out on one side does not shift the rest. Where\n"
"        both lists are long (more than 4M pairs after the common\n"
"        beginning and end), a greedy alignment looking 256 calls ahead\n"
"        is used instead. Durations are not compared for the exit\n"
"        status: they never repeat exactly. A call whose return is\n"
"        missing (an incomplete packet) is aligned like any other, and\n"
"        has no duration to compare.\n"
"\n"
"        Exit status, as diff(1): 0 if the two packets made the same\n"
"        calls in the same order and nesting, with the same return\n"
"        values where both traces have them, and had the same fate (drop\n"
"        reason) and stage, 1 if not, 2 for a usage error or trouble\n"
"        (a FILE that cannot be read, a PACKET not in it, a graph of more\n"
"        than 500,000 calls).\n";

const char pf_diff_examples[] =
"    Where did the dropped packet 2 leave the path of the delivered 1?\n"
"        pktfilt trace --proto udp --daddr 10.9.0.2 --count 2 --raw run.trace\n"
"        pktfilt diff run.trace 1 2\n"
"\n"
"    The first packet of two runs, as JSON:\n"
"        pktfilt diff --format json good.json bad.json\n"
"\n"
"    Both on one timeline, to open in ui.perfetto.dev:\n"
"        pktfilt diff --format chrome -o ab.json run.trace 1 2\n"
"        pktfilt diff --format html -o ab.html run.trace 1 2\n";

/* --- packets of one's own ---------------------------------------------------- */

static void node_free(struct pf_node *node)
{
	size_t i;

	if (!node)
		return;
	for (i = 0; i < node->nchildren; i++)
		node_free(node->children[i]);
	free(node->children);
	free(node->func);
	free(node->ret);
	free(node);
}

static void nft_free(struct pf_packet *pkt)
{
	size_t i;

	for (i = 0; i < pkt->nnft; i++)
		free(pkt->nft[i].rule);
	free(pkt->nft);
	pkt->nft = NULL;
	pkt->nnft = 0;
}

void pf_diff_packet_free(struct pf_packet *pkt)
{
	if (!pkt)
		return;
	nft_free(pkt);
	node_free(pkt->graph);
	free(pkt);
}

/* The nftables verdicts of @from into @pkt (a copy): 0, or -ENOMEM. */
static int nft_copy(struct pf_packet *pkt, const struct pf_packet *from)
{
	size_t i;

	pkt->nft = NULL;
	pkt->nnft = 0;
	if (!from->nnft)
		return 0;
	pkt->nft = calloc(from->nnft, sizeof(*pkt->nft));
	if (!pkt->nft)
		return -ENOMEM;
	for (; pkt->nnft < from->nnft; pkt->nnft++) {
		i = pkt->nnft;
		pkt->nft[i] = from->nft[i];
		pkt->nft[i].rule = NULL;
		pkt->nft[i].node = NULL;	/* not the copy's */
		if (from->nft[i].rule) {
			pkt->nft[i].rule = strdup(from->nft[i].rule);
			if (!pkt->nft[i].rule)
				return -ENOMEM;
		}
	}
	return 0;
}

static struct pf_node *node_copy(const struct pf_node *from, size_t *budget)
{
	struct pf_node *node;
	size_t i;

	if (!*budget) {
		errno = EFBIG;
		return NULL;
	}
	--*budget;
	node = calloc(1, sizeof(*node));
	if (!node)
		return NULL;
	node->func = strdup(from->func);
	/* Arguments are left out: diff does not compare them. */
	node->ret = from->ret ? strdup(from->ret) : NULL;
	node->duration_ns = from->duration_ns;
	node->complete = from->complete;
	node->has_start = from->has_start;
	node->start_ns = from->start_ns;
	if (from->nchildren)
		node->children = calloc(from->nchildren, sizeof(*node->children));
	if (!node->func || (from->ret && !node->ret) ||
	    (from->nchildren && !node->children)) {
		node_free(node);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < from->nchildren; i++) {
		node->children[i] = node_copy(from->children[i], budget);
		if (!node->children[i]) {
			node_free(node);
			return NULL;
		}
		node->nchildren++;
	}
	return node;
}

struct pf_packet *pf_diff_packet_copy(const struct pf_packet *from)
{
	struct pf_packet *pkt = malloc(sizeof(*pkt));
	size_t budget = PF_DIFF_MAX_NODES;

	if (!pkt)
		return NULL;
	*pkt = *from;
	pkt->data = NULL;	/* not diffed */
	pkt->caplen = 0;
	pkt->raw_text = NULL;
	pkt->raw_len = 0;
	pkt->raw_cap = 0;
	pkt->chunks = NULL;
	pkt->graph = NULL;
	if (nft_copy(pkt, from)) {
		pf_diff_packet_free(pkt);
		errno = ENOMEM;
		return NULL;
	}
	if (from->graph) {
		pkt->graph = node_copy(from->graph, &budget);
		if (!pkt->graph) {
			pf_diff_packet_free(pkt);
			return NULL;
		}
	}
	return pkt;
}

/* --- JSON input ---------------------------------------------------------------- */

static bool j_str(const struct pf_json *o, const char *key, char *dst,
		  size_t size, char *err, size_t errlen)
{
	const struct pf_json *v = pf_json_get(o, key);

	dst[0] = '\0';
	if (!v || v->type == PF_J_NULL)
		return true;
	if (v->type != PF_J_STR) {
		snprintf(err, errlen, "\"%s\" is not a string", key);
		return false;
	}
	snprintf(dst, size, "%s", v->str);
	return true;
}

static bool j_u64(const struct pf_json *o, const char *key, uint64_t max,
		  uint64_t *dst, char *err, size_t errlen)
{
	const struct pf_json *v = pf_json_get(o, key);

	*dst = 0;
	if (!v || v->type == PF_J_NULL)
		return true;
	if (v->type != PF_J_NUM || !v->is_u64 || v->u64 > max) {
		snprintf(err, errlen, "\"%s\" is not a number 0-%" PRIu64, key,
			 max);
		return false;
	}
	*dst = v->u64;
	return true;
}

static struct pf_node *j_node(const struct pf_json *v, size_t depth,
			      size_t *budget, char *err, size_t errlen)
{
	const struct pf_json *func, *dur, *kids, *ret;
	struct pf_node *node;
	size_t i;

	if (v->type != PF_J_OBJ) {
		snprintf(err, errlen, "a call is not an object");
		return NULL;
	}
	if (depth > PF_FGRAPH_MAX_DEPTH) {
		snprintf(err, errlen, "graph deeper than %d calls",
			 PF_FGRAPH_MAX_DEPTH);
		return NULL;
	}
	if (!*budget) {
		snprintf(err, errlen, "graph of more than %d calls",
			 PF_DIFF_MAX_NODES);
		return NULL;
	}
	--*budget;
	func = pf_json_get(v, "func");
	dur = pf_json_get(v, "duration_ns");
	kids = pf_json_get(v, "children");
	ret = pf_json_get(v, "ret");
	if (!func || func->type != PF_J_STR) {
		snprintf(err, errlen, "a call without \"func\"");
		return NULL;
	}
	if (dur && dur->type != PF_J_NULL &&
	    (dur->type != PF_J_NUM || !dur->is_u64)) {
		snprintf(err, errlen, "\"duration_ns\" of %.64s is not a number",
			 func->str);
		return NULL;
	}
	if (kids && kids->type != PF_J_NULL && kids->type != PF_J_ARR) {
		snprintf(err, errlen, "\"children\" of %.64s is not a list",
			 func->str);
		return NULL;
	}
	if (ret && ret->type != PF_J_NULL &&
	    (ret->type != PF_J_STR || !ret->str[0] ||
	     strlen(ret->str) > PF_FGRAPH_MAX_RET)) {
		snprintf(err, errlen,
			 "\"ret\" of %.64s is not a return value as ftrace prints it",
			 func->str);
		return NULL;
	}
	node = calloc(1, sizeof(*node));
	if (!node || !(node->func = strdup(func->str)))
		goto oom;
	if (ret && ret->type == PF_J_STR && !(node->ret = strdup(ret->str)))
		goto oom;
	if (dur && dur->type == PF_J_NUM) {
		node->complete = true;
		node->duration_ns = dur->u64;
	}
	if (kids && kids->type == PF_J_ARR && kids->n) {
		node->children = calloc(kids->n, sizeof(*node->children));
		if (!node->children)
			goto oom;
		for (i = 0; i < kids->n; i++) {
			node->children[i] = j_node(kids->items[i], depth + 1,
						   budget, err, errlen);
			if (!node->children[i]) {
				node_free(node);
				return NULL;
			}
			node->nchildren++;
		}
	}
	return node;
oom:
	node_free(node);
	snprintf(err, errlen, "out of memory");
	return NULL;
}

/*
 * "nft": [{"family", "table", "chain", "handle", "type", "verdict",
 * "target", "rule", "in"}, ...] (render.c's json_nft()), if there.
 */
static bool j_nft(const struct pf_json *o, struct pf_packet *pkt, char *err,
		  size_t errlen)
{
	const struct pf_json *a = pf_json_get(o, "nft"), *v;
	size_t i;

	if (!a || a->type == PF_J_NULL)
		return true;
	if (a->type != PF_J_ARR) {
		snprintf(err, errlen, "\"nft\" is not an array");
		return false;
	}
	if (!a->n)
		return true;
	pkt->nft = calloc(a->n, sizeof(*pkt->nft));
	if (!pkt->nft) {
		snprintf(err, errlen, "out of memory");
		return false;
	}
	for (i = 0; i < a->n; i++) {
		const struct pf_json *e = a->items[i];
		struct pf_nft *n = &pkt->nft[i];

		pkt->nnft = i + 1;
		if (e->type != PF_J_OBJ) {
			snprintf(err, errlen, "\"nft\" holds a non-object");
			return false;
		}
		if (!j_str(e, "family", n->family, sizeof(n->family), err, errlen) ||
		    !j_str(e, "table", n->table, sizeof(n->table), err, errlen) ||
		    !j_str(e, "chain", n->chain, sizeof(n->chain), err, errlen) ||
		    !j_str(e, "type", n->type, sizeof(n->type), err, errlen) ||
		    !j_str(e, "verdict", n->verdict, sizeof(n->verdict), err, errlen) ||
		    !j_str(e, "target", n->target, sizeof(n->target), err, errlen) ||
		    !j_str(e, "in", n->in, sizeof(n->in), err, errlen) ||
		    !j_u64(e, "handle", UINT64_MAX, &n->handle, err, errlen))
			return false;
		v = pf_json_get(e, "rule");
		if (v && v->type == PF_J_STR) {
			n->rule = strdup(v->str);
			if (!n->rule) {
				snprintf(err, errlen, "out of memory");
				return false;
			}
		}
	}
	return true;
}

struct pf_packet *pf_diff_packet_json(const char *line, size_t len,
				      char *err, size_t errlen)
{
	/* A call is 5 values (object, func, duration, children, list). */
	const size_t max_values = 5 * (size_t)PF_DIFF_MAX_NODES + 64;
	const size_t max_depth = 2 * (PF_FGRAPH_MAX_DEPTH + 1) + 8;
	const struct pf_json *fate, *drop, *v;
	struct pf_packet *pkt = NULL;
	struct pf_json *o;
	size_t budget = PF_DIFF_MAX_NODES;
	uint64_t u;

	o = pf_json_parse(line, len, max_depth, max_values, err, errlen);
	if (!o)
		return NULL;
	if (o->type != PF_J_OBJ) {
		snprintf(err, errlen, "not an object");
		goto bad;
	}
	pkt = calloc(1, sizeof(*pkt));
	if (!pkt) {
		snprintf(err, errlen, "out of memory");
		goto bad;
	}
	if (!j_u64(o, "seq", UINT64_MAX, &pkt->seq, err, errlen) ||
	    !j_u64(o, "id", UINT64_MAX, &pkt->id, err, errlen) ||
	    !j_str(o, "stage", pkt->stage, sizeof(pkt->stage), err, errlen) ||
	    !j_str(o, "proto", pkt->proto, sizeof(pkt->proto), err, errlen) ||
	    !j_str(o, "saddr", pkt->saddr, sizeof(pkt->saddr), err, errlen) ||
	    !j_str(o, "daddr", pkt->daddr, sizeof(pkt->daddr), err, errlen))
		goto bad;
	if (!pf_json_get(o, "id"))
		pkt->id = pkt->seq;
	else
		pkt->has_id = true;
	if (!pkt->stage[0])
		snprintf(pkt->stage, sizeof(pkt->stage), "l4");
	if (!j_u64(o, "cpu", UINT32_MAX, &u, err, errlen))
		goto bad;
	pkt->cpu = (unsigned int)u;
	if (!j_u64(o, "sport", 65535, &u, err, errlen))
		goto bad;
	pkt->sport = (unsigned int)u;
	if (!j_u64(o, "dport", 65535, &u, err, errlen))
		goto bad;
	pkt->dport = (unsigned int)u;
	v = pf_json_get(o, "ifindex");
	if (v && v->type == PF_J_NUM && v->num >= -2147483648.0 &&
	    v->num <= 2147483647.0)
		pkt->ifindex = (int)v->num;
	if (!j_u64(o, "netns", UINT64_MAX, &u, err, errlen))
		goto bad;
	pkt->netns = (unsigned long)u;
	fate = pf_json_get(o, "fate");
	drop = pf_json_get(o, "drop");
	if (fate && fate->type == PF_J_STR && !strcmp(fate->str, "consumed")) {
		pkt->fate = PF_FATE_CONSUMED;
		snprintf(pkt->drop_reason, sizeof(pkt->drop_reason),
			 "CONSUMED");
	} else if (fate && fate->type == PF_J_STR &&
		   !strcmp(fate->str, "dropped")) {
		pkt->fate = PF_FATE_DROPPED;
		if (drop && drop->type == PF_J_OBJ &&
		    (!j_str(drop, "reason", pkt->drop_reason,
			    sizeof(pkt->drop_reason), err, errlen) ||
		     !j_str(drop, "func", pkt->drop_func,
			    sizeof(pkt->drop_func), err, errlen)))
			goto bad;
	} else if (fate && fate->type != PF_J_NULL) {
		snprintf(err, errlen, "\"fate\" is not consumed, dropped or null");
		goto bad;
	}
	if (!j_nft(o, pkt, err, errlen))
		goto bad;
	v = pf_json_get(o, "complete");
	pkt->complete = !v || (v->type == PF_J_BOOL && v->b);
	v = pf_json_get(o, "graph");
	if (v && v->type != PF_J_NULL) {
		pkt->graph = j_node(v, 0, &budget, err, errlen);
		if (!pkt->graph)
			goto bad;
	}
	pkt->done = true;
	pf_json_free(o);
	return pkt;
bad:
	pf_diff_packet_free(pkt);
	pf_json_free(o);
	return NULL;
}

/* --- alignment ----------------------------------------------------------------- */

enum { OP_BOTH, OP_A, OP_B };

struct ops {
	unsigned char *op;
	size_t n;
};

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 1099511628211ULL;
	}
	return h;
}

static bool same_name(const struct pf_node *a, const struct pf_node *b)
{
	return !strcmp(a->func, b->func);
}

/* The middle parts a[0..n), b[0..m): LCS by dynamic programming. */
static int lcs(const struct pf_node *const *a, size_t n,
	       const struct pf_node *const *b, size_t m, struct ops *o)
{
	uint64_t *ha = malloc((n + 1) * sizeof(*ha));
	uint64_t *hb = malloc((m + 1) * sizeof(*hb));
	uint32_t *t = calloc((n + 1) * (m + 1), sizeof(*t));
	unsigned char *rev = malloc(n + m + 1);
	size_t i, j, k = 0;

	if (!ha || !hb || !t || !rev) {
		free(ha);
		free(hb);
		free(t);
		free(rev);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		ha[i] = name_hash(a[i]->func);
	for (j = 0; j < m; j++)
		hb[j] = name_hash(b[j]->func);
	/* t[i][j]: the LCS of a[i..n) and b[j..m). */
#define T(i, j)	t[(size_t)(i) * (m + 1) + (j)]
	for (i = n; i-- > 0;)
		for (j = m; j-- > 0;)
			T(i, j) = ha[i] == hb[j] && same_name(a[i], b[j]) ?
				  T(i + 1, j + 1) + 1 :
				  T(i + 1, j) >= T(i, j + 1) ? T(i + 1, j) :
				  T(i, j + 1);
	i = j = 0;
	while (i < n || j < m) {
		if (i < n && j < m && ha[i] == hb[j] && same_name(a[i], b[j]) &&
		    T(i, j) == T(i + 1, j + 1) + 1) {
			rev[k++] = OP_BOTH;
			i++;
			j++;
		} else if (j >= m || (i < n && T(i + 1, j) >= T(i, j + 1))) {
			rev[k++] = OP_A;
			i++;
		} else {
			rev[k++] = OP_B;
			j++;
		}
	}
#undef T
	memcpy(o->op + o->n, rev, k);
	o->n += k;
	free(ha);
	free(hb);
	free(t);
	free(rev);
	return 0;
}

/* How far ahead of @from in @v (of @n) @name is, within the window. */
static size_t ahead(const struct pf_node *const *v, size_t n, size_t from,
		    const struct pf_node *name)
{
	size_t k;

	for (k = from; k < n && k - from < PF_DIFF_GREEDY_WINDOW; k++)
		if (same_name(v[k], name))
			return k - from;
	return SIZE_MAX;
}

/*
 * Too large for the table: a greedy walk. Where a[i] and b[j] differ,
 * the one not found ahead on the other side (within the window) is
 * one-sided; if both are found, the nearer match wins.
 */
static void greedy(const struct pf_node *const *a, size_t n,
		   const struct pf_node *const *b, size_t m, struct ops *o)
{
	size_t i = 0, j = 0, ka, kb;

	while (i < n && j < m) {
		if (same_name(a[i], b[j])) {
			o->op[o->n++] = OP_BOTH;
			i++;
			j++;
			continue;
		}
		kb = ahead(a, n, i, b[j]);	/* b[j] later in a */
		ka = ahead(b, m, j, a[i]);	/* a[i] later in b */
		if (kb == SIZE_MAX || (ka != SIZE_MAX && kb < ka)) {
			/* b[j] nowhere near: B's; or a[i..i+kb) are A's */
			if (kb == SIZE_MAX) {
				o->op[o->n++] = OP_B;
				j++;
			} else {
				o->op[o->n++] = OP_A;
				i++;
			}
		} else if (ka == SIZE_MAX) {
			o->op[o->n++] = OP_A;
			i++;
		} else {
			o->op[o->n++] = OP_B;
			j++;
		}
	}
	while (i++ < n)
		o->op[o->n++] = OP_A;
	while (j++ < m)
		o->op[o->n++] = OP_B;
}

/* @node's callees from the @i-th (NULL if it has none: no arithmetic on it). */
static const struct pf_node *const *kids(const struct pf_node *node, size_t i)
{
	return node->children ?
	       (const struct pf_node *const *)node->children + i : NULL;
}

/* Align the callees of @a and @b into @o (o->op freed by the caller). */
static int align(const struct pf_node *a, const struct pf_node *b,
		 struct ops *o)
{
	size_t n = a->nchildren, m = b->nchildren, pre = 0, suf = 0, i;
	int err = 0;

	o->n = 0;
	o->op = malloc(n + m + 1);
	if (!o->op)
		return -ENOMEM;
	while (pre < n && pre < m &&
	       same_name(a->children[pre], b->children[pre]))
		pre++;
	while (suf < n - pre && suf < m - pre &&
	       same_name(a->children[n - 1 - suf], b->children[m - 1 - suf]))
		suf++;
	for (i = 0; i < pre; i++)
		o->op[o->n++] = OP_BOTH;
	n -= pre + suf;
	m -= pre + suf;
	if (n && m && (n + 1) * (m + 1) <= PF_DIFF_MAX_CELLS)
		err = lcs(kids(a, pre), n, kids(b, pre), m, o);
	else
		greedy(kids(a, pre), n, kids(b, pre), m, o);
	for (i = 0; i < suf; i++)
		o->op[o->n++] = OP_BOTH;
	return err;
}

/* --- the walk ------------------------------------------------------------------ */

/* Calls on one side only, at one place: ranges of the two callee lists. */
struct place {
	const struct pf_node **path;	/* A's calls from the root, both made */
	size_t depth;			/* 0: the roots differ */
	const struct pf_node *after;	/* the common callee before, or NULL */
	size_t common_siblings;		/* common callees before it */
	const struct pf_node *const *a, *const *b;
	size_t na, nb;
	uint64_t calls_a, calls_b;
	uint64_t common_before;		/* calls in common before, in the walk */
};

struct dur {
	const struct pf_node **path;	/* A's, the call itself last */
	size_t depth;
	const struct pf_node *a, *b;
	uint64_t diff;			/* |B - A| */
};

/* A call both made whose return values differ. */
struct retd {
	const struct pf_node **path;	/* A's, up to its caller */
	size_t depth;
	const struct pf_node *a, *b;
};

struct walk {
	size_t top;
	const struct pf_node *path[PF_FGRAPH_MAX_DEPTH + 2];
	size_t depth;
	uint64_t common, only_a, only_b, places;
	struct place first;		/* places 1..: first one */
	bool have_first;
	struct place *kept;		/* the first @top places */
	size_t nkept;
	struct dur *durs;		/* the @top largest, largest first */
	size_t ndurs;
	uint64_t rets;			/* calls whose return values differ */
	struct retd *retds;		/* the first @top of them */
	size_t nretds;
	int err;
};

static uint64_t count_calls(const struct pf_node *node)
{
	uint64_t n = 1;
	size_t i;

	for (i = 0; i < node->nchildren; i++)
		n += count_calls(node->children[i]);
	return n;
}

static const struct pf_node **path_copy(const struct walk *w, size_t depth)
{
	const struct pf_node **p = malloc((depth + 1) * sizeof(*p));

	if (p && depth)
		memcpy(p, w->path, depth * sizeof(*p));
	return p;
}

static void add_place(struct walk *w, const struct pf_node *after,
		      size_t common_siblings,
		      const struct pf_node *const *a, size_t na,
		      const struct pf_node *const *b, size_t nb)
{
	struct place pl = {
		.depth = w->depth, .after = after,
		.common_siblings = common_siblings,
		.a = a, .na = na, .b = b, .nb = nb,
		.common_before = w->common,
	};
	size_t i;

	for (i = 0; i < na; i++)
		pl.calls_a += count_calls(a[i]);
	for (i = 0; i < nb; i++)
		pl.calls_b += count_calls(b[i]);
	w->only_a += pl.calls_a;
	w->only_b += pl.calls_b;
	w->places++;
	if (w->nkept >= w->top)
		return;
	pl.path = path_copy(w, w->depth);
	if (!pl.path) {
		w->err = -ENOMEM;
		return;
	}
	if (!w->have_first) {
		w->first = pl;
		w->have_first = true;
	}
	w->kept[w->nkept++] = pl;
}

static uint64_t absdiff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* A candidate for the durations list: keep the @top largest. */
static void add_dur(struct walk *w, const struct pf_node *a,
		    const struct pf_node *b)
{
	uint64_t d = absdiff(a->duration_ns, b->duration_ns);
	size_t i;

	if (!d || !w->top)
		return;
	if (w->ndurs == w->top && w->durs[w->ndurs - 1].diff >= d)
		return;
	if (w->ndurs == w->top) {
		free(w->durs[--w->ndurs].path);
	}
	for (i = w->ndurs; i > 0 && w->durs[i - 1].diff < d; i--)
		w->durs[i] = w->durs[i - 1];
	w->durs[i].path = path_copy(w, w->depth);
	w->durs[i].depth = w->depth;
	w->durs[i].a = a;
	w->durs[i].b = b;
	w->durs[i].diff = d;
	w->ndurs++;
	if (!w->durs[i].path)
		w->err = -ENOMEM;
}

/*
 * Is the difference of @a and @b (both complete) mostly one callee's:
 * a callee pair of the same sign with 90% or more of it?
 */
static bool passed_down(const struct pf_node *a, const struct pf_node *b,
			const struct ops *o)
{
	bool slower = b->duration_ns > a->duration_ns;
	uint64_t d = absdiff(a->duration_ns, b->duration_ns);
	size_t k, i = 0, j = 0;

	for (k = 0; k < o->n; k++) {
		if (o->op[k] == OP_BOTH) {
			const struct pf_node *ca = a->children[i];
			const struct pf_node *cb = b->children[j];

			if (ca->complete && cb->complete &&
			    (cb->duration_ns > ca->duration_ns) == slower &&
			    absdiff(ca->duration_ns, cb->duration_ns) >=
			    d - d / 10)
				return true;
		}
		if (o->op[k] != OP_B)
			i++;
		if (o->op[k] != OP_A)
			j++;
	}
	return false;
}

/*
 * Both calls have a return value (funcgraph-retval) and they differ (as
 * printed: both traces come from ftrace's one format): "0x0" in A,
 * "-22" in B. A call without one on either side is not compared.
 */
static void add_ret(struct walk *w, const struct pf_node *a,
		    const struct pf_node *b)
{
	struct retd *r;

	if (!a->ret || !b->ret || !strcmp(a->ret, b->ret))
		return;
	w->rets++;
	if (w->nretds >= w->top)
		return;
	r = &w->retds[w->nretds];
	r->path = path_copy(w, w->depth);
	if (!r->path) {
		w->err = -ENOMEM;
		return;
	}
	r->depth = w->depth;
	r->a = a;
	r->b = b;
	w->nretds++;
}

/* @a and @b: calls both made (same name), w->path up to their caller. */
static void walk_pair(struct walk *w, const struct pf_node *a,
		      const struct pf_node *b)
{
	struct ops o = { NULL, 0 };
	size_t k, i = 0, j = 0, siblings = 0;
	const struct pf_node *after = NULL;

	if (w->err)
		return;
	w->common++;
	if (align(a, b, &o)) {
		free(o.op);
		w->err = -ENOMEM;
		return;
	}
	if (a->complete && b->complete && !passed_down(a, b, &o))
		add_dur(w, a, b);
	add_ret(w, a, b);
	w->path[w->depth++] = a;
	for (k = 0; k < o.n && !w->err;) {
		if (o.op[k] == OP_BOTH) {
			walk_pair(w, a->children[i], b->children[j]);
			after = a->children[i];
			siblings++;
			i++;
			j++;
			k++;
			continue;
		}
		{
			size_t i0 = i, j0 = j;

			while (k < o.n && o.op[k] != OP_BOTH) {
				if (o.op[k] == OP_A)
					i++;
				else
					j++;
				k++;
			}
			add_place(w, after, siblings,
				  kids(a, i0), i - i0, kids(b, j0), j - j0);
		}
	}
	w->depth--;
	free(o.op);
}

static void walk_free(struct walk *w)
{
	size_t i;

	for (i = 0; i < w->nkept; i++)
		free(w->kept[i].path);
	for (i = 0; i < w->ndurs; i++)
		free(w->durs[i].path);
	for (i = 0; i < w->nretds; i++)
		free(w->retds[i].path);
	free(w->kept);
	free(w->durs);
	free(w->retds);
}

/* --- output ------------------------------------------------------------------- */

static void put_us(FILE *out, uint64_t ns)
{
	fprintf(out, "%" PRIu64 ".%03" PRIu64 " us", ns / 1000, ns % 1000);
}

static void put_signed_us(FILE *out, uint64_t a, uint64_t b)
{
	fputc(b >= a ? '+' : '-', out);
	put_us(out, absdiff(a, b));
}

static void put_fate(FILE *out, const struct pf_packet *pkt)
{
	switch (pkt->fate) {
	case PF_FATE_CONSUMED:
		fputs("consumed", out);
		break;
	case PF_FATE_DROPPED:
		fprintf(out, "dropped: %s", pkt->drop_reason);
		if (pkt->drop_func[0])
			fprintf(out, " in %s", pkt->drop_func);
		break;
	default:
		fputs("fate unknown", out);
	}
}

static bool same_fate(const struct pf_packet *a, const struct pf_packet *b)
{
	if (a->fate != b->fate)
		return false;
	return a->fate != PF_FATE_DROPPED ||
	       (!strcmp(a->drop_reason, b->drop_reason) &&
		!strcmp(a->drop_func, b->drop_func));
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* The same nftables verdicts, in the same order, for the same rules. */
static bool same_nft(const struct pf_packet *a, const struct pf_packet *b)
{
	size_t i;

	if (a->nnft != b->nnft)
		return false;
	for (i = 0; i < a->nnft; i++) {
		const struct pf_nft *x = &a->nft[i], *y = &b->nft[i];

		if (x->handle != y->handle || strcmp(x->family, y->family) ||
		    strcmp(x->table, y->table) || strcmp(x->chain, y->chain) ||
		    strcmp(x->type, y->type) ||
		    strcmp(x->verdict, y->verdict) ||
		    strcmp(x->target, y->target) || !same_str(x->rule, y->rule))
			return false;
	}
	return true;
}

/* "    A: inet jt in handle 7: drop [...]" per verdict of @pkt. */
static void put_nft(FILE *out, const char *side, const struct pf_packet *pkt)
{
	char buf[1024];
	size_t i;

	if (!pkt->nnft)
		fprintf(out, "    %s: none\n", side);
	for (i = 0; i < pkt->nnft; i++) {
		pf_nft_format(&pkt->nft[i], buf, sizeof(buf), true);
		fprintf(out, "    %s: %s\n", side, buf);
	}
}

static void text_packet(FILE *out, const char *mark, const char *side,
			const struct pf_packet *pkt, const char *name)
{
	fprintf(out, "%s %s: packet %" PRIu64 " (%s, id %" PRIu64 ") of %s: %s ",
		mark, side, pkt->seq, pkt->stage[0] ? pkt->stage : "?",
		pkt->id, name, pkt->proto[0] ? pkt->proto : "?");
	pf_print_endpoint(out, pkt, pkt->saddr, pkt->sport);
	fputs(" -> ", out);
	pf_print_endpoint(out, pkt, pkt->daddr, pkt->dport);
	fprintf(out, " ifindex %d netns %lu cpu %u\n    ", pkt->ifindex,
		pkt->netns, pkt->cpu);
	put_fate(out, pkt);
	if (pkt->graph) {
		fprintf(out, "; %s ", pkt->graph->func);
		if (pkt->graph->complete)
			put_us(out, pkt->graph->duration_ns);
		else
			fputs("(did not return)", out);
		fprintf(out, ", %" PRIu64 " calls", count_calls(pkt->graph));
	} else {
		fputs("; no graph", out);
	}
	if (!pkt->complete)
		fputs(" [INCOMPLETE]", out);
	fputc('\n', out);
}

/* "ip_rcv > ip_rcv_finish > ... > udp_rcv": the first 2 and last 4. */
static void text_path(FILE *out, const struct pf_node *const *path,
		      size_t depth)
{
	size_t i;

	if (!depth) {
		fputs("(the roots)", out);
		return;
	}
	for (i = 0; i < depth; i++) {
		if (depth > 7 && i == 2) {
			fputs(" > ...", out);
			i = depth - 5;
			continue;
		}
		fprintf(out, "%s%s", i ? " > " : "", path[i]->func);
	}
}

static void text_call(FILE *out, const struct pf_node *node)
{
	const char *mod = strstr(node->func, " [");

	/* "veth_xmit() [veth]", as the trace prints it */
	if (mod)
		fprintf(out, "%.*s()%s ", (int)(mod - node->func), node->func,
			mod);
	else
		fprintf(out, "%s() ", node->func);
	if (node->complete)
		put_us(out, node->duration_ns);
	else
		fputs("(did not return)", out);
}

/* Up to *left lines of @node's subtree, pre-order; *more counts the rest. */
static void text_subtree(FILE *out, const char *mark, const struct pf_node *node,
			 size_t depth, size_t *left, uint64_t *more)
{
	size_t i;

	if (!*left) {
		*more += count_calls(node);
		return;
	}
	--*left;
	fprintf(out, "     %s %*s", mark, (int)(2 * depth), "");
	text_call(out, node);
	fputc('\n', out);
	for (i = 0; i < node->nchildren; i++)
		text_subtree(out, mark, node->children[i], depth + 1, left,
			     more);
}

static void text_side(FILE *out, const char *mark,
		      const struct pf_node *const *nodes, size_t n)
{
	size_t i, left = PF_DIFF_LINES;
	uint64_t more = 0;

	for (i = 0; i < n; i++)
		text_subtree(out, mark, nodes[i], 0, &left, &more);
	if (more)
		fprintf(out, "     %s ... %" PRIu64 " more call%s\n", mark, more,
			more == 1 ? "" : "s");
}

static void text_divergence(FILE *out, const struct place *p)
{
	size_t i, d = p->depth;

	fprintf(out, "\nwhere they part, after %" PRIu64 " call%s in common:\n",
		p->common_before, p->common_before == 1 ? "" : "s");
	for (i = 0; i < d; i++)
		fprintf(out, "    %*s%s\n", (int)(2 * i), "", p->path[i]->func);
	if (p->common_siblings > 1)
		fprintf(out, "    %*s... %zu call%s in common\n", (int)(2 * d), "",
			p->common_siblings - 1,
			p->common_siblings - 1 == 1 ? "" : "s");
	if (p->after)
		fprintf(out, "    %*s%s\n", (int)(2 * d), "", p->after->func);
	for (i = 0; i < p->na; i++) {
		fprintf(out, "-   %*s%s    A: %" PRIu64 " call%s, ", (int)(2 * d),
			"", p->a[i]->func, count_calls(p->a[i]),
			count_calls(p->a[i]) == 1 ? "" : "s");
		if (p->a[i]->complete)
			put_us(out, p->a[i]->duration_ns);
		else
			fputs("did not return", out);
		fputc('\n', out);
	}
	if (!p->na)
		fprintf(out, "-   %*s(A: nothing more here)\n", (int)(2 * d), "");
	for (i = 0; i < p->nb; i++) {
		fprintf(out, "+   %*s%s    B: %" PRIu64 " call%s, ", (int)(2 * d),
			"", p->b[i]->func, count_calls(p->b[i]),
			count_calls(p->b[i]) == 1 ? "" : "s");
		if (p->b[i]->complete)
			put_us(out, p->b[i]->duration_ns);
		else
			fputs("did not return", out);
		fputc('\n', out);
	}
	if (!p->nb)
		fprintf(out, "+   %*s(B: nothing more here)\n", (int)(2 * d), "");
}

static void text_out(FILE *out, const struct pf_packet *a,
		     const struct pf_packet *b, const struct pf_diff_opts *o,
		     const struct walk *w)
{
	size_t i;

	text_packet(out, "---", "A", a, o->name_a);
	text_packet(out, "+++", "B", b, o->name_b);
	fputc('\n', out);
	if (!same_fate(a, b)) {
		fputs("fate differs: A ", out);
		put_fate(out, a);
		fputs(", B ", out);
		put_fate(out, b);
		fputc('\n', out);
	}
	if (strcmp(a->stage, b->stage))
		fprintf(out, "stage differs: A %s, B %s\n", a->stage, b->stage);
	if (!same_nft(a, b)) {
		fputs("nftables verdicts differ:\n", out);
		put_nft(out, "A", a);
		put_nft(out, "B", b);
	}
	fprintf(out, "calls: %" PRIu64 " in both, %" PRIu64 " only in A, %"
		PRIu64 " only in B", w->common, w->only_a, w->only_b);
	if (w->places)
		fprintf(out, ", in %" PRIu64 " place%s", w->places,
			w->places == 1 ? "" : "s");
	else
		fputs(": the same calls", out);
	fputc('\n', out);
	if (w->have_first)
		text_divergence(out, &w->first);
	if (w->rets) {
		fprintf(out, "\nreturn values that differ (A -> B)");
		if (w->rets > w->nretds)
			fprintf(out, ": the first %zu of %" PRIu64, w->nretds,
				w->rets);
		fputs(":\n", out);
	}
	for (i = 0; i < w->nretds; i++) {
		const struct retd *r = &w->retds[i];

		fprintf(out, "  %s  %s -> %s", r->a->func, r->a->ret,
			r->b->ret);
		if (r->depth) {
			fputs("  in ", out);
			text_path(out, r->path, r->depth);
		}
		fputc('\n', out);
	}
	if (w->places) {
		fprintf(out, "\nonly in A (-), only in B (+)");
		if (w->places > w->nkept)
			fprintf(out, ": the first %zu of %" PRIu64 " places",
				w->nkept, w->places);
		fputs(":\n", out);
	}
	for (i = 0; i < w->nkept; i++) {
		const struct place *p = &w->kept[i];

		fprintf(out, "  %zu. in ", i + 1);
		text_path(out, p->path, p->depth);
		if (p->after)
			fprintf(out, ", after %s", p->after->func);
		else if (p->depth)
			fputs(", first", out);
		fprintf(out, " (-%" PRIu64 " +%" PRIu64 " calls)\n", p->calls_a,
			p->calls_b);
		text_side(out, "-", p->a, p->na);
		text_side(out, "+", p->b, p->nb);
	}
	if (w->ndurs)
		fprintf(out, "\ndurations that differ the most (B - A, B / A, A -> B):\n");
	for (i = 0; i < w->ndurs; i++) {
		const struct dur *d = &w->durs[i];

		fputs("  ", out);
		put_signed_us(out, d->a->duration_ns, d->b->duration_ns);
		if (d->a->duration_ns)
			fprintf(out, "  x%.2f",
				(double)d->b->duration_ns /
				(double)d->a->duration_ns);
		else
			fputs("  x-", out);
		fprintf(out, "  %s  ", d->a->func);
		put_us(out, d->a->duration_ns);
		fputs(" -> ", out);
		put_us(out, d->b->duration_ns);
		if (d->depth) {
			fputs("  in ", out);
			text_path(out, d->path, d->depth);
		}
		fputc('\n', out);
	}
}

/* JSON: the strings are names from traces: escaped, bad UTF-8 kept out. */
static void j_string(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', out);
	for (; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			fprintf(out, "\\u%04x", *p < 0x80 ? *p : 0xfffd);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

static void j_dur(FILE *out, const struct pf_node *node)
{
	if (node->complete)
		fprintf(out, "%" PRIu64, node->duration_ns);
	else
		fputs("null", out);
}

static void j_packet(FILE *out, const struct pf_packet *pkt, const char *name)
{
	fputs("{\"file\":", out);
	j_string(out, name);
	fprintf(out, ",\"seq\":%" PRIu64 ",\"stage\":", pkt->seq);
	j_string(out, pkt->stage);
	fprintf(out, ",\"id\":%" PRIu64 ",\"cpu\":%u,\"proto\":", pkt->id,
		pkt->cpu);
	j_string(out, pkt->proto);
	fputs(",\"saddr\":", out);
	j_string(out, pkt->saddr);
	fputs(",\"daddr\":", out);
	j_string(out, pkt->daddr);
	fprintf(out, ",\"sport\":%u,\"dport\":%u,\"ifindex\":%d,\"netns\":%lu",
		pkt->sport, pkt->dport, pkt->ifindex, pkt->netns);
	switch (pkt->fate) {
	case PF_FATE_CONSUMED:
		fputs(",\"fate\":\"consumed\",\"drop\":null", out);
		break;
	case PF_FATE_DROPPED:
		fputs(",\"fate\":\"dropped\",\"drop\":{\"reason\":", out);
		j_string(out, pkt->drop_reason);
		fputs(",\"func\":", out);
		if (pkt->drop_func[0])
			j_string(out, pkt->drop_func);
		else
			fputs("null", out);
		fputc('}', out);
		break;
	default:
		fputs(",\"fate\":null,\"drop\":null", out);
	}
	fprintf(out, ",\"complete\":%s,\"root\":",
		pkt->complete ? "true" : "false");
	if (pkt->graph) {
		j_string(out, pkt->graph->func);
		fputs(",\"duration_ns\":", out);
		j_dur(out, pkt->graph);
		fprintf(out, ",\"calls\":%" PRIu64 "}", count_calls(pkt->graph));
	} else {
		fputs("null,\"duration_ns\":null,\"calls\":0}", out);
	}
}

static void j_path(FILE *out, const struct pf_node *const *path, size_t depth)
{
	size_t i;

	fputc('[', out);
	for (i = 0; i < depth; i++) {
		if (i)
			fputc(',', out);
		j_string(out, path[i]->func);
	}
	fputc(']', out);
}

static void j_calls(FILE *out, const struct pf_node *const *nodes, size_t n)
{
	size_t i;

	fputc('[', out);
	for (i = 0; i < n; i++) {
		fputs(i ? ",{\"func\":" : "{\"func\":", out);
		j_string(out, nodes[i]->func);
		fprintf(out, ",\"calls\":%" PRIu64 ",\"duration_ns\":",
			count_calls(nodes[i]));
		j_dur(out, nodes[i]);
		fputc('}', out);
	}
	fputc(']', out);
}

static void j_lines(FILE *out, const struct pf_node *node, size_t depth,
		    size_t *left, uint64_t *more, bool *first)
{
	size_t i;

	if (!*left) {
		*more += count_calls(node);
		return;
	}
	--*left;
	fprintf(out, "%s{\"depth\":%zu,\"func\":", *first ? "" : ",", depth);
	*first = false;
	j_string(out, node->func);
	fputs(",\"duration_ns\":", out);
	j_dur(out, node);
	fputc('}', out);
	for (i = 0; i < node->nchildren; i++)
		j_lines(out, node->children[i], depth + 1, left, more, first);
}

static void j_side(FILE *out, const struct pf_node *const *nodes, size_t n,
		   uint64_t calls)
{
	size_t i, left = PF_DIFF_LINES;
	uint64_t more = 0;
	bool first = true;

	fprintf(out, "{\"calls\":%" PRIu64 ",\"lines\":[", calls);
	for (i = 0; i < n; i++)
		j_lines(out, nodes[i], 0, &left, &more, &first);
	fprintf(out, "],\"more\":%" PRIu64 "}", more);
}

static void json_out(FILE *out, const struct pf_packet *a,
		     const struct pf_packet *b, const struct pf_diff_opts *o,
		     const struct walk *w, bool same)
{
	size_t i;

	fputs("{\"a\":", out);
	j_packet(out, a, o->name_a);
	fputs(",\"b\":", out);
	j_packet(out, b, o->name_b);
	fprintf(out, ",\"same\":%s,\"same_tree\":%s,\"same_returns\":%s,"
		"\"same_fate\":%s,\"same_stage\":%s,\"same_nft\":%s",
		same ? "true" : "false",
		w->places ? "false" : "true", w->rets ? "false" : "true",
		same_fate(a, b) ? "true" : "false",
		strcmp(a->stage, b->stage) ? "false" : "true",
		same_nft(a, b) ? "true" : "false");
	fprintf(out, ",\"calls\":{\"common\":%" PRIu64 ",\"only_a\":%" PRIu64
		",\"only_b\":%" PRIu64 ",\"places\":%" PRIu64 "}", w->common,
		w->only_a, w->only_b, w->places);
	fputs(",\"divergence\":", out);
	if (w->have_first) {
		const struct place *p = &w->first;

		fprintf(out, "{\"common_before\":%" PRIu64 ",\"path\":",
			p->common_before);
		j_path(out, p->path, p->depth);
		fprintf(out, ",\"common_siblings_before\":%zu,\"after\":",
			p->common_siblings);
		if (p->after)
			j_string(out, p->after->func);
		else
			fputs("null", out);
		fputs(",\"a\":", out);
		j_calls(out, p->a, p->na);
		fputs(",\"b\":", out);
		j_calls(out, p->b, p->nb);
		fputc('}', out);
	} else {
		fputs("null", out);
	}
	fputs(",\"places\":[", out);
	for (i = 0; i < w->nkept; i++) {
		const struct place *p = &w->kept[i];

		fputs(i ? ",{\"path\":" : "{\"path\":", out);
		j_path(out, p->path, p->depth);
		fputs(",\"after\":", out);
		if (p->after)
			j_string(out, p->after->func);
		else
			fputs("null", out);
		fputs(",\"a\":", out);
		j_side(out, p->a, p->na, p->calls_a);
		fputs(",\"b\":", out);
		j_side(out, p->b, p->nb, p->calls_b);
		fputc('}', out);
	}
	fputs("],\"durations\":[", out);
	for (i = 0; i < w->ndurs; i++) {
		const struct dur *d = &w->durs[i];
		bool slower = d->b->duration_ns >= d->a->duration_ns;

		fputs(i ? ",{\"path\":" : "{\"path\":", out);
		j_path(out, d->path, d->depth);
		fputs(",\"func\":", out);
		j_string(out, d->a->func);
		fprintf(out, ",\"a_ns\":%" PRIu64 ",\"b_ns\":%" PRIu64
			",\"diff_ns\":%s%" PRIu64 ",\"ratio\":",
			d->a->duration_ns, d->b->duration_ns,
			slower ? "" : "-", d->diff);
		if (d->a->duration_ns)
			fprintf(out, "%.4f", (double)d->b->duration_ns /
					     (double)d->a->duration_ns);
		else
			fputs("null", out);
		fputc('}', out);
	}
	fprintf(out, "],\"returns\":{\"differ\":%" PRIu64 ",\"calls\":[",
		w->rets);
	for (i = 0; i < w->nretds; i++) {
		const struct retd *r = &w->retds[i];

		fputs(i ? ",{\"path\":" : "{\"path\":", out);
		j_path(out, r->path, r->depth);
		fputs(",\"func\":", out);
		j_string(out, r->a->func);
		fputs(",\"a\":", out);
		j_string(out, r->a->ret);
		fputs(",\"b\":", out);
		j_string(out, r->b->ret);
		fputc('}', out);
	}
	fputs("]}}\n", out);
}

/* --- chrome ---------------------------------------------------------------------- */

/* "A: packet 3 (rx, id 3) of run.trace", as text's header names it. */
static char *process_name(const char *side, const struct pf_packet *pkt,
			  const char *file)
{
	const char *stage = pkt->stage[0] ? pkt->stage : "?";
	int n;
	char *s;

	if (!file)
		file = "?";
	n = snprintf(NULL, 0, "%s: packet %" PRIu64 " (%s, id %" PRIu64 ") of %s",
		     side, pkt->seq, stage, pkt->id, file);
	s = n < 0 ? NULL : malloc((size_t)n + 1);
	if (s)
		snprintf(s, (size_t)n + 1, "%s: packet %" PRIu64 " (%s, id %" PRIu64 ") of %s",
			 side, pkt->seq, stage, pkt->id, file);
	return s;
}

/* Both packets on one timeline: A process 1, B process 2. */
static int chrome_out(FILE *out, const struct pf_packet *a,
		      const struct pf_packet *b, const struct pf_diff_opts *o)
{
	const struct pf_packet *pkts[2] = { a, b };
	char *names[2];
	int err = -ENOMEM;

	names[0] = process_name("A", a, o->name_a);
	names[1] = process_name("B", b, o->name_b);
	if (names[0] && names[1])
		err = pf_render_chrome_processes(out, pkts,
						 (const char *const *)names, 2);
	free(names[0]);
	free(names[1]);
	return err;
}

/* --- html ------------------------------------------------------------------------- */

static void html_lit(struct pf_obuf *b, const char *s)
{
	ob_put(b, s, strlen(s));
}

/*
 * The two trees merged as they are aligned, flat in call order: for each
 * row [OP, NAME, A_NS, B_NS, CALLEES], OP 0 a call both made, 1 only A,
 * 2 only B; a duration null where its return is missing, 0 for the side
 * without the call. The rows under a one-sided call are that side's.
 */
static void html_one(struct pf_obuf *b, const struct pf_node *node, int op)
{
	size_t i;

	ob_char(b, ',');
	ob_u64(b, (uint64_t)op, false);
	ob_char(b, ',');
	html_json_str(b, node->func);
	html_lit(b, op == 1 ? "," : ",0,");
	if (node->complete)
		ob_u64(b, node->duration_ns, false);
	else
		ob_lit(b, "null");
	html_lit(b, op == 1 ? ",0," : ",");
	ob_u64(b, node->nchildren, false);
	ob_char(b, '\n');
	for (i = 0; i < node->nchildren; i++)
		html_one(b, node->children[i], op);
}

static int html_pair(struct pf_obuf *b, const struct pf_node *a,
		     const struct pf_node *bn)
{
	struct ops o = { NULL, 0 };
	size_t k, i = 0, j = 0;
	int err;

	if (align(a, bn, &o)) {
		free(o.op);
		return -ENOMEM;
	}
	ob_lit(b, ",0,");
	html_json_str(b, a->func);
	ob_char(b, ',');
	if (a->complete)
		ob_u64(b, a->duration_ns, false);
	else
		ob_lit(b, "null");
	ob_char(b, ',');
	if (bn->complete)
		ob_u64(b, bn->duration_ns, false);
	else
		ob_lit(b, "null");
	ob_char(b, ',');
	ob_u64(b, o.n, false);
	ob_char(b, '\n');
	for (k = 0, err = 0; k < o.n && !err; k++) {
		if (o.op[k] == OP_BOTH)
			err = html_pair(b, a->children[i++], bn->children[j++]);
		else if (o.op[k] == OP_A)
			html_one(b, a->children[i++], 1);
		else
			html_one(b, bn->children[j++], 2);
	}
	free(o.op);
	return err;
}

static int html_out(FILE *out, const struct pf_packet *a,
		    const struct pf_packet *b, const struct pf_diff_opts *o,
		    const struct walk *w, bool same)
{
	struct pf_obuf *ob = malloc(sizeof(*ob));
	int err = 0;

	if (!ob)
		return -ENOMEM;
	ob->out = out;
	ob->len = 0;
	html_begin(ob, "diff", NULL);
	ob_lit(ob, "<script type=\"application/json\" id=\"pf-diff\">{\"a\":");
	html_packet_head(ob, a);
	ob_lit(ob, ",\"b\":");
	html_packet_head(ob, b);
	ob_lit(ob, ",\"name_a\":");
	html_json_str(ob, o->name_a ? o->name_a : "?");
	ob_lit(ob, ",\"name_b\":");
	html_json_str(ob, o->name_b ? o->name_b : "?");
	ob_lit(ob, ",\"same\":");
	html_lit(ob, same ? "true" : "false");
	ob_lit(ob, ",\"same_fate\":");
	html_lit(ob, same_fate(a, b) ? "true" : "false");
	ob_lit(ob, ",\"same_stage\":");
	html_lit(ob, strcmp(a->stage, b->stage) ? "false" : "true");
	ob_lit(ob, ",\"calls\":{\"common\":");
	ob_u64(ob, w->common, false);
	ob_lit(ob, ",\"only_a\":");
	ob_u64(ob, w->only_a, false);
	ob_lit(ob, ",\"only_b\":");
	ob_u64(ob, w->only_b, false);
	ob_lit(ob, ",\"places\":");
	ob_u64(ob, w->places, false);
	/* A leading 0 that the script drops: every row starts with ','. */
	ob_lit(ob, "},\"m\":[0");
	if (a->graph && b->graph && same_name(a->graph, b->graph)) {
		err = html_pair(ob, a->graph, b->graph);
	} else {
		if (a->graph)
			html_one(ob, a->graph, 1);
		if (b->graph)
			html_one(ob, b->graph, 2);
	}
	ob_lit(ob, "]}</script>\n");
	if (!err)
		html_end(ob);
	else
		ob_flush(ob);
	free(ob);
	return err;
}

int pf_diff(FILE *out, const struct pf_packet *a, const struct pf_packet *b,
	    const struct pf_diff_opts *o)
{
	struct walk *w = calloc(1, sizeof(*w));
	bool same;
	int ret;

	if (!w)
		return -ENOMEM;
	w->top = o->top;
	w->kept = calloc(o->top + 1, sizeof(*w->kept));
	w->durs = calloc(o->top + 1, sizeof(*w->durs));
	w->retds = calloc(o->top + 1, sizeof(*w->retds));
	if (!w->kept || !w->durs || !w->retds) {
		walk_free(w);
		free(w);
		return -ENOMEM;
	}
	if (a->graph && b->graph && same_name(a->graph, b->graph)) {
		walk_pair(w, a->graph, b->graph);
	} else if (a->graph || b->graph) {
		/* Different roots (or one without a graph): all differs. */
		add_place(w, NULL, 0,
			  (const struct pf_node *const *)&a->graph,
			  a->graph ? 1 : 0,
			  (const struct pf_node *const *)&b->graph,
			  b->graph ? 1 : 0);
	}
	if (w->err) {
		ret = w->err;
		goto out;
	}
	same = !w->places && !w->rets && same_fate(a, b) &&
	       !strcmp(a->stage, b->stage) && same_nft(a, b);
	ret = same ? EXIT_SAME : EXIT_DIFFER;
	if (o->format == PF_DIFF_CHROME) {
		int err = chrome_out(out, a, b, o);

		if (err) {
			ret = err;
			goto out;
		}
	} else if (o->format == PF_DIFF_HTML) {
		int err = html_out(out, a, b, o, w, same);

		if (err) {
			ret = err;
			goto out;
		}
	} else if (o->format == PF_DIFF_JSON) {
		json_out(out, a, b, o, w, same);
	} else {
		text_out(out, a, b, o, w);
	}
	if (fflush(out) || ferror(out))
		ret = errno ? -errno : -EIO;
out:
	walk_free(w);
	free(w);
	return ret;
}

/* --- reading the packets -------------------------------------------------------- */

enum sel_kind { SEL_FIRST, SEL_SEQ, SEL_ID, SEL_JOURNEY };

struct sel {
	enum sel_kind kind;
	uint64_t n;		/* the seq, id, or journey number */
	const char *machine;	/* SEL_JOURNEY: the machine's name */
	const char *text;	/* as given, for messages */
};

/* What one side wants of a file, and what it found. */
struct pick {
	struct sel sel;
	const char *stage;	/* --stage, or NULL */
	struct pf_packet *found[PF_DIFF_MAX_GRAPHS];
	size_t nfound;
	bool more;		/* more graphs of the id than kept */
	bool journey_seen;	/* SEL_JOURNEY: its journey was read */
};

struct reading {
	struct pick *picks[2];
	size_t npicks;
	int err;
	/* Inside a line of pktfilt merge --format json: which graphs. */
	bool in_journey;
	uint64_t journey;
	const char *machine;
};

static bool pick_done(const struct pick *p)
{
	if (p->sel.kind == SEL_JOURNEY)
		return p->journey_seen;
	return p->sel.kind != SEL_ID && p->nfound;
}

static int pick_packet(void *arg, const struct pf_packet *pkt)
{
	struct reading *r = arg;
	bool all_done = true;
	size_t i;

	for (i = 0; i < r->npicks; i++) {
		struct pick *p = r->picks[i];
		bool want;

		if (pick_done(p))
			continue;
		switch (p->sel.kind) {
		case SEL_FIRST:
			want = true;
			break;
		case SEL_SEQ:
			want = pkt->seq == p->sel.n;
			break;
		case SEL_JOURNEY:
			want = r->in_journey && r->journey == p->sel.n &&
			       !strcmp(r->machine, p->sel.machine);
			break;
		default:
			want = pkt->id == p->sel.n;
		}
		if (want && p->stage && strcmp(pkt->stage, p->stage))
			want = false;
		if (want && p->nfound == PF_DIFF_MAX_GRAPHS) {
			p->more = true;
			want = false;
		}
		if (want) {
			p->found[p->nfound] = pf_diff_packet_copy(pkt);
			if (!p->found[p->nfound])
				return r->err = errno == EFBIG ? -EFBIG : -ENOMEM;
			p->nfound++;
		}
		if (!pick_done(p))
			all_done = false;
	}
	return all_done ? -ECANCELED : 0;
}

static int read_raw(FILE *in, struct reading *r)
{
	static char buf[1 << 16];
	struct pf_fgraph *p = pf_fgraph_new_stream(pick_packet, r);
	struct pf_trace *t;
	size_t n;
	int err = 0;

	if (!p)
		return -ENOMEM;
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0) {
		err = pf_fgraph_feed(p, buf, n);
		if (err)
			break;
	}
	if (err) {
		pf_fgraph_free(p);
		return err == -ECANCELED ? 0 : err;
	}
	if (ferror(in)) {
		pf_fgraph_free(p);
		return errno ? -errno : -EIO;
	}
	t = pf_fgraph_finish(p);
	if (!t)
		return errno == ECANCELED ? 0 : -errno;
	pf_trace_free(t);
	return 0;
}

/* One line into *@line (grown as needed), at most PF_DIFF_MAX_LINE. */
static ssize_t read_line(FILE *in, char **line, size_t *cap)
{
	size_t len = 0;
	int c;

	while ((c = getc(in)) != EOF) {
		if (len + 1 >= *cap) {
			size_t nc = *cap ? 2 * *cap : 4096;
			char *l;

			if (nc > PF_DIFF_MAX_LINE) {
				errno = EFBIG;
				return -1;
			}
			l = realloc(*line, nc);
			if (!l)
				return -1;
			*line = l;
			*cap = nc;
		}
		if (c == '\n')
			break;
		(*line)[len++] = (char)c;
	}
	if (c == EOF && !len) {
		errno = 0;
		return -1;
	}
	(*line)[len] = '\0';
	return (ssize_t)len;
}

/*
 * A line of pktfilt merge --format json, a journey: {"journey": N, ...,
 * "packets": [{"machine": M, "id": ID, "graphs": [GRAPH, ...]}, ...]},
 * each GRAPH a line of report --format json. Walked as text, strings
 * and nesting respected, each GRAPH read as such a line.
 */
static size_t jw_ws(const char *s, size_t n, size_t i)
{
	while (i < n && strchr(" \t\r\n", s[i]))
		i++;
	return i;
}

/* The end of the JSON value at @i (not checked: read later), or 0. */
static size_t jw_skip(const char *s, size_t n, size_t i)
{
	size_t depth = 0;
	bool str = false;

	i = jw_ws(s, n, i);
	if (i >= n)
		return 0;
	if (s[i] != '{' && s[i] != '[' && s[i] != '"') {
		while (i < n && !strchr(",]} \t\r\n", s[i]))
			i++;
		return i;
	}
	for (; i < n; i++) {
		if (str) {
			if (s[i] == '\\')
				i++;
			else if (s[i] == '"')
				str = false;
			if (!str && !depth)
				return i + 1;
			continue;
		}
		if (s[i] == '"') {
			str = true;
		} else if (s[i] == '{' || s[i] == '[') {
			depth++;
		} else if (s[i] == '}' || s[i] == ']') {
			if (!depth--)
				return 0;
			if (!depth)
				return i + 1;
		}
	}
	return 0;
}

/*
 * The next member of the object or element of the array at *@i (after
 * its '{', '[' or a ','): its key (objects) and value's span; false at
 * the end or on an error (*@bad).
 */
static bool jw_next(const char *s, size_t n, size_t *i, bool object,
		    size_t *key, size_t *key_end, size_t *val, size_t *val_end,
		    bool *bad)
{
	size_t k = jw_ws(s, n, *i);

	if (k < n && s[k] == ',')
		k = jw_ws(s, n, k + 1);
	if (k < n && (s[k] == '}' || s[k] == ']')) {
		*i = k + 1;
		return false;
	}
	if (object) {
		if (k >= n || s[k] != '"')
			goto bad;
		*key = k;
		*key_end = jw_skip(s, n, k);
		if (!*key_end)
			goto bad;
		k = jw_ws(s, n, *key_end);
		if (k >= n || s[k] != ':')
			goto bad;
		k++;
	}
	*val = jw_ws(s, n, k);
	*val_end = jw_skip(s, n, *val);
	if (!*val_end)
		goto bad;
	*i = *val_end;
	return true;
bad:
	*bad = true;
	return false;
}

static bool jw_key(const char *s, size_t key, size_t key_end, const char *name)
{
	size_t len = strlen(name);

	return key_end - key == len + 2 && !strncmp(s + key + 1, name, len);
}

int pf_diff_journey(const char *s, size_t n, pf_journey_fn fn, void *arg,
		    char *err, size_t errlen)
{
	size_t i, key, key_end, v, v_end, p = 0, p_end = 0;
	bool bad = false, have_num = false;
	uint64_t journey = 0;
	struct pf_json *num;
	int ret = 0;

	if (!n || jw_ws(s, n, 0) >= n || s[jw_ws(s, n, 0)] != '{') {
		snprintf(err, errlen, "not a journey of pktfilt merge");
		return -EINVAL;
	}

	i = jw_ws(s, n, 0) + 1;
	while (jw_next(s, n, &i, true, &key, &key_end, &v, &v_end, &bad)) {
		if (jw_key(s, key, key_end, "journey")) {
			num = pf_json_parse(s + v, v_end - v, 1, 1, err,
					    errlen);
			have_num = num && num->type == PF_J_NUM && num->is_u64;
			if (have_num)
				journey = num->u64;
			pf_json_free(num);
		} else if (jw_key(s, key, key_end, "packets") && s[v] == '[') {
			p = v + 1;
			p_end = v_end;
		}
	}
	if (bad || !have_num || !p) {
		snprintf(err, errlen, "not a journey of pktfilt merge");
		return -EINVAL;
	}
	/* Each machine's packet (v .. v_end): its name, then its graphs. */
	while (!ret && jw_next(s, p_end, &p, false, &key, &key_end, &v, &v_end,
			       &bad)) {
		size_t q = v + 1, g = 0, g_end = 0, m, m_end;
		struct pf_json *name = NULL;

		if (s[v] != '{') {
			bad = true;
			break;
		}
		while (jw_next(s, v_end, &q, true, &key, &key_end, &m, &m_end,
			       &bad)) {
			if (jw_key(s, key, key_end, "machine")) {
				pf_json_free(name);
				name = pf_json_parse(s + m, m_end - m, 1, 1,
						     err, errlen);
			} else if (jw_key(s, key, key_end, "graphs") &&
				   s[m] == '[') {
				g = m + 1;
				g_end = m_end;
			}
		}
		if (bad || !name || name->type != PF_J_STR || !g) {
			pf_json_free(name);
			bad = true;
			break;
		}
		while (!ret && jw_next(s, g_end, &g, false, &key, &key_end,
				       &m, &m_end, &bad)) {
			struct pf_packet *pkt;

			pkt = pf_diff_packet_json(s + m, m_end - m, err,
						  errlen);
			if (!pkt) {
				ret = -EINVAL;
				break;
			}
			ret = fn(arg, journey, name->str, pkt);
			pf_diff_packet_free(pkt);
		}
		pf_json_free(name);
	}
	if (!ret && bad) {
		snprintf(err, errlen, "not a journey of pktfilt merge");
		ret = -EINVAL;
	}
	return ret;
}

static int journey_graph(void *arg, uint64_t journey, const char *machine,
			 const struct pf_packet *pkt)
{
	struct reading *r = arg;
	int ret;

	r->in_journey = true;
	r->journey = journey;
	r->machine = machine;
	ret = pick_packet(r, pkt);
	r->in_journey = false;
	r->machine = NULL;
	return ret;
}

/* The journey line @s: its graphs handed to pick_packet(); 0 or -errno. */
static int read_journey(const char *s, size_t n, struct reading *r,
			char *err, size_t errlen)
{
	size_t i;
	int ret;

	r->journey = UINT64_MAX;	/* none seen: set by its graphs */
	ret = pf_diff_journey(s, n, journey_graph, r, err, errlen);

	/* The journeys wanted, once read, are done. */
	for (i = 0; i < r->npicks && ret != -EINVAL; i++)
		if (r->picks[i]->sel.kind == SEL_JOURNEY &&
		    r->picks[i]->sel.n == r->journey)
			r->picks[i]->journey_seen = true;
	return ret;
}

/* Does @line start as a journey of pktfilt merge ({"journey": ...)? */
static bool is_journey(const char *line, size_t len)
{
	size_t i = jw_ws(line, len, 0);

	if (i >= len || line[i] != '{')
		return false;
	i = jw_ws(line, len, i + 1);
	return len - i >= 9 && !strncmp(line + i, "\"journey\"", 9);
}

static int read_json(FILE *in, const char *name, struct reading *r)
{
	char *line = NULL, err[256];
	size_t cap = 0;
	uint64_t lineno = 0;
	ssize_t len;
	int ret = 0;

	while ((len = read_line(in, &line, &cap)) >= 0) {
		struct pf_packet *pkt;
		size_t k;

		lineno++;
		for (k = 0; k < (size_t)len && strchr(" \t\r", line[k]); k++)
			;
		if (k == (size_t)len)
			continue;
		if (is_journey(line, (size_t)len)) {
			bool all_done = true;

			ret = read_journey(line, (size_t)len, r, err,
					   sizeof(err));
			if (ret == -EINVAL) {
				fprintf(stderr, "pktfilt: diff: %s, line %" PRIu64 ": %s\n",
					name, lineno, err);
				break;
			}
			for (k = 0; k < r->npicks; k++)
				if (!pick_done(r->picks[k]))
					all_done = false;
			if (ret == -ECANCELED || (!ret && all_done)) {
				ret = 0;
				break;
			}
			if (ret)
				break;
			continue;
		}
		pkt = pf_diff_packet_json(line, (size_t)len, err, sizeof(err));
		if (!pkt) {
			fprintf(stderr, "pktfilt: diff: %s, line %" PRIu64 ": %s\n",
				name, lineno, err);
			ret = -EINVAL;
			break;
		}
		ret = pick_packet(r, pkt);
		pf_diff_packet_free(pkt);
		if (ret) {
			if (ret == -ECANCELED)
				ret = 0;
			break;
		}
	}
	if (len < 0 && errno && !ret)
		ret = -errno;
	free(line);
	return ret;
}

/* Read @path for the picks (one or two); 0, or the exit status. */
static int read_file(const char *path, struct reading *r)
{
	bool std = !strcmp(path, "-");
	const char *name = std ? "standard input" : path;
	FILE *in = std ? stdin : fopen(path, "r");
	int c, err;

	if (!in) {
		fprintf(stderr, "pktfilt: diff: cannot read %s: %s\n", path,
			strerror(errno));
		return EXIT_TROUBLE;
	}
	do
		c = getc(in);
	while (c == ' ' || c == '\t' || c == '\r' || c == '\n');
	if (c != EOF)
		ungetc(c, in);
	err = c == '{' ? read_json(in, name, r) : read_raw(in, r);
	if (!std)
		fclose(in);
	if (err == -EINVAL)
		return EXIT_TROUBLE;	/* said */
	if (err) {
		fprintf(stderr, "pktfilt: diff: reading %s: %s\n", name,
			err == -EFBIG ? "a graph of more than 500,000 calls" :
			strerror(-err));
		return EXIT_TROUBLE;
	}
	return 0;
}

/* --- the command ------------------------------------------------------------------- */

static int diff_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "pktfilt: diff: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\ntry 'pktfilt diff --help'\n");
	return EXIT_TROUBLE;
}

static bool parse_u64(const char *s, uint64_t *v)
{
	uint64_t x = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || x > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return false;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*v = x;
	return true;
}

/* Is @arg a PACKET (N, seq:N, id:N)? */
static bool parse_sel(const char *arg, struct sel *s)
{
	s->text = arg;
	s->machine = NULL;
	if (!strncmp(arg, "journey:", 8)) {
		const char *at = strchr(arg + 8, '@');
		char num[24];

		if (!at || !at[1] || (size_t)(at - arg - 8) >= sizeof(num))
			return false;
		memcpy(num, arg + 8, (size_t)(at - arg - 8));
		num[at - arg - 8] = '\0';
		s->kind = SEL_JOURNEY;
		s->machine = at + 1;
		return parse_u64(num, &s->n);
	}
	if (!strncmp(arg, "id:", 3)) {
		s->kind = SEL_ID;
		return parse_u64(arg + 3, &s->n);
	}
	s->kind = SEL_SEQ;
	if (!strncmp(arg, "seq:", 4))
		return parse_u64(arg + 4, &s->n);
	return parse_u64(arg, &s->n);
}

static int take_opt(const char *name, const char *shortname, int argc,
		    char **argv, int *i, const char **val)
{
	const char *arg = argv[*i];
	size_t len = strlen(name);

	if (!strncmp(arg, name, len) && arg[len] == '=') {
		if (*val)
			return diff_usage("%s given twice", name);
		*val = arg + len + 1;
		return 1;
	}
	if (strcmp(arg, name) && (!shortname || strcmp(arg, shortname)))
		return 0;
	if (*val)
		return diff_usage("%s given twice", name);
	if (*i + 1 >= argc)
		return diff_usage("%s needs a value", arg);
	*val = argv[++*i];
	return 1;
}

static void pick_free(struct pick *p)
{
	size_t i;

	for (i = 0; i < p->nfound; i++)
		pf_diff_packet_free(p->found[i]);
	p->nfound = 0;
}

static void say_packet(const struct pick *p, const char *file)
{
	switch (p->sel.kind) {
	case SEL_FIRST:
		fprintf(stderr, "pktfilt: diff: no packet in %s", file);
		break;
	case SEL_SEQ:
		fprintf(stderr, "pktfilt: diff: no packet with seq %" PRIu64 " in %s",
			p->sel.n, file);
		break;
	case SEL_JOURNEY:
		fprintf(stderr, "pktfilt: diff: no graph of %s in journey %"
			PRIu64 " in %s", p->sel.machine, p->sel.n, file);
		break;
	default:
		fprintf(stderr, "pktfilt: diff: no packet with id %" PRIu64 " in %s",
			p->sel.n, file);
	}
	if (p->stage)
		fprintf(stderr, " at stage %s", p->stage);
	fputc('\n', stderr);
}

/* The graph of @p whose stage is @stage, or NULL. */
static struct pf_packet *of_stage(const struct pick *p, const char *stage)
{
	size_t i;

	for (i = 0; i < p->nfound; i++)
		if (!strcmp(p->found[i]->stage, stage))
			return p->found[i];
	return NULL;
}

static void say_stages(const char *side, const struct pick *p)
{
	size_t i;

	fprintf(stderr, "%s id %" PRIu64 " has %zu graphs (", side, p->sel.n,
		p->nfound);
	for (i = 0; i < p->nfound; i++)
		fprintf(stderr, "%s%s", i ? ", " : "", p->found[i]->stage);
	fputs(")", stderr);
}

/* Which graphs of the two picks to compare: a graph of a stage both have. */
static void choose(const struct pick *pa, const struct pick *pb,
		   struct pf_packet **a, struct pf_packet **b)
{
	size_t i;

	*a = pa->found[0];
	*b = pb->found[0];
	if (pa->nfound == 1 && pb->nfound == 1)
		return;
	for (i = 0; i < pa->nfound; i++) {
		struct pf_packet *other = of_stage(pb, pa->found[i]->stage);

		if (other) {
			*a = pa->found[i];
			*b = other;
			break;
		}
	}
	fputs("pktfilt: diff: ", stderr);
	if (pa->nfound > 1)
		say_stages("A's", pa);
	if (pa->nfound > 1 && pb->nfound > 1)
		fputs(", ", stderr);
	if (pb->nfound > 1)
		say_stages("B's", pb);
	if (i < pa->nfound)
		fprintf(stderr, ": comparing the %s graphs (--stage chooses)\n",
			(*a)->stage);
	else
		fprintf(stderr, ": no stage in common, comparing A's %s with B's %s\n",
			(*a)->stage, (*b)->stage);
}

int pf_diff_run(const struct pf_cmd *cmd, int argc, char **argv)
{
	const char *format = NULL, *output = NULL, *top = NULL, *stage = NULL;
	const char *files[2] = { NULL, NULL };
	struct pick picks[2];
	struct pf_diff_opts o = { .format = PF_DIFF_TEXT, .top = 10 };
	struct pf_packet *a, *b;
	bool dashdash = false;
	int i, r, nfiles = 0, ret;
	struct sel s;
	uint64_t v;
	FILE *out;

	(void)cmd;
	memset(picks, 0, sizeof(picks));
	for (i = 0; i < argc; i++) {
		const char *arg = argv[i];

		if (!dashdash && arg[0] == '-' && arg[1]) {
			if (!strcmp(arg, "--")) {
				dashdash = true;
				continue;
			}
			r = take_opt("--format", NULL, argc, argv, &i, &format);
			if (!r)
				r = take_opt("--output", "-o", argc, argv, &i,
					     &output);
			if (!r)
				r = take_opt("--top", NULL, argc, argv, &i, &top);
			if (!r)
				r = take_opt("--stage", NULL, argc, argv, &i,
					     &stage);
			if (r == 1)
				continue;
			if (r)
				return r;
			return diff_usage("unknown option '%s'", arg);
		}
		if (parse_sel(arg, &s)) {
			/* A PACKET: of the last FILE, or B's of the only one. */
			if (!nfiles)
				return diff_usage("'%s': a FILE first", arg);
			if (nfiles == 1 && picks[0].sel.kind == SEL_FIRST &&
			    !picks[0].sel.text) {
				picks[0].sel = s;
			} else if (nfiles == 1 && !files[1]) {
				files[1] = files[0];
				nfiles = 2;
				picks[1].sel = s;
			} else if (nfiles == 2 && !picks[1].sel.text) {
				picks[1].sel = s;
			} else {
				return diff_usage("unexpected PACKET '%s'", arg);
			}
			continue;
		}
		if (!strncmp(arg, "id:", 3) || !strncmp(arg, "seq:", 4))
			return diff_usage("bad PACKET '%s': a number after id: or seq:",
					  arg);
		if (!strncmp(arg, "journey:", 8))
			return diff_usage("bad PACKET '%s': journey:N@MACHINE",
					  arg);
		if (nfiles == 2)
			return diff_usage("unexpected argument '%s' (two packets only)",
					  arg);
		files[nfiles++] = arg;
	}
	if (nfiles < 2)
		return diff_usage("%s", nfiles ? "one packet given: name two (FILE PACKET PACKET, or two FILEs)"
					       : "no FILE given");
	if (format && strcmp(format, "text") && strcmp(format, "json") &&
	    strcmp(format, "chrome") && strcmp(format, "html"))
		return diff_usage("unknown --format '%s': text, json, chrome or html",
				  format);
	if (format && !strcmp(format, "json"))
		o.format = PF_DIFF_JSON;
	if (format && !strcmp(format, "chrome"))
		o.format = PF_DIFF_CHROME;
	if (format && !strcmp(format, "html"))
		o.format = PF_DIFF_HTML;
	if (top) {
		if (!parse_u64(top, &v) || !v || v > PF_DIFF_MAX_TOP)
			return diff_usage("--top %s: a number 1-1000", top);
		o.top = (size_t)v;
	}
	if (stage && strcmp(stage, "l4") && strcmp(stage, "rx") &&
	    strcmp(stage, "tx"))
		return diff_usage("unknown --stage '%s': l4, rx or tx", stage);
	if (output && !output[0])
		return diff_usage("%s", "--output needs a file name");
	if (!strcmp(files[0], "-") && !strcmp(files[1], "-") &&
	    files[0] != files[1])
		return diff_usage("%s", "standard input given twice");
	picks[0].stage = picks[1].stage = stage;

	/* One reading per file: a file named twice is read once. */
	if (files[0] == files[1] || !strcmp(files[0], files[1])) {
		struct reading rd = { .picks = { &picks[0], &picks[1] },
				      .npicks = 2 };

		ret = read_file(files[0], &rd);
	} else {
		struct reading ra = { .picks = { &picks[0] }, .npicks = 1 };
		struct reading rb = { .picks = { &picks[1] }, .npicks = 1 };

		ret = read_file(files[0], &ra);
		if (!ret)
			ret = read_file(files[1], &rb);
	}
	if (!ret && (!picks[0].nfound || !picks[1].nfound)) {
		if (!picks[0].nfound)
			say_packet(&picks[0], files[0]);
		if (!picks[1].nfound)
			say_packet(&picks[1], files[1]);
		ret = EXIT_TROUBLE;
	}
	if (ret)
		goto out;
	if (picks[0].more || picks[1].more)
		fprintf(stderr, "pktfilt: diff: more than %d graphs of one id: the first %d kept\n",
			PF_DIFF_MAX_GRAPHS, PF_DIFF_MAX_GRAPHS);
	choose(&picks[0], &picks[1], &a, &b);
	o.name_a = files[0];
	o.name_b = files[1];
	out = output ? fopen(output, "w") : stdout;
	if (!out) {
		fprintf(stderr, "pktfilt: diff: cannot write %s: %s\n", output,
			strerror(errno));
		ret = EXIT_TROUBLE;
		goto out;
	}
	ret = pf_diff(out, a, b, &o);
	if (output && fclose(out) && ret >= 0)
		ret = errno ? -errno : -EIO;
	if (ret < 0) {
		fprintf(stderr, "pktfilt: diff: %s\n", strerror(-ret));
		ret = EXIT_TROUBLE;
	}
out:
	pick_free(&picks[0]);
	pick_free(&picks[1]);
	return ret;
}
