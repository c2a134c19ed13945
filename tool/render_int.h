/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the renderers share: render.c (text, JSON, folded, the streaming
 * renderer), render_svg.c and render_chrome.c. The output buffer and JSON
 * strings, the pieces of a packet's header line, and what the streaming
 * renderer calls of the SVG, chrome and HTML ones. Not for the rest of the
 * tool: render.h is its interface.
 */
#ifndef PKTFILT_RENDER_INT_H
#define PKTFILT_RENDER_INT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "render.h"

static inline int out_status(FILE *out)
{
	if (fflush(out) || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

static inline uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* A packet's header line, in pieces (render.c). */
void print_tuple(FILE *out, const struct pf_packet *pkt);
void print_packet_name(FILE *out, const struct pf_packet *pkt);
/* Room for format_fate()'s longest text and its NUL. */
#define PF_FATE_LEN	(sizeof("dropped: ") + \
			 sizeof(((struct pf_packet *)0)->drop_reason) + \
			 sizeof(" in ") + sizeof(((struct pf_packet *)0)->drop_func) + \
			 sizeof(" by ") + 4 * PF_NFT_NAME + 1024)
int format_fate(const struct pf_packet *pkt, char *buf, size_t len);
int print_fate(FILE *out, const struct pf_packet *pkt);
void print_us(FILE *out, uint64_t ns);

/*
 * Output made in a buffer of our own and written in pieces of 64 KiB: a
 * JSON object is a few hundred small writes, too many for stdio's calls.
 */
struct pf_obuf {
	FILE *out;
	size_t len;
	char s[65536];
};

void ob_flush(struct pf_obuf *b);
void ob_put_slow(struct pf_obuf *b, const void *p, size_t n);

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
void ob_u64(struct pf_obuf *b, uint64_t v, bool neg);
/* As printf("%d") */
void ob_int(struct pf_obuf *b, int v);
/* As printf("%.1f") or ("%.2f") */
void ob_fixed(struct pf_obuf *b, double v, unsigned int prec);
/* As fprintf() */
void ob_printf(struct pf_obuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A JSON string; invalid UTF-8 becomes U+FFFD. */
void json_str(struct pf_obuf *b, const char *str);
void json_strn(struct pf_obuf *b, const char *str, size_t n);
/*
 * A call's "args" and "ret" members (those it has), after a comma if
 * @comma; true if members were written before or now.
 */
struct pf_node;
bool json_call_extras(struct pf_obuf *b, const struct pf_node *node,
		      bool comma);
/* A JSON string, or null for NULL. */
void json_str_or_null(struct pf_obuf *b, const char *str);

/* SVG (render_svg.c): the packets drawn one under the other. */
#define SVG_HEADER	22.0	/* a packet's header line */
#define SVG_GAP		24.0	/* between packets */
#define SVG_TOP		34.0	/* the title */

struct pf_svg {
	FILE *out;
	double scale;		/* pixels per ns */
	double top;		/* y of the root's row */
	uint64_t total;		/* the root's duration */
	struct pf_obuf ob;	/* to out, flushed after each packet */
};

/* Draw @pkt (complete) at g->top, and move g->top under it. */
void svg_packet(struct pf_svg *g, const struct pf_packet *pkt);
/* Everything before the packets: the height must be known. */
void svg_head(FILE *out, size_t drawn, double height);
/* After the packets: the script (zoom, search), then </svg>. */
void svg_tail(FILE *out);
/* Copy the SVG's packets from their temporary file. */
int svg_copy(FILE *from, FILE *to);

/* chrome (render_chrome.c): the Trace Event Format. */
struct pf_chrome;

struct pf_chrome *chrome_new(FILE *out, const char *filter);
void chrome_free(struct pf_chrome *c);
/* The packets of pf_render_new()'s output: all process 1's. */
void chrome_default_process(struct pf_chrome *c);
void chrome_packet(struct pf_chrome *c, const struct pf_packet *pkt);
void chrome_end(struct pf_chrome *c);

/* HTML (render_html.c): one page, its packets' data as they come. */
extern const char pf_html_css[];	/* html_page.c, from html/page.css */
extern const char pf_html_js[];		/* html_page.c, from html/page.js */
/* A JSON string safe in <script>: < > & as \u003c \u003e \u0026. */
void html_json_str(struct pf_obuf *b, const char *str);
/* The page up to its data; @kind "report" or "diff", @filter or NULL. */
void html_begin(struct pf_obuf *b, const char *kind, const char *filter);
/* A packet's header, as a JSON object (diff.c's page uses it too). */
void html_packet_head(struct pf_obuf *b, const struct pf_packet *pkt);
/* A packet: its header and its graph, each a JSON <script> element. */
void html_packet(struct pf_obuf *b, const struct pf_packet *pkt);
/* The rest of the page: its script. Flushes. */
void html_end(struct pf_obuf *b);

#endif /* PKTFILT_RENDER_INT_H */
