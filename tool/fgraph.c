// SPDX-License-Identifier: GPL-2.0
/*
 * function_graph text -> the call trees of the packets pktfilt traced.
 *
 * The line formats, from kernel/trace/trace_functions_graph.c and
 * kernel/trace/trace.c (the same in Linux 6.1 and 6.12 with the default
 * options), each prefix field depending on a trace option:
 *
 *   [SECS.USECS |  ][USECS us |  ][ CPU) ][ comm-pid | ][ lat | ]DURATION BODY
 *
 *   SECS.USECS   funcgraph-abstime          USECS us   funcgraph-reltime
 *   CPU)         funcgraph-cpu (default on) comm-pid   funcgraph-proc
 *   lat          latency-format
 *   DURATION     funcgraph-duration (default on): "M USECS[.NNN] us   |  "
 *                with M one of + ! # * @ $ (funcgraph-overhead) or a space,
 *                the decimals truncated to fit 7 digits ("12345.67 us");
 *                "              |  " on lines without a time
 *   BODY         two spaces per call depth, then "func() {", "func();",
 *                "}" maybe followed by "/" "* func *" "/" (funcgraph-tail,
 *                or an entry that was lost), or a comment: a trace event
 *                such as "/" "* pktfilt_packet: seq=1 ... *" "/"
 *
 * and lines of their own: "CPU:N [LOST M EVENTS]" or "CPU:N [LOST EVENTS]"
 * before the first line after a ring-buffer overrun, the irq markers
 * "==========>" and "<==========" (funcgraph-irqs, for functions in
 * .irqentry.text only: none on x86, where the IDT entries are noinstr),
 * " ------------------------------------------" and " N)  comm-pid  =>
 * comm-pid " at a context switch, " (Overruns: N)" (funcgraph-overrun),
 * and the "#" header of the trace file.
 *
 * Each CPU has its own state: lines carry their CPU, and those of several
 * CPUs interleave. A pktfilt_packet event opens a packet on its CPU. Its
 * root is the next call on that CPU of the function its root= names or,
 * without root= (version 1 events), of one of the handlers pktfilt wraps;
 * calls before it (an interrupt between the event and the handler) are
 * noise, and so are the calls on a CPU outside any packet's graph (the
 * kprobe that closes pktfilt's gate, an interrupt after the handler).
 * The packet is complete when its root returns with nothing missing.
 *
 * A pktfilt_free event, "id=N reason=R func=F", inside a graph (a comment
 * at the point of the free) or not, gives its reason to the packets of
 * id N open on any CPU or waiting for it: a packet with id= whose graph
 * closed before its free waits (is not done) until the free comes, or
 * until PF_FGRAPH_FREE_WAIT others wait after it, or the end. Only the
 * first free of an id counts (the last PF_FREED_IDS ids are remembered).
 */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fgraph.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Longest function name kept; longer ones make the line not understood. */
#define PF_MAX_NAME	1024

/* The receive handlers pktfilt wraps: the only possible roots. */
static const char *const pf_handlers[] = {
	"tcp_v4_rcv", "udp_rcv", "icmp_rcv",
	"tcp_v6_rcv", "udpv6_rcv", "icmpv6_rcv",
};

enum pf_kind {
	PF_K_NONE,	/* blank, header, context-switch banner */
	PF_K_OTHER,	/* not understood */
	PF_K_LOST,
	PF_K_ENTRY,	/* func() { */
	PF_K_LEAF,	/* func(); */
	PF_K_RETURN,	/* } */
	PF_K_COMMENT,	/* a trace event */
	PF_K_IRQ,	/* ==========> or <========== */
};

struct pf_line {
	enum pf_kind kind;
	bool whole;		/* nothing seems cut off its end */
	long cpu;		/* -1: no CPU column; LOST: -1 = all CPUs */
	bool has_duration;
	uint64_t duration_ns;
	size_t depth;		/* indentation / 2 */
	const char *name;	/* ENTRY, LEAF, and RETURN with a tail comment */
	size_t name_len;
	const char *text;	/* COMMENT: between the comment marks */
	size_t text_len;
	bool lost_known;
	uint64_t lost;
	bool has_abstime;	/* funcgraph-abstime's SECS.USECS, in ns */
	uint64_t abstime_ns;
	const char *args;	/* ENTRY, LEAF: between the parentheses, */
	size_t args_len;	/* if funcgraph-args printed any (valid) */
	const char *ret;	/* LEAF, RETURN: funcgraph-retval's value */
	size_t ret_len;
};

/* Ids whose pktfilt_free was seen, remembered: later ones are ignored. */
#define PF_FREED_IDS	256

/* Calls set aside at most, per CPU (the oldest go first). */
#define PF_ASIDE_MAX	64

/*
 * Per-CPU state. While the root is open, stack[0] is the root and the
 * stack holds the open calls. A call whose return did not come before the
 * next call at its depth is set aside: its return may still come (see
 * on_return()). When the root itself is set aside, stack[0] is a
 * detached call at the root's depth (an interrupt), freed when it returns.
 */
struct pf_cpu {
	struct pf_packet *pkt;	/* open packet, or NULL */
	bool rooted;		/* its root call was seen */
	size_t base;		/* the root's depth */
	struct pf_node **stack;
	size_t sp, stack_cap;
	struct pf_node *aside[PF_ASIDE_MAX];
	size_t naside;
	size_t unclosed;	/* calls of the graph without their return */
	struct pf_node *detached;	/* stack[0] if not in the graph */
	uint64_t lost_all;	/* the parser's lost_all when pkt opened */
	struct pf_fgraph *p;	/* the parser */
	bool nft_fresh;		/* on_nft() took the line's verdict */
	bool skipping;		/* inside an nftables tracing call: */
	size_t skip;		/* ... its depth (is_nft_trace_func()) */
};

struct pf_fgraph {
	struct pf_trace *trace;
	struct pf_cpu **cpus;	/* [0]: lines without a CPU; [n + 1]: CPU n */
	size_t ncpus;
	char *line;		/* a partial line, waiting for its newline */
	size_t len, cap;
	bool overlong;		/* that line was cut at PF_FGRAPH_MAX_LINE */
	bool failed;		/* out of memory */
	uint64_t lost_all;	/* "[LOST" lines of no readable CPU so far */
	/* Streaming (pf_fgraph_new_stream()): trace->packets is a queue. */
	pf_packet_fn fn;
	void *arg;
	int fn_err;		/* what fn returned, if not 0 */
	size_t head;		/* trace->packets[head..npackets): not given */
	size_t held;		/* of them, done: waiting for older ones */
	/* Closed packets waiting for their pktfilt_free, oldest first. */
	struct pf_packet *wait[PF_FGRAPH_FREE_WAIT];
	size_t nwait;
	uint64_t freed[PF_FREED_IDS];	/* a ring of the ids freed */
	size_t nfreed;
};

/*
 * Done packets kept waiting for an older packet still open on another
 * CPU: past this, the done ones go out of order rather than pile up.
 */
#define PF_STREAM_HOLD	256

/* --- the text of one line --------------------------------------------------- */

struct pf_cur {
	const char *s;
	size_t n, i;
};

static inline bool cur_end(const struct pf_cur *c)
{
	return c->i >= c->n;
}

static inline char cur_peek(const struct pf_cur *c, size_t off)
{
	return c->i + off < c->n ? c->s[c->i + off] : '\0';
}

/* The spaces at the start of s[0..n): eight at a time, then one by one. */
static inline size_t spaces(const char *s, size_t n)
{
	static const uint64_t eight = 0x2020202020202020ULL;
	size_t i = 0;
	uint64_t w;

	for (; n - i >= 8; i += 8) {
		memcpy(&w, s + i, 8);
		if (w != eight) {
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			/* The first byte that is not a space. */
			return i + (size_t)__builtin_ctzll(w ^ eight) / 8;
#else
			break;
#endif
		}
	}
	while (i < n && s[i] == ' ')
		i++;
	return i;
}

/* The spaces at the end of s[0..n), the same way. */
static inline size_t rspaces(const char *s, size_t n)
{
	static const uint64_t eight = 0x2020202020202020ULL;
	size_t k = 0;
	uint64_t w;

	for (; n - k >= 8; k += 8) {
		memcpy(&w, s + n - k - 8, 8);
		if (w != eight) {
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			/* The last byte that is not a space. */
			return k + (size_t)__builtin_clzll(w ^ eight) / 8;
#else
			break;
#endif
		}
	}
	while (k < n && s[n - k - 1] == ' ')
		k++;
	return k;
}

static inline size_t cur_spaces(struct pf_cur *c)
{
	size_t k = spaces(c->s + c->i, c->n - c->i);

	c->i += k;
	return k;
}

static inline bool cur_eat(struct pf_cur *c, const char *lit)
{
	size_t len = strlen(lit);

	if (c->n - c->i < len || c->s[c->i] != lit[0] ||
	    memcmp(c->s + c->i, lit, len))
		return false;
	c->i += len;
	return true;
}

static inline bool is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

/*
 * A decimal number of at most @max digits whose value fits in 64 bits
 * (else: false, nothing eaten); its value and digit count.
 */
