// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of "pktfilt diff" (tool/diff.c, tool/json.c) and of
 * report's --format chrome (tool/render_chrome.c), on real traces captured in
 * the VM (fixtures/diff/, see fixtures/capture --diff; and the parser's
 * fixtures) and on small hand-made graphs.
 *
 * The chrome output is checked against the Trace Event Format: one JSON
 * object whose traceEvents is a list of events, each with ph, ts, pid and
 * tid, every "X" with dur >= 0, and on each track (pid and tid) the
 * slices properly nested (a slice that starts inside another ends inside
 * it). If python3
 * is on the host, its JSON parser must read the output too.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "fgraph.h"
#include "render.h"
#include "json.h"
#include "diff.h"

/* fixtures/DIR/NAME.txt next to this binary; NULL if absent. */
static char *fixture(const char *dir, const char *name, size_t *len)
{
	char exe[PATH_MAX], path[PATH_MAX + 128], *slash, *buf = NULL;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *f;
	long size;

	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	snprintf(path, sizeof(path), "%s/fixtures/%s/%s.txt", exe, dir, name);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	size = fseek(f, 0, SEEK_END) ? -1 : ftell(f);
	if (size >= 0 && !fseek(f, 0, SEEK_SET)) {
		buf = malloc((size_t)size + 1);
		if (buf && fread(buf, 1, (size_t)size, f) == (size_t)size) {
			buf[size] = '\0';
			*len = (size_t)size;
		} else {
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
	return buf;
}

static struct pf_trace *fixture_trace(const char *dir, const char *name)
{
	size_t len = 0;
	char *s = fixture(dir, name, &len);
	struct pf_trace *t;

	if (!s)
		return NULL;
	t = pf_fgraph_parse_buf(s, len);
	free(s);
	return t;
}

static const struct pf_packet *by_seq(const struct pf_trace *t, uint64_t seq)
{
	size_t i;

	for (i = 0; t && i < t->npackets; i++)
		if (t->packets[i]->seq == seq)
			return t->packets[i];
	return NULL;
}

/* pf_diff() as JSON, parsed; *@ret its return. */
static struct pf_json *diff_json(const struct pf_packet *a,
				 const struct pf_packet *b, size_t top,
				 int *ret, char **text)
{
	struct pf_diff_opts o = { .format = PF_DIFF_JSON, .top = top,
				  .name_a = "A.trace", .name_b = "B.trace" };
	char *buf = NULL, err[256];
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	struct pf_json *j;

	if (!m)
		return NULL;
	*ret = pf_diff(m, a, b, &o);
	fclose(m);
	j = pf_json_parse(buf, len, 64, 1000000, err, sizeof(err));
	if (!j)
		fprintf(stderr, "# diff JSON does not parse: %s\n", err);
	if (text)
		*text = buf;
	else
		free(buf);
	return j;
}

/* pf_diff() as text, into a string; *@ret its return. */
static char *diff_text(const struct pf_packet *a, const struct pf_packet *b,
		       int *ret)
{
	struct pf_diff_opts o = { .format = PF_DIFF_TEXT, .top = 10,
				  .name_a = "A.trace", .name_b = "B.trace" };
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return NULL;
	*ret = pf_diff(m, a, b, &o);
	fclose(m);
	return buf;
}

static const struct pf_json *jget(const struct pf_json *o, const char *path)
{
	char key[64];
	const char *dot;

	while (o && (dot = strchr(path, '.'))) {
		snprintf(key, sizeof(key), "%.*s", (int)(dot - path), path);
		o = pf_json_get(o, key);
		path = dot + 1;
	}
	return o ? pf_json_get(o, path) : NULL;
}

static uint64_t jnum(const struct pf_json *o, const char *path)
{
	const struct pf_json *v = jget(o, path);

	return v && v->type == PF_J_NUM && v->is_u64 ? v->u64 : UINT64_MAX;
}

static const char *jstr(const struct pf_json *o, const char *path)
{
	const struct pf_json *v = jget(o, path);

	return v && v->type == PF_J_STR ? v->str : "";
}

static bool jtrue(const struct pf_json *o, const char *path)
{
	const struct pf_json *v = jget(o, path);

	return v && v->type == PF_J_BOOL && v->b;
}

/* Does a list of {"func": ...} (a place's lines, a divergence side) name @f? */
static bool list_has(const struct pf_json *list, const char *f)
{
	size_t i;

	for (i = 0; list && list->type == PF_J_ARR && i < list->n; i++)
		if (!strcmp(jstr(list->items[i], "func"), f))
			return true;
	return false;
}

static bool path_has(const struct pf_json *path, const char *f)
{
	size_t i;

	for (i = 0; path && path->type == PF_J_ARR && i < path->n; i++)
		if (path->items[i]->type == PF_J_STR &&
		    !strcmp(path->items[i]->str, f))
			return true;
	return false;
}

/* Is @f among the one-sided lines of @side ("a", "b") of any place? */
static bool places_have(const struct pf_json *d, const char *side,
			const char *f)
{
	const struct pf_json *pl = pf_json_get(d, "places");
	char key[16];
	size_t i;

	snprintf(key, sizeof(key), "%s.lines", side);
	for (i = 0; pl && i < pl->n; i++)
		if (list_has(jget(pl->items[i], key), f))
			return true;
	return false;
}

/* A delivered datagram against one to a port nobody listens on. */
TEST(nosock_fixture)
{
	struct pf_trace *t = fixture_trace("diff/6.12", "nosock");
	const struct pf_packet *a, *b;
	struct pf_json *d;
	char *text;
	int ret;

	ASSERT_NE(NULL, t);
	a = by_seq(t, 1);
	b = by_seq(t, 2);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(PF_FATE_CONSUMED, a->fate);
	ASSERT_EQ(PF_FATE_DROPPED, b->fate);
	d = diff_json(a, b, 10, &ret, NULL);
	ASSERT_NE(NULL, d);
	EXPECT_EQ(1, ret);
	EXPECT_FALSE(jtrue(d, "same"));
	EXPECT_FALSE(jtrue(d, "same_fate"));
	EXPECT_TRUE(jtrue(d, "same_stage"));
	EXPECT_STREQ("NO_SOCKET", jstr(d, "b.drop.reason"));
	EXPECT_STREQ("__udp4_lib_rcv", jstr(d, "b.drop.func"));
	EXPECT_STREQ("consumed", jstr(d, "a.fate"));
	EXPECT_STREQ("ip_rcv", jstr(d, "a.root"));
	/* The counts add up to each side's calls. */
	EXPECT_EQ(jnum(d, "a.calls"),
		  jnum(d, "calls.common") + jnum(d, "calls.only_a"));
	EXPECT_EQ(jnum(d, "b.calls"),
		  jnum(d, "calls.common") + jnum(d, "calls.only_b"));
	/* A went to the socket, B answered with an ICMP error
	 * (__icmp_send() itself is out of trace's default scope). */
	EXPECT_TRUE(places_have(d, "a", "udp_unicast_rcv_skb"));
	EXPECT_TRUE(places_have(d, "b", "icmpv4_global_allow"));
	EXPECT_NE(NULL, jget(d, "divergence.path"));
	EXPECT_TRUE(path_has(jget(d, "divergence.path"), "ip_rcv"));
	EXPECT_NE(0, pf_json_get(d, "durations")->n);
	pf_json_free(d);

	text = diff_text(a, b, &ret);
	ASSERT_NE(NULL, text);
	EXPECT_EQ(1, ret);
	EXPECT_NE(NULL, strstr(text, "fate differs: A consumed, B dropped: NO_SOCKET in __udp4_lib_rcv"));
	EXPECT_NE(NULL, strstr(text, "where they part, after "));
	EXPECT_NE(NULL, strstr(text, "     + icmpv4_global_allow() "));
	EXPECT_NE(NULL, strstr(text, "     - udp_unicast_rcv_skb() "));
	EXPECT_NE(NULL, strstr(text, "durations that differ the most"));
	EXPECT_EQ(NULL, strstr(text, "stage differs"));
	free(text);
	pf_trace_free(t);
}

/* Accepted against dropped by an nftables rule in the input chain. */
TEST(nft_fixture)
{
	struct pf_trace *t = fixture_trace("diff/6.12", "nft");
	const struct pf_json *div;
	struct pf_json *d;
	int ret;

	ASSERT_NE(NULL, t);
	ASSERT_EQ(2, t->npackets);
	d = diff_json(t->packets[0], t->packets[1], 10, &ret, NULL);
	ASSERT_NE(NULL, d);
	EXPECT_EQ(1, ret);
	EXPECT_STREQ("NETFILTER_DROP", jstr(d, "b.drop.reason"));
	/* They part inside the rule evaluation: B's verdict was drop. */
	div = pf_json_get(d, "divergence");
	ASSERT_NE(NULL, div);
	EXPECT_TRUE(path_has(pf_json_get(div, "path"), "nf_hook_slow"));
	EXPECT_TRUE(path_has(pf_json_get(div, "path"),
			     "nft_do_chain [nf_tables]"));
	EXPECT_TRUE(list_has(pf_json_get(div, "b"),
			     "nft_immediate_eval [nf_tables]"));
	/* A went on to UDP; B never reached it. */
	EXPECT_TRUE(places_have(d, "a", "ip_local_deliver_finish"));
	EXPECT_FALSE(places_have(d, "b", "udp_rcv"));
	pf_json_free(d);
	pf_trace_free(t);
}

/* The same flow twice: same calls but for a few, same fate. */
/*
 * The same calls, another nftables verdict (another rule dropped it, or
 * a policy accepted it): the packets differ, the text says how, JSON's
 * same_nft is false; through report's JSON the verdicts come back whole.
 */
#define NFT_PKT(seq, verdict) \
	" 0)               |  /* pktfilt_packet: seq=" #seq " cpu=0 proto=udp saddr=10.9.0.1 daddr=10.9.0.2 sport=4000 dport=7778 ifindex=2 netns=1 stage=rx id=" #seq " root=ip_rcv */\n" \
	" 0)               |  ip_rcv() {\n" \
	" 0)               |    nft_do_chain() {\n" \
	" 0)               |      /* pktfilt_nft: id=" #seq " family=inet table=jt chain=in target=- netns=1 " verdict " */\n" \
	" 0)   1.000 us    |      nft_meta_get_eval();\n" \
	" 0)   2.000 us    |    }\n" \
	" 0)   3.000 us    |  }\n"

TEST(nft_verdicts_differ)
{
	static const char trace[] =
		NFT_PKT(1, "handle=7 type=rule verdict=drop rule=udp dport 7778 drop")
		NFT_PKT(2, "handle=0 type=policy verdict=accept")
		NFT_PKT(3, "handle=7 type=rule verdict=drop rule=udp dport 7778 drop");
	struct pf_trace *t = pf_fgraph_parse_buf(trace, sizeof(trace) - 1);
	struct pf_packet *copy, *back;
	char *text, *js = NULL, err[256];
	struct pf_json *j;
	size_t len = 0;
	FILE *m;
	int ret;

	ASSERT_NE(NULL, t);
	ASSERT_EQ(3, t->npackets);
	text = diff_text(t->packets[0], t->packets[1], &ret);
	ASSERT_NE(NULL, text);
	EXPECT_EQ(1, ret);
	EXPECT_NE(NULL, strstr(text, "nftables verdicts differ:\n"
				     "    A: inet jt in handle 7: drop [udp dport 7778 drop]\n"
				     "    B: inet jt in policy: accept\n"));
	free(text);
	j = diff_json(t->packets[0], t->packets[2], 10, &ret, NULL);
	ASSERT_NE(NULL, j);
	EXPECT_EQ(0, ret);
	EXPECT_TRUE(jtrue(j, "same_nft"));
	pf_json_free(j);

	/* A copy, and report's JSON read back, are the same packet. */
	copy = pf_diff_packet_copy(t->packets[0]);
	ASSERT_NE(NULL, copy);
	m = open_memstream(&js, &len);
	ASSERT_NE(NULL, m);
	pf_render_json_packet(m, t->packets[0]);
	fclose(m);
	back = pf_diff_packet_json(js, len, err, sizeof(err));
	ASSERT_NE(NULL, back) TH_LOG("%s", err);
	ASSERT_EQ(1, back->nnft);
	EXPECT_STREQ("udp dport 7778 drop", back->nft[0].rule);
	EXPECT_EQ(7, back->nft[0].handle);
	text = diff_text(copy, back, &ret);
	EXPECT_EQ(0, ret);
	free(text);
	free(js);
	pf_diff_packet_free(back);
	pf_diff_packet_free(copy);
	pf_trace_free(t);
}

TEST(twice_fixture)
{
	struct pf_trace *t = fixture_trace("diff/6.12", "twice");
	struct pf_json *d;
	int ret;

	ASSERT_NE(NULL, t);
	ASSERT_EQ(2, t->npackets);
	d = diff_json(t->packets[0], t->packets[1], 10, &ret, NULL);
	ASSERT_NE(NULL, d);
	EXPECT_TRUE(jtrue(d, "same_fate"));
	EXPECT_TRUE(jtrue(d, "same_stage"));
	/* Mostly the same path: nine calls in ten in common at least. */
	EXPECT_GE(jnum(d, "calls.common") * 10,
		  9 * jnum(d, "a.calls"));
	EXPECT_EQ(jtrue(d, "same_tree") ? 0 : 1, ret);
	pf_json_free(d);

	/* A packet against itself: the same, exit 0, nothing listed. */
	d = diff_json(t->packets[0], t->packets[0], 10, &ret, NULL);
	ASSERT_NE(NULL, d);
	EXPECT_EQ(0, ret);
	EXPECT_TRUE(jtrue(d, "same"));
	EXPECT_TRUE(jtrue(d, "same_tree"));
	EXPECT_EQ(0, jnum(d, "calls.only_a"));
	EXPECT_EQ(0, jnum(d, "calls.places"));
	EXPECT_EQ(PF_J_NULL, pf_json_get(d, "divergence")->type);
	EXPECT_EQ(0, pf_json_get(d, "durations")->n);
	pf_json_free(d);
	pf_trace_free(t);
}

/* pf_diff() to /dev/null: its return. */
static int diff_quiet(const struct pf_packet *a, const struct pf_packet *b)
{
	struct pf_diff_opts o = { .format = PF_DIFF_TEXT, .top = 3,
				  .name_a = "a", .name_b = "b" };
	FILE *m = fopen("/dev/null", "w");
	int ret;

	if (!m)
		return -errno;
	ret = pf_diff(m, a, b, &o);
	fclose(m);
	return ret;
}

/* Identical trees, identical output: report --format json read back. */
TEST(json_round_trip)
{
	static const char *const names[][2] = {
		{ "diff/6.12", "nosock" }, { "diff/6.12", "nft" },
		{ "diff/6.12", "twice" }, { "stages", "rx-tx" },
		{ "6.12", "udp-count3" }, { "6.1", "tcp6" },
		{ "6.12", "lost" },
	};
	size_t k, i;

	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		struct pf_trace *t = fixture_trace(names[k][0], names[k][1]);

		ASSERT_NE(NULL, t);
		for (i = 0; i < t->npackets; i++) {
			const struct pf_packet *pkt = t->packets[i];
			struct pf_packet *back, *copy;
			char *buf = NULL, *again = NULL, err[256];
			size_t len = 0, len2 = 0;
			FILE *m = open_memstream(&buf, &len);
			int ret;

			ASSERT_NE(NULL, m);
			ASSERT_EQ(0, pf_render_json_packet(m, pkt));
			fclose(m);
			back = pf_diff_packet_json(buf, len, err, sizeof(err));
			if (!back)
				TH_LOG("%s/%s packet %zu: %s", names[k][0],
				       names[k][1], i, err);
			ASSERT_NE(NULL, back);
			/* The same JSON again from what was read. */
			m = open_memstream(&again, &len2);
			ASSERT_NE(NULL, m);
			back->incomplete = pkt->incomplete;
			ASSERT_EQ(0, pf_render_json_packet(m, back));
			fclose(m);
			EXPECT_STREQ(buf, again);
			/* And a diff of the two says: the same. */
			copy = pf_diff_packet_copy(pkt);
			ASSERT_NE(NULL, copy);
			ret = diff_quiet(copy, back);
			EXPECT_EQ(0, ret);
			pf_diff_packet_free(back);
			pf_diff_packet_free(copy);
			free(buf);
			free(again);
		}
		pf_trace_free(t);
	}
}

/*
 * Return values (trace --retval): the same calls, but f returned -22 in B
 * where it returned 0 in A. A difference, in text, JSON and the exit
 * status; read back from report's JSON too. A trace without return values
 * compares equal to one with.
 */
TEST(return_values)
{
#define RV_EV(seq) " 0)               |  /* pktfilt_packet: seq=" #seq " cpu=0 proto=udp saddr=10.9.0.1 daddr=10.9.0.2 sport=4000 dport=9000 ifindex=2 netns=1 */\n"
	static const char trace[] =
		RV_EV(1)
		" 0)               |  udp_rcv(skb=0x1) {\n"
		" 0)   1.000 us    |    f(a=1); /* = 0x0 */\n"
		" 0)   1.000 us    |    g(); /* = 0xffff888000001000 */\n"
		" 0)   3.000 us    |  } /* udp_rcv = 0x0 */\n"
		RV_EV(2)
		" 0)               |  udp_rcv(skb=0x2) {\n"
		" 0)   1.000 us    |    f(a=2); /* = -22 */\n"
		" 0)   1.000 us    |    g(); /* = 0xffff888000001000 */\n"
		" 0)   3.000 us    |  } /* udp_rcv = 0x0 */\n"
		RV_EV(3)
		" 0)               |  udp_rcv() {\n"
		" 0)   1.000 us    |    f();\n"
		" 0)   1.000 us    |    g();\n"
		" 0)   3.000 us    |  }\n";
	struct pf_trace *t = pf_fgraph_parse_buf(trace, strlen(trace));
	const struct pf_packet *a, *b, *c;
	struct pf_packet *back, *copy;
	const struct pf_json *calls;
	struct pf_json *j;
	char *text = NULL, *buf = NULL, err[256];
	size_t len = 0;
	FILE *m;
	int ret;

	ASSERT_NE(NULL, t);
	a = by_seq(t, 1);
	b = by_seq(t, 2);
	c = by_seq(t, 3);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	ASSERT_NE(NULL, c);
	j = diff_json(a, b, 10, &ret, NULL);
	ASSERT_NE(NULL, j);
	EXPECT_EQ(1, ret);
	EXPECT_FALSE(jtrue(j, "same"));
	EXPECT_TRUE(jtrue(j, "same_tree"));
	EXPECT_FALSE(jtrue(j, "same_returns"));
	EXPECT_EQ(1, jnum(j, "returns.differ"));
	calls = jget(j, "returns.calls");
	ASSERT_NE(NULL, calls);
	ASSERT_EQ(1, calls->n);
	EXPECT_STREQ("f", jstr(calls->items[0], "func"));
	EXPECT_STREQ("0x0", jstr(calls->items[0], "a"));
	EXPECT_STREQ("-22", jstr(calls->items[0], "b"));
	EXPECT_TRUE(path_has(jget(calls->items[0], "path"), "udp_rcv"));
	pf_json_free(j);
	text = diff_text(a, b, &ret);
	ASSERT_NE(NULL, text);
	EXPECT_EQ(1, ret);
	EXPECT_NE(NULL, strstr(text, "\nreturn values that differ (A -> B):\n  f  0x0 -> -22  in udp_rcv\n"));
	free(text);

	/* The same packet: the same. Without return values: the same. */
	EXPECT_EQ(0, diff_quiet(a, a));
	EXPECT_EQ(0, diff_quiet(a, c));
	EXPECT_EQ(0, diff_quiet(c, b));

	/* B through report's JSON: "ret" read back, still differs from A. */
	m = open_memstream(&buf, &len);
	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, pf_render_json_packet(m, b));
	fclose(m);
	EXPECT_NE(NULL, strstr(buf, "\"ret\":\"-22\""));
	back = pf_diff_packet_json(buf, len, err, sizeof(err));
	ASSERT_NE(NULL, back);
	EXPECT_STREQ("-22", back->graph->children[0]->ret);
	/* Arguments are not read: diff does not compare them. */
	EXPECT_EQ(NULL, back->graph->args);
	copy = pf_diff_packet_copy(b);
	ASSERT_NE(NULL, copy);
	EXPECT_STREQ("-22", copy->graph->children[0]->ret);
	EXPECT_EQ(0, diff_quiet(copy, back));
	EXPECT_EQ(1, diff_quiet(a, back));
	pf_diff_packet_free(back);
	pf_diff_packet_free(copy);
	free(buf);

	/* A "ret" that is no return value is refused. */
	{
		static const char *const bad[] = {
			"{\"seq\":1,\"graph\":{\"func\":\"f\",\"ret\":5}}",
			"{\"seq\":1,\"graph\":{\"func\":\"f\",\"ret\":\"\"}}",
			"{\"seq\":1,\"graph\":{\"func\":\"f\",\"ret\":\"0x1234567890123456789012345\"}}",
		};
		size_t i;

		for (i = 0; i < 3; i++) {
			back = pf_diff_packet_json(bad[i], strlen(bad[i]), err,
						   sizeof(err));
			EXPECT_EQ(NULL, back);
			if (!back) {
				EXPECT_NE(NULL, strstr(err, "\"ret\" of f"));
			}
			pf_diff_packet_free(back);
		}
	}
	pf_trace_free(t);
#undef RV_EV
}

