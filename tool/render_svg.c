// SPDX-License-Identifier: GPL-2.0
/*
 * The SVG renderer: for each complete packet an icicle graph, the packets
 * one under the other (see render.h). The streaming renderer (render.c)
 * keeps the drawn packets in a temporary file until the height is known.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "render_int.h"

#define SVG_WIDTH	1200.0
#define SVG_MARGIN	10.0
#define SVG_ROW		16.0
#define SVG_FONT	12.0
#define SVG_CHAR	7.3	/* width of a monospace character at SVG_FONT */

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
void svg_packet(struct pf_svg *g, const struct pf_packet *pkt)
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
void svg_head(FILE *out, size_t drawn, double height)
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

/* Copy the SVG's packets from their temporary file. */
int svg_copy(FILE *from, FILE *to)
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
