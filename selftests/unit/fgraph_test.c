// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the function_graph parser and its renderings, tool/fgraph.c
 * and tool/render*.c: hand-made traces for each line format and each way a
 * graph can be cut, then the real traces of fixtures/6.1 and fixtures/6.12
 * (captured in the VM by fixtures/capture): what each must give, and for
 * all of them that every line is understood, that the JSON output is valid
 * JSON whose durations agree with the folded stacks, and that a packet's
 * folded weights add up exactly to its handler's duration. Last, mutated
 * traces: the parser and renderers must survive anything.
 */
#define _GNU_SOURCE	/* memmem() */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "fgraph.h"
#include "nft_rules.h"
#include "parse.h"
#include "render.h"

#define EV(seq, cpu) \
	" " #cpu ")               |  /* pktfilt_packet: seq=" #seq " cpu=" #cpu \
	" proto=udp saddr=10.9.0.1 daddr=10.9.0.2 sport=4000 dport=9000" \
	" ifindex=2 netns=4026532165 */\n"

static struct pf_trace *parse_str(const char *s)
{
	return pf_fgraph_parse_buf(s, strlen(s));
}

/* The child of @node at @i, by name check. */
static const struct pf_node *child(const struct pf_node *node, size_t i)
{
	return node && i < node->nchildren ? node->children[i] : NULL;
}

/* Render with @fn into a string (free it). */
static char *render_str(int (*fn)(FILE *, const struct pf_trace *),
			const struct pf_trace *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return NULL;
	if (fn(m, t)) {
		fclose(m);
		free(buf);
		return NULL;
	}
	fclose(m);
	return buf;
}

/* A trace of just @pkt. */
static struct pf_trace one_packet(struct pf_packet **pkt)
{
	struct pf_trace t = { .packets = pkt, .npackets = 1 };

	return t;
}

/* The sum of the weights of folded output. */
static uint64_t folded_sum(const char *folded, size_t *lines)
{
	const char *p = folded, *nl, *sp;
	uint64_t sum = 0;

	*lines = 0;
	while (p && *p) {
		nl = strchr(p, '\n');
		if (!nl)
			break;
		for (sp = nl; sp > p && sp[-1] != ' '; sp--)
			;
		sum += strtoull(sp, NULL, 10);
		(*lines)++;
		p = nl + 1;
	}
	return sum;
}

/* --- a tiny JSON checker ------------------------------------------------- */

static const char *json_value(const char *p, int depth);

static const char *json_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static const char *json_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	while (*p != '"') {
		unsigned char c = (unsigned char)*p;

		if (c < 0x20)
			return NULL;
		if (c == '\\') {
			p++;
			if (*p == 'u') {
				int i;

				for (i = 1; i <= 4; i++)
					if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i])
						return NULL;
				p += 5;
				continue;
			}
			if (!*p || !strchr("\"\\/bfnrt", *p))
				return NULL;
		}
		p++;
	}
	return p + 1;
}

static const char *json_number(const char *p)
{
	const char *s = p;

	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (*p >= '0' && *p <= '9')
			p++;
	else
		return NULL;
	if (*p == '.' || *p == 'e' || *p == 'E')
		return NULL;	/* we print integers only */
	return p > s ? p : NULL;
}

static const char *json_value(const char *p, int depth)
{
	if (depth > 600)
		return NULL;
	p = json_ws(p);
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';
		bool obj = *p == '{';

		p = json_ws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (obj) {
				p = json_string(json_ws(p));
				if (!p)
					return NULL;
				p = json_ws(p);
				if (*p++ != ':')
					return NULL;
			}
			p = json_value(p, depth + 1);
			if (!p)
				return NULL;
			p = json_ws(p);
			if (*p == close)
				return p + 1;
			if (*p++ != ',')
				return NULL;
		}
	}
	if (*p == '"')
		return json_string(p);
	if (!strncmp(p, "true", 4))
		return p + 4;
	if (!strncmp(p, "false", 5))
		return p + 5;
	if (!strncmp(p, "null", 4))
		return p + 4;
	return json_number(p);
}

/* Each line one valid JSON object; returns the number of lines, -1 if bad. */
static int json_lines_ok(const char *s)
{
	int n = 0;

	while (*s) {
		const char *end;

		if (*json_ws(s) != '{')
			return -1;
		end = json_value(s, 0);
		if (!end || *end != '\n')
			return -1;
		s = end + 1;
		n++;
	}
	return n;
}

/* The root's duration_ns in one JSON line (the first after "graph"). */
static uint64_t json_root_ns(const char *line)
{
	const char *g = strstr(line, "\"graph\":{");
	const char *d = g ? strstr(g, "\"duration_ns\":") : NULL;

	return d ? strtoull(d + 14, NULL, 10) : UINT64_MAX;
}

/* --- hand-made traces ---------------------------------------------------- */

TEST(nested_and_leaf_calls)
{
	static const char trace[] =
		"# tracer: function_graph\n"
		"#\n"
		"# CPU  DURATION                  FUNCTION CALLS\n"
		"# |     |   |                     |   |   |   |\n"
		EV(1, 1)
		" 1)               |  udp_rcv() {\n"
		" 1)               |    __udp4_lib_rcv() {\n"
		" 1)               |      __udp4_lib_lookup() {\n"
		" 1) + 87.835 us   |        udp4_lib_lookup2();\n"
		" 1)   7.164 us    |        udp4_lib_lookup2();\n"
		" 1) ! 535.443 us  |      }\n"
		" 1)   1.412 us    |      veth_xmit [veth]();\n"
		" 1) ! 958.637 us  |    }\n"
		" 1) # 6537.750 us |  }\n";
	struct pf_trace *t = parse_str(trace);
	const struct pf_packet *pkt;
	const struct pf_node *root, *n;

	ASSERT_NE(NULL, t);
	ASSERT_EQ(1, t->npackets);
	pkt = t->packets[0];
	EXPECT_EQ(1, pkt->seq);
	EXPECT_EQ(1, pkt->cpu);
	EXPECT_STREQ("udp", pkt->proto);
	EXPECT_STREQ("10.9.0.1", pkt->saddr);
	EXPECT_STREQ("10.9.0.2", pkt->daddr);
	EXPECT_EQ(4000, pkt->sport);
	EXPECT_EQ(9000, pkt->dport);
	EXPECT_EQ(2, pkt->ifindex);
	EXPECT_EQ(4026532165UL, pkt->netns);
	EXPECT_TRUE(pkt->complete);
	EXPECT_TRUE(pkt->done);
	EXPECT_EQ(0, pkt->incomplete);
	root = pkt->graph;
	ASSERT_NE(NULL, root);
	EXPECT_STREQ("udp_rcv", root->func);
	EXPECT_EQ(6537750, root->duration_ns);
	ASSERT_EQ(1, root->nchildren);
	n = child(root, 0);
	EXPECT_STREQ("__udp4_lib_rcv", n->func);
	EXPECT_EQ(958637, n->duration_ns);
	ASSERT_EQ(2, n->nchildren);
	EXPECT_STREQ("veth_xmit [veth]", child(n, 1)->func);
	EXPECT_EQ(1412, child(n, 1)->duration_ns);
	n = child(n, 0);
	EXPECT_EQ(535443, n->duration_ns);
	ASSERT_EQ(2, n->nchildren);
	EXPECT_STREQ("udp4_lib_lookup2", child(n, 0)->func);
	EXPECT_EQ(87835, child(n, 0)->duration_ns);
	EXPECT_EQ(7164, child(n, 1)->duration_ns);
	EXPECT_TRUE(child(n, 1)->complete);
	EXPECT_EQ(0, child(n, 1)->nchildren);
	/* The raw text: the packet's lines, not the header. */
	EXPECT_EQ(0, strncmp(pkt->raw_text, EV(1, 1), strlen(EV(1, 1))));
	EXPECT_EQ(strlen(trace) - strlen(strstr(trace, EV(1, 1))),
		  strlen(trace) - pkt->raw_len);
	EXPECT_EQ(0, t->stats.garbage);
	EXPECT_EQ(0, t->stats.noise);
	EXPECT_EQ(0, pf_trace_incomplete(t));
	EXPECT_FALSE(pf_trace_lost(t));
	pf_trace_free(t);
}

/* Every marker, and the precision ftrace drops past 7 digits. */
TEST(durations_and_markers)
{
	static const char trace[] =
		EV(1, 0)
		" 0)               |  udp_rcv() {\n"
		" 0)   0.051 us    |    a();\n"
		" 0) + 10.001 us   |    b();\n"
		" 0) ! 100.999 us  |    c();\n"
		" 0) # 1000.000 us |    d();\n"
		" 0) * 12345.67 us |    e();\n"
		" 0) @ 123456.7 us |    f();\n"
		" 0) $ 1234567 us  |    g();\n"
		" 0) $ 98765432 us |    h();\n"
		" 0)   3.000 us    |    i();\n"
		" 0)   3.00 us     |    j();\n"
		" 0) $ 99999999999 us |  }\n";
	static const uint64_t want[] = {
		51, 10001, 100999, 1000000, 12345670, 123456700, 1234567000,
		98765432000ULL, 3000, 3000,
	};
	struct pf_trace *t = parse_str(trace);
	const struct pf_node *root;
	size_t i;

	ASSERT_NE(NULL, t);
	ASSERT_EQ(1, t->npackets);
	root = t->packets[0]->graph;
	ASSERT_EQ(ARRAY_SIZE(want), root->nchildren);
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		EXPECT_EQ(want[i], child(root, i)->duration_ns)
			TH_LOG("child %zu (%s)", i, child(root, i)->func);
	}
	EXPECT_EQ(99999999999000ULL, root->duration_ns);
	EXPECT_TRUE(t->packets[0]->complete);
	EXPECT_EQ(0, t->stats.garbage);
	pf_trace_free(t);

	/* Not durations: four decimals, no "us", 17 digits. */
	t = parse_str(EV(1, 0)
		      " 0)               |  udp_rcv() {\n"
		      " 0)   1.2345 us   |    a();\n"
		      " 0)   1.234       |    b();\n"
		      " 0)   12345678901234567 us |    c();\n"
		      " 0)   1.000 us    |  }\n");
	ASSERT_NE(NULL, t);
	EXPECT_EQ(3, t->stats.garbage);
	EXPECT_EQ(0, t->packets[0]->graph->nchildren);
	pf_trace_free(t);
}

/* Two graphs on two CPUs, interleaved line by line. */
TEST(interleaved_cpus)
{
	static const char trace[] =
		EV(1, 0)
		EV(2, 1)
		" 0)               |  udp_rcv() {\n"
		" 1)               |  udp_rcv() {\n"
		" 1)               |    b1() {\n"
		" 0)               |    a1() {\n"
		" 0)   1.000 us    |      a2();\n"
		" 1)   2.000 us    |      b2();\n"
		" 1)   3.000 us    |      b3();\n"
		" 0)   4.000 us    |    }\n"
		" 1)   5.000 us    |    }\n"
		" 1)   6.000 us    |  }\n"
		" 0)   7.000 us    |    a3();\n"
		" 0)   8.000 us    |  }\n";
	struct pf_trace *t = parse_str(trace);
	const struct pf_packet *p0, *p1;

	ASSERT_NE(NULL, t);
	ASSERT_EQ(2, t->npackets);
	p0 = t->packets[0];
	p1 = t->packets[1];
	EXPECT_EQ(0, p0->cpu);
	EXPECT_EQ(1, p1->cpu);
	EXPECT_TRUE(p0->complete);
	EXPECT_TRUE(p1->complete);
	EXPECT_EQ(8000, p0->graph->duration_ns);
	EXPECT_EQ(6000, p1->graph->duration_ns);
	ASSERT_EQ(2, p0->graph->nchildren);
	EXPECT_STREQ("a1", child(p0->graph, 0)->func);
	EXPECT_EQ(4000, child(p0->graph, 0)->duration_ns);
	EXPECT_STREQ("a2", child(child(p0->graph, 0), 0)->func);
	EXPECT_STREQ("a3", child(p0->graph, 1)->func);
	ASSERT_EQ(1, p1->graph->nchildren);
	ASSERT_EQ(2, child(p1->graph, 0)->nchildren);
	EXPECT_STREQ("b3", child(child(p1->graph, 0), 1)->func);
	/* Each packet's text has only its own CPU's lines. */
	EXPECT_EQ(NULL, strstr(p0->raw_text, " 1)"));
	EXPECT_EQ(NULL, strstr(p1->raw_text, " 0)"));
	pf_trace_free(t);
}

/*
 * Interrupts: calls made by an interrupt nest in the graph like any call;
 * the "==========>" markers (funcgraph-irqs, on architectures whose irq
 * entry is traceable) stay in the text only; calls between the event and
 * the handler (6.12: irq_enter_rcu, idle_cpu; 7.2 also an irq exit's
 * __hrtimer_rearm_deferred() { ... }) and after it (the kprobe that
 * closes pktfilt's gate) are noise, in neither the tree nor the text.
 */
TEST(irq_entries)
{
	static const char trace[] =
		EV(1, 0)
		" 0) + 17.112 us   |  irq_enter_rcu();\n"
		" 0)   3.457 us    |  idle_cpu();\n"
		" 0)               |  __hrtimer_rearm_deferred() {\n"
		" 0)   1.100 us    |    _raw_spin_lock();\n"
		" 0)   2.200 us    |  }\n"
		" 0)               |  icmpv6_rcv() {\n"
		" 0)               |    __rcu_read_unlock() {\n"
		" 0)   3.997 us    |      irq_enter_rcu();\n"
		" 0)  ==========> |\n"
		" 0)               |      __sysvec_apic_timer_interrupt() {\n"
		" 0)   1.583 us    |        _raw_spin_lock_irqsave();\n"
		" 0) ! 313.306 us  |      }\n"
		" 0)  <========== |\n"
		" 0) ! 400.000 us  |    }\n"
		" 0) ! 500.000 us  |  }\n"
		" 0)               |  kprobe_int3_handler() {\n"
		" 0)   2.846 us    |    get_kprobe();\n"
		" 0) + 26.510 us   |  }\n";
	struct pf_trace *t = parse_str(trace);
	const struct pf_packet *pkt;
	const struct pf_node *n;

	ASSERT_NE(NULL, t);
	ASSERT_EQ(1, t->npackets);
	pkt = t->packets[0];
	EXPECT_TRUE(pkt->complete);
	EXPECT_STREQ("icmpv6_rcv", pkt->graph->func);
	EXPECT_EQ(500000, pkt->graph->duration_ns);
	n = child(pkt->graph, 0);
	ASSERT_EQ(2, n->nchildren);
	EXPECT_STREQ("irq_enter_rcu", child(n, 0)->func);
	EXPECT_STREQ("__sysvec_apic_timer_interrupt", child(n, 1)->func);
	EXPECT_EQ(313306, child(n, 1)->duration_ns);
	EXPECT_NE(NULL, strstr(pkt->raw_text, "==========>"));
	EXPECT_EQ(NULL, strstr(pkt->raw_text, "idle_cpu"));
	EXPECT_EQ(NULL, strstr(pkt->raw_text, "__hrtimer_rearm_deferred"));
	EXPECT_EQ(NULL, strstr(pkt->raw_text, "_raw_spin_lock();"));
	/* The text goes from the event straight to the root. */
	EXPECT_NE(NULL, strstr(pkt->raw_text, "*/\n 0)               |  icmpv6_rcv() {"));
	EXPECT_EQ(NULL, strstr(pkt->raw_text, "kprobe_int3_handler"));
	/* irq_enter_rcu idle_cpu __hrtimer_rearm_deferred kprobe_... */
	EXPECT_EQ(4, t->stats.noise);
	/* _raw_spin_lock and its caller's "}", get_kprobe and its "}" */
	EXPECT_EQ(4, t->stats.stray);
	EXPECT_EQ(0, t->stats.garbage);
	pf_trace_free(t);
}

/*
 * An interrupt in ftrace_return_to_handler(), between the depth going
 * down and the return being written (real, 6.1): its calls show at the
 * depth of the returning call, whose "}" comes after them, named.
 */