/* --- hand-made graphs ----------------------------------------------------------- */

/*
 * A graph from "f(g(h) i) j": a name, then its callees in parentheses,
 * each call lasting 1000 ns times the number of calls in its subtree.
 */
static struct pf_node *mk(const char **s, uint64_t *calls)
{
	struct pf_node *n = calloc(1, sizeof(*n));
	size_t len = strcspn(*s, " ()");
	uint64_t mine = 1;

	n->func = strndup(*s, len);
	n->complete = true;
	*s += len;
	if (**s == '(') {
		++*s;
		while (**s && **s != ')') {
			uint64_t c = 0;

			if (**s == ' ') {
				++*s;
				continue;
			}
			n->children = realloc(n->children, (n->nchildren + 1) *
							   sizeof(*n->children));
			n->children[n->nchildren++] = mk(s, &c);
			mine += c;
		}
		if (**s == ')')
			++*s;
	}
	n->duration_ns = 1000 * mine;
	*calls = mine;
	return n;
}

static struct pf_packet *mkpkt(const char *graph)
{
	struct pf_packet *p = calloc(1, sizeof(*p));
	uint64_t calls;

	strcpy(p->stage, "rx");
	strcpy(p->proto, "udp");
	p->complete = true;
	p->graph = mk(&graph, &calls);
	return p;
}

