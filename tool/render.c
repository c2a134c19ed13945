// SPDX-License-Identifier: GPL-2.0
/*
 * Renderings of parsed function_graph traces: text, JSON Lines, folded
 * stacks, SVG. See render.h. The trees are at most PF_FGRAPH_MAX_DEPTH + 1
 * deep (fgraph.c sees to it), which bounds the recursion here.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"

static int out_status(FILE *out)
{
	if (fflush(out) || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

static void skip_warning(const char *what, const struct pf_packet *pkt)
{
	char why[160];

	fprintf(stderr, "pktfilt: %s: packet %" PRIu64 " skipped: incomplete (%s)\n",
		what, pkt->seq, pf_incomplete_str(pkt->incomplete, why,
						  sizeof(why)));
}

/* "10.9.0.1:4000", "[fd00::1]:4000", or the bare address without ports. */
void pf_print_endpoint(FILE *out, const struct pf_packet *pkt,
		       const char *addr, unsigned int port)
{
	bool ports = !strcmp(pkt->proto, "tcp") || !strcmp(pkt->proto, "udp");

	if (!ports)
		fprintf(out, "%s", addr[0] ? addr : "?");
	else if (strchr(addr, ':'))
		fprintf(out, "[%s]:%u", addr, port);
	else
		fprintf(out, "%s:%u", addr[0] ? addr : "?", port);
}

/* "udp 10.9.0.1:4000 -> 10.9.0.2:9000 ifindex 2 netns 4026532165 cpu 1" */
static void print_tuple(FILE *out, const struct pf_packet *pkt)
{
	fprintf(out, "%s ", pkt->proto[0] ? pkt->proto : "?");
	pf_print_endpoint(out, pkt, pkt->saddr, pkt->sport);
	fprintf(out, " -> ");
	pf_print_endpoint(out, pkt, pkt->daddr, pkt->dport);
	fprintf(out, " ifindex %d netns %lu cpu %u", pkt->ifindex, pkt->netns,
		pkt->cpu);
}

/* "packet 3 (rx, id 1)" */
static void print_packet_name(FILE *out, const struct pf_packet *pkt)
{
	fprintf(out, "packet %" PRIu64 " (%s, id %" PRIu64 ")", pkt->seq,
		pkt->stage[0] ? pkt->stage : "?", pkt->id);
}

/* "dropped: NO_SOCKET in __udp4_lib_rcv", "consumed", or nothing (0). */
static int print_fate(FILE *out, const struct pf_packet *pkt)
{
	switch (pkt->fate) {
	case PF_FATE_CONSUMED:
		fprintf(out, "consumed");
		return 1;
	case PF_FATE_DROPPED:
		fprintf(out, "dropped: %s", pkt->drop_reason);
		if (pkt->drop_func[0])
			fprintf(out, " in %s", pkt->drop_func);
		return 1;
	default:
		return 0;
	}
}

/* "6537.750 us" */
static void print_us(FILE *out, uint64_t ns)
{
	fprintf(out, "%" PRIu64 ".%03" PRIu64 " us", ns / 1000, ns % 1000);
}

/* --- text ------------------------------------------------------------------- */

static void text_packet(FILE *out, const struct pf_packet *pkt)
{
	char why[160];

	fputs("# ", out);
	print_packet_name(out, pkt);
	fputs(": ", out);
	print_tuple(out, pkt);
	if (!pkt->complete)
		fprintf(out, " [INCOMPLETE: %s]",
			pf_incomplete_str(pkt->incomplete, why, sizeof(why)));
	fputc('\n', out);
	if (pkt->fate != PF_FATE_UNKNOWN) {
		fputs("# ", out);
		print_fate(out, pkt);
		fputc('\n', out);
	}
	if (pkt->raw_len)
		fwrite(pkt->raw_text, 1, pkt->raw_len, out);
}

int pf_render_text_packet(FILE *out, const struct pf_packet *pkt)
{
	text_packet(out, pkt);
	return out_status(out);
}