TEST(interrupt_while_returning)
{
	static const char trace[] =
		EV(7, 0)
		" 0)               |  udp_rcv() {\n"
		" 0)               |    __rcu_read_unlock() {\n"
		" 0) + 18.284 us   |    irq_enter_rcu();\n"
		" 0)   4.909 us    |    idle_cpu();\n"
		" 0)   1.423 us    |    } /* __rcu_read_unlock */\n"
		" 0)   2.585 us    |    fib_select_path();\n"
		" 0) + 30.000 us   |  }\n"
		/* The same for the root. */
		EV(8, 0)
		" 0)               |  udp_rcv() {\n"
		" 0)   1.000 us    |    a();\n"
		" 0)   2.000 us    |  irq_enter_rcu();\n"
		" 0)               |  irq_exit_rcu() {\n"
		" 0)   1.000 us    |    idle_cpu();\n"
		" 0)   3.000 us    |  }\n"
		" 0)   9.000 us    |  } /* udp_rcv */\n";
	struct pf_trace *t = parse_str(trace);
	const struct pf_node *root;

	ASSERT_NE(NULL, t);
	ASSERT_EQ(2, t->npackets);
	EXPECT_TRUE(t->packets[0]->complete);
	root = t->packets[0]->graph;
	ASSERT_EQ(4, root->nchildren);
	EXPECT_STREQ("__rcu_read_unlock", child(root, 0)->func);
	EXPECT_EQ(1423, child(root, 0)->duration_ns);
	EXPECT_TRUE(child(root, 0)->complete);
	EXPECT_STREQ("irq_enter_rcu", child(root, 1)->func);
	EXPECT_STREQ("fib_select_path", child(root, 3)->func);

	EXPECT_TRUE(t->packets[1]->complete);
	root = t->packets[1]->graph;
	EXPECT_EQ(9000, root->duration_ns);
	ASSERT_EQ(1, root->nchildren);
	EXPECT_EQ(0, t->stats.orphans);
	pf_trace_free(t);
}

/* An overrun on a packet's CPU while it is open makes it incomplete. */
TEST(overrun_makes_incomplete)
{
	static const char trace[] =
		EV(1, 0)
		EV(2, 1)
		" 0)               |  udp_rcv() {\n"
		" 1)               |  udp_rcv() {\n"
		"CPU:1 [LOST 123 EVENTS]\n"
		" 1)   1.000 us    |      lost_child();\n"
		" 1)   5.000 us    |    } /* __udp4_lib_rcv */\n"
		" 1)   6.000 us    |  }\n"
		" 0)   1.000 us    |    a();\n"
		" 0)   8.000 us    |  }\n"
		"CPU:0 [LOST EVENTS]\n"
		"CPU:1 [LOST 7 EVENTS]\n";
	struct pf_trace *t = parse_str(trace);
	const struct pf_packet *p1;
	char why[128];

	ASSERT_NE(NULL, t);
	ASSERT_EQ(2, t->npackets);
	EXPECT_TRUE(t->packets[0]->complete);
	p1 = t->packets[1];
	EXPECT_FALSE(p1->complete);
	EXPECT_TRUE(p1->done);
	EXPECT_TRUE(p1->incomplete & PF_INC_LOST);
	EXPECT_STREQ("trace lost events",
		     pf_incomplete_str(p1->incomplete & PF_INC_LOST, why,
				       sizeof(why)));
	EXPECT_NE(NULL, strstr(p1->raw_text, "CPU:1 [LOST 123 EVENTS]\n"));
	EXPECT_EQ(3, t->stats.lost_reports);
	EXPECT_EQ(130, t->stats.lost_events);
	EXPECT_EQ(1, t->stats.lost_unknown);
	EXPECT_TRUE(pf_trace_lost(t));
	EXPECT_EQ(1, pf_trace_incomplete(t));
	pf_trace_free(t);

	/* A LOST line without a CPU applies to every open packet. */
	t = parse_str(EV(1, 0) " 0)               |  udp_rcv() {\n"
		      "CPU:? [LOST 5 EVENTS]\n"
		      " 0)   8.000 us    |  }\n");
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(t->packets[0]->incomplete & PF_INC_LOST);
	EXPECT_EQ(5, t->stats.lost_events);
	pf_trace_free(t);
}

TEST(truncated_last_line)
{
	static const char head[] =
		EV(1, 0)
		" 0)               |  udp_rcv() {\n"
		" 0)   1.000 us    |    a();\n";
	char buf[512];
	struct pf_trace *t;

	/* Cut in the duration. */
	snprintf(buf, sizeof(buf), "%s 0) # 6537.7", head);
	t = parse_str(buf);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(t->stats.truncated);
	EXPECT_EQ(4, t->stats.lines);
	EXPECT_EQ(0, t->stats.garbage);
	ASSERT_EQ(1, t->npackets);
	EXPECT_FALSE(t->packets[0]->complete);
	EXPECT_EQ(PF_INC_EOF, t->packets[0]->incomplete);
	EXPECT_FALSE(t->packets[0]->graph->complete);
	EXPECT_EQ(1, t->packets[0]->graph->nchildren);
	pf_trace_free(t);

	/* Cut in a name: "b" must not become a call. */
	snprintf(buf, sizeof(buf), "%s 0)   1.000 us    |    b", head);
	t = parse_str(buf);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(t->stats.truncated);
	EXPECT_EQ(1, t->packets[0]->graph->nchildren);
	pf_trace_free(t);

	/* Whole but without its newline: used. */
	snprintf(buf, sizeof(buf), "%s 0) # 6537.750 us |  }", head);
	t = parse_str(buf);
	ASSERT_NE(NULL, t);
	EXPECT_FALSE(t->stats.truncated);
	EXPECT_TRUE(t->packets[0]->complete);
	EXPECT_EQ(6537750, t->packets[0]->graph->duration_ns);
	pf_trace_free(t);

	/* An event cut off: no packet. */
	t = parse_str(" 0)               |  /* pktfilt_packet: seq=1 cpu=0 pro");
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(t->stats.truncated);
	EXPECT_EQ(0, t->npackets);
	pf_trace_free(t);
}

/* Graphs cut in other ways. */
TEST(cut_graphs)
{
	struct pf_trace *t;

	/* An event, then the next: no graph. At EOF: ends before. */
	t = parse_str(EV(1, 0) EV(2, 0)
		      " 0)               |  udp_rcv() {\n"
		      " 0)               |    a() {\n"
		      EV(3, 0)
		      " 0)               |  tcp_v4_rcv() {\n");
	ASSERT_NE(NULL, t);
	ASSERT_EQ(3, t->npackets);
	EXPECT_EQ(PF_INC_NO_GRAPH, t->packets[0]->incomplete);
	EXPECT_EQ(NULL, t->packets[0]->graph);
	EXPECT_EQ(PF_INC_CUT, t->packets[1]->incomplete);
	EXPECT_EQ(PF_INC_EOF, t->packets[2]->incomplete);
	EXPECT_EQ(3, pf_trace_incomplete(t));
	pf_trace_free(t);

	/* A return without its call, another's return at a call's depth. */
	t = parse_str(EV(1, 0)
		      " 0)               |  udp_rcv() {\n"
		      " 0)   1.000 us    |      }\n"
		      " 0)               |    a() {\n"
		      " 0)   2.000 us    |    } /* b */\n"
		      " 0)   3.000 us    |  }\n");
	ASSERT_NE(NULL, t);
	EXPECT_EQ(PF_INC_NESTING, t->packets[0]->incomplete);
	EXPECT_EQ(2, t->stats.orphans);
	EXPECT_FALSE(child(t->packets[0]->graph, 0)->complete);
	EXPECT_TRUE(t->packets[0]->graph->complete);
	pf_trace_free(t);

	/* A call above the root: the root's return never came. */
	t = parse_str(EV(1, 0)
		      " 0)               |    udp_rcv() {\n"
		      " 0)   1.000 us    |  other();\n");
	ASSERT_NE(NULL, t);
	EXPECT_EQ(PF_INC_NESTING, t->packets[0]->incomplete);
	EXPECT_EQ(1, t->stats.noise);
	pf_trace_free(t);

	/* A leaf root. */
	t = parse_str(EV(1, 0) " 0)   2.000 us    |  udp_rcv();\n");
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(t->packets[0]->complete);
	EXPECT_EQ(2000, t->packets[0]->graph->duration_ns);
	pf_trace_free(t);

	/* Deeper than PF_FGRAPH_MAX_DEPTH. */
	{
		size_t depth = PF_FGRAPH_MAX_DEPTH + 50, i, len = 0;
		size_t cap = 2 * depth * (2 * depth + 40) + 256;
		char *buf = malloc(cap);

		ASSERT_NE(NULL, buf);
		len += snprintf(buf + len, cap - len, "%s", EV(1, 0));
		for (i = 0; i < depth; i++)
			len += snprintf(buf + len, cap - len,
					" 0)               |  %*s%s() {\n",
					(int)(2 * i), "", i ? "f" : "udp_rcv");
		for (i = depth; i-- > 0;)
			len += snprintf(buf + len, cap - len,
					" 0)   1.000 us    |  %*s}\n",
					(int)(2 * i), "");
		t = pf_fgraph_parse_buf(buf, len);
		free(buf);
		ASSERT_NE(NULL, t);
		EXPECT_TRUE(t->packets[0]->incomplete & PF_INC_DEPTH);
		EXPECT_FALSE(t->packets[0]->complete);
		EXPECT_TRUE(t->packets[0]->done);
		pf_trace_free(t);
	}
}

/* Lines that are not graphs, or garbage, among graph lines. */
TEST(garbage_lines)
{
	static const char trace[] =
		"garbage\n"
		"\n"
		" ------------------------------------------\n"
		" 0)  ksoftir-15   =>  pfsend-212   \n"
		" ------------------------------------------\n"
		"\x01\x02\xff\xfe\n"
		" 0) ???\n"
		"}}}}\n"
		EV(1, 0)
		" 0)               |  udp_rcv() {\n"
		" (Overruns: 0)\n"
		" 0) 5 xs |    x();\n"
		" 0)               |    a(); trailing\n"
		"{{ 99999999999999999999) \n"
		" 0)   1.000 us    |    b();\n"
		" 0)   2.000 us    |  }\n"
		"CPU:0 [LOST\n"
		" 0)               |  /* pktfilt_packet: seq=x cpu= proto="
		"udpudpudpudp saddr=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa */\n"
		" 0)   2.000 us    |  }\n"
		" 5) garbage\n";
	static const char long_fields[] =
		" 0)               |  /* pktfilt_packet: seq=7 proto="
		"udpudpudpudp saddr=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa */\n";
	struct pf_trace *t = parse_str(long_fields);

	/* Strings too long for their field are cut. */
	ASSERT_NE(NULL, t);
	ASSERT_EQ(1, t->npackets);
	EXPECT_EQ(7, t->packets[0]->seq);
	EXPECT_STREQ("udpudpu", t->packets[0]->proto);
	EXPECT_EQ(45, strlen(t->packets[0]->saddr));
	EXPECT_FALSE(t->packets[0]->complete);
	pf_trace_free(t);
	t = parse_str(trace);

	ASSERT_NE(NULL, t);
	/*
	 * The second event's seq=x is not a number: not understood (a
	 * number is read exactly or not at all), so it opens no packet.
	 */
	ASSERT_EQ(1, t->npackets);
	EXPECT_TRUE(t->packets[0]->complete);
	EXPECT_EQ(1, t->packets[0]->graph->nchildren);
	EXPECT_EQ(2000, t->packets[0]->graph->duration_ns);
	EXPECT_EQ(9, t->stats.garbage);
	EXPECT_EQ(1, t->stats.lost_reports);
	pf_trace_free(t);

	/* Nothing at all, and no newline at all. */
	t = parse_str("");
	ASSERT_NE(NULL, t);
	EXPECT_EQ(0, t->npackets);
	EXPECT_EQ(0, t->stats.lines);
	pf_trace_free(t);
	t = pf_fgraph_parse_buf("\0\0\0\n\0", 5);
	ASSERT_NE(NULL, t);
	EXPECT_EQ(2, t->stats.lines);
	pf_trace_free(t);
}

/* Optional columns: absolute time, CPU, task, no duration. */
TEST(other_columns)
{
	static const char trace[] =
		"  123.456789 |   1)  ksoftir-15   |               |  /* pktfilt_packet: seq=4 cpu=1 proto=tcp saddr=fd00::1 daddr=fd00::2 sport=1 dport=2 ifindex=3 netns=5 */\n"
		"  123.456790 |   1)  ksoftir-15   |               |  tcp_v6_rcv() {\n"
		"  123.456791 |   1)  ksoftir-15   | + 12.500 us   |    a();\n"
		"  123.456795 |   1)  ksoftir-15   | + 20.000 us   |  } /* tcp_v6_rcv */\n"
		/* funcgraph-cpu off */
		"               |  /* pktfilt_packet: seq=5 cpu=0 proto=icmp saddr=10.0.0.1 daddr=10.0.0.2 sport=0 dport=0 ifindex=3 netns=5 */\n"
		"               |  icmp_rcv() {\n"
		"   1.000 us    |    a();\n"
		"# 1234.000 us |  }\n"
		/* funcgraph-duration off */
		" 0)  /* pktfilt_packet: seq=6 cpu=0 proto=udp saddr=1.1.1.1 daddr=2.2.2.2 sport=1 dport=2 ifindex=3 netns=5 */\n"
		" 0)  udp_rcv() {\n"
		" 0)    a();\n"
		" 0)  }\n";
	struct pf_trace *t = parse_str(trace);

	ASSERT_NE(NULL, t);
	ASSERT_EQ(3, t->npackets);
	EXPECT_TRUE(t->packets[0]->complete);
	EXPECT_EQ(20000, t->packets[0]->graph->duration_ns);
	EXPECT_EQ(12500, child(t->packets[0]->graph, 0)->duration_ns);
	EXPECT_STREQ("fd00::1", t->packets[0]->saddr);
	EXPECT_TRUE(t->packets[1]->complete);
	EXPECT_EQ(1234000, t->packets[1]->graph->duration_ns);
	EXPECT_TRUE(t->packets[2]->complete);
	EXPECT_EQ(1, t->packets[2]->graph->nchildren);
	EXPECT_EQ(0, t->stats.garbage);
	pf_trace_free(t);
}

/* Fed a byte at a time, the parser gives the same as in one go. */
TEST(incremental_feed)
{
	static const char trace[] =
		EV(1, 1)
		" 1)               |  udp_rcv() {\n"
		" 1)   7.164 us    |    udp4_lib_lookup2();\n"
		" 1) # 6537.750 us |  }";
	struct pf_fgraph *p = pf_fgraph_new();
	const struct pf_trace *live;
	struct pf_trace *t;
	size_t i;

	ASSERT_NE(NULL, p);
	for (i = 0; i < sizeof(trace) - 1; i++)
		ASSERT_EQ(0, pf_fgraph_feed(p, trace + i, 1));
	live = pf_fgraph_trace(p);
	ASSERT_EQ(1, live->npackets);
	EXPECT_FALSE(live->packets[0]->done);
	t = pf_fgraph_finish(p);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(t->packets[0]->complete);
	EXPECT_EQ(6537750, t->packets[0]->graph->duration_ns);
	pf_trace_free(t);
}

/* --- renderings ------------------------------------------------------------ */

static const char small_trace[] =
	EV(1, 1)
	" 1)               |  udp_rcv() {\n"
	" 1)               |    __udp4_lib_rcv() {\n"
	" 1) + 87.835 us   |      udp4_lib_lookup2();\n"
	" 1)   7.164 us    |      udp4_lib_lookup2();\n"
	" 1) ! 535.443 us  |    }\n"
	" 1) ! 600.000 us  |  }\n"
	" 0)               |  /* pktfilt_packet: seq=2 cpu=0 proto=icmpv6 saddr=fd00::1 daddr=fd00::2 sport=0 dport=0 ifindex=2 netns=7 */\n"
	" 0)               |  icmpv6_rcv() {\n";

TEST(text_output)
{
	struct pf_trace *t = parse_str(small_trace);
	char *s;

	ASSERT_NE(NULL, t);
	s = render_str(pf_render_text, t);
	ASSERT_NE(NULL, s);
	/* Version 1 events: stage l4, the seq for an id, no fate line. */
	EXPECT_STREQ("# packet 1 (l4, id 1): udp 10.9.0.1:4000 -> 10.9.0.2:9000 ifindex 2 netns 4026532165 cpu 1\n"
		     EV(1, 1)
		     " 1)               |  udp_rcv() {\n"
		     " 1)               |    __udp4_lib_rcv() {\n"
		     " 1) + 87.835 us   |      udp4_lib_lookup2();\n"
		     " 1)   7.164 us    |      udp4_lib_lookup2();\n"
		     " 1) ! 535.443 us  |    }\n"
		     " 1) ! 600.000 us  |  }\n"
		     "\n"
		     "# packet 2 (l4, id 2): icmpv6 fd00::1 -> fd00::2 ifindex 2 netns 7 cpu 0 [INCOMPLETE: trace ends before the graph]\n"
		     " 0)               |  /* pktfilt_packet: seq=2 cpu=0 proto=icmpv6 saddr=fd00::1 daddr=fd00::2 sport=0 dport=0 ifindex=2 netns=7 */\n"
		     " 0)               |  icmpv6_rcv() {\n", s);
	free(s);
	pf_trace_free(t);
}