TEST(alignment)
{
	struct pf_packet *a = mkpkt("r(a b(x y) c d)");
	struct pf_packet *b = mkpkt("r(a q b(x z y) d)");
	const struct pf_json *pl, *div;
	struct pf_json *d;
	int ret;

	d = diff_json(a, b, 10, &ret, NULL);
	ASSERT_NE(NULL, d);
	EXPECT_EQ(1, ret);
	/* r a b x y d in common; c only in A; q and z only in B. */
	EXPECT_EQ(6, jnum(d, "calls.common"));
	EXPECT_EQ(1, jnum(d, "calls.only_a"));
	EXPECT_EQ(2, jnum(d, "calls.only_b"));
	EXPECT_EQ(3, jnum(d, "calls.places"));
	/* The first: q, after a, under r. */
	div = pf_json_get(d, "divergence");
	ASSERT_NE(NULL, div);
	EXPECT_STREQ("a", jstr(div, "after"));
	EXPECT_EQ(1, pf_json_get(div, "path")->n);
	EXPECT_EQ(0, pf_json_get(div, "a")->n);
	EXPECT_TRUE(list_has(pf_json_get(div, "b"), "q"));
	EXPECT_EQ(2, jnum(div, "common_before"));	/* r, a */
	/* Then z in b after x, then c after b. */
	pl = pf_json_get(d, "places");
	ASSERT_EQ(3, pl->n);
	EXPECT_STREQ("x", jstr(pl->items[1], "after"));
	EXPECT_EQ(2, pf_json_get(pl->items[1], "path")->n);
	EXPECT_TRUE(list_has(jget(pl->items[1], "b.lines"), "z"));
	EXPECT_STREQ("b", jstr(pl->items[2], "after"));
	EXPECT_TRUE(list_has(jget(pl->items[2], "a.lines"), "c"));
	/* --top 1: one place kept, all counted. */
	pf_json_free(d);
	d = diff_json(a, b, 1, &ret, NULL);
	ASSERT_NE(NULL, d);
	EXPECT_EQ(1, pf_json_get(d, "places")->n);
	EXPECT_EQ(3, jnum(d, "calls.places"));
	EXPECT_EQ(1, pf_json_get(d, "durations")->n);
	pf_json_free(d);
	pf_diff_packet_free(a);
	pf_diff_packet_free(b);
}

