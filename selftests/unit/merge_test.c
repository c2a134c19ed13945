// SPDX-License-Identifier: GPL-2.0
/*
 * pktfilt merge (tool/merge.c): synthetic traces of two or three
 * machines made from the real graphs of fixtures/pcapng/rx-tx-bytes.txt
 * (its tx packet's graph for a machine's sent packet, its rx packet's for
 * a received one), with events carrying packets built here: the same
 * bytes on both sides but for what the wire changes (TTL, checksum), a
 * clock offset between the machines, NAT, retransmissions, one direction
 * only, ping request and reply, SYN / SYN-ACK / ACK, fragments.
 */
#define _GNU_SOURCE	/* memmem() */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "diff.h"
#include "fgraph.h"
#include "json.h"
#include "merge.h"

/* fixtures/DIR/NAME.txt next to this binary; NULL if absent. */
static char *fixture(const char *dir, const char *name)
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
		} else {
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
	return buf;
}

/* The graph lines after the event of seq=@seq, to the next event. */
static char *graph_after(const char *trace, int seq)
{
	char tag[64], *p, *end, *nl;

	snprintf(tag, sizeof(tag), "pktfilt_packet: seq=%d ", seq);
	p = strstr(trace, tag);
	if (!p)
		return NULL;
	nl = strchr(p, '\n');
	if (!nl)
		return NULL;
	end = strstr(nl + 1, "pktfilt_packet:");
	if (end)
		while (end > nl + 1 && end[-1] != '\n')
			end--;
	else
		end = nl + 1 + strlen(nl + 1);
	return strndup(nl + 1, (size_t)(end - (nl + 1)));
}

static char *tx_graph, *rx_graph;

static int load_graphs(void)
{
	char *t = fixture("pcapng", "rx-tx-bytes");

	if (!t)
		return -1;
	free(tx_graph);
	free(rx_graph);
	tx_graph = graph_after(t, 1);	/* cpu 0, root ip_local_out */
	rx_graph = graph_after(t, 2);	/* cpu 1, root ip_rcv, freed id=1 */
	free(t);
	return tx_graph && rx_graph ? 0 : -1;
}

/*
 * A router's rx graph: the packet forwarded, down to the next device (a
 * forwarded packet has no tx graph: tx is LOCAL_OUT's).
 */
static const char fwd_graph[] =
	" 1)               |  ip_rcv() {\n"
	" 1)   1.300 us    |    ip_rcv_core();\n"
	" 1)               |    ip_rcv_finish() {\n"
	" 1)   3.000 us    |      ip_route_input_noref();\n"
	" 1)               |      ip_forward() {\n"
	" 1)               |        ip_forward_finish() {\n"
	" 1)               |          ip_output() {\n"
	" 1)   2.000 us    |            ip_finish_output2();\n"
	" 1)   4.000 us    |          }\n"
	" 1)   5.000 us    |        }\n"
	" 1)   6.000 us    |      }\n"
	" 1) + 10.000 us   |    }\n"
	" 1) + 12.000 us   |  }\n";

/* held_ns= of the next event put_pkt writes (then back to 0). */
static uint64_t next_held;

/*
 * A packet of one machine's trace: its event, then a real graph. Stage
 * "rx-fwd": an rx event, then a router's graph that forwards it.
 */
static void put_pkt(FILE *f, const char *stage, uint64_t id, uint64_t seq,
		    uint64_t rt, const unsigned char *d, size_t n)
{
	bool tx = !strcmp(stage, "tx"), fwd = !strcmp(stage, "rx-fwd");
	const char *g = tx ? tx_graph : fwd ? fwd_graph : rx_graph, *p;
	size_t i;

	fprintf(f, " %d)               |  /* pktfilt_packet: seq=%" PRIu64
		" cpu=%d proto=udp saddr=10.9.0.1 daddr=10.9.0.2 sport=4000 dport=9000 ifindex=3 netns=4026532100 stage=%s id=%"
		PRIu64 " root=%s held_ns=%" PRIu64 " len=%zu rt_ns=%" PRIu64
		" data=", tx ? 0 : 1, seq, tx ? 0 : 1, fwd ? "rx" : stage, id,
		tx ? "ip_local_out" : "ip_rcv", next_held, n, rt);
	next_held = 0;
	for (i = 0; i < n; i++)
		fprintf(f, "%02x", d[i]);
	fputs(" */\n", f);
	/* The graph, its pktfilt_free given this id. */
	for (p = g; *p; p++) {
		if (!strncmp(p, "pktfilt_free: id=1 ", 19)) {
			fprintf(f, "pktfilt_free: id=%" PRIu64 " ", id);
			p += 18;
			continue;
		}
		fputc(*p, f);
	}
}

/* --- packets ---------------------------------------------------------------- */

struct pkt {
	unsigned char b[256];
	size_t n;
};

static void ip4(struct pkt *p, const char *src, const char *dst, int proto,
		unsigned int id, int ttl, unsigned int frag,
		const unsigned char *l4, size_t l4len)
{
	unsigned char *h = p->b;
	unsigned int a[4], i;

	memset(h, 0, 20);
	h[0] = 0x45;
	p->n = 20 + l4len;
	h[2] = (unsigned char)(p->n >> 8);
	h[3] = (unsigned char)p->n;
	h[4] = (unsigned char)(id >> 8);
	h[5] = (unsigned char)id;
	h[6] = (unsigned char)(frag >> 8);
	h[7] = (unsigned char)frag;
	h[8] = (unsigned char)ttl;
	h[9] = (unsigned char)proto;
	h[10] = (unsigned char)(ttl * 7);	/* "checksum": changes with ttl */
	sscanf(src, "%u.%u.%u.%u", &a[0], &a[1], &a[2], &a[3]);
	for (i = 0; i < 4; i++)
		h[12 + i] = (unsigned char)a[i];
	sscanf(dst, "%u.%u.%u.%u", &a[0], &a[1], &a[2], &a[3]);
	for (i = 0; i < 4; i++)
		h[16 + i] = (unsigned char)a[i];
	memcpy(h + 20, l4, l4len);
}

static size_t udp(unsigned char *u, unsigned int sport, unsigned int dport,
		  const char *payload)
{
	size_t n = strlen(payload);

	u[0] = (unsigned char)(sport >> 8);
	u[1] = (unsigned char)sport;
	u[2] = (unsigned char)(dport >> 8);
	u[3] = (unsigned char)dport;
	u[4] = (unsigned char)((8 + n) >> 8);
	u[5] = (unsigned char)(8 + n);
	u[6] = 0x12;
	u[7] = 0x34;
	memcpy(u + 8, payload, n);
	return 8 + n;
}