TEST(json_output)
{
	struct pf_trace *t = parse_str(small_trace);
	char *s;

	ASSERT_NE(NULL, t);
	s = render_str(pf_render_json, t);
	ASSERT_NE(NULL, s);
	EXPECT_STREQ("{\"seq\":1,\"stage\":\"l4\",\"id\":1,\"cpu\":1,\"proto\":\"udp\",\"saddr\":\"10.9.0.1\",\"daddr\":\"10.9.0.2\",\"sport\":4000,\"dport\":9000,\"ifindex\":2,\"netns\":4026532165,\"held_ns\":0,\"fate\":null,\"drop\":null,\"complete\":true,\"incomplete\":null,"
		     "\"nft\":[],\"graph\":{\"func\":\"udp_rcv\",\"duration_ns\":600000,\"children\":["
		     "{\"func\":\"__udp4_lib_rcv\",\"duration_ns\":535443,\"children\":["
		     "{\"func\":\"udp4_lib_lookup2\",\"duration_ns\":87835,\"children\":[]},"
		     "{\"func\":\"udp4_lib_lookup2\",\"duration_ns\":7164,\"children\":[]}]}]},"
		     "\"filter\":null}\n"
		     "{\"seq\":2,\"stage\":\"l4\",\"id\":2,\"cpu\":0,\"proto\":\"icmpv6\",\"saddr\":\"fd00::1\",\"daddr\":\"fd00::2\",\"sport\":0,\"dport\":0,\"ifindex\":2,\"netns\":7,\"held_ns\":0,\"fate\":null,\"drop\":null,\"complete\":false,\"incomplete\":\"trace ends before the graph\","
		     "\"nft\":[],\"graph\":{\"func\":\"icmpv6_rcv\",\"duration_ns\":null,\"children\":[]},"
		     "\"filter\":null}\n",
		     s);
	EXPECT_EQ(2, json_lines_ok(s));
	free(s);
	pf_trace_free(t);

	/* Escaping: quotes, backslashes, controls, bad UTF-8, good UTF-8. */
	t = parse_str(" 0)               |  /* pktfilt_packet: seq=3 proto=a\"b saddr=c\\d\x01\xff\xc3\xa9 */\n");
	ASSERT_NE(NULL, t);
	s = render_str(pf_render_json, t);
	ASSERT_NE(NULL, s);
	EXPECT_NE(NULL, strstr(s, "\"proto\":\"a\\\"b\",\"saddr\":\"c\\\\d\\u0001\\ufffd\xc3\xa9\""));
	EXPECT_EQ(1, json_lines_ok(s));
	EXPECT_NE(NULL, strstr(s, "\"graph\":null"));
	free(s);
	pf_trace_free(t);
}

/* Through the streaming renderer, with the filter that traced @t. */
static char *render_filter(enum pf_format fmt, const struct pf_trace *t,
			   const char *filter)
{
	struct pf_render_opts opts = { .filter = filter };
	struct pf_render *r;
	char *buf = NULL;
	size_t len = 0, i;
	FILE *m = open_memstream(&buf, &len);
	int err = 0;

	if (!m)
		return NULL;
	r = pf_render_new(fmt, m, &opts);
	for (i = 0; r && !err && i < t->npackets; i++)
		err = pf_render_packet(r, t->packets[i]);
	if (!r || pf_render_end(r) || err) {
		fclose(m);
		free(buf);
		return NULL;
	}
	fclose(m);
	return buf;
}

/* pktfilt trace's filter: the last member of each JSON line, escaped. */
TEST(json_filter)
{
	static const char filter[] =
		"--proto udp --count 2 --at rx 'udp and ip[8] > 1 or \"it'\\''s\"'";
	struct pf_trace *t = parse_str(small_trace);
	char *s, *line;
	int n = 0;

	ASSERT_NE(NULL, t);
	s = render_filter(PF_FORMAT_JSON, t, filter);
	ASSERT_NE(NULL, s);
	EXPECT_EQ(2, json_lines_ok(s));
	for (line = s; *line; line = strchr(line, '\n') + 1) {
		static const char end[] =
			"]},\"filter\":\"--proto udp --count 2 --at rx 'udp and ip[8] > 1 or \\\"it'\\\\''s\\\"'\"}\n";
		const char *f = strstr(line, "]},\"filter\":");

		EXPECT_EQ(0, strncmp(line, "{\"seq\":", 7));
		ASSERT_NE(NULL, f);
		EXPECT_EQ(0, strncmp(f, end, sizeof(end) - 1));
		n++;
	}
	EXPECT_EQ(2, n);
	free(s);
	/* Without one (report of a raw trace): null. */
	s = render_filter(PF_FORMAT_JSON, t, NULL);
	ASSERT_NE(NULL, s);
	EXPECT_NE(NULL, strstr(s, "[]}]}]},\"filter\":null}\n{\"seq\":2,"));
	free(s);
	/* The other formats do not carry it, chrome's otherData aside. */
	s = render_filter(PF_FORMAT_TEXT, t, filter);
	ASSERT_NE(NULL, s);
	EXPECT_EQ(NULL, strstr(s, "--proto"));
	free(s);
	s = render_filter(PF_FORMAT_CHROME, t, filter);
	ASSERT_NE(NULL, s);
	EXPECT_NE(NULL, strstr(s, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"pktfilt\",\"filter\":\"--proto udp --count 2 --at rx 'udp and ip[8] > 1 or \\\"it'\\\\''s\\\"'\"}}\n"));
	free(s);
	s = render_filter(PF_FORMAT_CHROME, t, NULL);
	ASSERT_NE(NULL, s);
	EXPECT_NE(NULL, strstr(s, "\"otherData\":{\"generator\":\"pktfilt\",\"filter\":null}}\n"));
	free(s);
	pf_trace_free(t);
}

TEST(folded_output)
{
	struct pf_trace *t = parse_str(small_trace);
	size_t lines;
	char *s;

	ASSERT_NE(NULL, t);
	s = render_str(pf_render_folded, t);	/* warns about packet 2 */
	ASSERT_NE(NULL, s);
	EXPECT_STREQ("udp_rcv 64557\n"
		     "udp_rcv;__udp4_lib_rcv 440444\n"
		     "udp_rcv;__udp4_lib_rcv;udp4_lib_lookup2 94999\n", s);
	EXPECT_EQ(600000, folded_sum(s, &lines));
	free(s);
	pf_trace_free(t);

	/* Children longer than their parent: clamped, and taken back. */
	t = parse_str(EV(1, 0)
		      " 0)               |  udp_rcv() {\n"
		      " 0)               |    a() {\n"
		      " 0) * 12345.67 us |      b();\n"
		      " 0)   5.000 us    |      c();\n"
		      " 0) * 12345.67 us |    }\n"
		      " 0) * 12350.00 us |  }\n");
	ASSERT_NE(NULL, t);
	s = render_str(pf_render_folded, t);
	ASSERT_NE(NULL, s);
	EXPECT_STREQ("udp_rcv 0\n"
		     "udp_rcv;a 0\n"
		     "udp_rcv;a;b 12345000\n"
		     "udp_rcv;a;c 5000\n", s);
	EXPECT_EQ(12350000, folded_sum(s, &lines));
	free(s);
	pf_trace_free(t);
}

TEST(svg_output)
{
	struct pf_trace *t = parse_str(EV(1, 0)
		" 0)               |  udp_rcv() {\n"
		" 0)   1.000 us    |    a<&>\"'();\n"
		" 0)   4.000 us    |  }\n");
	char *s;

	ASSERT_NE(NULL, t);
	s = render_str(pf_render_svg, t);
	ASSERT_NE(NULL, s);
	EXPECT_EQ(0, strncmp(s, "<?xml", 5));
	EXPECT_NE(NULL, strstr(s, "<title>a&lt;&amp;&gt;&quot;&apos; (1.000 us, 25.00%)</title>"));
	EXPECT_NE(NULL, strstr(s, "<title>udp_rcv (4.000 us, 100.00%)</title>"));
	EXPECT_NE(NULL, strstr(s, "packet 1 (l4, id 1): udp 10.9.0.1:4000 -&gt; 10.9.0.2:9000"));
	EXPECT_NE(NULL, strstr(s, ", 4.000 us, fate unknown</text>"));
	EXPECT_NE(NULL, strstr(s, "]]></script>\n</svg>\n"));
	EXPECT_NE(NULL, strstr(s, ">Search</text>"));
	EXPECT_NE(NULL, strstr(s, ">Reset zoom</text>"));
	EXPECT_EQ(NULL, strstr(s, "a<"));
	free(s);
	pf_trace_free(t);
}


/* --- stages, packet ids, pktfilt_free (version 2) ---------------------------- */

#define EV2(seq, cpu, stage, id, root) \
	" " #cpu ")               |  /* pktfilt_packet: seq=" #seq " cpu=" #cpu \
	" proto=udp saddr=10.9.0.1 daddr=10.9.0.2 sport=4000 dport=9000" \
	" ifindex=2 netns=4026532165 stage=" stage " id=" #id " root=" root " */\n"


/* Occurrences of @needle in @s. */
static size_t count_str(const char *s, const char *needle)
{
	size_t n = 0;

	while ((s = strstr(s, needle))) {
		n++;
		s += strlen(needle);
	}
	return n;
}

TEST(html_output)
{
	/* Names from a hostile trace: markup, a line separator, bad UTF-8. */
	struct pf_trace *t = parse_str(EV(1, 0)
		" 0)               |  udp_rcv() {\n"
		" 0)   1.000 us    |    </script><script>pwned=1//();\n"
		" 0)   1.000 us    |    a<&>\"'\\\xe2\x80\xa8\xff();\n"
		" 0)   4.000 us    |  }\n"
		EV(2, 0)
		" 0)               |  udp_rcv() {\n"
		" 0)               |    __udp4_lib_rcv() {\n"
		" 0)   1.000 us    |      udp4_lib_lookup2();\n");
	char *s, *p;

	ASSERT_NE(NULL, t);
	ASSERT_EQ(2, t->npackets);
	s = render_str(pf_render_html, t);
	ASSERT_NE(NULL, s);
	EXPECT_EQ(0, strncmp(s, "<!DOCTYPE html>", 15));
	EXPECT_NE(NULL, strstr(s, "</body></html>\n"));
	/* Nothing fetched: the page says so to the browser. */
	EXPECT_NE(NULL, strstr(s, "default-src 'none'"));
	/* The names stay inside their JSON strings. */
	EXPECT_EQ(NULL, strstr(s, "<script>pwned"));
	EXPECT_EQ(NULL, strstr(s, "a<&>"));
	EXPECT_NE(NULL, strstr(s, "\"\\u003c/script\\u003e\\u003cscript\\u003epwned=1//\",1000,0"));
	EXPECT_NE(NULL, strstr(s, "\"a\\u003c\\u0026\\u003e\\\"'\\\\\\u2028\\ufffd\",1000,0"));
	/* meta, header and graph of each packet, the script: nothing else */
	EXPECT_EQ(1 + 2 * 2 + 1, count_str(s, "<script"));
	EXPECT_EQ(1 + 2 * 2 + 1, count_str(s, "</script"));
	/* The first packet: complete, its graph flat in call order. */
	EXPECT_NE(NULL, strstr(s, "<script type=\"application/json\" class=\"pf-h\">{\"seq\":1,\"stage\":\"l4\","));
	EXPECT_NE(NULL, strstr(s, ",\"complete\":true,\"incomplete\":null,\"depthcut\":false,"
				  "\"root\":\"udp_rcv\",\"dur\":4000,\"calls\":3}"));
	EXPECT_NE(NULL, strstr(s, "class=\"pf-g\">[\"udp_rcv\",4000,2\n,"));
	/* The second: the trace ends inside it; its calls did not return. */
	p = strstr(s, "{\"seq\":2,");
	ASSERT_NE(NULL, p);
	EXPECT_NE(NULL, strstr(p, "\"complete\":false,\"incomplete\":\"trace ends before the graph\""));
	EXPECT_NE(NULL, strstr(p, "\"root\":\"udp_rcv\",\"dur\":null,\"calls\":3}"));
	EXPECT_NE(NULL, strstr(p, "[\"udp_rcv\",null,1\n,\"__udp4_lib_rcv\",null,1\n,\"udp4_lib_lookup2\",1000,0\n]"));
	/* The fate: unknown here. */
	EXPECT_NE(NULL, strstr(s, "\"fate\":null,\"reason\":null,\"dfunc\":null"));
	free(s);
	pf_trace_free(t);
}

TEST(html_fate_and_no_packet)
{
	struct pf_trace *t = parse_str(EV2(1, 0, "rx", 1, "ip_rcv")
		" 0)               |  ip_rcv() {\n"
		" 0)               |    __udp4_lib_rcv() {\n"
		" 0)               |      kfree_skb_reason() {\n"
		" 0)               |        /* pktfilt_free: id=1 reason=NO_SOCKET func=return_to_handler+0x0/0x40 */\n"
		" 0)   1.000 us    |      }\n"
		" 0)   2.000 us    |    }\n"
		" 0)   3.000 us    |  }\n");
	struct pf_trace *none = parse_str("# tracer: function_graph\n");
	char *s;

	ASSERT_NE(NULL, t);
	ASSERT_NE(NULL, none);
	s = render_str(pf_render_html, t);
	ASSERT_NE(NULL, s);
	EXPECT_NE(NULL, strstr(s, "\"fate\":\"dropped\",\"reason\":\"NO_SOCKET\",\"dfunc\":\"__udp4_lib_rcv\""));
	free(s);
	/* No packet: a page all the same, with its script. */
	s = render_str(pf_render_html, none);
	ASSERT_NE(NULL, s);
	EXPECT_EQ(0, count_str(s, "class=\"pf-h\""));
	EXPECT_NE(NULL, strstr(s, "</script>\n</body></html>\n"));
	free(s);
	pf_trace_free(t);
	pf_trace_free(none);
}

/*
 * A version 5 module leaves func= out of a free inside a graph (it would
 * name function_graph's trampoline): the caller comes from the graph; a
 * free outside a graph keeps the func= it has.
 */
TEST(free_without_func)
{
	struct pf_trace *t = parse_str(EV2(1, 0, "tx", 1, "nf_hook_slow")
		" 0)               |  nf_hook_slow() {\n"
		" 0)               |    nft_do_chain() {\n"
		" 0)               |      kfree_skb_reason() {\n"
		" 0)               |        /* pktfilt_free: id=1 reason=NETFILTER_DROP */\n"
		" 0)   1.000 us    |      }\n"
		" 0)   2.000 us    |    }\n"
		" 0)   3.000 us    |  }\n"
		EV2(2, 0, "tx", 2, "nf_hook_slow")
		" 0)   1.000 us    |  nf_hook_slow();\n"
		" 0)               |  /* pktfilt_free: id=2 reason=NO_SOCKET func=__udp4_lib_rcv+0x5e2/0x9a0 */\n");

	ASSERT_NE(NULL, t);
	ASSERT_EQ(2, t->npackets);
	EXPECT_EQ(PF_FATE_DROPPED, t->packets[0]->fate);
	EXPECT_STREQ("NETFILTER_DROP", t->packets[0]->drop_reason);
	EXPECT_STREQ("nft_do_chain", t->packets[0]->drop_func);
	EXPECT_STREQ("nf_hook_slow", t->packets[0]->root);
	EXPECT_EQ(PF_FATE_DROPPED, t->packets[1]->fate);
	EXPECT_STREQ("__udp4_lib_rcv", t->packets[1]->drop_func);
	pf_trace_free(t);
}

/*
 * nftables verdicts (pktfilt_nft, module/nft.c) inside a graph, in 6.12's
 * format: nftables' tracing functions around them are left out of the
 * tree and the text, each verdict is kept in order with its rule's text
 * (rule=, from pktfilt trace), shown at its place at the depth of the
 * graph around it, and the drop names the rule that decided it.
 */
