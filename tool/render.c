// SPDX-License-Identifier: GPL-2.0
/*
 * Renderings of parsed function_graph traces: text, JSON Lines, folded
 * stacks, and the streaming renderer every format goes through; SVG in
 * render_svg.c, chrome in render_chrome.c, HTML in render_html.c, what
 * they share in render_int.h.
 * See render.h. The trees are at most PF_FGRAPH_MAX_DEPTH + 1 deep
 * (fgraph.c sees to it), which bounds the recursion here and there.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pcapng.h"
#include "render.h"
#include "render_int.h"

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
void print_tuple(FILE *out, const struct pf_packet *pkt)
{
	fprintf(out, "%s ", pkt->proto[0] ? pkt->proto : "?");
	pf_print_endpoint(out, pkt, pkt->saddr, pkt->sport);
	fprintf(out, " -> ");
	pf_print_endpoint(out, pkt, pkt->daddr, pkt->dport);
	fprintf(out, " ifindex %d netns %lu cpu %u", pkt->ifindex, pkt->netns,
		pkt->cpu);
}

/* "packet 3 (rx, id 1)" */
void print_packet_name(FILE *out, const struct pf_packet *pkt)
{
	fprintf(out, "packet %" PRIu64 " (%s, id %" PRIu64 ")", pkt->seq,
		pkt->stage[0] ? pkt->stage : "?", pkt->id);
}

/*
 * "dropped: NO_SOCKET in __udp4_lib_rcv" or "consumed" into @buf; 0 (and
 * nothing) when the trace does not tell the packet's fate.
 */
int format_fate(const struct pf_packet *pkt, char *buf, size_t len)
{
	const struct pf_nft *e = pf_nft_fate(pkt);
	int n;

	switch (pkt->fate) {
	case PF_FATE_CONSUMED:
		snprintf(buf, len, "consumed");
		return 1;
	case PF_FATE_DROPPED:
		if (e) {
			/* "by inet filter input handle 7: udp dport 7778 drop" */
			n = snprintf(buf, len, "dropped: %s by ",
				     pkt->drop_reason);
			if (n >= 0 && (size_t)n < len)
				pf_nft_format(e, buf + n, len - (size_t)n,
					      false);
			return 1;
		}
		snprintf(buf, len, "dropped: %s%s%s", pkt->drop_reason,
			 pkt->drop_func[0] ? " in " : "", pkt->drop_func);
		return 1;
	default:
		return 0;
	}
}

/* The same, printed. */
int print_fate(FILE *out, const struct pf_packet *pkt)
{
	char fate[PF_FATE_LEN];

	if (!format_fate(pkt, fate, sizeof(fate)))
		return 0;
	fputs(fate, out);
	return 1;
}

/* "6537.750 us" */
void print_us(FILE *out, uint64_t ns)
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
	if (pkt->held_ns) {
		/* Held by a lazy filter while its scope was patched. */
		fputs(" held ", out);
		print_us(out, pkt->held_ns);
	}
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

/* The output buffer, struct pf_obuf: see render_int.h. */
void ob_flush(struct pf_obuf *b)
{
	if (b->len)
		fwrite(b->s, 1, b->len, b->out);
	b->len = 0;
}

void ob_put_slow(struct pf_obuf *b, const void *p, size_t n)
{
	ob_flush(b);
	if (n > sizeof(b->s)) {
		fwrite(p, 1, n, b->out);
		return;
	}
	memcpy(b->s, p, n);
	b->len = n;
}

/* As printf("%" PRIu64), with a '-' first if @neg. */
void ob_u64(struct pf_obuf *b, uint64_t v, bool neg)
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
void ob_int(struct pf_obuf *b, int v)
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
void ob_fixed(struct pf_obuf *b, double v, unsigned int prec)
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
void ob_printf(struct pf_obuf *b, const char *fmt, ...)
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
void json_str(struct pf_obuf *b, const char *str)
{
	json_strn(b, str, strlen(str));
}