static inline bool cur_number(struct pf_cur *c, unsigned int max,
			      uint64_t *val, unsigned int *ndigits)
{
	uint64_t v = 0;
	unsigned int nd = 0;
	size_t i = c->i;

	while (i < c->n && is_digit(c->s[i])) {
		uint64_t d = (uint64_t)(c->s[i] - '0');

		/* 19 digits always fit: only a 20th can overflow. */
		if (++nd > max || (nd >= 20 && v > (UINT64_MAX - d) / 10))
			return false;
		v = v * 10 + d;
		i++;
	}
	if (!nd)
		return false;
	c->i = i;
	*val = v;
	if (ndigits)
		*ndigits = nd;
	return true;
}

/*
 * Somewhere in s[0..n): the first one. memchr() looks for the first byte
 * of @lit that is not a space (spaces fill these lines), then the rest is
 * compared around it.
 */
static inline const char *mem_find(const char *s, size_t n, const char *lit)
{
	size_t len = strlen(lit), k = 0;
	const char *end, *q;

	if (len > n)
		return NULL;
	while (k + 1 < len && lit[k] == ' ')
		k++;
	end = s + (n - len) + 1;	/* where a match can start: [s, end) */
	while (s < end) {
		q = memchr(s + k, lit[k], (size_t)(end - s));
		if (!q)
			return NULL;
		s = q - k;
		if (!memcmp(s, lit, len))
			return s;
		s++;
	}
	return NULL;
}

static inline bool ends_with(const char *s, size_t n, const char *lit)
{
	size_t len = strlen(lit);

	return n >= len && !memcmp(s + n - len, lit, len);
}

/*
 * The byte after the spaces and digits at the cursor ('\0' at the end):
 * a '.' where the line starts with SECS.USECS, a ' ' with USECS us.
 */
static inline char after_number(const struct pf_cur *c)
{
	size_t i = c->i + spaces(c->s + c->i, c->n - c->i);

	while (i < c->n && is_digit(c->s[i]))
		i++;
	return i < c->n ? c->s[i] : '\0';
}

/* "SECS.USECS |  ", its value in ns into @l (saturated) */
static void skip_abstime(struct pf_cur *c, struct pf_line *l)
{
	size_t save = c->i;
	uint64_t secs, frac;
	unsigned int nd;

	cur_spaces(c);
	if (cur_number(c, 19, &secs, NULL) && cur_eat(c, ".") &&
	    cur_number(c, 6, &frac, &nd) && cur_eat(c, " |  ")) {
		while (nd++ < 9)
			frac *= 10;
		l->has_abstime = true;
		l->abstime_ns = secs > (UINT64_MAX - frac) / 1000000000ULL ?
				UINT64_MAX : secs * 1000000000ULL + frac;
		return;
	}
	c->i = save;
}

/* "USECS us |  " */
static void skip_reltime(struct pf_cur *c)
{
	size_t save = c->i;
	uint64_t v;

	cur_spaces(c);
	if (cur_number(c, 19, &v, NULL) && cur_eat(c, " us |  "))
		return;
	c->i = save;
}

/* " CPU) " */
static long parse_cpu(struct pf_cur *c)
{
	size_t save = c->i;
	uint64_t v;

	cur_spaces(c);
	if (cur_number(c, 10, &v, NULL) && cur_eat(c, ") ") &&
	    v < PF_FGRAPH_MAX_CPU)
		return (long)v;
	c->i = save;
	return -1;
}

/* "comm-pid | ": the task, centred in 14 columns; comm is at most 7 bytes. */
static void skip_proc(struct pf_cur *c)
{
	const char *s = c->s + c->i, *bar;
	size_t avail = c->n - c->i, end;

	bar = mem_find(s, avail < 40 ? avail : 40, " | ");
	if (!bar)
		return;
	end = (size_t)(bar - s);
	end -= rspaces(s, end);
	if (!end || !is_digit(s[end - 1]))
		return;
	while (end && is_digit(s[end - 1]))
		end--;
	if (!end || s[end - 1] != '-')
		return;
	c->i += (size_t)(bar - s) + 3;
}

/* " dNs1 | ": latency-format flags, a few characters, no spaces. */
static void skip_lat(struct pf_cur *c)
{
	size_t i = c->i + 1, k = 0;

	if (cur_peek(c, 0) != ' ')
		return;
	while (i < c->n && c->s[i] != ' ' && c->s[i] != '|' && k < 8) {
		i++;
		k++;
	}
	if (k < 3 || c->n - i < 3 || memcmp(c->s + i, " | ", 3))
		return;
	c->i = i + 3;
}

/*
 * The duration column: "M USECS[.N[N[N]]] us <pad>|  " or "<spaces>|  ".
 * Returns false if there is none (and eats nothing).
 */
static bool parse_duration(struct pf_cur *c, struct pf_line *l)
{
	size_t save = c->i;
	uint64_t us, frac = 0;
	unsigned int nfrac = 0;

	cur_spaces(c);
	if (cur_end(c))
		goto none;
	/* An overhead mark (a NUL byte too, as strchr() matched it). */
	switch (cur_peek(c, 0)) {
	case '+': case '!': case '#': case '*': case '@': case '$': case '\0':
		if (cur_peek(c, 1) == ' ') {
			c->i += 2;
			cur_spaces(c);
		}
		break;
	default:
		break;
	}
	if (cur_peek(c, 0) == '|') {
		c->i++;
		goto pad;
	}
	/* USECS * 1000 must fit: 16 digits is plenty (317 years). */
	if (!cur_number(c, 16, &us, NULL))
		goto none;
	if (cur_eat(c, ".") && !cur_number(c, 3, &frac, &nfrac))
		goto none;
	if (!cur_eat(c, " us") || !cur_spaces(c) || !cur_eat(c, "|"))
		goto none;
	/* Truncated decimals count as zeros: 12345.67 us = 12345670 ns. */
	while (nfrac < 3) {
		frac *= 10;
		nfrac++;
	}
	l->has_duration = true;
	l->duration_ns = us * 1000 + frac;
pad:
	/* "|  ": the indentation starts after these two spaces. */
	if (cur_eat(c, " "))
		cur_eat(c, " ");
	return true;
none:
	c->i = save;
	return false;
}

/* The bytes a function's name may not hold: controls, DEL, |{};() */
static const unsigned char name_bad[256] = {
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	['|'] = 1, ['{'] = 1, ['}'] = 1, [';'] = 1, ['('] = 1, [')'] = 1,
	[0x7f] = 1,
};

static inline bool name_ok(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i;

	if (!n || n > PF_MAX_NAME || s[0] == ' ')
		return false;
	for (i = 0; i < n; i++)
		if (name_bad[u[i]])
			return false;
	return true;
}

/*
 * funcgraph-retval's value in a comment's text @s..@n (without its marks):
 * " = VALUE" (Linux 6.5-6.12: "func(); /" "* = 0x0 *" "/", "} /" "* func
 * = -22 *" "/") or "ret=VALUE" after a space or at the start (6.13 on,
 * after funcgraph-retaddr's "<-caller+0x12/0x40" if set). VALUE: 0x and
 * hex digits, or a negative decimal (an error code), as print_graph_retval()
 * prints them; anything else is not taken.
 */
static void parse_retval(const char *s, size_t n, struct pf_line *l)
{
	const char *v = NULL, *p;
	size_t i, len;

	while (n && s[0] == ' ') {
		s++;
		n--;
	}
	while (n && s[n - 1] == ' ')
		n--;
	if (n >= 2 && s[0] == '=' && s[1] == ' ') {
		v = s + 2;
	} else if (n >= 4 && !memcmp(s, "ret=", 4)) {
		v = s + 4;
	} else if ((p = mem_find(s, n, " ret="))) {
		v = p + 5;
	} else if ((p = mem_find(s, n, " = "))) {
		v = p + 3;	/* "} /" "* veth_xmit [veth] = 0x0 *" "/" */
	}
	if (!v)
		return;
	len = (size_t)(s + n - v);
	p = memchr(v, ' ', len);
	if (p)
		len = (size_t)(p - v);
	if (len < 2 || len > PF_FGRAPH_MAX_RET)
		return;
	if (v[0] == '0' && v[1] == 'x') {
		if (len == 2)
			return;
		for (i = 2; i < len; i++)
			if (!is_digit(v[i]) && !(v[i] >= 'a' && v[i] <= 'f'))
				return;
	} else if (v[0] == '-') {
		for (i = 1; i < len; i++)
			if (!is_digit(v[i]))
				return;
	} else {
		return;
	}
	l->ret = v;
	l->ret_len = len;
}

/*
 * funcgraph-args' list, between the parentheses of "func(a=1, b=0x2) {":
 * kept if it is printable ASCII, not longer than PF_FGRAPH_MAX_ARGS, and its
 * parentheses and brackets balance (a struct passed by value prints as
 * "(STRUCT)[0x1:0x2]").
 */
static void parse_args(const char *s, size_t n, struct pf_line *l)
{
	size_t i, paren = 0, bracket = 0;

	if (!n || n > PF_FGRAPH_MAX_ARGS)
		return;
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch < 0x20 || ch > 0x7e)
			return;
		if (ch == '(')
			paren++;
		else if (ch == '[')
			bracket++;
		else if (ch == ')' && !paren--)
			return;
		else if (ch == ']' && !bracket--)
			return;
	}
	if (paren || bracket)
		return;
	l->args = s;
	l->args_len = n;
}

