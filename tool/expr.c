// SPDX-License-Identifier: GPL-2.0
/*
 * Filter expressions: libpcap's compiler and interpreter, for raw IP.
 *
 * The module sees every stage's packet from its IP header on and nothing
 * before it, so the expression is compiled for DLT_RAW: "ip", "ip6",
 * "tcp port 443", "net 10.0.0.0/8", "ip[8] < 5", "tcp[tcpflags]" all
 * work; the link layer ("ether host", "vlan", "arp") does not exist there
 * and libpcap refuses it.
 */
#include <pcap/pcap.h>
#include <stdio.h>
#include <string.h>

#include "expr.h"

/* Words of pcap-filter(7) that need a link-layer header. */
static const char *pf_link_word(const char *expr)
{
	static const char *const words[] = {
		"ether", "vlan", "mpls", "pppoed", "pppoes", "arp", "rarp",
		"llc", "wlan", "type", "subtype", "fddi", "tr", "atalk",
		"aarp", "decnet", "iso", "stp", "ipx", "netbeui", "geneve",
		"broadcast", "multicast", "inbound", "outbound", "ifname",
		"on", "rnr", "reason", "rset", "srnr", "action",
	};
	char word[32];
	const char *p = expr;
	size_t i, n;

	while (*p) {
		n = strspn(p, "abcdefghijklmnopqrstuvwxyz");
		if (!n) {
			p++;
			continue;
		}
		if (n < sizeof(word)) {
			memcpy(word, p, n);
			word[n] = '\0';
			for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
				if (!strcmp(word, words[i]))
					return words[i];
		}
		p += n;
	}
	return NULL;
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
	if (pcap_compile(p, &prog, expr, 1, PCAP_NETMASK_UNKNOWN)) {
		link = pf_link_word(expr);
		snprintf(err, len, "filter expression '%s': %s%s%s%s", expr,
			 pcap_geterr(p),
			 link ? " (pktfilt sees packets from their IP header on: '" : "",
			 link ? link : "",
			 link ? "' and other link-layer words do not apply)" : "");
		pcap_close(p);
		return 0;
	}
	if (pf_expr_loops(prog.bf_insns, prog.bf_len)) {
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