TEST(different_roots_and_no_graph)
{
	struct pf_packet *a = mkpkt("ip_rcv(x)");
	struct pf_packet *b = mkpkt("ipv6_rcv(x)");
	struct pf_json *d;
	int ret;

	d = diff_json(a, b, 10, &ret, NULL);
	ASSERT_NE(NULL, d);
	EXPECT_EQ(1, ret);
	EXPECT_EQ(0, jnum(d, "calls.common"));
	EXPECT_EQ(2, jnum(d, "calls.only_a"));
	EXPECT_EQ(0, pf_json_get(jget(d, "divergence"), "path")->n);
	pf_json_free(d);
	/* No graph on one side. */
	pf_diff_packet_free(b);
	b = mkpkt("ip_rcv");
	free(b->graph->func);
	free(b->graph);
	b->graph = NULL;
	d = diff_json(a, b, 10, &ret, NULL);
	ASSERT_NE(NULL, d);
	EXPECT_EQ(1, ret);
	EXPECT_EQ(PF_J_NULL, pf_json_get(d, "b")->type == PF_J_OBJ ?
			     jget(d, "b.root")->type : PF_J_BOOL);
	pf_json_free(d);
	/* Same tree, other stage or fate: they differ. */
	pf_diff_packet_free(b);
	b = mkpkt("ip_rcv(x)");
	strcpy(b->stage, "tx");
	d = diff_json(a, b, 10, &ret, NULL);
	ASSERT_NE(NULL, d);
	EXPECT_EQ(1, ret);
	EXPECT_TRUE(jtrue(d, "same_tree"));
	EXPECT_FALSE(jtrue(d, "same_stage"));
	pf_json_free(d);
	strcpy(b->stage, "rx");
	b->fate = PF_FATE_DROPPED;
	strcpy(b->drop_reason, "NO_SOCKET");
	d = diff_json(a, b, 10, &ret, NULL);
	ASSERT_NE(NULL, d);
	EXPECT_EQ(1, ret);
	EXPECT_FALSE(jtrue(d, "same_fate"));
	pf_json_free(d);
	pf_diff_packet_free(a);
	pf_diff_packet_free(b);
}

/* Callee lists too long for the table: the greedy alignment, quickly. */
TEST(long_callee_lists)
{
	const size_t n = 3000;
	struct pf_packet *a = mkpkt("r"), *b = mkpkt("r");
	struct pf_json *d;
	size_t i;
	int ret;

	a->graph->children = calloc(n, sizeof(struct pf_node *));
	b->graph->children = calloc(n + 1, sizeof(struct pf_node *));
	for (i = 0; i < n; i++) {
		char name[32];
		const char *s = name;
		uint64_t c;

		snprintf(name, sizeof(name), "f%zu", i % 7);
		a->graph->children[a->graph->nchildren++] = mk(&s, &c);
		/* B: the same, with one call more in the middle. */
		if (i == n / 2) {
			s = "extra";
			b->graph->children[b->graph->nchildren++] = mk(&s, &c);
		}
		s = name;
		b->graph->children[b->graph->nchildren++] = mk(&s, &c);
	}
	/* Different first and last calls: no common prefix or suffix. */
	free(b->graph->children[0]->func);
	b->graph->children[0]->func = strdup("first");
	free(b->graph->children[n]->func);
	b->graph->children[n]->func = strdup("last");
	d = diff_json(a, b, 10, &ret, NULL);
	ASSERT_NE(NULL, d);
	EXPECT_EQ(1, ret);
	EXPECT_EQ(jnum(d, "a.calls"),
		  jnum(d, "calls.common") + jnum(d, "calls.only_a"));
	EXPECT_EQ(jnum(d, "b.calls"),
		  jnum(d, "calls.common") + jnum(d, "calls.only_b"));
	/* All but the first and last calls of A are aligned. */
	EXPECT_GE(jnum(d, "calls.common"), n - 1);
	pf_json_free(d);
	pf_diff_packet_free(a);
	pf_diff_packet_free(b);
}

TEST(json_reader_refuses)
{
	static const char *const bad[] = {
		"", "{", "[1]", "{\"seq\":-1}", "{\"seq\":1.5}",
		"{\"seq\":\"1\"}", "{\"graph\":{\"duration_ns\":1}}",
		"{\"graph\":{\"func\":\"a\",\"children\":{}}}",
		"{\"graph\":{\"func\":\"a\",\"duration_ns\":\"x\"}}",
		"{\"fate\":\"maybe\"}", "{\"sport\":65536}",
		"{\"proto\":\"\\ud800\"}", "{\"proto\":\"\\u0000\"}",
		"{\"a\":1,}", "{\"a\":01}", "{\"a\":1} x", "{\"a\":\"\x01\"}",
		"{\"a\":\"\xff\"}", "{\"a\":tru}", "{\"a\":\"\\q\"}",
	};
	char err[256], *deep;
	struct pf_packet *p;
	size_t i, k;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		p = pf_diff_packet_json(bad[i], strlen(bad[i]), err,
					sizeof(err));
		if (p)
			TH_LOG("accepted: %s", bad[i]);
		EXPECT_EQ(NULL, p);
		EXPECT_NE(0, strlen(err));
		pf_diff_packet_free(p);
	}
	/* A graph one call deeper than the reader keeps. */
	deep = malloc(64 * (PF_FGRAPH_MAX_DEPTH + 2) + 64);
	ASSERT_NE(NULL, deep);
	strcpy(deep, "{\"graph\":");
	for (k = 0; k <= PF_FGRAPH_MAX_DEPTH + 1; k++)
		strcat(deep, "{\"func\":\"f\",\"children\":[");
	for (k = 0; k <= PF_FGRAPH_MAX_DEPTH + 1; k++)
		strcat(deep, "]}");
	strcat(deep, "}");
	p = pf_diff_packet_json(deep, strlen(deep), err, sizeof(err));
	EXPECT_EQ(NULL, p);
	pf_diff_packet_free(p);
	free(deep);
	/* Escapes and missing members are fine. */
	p = pf_diff_packet_json("{\"seq\":7,\"proto\":\"\\u0075dp\",\"graph\":"
				"{\"func\":\"a\\ud83d\\ude00\",\"duration_ns\":null}}",
				strlen("{\"seq\":7,\"proto\":\"\\u0075dp\",\"graph\":"
				       "{\"func\":\"a\\ud83d\\ude00\",\"duration_ns\":null}}"),
				err, sizeof(err));
	ASSERT_NE(NULL, p);
	EXPECT_EQ(7, p->seq);
	EXPECT_EQ(7, p->id);
	EXPECT_STREQ("udp", p->proto);
	EXPECT_STREQ("l4", p->stage);
	EXPECT_STREQ("a\xf0\x9f\x98\x80", p->graph->func);
	EXPECT_FALSE(p->graph->complete);
	pf_diff_packet_free(p);
}