static void be32put(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static size_t tcp(unsigned char *t, unsigned int sport, unsigned int dport,
		  uint32_t seq, uint32_t ack, unsigned int flags,
		  const char *payload)
{
	size_t n = strlen(payload);

	memset(t, 0, 20);
	t[0] = (unsigned char)(sport >> 8);
	t[1] = (unsigned char)sport;
	t[2] = (unsigned char)(dport >> 8);
	t[3] = (unsigned char)dport;
	be32put(t + 4, seq);
	be32put(t + 8, ack);
	t[12] = 5 << 4;
	t[13] = (unsigned char)flags;
	t[14] = 0xff;
	memcpy(t + 20, payload, n);
	return 20 + n;
}

static size_t icmp(unsigned char *c, int type, unsigned int id,
		   unsigned int seq, const char *payload)
{
	size_t n = strlen(payload);

	memset(c, 0, 8);
	c[0] = (unsigned char)type;
	c[4] = (unsigned char)(id >> 8);
	c[5] = (unsigned char)id;
	c[6] = (unsigned char)(seq >> 8);
	c[7] = (unsigned char)seq;
	memcpy(c + 8, payload, n);
	return 8 + n;
}

static struct pkt udp4(const char *src, unsigned int sport, const char *dst,
		       unsigned int dport, unsigned int id, int ttl,
		       const char *payload)
{
	struct pkt p;
	unsigned char l4[200];

	ip4(&p, src, dst, 17, id, ttl, 0, l4, udp(l4, sport, dport, payload));
	return p;
}

/* --- running merge --------------------------------------------------------- */

#define T0	1795000000000000000ULL
#define US	1000ULL
#define MS	1000000ULL

struct machine_trace {
	char *buf;
	size_t len;
	FILE *f;
	uint64_t seq;
};

static void mt_open(struct machine_trace *m)
{
	memset(m, 0, sizeof(*m));
	m->f = open_memstream(&m->buf, &m->len);
	fputs("# tracer: function_graph\n#\n", m->f);
}

static void mt_pkt(struct machine_trace *m, const char *stage, uint64_t id,
		   uint64_t rt, const struct pkt *p)
{
	put_pkt(m->f, stage, id, ++m->seq, rt, p->b, p->n);
}

struct result {
	char *out;
	size_t len;
	struct pf_json *j[64];
	size_t n;
	struct pf_merge *m;
};

static void result_free(struct result *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		pf_json_free(r->j[i]);
	pf_merge_free(r->m);
	free(r->out);
	memset(r, 0, sizeof(*r));
}

/* Merge machines @mt[0..n) named @names into @r: 0 or an error. */
static int run_merge(struct machine_trace *mt, const char *const *names,
		     size_t n, enum pf_merge_format fmt, struct result *r)
{
	FILE *out;
	char err[256], *line, *nl;
	size_t i;
	int ret = 0;

	memset(r, 0, sizeof(*r));
	r->m = pf_merge_new(fmt, false);
	if (!r->m)
		return -ENOMEM;
	for (i = 0; i < n && !ret; i++) {
		fflush(mt[i].f);
		ret = pf_merge_begin(r->m, names[i]);
		if (!ret)
			ret = pf_merge_feed(r->m, mt[i].buf, mt[i].len);
		if (!ret)
			ret = pf_merge_end(r->m);
	}
	if (ret)
		return ret;
	out = open_memstream(&r->out, &r->len);
	ret = pf_merge_write(r->m, out);
	fclose(out);
	if (ret || fmt != PF_MERGE_JSON)
		return ret;
	for (line = r->out; *line && r->n < 64; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl)
			return -EINVAL;
		r->j[r->n] = pf_json_parse(line, (size_t)(nl - line), 64,
					   1000000, err, sizeof(err));
		if (!r->j[r->n]) {
			fprintf(stderr, "bad JSON: %s\n", err);
			return -EINVAL;
		}
		r->n++;
	}
	return 0;
}

static void mt_close(struct machine_trace *mt, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		fclose(mt[i].f);
		free(mt[i].buf);
	}
}

/* The journey holding machine @name's packet @id: its index, or -1. */
static int journey_of(const struct result *r, const char *name, uint64_t id)
{
	size_t i, k;

	for (i = 0; i < r->n; i++) {
		const struct pf_json *p = pf_json_get(r->j[i], "packets");

		for (k = 0; p && k < p->n; k++) {
			const struct pf_json *mn = pf_json_get(p->items[k],
							       "machine");
			const struct pf_json *pid = pf_json_get(p->items[k],
								"id");

			if (mn && mn->str && !strcmp(mn->str, name) && pid &&
			    pid->u64 == id)
				return (int)i;
		}
	}
	return -1;
}

static size_t nmachines(const struct result *r, int j)
{
	const struct pf_json *m = pf_json_get(r->j[j], "machines");

	return m ? m->n : 0;
}

static const struct pf_json *hop(const struct result *r, int j, size_t k)
{
	const struct pf_json *h = pf_json_get(r->j[j], "hops");

	return h && k < h->n ? h->items[k] : NULL;
}

static const char *hstr(const struct pf_json *h, const char *key)
{
	const struct pf_json *v = pf_json_get(h, key);

	return v && v->type == PF_J_STR ? v->str : "";
}

static bool hnull(const struct pf_json *h, const char *key)
{
	const struct pf_json *v = pf_json_get(h, key);

	return v && v->type == PF_J_NULL;
}

static uint64_t hnum(const struct pf_json *h, const char *key)
{
	const struct pf_json *v = pf_json_get(h, key);

	return v && v->type == PF_J_NUM && v->is_u64 ? v->u64 : UINT64_MAX;
}

static double hdbl(const struct pf_json *h, const char *key)
{
	const struct pf_json *v = pf_json_get(h, key);

	return v && v->type == PF_J_NUM ? v->num : -1e30;
}

static const char *const AB[] = { "client", "server" };

FIXTURE(merge) {
	struct machine_trace mt[3];
	struct result r;
};

FIXTURE_SETUP(merge)
{
	ASSERT_EQ(0, load_graphs());
	mt_open(&self->mt[0]);
	mt_open(&self->mt[1]);
	mt_open(&self->mt[2]);
}

FIXTURE_TEARDOWN(merge)
{
	result_free(&self->r);
	mt_close(self->mt, 3);
}

/*
 * A request client -> server and its answer, the server's clock 5 ms
 * ahead, 40 us and 60 us on the wire: one journey each, the offset's
 * interval around 5 ms, the one-way times within their intervals.
 */
TEST_F(merge, two_ways_offset)
{
	struct pkt q = udp4("10.9.0.1", 4000, "10.9.0.2", 9000, 1, 64, "hello pktfilt");
	struct pkt q2 = udp4("10.9.0.1", 4000, "10.9.0.2", 9000, 1, 63, "hello pktfilt");
	struct pkt a = udp4("10.9.0.2", 9000, "10.9.0.1", 4000, 77, 64, "hello back");
	struct pkt a2 = udp4("10.9.0.2", 9000, "10.9.0.1", 4000, 77, 63, "hello back");
	const uint64_t off = 5 * MS;
	const struct pf_merge_clock *c;
	const struct pf_json *h, *p, *g;
	int j;

	mt_pkt(&self->mt[0], "tx", 1, T0, &q);
	mt_pkt(&self->mt[1], "rx", 10, T0 + off + 40 * US, &q2);
	mt_pkt(&self->mt[1], "tx", 11, T0 + off + 100 * US, &a);
	mt_pkt(&self->mt[0], "rx", 2, T0 + 160 * US, &a2);
	ASSERT_EQ(0, run_merge(self->mt, AB, 2, PF_MERGE_JSON, &self->r));
	ASSERT_EQ(2, self->r.n);
	c = pf_merge_clock(self->r.m, 0, 1);
	ASSERT_NE(NULL, c);
	ASSERT_TRUE(c->has_lo && c->has_hi);
	/* o <= 5.040 ms (client -> server), o >= 4.940 ms (back) */
	EXPECT_EQ((int64_t)(off + 40 * US), c->hi);
	EXPECT_EQ((int64_t)(off - 60 * US), c->lo);

	j = journey_of(&self->r, "client", 1);
	ASSERT_GE(j, 0);
	EXPECT_EQ(j, journey_of(&self->r, "server", 10));
	EXPECT_EQ(2, nmachines(&self->r, j));
	h = hop(&self->r, j, 0);
	ASSERT_NE(NULL, h);
	EXPECT_STREQ("client", hstr(h, "from"));
	EXPECT_STREQ("tx", hstr(h, "from_stage"));
	EXPECT_STREQ("server", hstr(h, "to"));
	EXPECT_STREQ("rx", hstr(h, "to_stage"));
	EXPECT_STREQ("bytes", hstr(h, "match"));
	/* d = 40 us + (5 ms - o): o in [4.94, 5.04] ms: d in [0, 100] us */
	EXPECT_EQ(0, hnum(h, "one_way_min_ns"));
	EXPECT_EQ(100 * US, hnum(h, "one_way_max_ns"));
	EXPECT_EQ(50 * US, hnum(h, "one_way_ns"));
	EXPECT_EQ(off - 10 * US, hdbl(h, "offset_ns"));

	j = journey_of(&self->r, "server", 11);
	ASSERT_GE(j, 0);
	EXPECT_EQ(j, journey_of(&self->r, "client", 2));
	EXPECT_NE(j, journey_of(&self->r, "client", 1));
	h = hop(&self->r, j, 0);
	ASSERT_NE(NULL, h);
	EXPECT_STREQ("server", hstr(h, "from"));
	EXPECT_EQ(0, hnum(h, "one_way_min_ns"));
	EXPECT_EQ(100 * US, hnum(h, "one_way_max_ns"));
	/* Each machine's graphs are there: report's JSON objects. */
	p = pf_json_get(self->r.j[j], "packets");
	ASSERT_NE(NULL, p);
	ASSERT_EQ(2, p->n);
	EXPECT_STREQ("server", hstr(p->items[0], "machine"));
	g = pf_json_get(p->items[0], "graphs");
	ASSERT_NE(NULL, g);
	ASSERT_EQ(1, g->n);
	EXPECT_STREQ("tx", hstr(g->items[0], "stage"));
	EXPECT_NE(NULL, pf_json_get(g->items[0], "graph"));
}