/* --- JSON ------------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at @s (of @n bytes), 0 if invalid. */
size_t pf_utf8_len(const unsigned char *s, size_t n)
{
	size_t len, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates, beyond U+10FFFF. */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

/*
 * Output made in a buffer of our own and written in pieces of 64 KiB: a
 * JSON object is a few hundred small writes, too many for stdio's calls.
 */
struct pf_obuf {
	FILE *out;
	size_t len;
	char s[65536];
};

static void ob_flush(struct pf_obuf *b)
{
	if (b->len)
		fwrite(b->s, 1, b->len, b->out);
	b->len = 0;
}

static void ob_put_slow(struct pf_obuf *b, const void *p, size_t n)
{
	ob_flush(b);
	if (n > sizeof(b->s)) {
		fwrite(p, 1, n, b->out);
		return;
	}
	memcpy(b->s, p, n);
	b->len = n;
}

static inline void ob_put(struct pf_obuf *b, const void *p, size_t n)
{
	if (sizeof(b->s) - b->len < n) {
		ob_put_slow(b, p, n);
		return;
	}
	memcpy(b->s + b->len, p, n);
	b->len += n;
}

#define ob_lit(b, lit)	ob_put(b, lit, sizeof(lit) - 1)

static inline void ob_char(struct pf_obuf *b, char c)
{
	if (b->len == sizeof(b->s))
		ob_flush(b);
	b->s[b->len++] = c;
}

/* As printf("%" PRIu64), with a '-' first if @neg. */
static void ob_u64(struct pf_obuf *b, uint64_t v, bool neg)
{
	char d[21];
	size_t i = sizeof(d);

	do {
		d[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	if (neg)
		d[--i] = '-';
	ob_put(b, d + i, sizeof(d) - i);
}

/* As printf("%d") */
static void ob_int(struct pf_obuf *b, int v)
{
	ob_u64(b, v < 0 ? (uint64_t)0 - (uint64_t)(int64_t)v : (uint64_t)v,
	       v < 0);
}

/* The bytes a JSON string holds as they are: printable ASCII but " \ */
static const unsigned char json_plain[256] = {
	[0x20] = 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,	/* '"' */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,	/* '\\' */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0,	/* DEL */
};

/*
 * As snprintf(buf, 32, "%.1f" or "%.2f", v) for 0 <= v < 2^46 (not -0.0),
 * the binary value rounded exactly, half to even, as glibc does; 0 for
 * any other value (the caller falls back on snprintf()). Returns the
 * length; @buf gets no NUL.
 */
static size_t fmt_fixed(char *buf, double v, unsigned int prec)
{
	const uint64_t scale = prec == 1 ? 10 : 100;
	uint64_t bits, m, p, q = 0;
	unsigned int sh, k;
	int ex;
	char d[24];
	size_t i = sizeof(d), n;

	memcpy(&bits, &v, sizeof(bits));
	if ((bits >> 63) || !(v < 70368744177664.0) || (prec != 1 && prec != 2))
		return 0;	/* negative, -0.0, NaN, too large */
	ex = (int)((bits >> 52) & 0x7ff);
	m = bits & ((1ULL << 52) - 1);
	if (ex)
		m |= 1ULL << 52;
	/* v = m * 2^-sh, sh >= 7 here */
	sh = ex ? (unsigned int)(1075 - ex) : 1074;
	p = m * scale;		/* < 2^60 */
	if (sh < 64) {
		uint64_t r = p & ((1ULL << sh) - 1), half = 1ULL << (sh - 1);

		q = p >> sh;
		if (r > half || (r == half && (q & 1)))
			q++;
	}
	for (k = 0; k < prec || q; k++) {
		d[--i] = (char)('0' + q % 10);
		q /= 10;
		if (k + 1 == prec)
			d[--i] = '.';
	}
	if (d[i] == '.')
		d[--i] = '0';
	n = sizeof(d) - i;
	memcpy(buf, d + i, n);
	return n;
}

/* As printf("%.1f") or ("%.2f") */
static void ob_fixed(struct pf_obuf *b, double v, unsigned int prec)
{
	char buf[400];	/* "%.2f" of DBL_MAX: 312 bytes */
	size_t n = fmt_fixed(buf, v, prec);

	if (!n) {
		int k = snprintf(buf, sizeof(buf), "%.*f", (int)prec, v);

		if (k < 0)
			return;
		n = (size_t)k < sizeof(buf) ? (size_t)k : sizeof(buf) - 1;
	}
	ob_put(b, buf, n);
}

/* As fprintf() */
static void ob_printf(struct pf_obuf *b, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(buf)) {
		ob_put(b, buf, (size_t)n);
		return;
	}
	ob_flush(b);
	va_start(ap, fmt);
	vfprintf(b->out, fmt, ap);
	va_end(ap);
}

/* A JSON string; invalid UTF-8 becomes U+FFFD. */
static void json_str(struct pf_obuf *b, const char *str)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), len;

	ob_char(b, '"');
	while (n) {
		size_t run = 0;

		/* Plain printable ASCII goes out in one piece. */
		while (run < n && json_plain[s[run]])
			run++;
		if (run) {
			ob_put(b, s, run);
			s += run;
			n -= run;
			continue;
		}
		switch (*s) {
		case '"':
			ob_lit(b, "\\\"");
			break;
		case '\\':
			ob_lit(b, "\\\\");
			break;
		case '\n':
			ob_lit(b, "\\n");
			break;
		case '\r':
			ob_lit(b, "\\r");
			break;
		case '\t':
			ob_lit(b, "\\t");
			break;
		default:
			if (*s < 0x20 || *s == 0x7f) {
				char u[6] = { '\\', 'u', '0', '0',
					      hex[*s >> 4], hex[*s & 15] };

				ob_put(b, u, sizeof(u));
				break;
			}
			len = pf_utf8_len(s, n);
			if (!len) {
				ob_lit(b, "\\ufffd");
				break;
			}
			ob_put(b, s, len);
			s += len;
			n -= len;
			continue;
		}
		s++;
		n--;
	}
	ob_char(b, '"');
}