#define NFT_TRACE \
	EV2(1, 0, "rx", 1, "ip_rcv") \
	" 0)               |  ip_rcv() {\n" \
	" 0)               |    nf_hook_slow() {\n" \
	" 0)               |      nft_do_chain_inet [nf_tables]() {\n" \
	" 0)   1.000 us    |        nft_trace_init [nf_tables]();\n" \
	" 0)               |        nft_do_chain [nf_tables]() {\n" \
	" 0)   1.000 us    |          nft_meta_get_eval [nf_tables]();\n" \
	" 0)               |          __nft_trace_packet [nf_tables]() {\n" \
	" 0)               |            nft_trace_notify [nf_tables]() {\n" \
	" 0)               |              /* pktfilt_nft: id=1 family=inet table=pfnft chain=in handle=4 type=rule verdict=jump target=sub netns=4026532165 rule=udp dport 7790-7791 jump sub */\n" \
	" 0)   1.000 us    |            }\n" \
	" 0)   2.000 us    |          }\n" \
	" 0)               |          __nft_trace_packet [nf_tables]() {\n" \
	" 0)               |            /* pktfilt_nft: id=1 family=inet table=pfnft chain=in handle=0 type=policy verdict=accept target=- netns=4026532165 */\n" \
	" 0)   1.000 us    |            nft_trace_notify [nf_tables]();\n" \
	" 0)   2.000 us    |          }\n" \
	" 0)               |          /* pktfilt_nft: id=1 family=inet table=jt chain=in handle=7 type=rule verdict=drop target=- netns=4026532165 rule=udp dport 7778 counter drop */\n" \
	" 0)   1.000 us    |          nft_trace_notify [nf_tables]();\n" \
	" 0)               |          kfree_skb_reason() {\n" \
	" 0)               |            /* pktfilt_free: id=1 reason=NETFILTER_DROP */\n" \
	" 0)   1.000 us    |          }\n" \
	" 0)   9.000 us    |        }\n" \
	" 0)  10.000 us    |      }\n" \
	" 0)  11.000 us    |    }\n" \
	" 0)  12.000 us    |  }\n"

TEST(nft_verdicts)
{
	struct pf_trace *t = parse_str(NFT_TRACE);
	const struct pf_node *chain;
	const struct pf_packet *pkt;
	char *s;

	ASSERT_NE(NULL, t);
	ASSERT_EQ(1, t->npackets);
	pkt = t->packets[0];
	EXPECT_TRUE(pkt->complete);
	EXPECT_EQ(0, t->stats.garbage);
	EXPECT_EQ(3, t->stats.nft);
	ASSERT_EQ(3, pkt->nnft);
	EXPECT_STREQ("inet", pkt->nft[0].family);
	EXPECT_STREQ("pfnft", pkt->nft[0].table);
	EXPECT_STREQ("in", pkt->nft[0].chain);
	EXPECT_EQ(4, pkt->nft[0].handle);
	EXPECT_STREQ("rule", pkt->nft[0].type);
	EXPECT_STREQ("jump", pkt->nft[0].verdict);
	EXPECT_STREQ("sub", pkt->nft[0].target);
	EXPECT_STREQ("udp dport 7790-7791 jump sub", pkt->nft[0].rule);
	EXPECT_STREQ("nft_do_chain", pkt->nft[0].in);
	EXPECT_EQ(4026532165UL, pkt->nft[0].netns);
	EXPECT_EQ(0, pkt->nft[1].handle);
	EXPECT_STREQ("policy", pkt->nft[1].type);
	EXPECT_STREQ("", pkt->nft[1].target);
	EXPECT_EQ(NULL, pkt->nft[1].rule);
	EXPECT_STREQ("drop", pkt->nft[2].verdict);
	ASSERT_NE(NULL, pf_nft_fate(pkt));
	EXPECT_EQ(7, pf_nft_fate(pkt)->handle);
	/* The tree: nft_do_chain has its own calls only. */
	chain = child(child(child(pkt->graph, 0), 0), 0);
	ASSERT_NE(NULL, chain);
	EXPECT_STREQ("nft_do_chain [nf_tables]", chain->func);
	ASSERT_EQ(2, chain->nchildren);
	EXPECT_STREQ("nft_meta_get_eval [nf_tables]", chain->children[0]->func);
	EXPECT_STREQ("kfree_skb_reason", chain->children[1]->func);
	EXPECT_EQ(1, child(child(pkt->graph, 0), 0)->nchildren);

	s = render_str(pf_render_text, t);
	ASSERT_NE(NULL, s);
	EXPECT_NE(NULL, strstr(s, "\n# dropped: NETFILTER_DROP by inet jt in handle 7: udp dport 7778 counter drop\n"));
	EXPECT_NE(NULL, strstr(s, "\n 0)               |          /* nft inet pfnft in handle 4: jump sub [udp dport 7790-7791 jump sub] */\n"));
	EXPECT_NE(NULL, strstr(s, "\n 0)               |          /* nft inet pfnft in policy: accept */\n"));
	EXPECT_NE(NULL, strstr(s, "\n 0)               |          /* nft inet jt in handle 7: drop [udp dport 7778 counter drop] */\n"));
	EXPECT_EQ(NULL, strstr(s, "nft_trace"));
	EXPECT_EQ(NULL, strstr(s, "pktfilt_nft"));
	free(s);

	s = render_str(pf_render_json, t);
	ASSERT_NE(NULL, s);
	EXPECT_NE(NULL, strstr(s, "\"nft\":[{\"family\":\"inet\",\"table\":\"pfnft\",\"chain\":\"in\",\"handle\":4,\"type\":\"rule\",\"verdict\":\"jump\",\"target\":\"sub\",\"rule\":\"udp dport 7790-7791 jump sub\",\"in\":\"nft_do_chain\"},"
			       "{\"family\":\"inet\",\"table\":\"pfnft\",\"chain\":\"in\",\"handle\":null,\"type\":\"policy\",\"verdict\":\"accept\",\"target\":null,\"rule\":null,\"in\":\"nft_do_chain\"},"
			       "{\"family\":\"inet\",\"table\":\"jt\",\"chain\":\"in\",\"handle\":7,\"type\":\"rule\",\"verdict\":\"drop\",\"target\":null,\"rule\":\"udp dport 7778 counter drop\",\"in\":\"nft_do_chain\"}],"));
	EXPECT_EQ(NULL, strstr(s, "nft_trace"));
	free(s);

	/* chrome: instants at their place, the deciding rule in the root's. */
	s = render_str(pf_render_chrome, t);
	ASSERT_NE(NULL, s);
	EXPECT_EQ(3, count_str(s, "\"cat\":\"nft\""));
	EXPECT_NE(NULL, strstr(s, "{\"name\":\"inet pfnft in handle 4: jump sub [udp dport 7790-7791 jump sub]\",\"cat\":\"nft\",\"ph\":\"i\""));
	EXPECT_NE(NULL, strstr(s, "\"drop_by\":\"inet jt in handle 7: udp dport 7778 counter drop\""));
	free(s);
	/* folded stacks (and so the SVG): the fate frame names the rule. */
	s = render_str(pf_render_folded, t);
	ASSERT_NE(NULL, s);
	EXPECT_NE(NULL, strstr(s, "[dropped: NETFILTER_DROP by inet jt in handle 7: udp dport 7778 counter drop];ip_rcv;"));
	EXPECT_EQ(NULL, strstr(s, "nft_trace"));
	free(s);
	pf_trace_free(t);
}

/* Verdicts not understood, or outside any graph, are not a packet's. */
TEST(nft_verdicts_odd)
{
	struct pf_trace *t = parse_str(
		" 0)               |  /* pktfilt_nft: id=1 family=inet table=jt chain=in handle=7 type=rule verdict=drop target=- netns=1 */\n"
		EV2(1, 0, "rx", 1, "ip_rcv")
		" 0)               |  ip_rcv() {\n"
		" 0)               |    /* pktfilt_nft: id=1 family=inet table=jt handle=7 */\n"
		" 0)               |    /* pktfilt_nft: id=1 family=inet table=jt chain=in handle=x */\n"
		" 0)               |    /* pktfilt_nft: id=1 table=t chain=c handle=0 rule= */\n"
		" 0)               |    /* pktfilt_nft: */\n"
		" 0)   2.000 us    |  }\n");

	ASSERT_NE(NULL, t);
	ASSERT_EQ(1, t->npackets);
	EXPECT_EQ(3, t->stats.garbage);
	ASSERT_EQ(1, t->packets[0]->nnft);
	EXPECT_STREQ("t", t->packets[0]->nft[0].table);
	EXPECT_EQ(NULL, t->packets[0]->nft[0].rule);
	EXPECT_EQ(NULL, pf_nft_fate(t->packets[0]));
	pf_trace_free(t);
}

/*
 * A rule found in `nft -a -s list ruleset`'s text (nftables 1.0.6) by its
 * table, chain and handle; an iptables-nft rule looks the same.
 */
TEST(nft_rule_find)
{
	static const char ruleset[] =
		"table inet jt { # handle 1\n"
		"\tset blocked { # handle 3\n"
		"\t\ttype ipv4_addr\n"
		"\t\telements = { 10.0.0.1 }\n"
		"\t}\n"
		"\n"
		"\tchain in { # handle 1\n"
		"\t\ttype filter hook input priority filter; policy accept;\n"
		"\t\tudp dport 7778 counter drop # handle 7\n"
		"\t\ttcp dport 7778 counter drop # handle 17\n"
		"\t}\n"
		"\n"
		"\tchain \"my chain\" { # handle 2\n"
		"\t\tip saddr @blocked drop # handle 8\n"
		"\t}\n"
		"}\n"
		"table ip filter { # handle 2\n"
		"\tchain INPUT { # handle 1\n"
		"\t\ttype filter hook input priority filter; policy accept;\n"
		"\t\tmeta l4proto udp udp dport 7778 counter drop # handle 7\n"
		"\t}\n"
		"}\n";
	char buf[256];

	ASSERT_EQ(0, pf_nft_rule_find(ruleset, "inet", "jt", "in", 7, buf, sizeof(buf)));
	EXPECT_STREQ("udp dport 7778 counter drop", buf);
	ASSERT_EQ(0, pf_nft_rule_find(ruleset, "inet", "jt", "in", 17, buf, sizeof(buf)));
	EXPECT_STREQ("tcp dport 7778 counter drop", buf);
	ASSERT_EQ(0, pf_nft_rule_find(ruleset, "inet", "jt", "my chain", 8, buf, sizeof(buf)));
	EXPECT_STREQ("ip saddr @blocked drop", buf);
	ASSERT_EQ(0, pf_nft_rule_find(ruleset, "ip", "filter", "INPUT", 7, buf, sizeof(buf)));
	EXPECT_STREQ("meta l4proto udp udp dport 7778 counter drop", buf);
	EXPECT_EQ(-ENOENT, pf_nft_rule_find(ruleset, "inet", "jt", "in", 1, buf, sizeof(buf)));
	EXPECT_EQ(-ENOENT, pf_nft_rule_find(ruleset, "ip6", "jt", "in", 7, buf, sizeof(buf)));
	EXPECT_EQ(-ENOENT, pf_nft_rule_find(ruleset, "inet", "jt", "blocked", 3, buf, sizeof(buf)));
	EXPECT_EQ(-ENOENT, pf_nft_rule_find("", "inet", "jt", "in", 7, buf, sizeof(buf)));
}

static char *fixture_read(const char *kernel, const char *name, size_t *len);

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* Streamed in chunks of @chunk bytes: the packets, copied as they come. */
struct collected {
	char text[16384];
	size_t len, n;
};

static int collect_text(void *arg, const struct pf_packet *pkt)
{
	struct collected *c = arg;
	FILE *m = fmemopen(c->text + c->len, sizeof(c->text) - c->len, "w");

	if (!m)
		return -ENOMEM;
	pf_render_text_packet(m, pkt);
	c->len += (size_t)ftell(m);
	fclose(m);
	c->n++;
	return 0;
}

static struct pf_trace *stream_str(const char *s, size_t len, size_t chunk,
				   struct collected *c)
{
	struct pf_fgraph *p = pf_fgraph_new_stream(collect_text, c);
	size_t off;

	memset(c, 0, sizeof(*c));
	if (!p)
		return NULL;
	for (off = 0; off < len; off += chunk)
		if (pf_fgraph_feed(p, s + off, len - off < chunk ?
				   len - off : chunk))
			break;
	return pf_fgraph_finish(p);
}

/*
 * fixtures/stages/rx-tx.txt, written by hand in 6.12's format: a packet
 * sent (tx, root ip_local_out, through veth) and received in the other
 * namespace (rx, root ip_rcv) under one id, dropped there with NO_SOCKET
 * (the free inside the rx graph, a second free of its id ignored), a
 * packet consumed later (the free outside any graph, on another CPU), a
 * protocol by number without a free.
 */
TEST(stages_fixture)
{
	struct pf_trace *t;
	struct collected c;
	const struct pf_packet *pkt;
	size_t len, i;
	char *buf = fixture_read("stages", "rx-tx", &len), *out;

	ASSERT_NE(NULL, buf);
	t = pf_fgraph_parse_buf(buf, len);
	ASSERT_NE(NULL, t);
	ASSERT_EQ(4, t->npackets);
	EXPECT_EQ(0, t->stats.garbage);
	EXPECT_EQ(0, t->stats.noise + t->stats.stray);
	EXPECT_EQ(0, pf_trace_incomplete(t));
	EXPECT_EQ(3, t->stats.frees);
	EXPECT_EQ(0, t->stats.frees_unmatched);

	pkt = t->packets[0];
	EXPECT_STREQ("tx", pkt->stage);
	EXPECT_EQ(1, pkt->id);
	EXPECT_TRUE(pkt->has_id);
	EXPECT_STREQ("ip_local_out", pkt->root);
	EXPECT_STREQ("ip_local_out", pkt->graph->func);
	EXPECT_EQ(14000, pkt->graph->duration_ns);
	EXPECT_EQ(PF_FATE_DROPPED, pkt->fate);
	EXPECT_STREQ("NO_SOCKET", pkt->drop_reason);
	EXPECT_STREQ("__udp4_lib_rcv", pkt->drop_func);

	pkt = t->packets[1];
	EXPECT_STREQ("rx", pkt->stage);
	EXPECT_EQ(1, pkt->id);
	EXPECT_EQ(2, pkt->seq);
	EXPECT_STREQ("ip_rcv", pkt->graph->func);
	EXPECT_EQ(27000, pkt->graph->duration_ns);
	EXPECT_EQ(PF_FATE_DROPPED, pkt->fate);
	EXPECT_STREQ("NO_SOCKET", pkt->drop_reason);
	EXPECT_STREQ("__udp4_lib_rcv", pkt->drop_func);
	/* The free is in its text, at its point; the later one is not. */
	EXPECT_NE(NULL, strstr(pkt->raw_text, "__icmp_send();\n 1)               |              kfree_skb_reason() {\n 1)               |                  /* pktfilt_free: id=1 reason=NO_SOCKET"));
	EXPECT_EQ(NULL, strstr(pkt->raw_text, "NOT_SPECIFIED"));

	pkt = t->packets[2];
	EXPECT_EQ(2, pkt->id);
	EXPECT_EQ(PF_FATE_CONSUMED, pkt->fate);
	EXPECT_STREQ("", pkt->drop_func);		/* func=0x0 */

	pkt = t->packets[3];
	EXPECT_EQ(3, pkt->id);
	EXPECT_STREQ("0x32", pkt->proto);
	EXPECT_EQ(PF_FATE_UNKNOWN, pkt->fate);
	EXPECT_TRUE(pkt->complete);

	/* Text: stage and id in each header, the fate under it. */
	out = render_str(pf_render_text, t);
	ASSERT_NE(NULL, out);
	EXPECT_TRUE(starts(out, "# packet 1 (tx, id 1): udp 10.9.0.1:4000 -> 10.9.0.2:9000 ifindex 3 netns 4026532100 cpu 0\n# dropped: NO_SOCKET in __udp4_lib_rcv\n 0)"));
	EXPECT_NE(NULL, strstr(out, "\n# packet 2 (rx, id 1): udp 10.9.0.1:4000 -> 10.9.0.2:9000 ifindex 2 netns 4026532165 cpu 1\n# dropped: NO_SOCKET in __udp4_lib_rcv\n"));
	EXPECT_NE(NULL, strstr(out, "\n# packet 3 (rx, id 2): udp 10.9.0.1:4001 -> 10.9.0.2:9001 ifindex 2 netns 4026532165 cpu 0\n# consumed\n"));
	EXPECT_NE(NULL, strstr(out, "\n# packet 4 (rx, id 3): 0x32 10.9.0.1 -> 10.9.0.2 ifindex 2 netns 4026532165 cpu 1\n 1)"));
	free(out);

	/* JSON: stage, id, fate, drop. */
	out = render_str(pf_render_json, t);
	ASSERT_NE(NULL, out);
	EXPECT_EQ(4, json_lines_ok(out));
	EXPECT_TRUE(starts(out, "{\"seq\":1,\"stage\":\"tx\",\"id\":1,\"cpu\":0,"));
	EXPECT_NE(NULL, strstr(out, "{\"seq\":2,\"stage\":\"rx\",\"id\":1,\"cpu\":1,"));
	EXPECT_NE(NULL, strstr(out, "\"netns\":4026532165,\"held_ns\":0,\"fate\":\"dropped\",\"drop\":{\"reason\":\"NO_SOCKET\",\"func\":\"__udp4_lib_rcv\"},\"complete\":true,\"incomplete\":null,\"nft\":[],\"graph\":{\"func\":\"ip_rcv\""));
	EXPECT_NE(NULL, strstr(out, "\"fate\":\"consumed\",\"drop\":null,"));
	EXPECT_NE(NULL, strstr(out, "\"proto\":\"0x32\""));
	EXPECT_NE(NULL, strstr(out, "\"fate\":null,\"drop\":null,"));
	free(out);

	/*
	 * Folded: each packet under a frame of its fate (packet 1 is the
	 * same packet as 2: its fate too), then the stages' roots; the
	 * packet whose fate the trace does not tell has no such frame.
	 */
	out = render_str(pf_render_folded, t);
	ASSERT_NE(NULL, out);
	EXPECT_TRUE(starts(out, "[consumed] 0\n[consumed];ip_rcv 1000\n"));
	EXPECT_NE(NULL, strstr(out, "\n[dropped: NO_SOCKET in __udp4_lib_rcv];ip_local_out;ip_output;ip_finish_output2;__dev_queue_xmit;dev_hard_start_xmit;veth_xmit [veth];__dev_forward_skb 2100\n"));
	EXPECT_NE(NULL, strstr(out, "\n[dropped: NO_SOCKET in __udp4_lib_rcv];ip_rcv;ip_rcv_finish;ip_local_deliver;ip_local_deliver_finish;udp_rcv;__udp4_lib_rcv;kfree_skb_reason;skb_release_head_state 1000\n"));
	EXPECT_NE(NULL, strstr(out, "\nip_rcv;ip_rcv_core 2000\n"));
	EXPECT_EQ(14000 + 27000 + 8000 + 3000, folded_sum(out, &i));
	free(out);

	/* SVG: the header of each. */
	out = render_str(pf_render_svg, t);
	ASSERT_NE(NULL, out);
	EXPECT_NE(NULL, strstr(out, ">packet 2 (rx, id 1): udp 10.9.0.1:4000 -&gt; 10.9.0.2:9000 ifindex 2 netns 4026532165 cpu 1, 27.000 us, dropped: NO_SOCKET in __udp4_lib_rcv</text>"));
	EXPECT_NE(NULL, strstr(out, ", 8.000 us, consumed</text>"));
	free(out);

	/* Streamed, in any chunks: the same packets, in order. */
	out = render_str(pf_render_text, t);
	ASSERT_NE(NULL, out);
	for (i = 1; i <= len; i = i < 64 ? i + 1 : i * 3) {
		struct pf_trace *st = stream_str(buf, len, i, &c);

		ASSERT_NE(NULL, st);
		EXPECT_EQ(4, c.n);
		EXPECT_EQ(4, st->stats.streamed);
		EXPECT_EQ(3, st->stats.frees);
		/* The streamed text lacks only the blank lines between. */
		EXPECT_EQ(strlen(out) - 3, c.len) TH_LOG("chunk %zu", i);
		pf_trace_free(st);
	}
	free(out);
	pf_trace_free(t);
	free(buf);
}