/*
 * pktfilt trace's JSON ends each record with the filter that traced it
 * (report's with null): the reader takes both, and any member it does not
 * know, and the packet is the same as without.
 */
TEST(json_reader_filter)
{
	static const char *const lines[] = {
		"{\"seq\":3,\"graph\":{\"func\":\"ip_rcv\",\"duration_ns\":5,\"children\":[]},\"filter\":\"--proto udp --count 1 --at rx 'udp and not port 53'\"}",
		"{\"seq\":3,\"graph\":{\"func\":\"ip_rcv\",\"duration_ns\":5,\"children\":[]},\"filter\":null}",
		"{\"seq\":3,\"filter\":\"--count 0 'it'\\\\''s \\\"x\\\"'\",\"graph\":{\"func\":\"ip_rcv\",\"duration_ns\":5,\"children\":[]}}",
		"{\"seq\":3,\"graph\":{\"func\":\"ip_rcv\",\"duration_ns\":5,\"children\":[]},\"later\":{\"a\":[1,true,null]}}",
	};
	static const char odd[] = "{\"seq\":4,\"filter\":7}";
	struct pf_render_opts opts = {
		.filter = "--proto udp --daddr 10.9.0.2 --count 2 --at rx 'udp port 9000 or udp port 7777'",
	};
	struct pf_trace *t = fixture_trace("diff/6.12", "nosock");
	char err[256], *buf = NULL, *line, *nl;
	struct pf_packet *p, *copy;
	struct pf_render *r;
	size_t i, len = 0, n = 0;
	FILE *m;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		p = pf_diff_packet_json(lines[i], strlen(lines[i]), err,
					sizeof(err));
		if (!p)
			TH_LOG("refused: %s: %s", lines[i], err);
		ASSERT_NE(NULL, p);
		EXPECT_EQ(3, p->seq);
		ASSERT_NE(NULL, p->graph);
		EXPECT_STREQ("ip_rcv", p->graph->func);
		EXPECT_EQ(5, p->graph->duration_ns);
		pf_diff_packet_free(p);
	}
	/* A filter that is not a string or null is still only ignored. */
	p = pf_diff_packet_json(odd, sizeof(odd) - 1, err, sizeof(err));
	ASSERT_NE(NULL, p);
	EXPECT_EQ(4, p->seq);
	pf_diff_packet_free(p);

	/* Each record of a trace's JSON reads back as its packet. */
	ASSERT_NE(NULL, t);
	m = open_memstream(&buf, &len);
	ASSERT_NE(NULL, m);
	r = pf_render_new(PF_FORMAT_JSON, m, &opts);
	ASSERT_NE(NULL, r);
	for (i = 0; i < t->npackets; i++)
		ASSERT_EQ(0, pf_render_packet(r, t->packets[i]));
	ASSERT_EQ(0, pf_render_end(r));
	fclose(m);
	for (line = buf; *line; line = nl + 1, n++) {
		nl = strchr(line, '\n');
		ASSERT_NE(NULL, nl);
		ASSERT_LT(n, t->npackets);
		EXPECT_NE(NULL, strstr(line, ",\"filter\":\"--proto udp --daddr 10.9.0.2 --count 2 --at rx 'udp port 9000 or udp port 7777'\"}\n"));
		p = pf_diff_packet_json(line, (size_t)(nl - line), err,
					sizeof(err));
		if (!p)
			TH_LOG("record %zu: %s", n, err);
		ASSERT_NE(NULL, p);
		copy = pf_diff_packet_copy(t->packets[n]);
		ASSERT_NE(NULL, copy);
		EXPECT_EQ(copy->seq, p->seq);
		EXPECT_EQ(0, diff_quiet(copy, p));
		pf_diff_packet_free(copy);
		pf_diff_packet_free(p);
	}
	EXPECT_EQ(t->npackets, n);
	free(buf);
	pf_trace_free(t);
}

/* --- --format chrome --------------------------------------------------------------- */

struct slice {
	int64_t ts, end;	/* ns */
	uint64_t pid, tid;
};

static int slice_cmp(const void *x, const void *y)
{
	const struct slice *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	/* The longer (the caller) first. */
	return a->end > b->end ? -1 : a->end < b->end;
}

static int64_t ns_of(double us)
{
	return (int64_t)llround(us * 1000.0);
}

/*
 * Check @doc against the format; 0 if it holds, else -1 with why on
 * stderr. *@roots counts the packets' root slices.
 */
static int chrome_check(const char *doc, size_t len, size_t *roots)
{
	char err[256];
	struct pf_json *j = pf_json_parse(doc, len, 64, 10000000, err,
					  sizeof(err));
	const struct pf_json *ev;
	struct slice *s = NULL, *stack[1100];
	size_t i, n = 0, sp = 0;
	int ret = -1;

	*roots = 0;
	if (!j) {
		fprintf(stderr, "# chrome: not JSON: %s\n", err);
		return -1;
	}
	ev = pf_json_get(j, "traceEvents");
	if (j->type != PF_J_OBJ || !ev || ev->type != PF_J_ARR) {
		fprintf(stderr, "# chrome: no traceEvents list\n");
		goto out;
	}
	s = calloc(ev->n + 1, sizeof(*s));
	for (i = 0; i < ev->n; i++) {
		const struct pf_json *e = ev->items[i];
		const struct pf_json *ph = pf_json_get(e, "ph");
		const struct pf_json *ts = pf_json_get(e, "ts");
		const struct pf_json *pid = pf_json_get(e, "pid");
		const struct pf_json *tid = pf_json_get(e, "tid");
		const struct pf_json *dur = pf_json_get(e, "dur");
		const struct pf_json *name = pf_json_get(e, "name");

		if (e->type != PF_J_OBJ || !ph || ph->type != PF_J_STR ||
		    !ts || ts->type != PF_J_NUM || !pid || !pid->is_u64 ||
		    !tid || !tid->is_u64 || !name || name->type != PF_J_STR) {
			fprintf(stderr, "# chrome: event %zu lacks ph, ts, pid, tid or name\n",
				i);
			goto out;
		}
		if (!strcmp(ph->str, "M"))
			continue;
		if (strcmp(ph->str, "X") && strcmp(ph->str, "i")) {
			fprintf(stderr, "# chrome: event %zu: ph %s\n", i,
				ph->str);
			goto out;
		}
		if (!strcmp(ph->str, "i"))
			continue;
		if (!dur || dur->type != PF_J_NUM || dur->num < 0 ||
		    ts->num < 0) {
			fprintf(stderr, "# chrome: X event %zu: dur < 0 or none\n",
				i);
			goto out;
		}
		if (!strcmp(jstr(e, "cat"), "packet")) {
			const struct pf_json *args = pf_json_get(e, "args");

			if (jnum(args, "seq") == UINT64_MAX ||
			    jnum(args, "id") == UINT64_MAX ||
			    !*jstr(args, "stage") || !*jstr(args, "proto")) {
				fprintf(stderr, "# chrome: root %zu: args lack seq, id, stage or proto\n",
					i);
				goto out;
			}
			++*roots;
		}
		s[n].ts = ns_of(ts->num);
		s[n].end = s[n].ts + ns_of(dur->num);
		s[n].pid = pid->u64;
		s[n].tid = tid->u64;
		n++;
	}
	/* Each track: slices nested, or one after the other. */
	qsort(s, n, sizeof(*s), slice_cmp);
	for (i = 0; i < n; i++) {
		while (sp && (stack[sp - 1]->pid != s[i].pid ||
			      stack[sp - 1]->tid != s[i].tid ||
			      stack[sp - 1]->end <= s[i].ts))
			sp--;
		if (sp && s[i].end > stack[sp - 1]->end) {
			fprintf(stderr, "# chrome: pid %" PRIu64 " tid %" PRIu64 ": [%" PRId64 ", %" PRId64
				") overlaps [%" PRId64 ", %" PRId64 ") without nesting\n",
				s[i].pid, s[i].tid, s[i].ts, s[i].end, stack[sp - 1]->ts,
				stack[sp - 1]->end);
			goto out;
		}
		if (sp == sizeof(stack) / sizeof(stack[0])) {
			fprintf(stderr, "# chrome: nested too deep\n");
			goto out;
		}
		stack[sp++] = &s[i];
	}
	ret = 0;
out:
	free(s);
	pf_json_free(j);
	return ret;
}