static void json_node(struct pf_obuf *b, const struct pf_node *node)
{
	size_t i;

	ob_lit(b, "{\"func\":");
	json_str(b, node->func);
	if (node->complete) {
		ob_lit(b, ",\"duration_ns\":");
		ob_u64(b, node->duration_ns, false);
	} else {
		ob_lit(b, ",\"duration_ns\":null");
	}
	ob_lit(b, ",\"children\":[");
	for (i = 0; i < node->nchildren; i++) {
		if (i)
			ob_char(b, ',');
		json_node(b, node->children[i]);
	}
	ob_lit(b, "]}");
}

/* A JSON string, or null for NULL. */
static void json_str_or_null(struct pf_obuf *b, const char *str)
{
	if (str)
		json_str(b, str);
	else
		ob_lit(b, "null");
}

static void json_packet(FILE *out, const struct pf_packet *pkt,
			const char *filter)
{
	struct pf_obuf buf, *b = &buf;
	char why[160];

	b->out = out;
	b->len = 0;
	ob_lit(b, "{\"seq\":");
	ob_u64(b, pkt->seq, false);
	ob_lit(b, ",\"stage\":");
	json_str(b, pkt->stage);
	ob_lit(b, ",\"id\":");
	ob_u64(b, pkt->id, false);
	ob_lit(b, ",\"cpu\":");
	ob_u64(b, pkt->cpu, false);
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
	switch (pkt->fate) {
	case PF_FATE_CONSUMED:
		ob_lit(b, ",\"fate\":\"consumed\",\"drop\":null");
		break;
	case PF_FATE_DROPPED:
		ob_lit(b, ",\"fate\":\"dropped\",\"drop\":{\"reason\":");
		json_str(b, pkt->drop_reason);
		ob_lit(b, ",\"func\":");
		if (pkt->drop_func[0])
			json_str(b, pkt->drop_func);
		else
			ob_lit(b, "null");
		ob_char(b, '}');
		break;
	default:
		ob_lit(b, ",\"fate\":null,\"drop\":null");
		break;
	}
	if (pkt->complete) {
		ob_lit(b, ",\"complete\":true,\"incomplete\":null");
	} else {
		ob_lit(b, ",\"complete\":false,\"incomplete\":");
		json_str(b, pf_incomplete_str(pkt->incomplete, why,
					      sizeof(why)));
	}
	ob_lit(b, ",\"graph\":");
	if (pkt->graph)
		json_node(b, pkt->graph);
	else
		ob_lit(b, "null");
	ob_lit(b, ",\"filter\":");
	json_str_or_null(b, filter);
	ob_lit(b, "}\n");
	ob_flush(b);
}

int pf_render_json_packet(FILE *out, const struct pf_packet *pkt)
{
	json_packet(out, pkt, NULL);
	return out_status(out);
}

/* --- self times -------------------------------------------------------------- */

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static size_t count_nodes(const struct pf_node *node)
{
	size_t i, n = 1;

	for (i = 0; i < node->nchildren; i++)
		n += count_nodes(node->children[i]);
	return n;
}

static void self_fill(const struct pf_node *node, uint64_t *w, size_t *i)
{
	uint64_t kids = 0;
	size_t k, me = (*i)++;

	for (k = 0; k < node->nchildren; k++)
		kids = add_sat(kids, node->children[k]->duration_ns);
	w[me] = node->duration_ns > kids ? node->duration_ns - kids : 0;
	for (k = 0; k < node->nchildren; k++)
		self_fill(node->children[k], w, i);
}

size_t pf_self_times(const struct pf_packet *pkt, uint64_t *w, size_t n)
{
	uint64_t sum = 0, root;
	size_t count, i = 0;

	if (!pkt->graph)
		return 0;
	count = count_nodes(pkt->graph);
	if (count > n)
		return count;
	self_fill(pkt->graph, w, &i);
	for (i = 0; i < count; i++)
		sum = add_sat(sum, w[i]);
	root = pkt->graph->duration_ns;
	if (sum < root) {
		/* Only if the sum saturated: nonsense durations. */
		w[0] += root - sum;
		return count;
	}
	/* Clamped self times added sum - root: take it back, root first. */
	for (i = 0; i < count && sum > root; i++) {
		uint64_t take = sum - root < w[i] ? sum - root : w[i];

		w[i] -= take;
		sum -= take;
	}
	return count;
}