/* root= is the root: a handler called before it on its CPU is noise. */
TEST(root_from_event)
{
	struct pf_trace *t = parse_str(
		EV2(1, 0, "rx", 5, "ip_rcv")
		" 0)   1.000 us    |  udp_rcv();\n"
		" 0)               |  ip_rcv() {\n"
		" 0)   1.000 us    |    udp_rcv();\n"
		" 0)   2.000 us    |  }\n"
		/* Old events: a handler, not ip_rcv. */
		EV(2, 1)
		" 1)   1.000 us    |  ip_rcv();\n"
		" 1)   3.000 us    |  udp_rcv();\n"
		/* A suffix the compiler added: still the root. */
		EV2(3, 1, "tx", 6, "ip_local_out")
		" 1)   4.000 us    |  ip_local_out.part.0();\n");

	ASSERT_NE(NULL, t);
	ASSERT_EQ(3, t->npackets);
	EXPECT_STREQ("ip_rcv", t->packets[0]->graph->func);
	EXPECT_EQ(1, t->packets[0]->graph->nchildren);
	EXPECT_TRUE(t->packets[0]->complete);
	EXPECT_STREQ("udp_rcv", t->packets[1]->graph->func);
	EXPECT_STREQ("l4", t->packets[1]->stage);
	EXPECT_EQ(2, t->packets[1]->id);
	EXPECT_STREQ("ip_local_out.part.0", t->packets[2]->graph->func);
	EXPECT_EQ(2, t->stats.noise);
	pf_trace_free(t);

	/* An id that is not a number: the event is not understood. */
	t = parse_str(" 0)               |  /* pktfilt_packet: seq=1 cpu=0 proto=udp stage=rx id=x root=ip_rcv */\n");
	ASSERT_NE(NULL, t);
	EXPECT_EQ(0, t->npackets);
	EXPECT_EQ(1, t->stats.garbage);
	pf_trace_free(t);
}

/* A lazy filter's held packet (version 3): held_ns in text and JSON. */
TEST(held_packet)
{
	struct pf_trace *t = parse_str(
		" 0)               |  /* pktfilt_packet: seq=1 cpu=0 proto=udp saddr=10.9.0.1 daddr=10.9.0.2 sport=4000 dport=9000 ifindex=2 netns=7 stage=rx id=1 root=ip_rcv held_ns=270695965 */\n"
		" 0)   2.000 us    |  ip_rcv();\n"
		" 0)               |  /* pktfilt_packet: seq=2 cpu=0 proto=udp stage=rx id=2 root=ip_rcv held_ns=-1 */\n");
	char *s;

	ASSERT_NE(NULL, t);
	ASSERT_EQ(1, t->npackets);
	EXPECT_EQ(270695965, t->packets[0]->held_ns);
	/* A held_ns that is not a number: the event is not understood. */
	EXPECT_EQ(1, t->stats.garbage);
	s = render_str(pf_render_text, t);
	ASSERT_NE(NULL, s);
	EXPECT_NE(NULL, strstr(s, "# packet 1 (rx, id 1): udp 10.9.0.1:4000 -> 10.9.0.2:9000 ifindex 2 netns 7 cpu 0 held 270695.965 us\n"));
	free(s);
	s = render_str(pf_render_json, t);
	ASSERT_NE(NULL, s);
	EXPECT_NE(NULL, strstr(s, "\"netns\":7,\"held_ns\":270695965,\"fate\""));
	free(s);
	pf_trace_free(t);
}

/* Frees: in or out of graphs, the first of an id only, limits. */
TEST(free_events)
{
	char big[65536];
	size_t off = 0, i;
	struct pf_trace *t = parse_str(
		/* A free before any graph of its id: nothing to attach to. */
		" 0)               |  /* pktfilt_free: id=9 reason=CONSUMED func=0x0 */\n"
		EV2(1, 0, "rx", 9, "ip_rcv")
		" 0)   2.000 us    |  ip_rcv();\n"
		/* A free of id 9 again: the first one counted, this is ignored. */
		" 1)               |  /* pktfilt_free: id=9 reason=NETFILTER_DROP func=nf_hook_slow+0x44/0xb0 */\n"
		/* Dropped, the kernel not saying where; no id: not understood. */
		EV2(2, 1, "tx", 10, "ip_local_out")
		" 1)               |  ip_local_out() {\n"
		" 1)               |    /* pktfilt_free: id=10 reason=NOT_SPECIFIED func=0x0 */\n"
		" 1)               |    /* pktfilt_free: reason=NOT_SPECIFIED func=0x0 */\n"
		" 1)   2.000 us    |  }\n");
	char *out;

	ASSERT_NE(NULL, t);
	ASSERT_EQ(2, t->npackets);
	EXPECT_EQ(PF_FATE_UNKNOWN, t->packets[0]->fate);
	EXPECT_EQ(3, t->stats.frees);
	EXPECT_EQ(1, t->stats.frees_unmatched);
	EXPECT_EQ(1, t->stats.garbage);
	EXPECT_EQ(PF_FATE_DROPPED, t->packets[1]->fate);
	EXPECT_STREQ("NOT_SPECIFIED", t->packets[1]->drop_reason);
	out = render_str(pf_render_json, t);
	ASSERT_NE(NULL, out);
	EXPECT_NE(NULL, strstr(out, "\"fate\":\"dropped\",\"drop\":{\"reason\":\"NOT_SPECIFIED\",\"func\":null}"));
	free(out);
	out = render_str(pf_render_text, t);
	ASSERT_NE(NULL, out);
	EXPECT_NE(NULL, strstr(out, "\n# dropped: NOT_SPECIFIED\n"));
	free(out);
	pf_trace_free(t);

	/*
	 * PF_FGRAPH_FREE_WAIT packets closed after one: it stops waiting,
	 * and its free, when it comes, finds it no more.
	 */
	for (i = 0; i <= PF_FGRAPH_FREE_WAIT; i++)
		off += (size_t)snprintf(big + off, sizeof(big) - off,
			" 0)               |  /* pktfilt_packet: seq=%zu cpu=0 proto=udp stage=rx id=%zu root=ip_rcv */\n"
			" 0)   1.000 us    |  ip_rcv();\n", i + 1, i + 1);
	off += (size_t)snprintf(big + off, sizeof(big) - off,
		" 0)               |  /* pktfilt_free: id=1 reason=CONSUMED func=0x0 */\n"
		" 0)               |  /* pktfilt_free: id=2 reason=CONSUMED func=0x0 */\n");
	ASSERT_LT(off, sizeof(big) - 1);
	t = parse_str(big);
	ASSERT_NE(NULL, t);
	ASSERT_EQ(PF_FGRAPH_FREE_WAIT + 1, t->npackets);
	EXPECT_EQ(PF_FATE_UNKNOWN, t->packets[0]->fate);
	EXPECT_EQ(PF_FATE_CONSUMED, t->packets[1]->fate);
	EXPECT_EQ(1, t->stats.frees_unmatched);
	for (i = 0; i < t->npackets; i++)
		EXPECT_TRUE(t->packets[i]->done);
	pf_trace_free(t);
}

/* While its free may still come, a packet is not done, nor streamed. */
TEST(waiting_for_free)
{
	static const char trace[] =
		EV2(1, 0, "rx", 4, "ip_rcv")
		" 0)   1.000 us    |  ip_rcv();\n"
		EV(2, 1)
		" 1)   1.000 us    |  udp_rcv();\n";
	struct pf_fgraph *p = pf_fgraph_new();
	const struct pf_trace *t;
	struct collected c;
	struct pf_trace *done;

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, pf_fgraph_feed(p, trace, strlen(trace)));
	t = pf_fgraph_trace(p);
	ASSERT_EQ(2, t->npackets);
	EXPECT_FALSE(t->packets[0]->done);	/* id 4 waits */
	EXPECT_TRUE(t->packets[0]->complete);
	EXPECT_TRUE(t->packets[1]->done);	/* an old event: no wait */
	ASSERT_EQ(0, pf_fgraph_feed(p, " 1)               |  /* pktfilt_free: id=4 reason=IP_INHDR func=ip_rcv_core+0x1/0x2 */\n", 88));
	EXPECT_TRUE(t->packets[0]->done);
	EXPECT_EQ(PF_FATE_DROPPED, t->packets[0]->fate);
	pf_trace_free(pf_fgraph_finish(p));

	/* Streaming: held back in order until the end, then given. */
	done = stream_str(trace, strlen(trace), strlen(trace), &c);
	ASSERT_NE(NULL, done);
	EXPECT_EQ(2, c.n);
	EXPECT_TRUE(starts(c.text, "# packet 1 (rx, id 4): "));
	pf_trace_free(done);
}

/* --- the real traces ------------------------------------------------------------ */

struct fixture_want {
	const char *name;
	const char *root;	/* every graph's, or NULL */
	int packets;		/* -1: at least one */
	bool all_complete;
	bool lost;
	bool truncated;
};

static const struct fixture_want fixtures[] = {
	{ "udp-count3", "udp_rcv", 3, true, false, false },
	{ "tcp4", "tcp_v4_rcv", 1, true, false, false },
	{ "tcp6", "tcp_v6_rcv", 1, true, false, false },
	{ "icmp", "icmp_rcv", 1, true, false, false },
	{ "icmpv6", "icmpv6_rcv", 1, true, false, false },
	{ "cpus2", "udp_rcv", -1, true, false, false },
	{ "irqs", "udp_rcv", -1, true, false, false },
	{ "lost", NULL, -1, false, true, false },
	{ "udp-count3-truncated", "udp_rcv", 2, false, false, true },
};

static const char *const kernels[] = { "6.1", "6.12" };