/* "} [/" "* func[ = 0x0| ret=...] *" "/]" */
static void parse_return(const char *s, size_t n, struct pf_line *l)
{
	struct pf_cur c = { s, n, 1 };
	const char *body, *cut;
	size_t len;

	l->kind = PF_K_RETURN;
	cur_spaces(&c);
	if (cur_end(&c)) {
		l->whole = true;
		return;
	}
	if (!cur_eat(&c, "/*")) {
		l->kind = PF_K_OTHER;	/* something else after the brace */
		return;
	}
	cur_spaces(&c);
	body = s + c.i;
	len = n - c.i;
	/* The closing mark after the opening one, not overlapping it. */
	l->whole = ends_with(body, len, "*/");
	if (l->whole)
		len -= 2;
	/* The name ends where a return value or address starts. */
	cut = mem_find(body, len, " ");
	if (cut) {
		parse_retval(cut, len - (size_t)(cut - body), l);
		len = (size_t)(cut - body);
	}
	if (name_ok(body, len)) {
		l->name = body;
		l->name_len = len;
	}
}

/*
 * The body of a line: @s..@n, the indentation first; @paren: its first
 * '(', or NULL (the caller looked for it already).
 */
static void parse_body(const char *s, size_t n, const char *paren,
		       struct pf_line *l)
{
	struct pf_cur c = { s, n, 0 };
	const char *comment = NULL;
	size_t end, comment_len = 0;

	while (n && (s[n - 1] == ' ' || s[n - 1] == '\r'))
		n--;
	c.n = n;
	l->depth = cur_spaces(&c) / 2;
	s += c.i;
	n -= c.i;
	if (!n)
		return;
	if (n >= 11 && (!memcmp(s, "==========>", 11) ||
			!memcmp(s, "<==========", 11))) {
		l->kind = PF_K_IRQ;
		l->whole = true;
		return;
	}
	if (n >= 2 && !memcmp(s, "/*", 2)) {
		l->kind = PF_K_COMMENT;
		s += 2;
		n -= 2;
		/* "/" "*" "/" is not closed: the marks may not overlap. */
		l->whole = ends_with(s, n, "*/");
		if (l->whole)
			n -= 2;
		while (n && *s == ' ') {
			s++;
			n--;
		}
		while (n && s[n - 1] == ' ')
			n--;
		l->text = s;
		l->text_len = n;
		return;
	}
	if (s[0] == '}') {
		parse_return(s, n, l);
		return;
	}
	if (n >= 10 && !memcmp(s, "(Overruns:", 10)) {
		l->kind = PF_K_NONE;	/* funcgraph-overrun */
		l->whole = true;
		return;
	}
	if (!paren || !name_ok(s, (size_t)(paren - s)))
		return;
	l->name = s;
	l->name_len = (size_t)(paren - s);
	/*
	 * A trailing comment: a return value (funcgraph-retval), a return
	 * address (funcgraph-retaddr).
	 */
	end = n;
	if (ends_with(s, end, "*/")) {
		const char *open = NULL, *p;

		for (p = paren; (p = mem_find(p, (size_t)(s + end - p), "/*"));
		     p += 2)
			open = p;
		if (!open)
			return;
		end = (size_t)(open - s);
		if (n - end >= 4) {
			comment = open + 2;
			comment_len = n - end - 4;
		}
	}
	while (end && s[end - 1] == ' ')
		end--;
	if (end < 2)
		return;
	if (s[end - 1] == '{') {
		end--;
		while (end && s[end - 1] == ' ')
			end--;
		if (end && s[end - 1] == ')' && s + end > paren)
			l->kind = PF_K_ENTRY;
	} else if (s[end - 1] == ';' && s[end - 2] == ')' &&
		   s + end - 2 >= paren) {
		l->kind = PF_K_LEAF;
		end--;
	}
	l->whole = l->kind != PF_K_OTHER;
	if (!l->whole)
		return;
	/* s[end - 1] is the closing parenthesis. */
	parse_args(paren + 1, (size_t)(s + end - 1 - (paren + 1)), l);
	if (comment && l->kind == PF_K_LEAF)
		parse_retval(comment, comment_len, l);
}

/* "CPU:N [LOST M EVENTS]" or "CPU:N [LOST EVENTS]" */
static void parse_lost(const char *s, size_t n, struct pf_line *l)
{
	struct pf_cur c = { s, n, 4 };
	const char *lost = mem_find(s, n, "[LOST");
	uint64_t v;

	if (!lost)
		return;
	l->kind = PF_K_LOST;
	l->whole = ends_with(s, n, "EVENTS]");
	if (cur_number(&c, 10, &v, NULL) && v < PF_FGRAPH_MAX_CPU)
		l->cpu = (long)v;
	c.i = (size_t)(lost - s) + 5;
	cur_spaces(&c);
	/* A count that does not fit in 64 bits is not known. */
	if (cur_number(&c, 20, &v, NULL)) {
		l->lost_known = true;
		l->lost = v;
	}
}

static void parse_line(const char *s, size_t n, struct pf_line *l)
{
	struct pf_cur c = { s, n, 0 };
	const char *paren;
	size_t at;
	char after;

	/* Field by field: a memset() of it costs more than the rest here. */
	l->kind = PF_K_OTHER;
	l->whole = false;
	l->cpu = -1;
	l->has_duration = false;
	l->duration_ns = 0;
	l->depth = 0;
	l->name = NULL;
	l->name_len = 0;
	l->text = NULL;
	l->text_len = 0;
	l->lost_known = false;
	l->lost = 0;
	l->has_abstime = false;
	l->abstime_ns = 0;
	l->args = NULL;
	l->args_len = 0;
	l->ret = NULL;
	l->ret_len = 0;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\r'))
		n--;
	c.n = n;
	if (!n) {
		l->kind = PF_K_NONE;
		l->whole = true;
		return;
	}
	if (n >= 4 && !memcmp(s, "CPU:", 4)) {
		parse_lost(s, n, l);
		return;
	}
	/* Each needs its own byte after the number: try only that one. */
	after = after_number(&c);
	if (after == '.') {
		at = c.i;
		skip_abstime(&c, l);
		if (c.i != at)
			after = after_number(&c);
	}
	if (after == ' ')
		skip_reltime(&c);
	l->cpu = parse_cpu(&c);
	skip_proc(&c);
	skip_lat(&c);
	{
		size_t save = c.i;

		cur_spaces(&c);
		if (cur_eat(&c, "==========>") || cur_eat(&c, "<==========")) {
			l->kind = PF_K_IRQ;
			l->whole = true;
			return;
		}
		c.i = save;
	}
	if (!parse_duration(&c, l) && l->cpu < 0) {
		/* Neither CPU nor duration: not a graph line, or a banner. */
		size_t save = c.i;

		cur_spaces(&c);
		if (s[0] == '#' || cur_eat(&c, "-----")) {
			l->kind = PF_K_NONE;
			l->whole = true;
			return;
		}
		c.i = save;
	}
	paren = memchr(s + c.i, '(', n - c.i);
	if (l->cpu >= 0 && !paren && mem_find(s + c.i, n - c.i, " => ")) {
		l->kind = PF_K_NONE;	/* " 1)  comm-pid  =>  comm-pid" */
		l->whole = true;
		return;
	}
	parse_body(s + c.i, n - c.i, paren, l);
	if (l->kind == PF_K_OTHER && s[0] == '#') {
		l->kind = PF_K_NONE;	/* the header */
		l->whole = true;
	}
}

/* --- building the trees ------------------------------------------------------ */

/*
 * A packet's nodes, their names and their children's arrays come from its
 * own chunks, freed with it: one malloc() per few hundred lines, not three
 * per line. A detached call's tree stays there until the packet is freed
 * (it is in the packet's text too, so memory stays proportional to it).
 */
struct pf_chunk {
	struct pf_chunk *next;
	size_t used, size;
	max_align_t data[];
};

#define PF_CHUNK_MIN	8192
#define PF_CHUNK_MAX	(1U << 20)

static void *pkt_alloc(struct pf_packet *pkt, size_t n)
{
	struct pf_chunk *c = pkt->chunks;
	void *m;

	n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	if (!c || c->size - c->used < n) {
		size_t size = c ? 2 * c->size : PF_CHUNK_MIN;

		if (size > PF_CHUNK_MAX)
			size = PF_CHUNK_MAX;
		if (size < n)
			size = n;
		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->next = pkt->chunks;
		c->used = 0;
		c->size = size;
		pkt->chunks = c;
	}
	m = (char *)c->data + c->used;
	c->used += n;
	return m;
}

/* A call of line @l (ENTRY or LEAF): its name and arguments copied. */
static struct pf_node *node_new(struct pf_packet *pkt, const struct pf_line *l,
				size_t depth)
{
	size_t len = l->name_len, alen = l->args ? l->args_len + 1 : 0;
	struct pf_node *node = pkt_alloc(pkt, sizeof(*node) + len + 1 + alen);

	if (!node)
		return NULL;
	memset(node, 0, sizeof(*node));
	node->func = (char *)(node + 1);
	memcpy(node->func, l->name, len);
	node->func[len] = '\0';
	if (alen) {
		node->args = node->func + len + 1;
		memcpy(node->args, l->args, l->args_len);
		node->args[l->args_len] = '\0';
	}
	node->depth = depth > UINT32_MAX ? UINT32_MAX : (unsigned int)depth;
	return node;
}

