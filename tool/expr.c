// SPDX-License-Identifier: GPL-2.0
/*
 * Filter expressions: libpcap's compiler and interpreter, for raw IP.
 *
 * The module sees every stage's packet from its IP header on and nothing
 * before it, so the expression is compiled for DLT_RAW: "ip", "ip6",
 * "tcp port 443", "net 10.0.0.0/8", "ip[8] < 5", "tcp[tcpflags]" all
 * work; the link layer ("ether host", "vlan", "arp") does not exist there
 * and libpcap refuses it. The netmask is 0, as tcpdump passes when it
 * reads a file: "ip broadcast" then means 255.255.255.255 (and 0.0.0.0).
 *
 * Refused here although libpcap compiles them, because the module would
 * not decide as libpcap does on the same bytes:
 *  - "inbound", "outbound", "ifindex N": libpcap compiles them to loads of
 *    the kernel's packet metadata (SKF_AD_*), which it gives no meaning in
 *    user space; at pktfilt's stages the kernel's values are not a
 *    capture's (at rx "inbound" matched every packet).
 *  - "ether[...]" and the other link-layer byte loads: on raw IP the link
 *    layer is empty, so they read the IP header.
 */
#include <ctype.h>
#include <pcap/pcap.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "expr.h"

/* A word of an expression: letters, digits and what names may hold. */
static int pf_word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.';
}

/*
 * The next word of @expr at or after *@pos, copied to @word (of @size);
 * *@pos goes past it. 0 at the end.
 */
static int pf_next_word(const char *expr, size_t *pos, char *word, size_t size)
{
	const char *p = expr + *pos;
	size_t n;

	while (*p && !pf_word_char(*p))
		p++;
	if (!*p)
		return 0;
	for (n = 0; pf_word_char(p[n]); n++)
		;
	if (n < size) {
		memcpy(word, p, n);
		word[n] = '\0';
	} else {
		word[0] = '\0';	/* too long to be one of ours */
	}
	*pos = (size_t)(p + n - expr);
	return 1;
}

/* @word if it is one of @list (the list's copy), else NULL. */
static const char *pf_find_word(const char *word, const char *const *list,
				size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(word, list[i]))
			return list[i];
	return NULL;
}

#define PF_FIND(word, list) pf_find_word(word, list, sizeof(list) / sizeof(list[0]))

/* Words of pcap-filter(7) that need a link-layer header. */
static const char *pf_link_word(const char *expr)
{
	static const char *const words[] = {
		"ether", "vlan", "mpls", "pppoed", "pppoes", "arp", "rarp",
		"llc", "wlan", "type", "subtype", "fddi", "tr", "atalk",
		"aarp", "decnet", "iso", "stp", "ipx", "netbeui", "geneve",
		"broadcast", "multicast", "ifname", "on", "rnr", "reason",
		"rset", "srnr", "action",
	};
	static const char *const ip[] = { "ip", "ip6" };
	static const char *const cast[] = { "broadcast", "multicast" };
	char word[32], prev[32] = "";
	const char *found;
	size_t pos = 0;

	while (pf_next_word(expr, &pos, word, sizeof(word))) {
		found = PF_FIND(word, words);
		/* "ip6 broadcast", "ip multicast": IP's, not the link's. */
		if (found && !(PF_FIND(prev, ip) && PF_FIND(word, cast)))
			return found;
		memcpy(prev, word, sizeof(prev));
	}
	return NULL;
}

/*
 * A load of the link-layer header (pcap-filter(7)'s "ether[", "link[",
 * ...; the grammar's LINK keyword), or NULL.
 */
static const char *pf_link_load(const char *expr)
{
	static const char *const words[] = {
		"ether", "link", "ppp", "slip", "fddi", "tr", "wlan",
	};
	char word[32];
	size_t pos = 0;
	const char *p;

	while (pf_next_word(expr, &pos, word, sizeof(word))) {
		for (p = expr + pos; *p == ' ' || *p == '\t' || *p == '\n'; p++)
			;
		if (*p == '[' && PF_FIND(word, words))
			return PF_FIND(word, words);
	}
	return NULL;
}