/* One direction only: the offset has an upper bound; one-way a lower. */
TEST_F(merge, one_direction_bound)
{
	struct pkt q = udp4("10.9.0.1", 4000, "10.9.0.2", 9000, 1, 64, "one");
	struct pkt r = udp4("10.9.0.1", 4000, "10.9.0.2", 9000, 2, 64, "two");
	const struct pf_merge_clock *c;
	const struct pf_json *h;
	int j;

	mt_pkt(&self->mt[0], "tx", 1, T0, &q);
	mt_pkt(&self->mt[0], "tx", 2, T0 + 1 * MS, &r);
	mt_pkt(&self->mt[1], "rx", 1, T0 - 3 * MS + 30 * US, &q);
	mt_pkt(&self->mt[1], "rx", 2, T0 - 2 * MS + 50 * US, &r);
	ASSERT_EQ(0, run_merge(self->mt, AB, 2, PF_MERGE_JSON, &self->r));
	c = pf_merge_clock(self->r.m, 0, 1);
	ASSERT_TRUE(c->has_hi);
	ASSERT_FALSE(c->has_lo);
	EXPECT_EQ(-(int64_t)(3 * MS - 30 * US), c->hi);
	j = journey_of(&self->r, "client", 2);
	ASSERT_GE(j, 0);
	EXPECT_EQ(j, journey_of(&self->r, "server", 2));
	h = hop(&self->r, j, 0);
	ASSERT_NE(NULL, h);
	EXPECT_TRUE(hnull(h, "one_way_ns"));
	EXPECT_TRUE(hnull(h, "one_way_max_ns"));
	EXPECT_EQ(20 * US, hnum(h, "one_way_min_ns"));
	EXPECT_TRUE(hnull(h, "offset_min_ns"));
	/* The text says it. */
	result_free(&self->r);
	ASSERT_EQ(0, run_merge(self->mt, AB, 2, PF_MERGE_TEXT, &self->r));
	EXPECT_NE(NULL, strstr(self->r.out, "# clock server - clock client: at most -2970.000 us: only a bound, no packet server -> client"));
	EXPECT_NE(NULL, strstr(self->r.out, "# client tx -> server rx: at least 20.000 us one way (clocks only bounded"));
}

/*
 * Clocks whose bounds cross (the server's clock jumped 1 ms between the
 * two packets): flagged, and the one-way times still never negative.
 */
TEST_F(merge, clocks_inconsistent)
{
	struct pkt q = udp4("10.9.0.1", 4000, "10.9.0.2", 9000, 1, 64, "before");
	struct pkt a = udp4("10.9.0.2", 9000, "10.9.0.1", 4000, 2, 64, "after");
	const struct pf_merge_clock *c;
	const struct pf_json *h;
	int j;

	mt_pkt(&self->mt[0], "tx", 1, T0, &q);
	mt_pkt(&self->mt[1], "rx", 1, T0 + 20 * US, &q);	/* o <= 20 us */
	mt_pkt(&self->mt[1], "tx", 2, T0 + 2 * MS, &a);
	mt_pkt(&self->mt[0], "rx", 2, T0 + 1 * MS, &a);	/* o >= 1 ms */
	ASSERT_EQ(0, run_merge(self->mt, AB, 2, PF_MERGE_JSON, &self->r));
	c = pf_merge_clock(self->r.m, 0, 1);
	ASSERT_TRUE(c->has_lo && c->has_hi);
	EXPECT_GT(c->lo, c->hi);
	j = journey_of(&self->r, "client", 1);
	h = hop(&self->r, j, 0);
	EXPECT_FALSE(pf_json_get(h, "clocks_consistent")->b);
	EXPECT_LE(hnum(h, "one_way_min_ns"), hnum(h, "one_way_max_ns"));
	EXPECT_NE(UINT64_MAX, hnum(h, "one_way_ns"));
	result_free(&self->r);
	ASSERT_EQ(0, run_merge(self->mt, AB, 2, PF_MERGE_TEXT, &self->r));
	EXPECT_NE(NULL, strstr(self->r.out, "INCONSISTENT: the bounds cross"));
	EXPECT_NE(NULL, strstr(self->r.out, ", CLOCKS INCONSISTENT\n"));
}

/* NAT: the source address and port rewritten on the way: matched "nat". */
TEST_F(merge, nat)
{
	struct pkt q = udp4("10.9.0.1", 4000, "10.9.0.2", 9000, 33, 64, "through nat");
	struct pkt qn = udp4("192.0.2.1", 61000, "10.9.0.2", 9000, 33, 63, "through nat");
	struct pkt a = udp4("10.9.0.2", 9000, "192.0.2.1", 61000, 80, 64, "answer");
	struct pkt an = udp4("10.9.0.2", 9000, "10.9.0.1", 4000, 80, 63, "answer");
	struct pf_merge_keys k1, k2;
	const struct pf_json *h;
	int j;

	pf_merge_keys(q.b, (uint32_t)q.n, &k1);
	pf_merge_keys(qn.b, (uint32_t)qn.n, &k2);
	EXPECT_NE(k1.k[PF_MERGE_BYTES], k2.k[PF_MERGE_BYTES]);
	EXPECT_EQ(k1.k[PF_MERGE_NAT], k2.k[PF_MERGE_NAT]);
	mt_pkt(&self->mt[0], "tx", 5, T0, &q);
	mt_pkt(&self->mt[1], "rx", 9, T0 + 20 * US, &qn);
	mt_pkt(&self->mt[1], "tx", 10, T0 + 50 * US, &a);
	mt_pkt(&self->mt[0], "rx", 6, T0 + 90 * US, &an);
	ASSERT_EQ(0, run_merge(self->mt, AB, 2, PF_MERGE_JSON, &self->r));
	ASSERT_EQ(2, self->r.n);
	j = journey_of(&self->r, "client", 5);
	ASSERT_GE(j, 0);
	EXPECT_EQ(j, journey_of(&self->r, "server", 9));
	h = hop(&self->r, j, 0);
	EXPECT_STREQ("nat", hstr(h, "match"));
	EXPECT_TRUE(pf_json_get(h, "sure")->b);
	j = journey_of(&self->r, "server", 10);
	ASSERT_GE(j, 0);
	EXPECT_EQ(j, journey_of(&self->r, "client", 6));
}

/*
 * A retransmission: the same bytes sent twice, 200 ms apart; the first
 * copy lost, the second received. The copy received is linked to the
 * second copy, the first stays alone; never one packet in two journeys.
 */
TEST_F(merge, retransmission)
{
	struct pkt s1, s2, back, sure;
	unsigned char l4[200];
	const struct pf_json *h;
	int j, k;

	/* A sure packet each way first: the clocks (offset 0). */
	sure = udp4("10.9.0.1", 4000, "10.9.0.2", 9000, 1, 64, "sure");
	back = udp4("10.9.0.2", 9000, "10.9.0.1", 4000, 2, 64, "back");
	mt_pkt(&self->mt[0], "tx", 1, T0, &sure);
	mt_pkt(&self->mt[1], "rx", 1, T0 + 30 * US, &sure);
	mt_pkt(&self->mt[1], "tx", 2, T0 + 40 * US, &back);
	mt_pkt(&self->mt[0], "rx", 2, T0 + 70 * US, &back);
	/* The same segment twice, IP id and all. */
	ip4(&s1, "10.9.0.1", "10.9.0.2", 6, 500, 64, 0x4000, l4,
	    tcp(l4, 40000, 80, 1000, 2000, 0x18, "GET / HTTP/1.0"));
	s2 = s1;
	mt_pkt(&self->mt[0], "tx", 3, T0 + 1 * MS, &s1);
	mt_pkt(&self->mt[0], "tx", 4, T0 + 201 * MS, &s1);
	s2.b[8] = 63;
	mt_pkt(&self->mt[1], "rx", 3, T0 + 201 * MS + 25 * US, &s2);
	ASSERT_EQ(0, run_merge(self->mt, AB, 2, PF_MERGE_JSON, &self->r));
	j = journey_of(&self->r, "server", 3);
	ASSERT_GE(j, 0);
	EXPECT_EQ(j, journey_of(&self->r, "client", 4));
	h = hop(&self->r, j, 0);
	EXPECT_FALSE(pf_json_get(h, "sure")->b);
	/* o in [-30, 30] us: 25 us on the clocks, 0 to 55 us one way */
	EXPECT_EQ(0, hnum(h, "one_way_min_ns"));
	EXPECT_EQ(55 * US, hnum(h, "one_way_max_ns"));
	k = journey_of(&self->r, "client", 3);
	ASSERT_GE(k, 0);
	EXPECT_NE(j, k);
	EXPECT_EQ(1, nmachines(&self->r, k));
	EXPECT_TRUE(pf_json_get(self->r.j[k], "alone")->b);
	EXPECT_STREQ("seen on no other machine",
		     hstr(self->r.j[k], "why_alone"));
	EXPECT_EQ(4, self->r.n);
}

