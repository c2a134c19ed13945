// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness of "pktfilt merge" (tool/merge.c): the input, after
 * its first byte (bit 0: JSON or text, bit 3: pcapng instead, bit 4:
 * HTML; bits 1-2: the chunk size the traces are fed in), split at NUL
 * bytes, is the traces of up to
 * PF_MERGE_MAX_MACHINES machines m0, m1, ... Each is read through the
 * streaming parser, its packets' bytes (data=) parsed and matched, the
 * clocks estimated, the journeys written. Invariants, besides no crash
 * and no sanitizer report:
 *  - pf_merge_write() succeeds (memory is not short here);
 *  - JSON: each line parses; the journeys are as many as the stats say;
 *    every machine's packet is in exactly one journey (no packet in two
 *    journeys, none lost); a journey of one packet is "alone" and has no
 *    hop; each hop's ends are machines of its journey, one-way times are
 *    not negative (u64), min <= estimate <= max where known;
 *  - each pair's clock interval comes from as many sure links as it says;
 *  - pcapng: whole blocks, a section header first.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "merge.h"

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "invariant failed: %s (%s:%d)\n", \
				#cond, __FILE__, __LINE__);		\
			abort();					\
		}							\
	} while (0)

#define MAX_M	8

static const struct pf_json *get(const struct pf_json *o, const char *key)
{
	const struct pf_json *v = pf_json_get(o, key);

	CHECK(v);
	return v;
}

struct mid {
	int machine;
	uint64_t id;
};