/* The same, of @n bytes at @str. */
void json_strn(struct pf_obuf *b, const char *str, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t len;

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

/*
 * "args":{"skb":"0xffff...","len":"42"} if the call has arguments
 * (funcgraph-args), ,"ret":"-22" if it has a return value
 * (funcgraph-retval): strings as ftrace printed them. An argument without
 * a name is "argN", N its position from 0; ftrace's "..." is "...".
 * Each member after a comma if @comma (members came before it); returns
 * whether there are members now.
 */
bool json_call_extras(struct pf_obuf *b, const struct pf_node *node,
		      bool comma)
{
	struct pf_arg a;
	size_t pos = 0, i = 0;
	char key[32];

	if (node->args) {
		if (comma)
			ob_char(b, ',');
		ob_lit(b, "\"args\":{");
		comma = true;
		while (pf_args_next(node->args, &pos, &a)) {
			if (i)
				ob_char(b, ',');
			if (a.name_len) {
				json_strn(b, a.name, a.name_len);
			} else if (a.value_len == 3 &&
				   !memcmp(a.value, "...", 3)) {
				ob_lit(b, "\"...\"");
			} else {
				snprintf(key, sizeof(key), "arg%zu", i);
				json_str(b, key);
			}
			ob_char(b, ':');
			json_strn(b, a.value, a.value_len);
			i++;
		}
		ob_char(b, '}');
	}
	if (node->ret) {
		if (comma)
			ob_char(b, ',');
		ob_lit(b, "\"ret\":");
		json_str(b, node->ret);
		comma = true;
	}
	return comma;
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
	json_call_extras(b, node, true);
	ob_lit(b, ",\"children\":[");
	for (i = 0; i < node->nchildren; i++) {
		if (i)
			ob_char(b, ',');
		json_node(b, node->children[i]);
	}
	ob_lit(b, "]}");
}

/* A JSON string, or null for NULL. */
void json_str_or_null(struct pf_obuf *b, const char *str)
{
	if (str)
		json_str(b, str);
	else
		ob_lit(b, "null");
}

/*
 * "nft": [{"family": F, "table": T, "chain": C, "handle": N or null,
 * "type": "rule", "verdict": "drop", "target": CHAIN or null, "rule":
 * TEXT or null, "in": FUNC}, ...]: its nftables verdicts, in order.
 */
static void json_nft(struct pf_obuf *b, const struct pf_packet *pkt)
{
	size_t i;

	ob_lit(b, ",\"nft\":[");
	for (i = 0; i < pkt->nnft; i++) {
		const struct pf_nft *e = &pkt->nft[i];

		if (i)
			ob_char(b, ',');
		ob_lit(b, "{\"family\":");
		json_str(b, e->family);
		ob_lit(b, ",\"table\":");
		json_str(b, e->table);
		ob_lit(b, ",\"chain\":");
		json_str(b, e->chain);
		ob_lit(b, ",\"handle\":");
		if (e->handle)
			ob_u64(b, e->handle, false);
		else
			ob_lit(b, "null");
		ob_lit(b, ",\"type\":");
		json_str(b, e->type);
		ob_lit(b, ",\"verdict\":");
		json_str(b, e->verdict);
		ob_lit(b, ",\"target\":");
		json_str_or_null(b, e->target[0] ? e->target : NULL);
		ob_lit(b, ",\"rule\":");
		json_str_or_null(b, e->rule);
		ob_lit(b, ",\"in\":");
		json_str_or_null(b, e->in[0] ? e->in : NULL);
		ob_char(b, '}');
	}
	ob_char(b, ']');
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
	ob_lit(b, ",\"held_ns\":");
	ob_u64(b, pkt->held_ns, false);
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
	json_nft(b, pkt);
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
	struct pf_fstack *root = NULL;
	char fate[PF_FATE_LEN + 2];

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
	/*
	 * A packet whose fate the trace tells is stacked under a frame that
	 * says it, "[consumed]" or "[dropped: REASON in FUNC]", so that a
	 * flame graph groups packets by how they ended.
	 */
	if (format_fate(pkt, fate + 1, sizeof(fate) - 2)) {
		fate[0] = '[';
		strcat(fate, "]");
		root = folded_get(f, NULL, fate);
		if (!root)
			return -ENOMEM;
	}
	return folded_node(f, root, pkt->graph);
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

/* --- streaming ---------------------------------------------------------------- */

struct pf_render {
	enum pf_format fmt;
	FILE *out;
	size_t n;		/* packets given */
	struct pf_folded folded;
	struct pf_svg svg;	/* its out: the packets, in a temporary file */
	size_t drawn;
	struct pf_chrome *chrome;
	struct pf_obuf *html;	/* its buffer (large: on the heap) */
	char *filter;		/* pf_render_opts.filter's copy, or NULL */
	struct pf_pcapng *pcapng;
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
	if (fmt == PF_FORMAT_HTML) {
		r->html = malloc(sizeof(*r->html));
		if (!r->html) {
			free(r->filter);
			free(r);
			errno = ENOMEM;
			return NULL;
		}
		r->html->out = out;
		r->html->len = 0;
		html_begin(r->html, "report", r->filter);
	}
	if (fmt == PF_FORMAT_PCAPNG) {
		r->pcapng = pf_pcapng_new(out, opts ? opts->names : NULL);
		if (!r->pcapng) {
			int err = errno;

			free(r->filter);
			free(r);
			errno = err;
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
	case PF_FORMAT_HTML:
		html_packet(r->html, pkt);
		r->err = stream_status(r->out);
		break;
	case PF_FORMAT_PCAPNG:
		r->err = pf_pcapng_packet(r->pcapng, pkt);
		break;
	}
	r->n++;
	return r->err;
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
			svg_tail(r->out);
	}
	if (!err && r->fmt == PF_FORMAT_CHROME) {
		chrome_default_process(r->chrome);
		chrome_end(r->chrome);
	}
	if (!err && r->fmt == PF_FORMAT_HTML)
		html_end(r->html);
	if (r->pcapng && pf_pcapng_skipped(r->pcapng)) {
		uint64_t n = pf_pcapng_skipped(r->pcapng);

		fprintf(stderr,
			"pktfilt: pcapng: %" PRIu64 " packet%s without bytes (events of a pktfilt.ko older than version 6): not written\n",
			n, n == 1 ? "" : "s");
	}
	pf_pcapng_free(r->pcapng);
	if (!err)
		err = out_status(r->out);
	free(r->html);
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

int pf_render_html(FILE *out, const struct pf_trace *trace)
{
	return render_trace(PF_FORMAT_HTML, out, trace);
}

int pf_render_pcapng(FILE *out, const struct pf_trace *trace)
{
	return render_trace(PF_FORMAT_PCAPNG, out, trace);
}