/* --- folded ------------------------------------------------------------------ */

/*
 * The distinct stacks of all the packets, as a tree: one node per distinct
 * call path, found from its parent and name in a hash table, with the sum
 * of its calls' self times. Memory grows with the distinct paths, not with
 * the calls, and no path is ever copied whole: at the end the nodes are
 * sorted as their ";"-joined paths would be by strcmp(), comparing the
 * paths name by name along the parent pointers.
 */
struct pf_fstack {
	struct pf_fstack *parent;	/* NULL: a root */
	struct pf_fstack *hnext;	/* in the hash bucket */
	char *name;		/* ';' made ':' */
	size_t len;
	uint64_t weight;
	size_t depth;		/* 0: a root */
	uint64_t hash;
};

struct pf_folded {
	struct pf_fstack **all;	/* every node, in creation order */
	size_t n, cap;
	struct pf_fstack **buckets;
	size_t nbuckets;	/* a power of 2 */
	size_t maxdepth;
	const uint64_t *w;	/* self times of the packet, pre-order */
	size_t wi;
	uint64_t *wbuf;
	size_t wcap;
};

/*
 * The hash of a name (';' made ':' already) under its parent, 8 bytes at
 * a time. Only which bucket a node is in depends on it: the output is
 * sorted by path.
 */
static uint64_t fstack_hash(const struct pf_fstack *parent, const char *name,
			    size_t len)
{
	const uint64_t k = 0xff51afd7ed558ccdULL;
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ (uint64_t)(uintptr_t)parent ^ len;
	uint64_t w;
	size_t i;

	for (i = 0; len - i >= 8; i += 8) {
		memcpy(&w, name + i, 8);
		h = (h ^ w) * k;
		h ^= h >> 29;
	}
	if (i < len) {
		w = 0;
		memcpy(&w, name + i, len - i);
		h = (h ^ w) * k;
		h ^= h >> 29;
	}
	h *= k;
	return h ^ (h >> 32);
}

static int folded_grow(struct pf_folded *f)
{
	size_t nb = f->nbuckets ? 2 * f->nbuckets : 1024, i;
	struct pf_fstack **b = calloc(nb, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (i = 0; i < f->n; i++) {
		struct pf_fstack *fs = f->all[i];
		size_t k = (size_t)(fs->hash & (nb - 1));

		fs->hnext = b[k];
		b[k] = fs;
	}
	free(f->buckets);
	f->buckets = b;
	f->nbuckets = nb;
	return 0;
}

/* The node for @name under @parent, made if new. */
static struct pf_fstack *folded_get(struct pf_folded *f,
				    struct pf_fstack *parent, const char *name)
{
	size_t i, len = strlen(name);
	const char *key = name;
	char *mapped = NULL;
	struct pf_fstack *fs;
	uint64_t h;

	/* A ';' would split the stack: the nodes keep it as ':'. */
	if (memchr(name, ';', len)) {
		mapped = malloc(len + 1);
		if (!mapped)
			return NULL;
		for (i = 0; i <= len; i++)
			mapped[i] = name[i] == ';' ? ':' : name[i];
		key = mapped;
	}
	h = fstack_hash(parent, key, len);
	if (f->nbuckets)
		for (fs = f->buckets[h & (f->nbuckets - 1)]; fs; fs = fs->hnext)
			if (fs->hash == h && fs->parent == parent &&
			    fs->len == len && !memcmp(fs->name, key, len))
				goto out;
	fs = NULL;
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 256;
		struct pf_fstack **v = realloc(f->all, cap * sizeof(*v));

		if (!v)
			goto out;
		f->all = v;
		f->cap = cap;
	}
	if (f->n >= f->nbuckets && folded_grow(f))
		goto out;
	fs = calloc(1, sizeof(*fs));
	if (!fs || !(fs->name = malloc(len + 1))) {
		free(fs);
		fs = NULL;
		goto out;
	}
	memcpy(fs->name, key, len + 1);
	fs->len = len;
	fs->parent = parent;
	fs->depth = parent ? parent->depth + 1 : 0;
	fs->hash = h;
	fs->hnext = f->buckets[h & (f->nbuckets - 1)];
	f->buckets[h & (f->nbuckets - 1)] = fs;
	f->all[f->n++] = fs;
	if (fs->depth > f->maxdepth)
		f->maxdepth = fs->depth;
out:
	free(mapped);
	return fs;
}