static int cmp_mid(const void *pa, const void *pb)
{
	const struct mid *a = pa, *b = pb;

	if (a->machine != b->machine)
		return a->machine < b->machine ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* The machine index of name "mN" in @names of the journey, or -1. */
static int machine_of(const struct pf_json *v)
{
	CHECK(v->type == PF_J_STR && v->str[0] == 'm' && v->str[1] >= '0' &&
	      v->str[1] < '0' + MAX_M && !v->str[2]);
	return v->str[1] - '0';
}

static void check_json(const char *out, size_t len,
		       const struct pf_merge_stats *st)
{
	struct mid *seen = malloc((st->packets + 1) * sizeof(*seen));
	size_t nseen = 0, journeys = 0, i, k;
	const char *line = out, *end = out + len, *nl;
	char err[256];

	CHECK(seen);
	while (line < end) {
		struct pf_json *j;
		const struct pf_json *pk, *ms, *hops;
		bool in[MAX_M] = { false };

		nl = memchr(line, '\n', (size_t)(end - line));
		CHECK(nl);
		j = pf_json_parse(line, (size_t)(nl - line), 1100, 100000000,
				  err, sizeof(err));
		if (!j)
			fprintf(stderr, "%s\n%.2000s\n", err, line);
		CHECK(j);
		journeys++;
		CHECK(get(j, "journey")->u64 == journeys);
		ms = get(j, "machines");
		pk = get(j, "packets");
		hops = get(j, "hops");
		CHECK(ms->type == PF_J_ARR && pk->type == PF_J_ARR &&
		      hops->type == PF_J_ARR);
		CHECK(ms->n == pk->n && pk->n >= 1);
		CHECK(get(j, "alone")->b == (pk->n == 1));
		if (pk->n == 1)
			CHECK(hops->n == 0);
		else
			CHECK(hops->n >= pk->n - 1);
		for (i = 0; i < pk->n; i++) {
			const struct pf_json *id = get(pk->items[i], "id");
			int mi = machine_of(get(pk->items[i], "machine"));

			CHECK(machine_of(ms->items[i]) == mi);
			CHECK(id->type == PF_J_NUM && id->is_u64);
			in[mi] = true;
			CHECK(nseen < st->packets);
			seen[nseen].machine = mi;
			seen[nseen++].id = id->u64;
		}
		for (k = 0; k < hops->n; k++) {
			const struct pf_json *h = hops->items[k];
			const struct pf_json *mn = get(h, "one_way_min_ns");
			const struct pf_json *mx = get(h, "one_way_max_ns");
			const struct pf_json *est = get(h, "one_way_ns");

			CHECK(in[machine_of(get(h, "from"))]);
			CHECK(in[machine_of(get(h, "to"))]);
			CHECK(strcmp(get(h, "from")->str, get(h, "to")->str));
			CHECK(mn->type == PF_J_NULL || mn->is_u64);
			CHECK(mx->type == PF_J_NULL || mx->is_u64);
			if (mn->type != PF_J_NULL && mx->type != PF_J_NULL) {
				CHECK(mn->u64 <= mx->u64);
				CHECK(est->is_u64 && mn->u64 <= est->u64 &&
				      est->u64 <= mx->u64);
			} else {
				CHECK(est->type == PF_J_NULL);
			}
		}
		pf_json_free(j);
		line = nl + 1;
	}
	CHECK(journeys == st->journeys);
	CHECK(nseen == st->packets);
	/* No packet in two journeys (ids are unique per machine here). */
	qsort(seen, nseen, sizeof(*seen), cmp_mid);
	for (i = 1; i < nseen; i++)
		CHECK(cmp_mid(&seen[i], &seen[i - 1]));
	free(seen);
}

/* pcapng: whole blocks, each its length twice; a section header first. */
static void check_pcapng(const unsigned char *b, size_t len)
{
	size_t pos = 0;
	uint32_t l, l2;

	CHECK(len >= 12);
	memcpy(&l, b, 4);
	CHECK(l == 0x0A0D0D0A);
	while (pos < len) {
		CHECK(len - pos >= 12);
		memcpy(&l, b + pos + 4, 4);
		CHECK(l >= 12 && l % 4 == 0 && l <= len - pos);
		memcpy(&l2, b + pos + l - 4, 4);
		CHECK(l == l2);
		pos += l;
	}
}

/*
 * html: the trace's text never makes a tag (no script, no element of its
 * own): only the page's tags, a row per journey and the header's.
 */
static void check_html(const char *out, size_t len,
		       const struct pf_merge_stats *st)
{
	static const char *const tags[] = {
		"<!DOCTYPE html>", "<html>", "<head>", "<meta ", "<title>",
		"<style>", "<body>", "<h1>", "<pre>", "<table>", "<tr>",
		"<tr id=", "<th>", "<td>", "<td class=", "<b>", "<br>", "<i>",
		"<ul>", "<li>", "<details>", "<summary>", "<span class=", "</",
	};
	size_t i, rows = 0;
	const char *p;

	CHECK(strlen(out) == len);
	for (p = out; (p = strchr(p, '<')); p++) {
		bool known = false;

		for (i = 0; i < sizeof(tags) / sizeof(tags[0]); i++)
			if (!strncmp(p, tags[i], strlen(tags[i])))
				known = true;
		CHECK(known);
		if (!strncmp(p, "<tr", 3))
			rows++;
	}
	CHECK(rows == st->journeys + 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum pf_merge_format fmt;
	static const size_t chunks[] = { 1 << 20, 1, 7, 4096 };
	struct pf_merge *m;
	const char *s, *e, *z;
	char *out = NULL, name[8];
	size_t len = 0, n = 0, chunk, i, a, b;
	uint64_t sure = 0;
	FILE *f;

	if (!size)
		return 0;
	fmt = data[0] & 16 ? PF_MERGE_HTML : data[0] & 8 ? PF_MERGE_PCAPNG :
	      data[0] & 1 ? PF_MERGE_JSON : PF_MERGE_TEXT;
	chunk = chunks[(data[0] >> 1) & 3];
	s = (const char *)data + 1;
	e = (const char *)data + size;
	m = pf_merge_new(fmt, true);
	CHECK(m);
	do {
		z = memchr(s, '\0', (size_t)(e - s));
		if (!z || n == MAX_M - 1)
			z = e;
		snprintf(name, sizeof(name), "m%zu", n++);
		CHECK(pf_merge_begin(m, name) == 0);
		for (i = 0; i < (size_t)(z - s); i += chunk)
			CHECK(pf_merge_feed(m, s + i, (size_t)(z - s) - i < chunk ?
					    (size_t)(z - s) - i : chunk) == 0);
		CHECK(pf_merge_end(m) == 0);
		s = z + 1;
	} while (z < e);
	f = open_memstream(&out, &len);
	CHECK(f);
	CHECK(pf_merge_write(m, f) == 0);
	fclose(f);
	if (fmt == PF_MERGE_JSON && pf_merge_stats(m)->packets <= 100000)
		check_json(out, len, pf_merge_stats(m));
	if (fmt == PF_MERGE_PCAPNG)
		check_pcapng((const unsigned char *)out, len);
	if (fmt == PF_MERGE_HTML)
		check_html(out, len, pf_merge_stats(m));
	for (a = 0; a < n; a++) {
		for (b = a + 1; b < n; b++) {
			const struct pf_merge_clock *c = pf_merge_clock(m, a, b);

			CHECK(c);
			CHECK(c->has_hi == (c->n_ab > 0));
			CHECK(c->has_lo == (c->n_ba > 0));
			CHECK(c->n_ab + c->n_ba <= c->links);
			sure += c->n_ab + c->n_ba;
		}
	}
	CHECK(sure <= pf_merge_stats(m)->links);
	free(out);
	pf_merge_free(m);
	return 0;
}