/*
 * Does the program load the kernel's packet metadata (a negative absolute
 * offset: SKF_AD_OFF and the like, which libpcap uses only on Linux)?
 */
static int pf_expr_metadata(const struct bpf_insn *insns, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (BPF_CLASS(insns[i].code) == BPF_LD &&
		    BPF_MODE(insns[i].code) == BPF_ABS &&
		    (int32_t)insns[i].k < 0)
			return 1;
	return 0;
}

/*
 * A jump that does not go forward within the program: classic BPF as the
 * kernel takes it (bpf_check_classic()) has none; libpcap's interpreter
 * runs them.
 */
static int pf_expr_loops(const struct bpf_insn *insns, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		const struct bpf_insn *in = &insns[i];

		if (BPF_CLASS(in->code) != BPF_JMP)
			continue;
		if (BPF_OP(in->code) == BPF_JA) {
			if (in->k >= n - i - 1)
				return 1;
		} else if (in->jt >= n - i - 1 || in->jf >= n - i - 1) {
			return 1;
		}
	}
	return 0;
}

unsigned int pf_expr_compile(const char *expr, struct sock_filter *insns,
			     char *err, size_t len)
{
	struct bpf_program prog;
	const char *link;
	pcap_t *p;
	unsigned int i, n = 0;

	p = pcap_open_dead(DLT_RAW, 65535);
	if (!p) {
		snprintf(err, len, "libpcap: cannot open a raw IP handle");
		return 0;
	}
	link = pf_link_load(expr);
	if (link) {
		snprintf(err, len,
			 "filter expression '%s': '%s[...]' reads the link-layer header, which pktfilt's packets do not have (they start at the IP header, where it would read): use ip[...] or ip6[...]",
			 expr, link);
		pcap_close(p);
		return 0;
	}
	/* tcpdump's netmask when it reads a file (it knows no subnet). */
	if (pcap_compile(p, &prog, expr, 1, 0)) {
		link = pf_link_word(expr);
		snprintf(err, len, "filter expression '%s': %s%s%s%s", expr,
			 pcap_geterr(p),
			 link ? " (pktfilt sees packets from their IP header on: '" : "",
			 link ? link : "",
			 link ? "' and other link-layer words do not apply)" : "");
		pcap_close(p);
		return 0;
	}
	if (pf_expr_metadata(prog.bf_insns, prog.bf_len)) {
		snprintf(err, len,
			 "filter expression '%s': 'inbound', 'outbound' and 'ifindex' read the kernel's packet metadata, which libpcap gives no meaning outside a live capture and pktfilt's stages do not set as one would: use --at (rx: received, tx: sent) and --dev or --ifindex",
			 expr);
	} else if (pf_expr_loops(prog.bf_insns, prog.bf_len)) {
		snprintf(err, len,
			 "filter expression '%s': compiles to a loop (libpcap does so for protochain), which the kernel's BPF checker refuses: name the protocol after the extension headers another way, e.g. 'ip6 and udp' or 'ip6[6] = 17'",
			 expr);
	} else if (!prog.bf_len || prog.bf_len > PF_BPF_MAX) {
		snprintf(err, len,
			 "filter expression '%s': compiles to %u instructions, more than the kernel's %d",
			 expr, prog.bf_len, PF_BPF_MAX);
	} else {
		for (i = 0; i < prog.bf_len; i++) {
			insns[i].code = prog.bf_insns[i].code;
			insns[i].jt = prog.bf_insns[i].jt;
			insns[i].jf = prog.bf_insns[i].jf;
			insns[i].k = prog.bf_insns[i].k;
		}
		n = prog.bf_len;
	}
	pcap_freecode(&prog);
	pcap_close(p);
	return n;
}

unsigned int pf_expr_run(const struct sock_filter *insns, unsigned int n,
			 const unsigned char *pkt, unsigned int len)
{
	struct bpf_insn prog[PF_BPF_MAX];
	unsigned int i;

	if (!n || n > PF_BPF_MAX)
		return 0;
	for (i = 0; i < n; i++) {
		prog[i].code = insns[i].code;
		prog[i].jt = insns[i].jt;
		prog[i].jf = insns[i].jf;
		prog[i].k = insns[i].k;
	}
	return bpf_filter(prog, pkt, len, len);
}
