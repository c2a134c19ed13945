// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness of "pktfilt diff"'s JSON input and of the comparison
 * (tool/json.c, tool/diff.c). The input is two lines, A and B, each read
 * as one line of report --format json; the whole input is also given to
 * the JSON reader as one document. Invariants, besides no crash and no
 * sanitizer report:
 *  - a packet compared with itself is the same (0), and its JSON
 *    comparison parses, with every call in common;
 *  - A against B: 0 or 1; the JSON comparison parses, and the counts add
 *    up: common + only_a = A's calls, common + only_b = B's calls;
 *  - line A read as a journey of pktfilt merge's JSON: each of its
 *    graphs the same as itself; 0, -EINVAL, or the callback's stop.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "json.h"

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "invariant failed: %s (%s:%d)\n", \
				#cond, __FILE__, __LINE__);		\
			abort();					\
		}							\
	} while (0)

static uint64_t num(const struct pf_json *o, const char *obj, const char *key)
{
	const struct pf_json *v = pf_json_get(obj ? pf_json_get(o, obj) : o,
					      key);

	CHECK(v && v->type == PF_J_NUM && v->is_u64);
	return v->u64;
}

/* Compare @a and @b as JSON; check it; its return. */
static int compare(const struct pf_packet *a, const struct pf_packet *b)
{
	struct pf_diff_opts o = { .format = PF_DIFF_JSON, .top = 3,
				  .name_a = "a", .name_b = "b\"\\" };
	char *buf = NULL, *data, err[256];
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	struct pf_json *j;
	int ret;

	CHECK(m);
	ret = pf_diff(m, a, b, &o);
	fclose(m);
	CHECK(ret == 0 || ret == 1);
	j = pf_json_parse(buf, len, 64, 100000000, err, sizeof(err));
	if (!j)
		fprintf(stderr, "%s\n%.2000s\n", err, buf);
	CHECK(j);
	CHECK(num(j, "calls", "common") + num(j, "calls", "only_a") ==
	      num(j, "a", "calls"));
	CHECK(num(j, "calls", "common") + num(j, "calls", "only_b") ==
	      num(j, "b", "calls"));
	pf_json_free(j);
	free(buf);
	/* The text and the HTML page too (to nowhere). */
	o.format = PF_DIFF_TEXT;
	m = open_memstream(&buf, &len);
	CHECK(m);
	CHECK(pf_diff(m, a, b, &o) == ret);
	fclose(m);
	free(buf);
	o.format = PF_DIFF_HTML;
	m = open_memstream(&buf, &len);
	CHECK(m);
	CHECK(pf_diff(m, a, b, &o) == ret);
	fclose(m);
	/* A name from the input never ends the data's <script> element. */
	data = buf ? strstr(buf, "id=\"pf-diff\">") : NULL;
	CHECK(data && !strstr(data, "</script><script"));
	free(buf);
	return ret;
}

/* A graph of a journey (pktfilt merge's JSON) compared with itself. */
static int journey_graph(void *arg, uint64_t journey, const char *machine,
			 const struct pf_packet *pkt)
{
	(void)journey;
	CHECK(machine);
	CHECK(compare(pkt, pkt) == 0);
	++*(size_t *)arg;
	return *(size_t *)arg >= 4;	/* enough: stop (returned) */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	const char *nl = memchr(s, '\n', size);
	size_t la = nl ? (size_t)(nl - s) : size;
	struct pf_packet *a, *b = NULL;
	struct pf_json *whole;
	char err[256];

	size_t graphs = 0;
	int jr;

	whole = pf_json_parse(s, size, 1100, 1000000, err, sizeof(err));
	pf_json_free(whole);
	/* Line A as a journey of pktfilt merge: each graph read. */
	jr = pf_diff_journey(s, la, journey_graph, &graphs, err, sizeof(err));
	CHECK(jr == 0 || jr == -EINVAL || jr == 1);
	a = pf_diff_packet_json(s, la, err, sizeof(err));
	if (nl)
		b = pf_diff_packet_json(nl + 1, size - la - 1, err,
					sizeof(err));
	if (a)
		CHECK(compare(a, a) == 0);
	if (b)
		CHECK(compare(b, b) == 0);
	if (a && b)
		compare(a, b);
	pf_diff_packet_free(a);
	pf_diff_packet_free(b);
	return 0;
}