/* selftests/unit/fixtures/KERNEL/NAME.txt, next to this binary. */
static char *fixture_read(const char *kernel, const char *name, size_t *len)
{
	char exe[PATH_MAX], path[PATH_MAX + 64], *slash, *buf = NULL;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *f;
	long size;

	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	snprintf(path, sizeof(path), "%s/fixtures/%s/%s.txt", exe, kernel, name);
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

static bool has_func(const struct pf_node *node, const char *func,
		     unsigned int min_depth, unsigned int depth)
{
	size_t i;

	if (depth >= min_depth && !strcmp(node->func, func))
		return true;
	for (i = 0; i < node->nchildren; i++)
		if (has_func(node->children[i], func, min_depth, depth + 1))
			return true;
	return false;
}

/* Every complete node has a duration at least its children's... almost. */
static bool nodes_complete(const struct pf_node *node)
{
	size_t i;

	if (!node->complete)
		return false;
	for (i = 0; i < node->nchildren; i++)
		if (!nodes_complete(node->children[i]))
			return false;
	return true;
}

static void check_fixture(struct __test_metadata *_metadata,
			  const char *kernel, const struct fixture_want *w)
{
	struct pf_trace *t;
	size_t len, i, ncomplete = 0;
	bool cpu_seen[2] = { false, false };
	char *buf = fixture_read(kernel, w->name, &len), *json;
	const char *line;

	ASSERT_NE(NULL, buf) TH_LOG("fixtures/%s/%s.txt missing", kernel, w->name);
	t = pf_fgraph_parse_buf(buf, len);
	ASSERT_NE(NULL, t);
	TH_LOG("%s/%s: %zu packets", kernel, w->name, t->npackets);

	/* Every line of a real trace is understood. */
	EXPECT_EQ(0, t->stats.garbage);
	EXPECT_EQ(w->truncated, t->stats.truncated);
	EXPECT_EQ(w->lost, pf_trace_lost(t));
	if (w->packets >= 0)
		EXPECT_EQ(w->packets, t->npackets);
	ASSERT_TRUE(t->npackets > 0);
	EXPECT_EQ(t->stats.events, t->npackets);
	if (w->all_complete) {
		EXPECT_EQ(0, pf_trace_incomplete(t));
	} else {
		EXPECT_TRUE(pf_trace_incomplete(t) > 0);
	}

	for (i = 0; i < t->npackets; i++) {
		const struct pf_packet *pkt = t->packets[i];

		if (w->root && pkt->graph)
			EXPECT_STREQ(w->root, pkt->graph->func);
		if (pkt->cpu < 2)
			cpu_seen[pkt->cpu] = true;
		EXPECT_TRUE(pkt->done);
		/* Version 1 events: l4, the seq for an id, no free. */
		EXPECT_STREQ("l4", pkt->stage);
		EXPECT_FALSE(pkt->has_id);
		EXPECT_EQ(pkt->seq, pkt->id);
		EXPECT_EQ(PF_FATE_UNKNOWN, pkt->fate);
		if (w->packets > 0 && w->all_complete)
			EXPECT_EQ(i + 1, pkt->seq);
		if (w->lost && !pkt->complete)
			EXPECT_TRUE(pkt->incomplete & (PF_INC_LOST | PF_INC_EOF))
				TH_LOG("packet %" PRIu64 ": %#x", pkt->seq,
				       pkt->incomplete);
		if (!pkt->complete)
			continue;
		ncomplete++;
		EXPECT_TRUE(nodes_complete(pkt->graph));
		EXPECT_TRUE(pkt->graph->duration_ns > 0);
	}
	if (!strcmp(w->name, "cpus2"))
		EXPECT_TRUE(cpu_seen[0] && cpu_seen[1]);
	if (!strcmp(w->name, "irqs")) {
		bool irq = false;

		for (i = 0; i < t->npackets; i++)
			irq |= has_func(t->packets[i]->graph,
					"__sysvec_apic_timer_interrupt", 1, 0);
		EXPECT_TRUE(irq) TH_LOG("no interrupt inside a graph");
	}
	if (w->truncated)
		EXPECT_EQ(PF_INC_EOF, t->packets[t->npackets - 1]->incomplete);

	/* JSON: valid, one line per packet; then against the folded stacks. */
	json = render_str(pf_render_json, t);
	ASSERT_NE(NULL, json);
	EXPECT_EQ((int)t->npackets, json_lines_ok(json));
	line = json;
	for (i = 0; i < t->npackets; i++) {
		struct pf_packet *pkt = t->packets[i];
		struct pf_trace one = one_packet(&t->packets[i]);
		uint64_t root_ns = json_root_ns(line);
		size_t nodes = pf_self_times(pkt, NULL, 0), lines;
		uint64_t *wts, sum = 0;
		char *folded;
		size_t k;

		line = strchr(line, '\n') + 1;
		if (!pkt->complete)
			continue;
		EXPECT_EQ(pkt->graph->duration_ns, root_ns);
		folded = render_str(pf_render_folded, &one);
		ASSERT_NE(NULL, folded);
		EXPECT_EQ(root_ns, folded_sum(folded, &lines))
			TH_LOG("packet %" PRIu64, pkt->seq);
		EXPECT_TRUE(lines > 0 && lines <= nodes);
		free(folded);
		wts = calloc(nodes, sizeof(*wts));
		ASSERT_NE(NULL, wts);
		EXPECT_EQ(nodes, pf_self_times(pkt, wts, nodes));
		for (k = 0; k < nodes; k++)
			sum += wts[k];
		EXPECT_EQ(pkt->graph->duration_ns, sum);
		free(wts);
	}
	free(json);

	/* All the complete packets at once: the same total. */
	{
		uint64_t total = 0;
		size_t lines;
		char *folded = render_str(pf_render_folded, t);

		ASSERT_NE(NULL, folded);
		for (i = 0; i < t->npackets; i++)
			if (t->packets[i]->complete)
				total += t->packets[i]->graph->duration_ns;
		EXPECT_EQ(total, folded_sum(folded, &lines));
		free(folded);
	}
	/* Text: every line of every packet is in the trace, in order. */
	{
		char *text = render_str(pf_render_text, t);

		ASSERT_NE(NULL, text);
		EXPECT_TRUE(strlen(text) <= len + 200 * t->npackets);
		free(text);
	}
	/* SVG: one rectangle per node of the complete packets, plus one. */
	{
		char *svg = render_str(pf_render_svg, t);
		const char *p = svg;
		size_t rects = 0, nodes = 0;

		ASSERT_NE(NULL, svg);
		while ((p = strstr(p, "<rect")))
			rects++, p++;
		for (i = 0; i < t->npackets; i++)
			if (t->packets[i]->complete)
				nodes += pf_self_times(t->packets[i], NULL, 0);
		EXPECT_EQ(nodes + 1, rects);
		free(svg);
	}
	EXPECT_TRUE(ncomplete > 0);
	pf_trace_free(t);
	free(buf);
}

TEST(fixtures_6_1)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(fixtures); i++)
		check_fixture(_metadata, kernels[0], &fixtures[i]);
}

TEST(fixtures_6_12)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(fixtures); i++)
		check_fixture(_metadata, kernels[1], &fixtures[i]);
}

/* Raw packet text is the trace's lines of that CPU, in order. */
TEST(fixture_text_is_the_trace)
{
	size_t len, i;
	char *buf = fixture_read("6.1", "cpus2", &len);
	struct pf_trace *t;

	ASSERT_NE(NULL, buf);
	t = pf_fgraph_parse_buf(buf, len);
	ASSERT_NE(NULL, t);
	for (i = 0; i < t->npackets; i++) {
		const struct pf_packet *pkt = t->packets[i];
		char tag[8];
		const char *p = pkt->raw_text, *from = buf;

		snprintf(tag, sizeof(tag), " %u) ", pkt->cpu);
		while (*p) {
			const char *nl = strchr(p, '\n');
			char *line = strndup(p, (size_t)(nl - p));
			const char *at = strstr(from, line);

			ASSERT_NE(NULL, at);
			EXPECT_EQ(0, strncmp(line, tag, strlen(tag)));
			from = at + strlen(line);
			free(line);
			p = nl + 1;
		}
	}
	pf_trace_free(t);
	free(buf);
}

/* --- issue 18: hostile input ------------------------------------------------ */

/*
 * Feed @len bytes from a heap block of exactly that size, so that ASan
 * sees any read past them; in @chunk-sized pieces (0: whole).
 */
static struct pf_trace *parse_exact(const char *s, size_t len, size_t chunk)
{
	struct pf_fgraph *p = pf_fgraph_new();
	char *buf = malloc(len ? len : 1);
	size_t off;

	if (!p || !buf) {
		pf_fgraph_free(p);
		free(buf);
		return NULL;
	}
	memcpy(buf, s, len);
	for (off = 0; off < len; off += chunk ? chunk : len)
		pf_fgraph_feed(p, buf + off,
			       chunk && len - off > chunk ? chunk : len - off);
	free(buf);
	return pf_fgraph_finish(p);
}

/* Render @t every way, into /dev/null, warnings included. */
static void render_all(struct __test_metadata *_metadata,
		       const struct pf_trace *t)
{
	int (*const fns[])(FILE *, const struct pf_trace *) = {
		pf_render_text, pf_render_json, pf_render_folded,
		pf_render_svg, pf_render_html,
	};
	FILE *null = fopen("/dev/null", "w"), *saved = stderr;
	size_t k;

	ASSERT_NE(NULL, null);
	stderr = null;
	for (k = 0; k < ARRAY_SIZE(fns); k++)
		EXPECT_EQ(0, fns[k](null, t));
	stderr = saved;
	fclose(null);
}

/*
 * Bug 1: "}" then a comment whose "*" "/" overlaps its "/" "*": the name's
 * length underflowed in parse_return() (SIGSEGV on the 4-byte file).
 */
TEST(issue18_return_comment_overlap)
{
	static const char *const inputs[] = {
		"}/*/", "}/*/\n", "} /*/", " 0)               |  }/*/\n",
		EV(1, 0) " 0)               |  udp_rcv() {\n"
		" 0)   1.000 us    |  }/*/\n",
		"}/**/", "} /* */",
	};
	size_t i, chunk;

	for (i = 0; i < ARRAY_SIZE(inputs); i++) {
		for (chunk = 0; chunk < 3; chunk++) {
			struct pf_trace *t = parse_exact(inputs[i],
							 strlen(inputs[i]),
							 chunk);

			ASSERT_NE(NULL, t);
			render_all(_metadata, t);
			pf_trace_free(t);
		}
	}
}

/*
 * Bug 2: the comment line "/" "*" "/": its length underflowed in
 * parse_body(), and is_event() read past the line, here the end of the
 * block fed.
 */
TEST(issue18_comment_overlap)
{
	static const char *const inputs[] = {
		"/*/\n", "/*/", " 0)               |  /*/\n", "  /*/  \n",
		EV(1, 0) " 0)               |  /*/\n",
		"/**/\n", "/* */\n",
	};
	size_t i, chunk;

	for (i = 0; i < ARRAY_SIZE(inputs); i++) {
		for (chunk = 0; chunk < 3; chunk++) {
			struct pf_trace *t = parse_exact(inputs[i],
							 strlen(inputs[i]),
							 chunk);

			ASSERT_NE(NULL, t);
			render_all(_metadata, t);
			pf_trace_free(t);
		}
	}
}

/*
 * Bug 3: a "[LOST EVENTS]" line whose CPU cannot be read was copied into
 * every open packet's text: packets open on many CPUs times many such
 * lines. Now it marks them all lost, and copies into none.
 */
TEST(issue18_lost_line_of_no_cpu)
{
	const size_t ncpus = 1024, nlost = 300;
	size_t cap = ncpus * 200 + nlost * 40, len = 0, i;
	char *buf = malloc(cap);
	struct pf_trace *t;

	ASSERT_NE(NULL, buf);
	for (i = 0; i < ncpus; i++)
		len += (size_t)snprintf(buf + len, cap - len,
			" %zu)               |  /* pktfilt_packet: seq=%zu cpu=%zu proto=udp */\n",
			i, i + 1, i);
	for (i = 0; i < nlost; i++)
		len += (size_t)snprintf(buf + len, cap - len,
					"CPU:x [LOST EVENTS]\n");
	t = pf_fgraph_parse_buf(buf, len);
	ASSERT_NE(NULL, t);
	ASSERT_EQ(ncpus, t->npackets);
	EXPECT_EQ(nlost, t->stats.lost_reports);
	EXPECT_EQ(nlost, t->stats.lost_unknown);
	for (i = 0; i < ncpus; i++) {
		const struct pf_packet *pkt = t->packets[i];

		EXPECT_FALSE(pkt->complete);
		EXPECT_TRUE(pkt->incomplete & PF_INC_LOST);
		/* Its own event line only. */
		EXPECT_EQ(NULL, strstr(pkt->raw_text, "LOST"));
		if (strstr(pkt->raw_text, "LOST"))
			break;
	}
	pf_trace_free(t);

	/* A packet opened after such a line is not marked by it. */
	t = parse_str("CPU:x [LOST EVENTS]\n" EV(1, 0)
		      " 0)   1.000 us    |  udp_rcv();\n");
	ASSERT_NE(NULL, t);
	ASSERT_EQ(1, t->npackets);
	EXPECT_TRUE(t->packets[0]->complete);
	pf_trace_free(t);
	free(buf);
}

static long peak_rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/*
 * Bug 4: folded output kept a copy of the whole call path for every call
 * (here 2 packets of 512 nested calls with 1000-character names: the
 * old code held 2 x 131 MB of paths). Now a tree of distinct stacks.
 */
TEST(issue18_folded_memory)
{
	const size_t depth = 512, namelen = 1000, npkt = 2;
	size_t cap = npkt * depth * (namelen + 80) * 2 + 4096, len = 0;
	char *buf = malloc(cap), *name = malloc(namelen + 1);
	struct pf_trace *t;
	size_t k, d, lines = 0;
	FILE *out;
	long before;
	int ch;

	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, name);
	for (k = 0; k < npkt; k++) {
		len += (size_t)snprintf(buf + len, cap - len, EV(1, 0));
		len += (size_t)snprintf(buf + len, cap - len,
					" 0)               |  udp_rcv() {\n");
		for (d = 1; d < depth; d++) {
			memset(name, 'a' + (int)(d % 26), namelen);
			name[namelen] = '\0';
			len += (size_t)snprintf(buf + len, cap - len,
						" 0)               |  %*s%s() {\n",
						(int)(2 * d), "", name);
		}
		for (d = depth; d-- > 0;)
			len += (size_t)snprintf(buf + len, cap - len,
						" 0) %8zu.000 us |  %*s}\n",
						d + 1, (int)(2 * d), "");
	}
	free(name);
	t = pf_fgraph_parse_buf(buf, len);
	free(buf);
	ASSERT_NE(NULL, t);
	ASSERT_EQ(npkt, t->npackets);
	ASSERT_TRUE(t->packets[0]->complete);
	/* Its output is 131 MB: into a file, not memory. */
	out = tmpfile();
	ASSERT_NE(NULL, out);
	before = peak_rss_kb();
	EXPECT_EQ(0, pf_render_folded(out, t));
	rewind(out);
	while ((ch = getc(out)) != EOF)
		lines += ch == '\n';
	fclose(out);
	EXPECT_EQ(depth, lines);
	/* The distinct stacks are 512, printed once each: a few MB. */
	EXPECT_LT(peak_rss_kb() - before, 96 * 1024);
	TH_LOG("folded: peak RSS grew by %ld KiB", peak_rss_kb() - before);
	pf_trace_free(t);
}

/*
 * Bug 5: counts wrapped: two [LOST 9999999999999999999 EVENTS] summed
 * modulo 2^64, a 20-digit seq read as 0. Now sums saturate and say so,
 * numbers are exact, and numbers that do not fit are not understood.
 */
TEST(issue18_exact_counts)
{
	struct pf_trace *t;
	char *summary = NULL;
	size_t slen = 0;
	FILE *m;

	t = parse_str("CPU:0 [LOST 9999999999999999999 EVENTS]\n"
		      "CPU:0 [LOST 9999999999999999999 EVENTS]\n");
	ASSERT_NE(NULL, t);
	EXPECT_EQ(2, t->stats.lost_reports);
	EXPECT_EQ(UINT64_MAX, t->stats.lost_events);
	EXPECT_TRUE(t->stats.lost_saturated);
	m = open_memstream(&summary, &slen);
	ASSERT_NE(NULL, m);
	pf_trace_summary(m, t);
	fclose(m);
	EXPECT_NE(NULL, strstr(summary, "lost at least 18446744073709551615 events"));
	free(summary);
	pf_trace_free(t);

	/* 20 digits that fit are exact; more than 2^64 - 1 is unknown. */
	t = parse_str("CPU:0 [LOST 18446744073709551615 EVENTS]\n"
		      "CPU:0 [LOST 18446744073709551616 EVENTS]\n");
	ASSERT_NE(NULL, t);
	EXPECT_EQ(UINT64_MAX, t->stats.lost_events);
	EXPECT_FALSE(t->stats.lost_saturated);
	EXPECT_EQ(1, t->stats.lost_unknown);
	pf_trace_free(t);

	t = parse_str(" 0)               |  /* pktfilt_packet: seq=18446744073709551615 cpu=0 proto=udp */\n"
		      " 1)               |  /* pktfilt_packet: seq=18446744073709551616 cpu=1 proto=udp */\n"
		      " 2)               |  /* pktfilt_packet: seq=3 cpu=2 proto=udp sport=65536 */\n"
		      " 3)               |  /* pktfilt_packet: seq=4 cpu=3 proto=udp ifindex=-5 netns=4294967296 */\n"
		      " 4)               |  /* pktfilt_packet: seq=5 cpu=4 proto=udp ifindex=-5 */\n");
	ASSERT_NE(NULL, t);
	ASSERT_EQ(2, t->npackets);
	EXPECT_EQ(UINT64_MAX, t->packets[0]->seq);
	EXPECT_EQ(5, t->packets[1]->seq);
	EXPECT_EQ(-5, t->packets[1]->ifindex);
	EXPECT_EQ(3, t->stats.garbage);
	pf_trace_free(t);
}

/* --- streaming ---------------------------------------------------------------- */

struct streamed {
	struct pf_render *r[4];
	size_t n;
};

static int stream_packet(void *arg, const struct pf_packet *pkt)
{
	struct streamed *st = arg;
	size_t k;

	st->n++;
	for (k = 0; k < 4; k++)
		if (pf_render_packet(st->r[k], pkt))
			return -EIO;
	return 0;
}

/*
 * The streaming reader and renderers, fed in chunks, write exactly what
 * the whole-trace ones write, for every fixture and every format.
 */