/* The return value of line @l (LEAF or RETURN), if it has one. */
static void node_ret(struct pf_packet *pkt, struct pf_node *node,
		     const struct pf_line *l)
{
	if (!l->ret || node->ret)
		return;
	/* Out of memory: the value is left out, as the kernel may. */
	node->ret = pkt_alloc(pkt, l->ret_len + 1);
	if (!node->ret)
		return;
	memcpy(node->ret, l->ret, l->ret_len);
	node->ret[l->ret_len] = '\0';
}

static int node_add(struct pf_packet *pkt, struct pf_node *parent,
		    struct pf_node *child)
{
	if (parent->nchildren == parent->cap) {
		size_t cap = parent->cap ? 2 * parent->cap : 4;
		struct pf_node **c;

		c = pkt_alloc(pkt, cap * sizeof(*c));
		if (!c)
			return -ENOMEM;
		if (parent->nchildren)
			memcpy(c, parent->children,
			       parent->nchildren * sizeof(*c));
		parent->children = c;
		parent->cap = cap;
	}
	parent->children[parent->nchildren++] = child;
	return 0;
}

static void packet_free(struct pf_packet *pkt)
{
	struct pf_chunk *c, *next;

	if (!pkt)
		return;
	for (c = pkt->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	for (size_t i = 0; i < pkt->nnft; i++)
		free(pkt->nft[i].rule);
	free(pkt->nft);
	free(pkt->raw_text);
	free(pkt->data);
	free(pkt);
}

static int packet_append(struct pf_packet *pkt, const char *s, size_t n)
{
	if (pkt->raw_cap - pkt->raw_len < n + 2) {
		size_t cap = pkt->raw_cap ? pkt->raw_cap : 16384;
		char *t;

		while (cap - pkt->raw_len < n + 2) {
			if (cap > SIZE_MAX / 2)
				return -ENOMEM;
			cap *= 2;
		}
		t = realloc(pkt->raw_text, cap);
		if (!t)
			return -ENOMEM;
		pkt->raw_text = t;
		pkt->raw_cap = cap;
	}
	memcpy(pkt->raw_text + pkt->raw_len, s, n);
	pkt->raw_len += n;
	pkt->raw_text[pkt->raw_len++] = '\n';
	pkt->raw_text[pkt->raw_len] = '\0';
	return 0;
}

/* Takes back what packet_append() added after @mark. */
static void packet_unappend(struct pf_packet *pkt, size_t mark)
{
	pkt->raw_len = mark;
	if (pkt->raw_text)
		pkt->raw_text[mark] = '\0';
}

static int trace_add(struct pf_fgraph *p, struct pf_packet *pkt)
{
	struct pf_trace *t = p->trace;

	if (p->fn && p->head == t->npackets) {
		p->head = t->npackets = 0;	/* the queue is empty */
	} else if (p->fn && t->npackets == t->cap && p->head) {
		memmove(t->packets, t->packets + p->head,
			(t->npackets - p->head) * sizeof(*t->packets));
		t->npackets -= p->head;
		p->head = 0;
	}
	if (t->npackets == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		struct pf_packet **p;

		p = realloc(t->packets, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		t->packets = p;
		t->cap = cap;
	}
	t->packets[t->npackets++] = pkt;
	return 0;
}

static struct pf_cpu *cpu_get(struct pf_fgraph *p, long cpu)
{
	size_t idx = (size_t)(cpu + 1);

	if (idx >= p->ncpus) {
		size_t n = idx + 8, i;
		struct pf_cpu **c = realloc(p->cpus, n * sizeof(*c));

		if (!c)
			return NULL;
		for (i = p->ncpus; i < n; i++)
			c[i] = NULL;
		p->cpus = c;
		p->ncpus = n;
	}
	if (!p->cpus[idx]) {
		p->cpus[idx] = calloc(1, sizeof(struct pf_cpu));
		if (p->cpus[idx])
			p->cpus[idx]->p = p;
	}
	return p->cpus[idx];
}

static int stack_push(struct pf_cpu *st, struct pf_node *node)
{
	if (st->sp == st->stack_cap) {
		size_t cap = st->stack_cap ? 2 * st->stack_cap : 32;
		struct pf_node **s = realloc(st->stack, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		st->stack = s;
		st->stack_cap = cap;
	}
	st->stack[st->sp++] = node;
	return 0;
}

static void packet_done(struct pf_fgraph *p, struct pf_packet *pkt)
{
	pkt->done = true;
	p->held++;
}

/* The waiting packet at @i is done: its free came, or it waited enough. */
static void wait_end(struct pf_fgraph *p, size_t i)
{
	packet_done(p, p->wait[i]);
	memmove(p->wait + i, p->wait + i + 1,
		(p->nwait - i - 1) * sizeof(p->wait[0]));
	p->nwait--;
}

/* @pkt's graph is closed, its free not seen yet: let it wait for it. */
static void wait_add(struct pf_fgraph *p, struct pf_packet *pkt)
{
	if (p->nwait == PF_FGRAPH_FREE_WAIT)
		wait_end(p, 0);
	p->wait[p->nwait++] = pkt;
}

/* The packet open on @st is over: @why (enum pf_incomplete) or complete. */
static void packet_close(struct pf_cpu *st, unsigned int why)
{
	struct pf_packet *pkt = st->pkt;

	if (!why && st->unclosed)
		why = PF_INC_NESTING;
	if (st->lost_all != st->p->lost_all)
		why |= PF_INC_LOST;	/* a "[LOST" line of no known CPU */
	pkt->incomplete |= why;
	pkt->complete = pkt->graph && pkt->graph->complete && !pkt->incomplete;
	if (pkt->has_id && pkt->fate == PF_FATE_UNKNOWN)
		wait_add(st->p, pkt);
	else
		packet_done(st->p, pkt);
	st->detached = NULL;	/* in the packet's chunks */
	st->pkt = NULL;
	st->rooted = false;
	st->sp = 0;
	st->naside = 0;
	st->unclosed = 0;
}

static bool is_handler(const char *name, size_t len)
{
	size_t i, n = 0;

	while (n < len && name[n] != '.' && name[n] != ' ')
		n++;
	for (i = 0; i < ARRAY_SIZE(pf_handlers); i++)
		if (strlen(pf_handlers[i]) == n && !memcmp(name, pf_handlers[i], n))
			return true;
	return false;
}

/*
 * Is the call @name the event's root= @root? Both without a ".cold" or
 * ".isra.0" suffix, or a " [module]".
 */
static bool is_root(const char *root, const char *name, size_t len)
{
	size_t n = 0, r = strcspn(root, ". ");

	while (n < len && name[n] != '.' && name[n] != ' ')
		n++;
	return n == r && !memcmp(name, root, n);
}

/* Same function? Module functions print as "name [module]". */
static bool same_func(const char *func, const char *name, size_t len)
{
	size_t n = strcspn(func, " ");

	return n == len && !memcmp(func, name, len);
}

/* Where the value of "key=value" in the event's text is, and its length. */
static bool event_value(const char *text, size_t len, const char *key,
			const char **val, size_t *vlen)
{
	size_t klen = strlen(key), i = 0;

	while (i < len) {
		size_t start = i;

		while (i < len && text[i] != ' ')
			i++;
		if (i - start > klen && !memcmp(text + start, key, klen) &&
		    text[start + klen] == '=') {
			*val = text + start + klen + 1;
			*vlen = i - start - klen - 1;
			return true;
		}
		while (i < len && text[i] == ' ')
			i++;
	}
	return false;
}

/* "key=value" of the event's text, as a string in @buf. */
static bool event_field(const char *text, size_t len, const char *key,
			char *buf, size_t size)
{
	const char *val;
	size_t vlen;

	if (!event_value(text, len, key, &val, &vlen))
		return false;
	if (vlen >= size)
		vlen = size - 1;
	memcpy(buf, val, vlen);
	buf[vlen] = '\0';
	return true;
}

/*
 * data=HEX (version 6) into @pkt, at most len= bytes: false if it is not
 * such (odd, not hex, too long: the event is then not understood), or
 * out of memory (*@oom).
 */
static bool event_data(const char *text, size_t len, struct pf_packet *pkt,
		       bool *oom)
{
	const char *val;
	size_t vlen, i;

	*oom = false;
	if (!event_value(text, len, "data", &val, &vlen))
		return true;
	if (vlen % 2 || vlen / 2 > PF_FGRAPH_MAX_DATA || vlen / 2 > pkt->len)
		return false;
	pkt->has_data = true;
	pkt->caplen = (uint32_t)(vlen / 2);
	if (!pkt->caplen)
		return true;
	pkt->data = malloc(pkt->caplen);
	if (!pkt->data) {
		*oom = true;
		return false;
	}
	for (i = 0; i < pkt->caplen; i++) {
		int hi = pf_hex_digit(val[2 * i]), lo = pf_hex_digit(val[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return false;	/* freed with the packet */
		pkt->data[i] = (unsigned char)(hi << 4 | lo);
	}
	return true;
}

/*
 * The number "key=N" of the event's text, at most @max, into *@val (0 if
 * the event lacks the field). False if the field is there but is not
 * such a number: the event is then not understood. @neg: "-N" allowed,
 * down to -@max - 1 (an int), stored as its two's complement.
 */
static bool event_number(const char *text, size_t len, const char *key,
			 uint64_t max, bool neg, uint64_t *val)
{
	char buf[32];
	struct pf_cur c = { buf, 0, 0 };
	bool minus = false;
	uint64_t v;

	*val = 0;
	if (!event_field(text, len, key, buf, sizeof(buf)))
		return true;
	c.n = strlen(buf);
	if (neg && cur_eat(&c, "-"))
		minus = true;
	if (!cur_number(&c, 20, &v, NULL) || !cur_end(&c) ||
	    v > max + (minus ? 1 : 0))
		return false;
	*val = minus ? (uint64_t)0 - v : v;
	return true;
}

/*
 * The packet of a pktfilt_packet event: NULL with *@bad false if out of
 * memory, with *@bad true if a number in it is not understood.
 */
static struct pf_packet *packet_new(const struct pf_line *l, bool *bad)
{
	static const char tag[] = "pktfilt_packet:";
	const char *t = l->text + sizeof(tag) - 1;
	size_t n = l->text_len - (sizeof(tag) - 1);
	struct pf_packet *pkt;
	uint64_t seq, cpu, sport, dport, ifindex, netns, id, held = 0;
	uint64_t plen, rt;
	char buf[32];
	bool oom;

	*bad = !event_number(t, n, "seq", UINT64_MAX, false, &seq) ||
	       !event_number(t, n, "id", UINT64_MAX, false, &id) ||
	       !event_number(t, n, "cpu", UINT32_MAX, false, &cpu) ||
	       !event_number(t, n, "sport", 65535, false, &sport) ||
	       !event_number(t, n, "dport", 65535, false, &dport) ||
	       !event_number(t, n, "ifindex", INT32_MAX, true, &ifindex) ||
	       !event_number(t, n, "netns", UINT32_MAX, false, &netns) ||
	       !event_number(t, n, "held_ns", UINT64_MAX, false, &held) ||
	       !event_number(t, n, "len", UINT32_MAX, false, &plen) ||
	       !event_number(t, n, "rt_ns", UINT64_MAX, false, &rt);
	if (*bad)
		return NULL;
	pkt = calloc(1, sizeof(*pkt));
	if (!pkt)
		return NULL;
	pkt->seq = seq;
	pkt->cpu = l->cpu >= 0 ? (unsigned int)l->cpu : 0;
	if (event_field(t, n, "cpu", buf, sizeof(buf)))
		pkt->cpu = (unsigned int)cpu;
	event_field(t, n, "proto", pkt->proto, sizeof(pkt->proto));
	event_field(t, n, "saddr", pkt->saddr, sizeof(pkt->saddr));
	event_field(t, n, "daddr", pkt->daddr, sizeof(pkt->daddr));
	pkt->sport = (unsigned int)sport;
	pkt->dport = (unsigned int)dport;
	pkt->ifindex = (int)(int64_t)ifindex;
	pkt->netns = (unsigned long)netns;
	pkt->held_ns = held;	/* version 3, lazy filters */
	/* Version 2: the stage, the packet's id, the graph's root. */
	if (!event_field(t, n, "stage", pkt->stage, sizeof(pkt->stage)))
		memcpy(pkt->stage, "l4", 3);
	pkt->has_id = event_field(t, n, "id", buf, sizeof(buf));
	pkt->id = pkt->has_id ? id : seq;
	event_field(t, n, "root", pkt->root, sizeof(pkt->root));
	/* Version 6: the packet's bytes. */
	pkt->len = (uint32_t)plen;
	pkt->rt_ns = rt;
	if (!event_data(t, n, pkt, &oom)) {
		free(pkt->data);
		free(pkt);
		*bad = !oom;
		return NULL;
	}
	return pkt;
}

static bool is_event(const struct pf_line *l)
{
	static const char tag[] = "pktfilt_packet:";

	return l->kind == PF_K_COMMENT && l->text_len >= sizeof(tag) - 1 &&
	       !memcmp(l->text, tag, sizeof(tag) - 1);
}

static bool is_free(const struct pf_line *l)
{
	static const char tag[] = "pktfilt_free:";

	return l->kind == PF_K_COMMENT && l->text_len >= sizeof(tag) - 1 &&
	       !memcmp(l->text, tag, sizeof(tag) - 1);
}

static void fate_set(struct pf_packet *pkt, const char *reason,
		     const char *func)
{
	pkt->fate = strcmp(reason, "CONSUMED") ? PF_FATE_DROPPED :
		    PF_FATE_CONSUMED;
	snprintf(pkt->drop_reason, sizeof(pkt->drop_reason), "%s", reason);
	snprintf(pkt->drop_func, sizeof(pkt->drop_func), "%s", func);
}

/*
 * The functions that free an skb, as function_graph names them: the
 * pktfilt_free event comes from inside one of them.
 */
static bool is_free_func(const char *name)
{
	static const char *const prefixes[] = {
		"kfree_skb", "__kfree_skb", "sk_skb_reason_drop",
		"consume_skb", "__consume_stateless_skb", "napi_consume_skb",
		"skb_release", "dev_kfree_skb", "__dev_kfree_skb",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/*
 * A free inside a graph has no func= (version 5; before, it said
 * func=return_to_handler: function_graph replaced the return address the
 * kernel reports): the caller of the innermost freeing frame open on that
 * CPU is the function that dropped it.
 */
static void free_caller(const struct pf_cpu *st, char *func, size_t len)
{
	size_t i = st->sp;
	bool in_free = false;

	while (i-- > 0) {
		const struct pf_node *node = st->stack[i];

		if (node->outside)
			continue;
		if (is_free_func(node->func)) {
			in_free = true;
			continue;
		}
		if (in_free) {
			snprintf(func, len, "%.*s", (int)strcspn(node->func, " ."),
				 node->func);
			return;
		}
		return;
	}
}

/*
 * "pktfilt_free: id=N reason=R func=F": the end of packet N. 1 if not
 * understood (no id), else 0. The packets of that id open on a CPU, or
 * waiting, get it; the waiting ones are done then.
 */
static int on_free(struct pf_fgraph *p, const struct pf_line *l)
{
	static const char tag[] = "pktfilt_free:";
	const char *t = l->text + sizeof(tag) - 1;
	size_t n = l->text_len - (sizeof(tag) - 1), i, k;
	char reason[48], func[128], buf[32];
	bool found = false;
	uint64_t id;

	if (!event_field(t, n, "id", buf, sizeof(buf)) ||
	    !event_number(t, n, "id", UINT64_MAX, false, &id))
		return 1;
	if (!event_field(t, n, "reason", reason, sizeof(reason)))
		snprintf(reason, sizeof(reason), "?");
	func[0] = '\0';
	if (event_field(t, n, "func", func, sizeof(func))) {
		func[strcspn(func, "+")] = '\0';
		/*
		 * 0x0: the kernel did not say; return_to_handler: inside a
		 * graph, function_graph's trampoline stands for the caller.
		 */
		if (!strcmp(func, "0x0") || !strcmp(func, "return_to_handler"))
			func[0] = '\0';
	}
	/* cpu_get()'s index: the CPU column + 1, 0 without one. */
	i = (size_t)(l->cpu + 1);
	if (!func[0] && i < p->ncpus && p->cpus[i] && p->cpus[i]->pkt)
		free_caller(p->cpus[i], func, sizeof(func));
	p->trace->stats.frees++;
	k = p->nfreed < PF_FREED_IDS ? p->nfreed : PF_FREED_IDS;
	for (i = 0; i < k; i++)
		if (p->freed[i] == id)
			return 0;	/* only the first counts */
	p->freed[p->nfreed++ % PF_FREED_IDS] = id;
	for (i = 0; i < p->ncpus; i++) {
		struct pf_cpu *st = p->cpus[i];

		if (st && st->pkt && st->pkt->has_id && st->pkt->id == id &&
		    st->pkt->fate == PF_FATE_UNKNOWN) {
			fate_set(st->pkt, reason, func);
			found = true;
		}
	}
	for (i = p->nwait; i-- > 0;) {
		if (p->wait[i]->id != id)
			continue;
		fate_set(p->wait[i], reason, func);
		wait_end(p, i);
		found = true;
	}
	if (!found)
		p->trace->stats.frees_unmatched++;
	return 0;
}

static bool is_nft(const struct pf_line *l)
{
	static const char tag[] = "pktfilt_nft:";

	return l->kind == PF_K_COMMENT && l->text_len >= sizeof(tag) - 1 &&
	       !memcmp(l->text, tag, sizeof(tag) - 1);
}

/*
 * nftables' own tracing functions: they run for a packet pktfilt marked
 * (module/nft.c), not for the packet's sake, and are left out of its
 * graph with what they call. Their pktfilt_nft events stay.
 */
static bool is_nft_trace_func(const char *name, size_t len)
{
	static const char *const funcs[] = {
		"nft_trace_init", "__nft_trace_packet", "nft_trace_packet",
		"nft_trace_notify",
	};
	size_t i, n = 0;

	while (n < len && name[n] != ' ' && name[n] != '.')
		n++;
	for (i = 0; i < ARRAY_SIZE(funcs); i++)
		if (strlen(funcs[i]) == n && !memcmp(name, funcs[i], n))
			return true;
	return false;
}

/*
 * "pktfilt_nft: id=N family=F table=T chain=C handle=H type=Y verdict=V
 * target=G netns=I[ rule=TEXT]": a verdict of the packet open on this CPU (rule=,
 * to the end, is pktfilt trace's: the rule's text when it was captured).
 * 1 if not understood, 0 (also when no packet is open: ignored), -ENOMEM.
 */
static int on_nft(struct pf_fgraph *p, struct pf_cpu *st,
		  const struct pf_line *l)
{
	static const char tag[] = "pktfilt_nft:", rule_key[] = " rule=";
	const char *t = l->text + sizeof(tag) - 1, *r;
	size_t n = l->text_len - (sizeof(tag) - 1), rn = 0;
	struct pf_packet *pkt = st->pkt;
	struct pf_nft *nft, e = { 0 };
	uint64_t netns;
	char buf[32];

	/* rule= last, its text with spaces: the other fields before it. */
	for (r = NULL, rn = 0; !r && rn + sizeof(rule_key) - 1 <= n; rn++)
		if (!memcmp(t + rn, rule_key, sizeof(rule_key) - 1))
			r = t + rn;
	rn = 0;
	if (r) {
		rn = n - (size_t)(r - t) - (sizeof(rule_key) - 1);
		n = (size_t)(r - t);
		r += sizeof(rule_key) - 1;
		while (rn && r[rn - 1] == ' ')
			rn--;
	}
	if (!event_field(t, n, "id", buf, sizeof(buf)) ||
	    !event_field(t, n, "table", e.table, sizeof(e.table)) ||
	    !event_field(t, n, "chain", e.chain, sizeof(e.chain)) ||
	    !event_number(t, n, "handle", UINT64_MAX, false, &e.handle) ||
	    !event_number(t, n, "netns", UINT32_MAX, false, &netns))
		return 1;
	e.netns = (unsigned long)netns;
	event_field(t, n, "family", e.family, sizeof(e.family));
	event_field(t, n, "type", e.type, sizeof(e.type));
	event_field(t, n, "verdict", e.verdict, sizeof(e.verdict));
	if (event_field(t, n, "target", e.target, sizeof(e.target)) &&
	    !strcmp(e.target, "-"))
		e.target[0] = '\0';
	if (!pkt || !st->rooted)
		return 0;
	if (st->sp) {
		const struct pf_node *in = st->stack[st->sp - 1];

		snprintf(e.in, sizeof(e.in), "%.*s",
			 (int)strcspn(in->func, " "), in->func);
		e.has_at = in->has_start;
		e.at_ns = in->start_ns;
		e.node = in;
		e.after = in->nchildren;
	}
	if (r && rn) {
		e.rule = strndup(r, rn);
		if (!e.rule)
			return -ENOMEM;
	}
	nft = realloc(pkt->nft, (pkt->nnft + 1) * sizeof(*nft));
	if (!nft) {
		free(e.rule);
		return -ENOMEM;
	}
	pkt->nft = nft;
	nft[pkt->nnft++] = e;
	p->trace->stats.nft++;
	st->nft_fresh = true;
	return 0;
}

/* snprintf() at *@n of @buf, past its end too: the length adds up. */
static void nft_add(char *buf, size_t len, int *n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void nft_add(char *buf, size_t len, int *n, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (*n < 0)
		return;
	va_start(ap, fmt);
	if ((size_t)*n < len)
		k = vsnprintf(buf + *n, len - (size_t)*n, fmt, ap);
	else
		k = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	*n = k < 0 ? k : *n + k;
}

int pf_nft_format(const struct pf_nft *e, char *buf, size_t len,
		  bool verdict)
{
	int n = 0;

	if (len)
		buf[0] = '\0';
	nft_add(buf, len, &n, "%s %s %s", e->family[0] ? e->family : "?",
		e->table, e->chain);
	if (e->handle)
		nft_add(buf, len, &n, " handle %" PRIu64, e->handle);
	else
		nft_add(buf, len, &n, " %s", e->type[0] ? e->type : "?");
	if (verdict)
		nft_add(buf, len, &n, ": %s%s%s",
			e->verdict[0] ? e->verdict : "?",
			e->target[0] ? " " : "", e->target);
	if (e->rule)
		nft_add(buf, len, &n, verdict ? " [%s]" : ": %s", e->rule);
	return n;
}

/*
 * The line of a verdict on_nft() took, as the text shows it: the kernel's
 * prefix (time, CPU, indentation: that of a call of the innermost one
 * open in the graph, the tracing functions it was in being left out),
 * then "/" "* nft inet filter input handle 7: drop [udp dport 7778
 * counter drop] *" "/".
 */
static int nft_append(const struct pf_cpu *st, const char *s, size_t n,
		      const struct pf_line *l)
{
	struct pf_packet *pkt = st->pkt;
	const char *c = l->text;
	size_t pre, want = st->base + st->sp, cut;
	char *line;
	int k, len, err;

	while (c > s && !(c[0] == '/' && c[1] == '*'))
		c--;
	pre = (size_t)(c - s);
	/* Deeper than the graph around it: inside the tracing functions. */
	cut = l->depth > want ? 2 * (l->depth - want) : 0;
	while (cut && pre && s[pre - 1] == ' ') {
		pre--;
		cut--;
	}
	len = pf_nft_format(&pkt->nft[pkt->nnft - 1], NULL, 0, true);
	if (len < 0 || pre > n)
		return packet_append(pkt, s, n);
	line = malloc(pre + 7 + (size_t)len + 4);
	if (!line)
		return -ENOMEM;
	memcpy(line, s, pre);
	memcpy(line + pre, "/* nft ", 7);
	pf_nft_format(&pkt->nft[pkt->nnft - 1], line + pre + 7,
		      (size_t)len + 1, true);
	k = (int)(pre + 7 + (size_t)len);
	memcpy(line + k, " */", 3);
	err = packet_append(pkt, line, (size_t)k + 3);
	free(line);
	return err;
}

const struct pf_nft *pf_nft_fate(const struct pf_packet *pkt)
{
	const struct pf_nft *e;

	if (!pkt->nnft)
		return NULL;
	e = &pkt->nft[pkt->nnft - 1];
	if (strcmp(e->verdict, "drop") && strcmp(e->verdict, "queue") &&
	    strcmp(e->verdict, "stolen"))
		return NULL;
	return e;
}

/* 0, -ENOMEM, or 1 if the event is not understood (and so ignored). */
static int on_event(struct pf_fgraph *p, struct pf_cpu *st,
		    const struct pf_line *l)
{
	struct pf_packet *pkt;
	bool bad;

	pkt = packet_new(l, &bad);
	if (!pkt)
		return bad ? 1 : -ENOMEM;
	p->trace->stats.events++;
	if (st->pkt)
		packet_close(st, st->rooted ? PF_INC_CUT : PF_INC_NO_GRAPH);
	if (trace_add(p, pkt)) {
		packet_free(pkt);
		return -ENOMEM;
	}
	st->pkt = pkt;
	st->lost_all = p->lost_all;
	st->skipping = false;
	return 0;
}

/* A call outside any graph. */
static void outside(struct pf_fgraph *p, const struct pf_line *l)
{
	if (l->kind != PF_K_RETURN && l->depth == 0)
		p->trace->stats.noise++;
	else
		p->trace->stats.stray++;
}

/*
 * Set the top of the stack aside: a call at its depth came before its
 * return. That is what lost events do, but also an interrupt taken in
 * ftrace_return_to_handler() after it decremented the task's depth and
 * before it wrote the return: the interrupt's calls show at the depth of
 * the returning call, and its return comes after them, with the name in
 * a comment since another call took its depth. Seen on 6.1.
 */
static void set_aside(struct pf_cpu *st)
{
	struct pf_node *node = st->stack[--st->sp];

	if (node == st->detached) {
		st->detached = NULL;	/* in the packet's chunks */
		return;
	}
	if (node->outside)
		return;		/* in the detached call's tree */
	if (st->naside == PF_ASIDE_MAX) {
		memmove(st->aside, st->aside + 1,
			(PF_ASIDE_MAX - 1) * sizeof(st->aside[0]));
		st->naside--;
	}
	st->aside[st->naside++] = node;
}

/* The latest call set aside at @depth, named @name if given. */
static struct pf_node *take_aside(struct pf_cpu *st, size_t depth,
				  const char *name, size_t len)
{
	size_t i;

	for (i = st->naside; i-- > 0;) {
		struct pf_node *node = st->aside[i];

		if (node->depth != depth ||
		    (name && !same_func(node->func, name, len)))
			continue;
		memmove(st->aside + i, st->aside + i + 1,
			(st->naside - i - 1) * sizeof(st->aside[0]));
		st->naside--;
		return node;
	}
	return NULL;
}

/* A call at @depth returned: those set aside below it never will. */
static void prune_aside(struct pf_cpu *st, size_t depth)
{
	size_t i, j = 0;

	for (i = 0; i < st->naside; i++)
		if (st->aside[i]->depth <= depth)
			st->aside[j++] = st->aside[i];
	st->naside = j;
}

static void node_close(struct pf_cpu *st, struct pf_node *node,
		       const struct pf_line *l)
{
	node->complete = true;
	node->duration_ns = l->duration_ns;
	node_ret(st->pkt, node, l);
	if (!node->outside && st->unclosed)
		st->unclosed--;
}

/* The call's timestamp (funcgraph-abstime), if its line has one. */
static void node_start(struct pf_node *node, const struct pf_line *l)
{
	node->has_start = l->has_abstime;
	node->start_ns = l->abstime_ns;
}

static int on_call(struct pf_fgraph *p, struct pf_cpu *st,
		   const struct pf_line *l)
{
	struct pf_packet *pkt = st->pkt;
	struct pf_node *node, *top = NULL;
	size_t rel;

	if (!st->rooted) {
		if (pkt->root[0] ? !is_root(pkt->root, l->name, l->name_len) :
		    !is_handler(l->name, l->name_len)) {
			outside(p, l);
			return 0;
		}
		node = node_new(pkt, l, 0);
		if (!node || stack_push(st, node))
			return -ENOMEM;
		node_start(node, l);
		pkt->graph = node;
		st->rooted = true;
		st->base = l->depth;
		st->unclosed = 1;
		if (l->kind == PF_K_LEAF) {
			node_close(st, node, l);
			packet_close(st, 0);
		}
		return 0;
	}
	rel = l->depth - st->base;
	/* Calls at this depth or deeper that did not return (yet). */
	while (st->sp && st->stack[st->sp - 1]->depth >= rel)
		set_aside(st);
	if (st->sp) {
		top = st->stack[st->sp - 1];
	} else if (rel) {
		/* Below a call that is not in the graph: not ours either. */
		p->trace->stats.stray++;
		return 0;
	}
	if (st->sp > PF_FGRAPH_MAX_DEPTH) {
		pkt->incomplete |= PF_INC_DEPTH;
		return 0;
	}
	if (!top) {
		/* At the root's depth, the root set aside: an interrupt. */
		p->trace->stats.noise++;
		if (l->kind == PF_K_LEAF)
			return 0;
		node = node_new(pkt, l, 0);
		if (!node || stack_push(st, node))
			return -ENOMEM;
		node->outside = true;
		st->detached = node;
		return 0;
	}
	node = node_new(pkt, l, rel);
	if (!node || node_add(pkt, top, node))
		return -ENOMEM;
	node_start(node, l);
	node->outside = top->outside;
	if (l->kind == PF_K_LEAF) {
		node->complete = true;
		node->duration_ns = l->duration_ns;
		node_ret(pkt, node, l);
		return 0;
	}
	if (!node->outside)
		st->unclosed++;
	return stack_push(st, node);
}

static void on_return(struct pf_fgraph *p, struct pf_cpu *st,
		      const struct pf_line *l)
{
	struct pf_packet *pkt = st->pkt;
	struct pf_node *node;
	size_t rel = l->depth - st->base;

	while (st->sp && st->stack[st->sp - 1]->depth > rel)
		set_aside(st);
	if (st->sp) {
		node = st->stack[st->sp - 1];
		if (node->depth == rel &&
		    (!l->name || same_func(node->func, l->name, l->name_len))) {
			st->sp--;
			if (node == st->detached) {
				st->detached = NULL;
				return;
			}
			if (node->outside)
				return;
			node_close(st, node, l);
			prune_aside(st, rel);
			if (!st->sp)
				packet_close(st, 0);
			return;
		}
	}
	node = take_aside(st, rel, l->name, l->name_len);
	if (node) {
		node_close(st, node, l);
		if (node == pkt->graph)
			packet_close(st, 0);
		return;
	}
	if (!st->sp || st->detached) {
		p->trace->stats.stray++;
		return;
	}
	/* Its entry was lost. */
	p->trace->stats.orphans++;
	pkt->incomplete |= PF_INC_NESTING;
}

/*
 * "CPU:N [LOST ...]": the packet open on CPU N lost events, and the line
 * goes into its text. A line whose CPU cannot be read concerns every CPU:
 * it is counted in lost_all, which marks every packet open at the time
 * when it closes (O(1) per line, however many CPUs have packets open),
 * and it goes into no packet's text.
 */
static void on_lost(struct pf_fgraph *p, const struct pf_line *l,
		    const char *s, size_t n)
{
	struct pf_trace_stats *stats = &p->trace->stats;
	struct pf_cpu *st;

	stats->lost_reports++;
	if (l->lost_known) {
		if (l->lost > UINT64_MAX - stats->lost_events) {
			stats->lost_events = UINT64_MAX;
			stats->lost_saturated = true;
		} else {
			stats->lost_events += l->lost;
		}
	} else {
		stats->lost_unknown++;
	}
	if (l->cpu < 0) {
		p->lost_all++;
		return;
	}
	if ((size_t)l->cpu + 1 >= p->ncpus)
		return;
	st = p->cpus[l->cpu + 1];
	if (!st || !st->pkt)
		return;
	st->pkt->incomplete |= PF_INC_LOST;
	if (packet_append(st->pkt, s, n))
		p->failed = true;
}

static int process_line(struct pf_fgraph *p, const char *s, size_t n,
			const struct pf_line *l)
{
	struct pf_trace_stats *stats = &p->trace->stats;
	struct pf_packet *pkt;
	struct pf_cpu *st;
	bool rooted;
	size_t mark;
	int err;

	switch (l->kind) {
	case PF_K_NONE:
		return 0;
	case PF_K_LOST:
		on_lost(p, l, s, n);
		return p->failed ? -ENOMEM : 0;
	case PF_K_OTHER:
		stats->garbage++;
		break;
	default:
		break;
	}
	st = cpu_get(p, l->cpu);
	if (!st)
		return -ENOMEM;
	if (is_event(l) && (err = on_event(p, st, l)) != 1) {
		if (err)
			return err;
	} else if (is_event(l)) {
		stats->garbage++;	/* a number in it does not fit */
	} else if (is_free(l)) {
		if (on_free(p, l))
			stats->garbage++;
	} else if (is_nft(l)) {
		err = on_nft(p, st, l);
		if (err < 0)
			return err;
		if (err)
			stats->garbage++;
	} else if (st->rooted && (l->kind == PF_K_ENTRY ||
				  l->kind == PF_K_LEAF ||
				  l->kind == PF_K_RETURN) &&
		   l->depth < st->base) {
		/* Above the root: its return never came. */
		packet_close(st, PF_INC_NESTING);
	}
	if (!st->pkt) {
		if (l->kind == PF_K_ENTRY || l->kind == PF_K_LEAF ||
		    l->kind == PF_K_RETURN)
			outside(p, l);
		return 0;
	}
	/* nftables' tracing functions: pktfilt's doing, not in the graph. */
	if (st->rooted && st->skipping &&
	    (l->kind == PF_K_ENTRY || l->kind == PF_K_LEAF ||
	     l->kind == PF_K_RETURN)) {
		if (l->depth > st->skip)
			return 0;
		st->skipping = false;
		if (l->kind == PF_K_RETURN && l->depth == st->skip)
			return 0;
	}
	if (st->rooted && (l->kind == PF_K_ENTRY || l->kind == PF_K_LEAF) &&
	    l->depth > st->base && is_nft_trace_func(l->name, l->name_len)) {
		st->skipping = l->kind == PF_K_ENTRY;
		st->skip = l->depth;
		return 0;
	}
	/*
	 * The line belongs to the packet open on its CPU; but calls before
	 * its root (an interrupt between the event and the handler, its
	 * exit path recorded at this depth) are noise, kept out of its text
	 * as out of its tree. Appended first: a leaf root closes the packet.
	 */
	pkt = st->pkt;
	mark = pkt->raw_len;
	if (st->nft_fresh) {
		st->nft_fresh = false;
		err = nft_append(st, s, n, l);
	} else {
		err = packet_append(pkt, s, n);
	}
	if (err)
		return err;
	switch (l->kind) {
	case PF_K_ENTRY:
	case PF_K_LEAF:
		rooted = st->rooted;
		err = on_call(p, st, l);
		if (!rooted && st->pkt == pkt && !st->rooted)
			packet_unappend(pkt, mark);
		return err;
	case PF_K_RETURN:
		if (st->rooted) {
			on_return(p, st, l);
		} else {
			outside(p, l);
			packet_unappend(pkt, mark);
		}
		return 0;
	default:
		return 0;
	}
}

static int give(struct pf_fgraph *p, struct pf_packet *pkt)
{
	struct pf_trace_stats *stats = &p->trace->stats;
	int err = 0;

	stats->streamed++;
	stats->streamed_incomplete += !pkt->complete;
	if (!p->fn_err)
		err = p->fn(p->arg, pkt);
	packet_free(pkt);
	p->held--;
	if (err && !p->fn_err)
		p->fn_err = err < 0 ? err : -ECANCELED;
	return p->fn_err;
}

/*
 * Hand over the done packets at the head of the queue, in the order of
 * their events; all the done ones if too many wait for an open one.
 */
static int stream_flush(struct pf_fgraph *p)
{
	struct pf_trace *t = p->trace;
	size_t i, j;

	while (p->head < t->npackets && t->packets[p->head]->done)
		give(p, t->packets[p->head++]);
	if (p->held > PF_STREAM_HOLD) {
		for (i = j = p->head; i < t->npackets; i++) {
			if (t->packets[i]->done)
				give(p, t->packets[i]);
			else
				t->packets[j++] = t->packets[i];
		}
		t->npackets = j;
	}
	return p->fn_err;
}

static int feed_line(struct pf_fgraph *p, const char *s, size_t n)
{
	struct pf_line l;
	int err;

	parse_line(s, n, &l);
	p->trace->stats.lines++;
	err = process_line(p, s, n, &l);
	if (!err && p->held) {
		if (p->fn)
			err = stream_flush(p);
		else
			p->held = 0;
	}
	return err;
}

/* --- the interface ------------------------------------------------------------ */

struct pf_fgraph *pf_fgraph_new(void)
{
	struct pf_fgraph *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->trace = calloc(1, sizeof(*p->trace));
	if (!p->trace) {
		free(p);
		return NULL;
	}
	return p;
}

struct pf_fgraph *pf_fgraph_new_stream(pf_packet_fn fn, void *arg)
{
	struct pf_fgraph *p = pf_fgraph_new();

	if (p) {
		p->fn = fn;
		p->arg = arg;
	}
	return p;
}

static int partial_add(struct pf_fgraph *p, const char *s, size_t n)
{
	if (p->overlong)
		return 0;
	if (n > PF_FGRAPH_MAX_LINE - p->len) {
		n = PF_FGRAPH_MAX_LINE - p->len;
		p->overlong = true;
	}
	if (p->cap - p->len < n) {
		size_t cap = p->cap ? p->cap : 256;
		char *l;

		while (cap - p->len < n)
			cap *= 2;
		l = realloc(p->line, cap);
		if (!l)
			return -ENOMEM;
		p->line = l;
		p->cap = cap;
	}
	memcpy(p->line + p->len, s, n);
	p->len += n;
	return 0;
}

int pf_fgraph_feed(struct pf_fgraph *p, const char *buf, size_t len)
{
	const char *nl;
	int err;

	if (p->failed)
		return p->fn_err ? p->fn_err : -ENOMEM;
	while (len) {
		nl = memchr(buf, '\n', len);
		if (!nl) {
			err = partial_add(p, buf, len);
			goto out;
		}
		if (!p->len && !p->overlong) {
			size_t n = (size_t)(nl - buf);

			err = feed_line(p, buf, n < PF_FGRAPH_MAX_LINE ?
					n : PF_FGRAPH_MAX_LINE);
		} else {
			err = partial_add(p, buf, (size_t)(nl - buf));
			if (!err)
				err = feed_line(p, p->line, p->len);
			p->len = 0;
			p->overlong = false;
		}
		if (err)
			goto out;
		len -= (size_t)(nl - buf) + 1;
		buf = nl + 1;
	}
	return 0;
out:
	if (err)
		p->failed = true;
	return p->fn_err ? p->fn_err : err;
}

const struct pf_trace *pf_fgraph_trace(const struct pf_fgraph *p)
{
	return p->trace;
}

void pf_fgraph_free(struct pf_fgraph *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->ncpus; i++) {
		if (p->cpus[i])
			free(p->cpus[i]->stack);
		free(p->cpus[i]);
	}
	free(p->cpus);
	free(p->line);
	if (p->trace && p->head) {
		/* Given away already. */
		memmove(p->trace->packets, p->trace->packets + p->head,
			(p->trace->npackets - p->head) *
			sizeof(*p->trace->packets));
		p->trace->npackets -= p->head;
	}
	pf_trace_free(p->trace);
	free(p);
}

struct pf_trace *pf_fgraph_finish(struct pf_fgraph *p)
{
	struct pf_trace *t = NULL;
	struct pf_line l;
	size_t i;

	if (p->failed)
		goto out;
	if (p->len) {
		parse_line(p->line, p->len, &l);
		if (l.whole && !p->overlong) {
			p->trace->stats.lines++;
			if (process_line(p, p->line, p->len, &l))
				goto out;
		} else {
			p->trace->stats.lines++;
			p->trace->stats.truncated = true;
		}
	}
	for (i = 0; i < p->ncpus; i++)
		if (p->cpus[i] && p->cpus[i]->pkt)
			packet_close(p->cpus[i], PF_INC_EOF);
	/* No free will come any more. */
	while (p->nwait)
		wait_end(p, 0);
	if (p->fn) {
		/* All done now: the queue empties in order. */
		if (stream_flush(p))
			goto out;
		p->trace->npackets = 0;
		p->head = 0;
	}
	t = p->trace;
	p->trace = NULL;
out:
	if (!t)
		errno = p->fn_err ? -p->fn_err : ENOMEM;
	pf_fgraph_free(p);
	return t;
}

struct pf_trace *pf_fgraph_parse_buf(const char *buf, size_t len)
{
	struct pf_fgraph *p = pf_fgraph_new();

	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	pf_fgraph_feed(p, buf, len);
	return pf_fgraph_finish(p);
}

struct pf_trace *pf_fgraph_parse(FILE *in)
{
	struct pf_fgraph *p = pf_fgraph_new();
	char buf[65536];
	size_t n;

	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (pf_fgraph_feed(p, buf, n))
			break;
	if (ferror(in)) {
		int err = errno ? errno : EIO;

		pf_fgraph_free(p);
		errno = err;
		return NULL;
	}
	return pf_fgraph_finish(p);
}

void pf_trace_free(struct pf_trace *trace)
{
	size_t i;

	if (!trace)
		return;
	for (i = 0; i < trace->npackets; i++)
		packet_free(trace->packets[i]);
	free(trace->packets);
	free(trace);
}

size_t pf_trace_incomplete(const struct pf_trace *trace)
{
	size_t i, n = (size_t)trace->stats.streamed_incomplete;

	for (i = 0; i < trace->npackets; i++)
		n += !trace->packets[i]->complete;
	return n;
}

size_t pf_trace_packets(const struct pf_trace *trace)
{
	return trace->npackets + (size_t)trace->stats.streamed;
}

bool pf_trace_lost(const struct pf_trace *trace)
{
	return trace->stats.lost_reports > 0;
}

char *pf_incomplete_str(unsigned int incomplete, char *buf, size_t len)
{
	static const struct {
		unsigned int bit;
		const char *why;
	} whys[] = {
		{ PF_INC_LOST,	   "trace lost events" },
		{ PF_INC_EOF,	   "trace ends before the graph" },
		{ PF_INC_NO_GRAPH, "no graph after the event" },
		{ PF_INC_NESTING,  "calls or returns missing" },
		{ PF_INC_CUT,	   "next event before the graph ended" },
		{ PF_INC_DEPTH,	   "graph deeper than 512 calls" },
	};
	size_t i, off = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(whys); i++) {
		int w;

		if (!(incomplete & whys[i].bit))
			continue;
		w = snprintf(buf + off, len - off, "%s%s", off ? ", " : "",
			     whys[i].why);
		if (w < 0 || (size_t)w >= len - off)
			break;
		off += (size_t)w;
	}
	return buf;
}

void pf_trace_summary(FILE *out, const struct pf_trace *t)
{
	const struct pf_trace_stats *s = &t->stats;
	size_t bad = pf_trace_incomplete(t), n = pf_trace_packets(t);

	fprintf(out, "%zu packet%s: %zu complete, %zu incomplete", n,
		n == 1 ? "" : "s", n - bad, bad);
	if (s->lost_reports) {
		fprintf(out, "; the ring buffer lost %s%" PRIu64 " event%s",
			s->lost_saturated ? "at least " : "", s->lost_events,
			s->lost_events == 1 ? "" : "s");
		if (s->lost_unknown)
			fprintf(out, " and %" PRIu64 " more of unknown count",
				s->lost_unknown);
		fprintf(out, " (%" PRIu64 " overrun report%s)", s->lost_reports,
			s->lost_reports == 1 ? "" : "s");
	}
	if (s->noise || s->stray)
		fprintf(out, "; %" PRIu64 " line%s outside the packets' graphs",
			s->noise + s->stray,
			s->noise + s->stray == 1 ? "" : "s");
	if (s->orphans)
		fprintf(out, "; %" PRIu64 " return%s without a call",
			s->orphans, s->orphans == 1 ? "" : "s");
	if (s->garbage)
		fprintf(out, "; %" PRIu64 " line%s not understood", s->garbage,
			s->garbage == 1 ? "" : "s");
	if (s->truncated)
		fprintf(out, "; the last line is cut off");
	fprintf(out, "\n");
}

bool pf_args_next(const char *args, size_t *pos, struct pf_arg *a)
{
	size_t i = *pos, start, depth = 0, k;

	if (!args || !args[i])
		return false;
	start = i;
	for (; args[i]; i++) {
		if (args[i] == '(' || args[i] == '[')
			depth++;
		else if ((args[i] == ')' || args[i] == ']') && depth)
			depth--;
		else if (!depth && args[i] == ',' && args[i + 1] == ' ')
			break;
	}
	*pos = args[i] ? i + 2 : i;
	a->name = args + start;
	a->name_len = 0;
	a->value = args + start;
	a->value_len = i - start;
	/* "name=": BTF names a C identifier; else the value alone. */
	for (k = start; k < i; k++) {
		char ch = args[k];

		if (ch == '=' && k > start) {
			a->name_len = k - start;
			a->value = args + k + 1;
			a->value_len = i - k - 1;
			break;
		}
		if (!(ch == '_' || (ch >= 'a' && ch <= 'z') ||
		      (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')))
			break;
	}
	return true;
}
