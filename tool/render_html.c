// SPDX-License-Identifier: GPL-2.0
/*
 * The HTML renderer: one self-contained page (render.h), its packets as
 * JSON in <script type="application/json"> elements, written one by one
 * as they come (like chrome's, nothing held but the packet being
 * written), its CSS at the top and its script (html_page.c, made from
 * html/page.js and html/page.css) at the end. pktfilt diff's page
 * (diff.c) is the same page with the aligned trees as its data.
 *
 * The trace is hostile input: its names go only into JSON strings, with
 * '<', '>' and '&' as \u003c, \u003e, \u0026 (so "</script>" cannot end
 * the element), and the script puts them into the page as text, never
 * as markup.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "render_int.h"

/* A JSON string safe inside <script>: invalid UTF-8 becomes U+FFFD. */
void html_json_str(struct pf_obuf *b, const char *str)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), len;

	ob_char(b, '"');
	while (n) {
		size_t run = 0;

		while (run < n && s[run] >= 0x20 && s[run] < 0x7f &&
		       s[run] != '"' && s[run] != '\\' && s[run] != '<' &&
		       s[run] != '>' && s[run] != '&')
			run++;
		if (run) {
			ob_put(b, s, run);
			s += run;
			n -= run;
			continue;
		}
		if (*s == '"' || *s == '\\') {
			char e[2] = { '\\', (char)*s };

			ob_put(b, e, 2);
		} else if (*s < 0x80) {
			/* controls, DEL, < > & */
			char u[6] = { '\\', 'u', '0', '0',
				      hex[*s >> 4], hex[*s & 15] };

			ob_put(b, u, sizeof(u));
		} else {
			len = pf_utf8_len(s, n);
			if (!len) {
				ob_lit(b, "\\ufffd");
			} else if (len == 3 && s[0] == 0xe2 && s[1] == 0x80 &&
				   (s[2] == 0xa8 || s[2] == 0xa9)) {
				/* U+2028, U+2029: line ends to old JS */
				if (s[2] == 0xa8)
					ob_lit(b, "\\u2028");
				else
					ob_lit(b, "\\u2029");
				s += len;
				n -= len;
				continue;
			} else {
				ob_put(b, s, len);
				s += len;
				n -= len;
				continue;
			}
		}
		s++;
		n--;
	}
	ob_char(b, '"');
}

static void html_dur(struct pf_obuf *b, const struct pf_node *node)
{
	if (node->complete)
		ob_u64(b, node->duration_ns, false);
	else
		ob_lit(b, "null");
}

static uint64_t html_calls(const struct pf_node *node)
{
	uint64_t n = 1;
	size_t i;

	for (i = 0; i < node->nchildren; i++)
		n += html_calls(node->children[i]);
	return n;
}

/*
 * The packet's header: the event's fields, its fate, whether complete,
 * its root, duration and number of calls (a JSON object).
 */
void html_packet_head(struct pf_obuf *b, const struct pf_packet *pkt)
{
	char why[160];

	ob_lit(b, "{\"seq\":");
	ob_u64(b, pkt->seq, false);
	ob_lit(b, ",\"stage\":");
	html_json_str(b, pkt->stage);
	ob_lit(b, ",\"id\":");
	ob_u64(b, pkt->id, false);
	ob_lit(b, ",\"cpu\":");
	ob_u64(b, pkt->cpu, false);
	ob_lit(b, ",\"proto\":");
	html_json_str(b, pkt->proto);
	ob_lit(b, ",\"saddr\":");
	html_json_str(b, pkt->saddr);
	ob_lit(b, ",\"daddr\":");
	html_json_str(b, pkt->daddr);
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
		ob_lit(b, ",\"fate\":\"consumed\",\"reason\":null,\"dfunc\":null");
		break;
	case PF_FATE_DROPPED:
		ob_lit(b, ",\"fate\":\"dropped\",\"reason\":");
		html_json_str(b, pkt->drop_reason);
		ob_lit(b, ",\"dfunc\":");
		if (pkt->drop_func[0])
			html_json_str(b, pkt->drop_func);
		else
			ob_lit(b, "null");
		break;
	default:
		ob_lit(b, ",\"fate\":null,\"reason\":null,\"dfunc\":null");
		break;
	}
	if (pkt->complete) {
		ob_lit(b, ",\"complete\":true,\"incomplete\":null");
	} else {
		ob_lit(b, ",\"complete\":false,\"incomplete\":");
		html_json_str(b, pf_incomplete_str(pkt->incomplete, why,
						   sizeof(why)));
	}
	if (pkt->incomplete & PF_INC_DEPTH)
		ob_lit(b, ",\"depthcut\":true");
	else
		ob_lit(b, ",\"depthcut\":false");
	if (pkt->graph) {
		ob_lit(b, ",\"root\":");
		html_json_str(b, pkt->graph->func);
		ob_lit(b, ",\"dur\":");
		html_dur(b, pkt->graph);
		ob_lit(b, ",\"calls\":");
		ob_u64(b, html_calls(pkt->graph), false);
	} else {
		ob_lit(b, ",\"root\":null,\"dur\":null,\"calls\":0");
	}
	ob_char(b, '}');
}

/*
 * The graph, flat, in call order (pre-order): for each call its name, its
 * duration in ns (null: its return is missing) and its number of callees.
 */
static void html_node(struct pf_obuf *b, const struct pf_node *node,
		      bool first)
{
	size_t i;

	if (!first)
		ob_char(b, ',');
	html_json_str(b, node->func);
	ob_char(b, ',');
	html_dur(b, node);
	ob_char(b, ',');
	ob_u64(b, node->nchildren, false);
	ob_char(b, '\n');
	for (i = 0; i < node->nchildren; i++)
		html_node(b, node->children[i], false);
}

/* Everything before the data: the page's head, its CSS, its skeleton. */
void html_begin(struct pf_obuf *b, const char *kind, const char *filter)
{
	ob_lit(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		  "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		  "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
		  "<meta name=\"viewport\" content=\"width=device-width\">\n"
		  "<meta name=\"generator\" content=\"pktfilt\">\n"
		  "<title>pktfilt</title>\n<style>\n");
	ob_put(b, pf_html_css, strlen(pf_html_css));
	ob_lit(b, "</style></head>\n<body>\n<noscript>This page needs JavaScript "
		  "(it uses no network).</noscript>\n");
	ob_lit(b, "<script type=\"application/json\" id=\"pf-meta\">{\"kind\":");
	html_json_str(b, kind);
	ob_lit(b, ",\"filter\":");
	if (filter)
		html_json_str(b, filter);
	else
		ob_lit(b, "null");
	ob_lit(b, "}</script>\n");
}

/* @pkt's header and graph: two elements, the graph parsed when opened. */
void html_packet(struct pf_obuf *b, const struct pf_packet *pkt)
{
	ob_lit(b, "<script type=\"application/json\" class=\"pf-h\">");
	html_packet_head(b, pkt);
	ob_lit(b, "</script>\n<script type=\"application/json\" class=\"pf-g\">[");
	if (pkt->graph)
		html_node(b, pkt->graph, true);
	ob_lit(b, "]</script>\n");
	ob_flush(b);
}

/* After the data: the script. */
void html_end(struct pf_obuf *b)
{
	ob_lit(b, "<script>\n");
	ob_put(b, pf_html_js, strlen(pf_html_js));
	ob_lit(b, "</script>\n</body></html>\n");
	ob_flush(b);
}