static int folded_node(struct pf_folded *f, struct pf_fstack *parent,
		       const struct pf_node *node)
{
	struct pf_fstack *fs = folded_get(f, parent, node->func);
	size_t i;
	int err = 0;

	if (!fs)
		return -ENOMEM;
	fs->weight = add_sat(fs->weight, f->w[f->wi++]);
	for (i = 0; !err && i < node->nchildren; i++)
		err = folded_node(f, fs, node->children[i]);
	return err;
}

/* Add a complete packet's stacks. */
static int folded_packet(struct pf_folded *f, const struct pf_packet *pkt)
{
	size_t n = pf_self_times(pkt, NULL, 0);

	if (!n)
		return 0;
	if (n > f->wcap) {
		uint64_t *w = realloc(f->wbuf, n * sizeof(*w));

		if (!w)
			return -ENOMEM;
		f->wbuf = w;
		f->wcap = n;
	}
	pf_self_times(pkt, f->wbuf, n);
	f->w = f->wbuf;
	f->wi = 0;
	return folded_node(f, NULL, pkt->graph);
}

/* Paths root first, for the comparison: two buffers of maxdepth + 1. */
struct pf_fcmp {
	const struct pf_fstack **a, **b;
};

static size_t fstack_chain(const struct pf_fstack *fs,
			   const struct pf_fstack **chain)
{
	size_t n = fs->depth + 1, i = n;

	for (; fs; fs = fs->parent)
		chain[--i] = fs;
	return n;
}

/* qsort() has no argument for its comparison (qsort_r() is not C11). */
static struct pf_fcmp *fstack_cmp_bufs;

/* strcmp() of the ";"-joined paths, without joining them. */
static int fstack_cmp(const void *x, const void *y)
{
	const struct pf_fstack *fa = *(const struct pf_fstack *const *)x;
	const struct pf_fstack *fb = *(const struct pf_fstack *const *)y;
	struct pf_fcmp *c = fstack_cmp_bufs;
	size_t na = fstack_chain(fa, c->a), nb = fstack_chain(fb, c->b);
	size_t la = 0, lb = 0, ia = 0, ib = 0;

	/* The common part of two paths is the same nodes: skip it. */
	while (la < na && la < nb && c->a[la] == c->b[la])
		la++;
	if (la == na || la == nb)
		return na == nb ? 0 : la == na ? -1 : 1;
	lb = la;
	for (;;) {
		int ca, cb;

		if (la < na && ia == c->a[la]->len) {
			ca = la + 1 < na ? ';' : 0;
			la++;
			ia = 0;
		} else {
			ca = la < na ? (unsigned char)c->a[la]->name[ia++] : 0;
		}
		if (lb < nb && ib == c->b[lb]->len) {
			cb = lb + 1 < nb ? ';' : 0;
			lb++;
			ib = 0;
		} else {
			cb = lb < nb ? (unsigned char)c->b[lb]->name[ib++] : 0;
		}
		if (ca != cb)
			return ca < cb ? -1 : 1;
		if (!ca)
			return 0;
	}
}

static void folded_print_path(FILE *out, const struct pf_fstack *fs)
{
	if (fs->parent) {
		folded_print_path(out, fs->parent);
		fputc(';', out);
	}
	fwrite(fs->name, 1, fs->len, out);
}

static int folded_write(struct pf_folded *f, FILE *out)
{
	struct pf_fcmp c;
	size_t i;

	if (!f->n)
		return 0;
	c.a = malloc((f->maxdepth + 1) * sizeof(*c.a));
	c.b = malloc((f->maxdepth + 1) * sizeof(*c.b));
	if (!c.a || !c.b) {
		free(c.a);
		free(c.b);
		return -ENOMEM;
	}
	fstack_cmp_bufs = &c;
	qsort(f->all, f->n, sizeof(*f->all), fstack_cmp);
	fstack_cmp_bufs = NULL;
	free(c.a);
	free(c.b);
	for (i = 0; i < f->n; i++) {
		folded_print_path(out, f->all[i]);
		fprintf(out, " %" PRIu64 "\n", f->all[i]->weight);
	}
	return 0;
}

static void folded_free(struct pf_folded *f)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		free(f->all[i]->name);
		free(f->all[i]);
	}
	free(f->all);
	free(f->buckets);
	free(f->wbuf);
	memset(f, 0, sizeof(*f));
}

/* --- SVG --------------------------------------------------------------------- */

#define SVG_WIDTH	1200.0
#define SVG_MARGIN	10.0
#define SVG_ROW		16.0
#define SVG_FONT	12.0
#define SVG_CHAR	7.3	/* width of a monospace character at SVG_FONT */
#define SVG_HEADER	22.0	/* a packet's header line */
#define SVG_GAP		24.0	/* between packets */
#define SVG_TOP		34.0	/* the title */