static char *chrome_of(const struct pf_trace *t, size_t *len)
{
	char *buf = NULL;
	FILE *m = open_memstream(&buf, len);

	if (!m)
		return NULL;
	if (pf_render_chrome(m, t)) {
		fclose(m);
		free(buf);
		return NULL;
	}
	fclose(m);
	return buf;
}

/*
 * python3's json module, if there is a python3: 1 parses, 0 not, -1 none.
 * Debian's own first: a pyenv shim in PATH takes seconds a start on a
 * loaded machine, and eleven starts overran the harness's 30 s timeout.
 */
static int python_parses(const char *doc, size_t len)
{
	char path[] = "/tmp/pfchromeXXXXXX", cmd[256];
	const char *py = "/usr/bin/python3";
	int fd, st;
	FILE *f;

	if (access(py, X_OK)) {
		if (system("command -v python3 >/dev/null 2>&1"))
			return -1;
		py = "python3";
	}
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(path);
		return -1;
	}
	fwrite(doc, 1, len, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s -m json.tool %s >/dev/null", py, path);
	st = system(cmd);
	unlink(path);
	return st == 0;
}

TEST(chrome_fixtures)
{
	static const char *const names[][2] = {
		{ "diff/6.12", "nosock" }, { "diff/6.12", "nft" },
		{ "diff/6.12", "twice" }, { "diff/6.12", "abstime" },
		{ "stages", "rx-tx" }, { "6.12", "cpus2" }, { "6.1", "cpus2" },
		{ "6.12", "irqs" }, { "6.12", "lost" },
		{ "6.1", "udp-count3-truncated" }, { "6.1", "icmpv6" },
	};
	size_t k, roots;
	int py = -2;

	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		struct pf_trace *t = fixture_trace(names[k][0], names[k][1]);
		size_t len = 0, graphs = 0, i;
		char *doc;

		ASSERT_NE(NULL, t);
		doc = chrome_of(t, &len);
		ASSERT_NE(NULL, doc);
		if (chrome_check(doc, len, &roots))
			TH_LOG("%s/%s: not valid", names[k][0], names[k][1]);
		EXPECT_EQ(0, chrome_check(doc, len, &roots));
		for (i = 0; i < t->npackets; i++)
			graphs += t->packets[i]->graph != NULL;
		EXPECT_EQ(graphs, roots);
		if (k < 4 || py == 1) {
			py = python_parses(doc, len);
			if (py >= 0)
				EXPECT_EQ(1, py);
		}
		free(doc);
		pf_trace_free(t);
	}
	if (py < 0)
		TH_LOG("no python3: its JSON parser not tried");
}

/* funcgraph-abstime: the root and its callees start at their timestamps. */
TEST(chrome_abstime)
{
	struct pf_trace *t = fixture_trace("diff/6.12", "abstime");
	struct pf_json *j;
	const struct pf_json *ev;
	char *doc, err[256];
	size_t len = 0, i, found = 0;

	ASSERT_NE(NULL, t);
	ASSERT_EQ(1, t->npackets);
	ASSERT_NE(NULL, t->packets[0]->graph);
	EXPECT_TRUE(t->packets[0]->graph->has_start);
	/* "59.538705 |   0)  |  udp_rcv() {" */
	EXPECT_EQ(59538705000ULL, t->packets[0]->graph->start_ns);
	doc = chrome_of(t, &len);
	ASSERT_NE(NULL, doc);
	j = pf_json_parse(doc, len, 64, 1000000, err, sizeof(err));
	ASSERT_NE(NULL, j);
	ev = pf_json_get(j, "traceEvents");
	for (i = 0; i < ev->n; i++) {
		const struct pf_json *e = ev->items[i];

		if (!strcmp(jstr(e, "name"), "udp_rcv")) {
			EXPECT_EQ(59538705000LL,
				  ns_of(pf_json_get(e, "ts")->num));
			found++;
		}
		/* "59.538750 | 0) | udp4_lib_lookup2() {", the second one */
		if (!strcmp(jstr(e, "name"), "udp4_lib_lookup2") &&
		    ns_of(pf_json_get(e, "ts")->num) == 59538750000LL)
			found++;
	}
	EXPECT_EQ(2, found);
	pf_json_free(j);
	free(doc);
	pf_trace_free(t);
}

/* Without timestamps: callees one after the other from the caller's start. */
TEST(chrome_reconstructed)
{
	static const char trace[] =
		" 0)               |  /* pktfilt_packet: seq=1 cpu=0 proto=udp saddr=10.9.0.1 daddr=10.9.0.2 sport=1 dport=2 ifindex=2 netns=1 stage=rx id=1 root=ip_rcv */\n"
		" 0)               |  ip_rcv() {\n"
		" 0)   1.000 us    |    a();\n"
		" 0)   2.500 us    |    b();\n"
		" 0)   3.000 us    |  }\n"
		" 1)               |  /* pktfilt_packet: seq=2 cpu=1 proto=udp saddr=10.9.0.1 daddr=10.9.0.2 sport=1 dport=2 ifindex=2 netns=1 stage=rx id=2 root=ip_rcv */\n"
		" 1)               |  ip_rcv() {\n"
		" 1)               |    c() {\n";
	static const char *const want =
		"{\"name\":\"a\",\"cat\":\"call\",\"ph\":\"X\",\"ts\":0.000,\"dur\":1.000,\"pid\":1,\"tid\":0},\n"
		"{\"name\":\"b\",\"cat\":\"call\",\"ph\":\"X\",\"ts\":1.000,\"dur\":2.000,\"pid\":1,\"tid\":0,\"args\":{\"duration_ns\":2500}},\n"
		"{\"name\":\"ip_rcv\",\"cat\":\"packet\",\"ph\":\"X\",\"ts\":0.000,\"dur\":3.000,\"pid\":1,\"tid\":0,\"args\":{\"seq\":1,";
	struct pf_trace *t = pf_fgraph_parse_buf(trace, sizeof(trace) - 1);
	size_t len = 0, roots;
	char *doc;

	ASSERT_NE(NULL, t);
	doc = chrome_of(t, &len);
	ASSERT_NE(NULL, doc);
	EXPECT_NE(NULL, strstr(doc, want));
	/* The second packet 10 us after the first, on CPU 1; its calls
	 * without a return last as long as their callees: 0. */
	EXPECT_NE(NULL, strstr(doc, "{\"name\":\"c\",\"cat\":\"call\",\"ph\":\"X\",\"ts\":13.000,\"dur\":0.000,\"pid\":1,\"tid\":1,\"args\":{\"returned\":false}}"));
	EXPECT_NE(NULL, strstr(doc, "\"thread_name\",\"ph\":\"M\",\"ts\":0,\"pid\":1,\"tid\":1,\"args\":{\"name\":\"CPU 1\"}"));
	EXPECT_NE(NULL, strstr(doc, "\"complete\":false,\"incomplete\":"));
	EXPECT_EQ(0, chrome_check(doc, len, &roots));
	EXPECT_EQ(2, roots);
	free(doc);
	pf_trace_free(t);

	/* No packet at all: still a valid document. */
	t = pf_fgraph_parse_buf("", 0);
	ASSERT_NE(NULL, t);
	doc = chrome_of(t, &len);
	ASSERT_NE(NULL, doc);
	EXPECT_EQ(0, chrome_check(doc, len, &roots));
	EXPECT_EQ(0, roots);
	free(doc);
	pf_trace_free(t);
}