/* Both copies received: each with its own, in order. */
TEST_F(merge, duplicate_both_received)
{
	struct pkt s, back, sure;
	unsigned char l4[200];
	int j1, j2;

	sure = udp4("10.9.0.1", 4000, "10.9.0.2", 9000, 1, 64, "sure");
	back = udp4("10.9.0.2", 9000, "10.9.0.1", 4000, 2, 64, "back");
	mt_pkt(&self->mt[0], "tx", 1, T0, &sure);
	mt_pkt(&self->mt[1], "rx", 1, T0 + 30 * US, &sure);
	mt_pkt(&self->mt[1], "tx", 2, T0 + 40 * US, &back);
	mt_pkt(&self->mt[0], "rx", 2, T0 + 70 * US, &back);
	ip4(&s, "10.9.0.1", "10.9.0.2", 6, 500, 64, 0x4000, l4,
	    tcp(l4, 40000, 80, 1000, 2000, 0x18, "GET / HTTP/1.0"));
	mt_pkt(&self->mt[0], "tx", 3, T0 + 1 * MS, &s);
	mt_pkt(&self->mt[0], "tx", 4, T0 + 201 * MS, &s);
	mt_pkt(&self->mt[1], "rx", 3, T0 + 1 * MS + 25 * US, &s);
	mt_pkt(&self->mt[1], "rx", 4, T0 + 201 * MS + 25 * US, &s);
	ASSERT_EQ(0, run_merge(self->mt, AB, 2, PF_MERGE_JSON, &self->r));
	EXPECT_EQ(4, self->r.n);
	j1 = journey_of(&self->r, "client", 3);
	j2 = journey_of(&self->r, "client", 4);
	ASSERT_GE(j1, 0);
	ASSERT_GE(j2, 0);
	EXPECT_NE(j1, j2);
	EXPECT_EQ(j1, journey_of(&self->r, "server", 3));
	EXPECT_EQ(j2, journey_of(&self->r, "server", 4));
}

/* Ping: request and reply (same id, seq and payload) are two journeys. */
TEST_F(merge, ping_request_reply)
{
	struct pkt rq, rp;
	unsigned char l4[200];
	int j1, j2;

	ip4(&rq, "10.9.0.1", "10.9.0.2", 1, 7, 64, 0x4000, l4,
	    icmp(l4, 8, 0x1234, 1, "abcdefghijklmnop"));
	ip4(&rp, "10.9.0.2", "10.9.0.1", 1, 7, 64, 0, l4,
	    icmp(l4, 0, 0x1234, 1, "abcdefghijklmnop"));
	mt_pkt(&self->mt[0], "tx", 1, T0, &rq);
	mt_pkt(&self->mt[1], "rx", 1, T0 + 20 * US, &rq);
	mt_pkt(&self->mt[1], "tx", 2, T0 + 30 * US, &rp);
	mt_pkt(&self->mt[0], "rx", 2, T0 + 50 * US, &rp);
	ASSERT_EQ(0, run_merge(self->mt, AB, 2, PF_MERGE_JSON, &self->r));
	ASSERT_EQ(2, self->r.n);
	j1 = journey_of(&self->r, "client", 1);
	j2 = journey_of(&self->r, "server", 2);
	EXPECT_NE(j1, j2);
	EXPECT_EQ(j1, journey_of(&self->r, "server", 1));
	EXPECT_EQ(j2, journey_of(&self->r, "client", 2));
	EXPECT_EQ(2, nmachines(&self->r, j1));
	EXPECT_EQ(2, nmachines(&self->r, j2));
	EXPECT_EQ(8, hnum(pf_json_get(self->r.j[j1], "packet"), "icmp_type"));
	EXPECT_EQ(0, hnum(pf_json_get(self->r.j[j2], "packet"), "icmp_type"));
	EXPECT_EQ(20 * US, hnum(hop(&self->r, j1, 0), "one_way_ns"));
}

/* SYN, SYN-ACK and ACK: three journeys, each across the two machines. */
TEST_F(merge, handshake)
{
	struct pkt syn, synack, ack;
	unsigned char l4[200];
	int j1, j2, j3;

	ip4(&syn, "10.9.0.1", "10.9.0.2", 6, 0, 64, 0x4000, l4,
	    tcp(l4, 40000, 80, 1000, 0, 0x02, ""));
	ip4(&synack, "10.9.0.2", "10.9.0.1", 6, 0, 64, 0x4000, l4,
	    tcp(l4, 80, 40000, 5000, 1001, 0x12, ""));
	ip4(&ack, "10.9.0.1", "10.9.0.2", 6, 0, 64, 0x4000, l4,
	    tcp(l4, 40000, 80, 1001, 5001, 0x10, ""));
	mt_pkt(&self->mt[0], "tx", 1, T0, &syn);
	mt_pkt(&self->mt[1], "rx", 1, T0 + 20 * US, &syn);
	mt_pkt(&self->mt[1], "tx", 2, T0 + 30 * US, &synack);
	mt_pkt(&self->mt[0], "rx", 2, T0 + 50 * US, &synack);
	mt_pkt(&self->mt[0], "tx", 3, T0 + 60 * US, &ack);
	mt_pkt(&self->mt[1], "rx", 3, T0 + 80 * US, &ack);
	ASSERT_EQ(0, run_merge(self->mt, AB, 2, PF_MERGE_JSON, &self->r));
	ASSERT_EQ(3, self->r.n);
	j1 = journey_of(&self->r, "client", 1);
	j2 = journey_of(&self->r, "server", 2);
	j3 = journey_of(&self->r, "client", 3);
	EXPECT_NE(j1, j2);
	EXPECT_NE(j2, j3);
	EXPECT_NE(j1, j3);
	EXPECT_EQ(j1, journey_of(&self->r, "server", 1));
	EXPECT_EQ(j2, journey_of(&self->r, "client", 2));
	EXPECT_EQ(j3, journey_of(&self->r, "server", 3));
	EXPECT_STREQ("S", hstr(pf_json_get(self->r.j[j1], "packet"), "tcp_flags"));
	EXPECT_STREQ("SA", hstr(pf_json_get(self->r.j[j2], "packet"), "tcp_flags"));
	EXPECT_STREQ("A", hstr(pf_json_get(self->r.j[j3], "packet"), "tcp_flags"));
}

/* Two fragments of one datagram (same IP id): two journeys. */
TEST_F(merge, fragments)
{
	struct pkt f1, f2;
	unsigned char l4[200];
	int j1, j2;

	ip4(&f1, "10.9.0.1", "10.9.0.2", 17, 99, 64, 0x2000, l4,
	    udp(l4, 4000, 9000, "first part of a...."));
	memcpy(l4, "...second part of it", 20);
	ip4(&f2, "10.9.0.1", "10.9.0.2", 17, 99, 64, 3, l4, 20);
	mt_pkt(&self->mt[0], "tx", 1, T0, &f1);
	mt_pkt(&self->mt[0], "tx", 2, T0 + 1 * US, &f2);
	mt_pkt(&self->mt[1], "rx", 1, T0 + 20 * US, &f1);
	mt_pkt(&self->mt[1], "rx", 2, T0 + 21 * US, &f2);
	ASSERT_EQ(0, run_merge(self->mt, AB, 2, PF_MERGE_JSON, &self->r));
	ASSERT_EQ(2, self->r.n);
	j1 = journey_of(&self->r, "client", 1);
	j2 = journey_of(&self->r, "client", 2);
	EXPECT_NE(j1, j2);
	EXPECT_EQ(j1, journey_of(&self->r, "server", 1));
	EXPECT_EQ(j2, journey_of(&self->r, "server", 2));
	EXPECT_EQ(24, hnum(pf_json_get(self->r.j[j2], "packet"), "frag_offset"));
}