/* The bytes XML text holds as they are: printable ASCII but & < > " ' */
static const unsigned char xml_plain[256] = {
	[0x20] = 1, 1, 0, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,	/* " & ' */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1,	/* < > */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0,	/* DEL */
};

/*
 * XML text: markup characters escaped, controls and bad UTF-8 made '?';
 * @max characters at most (a UTF-8 sequence or a bad byte is one).
 */
static void xml_str(struct pf_obuf *b, const char *str, size_t max)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), len, chars = 0;

	while (n && chars < max) {
		size_t run = 0;

		/* Plain ASCII goes out in one piece. */
		while (run < n && run < max - chars && xml_plain[s[run]])
			run++;
		if (run) {
			ob_put(b, s, run);
			s += run;
			n -= run;
			chars += run;
			continue;
		}
		len = 1;
		switch (*s) {
		case '&':
			ob_lit(b, "&amp;");
			break;
		case '<':
			ob_lit(b, "&lt;");
			break;
		case '>':
			ob_lit(b, "&gt;");
			break;
		case '"':
			ob_lit(b, "&quot;");
			break;
		case '\'':
			ob_lit(b, "&apos;");
			break;
		default:
			if (*s < 0x20 || *s == 0x7f) {
				ob_char(b, '?');
				break;
			}
			len = pf_utf8_len(s, n);
			if (!len) {
				ob_char(b, '?');
				len = 1;
				break;
			}
			ob_put(b, s, len);
		}
		s += len;
		n -= len;
		chars++;
	}
}

/* "6537.750 us" */
static void ob_us(struct pf_obuf *b, uint64_t ns)
{
	char frac[3] = { (char)('0' + ns % 1000 / 100),
			 (char)('0' + ns % 100 / 10), (char)('0' + ns % 10) };

	ob_u64(b, ns / 1000, false);
	ob_char(b, '.');
	ob_put(b, frac, sizeof(frac));
	ob_lit(b, " us");
}

/* Characters in @s, counting a UTF-8 sequence (or a bad byte) as one. */
static size_t text_chars(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), chars = 0, len;

	while (n) {
		len = pf_utf8_len(s, n);
		if (!len)
			len = 1;
		s += len;
		n -= len;
		chars++;
	}
	return chars;
}

static unsigned int tree_depth(const struct pf_node *node)
{
	unsigned int d = 0, c;
	size_t i;

	for (i = 0; i < node->nchildren; i++) {
		c = tree_depth(node->children[i]);
		if (c > d)
			d = c;
	}
	return d + 1;
}

/* FNV-1a: the same function, the same colour, in every graph. */
static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 16777619u;
	}
	return h;
}

struct pf_svg {
	FILE *out;
	double scale;		/* pixels per ns */
	double top;		/* y of the root's row */
	uint64_t total;		/* the root's duration */
	struct pf_obuf ob;	/* to out, flushed after each packet */
};

static void svg_node(struct pf_svg *g, const struct pf_node *node,
		     double x, double width, unsigned int depth)
{
	struct pf_obuf *b = &g->ob;
	uint32_t h = name_hash(node->func);
	double y = g->top + depth * SVG_ROW, cx = x, end = x + width;
	size_t i, fit, len;

	ob_lit(b, "<g><title>");
	xml_str(b, node->func, SIZE_MAX);
	ob_lit(b, " (");
	ob_us(b, node->duration_ns);
	ob_lit(b, ", ");
	ob_fixed(b, g->total ? 100.0 * (double)node->duration_ns /
			       (double)g->total : 100.0, 2);
	ob_lit(b, "%)</title><rect x=\"");
	ob_fixed(b, x, 2);
	ob_lit(b, "\" y=\"");
	ob_fixed(b, y, 1);
	ob_lit(b, "\" width=\"");
	ob_fixed(b, width, 2);
	ob_lit(b, "\" height=\"");
	ob_fixed(b, SVG_ROW - 1, 1);
	ob_lit(b, "\" fill=\"rgb(");
	ob_u64(b, 205 + h % 50, false);
	ob_char(b, ',');
	ob_u64(b, (h >> 8) % 230, false);
	ob_char(b, ',');
	ob_u64(b, (h >> 16) % 55, false);
	ob_lit(b, ")\"/>");
	fit = width > 6 ? (size_t)((width - 6) / SVG_CHAR) : 0;
	len = text_chars(node->func);
	if (fit >= 3) {
		ob_lit(b, "<text x=\"");
		ob_fixed(b, x + 3, 2);
		ob_lit(b, "\" y=\"");
		ob_fixed(b, y + SVG_ROW - 4, 1);
		ob_lit(b, "\">");
		if (len <= fit) {
			xml_str(b, node->func, SIZE_MAX);
		} else {
			xml_str(b, node->func, fit - 2);
			ob_lit(b, "..");
		}
		ob_lit(b, "</text>");
	}
	ob_lit(b, "</g>\n");

	for (i = 0; i < node->nchildren; i++) {
		const struct pf_node *c = node->children[i];
		double w = (double)c->duration_ns * g->scale;

		/* Children adding up to more than their parent: clip. */
		if (cx + w > end)
			w = end - cx > 0 ? end - cx : 0;
		svg_node(g, c, cx, w, depth + 1);
		cx += w;
	}
}