TEST(streaming_is_the_same)
{
	static const char *const names[] = {
		"cpus2", "icmp", "icmpv6", "irqs", "lost", "tcp4", "tcp6",
		"udp-count3", "udp-count3-truncated",
	};
	static const char *const vers[] = { "6.1", "6.12" };
	int (*const fns[])(FILE *, const struct pf_trace *) = {
		pf_render_text, pf_render_json, pf_render_folded,
		pf_render_svg,
	};
	size_t v, i, k, off, len, chunk = 1;
	FILE *null = fopen("/dev/null", "w"), *saved = stderr;

	ASSERT_NE(NULL, null);
	stderr = null;
	for (v = 0; v < ARRAY_SIZE(vers); v++) {
		for (i = 0; i < ARRAY_SIZE(names); i++) {
			char *buf = fixture_read(vers[v], names[i], &len);
			struct pf_trace *whole, *t;
			struct streamed st = { { NULL }, 0 };
			char *want[4], *got[4];
			size_t wlen[4], glen[4];
			FILE *m[4];
			struct pf_fgraph *p;

			ASSERT_NE(NULL, buf);
			whole = pf_fgraph_parse_buf(buf, len);
			ASSERT_NE(NULL, whole);
			for (k = 0; k < 4; k++) {
				want[k] = render_str(fns[k], whole);
				ASSERT_NE(NULL, want[k]);
				m[k] = open_memstream(&got[k], &glen[k]);
				ASSERT_NE(NULL, m[k]);
				st.r[k] = pf_render_new((enum pf_format)k, m[k],
							NULL);
				ASSERT_NE(NULL, st.r[k]);
			}
			p = pf_fgraph_new_stream(stream_packet, &st);
			ASSERT_NE(NULL, p);
			for (off = 0; off < len; off += chunk) {
				chunk = chunk * 7 % 4099 + 1;
				if (chunk > len - off)
					chunk = len - off;
				ASSERT_EQ(0, pf_fgraph_feed(p, buf + off, chunk));
			}
			t = pf_fgraph_finish(p);
			ASSERT_NE(NULL, t);
			EXPECT_EQ(0, t->npackets);
			EXPECT_EQ(whole->npackets, st.n);
			EXPECT_EQ(whole->npackets, pf_trace_packets(t));
			EXPECT_EQ(pf_trace_incomplete(whole),
				  pf_trace_incomplete(t));
			EXPECT_EQ(whole->stats.lines, t->stats.lines);
			for (k = 0; k < 4; k++) {
				EXPECT_EQ(0, pf_render_end(st.r[k]));
				fclose(m[k]);
				wlen[k] = strlen(want[k]);
				EXPECT_EQ(wlen[k], glen[k]);
				EXPECT_EQ(0, memcmp(want[k], got[k],
						    wlen[k] < glen[k] ?
						    wlen[k] : glen[k]));
				free(want[k]);
				free(got[k]);
			}
			pf_trace_free(t);
			pf_trace_free(whole);
			free(buf);
		}
	}
	stderr = saved;
	fclose(null);
}

/* --- anything goes --------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static int (*const renderers[])(FILE *, const struct pf_trace *) = {
	pf_render_text, pf_render_json, pf_render_folded, pf_render_svg,
};

static const char *const tokens[] = {
	"{", "}", "();", "() {", " 1) ", " 0) ", "|  ", "  ", "    ", "\n",
	"/* pktfilt_packet: seq=", " */", "CPU:1 [LOST ", " EVENTS]\n",
	"udp_rcv", "tcp_v4_rcv", "+ 87.835 us   ", "# 9999999999999999 us ",
	"} /* udp_rcv */", "==========>", "\xff", "\0", ";", "\"", "<&>",
	"  123.456789 |  ", " ksoftir-15   | ", "( ", " => ",
};

/* Mutated real traces: nothing crashes, the invariants hold. */
TEST(mutations)
{
	size_t len, i, k;
	char *orig = fixture_read("6.12", "irqs", &len);

	ASSERT_NE(NULL, orig);
	if (len > 20000)
		len = 20000;
	for (i = 0; i < 300; i++) {
		size_t cap = len + 4096, n = 0, pos = 0;
		char *buf = malloc(cap);
		struct pf_trace *t;

		ASSERT_NE(NULL, buf);
		/* Copy the trace from a random place, mutating as we go. */
		pos = rng() % len;
		while (pos < len && n < cap - 64) {
			uint64_t r = rng() % 100;

			if (r < 2) {
				const char *tok = tokens[rng() % ARRAY_SIZE(tokens)];
				size_t tl = *tok ? strlen(tok) : 1;

				memcpy(buf + n, tok, tl);
				n += tl;
			} else if (r < 3) {
				pos += rng() % 200;	/* drop a run */
			} else if (r < 4) {
				buf[n++] = (char)rng();
				pos++;
			} else {
				buf[n++] = orig[pos++];
			}
		}
		t = pf_fgraph_parse_buf(buf, n);
		ASSERT_NE(NULL, t);
		for (k = 0; k < ARRAY_SIZE(renderers); k++) {
			FILE *null = fopen("/dev/null", "w");

			ASSERT_NE(NULL, null);
			/* The renderers' warnings would drown the log. */
			if (k >= 2) {
				FILE *saved = stderr;

				stderr = null;
				EXPECT_EQ(0, renderers[k](null, t));
				stderr = saved;
			} else {
				EXPECT_EQ(0, renderers[k](null, t));
			}
			fclose(null);
		}
		for (k = 0; k < t->npackets; k++) {
			const struct pf_packet *pkt = t->packets[k];
			size_t nodes;
			uint64_t *w, sum = 0, j;

			if (!pkt->complete)
				continue;
			nodes = pf_self_times(pkt, NULL, 0);
			w = malloc(nodes * sizeof(*w));
			ASSERT_NE(NULL, w);
			pf_self_times(pkt, w, nodes);
			for (j = 0; j < nodes; j++)
				sum += w[j];
			if (pkt->graph->duration_ns < UINT64_MAX / 2)
				EXPECT_EQ(pkt->graph->duration_ns, sum);
			free(w);
		}
		pf_trace_free(t);
		free(buf);
	}
	free(orig);
}


/* --- funcgraph-args and funcgraph-retval (issue 33) ------------------------ */

/* The node of @pkt's graph at path @i, @j (-1: stop there). */
static const struct pf_node *at(const struct pf_packet *pkt, int i, int j)
{
	const struct pf_node *n = pkt->graph;

	if (i >= 0)
		n = child(n, (size_t)i);
	if (n && j >= 0)
		n = child(n, (size_t)j);
	return n;
}

/*
 * Linux 6.15-6.12 print_graph_retval() (6.5-6.12): "f(); / * = 0x0 * /",
 * "} / * f = -22 * /"; with funcgraph-args, the list in place of "()".
 */
TEST(args_and_retval_before_6_13)
{
	static const char trace[] =
		EV(1, 1)
		" 1)               |  udp_rcv(skb=0xffff888003f1e100) {\n"
		" 1)               |    __udp4_lib_rcv(skb=0xffff888003f1e100, udptable=0xffffffff83a0c2c0, proto=17) {\n"
		" 1)   0.380 us    |      udp4_csum_init(skb=0xffff888003f1e100, uh=0xffff888004d2e022, proto=0x11); /* = 0x0 */\n"
		" 1)   1.100 us    |      __udp4_lib_lookup(net=0xffffffff83c1a0c0, saddr=0x109000a, sport=0xa00f, daddr=0x209000a, dport=0x2823, dif=2, ...); /* = 0xffff888004f5a000 */\n"
		" 1)   0.200 us    |      sk_filter_trim_cap(sk=0xffff888004f5a000, skb=0xffff888003f1e100, cap=(struct foo)[0x1:0x2]); /* = -1 */\n"
		" 1)   0.300 us    |      veth_xmit [veth](skb=0x1); /* = 0x0 */\n"
		" 1)               |      veth_poll [veth](napi=0x1, budget=64) {\n"
		" 1)   0.300 us    |      } /* veth_poll [veth] = -11 */\n"
		" 1)   2.335 us    |    } /* __udp4_lib_rcv = -22 */\n"
		" 1)   3.000 us    |  } /* udp_rcv = 0x0 */\n";
	struct pf_trace *t = parse_str(trace);
	const struct pf_packet *pkt;

	ASSERT_NE(NULL, t);
	ASSERT_EQ(1, t->npackets);
	pkt = t->packets[0];
	EXPECT_TRUE(pkt->complete);
	EXPECT_EQ(0, t->stats.garbage);
	ASSERT_NE(NULL, pkt->graph);
	EXPECT_STREQ("udp_rcv", pkt->graph->func);
	EXPECT_STREQ("skb=0xffff888003f1e100", pkt->graph->args);
	EXPECT_STREQ("0x0", pkt->graph->ret);
	EXPECT_EQ(3000, pkt->graph->duration_ns);
	ASSERT_NE(NULL, at(pkt, 0, -1));
	EXPECT_STREQ("__udp4_lib_rcv", at(pkt, 0, -1)->func);
	EXPECT_STREQ("skb=0xffff888003f1e100, udptable=0xffffffff83a0c2c0, proto=17",
		     at(pkt, 0, -1)->args);
	EXPECT_STREQ("-22", at(pkt, 0, -1)->ret);
	ASSERT_EQ(5, at(pkt, 0, -1)->nchildren);
	/* A module's function: its name has a space. */
	EXPECT_STREQ("veth_xmit [veth]", at(pkt, 0, 3)->func);
	EXPECT_STREQ("skb=0x1", at(pkt, 0, 3)->args);
	EXPECT_STREQ("0x0", at(pkt, 0, 3)->ret);
	EXPECT_STREQ("veth_poll [veth]", at(pkt, 0, 4)->func);
	EXPECT_STREQ("napi=0x1, budget=64", at(pkt, 0, 4)->args);
	EXPECT_STREQ("-11", at(pkt, 0, 4)->ret);
	EXPECT_TRUE(at(pkt, 0, 4)->complete);
	EXPECT_STREQ("udp4_csum_init", at(pkt, 0, 0)->func);
	EXPECT_STREQ("0x0", at(pkt, 0, 0)->ret);
	EXPECT_EQ(380, at(pkt, 0, 0)->duration_ns);
	EXPECT_STREQ("0xffff888004f5a000", at(pkt, 0, 1)->ret);
	EXPECT_STREQ("net=0xffffffff83c1a0c0, saddr=0x109000a, sport=0xa00f, daddr=0x209000a, dport=0x2823, dif=2, ...",
		     at(pkt, 0, 1)->args);
	EXPECT_STREQ("sk=0xffff888004f5a000, skb=0xffff888003f1e100, cap=(struct foo)[0x1:0x2]",
		     at(pkt, 0, 2)->args);
	EXPECT_STREQ("-1", at(pkt, 0, 2)->ret);
	pf_trace_free(t);
}

/*
 * 6.13 on: "f(); / * ret=0x0 * /", "} / * f ret=-22 * /", with
 * funcgraph-retaddr "/ * <-caller+0x12/0x40 ret=0x1 * /", and
 * funcgraph-retval-hex: an error in hex.
 */
TEST(retval_6_13)
{
	static const char trace[] =
		EV(1, 0)
		" 0)               |  udp_rcv() {\n"
		" 0)               |    __udp4_lib_rcv(skb=0xffff888003f1e100) { /* <-udp_rcv+0x1d/0x30 */\n"
		" 0)   0.380 us    |      udp4_csum_init(); /* ret=0x0 */\n"
		" 0)   0.410 us    |      udp_lib_checksum_complete(skb=0x1); /* <-__udp4_lib_rcv+0x2b/0x9a0 ret=0x1 */\n"
		" 0)   0.100 us    |      kfree_skb_reason(); /* ret=0xffffffffffffffea */\n"
		" 0)               |      veth_poll [veth]() {\n"
		" 0)   0.300 us    |      } /* veth_poll [veth] ret=-11 */\n"
		" 0)   0.100 us    |      consume_skb(skb=0x1);\n"
		" 0)   2.335 us    |    } /* __udp4_lib_rcv ret=-22 */\n"
		" 0)   3.000 us    |  } /* udp_rcv ret=0x0 */\n";
	struct pf_trace *t = parse_str(trace);
	const struct pf_packet *pkt;

	ASSERT_NE(NULL, t);
	ASSERT_EQ(1, t->npackets);
	pkt = t->packets[0];
	EXPECT_TRUE(pkt->complete);
	EXPECT_EQ(0, t->stats.garbage);
	ASSERT_NE(NULL, pkt->graph);
	EXPECT_EQ(NULL, pkt->graph->args);
	EXPECT_STREQ("0x0", pkt->graph->ret);
	ASSERT_NE(NULL, at(pkt, 0, -1));
	EXPECT_STREQ("skb=0xffff888003f1e100", at(pkt, 0, -1)->args);
	EXPECT_STREQ("-22", at(pkt, 0, -1)->ret);
	ASSERT_EQ(5, at(pkt, 0, -1)->nchildren);
	EXPECT_STREQ("veth_poll [veth]", at(pkt, 0, 3)->func);
	EXPECT_STREQ("-11", at(pkt, 0, 3)->ret);
	EXPECT_EQ(NULL, at(pkt, 0, 0)->args);
	EXPECT_STREQ("0x0", at(pkt, 0, 0)->ret);
	EXPECT_STREQ("skb=0x1", at(pkt, 0, 1)->args);
	EXPECT_STREQ("0x1", at(pkt, 0, 1)->ret);
	EXPECT_EQ(410, at(pkt, 0, 1)->duration_ns);
	EXPECT_STREQ("0xffffffffffffffea", at(pkt, 0, 2)->ret);
	EXPECT_STREQ("skb=0x1", at(pkt, 0, 4)->args);
	EXPECT_EQ(NULL, at(pkt, 0, 4)->ret);
	pf_trace_free(t);
}

/* pf_args_next(): what print_function_args() prints, item by item. */
TEST(args_split)
{
	static const char *const want[][2] = {
		{ "skb", "0xffff8881" }, { "", "?0x5" },
		{ "v", "(struct x)[0x1:0x2]" }, { "n", "-3" },
		{ "a", "b=c" }, { "", "=4" }, { "", "..." },
	};
	const char *args = "skb=0xffff8881, ?0x5, v=(struct x)[0x1:0x2], n=-3, a=b=c, =4, ...";
	struct pf_arg a;
	size_t pos = 0, i = 0;

	while (pf_args_next(args, &pos, &a)) {
		ASSERT_LT(i, sizeof(want) / sizeof(want[0]));
		EXPECT_EQ(strlen(want[i][0]), a.name_len);
		EXPECT_EQ(0, strncmp(want[i][0], a.name, a.name_len));
		EXPECT_EQ(strlen(want[i][1]), a.value_len);
		EXPECT_EQ(0, strncmp(want[i][1], a.value, a.value_len));
		i++;
	}
	EXPECT_EQ(sizeof(want) / sizeof(want[0]), i);
	pos = 0;
	EXPECT_FALSE(pf_args_next(NULL, &pos, &a));
	EXPECT_FALSE(pf_args_next("", &pos, &a));
	/* A bracket that never closes: the rest is one value. */
	pos = 0;
	EXPECT_TRUE(pf_args_next("x=(a, b", &pos, &a));
	EXPECT_EQ(5, a.value_len);
	EXPECT_FALSE(pf_args_next("x=(a, b", &pos, &a));
}

/*
 * Hostile lines: unbalanced or stray parentheses and brackets, controls,
 * lists and values too long, return values that are not numbers. The
 * calls are kept (the tree is right), what is not believed is left out.
 */
TEST(args_retval_hostile)
{
	static const char *const lines[] = {
		"f(a=(1) {",		/* unbalanced: no args */
		"f(a=1)) {",
		"f(a=]1[) {",
		"f(a=\x01) {",
		"f(a=1); /* = zz */",	/* not a number: no ret */
		"f(a=1); /* = 0x */",
		"f(a=1); /* ret= */",
		"f(a=1); /* = 0xABC */",	/* the kernel prints lower case */
		"f(a=1); /* = 123 */",	/* decimal only when negative */
		"f(a=1); /* = -12a */",
		"f(a=1); /* = -123456789012345678901234 */",
		"f(a=1); /*/",		/* the marks overlap: no comment */
		"f(a=1); /**/",
		"f(a=1); /* ret=0x1ret=0x2 */",
	};
	size_t i;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		char buf[512];
		struct pf_trace *t;
		const struct pf_node *n;
		bool leaf = strchr(lines[i], ';') != NULL;

		snprintf(buf, sizeof(buf), EV(1, 0) " 0)               |  udp_rcv() {\n"
			 " 0)   1.000 us    |    %s\n%s"
			 " 0)   3.000 us    |  }\n", lines[i],
			 leaf ? "" : " 0)   2.000 us    |    }\n");
		t = parse_str(buf);
		ASSERT_NE(NULL, t);
		ASSERT_EQ(1, t->npackets);
		TH_LOG("%s", lines[i]);
		n = at(t->packets[0], 0, -1);
		ASSERT_NE(NULL, n);
		EXPECT_STREQ("f", n->func);
		EXPECT_EQ(NULL, n->ret);
		if (i < 4) {
			EXPECT_EQ(NULL, n->args);
		} else {
			EXPECT_STREQ("a=1", n->args);
		}
		EXPECT_TRUE(t->packets[0]->complete);
		pf_trace_free(t);
	}
}

/*
 * The longest list kept is PF_FGRAPH_MAX_ARGS bytes; one byte more and
 * the list is left out, the call kept; a line of 1 MB of arguments too.
 */