/*
 * pf_diff() --format html: the aligned trees are the data of the page,
 * [0, then OP, NAME, A_NS, B_NS, CALLEES per row]: as many rows of each
 * kind as the walk counts calls in both, only in A, only in B.
 */
TEST(html_of_diff)
{
	struct pf_trace *t = fixture_trace("diff/6.12", "nosock");
	struct pf_diff_opts o = { .format = PF_DIFF_HTML, .top = 10,
				  .name_a = "</script><b>a.trace",
				  .name_b = "b.trace" };
	const char *tag = "<script type=\"application/json\" id=\"pf-diff\">";
	char *buf = NULL, *start, *end, err[256];
	size_t len = 0, i, ops[3] = { 0, 0, 0 };
	FILE *m = open_memstream(&buf, &len);
	const struct pf_json *rows;
	struct pf_json *j;
	int ret;

	ASSERT_NE(NULL, t);
	ASSERT_NE(NULL, m);
	ret = pf_diff(m, by_seq(t, 1), by_seq(t, 2), &o);
	fclose(m);
	EXPECT_EQ(1, ret);
	ASSERT_NE(NULL, buf);
	EXPECT_EQ(0, strncmp(buf, "<!DOCTYPE html>", 15));
	EXPECT_EQ(NULL, strstr(buf, "<b>a.trace"));
	start = strstr(buf, tag);
	ASSERT_NE(NULL, start);
	start += strlen(tag);
	end = strstr(start, "</script>");
	ASSERT_NE(NULL, end);
	j = pf_json_parse(start, (size_t)(end - start), 64, 1000000, err,
			  sizeof(err));
	ASSERT_NE(NULL, j) TH_LOG("%s", err);
	EXPECT_STREQ("</script><b>a.trace", jstr(j, "name_a"));
	EXPECT_EQ(19, jnum(j, "calls.common"));
	EXPECT_EQ(25, jnum(j, "calls.only_a"));
	EXPECT_EQ(115, jnum(j, "calls.only_b"));
	EXPECT_EQ(3, jnum(j, "calls.places"));
	EXPECT_STREQ("dropped", jstr(j, "b.fate"));
	EXPECT_STREQ("NO_SOCKET", jstr(j, "b.reason"));
	rows = pf_json_get(j, "m");
	ASSERT_NE(NULL, rows);
	ASSERT_EQ(1, rows->n % 5);
	for (i = 1; i + 4 < rows->n; i += 5) {
		uint64_t op = rows->items[i]->u64;

		ASSERT_LT(op, 3);
		ops[op]++;
		/* the side without the call: 0 */
		if (op == 1)
			EXPECT_EQ(0, rows->items[i + 3]->u64);
		if (op == 2)
			EXPECT_EQ(0, rows->items[i + 2]->u64);
	}
	EXPECT_EQ(19, ops[0]);
	EXPECT_EQ(25, ops[1]);
	EXPECT_EQ(115, ops[2]);
	EXPECT_STREQ("ip_rcv", rows->items[2]->str);
	pf_json_free(j);
	free(buf);
	pf_trace_free(t);
}

/* pf_diff() --format chrome of @a and @b into a new string. */
static char *diff_chrome(const struct pf_packet *a, const struct pf_packet *b,
			 size_t *len, int *ret)
{
	struct pf_diff_opts o = { .format = PF_DIFF_CHROME, .top = 10,
				  .name_a = "a \"1\".trace", .name_b = "b.json" };
	char *buf = NULL;
	FILE *m = open_memstream(&buf, len);

	if (!m)
		return NULL;
	*ret = pf_diff(m, a, b, &o);
	fclose(m);
	return buf;
}

/* The root slice (or instant) of process @pid, or NULL. */
static const struct pf_json *root_of(const struct pf_json *doc, uint64_t pid)
{
	const struct pf_json *ev = pf_json_get(doc, "traceEvents");
	size_t i;

	for (i = 0; ev && i < ev->n; i++)
		if (!strcmp(jstr(ev->items[i], "cat"), "packet") &&
		    jnum(ev->items[i], "pid") == pid)
			return ev->items[i];
	return NULL;
}

/* The name process @pid's process_name event gives it, or "". */
static const char *process_of(const struct pf_json *doc, uint64_t pid)
{
	const struct pf_json *ev = pf_json_get(doc, "traceEvents");
	size_t i;

	for (i = 0; ev && i < ev->n; i++)
		if (!strcmp(jstr(ev->items[i], "name"), "process_name") &&
		    jnum(ev->items[i], "pid") == pid)
			return jstr(ev->items[i], "args.name");
	return "";
}

/*
 * diff --format chrome: one document, A process 1 and B process 2, each
 * packet from time 0 on its CPU's track; the exit status as for text.
 */