/* Draw @pkt (complete) at g->top, and move g->top under it. */
static void svg_packet(struct pf_svg *g, const struct pf_packet *pkt)
{
	const double width = SVG_WIDTH - 2 * SVG_MARGIN;
	struct pf_obuf *b = &g->ob;
	uint64_t total = pkt->graph->duration_ns;
	unsigned int depth = tree_depth(pkt->graph);

	b->out = g->out;
	ob_printf(b, "<text class=\"packet\" x=\"%.0f\" y=\"%.0f\">",
		  SVG_MARGIN, g->top + 15);
	{
		/* The tuple is plain ASCII, but it came from a file. */
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);

		if (m) {
			print_packet_name(m, pkt);
			fputs(": ", m);
			print_tuple(m, pkt);
			fputs(", ", m);
			print_us(m, total);
			fputs(", ", m);
			if (!print_fate(m, pkt))
				fputs("fate unknown", m);
			fclose(m);
			xml_str(b, buf, SIZE_MAX);
		}
		free(buf);
	}
	ob_lit(b, "</text>\n");
	g->top += SVG_HEADER;
	g->total = total;
	g->scale = total ? width / (double)total : 0;
	ob_lit(b, "<g class=\"packet\">\n");
	svg_node(g, pkt->graph, SVG_MARGIN, width, 0);
	ob_lit(b, "</g>\n");
	ob_flush(b);
	g->top += depth * SVG_ROW + SVG_GAP;
}