TEST(args_huge)
{
	size_t sizes[] = { PF_FGRAPH_MAX_ARGS, PF_FGRAPH_MAX_ARGS + 1,
			   PF_FGRAPH_MAX_LINE - 200 };
	size_t k;

	for (k = 0; k < 3; k++) {
		size_t n = sizes[k], len = 0, cap = n + 4096;
		char *buf = malloc(cap), *args = malloc(n + 1);
		struct pf_trace *t;
		const struct pf_node *f;
		size_t i;

		ASSERT_NE(NULL, buf);
		ASSERT_NE(NULL, args);
		/* "a=1, a=1, ..." cut at n bytes, ending in a value. */
		for (i = 0; i < n; i++)
			args[i] = "a=1, "[i % 5];
		args[n] = '\0';
		if (args[n - 1] == ' ' || args[n - 1] == ',')
			args[n - 1] = '9';
		if (n > 1 && args[n - 2] == ',')
			args[n - 2] = '9';
		len += (size_t)snprintf(buf + len, cap - len, EV(1, 0));
		len += (size_t)snprintf(buf + len, cap - len,
			" 0)               |  udp_rcv() {\n"
			" 0)   1.000 us    |    f(%s); /* ret=-5 */\n"
			" 0)   3.000 us    |  }\n", args);
		t = pf_fgraph_parse_buf(buf, len);
		ASSERT_NE(NULL, t);
		ASSERT_EQ(1, t->npackets);
		f = at(t->packets[0], 0, -1);
		ASSERT_NE(NULL, f);
		if (k == 0) {
			EXPECT_STREQ(args, f->args);
		} else {
			EXPECT_EQ(NULL, f->args);
		}
		EXPECT_STREQ("-5", f->ret);
		EXPECT_TRUE(t->packets[0]->complete);
		pf_trace_free(t);
		free(buf);
		free(args);
	}
}

static int count_packet(void *arg, const struct pf_packet *pkt)
{
	size_t *n = arg;

	if (pkt->complete && pkt->graph && pkt->graph->args &&
	    pkt->graph->nchildren == 64 && pkt->graph->children[63]->ret)
		++*n;
	return 0;
}

/*
 * AddressSanitizer keeps freed memory in quarantine, 256 MB by default:
 * args_stream_bounded would measure that. A smaller one for this binary
 * (an ASAN_OPTIONS in the environment still wins).
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "quarantine_size_mb=32";
}

/*
 * Streaming 4000 packets of 64 calls with 2 KB argument lists each (500
 * MB of trace): memory holds one packet at a time (~300 KB), not the
 * trace; the bound leaves room for ASan's quarantine.
 */
TEST(args_stream_bounded)
{
	const size_t npkt = 4000, ncalls = 64;
	char *args = malloc(PF_FGRAPH_MAX_ARGS + 1), *line;
	struct pf_fgraph *p;
	struct pf_trace *t;
	size_t i, k, got = 0, cap = PF_FGRAPH_MAX_ARGS + 256;
	long before;

	ASSERT_NE(NULL, args);
	line = malloc(cap);
	ASSERT_NE(NULL, line);
	for (i = 0; i < PF_FGRAPH_MAX_ARGS; i++)
		args[i] = "x=0x1, "[i % 7];
	args[PF_FGRAPH_MAX_ARGS - 1] = '2';
	args[PF_FGRAPH_MAX_ARGS] = '\0';
	p = pf_fgraph_new_stream(count_packet, &got);
	ASSERT_NE(NULL, p);
	before = peak_rss_kb();
	for (k = 0; k < npkt; k++) {
		int n = snprintf(line, cap, EV(1, 0));

		ASSERT_EQ(0, pf_fgraph_feed(p, line, (size_t)n));
		n = snprintf(line, cap, " 0)               |  udp_rcv(%s) {\n", args);
		ASSERT_EQ(0, pf_fgraph_feed(p, line, (size_t)n));
		for (i = 0; i < ncalls; i++) {
			n = snprintf(line, cap,
				     " 0)   1.000 us    |    f%zu(%s); /* ret=-%zu */\n",
				     i, args, i + 1);
			ASSERT_EQ(0, pf_fgraph_feed(p, line, (size_t)n));
		}
		n = snprintf(line, cap, " 0)   3.000 us    |  } /* udp_rcv ret=0x0 */\n");
		ASSERT_EQ(0, pf_fgraph_feed(p, line, (size_t)n));
	}
	t = pf_fgraph_finish(p);
	ASSERT_NE(NULL, t);
	EXPECT_EQ(npkt, t->stats.streamed);
	EXPECT_EQ(npkt, got);
	/* One packet's text and nodes: ~300 KB; the trace is 500 MB. */
	EXPECT_LT(peak_rss_kb() - before, 64 * 1024);
	TH_LOG("streamed: peak RSS grew by %ld KiB", peak_rss_kb() - before);
	pf_trace_free(t);
	free(line);
	free(args);
}

/* json and chrome: "args" and "ret" as printed; none where none. */
TEST(args_retval_json_chrome)
{
	static const char trace[] =
		EV(1, 0)
		" 0)               |  udp_rcv(skb=0xffff8881, ?0x5, ...) {\n"
		" 0)   0.380 us    |    udp4_csum_init(uh=\"q\\\\); /* ret=-22 */\n"
		" 0)   0.100 us    |    consume_skb();\n"
		" 0)   3.000 us    |  } /* udp_rcv ret=0x0 */\n";
	struct pf_trace *t = parse_str(trace);
	char *s;

	ASSERT_NE(NULL, t);
	s = render_str(pf_render_json, t);
	ASSERT_NE(NULL, s);
	EXPECT_NE(NULL, strstr(s, "\"graph\":{\"func\":\"udp_rcv\",\"duration_ns\":3000,"
			       "\"args\":{\"skb\":\"0xffff8881\",\"arg1\":\"?0x5\",\"...\":\"...\"},\"ret\":\"0x0\","
			       "\"children\":[{\"func\":\"udp4_csum_init\",\"duration_ns\":380,"
			       "\"args\":{\"uh\":\"\\\"q\\\\\\\\\"},\"ret\":\"-22\",\"children\":[]},"
			       "{\"func\":\"consume_skb\",\"duration_ns\":100,\"children\":[]}]}"));
	EXPECT_EQ(1, json_lines_ok(s));
	free(s);
	s = render_str(pf_render_chrome, t);
	ASSERT_NE(NULL, s);
	EXPECT_NE(NULL, strstr(s, "\"name\":\"udp4_csum_init\",\"cat\":\"call\""));
	EXPECT_NE(NULL, strstr(s, "\"args\":{\"args\":{\"uh\":\"\\\"q\\\\\\\\\"},\"ret\":\"-22\"}}"));
	EXPECT_NE(NULL, strstr(s, "\"args\":{\"skb\":\"0xffff8881\",\"arg1\":\"?0x5\",\"...\":\"...\"},\"ret\":\"0x0\"}}"));
	free(s);
	pf_trace_free(t);
}

/* Version 6's bytes: data= in hex, within len=; anything else not understood. */
TEST(packet_bytes)
{
	struct pf_trace *t = parse_str(
		" 0)               |  /* pktfilt_packet: seq=1 cpu=0 proto=udp stage=rx id=1 len=4 rt_ns=1795000000000000001 data=45000aFF */\n"
		" 0)               |  /* pktfilt_packet: seq=2 cpu=0 proto=udp stage=rx id=2 len=0 rt_ns=5 data= */\n"
		" 0)               |  /* pktfilt_packet: seq=3 cpu=0 proto=udp stage=rx id=3 */\n"
		" 0)               |  /* pktfilt_packet: seq=4 cpu=0 proto=udp stage=rx id=4 len=4 data=450 */\n"
		" 0)               |  /* pktfilt_packet: seq=5 cpu=0 proto=udp stage=rx id=5 len=4 data=45zz */\n"
		" 0)               |  /* pktfilt_packet: seq=6 cpu=0 proto=udp stage=rx id=6 len=1 data=4500 */\n"
		" 0)               |  /* pktfilt_packet: seq=7 cpu=0 proto=udp stage=rx id=7 data=45 */\n"
		" 0)               |  /* pktfilt_packet: seq=8 cpu=0 proto=udp stage=rx id=8 len=4294967296 data= */\n"
		" 0)               |  /* pktfilt_packet: seq=9 cpu=0 proto=udp stage=rx id=9 len=2 rt_ns=x data=4500 */\n");
	const struct pf_packet *p;

	ASSERT_NE(NULL, t);
	ASSERT_EQ(3, t->npackets);
	EXPECT_EQ(6, t->stats.garbage);
	p = t->packets[0];
	EXPECT_TRUE(p->has_data);
	EXPECT_EQ(4, p->len);
	EXPECT_EQ(4, p->caplen);
	EXPECT_EQ(1795000000000000001ULL, p->rt_ns);
	ASSERT_NE(NULL, p->data);
	EXPECT_EQ(0, memcmp(p->data, "\x45\x00\x0a\xff", 4));
	p = t->packets[1];
	EXPECT_TRUE(p->has_data);
	EXPECT_EQ(0, p->caplen);
	EXPECT_EQ(NULL, p->data);
	EXPECT_EQ(5, p->rt_ns);
	p = t->packets[2];
	EXPECT_FALSE(p->has_data);
	EXPECT_EQ(0, p->caplen);
	pf_trace_free(t);
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint16_t get16(const unsigned char *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

/* The option @code of the options from @p to @end, its length in *@n. */
static const unsigned char *pcapng_opt(const unsigned char *p,
				       const unsigned char *end,
				       uint16_t code, uint16_t *n)
{
	while (end - p >= 4) {
		uint16_t c = get16(p), len = get16(p + 2);

		if (c == 0)
			return NULL;
		if (c == code) {
			*n = len;
			return p + 4;
		}
		p += 4 + ((len + 3U) & ~3U);
	}
	return NULL;
}

/*
 * The writer, block by block: a section header, an interface per
 * (ifindex, netns), a frame per packet with bytes, with its id, comment,
 * direction, timestamp and lengths; the packet without bytes skipped.
 */
TEST(pcapng_writer)
{
	static const unsigned char ip[] = {
		0x45, 0x00, 0x00, 0x29, 0x00, 0x01, 0x00, 0x00, 0x40, 0x11,
		0x66, 0xaf, 10, 9, 0, 1, 10, 9, 0, 2, 0x0f, 0xa0, 0x23, 0x28,
	};
	size_t len, flen = 0, off, nidb = 0, nepb = 0;
	char *buf = fixture_read("pcapng", "rx-tx-bytes", &len), *file = NULL;
	struct pf_trace *t;
	FILE *m, *saved = stderr;
	const unsigned char *f, *b, *o;
	uint16_t n;

	ASSERT_NE(NULL, buf);
	t = pf_fgraph_parse_buf(buf, len);
	ASSERT_NE(NULL, t);
	ASSERT_EQ(4, t->npackets);
	m = open_memstream(&file, &flen);
	ASSERT_NE(NULL, m);
	stderr = fopen("/dev/null", "w");
	ASSERT_EQ(0, pf_render_pcapng(m, t));
	fclose(stderr);
	stderr = saved;
	fclose(m);
	f = (const unsigned char *)file;
	/* The section header: its magic, version 1.0, its length twice. */
	ASSERT_GE(flen, 28);
	EXPECT_EQ(0x0A0D0D0A, get32(f));
	EXPECT_EQ(0x1A2B3C4D, get32(f + 8));
	EXPECT_EQ(1, get16(f + 12));
	EXPECT_EQ(0, get16(f + 14));
	for (off = 0; off < flen;) {
		uint32_t type, blen;

		ASSERT_LE(off + 12, flen);
		b = f + off;
		type = get32(b);
		blen = get32(b + 4);
		ASSERT_EQ(0, blen % 4);
		ASSERT_LE(off + blen, flen);
		ASSERT_EQ(blen, get32(b + blen - 4));
		if (type == 1) {	/* interface: raw IP, ns */
			nidb++;
			EXPECT_EQ(101, get16(b + 8));
			o = pcapng_opt(b + 16, b + blen - 4, 9, &n);
			ASSERT_NE(NULL, o);
			EXPECT_EQ(9, o[0]);
			o = pcapng_opt(b + 16, b + blen - 4, 2, &n);
			ASSERT_NE(NULL, o);
			EXPECT_EQ(0, memcmp(o, nidb == 1 ? "ifindex 3 netns 4026532100" :
					    "ifindex 2 netns 4026532165", n));
		}
		if (type == 6) {	/* a frame */
			uint32_t caplen = get32(b + 20);
			uint64_t ts = (uint64_t)get32(b + 12) << 32 | get32(b + 16);
			const unsigned char *opts = b + 28 + ((caplen + 3) & ~3U);
			uint64_t id;

			nepb++;
			EXPECT_EQ(nepb == 1 ? 0 : 1, get32(b + 8));
			EXPECT_EQ(nepb == 1 ? 1795000000123456789ULL :
				  1795000000123999999ULL, ts);
			EXPECT_EQ(nepb == 1 ? 41 : 20, caplen);
			EXPECT_EQ(41, get32(b + 24));	/* the original length */
			EXPECT_EQ(0, memcmp(b + 28, ip, nepb == 1 ? 24 : 20));
			o = pcapng_opt(opts, b + blen - 4, 5, &n);
			ASSERT_NE(NULL, o);
			ASSERT_EQ(8, n);
			memcpy(&id, o, 8);
			EXPECT_EQ(nepb == 3 ? 2 : 1, id);
			o = pcapng_opt(opts, b + blen - 4, 2, &n);
			ASSERT_NE(NULL, o);
			EXPECT_EQ(nepb == 1 ? 2 : 1, get32(o));	/* out, in */
			o = pcapng_opt(opts, b + blen - 4, 1, &n);
			ASSERT_NE(NULL, o);
			if (nepb == 1)
				EXPECT_EQ(0, strncmp((const char *)o, "pktfilt id=1 seq=1 stage=tx cpu=0 root=ip_local_out dropped: NO_SOCKET in __udp4_lib_rcv", n));
			if (nepb == 3)
				EXPECT_EQ(0, strncmp((const char *)o, "pktfilt id=2 seq=3 stage=rx cpu=0 root=ip_rcv consumed", n));
		}
		off += blen;
	}
	EXPECT_EQ(flen, off);
	EXPECT_EQ(2, nidb);
	EXPECT_EQ(3, nepb);	/* seq 4 has no bytes */
	free(file);
	free(buf);
	pf_trace_free(t);
}

static int fake_netns_path(__u32 ino, char *buf, size_t len)
{
	if (ino != 4026532165U)
		return -ENOENT;
	snprintf(buf, len, "/run/netns/b");
	return 0;
}

static int fake_ifname(__u32 ifindex, const char *netns_path, char *buf,
		       size_t len)
{
	if (ifindex != 2 || !netns_path || strcmp(netns_path, "/run/netns/b"))
		return -ENODEV;
	snprintf(buf, len, "veth-b");
	return 0;
}

/* With a resolver (trace's): the device's name, the numbers described. */
TEST(pcapng_interface_names)
{
	static const struct pf_resolver fake = {
		.netns_path = fake_netns_path,
		.ifname = fake_ifname,
	};
	struct pf_render_opts opts = { .filter = NULL, .names = &fake };
	size_t len, flen = 0;
	char *buf = fixture_read("pcapng", "rx-tx-bytes", &len), *file = NULL;
	struct pf_trace *t;
	struct pf_render *r;
	FILE *m, *saved = stderr;
	size_t i;

	ASSERT_NE(NULL, buf);
	t = pf_fgraph_parse_buf(buf, len);
	ASSERT_NE(NULL, t);
	m = open_memstream(&file, &flen);
	ASSERT_NE(NULL, m);
	r = pf_render_new(PF_FORMAT_PCAPNG, m, &opts);
	ASSERT_NE(NULL, r);
	stderr = fopen("/dev/null", "w");
	for (i = 0; i < t->npackets; i++)
		EXPECT_EQ(0, pf_render_packet(r, t->packets[i]));
	EXPECT_EQ(0, pf_render_end(r));
	fclose(stderr);
	stderr = saved;
	fclose(m);
	/* ifindex 3's namespace is unknown: its numbers are its name. */
	EXPECT_NE(NULL, memmem(file, flen, "ifindex 3 netns 4026532100", 26));
	EXPECT_NE(NULL, memmem(file, flen, "\x02\x00\x06\x00veth-b", 10));
	EXPECT_NE(NULL, memmem(file, flen, "\x03\x00\x1a\x00ifindex 2 netns 4026532165", 30));
	free(file);
	free(buf);
	pf_trace_free(t);
}

TEST_HARNESS_MAIN
