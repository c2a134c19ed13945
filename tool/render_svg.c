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

/*
 * The SVG's script, as flamegraph.pl's: click a call to zoom its packet's
 * graph to it (its callers above it full width, dimmed), "Reset zoom" to
 * come back; "Search" highlights the calls whose name matches a regular
 * expression and counts them. Names go into the page as text only.
 */
static const char svg_script[] =
"(function () {\n"
"'use strict';\n"
"var NS = 'http://www.w3.org/2000/svg', W = 1180, M = 10, CH = 7.3, frames = [];\n"
"function nameOf(g) {\n"
"	var t = g.querySelector('title').textContent, k = t.lastIndexOf(' (');\n"
"	return k > 0 ? t.slice(0, k) : t;\n"
"}\n"
"[].forEach.call(document.querySelectorAll('g.packet'), function (p) {\n"
"	[].forEach.call(p.children, function (g) {\n"
"		var r = g.querySelector('rect');\n"
"		if (!r)\n"
"			return;\n"
"		g.pf = { x: +r.getAttribute('x'), w: +r.getAttribute('width'), y: +r.getAttribute('y'),\n"
"			 fill: r.getAttribute('fill'), name: nameOf(g), p: p };\n"
"		g.style.cursor = 'pointer';\n"
"		frames.push(g);\n"
"	});\n"
"});\n"
"function place(g, x, w) {\n"
"	var r = g.querySelector('rect'), t = g.querySelector('text'), n = g.pf.name;\n"
"	var fit = w > 6 ? Math.floor((w - 6) / CH) : 0;\n"
"	r.setAttribute('x', x.toFixed(2));\n"
"	r.setAttribute('width', Math.max(w, 0).toFixed(2));\n"
"	g.style.display = '';\n"
"	if (fit < 3) {\n"
"		if (t)\n"
"			t.style.display = 'none';\n"
"		return;\n"
"	}\n"
"	if (!t) {\n"
"		t = document.createElementNS(NS, 'text');\n"
"		t.setAttribute('y', (g.pf.y + 12).toFixed(1));\n"
"		g.appendChild(t);\n"
"	}\n"
"	t.style.display = '';\n"
"	t.setAttribute('x', (x + 3).toFixed(2));\n"
"	t.textContent = n.length <= fit ? n : n.slice(0, fit - 2) + '..';\n"
"}\n"
"function zoom(z) {\n"
"	var x0 = z.pf.x, x1 = z.pf.x + z.pf.w, s = W / (z.pf.w || 1), e = 1e-6;\n"
"	frames.forEach(function (g) {\n"
"		var f = g.pf, nx, nw;\n"
"		if (f.p !== z.pf.p)\n"
"			return;\n"
"		g.style.opacity = '';\n"
"		if (f.y < z.pf.y) {\n"
"			if (f.x <= x0 + e && f.x + f.w >= x1 - e) {\n"
"				place(g, M, W);\n"
"				g.style.opacity = '0.6';\n"
"			} else {\n"
"				g.style.display = 'none';\n"
"			}\n"
"			return;\n"
"		}\n"
"		if (g !== z && (f.x + f.w <= x0 + e || f.x >= x1 - e)) {\n"
"			g.style.display = 'none';\n"
"			return;\n"
"		}\n"
"		nx = M + (f.x - x0) * s;\n"
"		nw = f.w * s;\n"
"		if (nx < M) {\n"
"			nw -= M - nx;\n"
"			nx = M;\n"
"		}\n"
"		if (nx + nw > M + W)\n"
"			nw = M + W - nx;\n"
"		place(g, nx, nw);\n"
"	});\n"
"}\n"
"function reset() {\n"
"	frames.forEach(function (g) {\n"
"		g.style.opacity = '';\n"
"		place(g, g.pf.x, g.pf.w);\n"
"	});\n"
"}\n"
"function search(q) {\n"
"	var re, n = 0, out = document.getElementById('matched');\n"
"	if (q === null)\n"
"		return;\n"
"	try {\n"
"		re = new RegExp(q);\n"
"	} catch (err) {\n"
"		out.textContent = 'not a regular expression';\n"
"		return;\n"
"	}\n"
"	frames.forEach(function (g) {\n"
"		var hit = q !== '' && re.test(g.pf.name);\n"
"		g.querySelector('rect').setAttribute('fill', hit ? 'rgb(230,0,230)' : g.pf.fill);\n"
"		n += hit ? 1 : 0;\n"
"	});\n"
"	out.textContent = q === '' ? '' : 'Matched: ' + n + ' of ' + frames.length + ' calls';\n"
"	out.setAttribute('data-n', q === '' ? '' : n);\n"
"}\n"
"document.addEventListener('click', function (ev) {\n"
"	var g = ev.target.closest('g');\n"
"	if (g && g.pf)\n"
"		zoom(g);\n"
"});\n"
"document.getElementById('unzoom').addEventListener('click', reset);\n"
"document.getElementById('search').addEventListener('click', function () {\n"
"	search(prompt('Search the function names (a regular expression):', ''));\n"
"});\n"
"})();\n";

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
	fprintf(out, "text.button { fill: #00c; cursor: pointer; }\n");
	fprintf(out, "</style>\n");
	fprintf(out,
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#f8f8f4\"/>\n");
	fprintf(out,
		"<text class=\"title\" x=\"%.0f\" y=\"22\">pktfilt: %zu packet%s, root on top, width = time in the packet's handler</text>\n",
		SVG_MARGIN, drawn, drawn == 1 ? "" : "s");
	fprintf(out,
		"<text id=\"search\" class=\"button\" x=\"%.0f\" y=\"22\">Search</text>\n"
		"<text id=\"unzoom\" class=\"button\" x=\"%.0f\" y=\"22\">Reset zoom</text>\n"
		"<text id=\"matched\" x=\"%.0f\" y=\"22\" text-anchor=\"end\"></text>\n",
		SVG_WIDTH - 380, SVG_WIDTH - 320, SVG_WIDTH - SVG_MARGIN);
	if (!drawn)
		fprintf(out,
			"<text x=\"%.0f\" y=\"%.0f\">no complete packet to draw</text>\n",
			SVG_MARGIN, SVG_TOP + 16);
}

/* After the packets: the script, the end. */
void svg_tail(FILE *out)
{
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n",
		svg_script);
	fputs("</svg>\n", out);
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