/* Everything before the packets: the height must be known. */
static void svg_head(FILE *out, size_t drawn, double height)
{
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(out,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n",
		SVG_WIDTH, height, SVG_WIDTH, height);
	fprintf(out, "<style>\n");
	fprintf(out,
		"text { font-family: monospace; font-size: %.0fpx; fill: #000; }\n",
		SVG_FONT);
	fprintf(out, "text.title { font-size: 16px; font-weight: bold; }\n");
	fprintf(out, "text.packet { font-size: 13px; }\n");
	fprintf(out, "g:hover > rect { stroke: #000; stroke-width: 0.8; }\n");
	fprintf(out, "</style>\n");
	fprintf(out,
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#f8f8f4\"/>\n");
	fprintf(out,
		"<text class=\"title\" x=\"%.0f\" y=\"22\">pktfilt: %zu packet%s, root on top, width = time in the packet's handler</text>\n",
		SVG_MARGIN, drawn, drawn == 1 ? "" : "s");
	if (!drawn)
		fprintf(out,
			"<text x=\"%.0f\" y=\"%.0f\">no complete packet to draw</text>\n",
			SVG_MARGIN, SVG_TOP + 16);
}

/* --- chrome: the Trace Event Format ------------------------------------------ */

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
static struct pf_chrome *chrome_new(FILE *out, const char *filter)
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

static void chrome_free(struct pf_chrome *c)
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
static void chrome_default_process(struct pf_chrome *c)
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
	if (pkt->complete) {
		ob_lit(b, ",\"complete\":true");
	} else {
		ob_lit(b, ",\"complete\":false,\"incomplete\":");
		json_str(b, pf_incomplete_str(pkt->incomplete, why,
					      sizeof(why)));
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
		cur = chrome_node(c, k, ks, end, false);
	}
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
	if (root || clipped || !node->complete) {
		bool comma = false;

		ob_lit(b, ",\"args\":{");
		if (root) {
			chrome_packet_args(b, c->pkt);
			comma = true;
		}
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

static void chrome_packet(struct pf_chrome *c, const struct pf_packet *pkt)
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

static void chrome_end(struct pf_chrome *c)
{
	chrome_start(c);
	ob_lit(&c->ob, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":"
		       "{\"generator\":\"pktfilt\",\"filter\":");
	json_str_or_null(&c->ob, c->filter);
	ob_lit(&c->ob, "}}\n");
	ob_flush(&c->ob);
}

/* --- streaming ---------------------------------------------------------------- */

struct pf_render {
	enum pf_format fmt;
	FILE *out;
	size_t n;		/* packets given */
	struct pf_folded folded;
	struct pf_svg svg;	/* its out: the packets, in a temporary file */
	size_t drawn;
	struct pf_chrome *chrome;
	char *filter;		/* pf_render_opts.filter's copy, or NULL */
	int err;
};

struct pf_render *pf_render_new(enum pf_format fmt, FILE *out,
				const struct pf_render_opts *opts)
{
	struct pf_render *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->fmt = fmt;
	r->out = out;
	if (opts && opts->filter) {
		r->filter = strdup(opts->filter);
		if (!r->filter) {
			free(r);
			errno = ENOMEM;
			return NULL;
		}
	}
	if (fmt == PF_FORMAT_SVG) {
		/* The header needs the height: the packets wait on disk. */
		r->svg.out = tmpfile();
		if (!r->svg.out) {
			free(r->filter);
			free(r);
			return NULL;
		}
		r->svg.top = SVG_TOP;
	}
	if (fmt == PF_FORMAT_CHROME) {
		r->chrome = chrome_new(out, r->filter);
		if (!r->chrome) {
			free(r->filter);
			free(r);
			errno = ENOMEM;
			return NULL;
		}
	}
	return r;
}

static int stream_status(FILE *out)
{
	return ferror(out) ? (errno ? -errno : -EIO) : 0;
}

int pf_render_packet(struct pf_render *r, const struct pf_packet *pkt)
{
	if (r->err)
		return r->err;
	switch (r->fmt) {
	case PF_FORMAT_TEXT:
		if (r->n)
			fputc('\n', r->out);
		text_packet(r->out, pkt);
		r->err = stream_status(r->out);
		break;
	case PF_FORMAT_JSON:
		json_packet(r->out, pkt, r->filter);
		r->err = stream_status(r->out);
		break;
	case PF_FORMAT_FOLDED:
		if (!pkt->complete)
			skip_warning("folded", pkt);
		else
			r->err = folded_packet(&r->folded, pkt);
		break;
	case PF_FORMAT_SVG:
		if (!pkt->complete) {
			skip_warning("svg", pkt);
			break;
		}
		svg_packet(&r->svg, pkt);
		r->drawn++;
		r->err = stream_status(r->svg.out);
		break;
	case PF_FORMAT_CHROME:
		chrome_default_process(r->chrome);
		chrome_packet(r->chrome, pkt);
		r->err = stream_status(r->out);
		break;
	}
	r->n++;
	return r->err;
}

/* Copy the SVG's packets from their temporary file. */
static int svg_copy(FILE *from, FILE *to)
{
	char buf[65536];
	size_t n;

	if (fflush(from) || fseek(from, 0, SEEK_SET))
		return errno ? -errno : -EIO;
	while ((n = fread(buf, 1, sizeof(buf), from)) > 0)
		if (fwrite(buf, 1, n, to) != n)
			return errno ? -errno : -EIO;
	return ferror(from) ? -EIO : 0;
}

int pf_render_end(struct pf_render *r)
{
	int err = r->err;

	if (!err && r->fmt == PF_FORMAT_FOLDED)
		err = folded_write(&r->folded, r->out);
	if (!err && r->fmt == PF_FORMAT_SVG) {
		double height = r->svg.top;

		if (!r->drawn)
			height += SVG_HEADER + SVG_GAP;
		svg_head(r->out, r->drawn, height);
		err = svg_copy(r->svg.out, r->out);
		if (!err)
			fputs("</svg>\n", r->out);
	}
	if (!err && r->fmt == PF_FORMAT_CHROME) {
		chrome_default_process(r->chrome);
		chrome_end(r->chrome);
	}
	if (!err)
		err = out_status(r->out);
	chrome_free(r->chrome);
	folded_free(&r->folded);
	if (r->svg.out)
		fclose(r->svg.out);
	free(r->filter);
	free(r);
	return err;
}

static int render_trace(enum pf_format fmt, FILE *out,
			const struct pf_trace *trace)
{
	struct pf_render *r = pf_render_new(fmt, out, NULL);
	size_t i;

	if (!r)
		return errno ? -errno : -ENOMEM;
	for (i = 0; i < trace->npackets; i++)
		if (pf_render_packet(r, trace->packets[i]))
			break;
	return pf_render_end(r);
}

int pf_render_text(FILE *out, const struct pf_trace *trace)
{
	return render_trace(PF_FORMAT_TEXT, out, trace);
}

int pf_render_json(FILE *out, const struct pf_trace *trace)
{
	return render_trace(PF_FORMAT_JSON, out, trace);
}

int pf_render_folded(FILE *out, const struct pf_trace *trace)
{
	return render_trace(PF_FORMAT_FOLDED, out, trace);
}

int pf_render_svg(FILE *out, const struct pf_trace *trace)
{
	return render_trace(PF_FORMAT_SVG, out, trace);
}

int pf_render_chrome(FILE *out, const struct pf_trace *trace)
{
	return render_trace(PF_FORMAT_CHROME, out, trace);
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