TEST(chrome_of_diff)
{
	struct pf_trace *t = fixture_trace("diff/6.12", "nosock");
	struct pf_trace *abs = fixture_trace("diff/6.12", "abstime");
	struct pf_packet *a, *b, *c;
	const struct pf_json *r, *ev;
	struct pf_json *j;
	size_t len = 0, roots, i, lookups = 0;
	char *doc, err[256];
	int ret = -1;

	ASSERT_NE(NULL, t);
	ASSERT_NE(NULL, abs);
	a = pf_diff_packet_copy(by_seq(t, 1));
	b = pf_diff_packet_copy(by_seq(t, 2));
	c = pf_diff_packet_copy(abs->packets[0]);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	ASSERT_NE(NULL, c);

	doc = diff_chrome(a, b, &len, &ret);
	ASSERT_NE(NULL, doc);
	EXPECT_EQ(1, ret);		/* they differ, as text says */
	EXPECT_EQ(0, chrome_check(doc, len, &roots));
	EXPECT_EQ(2, roots);
	EXPECT_NE(0, python_parses(doc, len));
	j = pf_json_parse(doc, len, 64, 10000000, err, sizeof(err));
	ASSERT_NE(NULL, j);
	EXPECT_STREQ("A: packet 1 (rx, id 1) of a \"1\".trace", process_of(j, 1));
	EXPECT_STREQ("B: packet 2 (rx, id 2) of b.json", process_of(j, 2));
	r = root_of(j, 1);
	ASSERT_NE(NULL, r);
	EXPECT_EQ(1, jnum(r, "args.seq"));
	EXPECT_EQ(0, ns_of(pf_json_get(r, "ts")->num));
	EXPECT_EQ(a->graph->duration_ns, ns_of(pf_json_get(r, "dur")->num));
	r = root_of(j, 2);
	ASSERT_NE(NULL, r);
	EXPECT_EQ(2, jnum(r, "args.seq"));
	EXPECT_EQ(0, ns_of(pf_json_get(r, "ts")->num));
	EXPECT_EQ(b->graph->duration_ns, ns_of(pf_json_get(r, "dur")->num));
	EXPECT_EQ(PF_J_NULL, jget(j, "otherData.filter")->type);
	pf_json_free(j);
	free(doc);

	/* A packet with itself: the same; with abstime, its times less its root's. */
	doc = diff_chrome(c, c, &len, &ret);
	ASSERT_NE(NULL, doc);
	EXPECT_EQ(0, ret);
	EXPECT_EQ(0, chrome_check(doc, len, &roots));
	EXPECT_EQ(2, roots);
	j = pf_json_parse(doc, len, 64, 10000000, err, sizeof(err));
	ASSERT_NE(NULL, j);
	EXPECT_EQ(0, ns_of(pf_json_get(root_of(j, 1), "ts")->num));
	EXPECT_EQ(0, ns_of(pf_json_get(root_of(j, 2), "ts")->num));
	/* "59.538750 | 0) | udp4_lib_lookup2() {": 45 us after udp_rcv */
	ev = pf_json_get(j, "traceEvents");
	for (i = 0; i < ev->n; i++)
		if (!strcmp(jstr(ev->items[i], "name"), "udp4_lib_lookup2") &&
		    ns_of(pf_json_get(ev->items[i], "ts")->num) == 45000)
			lookups++;
	EXPECT_EQ(2, lookups);
	pf_json_free(j);
	free(doc);

	/* A packet without a graph: an instant at 0 in its process. */
	pf_diff_packet_free(b);
	b = pf_diff_packet_json("{\"seq\":9,\"stage\":\"rx\",\"proto\":\"udp\",\"graph\":null}",
				strlen("{\"seq\":9,\"stage\":\"rx\",\"proto\":\"udp\",\"graph\":null}"),
				err, sizeof(err));
	ASSERT_NE(NULL, b);
	doc = diff_chrome(a, b, &len, &ret);
	ASSERT_NE(NULL, doc);
	EXPECT_EQ(1, ret);
	EXPECT_EQ(0, chrome_check(doc, len, &roots));
	EXPECT_EQ(1, roots);
	EXPECT_NE(NULL, strstr(doc, "{\"name\":\"packet without a graph\",\"cat\":\"packet\",\"ph\":\"i\",\"s\":\"t\",\"ts\":0.000,\"pid\":2,\"tid\":0,"));
	free(doc);

	pf_diff_packet_free(a);
	pf_diff_packet_free(b);
	pf_diff_packet_free(c);
	pf_trace_free(abs);
	pf_trace_free(t);
}

/* --- the command line -------------------------------------------------------------- */

static char *fixture_path(const char *dir, const char *name, char *buf,
			  size_t size)
{
	char exe[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	snprintf(buf, size, "%s/fixtures/%s/%s.txt", exe, dir, name);
	return buf;
}

static int run(const char *a0, const char *a1, const char *a2,
	       const char *a3, const char *a4, const char *a5)
{
	char *argv[] = { (char *)a0, (char *)a1, (char *)a2, (char *)a3,
			 (char *)a4, (char *)a5, NULL };
	int argc = 0;

	while (argv[argc])
		argc++;
	return pf_diff_run(NULL, argc, argv);
}

/* report --format json of fixtures/diff/6.12/NAME into @f. */
static int write_json(FILE *f, const char *name)
{
	struct pf_trace *t = fixture_trace("diff/6.12", name);
	int ret;

	if (!t)
		return -ENOENT;
	ret = pf_render_json(f, t);
	pf_trace_free(t);
	return ret;
}

TEST(command_line)
{
	char nosock[PATH_MAX + 128], twice[PATH_MAX + 128], out[] =
		"/tmp/pfdiffXXXXXX", json[] = "/tmp/pfdiffjXXXXXX";
	char *text = NULL;
	size_t cap = 0;
	FILE *f;
	int fd;

	ASSERT_NE(NULL, fixture_path("diff/6.12", "nosock", nosock,
				     sizeof(nosock)));
	ASSERT_NE(NULL, fixture_path("diff/6.12", "twice", twice,
				     sizeof(twice)));
	fd = mkstemp(out);
	ASSERT_LE(0, fd);
	close(fd);
	EXPECT_EQ(1, run("-o", out, nosock, "1", "2", NULL));
	EXPECT_EQ(1, run("-o", out, nosock, "seq:1", nosock, "id:2"));
	EXPECT_EQ(0, run("-o", out, nosock, "1", "1", NULL));
	EXPECT_EQ(0, run("-o", out, twice, "5", twice, "5"));
	/* The first packet of each, as JSON written by report. */
	fd = mkstemp(json);
	ASSERT_LE(0, fd);
	f = fdopen(fd, "w");
	ASSERT_NE(NULL, f);
	EXPECT_EQ(0, write_json(f, "nosock"));
	fclose(f);
	EXPECT_EQ(0, run("-o", out, json, nosock, NULL, NULL));
	EXPECT_EQ(1, run("-o", out, "--format=json", json, "2", nosock));
	f = fopen(out, "r");
	ASSERT_NE(NULL, f);
	ASSERT_LT(0, getdelim(&text, &cap, '\0', f));
	fclose(f);
	EXPECT_EQ(0, strncmp(text, "{\"a\":{\"file\":", 13));
	EXPECT_NE(NULL, strstr(text, "\"seq\":2,"));
	free(text);
	/* Both packets as a timeline. */
	text = NULL;
	EXPECT_EQ(1, run("--format=chrome", "-o", out, nosock, "1", "2"));
	f = fopen(out, "r");
	ASSERT_NE(NULL, f);
	ASSERT_LT(0, getdelim(&text, &cap, '\0', f));
	fclose(f);
	EXPECT_EQ(text, strstr(text, "{\"traceEvents\":[\n{\"name\":\"process_name\","));
	EXPECT_NE(NULL, strstr(text, "\"pid\":2,\"tid\":0,\"args\":{\"name\":\"B: packet 2 (rx, id 2) of "));
	free(text);
	/* Usage errors and trouble: 2. */
	EXPECT_EQ(2, run(nosock, NULL, NULL, NULL, NULL, NULL));
	EXPECT_EQ(2, run(nosock, "1", NULL, NULL, NULL, NULL));
	EXPECT_EQ(2, run(nosock, "1", "2", "3", NULL, NULL));
	EXPECT_EQ(2, run("1", "2", NULL, NULL, NULL, NULL));
	EXPECT_EQ(2, run(nosock, "id:x", "2", NULL, NULL, NULL));
	EXPECT_EQ(2, run("--format", "svg", nosock, "1", "2", NULL));
	EXPECT_EQ(2, run("--top", "0", nosock, "1", "2", NULL));
	EXPECT_EQ(2, run("--stage", "l3", nosock, "1", "2", NULL));
	EXPECT_EQ(2, run("--bogus", nosock, "1", "2", NULL, NULL));
	EXPECT_EQ(2, run("-o", out, nosock, "1", "99", NULL));
	EXPECT_EQ(2, run("-o", out, "/nonexistent/x", "1", "2", NULL));
	EXPECT_EQ(2, run("-o", out, "--stage", "tx", nosock, "id:1"));
	unlink(out);
	unlink(json);
}

TEST_HARNESS_MAIN