/*
 * Client -> router -> server: the router's rx and tx graphs of one
 * packet id join the hops; the router NATs the source. One journey of
 * three machines, in order, two hops.
 */
TEST_F(merge, router_three_machines)
{
	static const char *const names[] = { "client", "router", "server" };
	struct pkt c = udp4("10.9.0.1", 4000, "10.8.0.2", 9000, 12, 64, "via router");
	struct pkt rin = udp4("10.9.0.1", 4000, "10.8.0.2", 9000, 12, 64, "via router");
	struct pkt rout = udp4("10.8.0.1", 4000, "10.8.0.2", 9000, 12, 63, "via router");
	const struct pf_json *ms, *h;
	int j;

	mt_pkt(&self->mt[0], "tx", 1, T0, &c);
	mt_pkt(&self->mt[1], "rx", 40, T0 + 2 * MS + 20 * US, &rin);
	mt_pkt(&self->mt[1], "tx", 40, T0 + 2 * MS + 30 * US, &rout);
	mt_pkt(&self->mt[2], "rx", 3, T0 - 1 * MS + 45 * US, &rout);
	ASSERT_EQ(0, run_merge(self->mt, names, 3, PF_MERGE_JSON, &self->r));
	ASSERT_EQ(1, self->r.n);
	j = journey_of(&self->r, "router", 40);
	ASSERT_EQ(0, j);
	ms = pf_json_get(self->r.j[0], "machines");
	ASSERT_EQ(3, ms->n);
	EXPECT_STREQ("client", ms->items[0]->str);
	EXPECT_STREQ("router", ms->items[1]->str);
	EXPECT_STREQ("server", ms->items[2]->str);
	h = hop(&self->r, 0, 0);
	EXPECT_STREQ("client", hstr(h, "from"));
	EXPECT_STREQ("router", hstr(h, "to"));
	h = hop(&self->r, 0, 1);
	EXPECT_STREQ("router", hstr(h, "from"));
	EXPECT_STREQ("tx", hstr(h, "from_stage"));
	EXPECT_STREQ("server", hstr(h, "to"));
	EXPECT_STREQ("bytes", hstr(h, "match"));
	/* And end to end, client -> server, last: through the NAT. */
	h = hop(&self->r, 0, 2);
	EXPECT_STREQ("client", hstr(h, "from"));
	EXPECT_STREQ("server", hstr(h, "to"));
	EXPECT_STREQ("nat", hstr(h, "match"));
	EXPECT_EQ(NULL, hop(&self->r, 0, 3));
	/* The router's two graphs under its one packet. */
	EXPECT_EQ(2, pf_json_get(pf_json_get(self->r.j[0], "packets")->items[1],
				 "graphs")->n);
	/* Text: the machines in order, each one's graphs under its name. */
	result_free(&self->r);
	ASSERT_EQ(0, run_merge(self->mt, names, 3, PF_MERGE_TEXT, &self->r));
	EXPECT_NE(NULL, strstr(self->r.out, "# client -> router -> server\n"));
	EXPECT_NE(NULL, strstr(self->r.out, "## router: packet id 40\n# packet 1 (rx, id 40)"));
	EXPECT_NE(NULL, strstr(self->r.out, "# journey 1: udp 10.9.0.1:4000 -> 10.8.0.2:9000 ip id 12 length 38 payload 10\n"));
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/*
 * A real router: its packet's one rx graph forwards it (ip_forward), and
 * no tx graph follows. That graph is both what the router received and
 * what it sent: one journey client -> router -> server, the hops in and
 * out of the router, then client -> server direct (no NAT on the way).
 * The answer comes back the same way. Before, the router had no sent
 * graph: its packet was joined only from the client, the server's hop
 * from the client alone.
 */
TEST_F(merge, router_forwards_in_rx)
{
	static const char *const names[] = { "client", "router", "server" };
	struct pkt c = udp4("10.9.0.1", 4000, "10.8.0.2", 9000, 12, 64, "via router");
	struct pkt r = udp4("10.9.0.1", 4000, "10.8.0.2", 9000, 12, 64, "via router");
	struct pkt s = udp4("10.9.0.1", 4000, "10.8.0.2", 9000, 12, 63, "via router");
	struct pkt a = udp4("10.8.0.2", 9000, "10.9.0.1", 4000, 99, 64, "answer");
	struct pkt ar = udp4("10.8.0.2", 9000, "10.9.0.1", 4000, 99, 64, "answer");
	struct pkt ac = udp4("10.8.0.2", 9000, "10.9.0.1", 4000, 99, 63, "answer");
	const struct pf_json *ms, *h;
	const struct pf_merge_clock *cl;
	int j, k;

	mt_pkt(&self->mt[0], "tx", 1, T0, &c);
	mt_pkt(&self->mt[1], "rx-fwd", 40, T0 + 2 * MS + 20 * US, &r);
	mt_pkt(&self->mt[2], "rx", 3, T0 - 1 * MS + 45 * US, &s);
	mt_pkt(&self->mt[2], "tx", 4, T0 - 1 * MS + 100 * US, &a);
	mt_pkt(&self->mt[1], "rx-fwd", 41, T0 + 2 * MS + 80 * US, &ar);
	mt_pkt(&self->mt[0], "rx", 2, T0 + 120 * US, &ac);
	ASSERT_EQ(0, run_merge(self->mt, names, 3, PF_MERGE_JSON, &self->r));
	ASSERT_EQ(2, self->r.n);

	j = journey_of(&self->r, "router", 40);
	ASSERT_GE(j, 0);
	EXPECT_EQ(j, journey_of(&self->r, "client", 1));
	EXPECT_EQ(j, journey_of(&self->r, "server", 3));
	ms = pf_json_get(self->r.j[j], "machines");
	ASSERT_EQ(3, ms->n);
	EXPECT_STREQ("client", ms->items[0]->str);
	EXPECT_STREQ("router", ms->items[1]->str);
	EXPECT_STREQ("server", ms->items[2]->str);
	h = hop(&self->r, j, 0);
	EXPECT_STREQ("client", hstr(h, "from"));
	EXPECT_STREQ("router", hstr(h, "to"));
	EXPECT_STREQ("rx", hstr(h, "to_stage"));
	h = hop(&self->r, j, 1);
	EXPECT_STREQ("router", hstr(h, "from"));
	EXPECT_STREQ("rx", hstr(h, "from_stage"));
	EXPECT_STREQ("server", hstr(h, "to"));
	EXPECT_STREQ("bytes", hstr(h, "match"));
	EXPECT_TRUE(pf_json_get(h, "sure")->b);
	h = hop(&self->r, j, 2);
	EXPECT_STREQ("client", hstr(h, "from"));
	EXPECT_STREQ("server", hstr(h, "to"));
	EXPECT_EQ(NULL, hop(&self->r, j, 3));
	/* The router's one graph, once. */
	EXPECT_EQ(1, pf_json_get(pf_json_get(self->r.j[j], "packets")->items[1],
				 "graphs")->n);

	/* The answer: server -> router -> client. */
	k = journey_of(&self->r, "router", 41);
	ASSERT_GE(k, 0);
	EXPECT_NE(j, k);
	ms = pf_json_get(self->r.j[k], "machines");
	ASSERT_EQ(3, ms->n);
	EXPECT_STREQ("server", ms->items[0]->str);
	EXPECT_STREQ("router", ms->items[1]->str);
	EXPECT_STREQ("client", ms->items[2]->str);
	h = hop(&self->r, k, 1);
	EXPECT_STREQ("router", hstr(h, "from"));
	EXPECT_STREQ("client", hstr(h, "to"));

	/* Each pair's clocks bounded both ways, around the offsets. */
	cl = pf_merge_clock(self->r.m, 1, 2);	/* server - router */
	ASSERT_NE(NULL, cl);
	EXPECT_TRUE(cl->has_lo && cl->has_hi);
	EXPECT_EQ(1U, cl->n_ab);
	EXPECT_EQ(1U, cl->n_ba);
	EXPECT_LE(cl->lo, -(int64_t)(3 * MS) + (int64_t)(25 * US));
	EXPECT_GE(cl->hi, -(int64_t)(3 * MS) + (int64_t)(25 * US));
	result_free(&self->r);
	ASSERT_EQ(0, run_merge(self->mt, names, 3, PF_MERGE_TEXT, &self->r));
	EXPECT_NE(NULL, strstr(self->r.out, "# client -> router -> server\n"));
	EXPECT_NE(NULL, strstr(self->r.out, "# router rx -> server rx: "));
}

/*
 * Two forwarders in a row, no NAT: client -> router -> server, the
 * server forwarding on to a namespace behind it (its rx graph forwards
 * too), and the answer back from there. Router and server each have an
 * rx graph that is both what they received and what they sent, with the
 * same bytes: as bytes go, router -> server and server -> router both
 * match. The TTL tells the way (routers only lower it; a forwarded
 * packet's rx graph has it from before its own decrement): one link
 * each way per packet, the clocks of router and server consistent.
 * Seen on real traces (selftests/vm/multi three): before, both links,
 * the bounds of clock server - router crossed.
 */
TEST_F(merge, two_forwarders_ttl)
{
	static const char *const names[] = { "client", "router", "server" };
	struct pkt c = udp4("10.9.0.1", 4000, "10.8.0.2", 9000, 12, 64, "to srv");
	struct pkt r = udp4("10.9.0.1", 4000, "10.8.0.2", 9000, 12, 64, "to srv");
	struct pkt s = udp4("10.9.0.1", 4000, "10.8.0.2", 9000, 12, 63, "to srv");
	struct pkt a = udp4("10.8.0.2", 9000, "10.9.0.1", 4000, 99, 64, "from srv");
	struct pkt ar = udp4("10.8.0.2", 9000, "10.9.0.1", 4000, 99, 63, "from srv");
	struct pkt ac = udp4("10.8.0.2", 9000, "10.9.0.1", 4000, 99, 62, "from srv");
	const struct pf_merge_clock *cl;
	const struct pf_json *ms, *h;
	size_t i;
	int j, k;

	mt_pkt(&self->mt[0], "tx", 1, T0, &c);
	mt_pkt(&self->mt[1], "rx-fwd", 40, T0 + 2 * MS + 20 * US, &r);
	mt_pkt(&self->mt[2], "rx-fwd", 3, T0 - 1 * MS + 45 * US, &s);
	mt_pkt(&self->mt[2], "rx-fwd", 4, T0 - 1 * MS + 100 * US, &a);
	mt_pkt(&self->mt[1], "rx-fwd", 41, T0 + 2 * MS + 130 * US, &ar);
	mt_pkt(&self->mt[0], "rx", 2, T0 + 160 * US, &ac);
	ASSERT_EQ(0, run_merge(self->mt, names, 3, PF_MERGE_JSON, &self->r));
	ASSERT_EQ(2, self->r.n);
	j = journey_of(&self->r, "client", 1);
	k = journey_of(&self->r, "server", 4);
	ASSERT_GE(j, 0);
	ASSERT_GE(k, 0);
	ms = pf_json_get(self->r.j[j], "machines");
	ASSERT_EQ(3, ms->n);
	EXPECT_STREQ("client", ms->items[0]->str);
	EXPECT_STREQ("router", ms->items[1]->str);
	EXPECT_STREQ("server", ms->items[2]->str);
	ms = pf_json_get(self->r.j[k], "machines");
	ASSERT_EQ(3, ms->n);
	EXPECT_STREQ("server", ms->items[0]->str);
	EXPECT_STREQ("router", ms->items[1]->str);
	EXPECT_STREQ("client", ms->items[2]->str);
	/* Three hops each (two, then end to end), none against the TTL. */
	for (i = 0; i < 3; i++) {
		h = hop(&self->r, j, i);
		ASSERT_NE(NULL, h);
		EXPECT_STRNE("server", hstr(h, "from"));
		h = hop(&self->r, k, i);
		ASSERT_NE(NULL, h);
		EXPECT_STRNE("client", hstr(h, "from"));
	}
	EXPECT_EQ(NULL, hop(&self->r, j, 3));
	EXPECT_EQ(NULL, hop(&self->r, k, 3));
	cl = pf_merge_clock(self->r.m, 1, 2);	/* server - router */
	ASSERT_NE(NULL, cl);
	EXPECT_EQ(1U, cl->n_ab);
	EXPECT_EQ(1U, cl->n_ba);
	ASSERT_TRUE(cl->has_lo && cl->has_hi);
	EXPECT_LE(cl->lo, cl->hi);
}

/*
 * A lazy filter held the first packet at the receiver's rx while it armed
 * (3 s here): the event is written at the replay, held_ns= after the
 * packet came. Its arrival is the event's time less held_ns: the clocks
 * and the one-way time are those of two_ways_offset, not 3 s more.
 */
TEST_F(merge, held_at_rx)
{
	struct pkt q = udp4("10.9.0.1", 4000, "10.9.0.2", 9000, 1, 64, "hello pktfilt");
	struct pkt q2 = udp4("10.9.0.1", 4000, "10.9.0.2", 9000, 1, 63, "hello pktfilt");
	struct pkt a = udp4("10.9.0.2", 9000, "10.9.0.1", 4000, 77, 64, "hello back");
	struct pkt a2 = udp4("10.9.0.2", 9000, "10.9.0.1", 4000, 77, 63, "hello back");
	const uint64_t off = 5 * MS, hold = 3000 * MS;
	const struct pf_merge_clock *c;
	const struct pf_json *h;
	int j;

	mt_pkt(&self->mt[0], "tx", 1, T0, &q);
	next_held = hold;
	mt_pkt(&self->mt[1], "rx", 10, T0 + off + 40 * US + hold, &q2);
	/* The answer, sent after the replay; the client armed already. */
	mt_pkt(&self->mt[1], "tx", 11, T0 + off + 100 * US + hold, &a);
	mt_pkt(&self->mt[0], "rx", 2, T0 + 160 * US + hold, &a2);
	ASSERT_EQ(0, run_merge(self->mt, AB, 2, PF_MERGE_JSON, &self->r));
	ASSERT_EQ(2, self->r.n);
	c = pf_merge_clock(self->r.m, 0, 1);
	ASSERT_NE(NULL, c);
	ASSERT_TRUE(c->has_lo && c->has_hi);
	EXPECT_EQ((int64_t)(off + 40 * US), c->hi);
	EXPECT_EQ((int64_t)(off - 60 * US), c->lo);
	j = journey_of(&self->r, "client", 1);
	ASSERT_GE(j, 0);
	h = hop(&self->r, j, 0);
	EXPECT_EQ(0, hnum(h, "one_way_min_ns"));
	EXPECT_EQ(100 * US, hnum(h, "one_way_max_ns"));
	EXPECT_EQ(50 * US, hnum(h, "one_way_ns"));
	/* The graph keeps its held_ns for the reader. */
	EXPECT_NE(NULL, strstr(self->r.out, "\"held_ns\":3000000000"));
}

/*
 * pcapng: an interface per machine and stage, named so; each frame's
 * packet_id its journey, its time on the first machine's clock.
 */
TEST_F(merge, pcapng)
{
	struct pkt q = udp4("10.9.0.1", 4000, "10.9.0.2", 9000, 1, 64, "hello pktfilt");
	struct pkt a = udp4("10.9.0.2", 9000, "10.9.0.1", 4000, 77, 64, "hello back");
	const unsigned char *b;
	size_t pos = 0, nidb = 0, nepb = 0;
	uint64_t ids[8], ts[8];
	uint32_t ifs[8];

	mt_pkt(&self->mt[0], "tx", 1, T0, &q);
	mt_pkt(&self->mt[1], "rx", 10, T0 + 5 * MS + 40 * US, &q);
	mt_pkt(&self->mt[1], "tx", 11, T0 + 5 * MS + 100 * US, &a);
	mt_pkt(&self->mt[0], "rx", 2, T0 + 160 * US, &a);
	ASSERT_EQ(0, run_merge(self->mt, AB, 2, PF_MERGE_PCAPNG, &self->r));
	b = (const unsigned char *)self->r.out;
	while (pos + 12 <= self->r.len) {
		uint32_t type = le32(b + pos), len = le32(b + pos + 4);

		ASSERT_GE(len, 12);
		ASSERT_LE(pos + len, self->r.len);
		if (type == 1)
			nidb++;
		if (type == 6 && nepb < 8) {
			size_t o = pos + 28 + ((le32(b + pos + 20) + 3) & ~3U);

			ifs[nepb] = le32(b + pos + 8);
			ts[nepb] = (uint64_t)le32(b + pos + 12) << 32 |
				   le32(b + pos + 16);
			ids[nepb] = 0;
			/* Options: find packet_id (5). */
			while (o + 4 <= pos + len - 4) {
				unsigned int code = b[o] | b[o + 1] << 8;
				unsigned int olen = b[o + 2] | b[o + 3] << 8;

				if (!code)
					break;
				if (code == 5 && olen == 8)
					memcpy(&ids[nepb], b + o + 4, 8);
				o += 4 + ((olen + 3) & ~3U);
			}
			nepb++;
		}
		pos += len;
	}
	EXPECT_EQ(self->r.len, pos);
	EXPECT_EQ(4, nidb);
	ASSERT_EQ(4, nepb);
	/* Journey 1: client tx, server rx; journey 2: server tx, client rx */
	EXPECT_EQ(1, ids[0]);
	EXPECT_EQ(1, ids[1]);
	EXPECT_EQ(2, ids[2]);
	EXPECT_EQ(2, ids[3]);
	EXPECT_EQ(0, ifs[0]);
	EXPECT_EQ(1, ifs[1]);
	/* o = 4.990 ms: the server's rx at T0 + 50 us on the client's clock */
	EXPECT_EQ(T0, ts[0]);
	EXPECT_EQ(T0 + 50 * US, ts[1]);
	EXPECT_NE(NULL, memmem(b, self->r.len, "server rx", 9));
	EXPECT_NE(NULL, memmem(b, self->r.len, "pktfilt journey=2 machine=client id=2 seq=2 stage=rx", 51));
}

/* html: a row per journey, a lane per machine, names and text escaped. */
TEST_F(merge, html_lanes)
{
	static const char *const names[] = { "client", "<b>server</b>" };
	struct pkt q = udp4("10.9.0.1", 4000, "10.9.0.2", 9000, 1, 64, "hello pktfilt");
	struct pkt lone = udp4("10.9.0.1", 4000, "10.9.0.2", 9000, 2, 64, "lost");
	const char *row2, *p;
	int cells = 0;

	mt_pkt(&self->mt[0], "tx", 1, T0, &q);
	mt_pkt(&self->mt[0], "tx", 2, T0 + 1 * MS, &lone);
	mt_pkt(&self->mt[1], "rx", 1, T0 + 40 * US, &q);
	ASSERT_EQ(0, run_merge(self->mt, names, 2, PF_MERGE_HTML, &self->r));
	EXPECT_NE(NULL, strstr(self->r.out, "<th>journey</th><th>client</th><th>&lt;b&gt;server&lt;/b&gt;</th></tr>"));
	EXPECT_EQ(NULL, strstr(self->r.out, "<b>server"));
	EXPECT_NE(NULL, strstr(self->r.out, "<tr id=\"j1\"><td class=\"j\"><b>journey 1</b><br>udp 10.9.0.1:4000 -&gt; 10.9.0.2:9000"));
	EXPECT_NE(NULL, strstr(self->r.out, "<li>client tx -&gt; &lt;b&gt;server&lt;/b&gt; rx: at least 0.000 us one way (clocks only bounded"));
	/* Journey 1 lanes: client's graph 1., the server's 2. */
	EXPECT_NE(NULL, strstr(self->r.out, "<summary><span class=\"n\">2.</span> # packet 1 (rx, id 1)"));
	row2 = strstr(self->r.out, "<tr id=\"j2\"><td class=\"j alone\">");
	ASSERT_NE(NULL, row2);
	EXPECT_NE(NULL, strstr(row2, "<i>seen on no other machine</i>"));
	for (p = row2; (p = strstr(p, "<td")) && p < strstr(row2, "</tr>"); p++)
		cells++;
	EXPECT_EQ(3, cells);	/* the journey, client's lane, server's */
	EXPECT_NE(NULL, strstr(self->r.out, "</table>\n</body></html>\n"));
}

struct seen_graphs {
	char what[8][48];
	size_t n;
};

static int note_graph(void *arg, uint64_t journey, const char *machine,
		      const struct pf_packet *pkt)
{
	struct seen_graphs *g = arg;

	if (g->n < 8)
		snprintf(g->what[g->n++], sizeof(g->what[0]),
			 "%" PRIu64 " %s %s %" PRIu64, journey, machine,
			 pkt->stage, pkt->id);
	return 0;
}

/*
 * pktfilt diff reads a journey of merge's JSON: every graph of every
 * machine, in order (journey:N@MACHINE picks them); a broken one is
 * refused.
 */
TEST_F(merge, diff_reads_journey)
{
	static const char *const names[] = { "client", "router", "server" };
	struct pkt c = udp4("10.9.0.1", 4000, "10.8.0.2", 9000, 12, 64, "via router");
	struct pkt co = udp4("10.8.0.1", 4000, "10.8.0.2", 9000, 12, 63, "via router");
	struct seen_graphs g = { .n = 0 };
	char err[256], *nl;

	mt_pkt(&self->mt[0], "tx", 1, T0, &c);
	mt_pkt(&self->mt[1], "rx", 40, T0 + 20 * US, &c);
	mt_pkt(&self->mt[1], "tx", 40, T0 + 30 * US, &co);
	mt_pkt(&self->mt[2], "rx", 3, T0 + 45 * US, &co);
	ASSERT_EQ(0, run_merge(self->mt, names, 3, PF_MERGE_JSON, &self->r));
	nl = strchr(self->r.out, '\n');
	ASSERT_NE(NULL, nl);
	ASSERT_EQ(0, pf_diff_journey(self->r.out, (size_t)(nl - self->r.out),
				     note_graph, &g, err, sizeof(err)));
	ASSERT_EQ(4, g.n);
	EXPECT_STREQ("1 client tx 1", g.what[0]);
	EXPECT_STREQ("1 router rx 40", g.what[1]);
	EXPECT_STREQ("1 router tx 40", g.what[2]);
	EXPECT_STREQ("1 server rx 3", g.what[3]);
	/* Cut short, or a report line: not a journey. */
	EXPECT_EQ(-EINVAL, pf_diff_journey(self->r.out, 200, note_graph, &g,
					   err, sizeof(err)));
	EXPECT_EQ(-EINVAL, pf_diff_journey("{\"seq\": 1}", 10, note_graph,
					   &g, err, sizeof(err)));
}

/* IPv6 with the flow label, hop limit @hl, after a fragment header if @frag. */
static void ip6(struct pkt *p, unsigned int src_last, unsigned int dst_last,
		int nh, uint32_t flow, int hl, bool frag, uint32_t frag_id,
		unsigned int frag_off, const unsigned char *l4, size_t l4len)
{
	unsigned char *h = p->b;
	size_t ext = frag ? 8 : 0;

	memset(h, 0, 40 + ext);
	be32put(h, 6U << 28 | (flow & 0xfffff));
	h[4] = (unsigned char)((l4len + ext) >> 8);
	h[5] = (unsigned char)(l4len + ext);
	h[6] = (unsigned char)(frag ? 44 : nh);
	h[7] = (unsigned char)hl;
	h[8] = 0xfd;		/* fd00::SRC -> fd00::DST */
	h[23] = (unsigned char)src_last;
	h[24] = 0xfd;
	h[39] = (unsigned char)dst_last;
	if (frag) {
		h[40] = (unsigned char)nh;
		h[42] = (unsigned char)(frag_off >> 8);
		h[43] = (unsigned char)frag_off;
		be32put(h + 44, frag_id);
	}
	memcpy(h + 40 + ext, l4, l4len);
	p->n = 40 + ext + l4len;
}

/*
 * IPv6: the hop limit changes, the flow label does not; ICMPv6 echo
 * request and reply two journeys; two fragments of one datagram two.
 */
TEST_F(merge, ipv6)
{
	struct pkt q, q2, rq, rp, f1, f2;
	unsigned char l4[200];
	int j;

	ip6(&q, 1, 2, 17, 0x12345, 64, false, 0, 0, l4,
	    udp(l4, 4000, 9000, "hello over v6"));
	q2 = q;
	q2.b[7] = 63;
	ip6(&rq, 1, 2, 58, 0xabc, 64, false, 0, 0, l4,
	    icmp(l4, 128, 7, 1, "ping payload 0123"));
	ip6(&rp, 2, 1, 58, 0xabc, 64, false, 0, 0, l4,
	    icmp(l4, 129, 7, 1, "ping payload 0123"));
	ip6(&f1, 1, 2, 17, 0x1, 64, true, 77, 0x0001, l4,
	    udp(l4, 4000, 9000, "first fragment, part 1"));
	memcpy(l4, "the second fragment of it", 25);
	ip6(&f2, 1, 2, 17, 0x1, 64, true, 77, 24, l4, 25);
	mt_pkt(&self->mt[0], "tx", 1, T0, &q);
	mt_pkt(&self->mt[1], "rx", 1, T0 + 30 * US, &q2);
	mt_pkt(&self->mt[0], "tx", 2, T0 + 1 * MS, &rq);
	mt_pkt(&self->mt[1], "rx", 2, T0 + 1 * MS + 30 * US, &rq);
	mt_pkt(&self->mt[1], "tx", 3, T0 + 1 * MS + 40 * US, &rp);
	mt_pkt(&self->mt[0], "rx", 3, T0 + 1 * MS + 70 * US, &rp);
	mt_pkt(&self->mt[0], "tx", 4, T0 + 2 * MS, &f1);
	mt_pkt(&self->mt[0], "tx", 5, T0 + 2 * MS + 1 * US, &f2);
	mt_pkt(&self->mt[1], "rx", 4, T0 + 2 * MS + 30 * US, &f1);
	mt_pkt(&self->mt[1], "rx", 5, T0 + 2 * MS + 31 * US, &f2);
	ASSERT_EQ(0, run_merge(self->mt, AB, 2, PF_MERGE_JSON, &self->r));
	ASSERT_EQ(5, self->r.n);
	j = journey_of(&self->r, "client", 1);
	EXPECT_EQ(j, journey_of(&self->r, "server", 1));
	EXPECT_STREQ("bytes", hstr(hop(&self->r, j, 0), "match"));
	EXPECT_EQ(0x12345, hnum(pf_json_get(self->r.j[j], "packet"), "flow_label"));
	EXPECT_STREQ("fd00::1", hstr(pf_json_get(self->r.j[j], "packet"), "saddr"));
	j = journey_of(&self->r, "client", 2);
	EXPECT_EQ(j, journey_of(&self->r, "server", 2));
	EXPECT_NE(j, journey_of(&self->r, "server", 3));
	EXPECT_EQ(128, hnum(pf_json_get(self->r.j[j], "packet"), "icmp_type"));
	j = journey_of(&self->r, "server", 3);
	EXPECT_EQ(j, journey_of(&self->r, "client", 3));
	j = journey_of(&self->r, "client", 4);
	EXPECT_EQ(j, journey_of(&self->r, "server", 4));
	EXPECT_NE(j, journey_of(&self->r, "client", 5));
	EXPECT_EQ(journey_of(&self->r, "client", 5),
		  journey_of(&self->r, "server", 5));
	EXPECT_EQ(77, hnum(pf_json_get(self->r.j[j], "packet"), "ip_id"));
	/* Both ways sure: 30 us each way, the offset 0 within +-30 us. */
	EXPECT_EQ(30 * US, hnum(hop(&self->r, journey_of(&self->r, "client", 1), 0),
				"one_way_ns"));
}

/* NAT of a ping: the echo id rewritten; matched through "nat". */
TEST_F(merge, nat_icmp_id)
{
	struct pkt rq, rqn;
	unsigned char l4[200];
	int j;

	ip4(&rq, "10.9.0.1", "10.9.0.2", 1, 300, 64, 0x4000, l4,
	    icmp(l4, 8, 0x1111, 5, "ping through nat"));
	ip4(&rqn, "192.0.2.1", "10.9.0.2", 1, 300, 63, 0x4000, l4,
	    icmp(l4, 8, 0x9999, 5, "ping through nat"));
	mt_pkt(&self->mt[0], "tx", 1, T0, &rq);
	mt_pkt(&self->mt[1], "rx", 1, T0 + 30 * US, &rqn);
	ASSERT_EQ(0, run_merge(self->mt, AB, 2, PF_MERGE_JSON, &self->r));
	ASSERT_EQ(1, self->r.n);
	j = journey_of(&self->r, "client", 1);
	EXPECT_EQ(j, journey_of(&self->r, "server", 1));
	EXPECT_STREQ("nat", hstr(hop(&self->r, j, 0), "match"));
}

/* What the wire changes does not change the keys; what it keeps does. */
TEST(merge_keys)
{
	struct pkt a = udp4("10.9.0.1", 4000, "10.9.0.2", 9000, 1, 64, "hello");
	struct pkt b = a, c = a, d = a;
	struct pf_merge_keys ka, kb, kc, kd;

	b.b[8] = 1;		/* TTL */
	b.b[10] ^= 0xff;	/* checksum */
	b.b[1] = 0x10;		/* TOS */
	b.b[26] = 0;		/* UDP checksum */
	c.b[29] ^= 1;		/* the payload */
	d.n = 20;		/* bytes end after the IP header */
	pf_merge_keys(a.b, (uint32_t)a.n, &ka);
	pf_merge_keys(b.b, (uint32_t)b.n, &kb);
	pf_merge_keys(c.b, (uint32_t)c.n, &kc);
	pf_merge_keys(d.b, (uint32_t)d.n, &kd);
	ASSERT_TRUE(ka.have[PF_MERGE_BYTES] && ka.have[PF_MERGE_NAT] &&
		    ka.have[PF_MERGE_IP]);
	EXPECT_EQ(ka.k[PF_MERGE_BYTES], kb.k[PF_MERGE_BYTES]);
	EXPECT_EQ(ka.k[PF_MERGE_NAT], kb.k[PF_MERGE_NAT]);
	EXPECT_NE(ka.k[PF_MERGE_BYTES], kc.k[PF_MERGE_BYTES]);
	EXPECT_NE(ka.k[PF_MERGE_NAT], kc.k[PF_MERGE_NAT]);
	EXPECT_EQ(ka.k[PF_MERGE_IP], kc.k[PF_MERGE_IP]);
	EXPECT_FALSE(kd.have[PF_MERGE_BYTES]);
	EXPECT_TRUE(kd.have[PF_MERGE_IP]);
	EXPECT_EQ(ka.k[PF_MERGE_IP], kd.k[PF_MERGE_IP]);
	/* Not IP: no key. */
	a.b[0] = 0x15;
	pf_merge_keys(a.b, (uint32_t)a.n, &ka);
	EXPECT_FALSE(ka.have[PF_MERGE_IP]);
}

/* The real fixture, split: its tx packet on one machine, rx on another. */
TEST(merge_fixture_split)
{
	char *t = fixture("pcapng", "rx-tx-bytes"), *out = NULL;
	size_t len = 0;
	struct pf_merge *m;
	const char *cut;
	FILE *f;

	ASSERT_NE(NULL, t);
	/* Its events 1 (tx) and 2 (rx, 20 bytes only) of packet id 1. */
	cut = strstr(t, " 1)               |  /* pktfilt_packet: seq=2 ");
	ASSERT_NE(NULL, cut);
	m = pf_merge_new(PF_MERGE_TEXT, true);
	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, pf_merge_begin(m, "a"));
	ASSERT_EQ(0, pf_merge_feed(m, t, (size_t)(cut - t)));
	ASSERT_EQ(0, pf_merge_end(m));
	ASSERT_EQ(0, pf_merge_begin(m, "b"));
	ASSERT_EQ(0, pf_merge_feed(m, cut, strlen(cut)));
	ASSERT_EQ(0, pf_merge_end(m));
	f = open_memstream(&out, &len);
	ASSERT_EQ(0, pf_merge_write(m, f));
	fclose(f);
	/*
	 * b's rx ids 1 and 2 carry the same 20 bytes: matched on the IP
	 * header, the first by order; no clock (no one-to-one match).
	 */
	EXPECT_NE(NULL, strstr(out, "# a -> b\n# a tx -> b rx: one-way time unknown (no packet matched one to one to set the clocks), matched by ip, one of copies paired by time\n## a: packet id 1\n"));
	EXPECT_NE(NULL, strstr(out, "# b only: seen on no other machine\n## b: packet id 2\n"));
	EXPECT_NE(NULL, strstr(out, "# b only: its events carry no bytes"));
	EXPECT_EQ(1, pf_merge_stats(m)->links);
	EXPECT_EQ(3, pf_merge_stats(m)->journeys);
	free(out);
	free(t);
	pf_merge_free(m);
}

TEST_HARNESS_MAIN
