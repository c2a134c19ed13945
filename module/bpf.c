// SPDX-License-Identifier: GPL-2.0
/*
 * A filter expression: the classic BPF program libpcap compiles for raw IP
 * packets (DLT_RAW), run by the kernel's own BPF engine, the one socket
 * filters use.
 *
 * bpf_prog_create() checks the program as it does a socket filter's
 * (bpf_check_classic(): every jump in range, every load and store of the
 * scratch memory valid, a return at the end) and converts it; a program it
 * refuses is never run. The program sees the packet from its IP header
 * on: at the rx and tx stages skb->data is there already; at the L4
 * handler the IP layer has pulled it, so it is pushed back for the run and
 * pulled again. Loads beyond the packet end the program with 0, as in
 * libpcap's own interpreter.
 *
 * The packet ends where its IP header says: at rx the skb still holds what
 * a NIC added to a short frame (Ethernet padding to 60 bytes) until
 * ip_rcv_core() trims it, and libpcap, the l4 and the tx stages see the
 * datagram without it. So for the run the skb's length is the IP length
 * (IPv4 total length, IPv6 payload length + 40), and put back after.
 *
 * Indirect calls (IBT): bpf_prog_run() calls the program's bpf_func, the
 * kernel's JIT image (which starts with ENDBR64 on IBT kernels) or one of
 * its interpreter functions (address-taken, with ENDBR64): the very call
 * socket filters make.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/filter.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/slab.h>

#include "internal.h"

int pf_bpf_parse(struct pf_filter *f, const struct nlattr *prog,
		 const struct nlattr *expr, struct netlink_ext_ack *extack)
{
	struct sock_fprog_kern fprog;
	int len, ret;

	if (!prog) {
		if (expr) {
			NL_SET_ERR_MSG_ATTR(extack, expr,
					    "a filter expression without its program");
			return -EINVAL;
		}
		return 0;
	}
	len = nla_len(prog);
	if (!len || len % sizeof(struct sock_filter) ||
	    len / sizeof(struct sock_filter) > BPF_MAXINSNS) {
		NL_SET_ERR_MSG_ATTR(extack, prog,
				    "a classic BPF program is 1 to 4096 instructions of 8 bytes");
		return -EINVAL;
	}
	if (expr) {
		/* The policy's limit, which does not count the NUL. */
		if (strnlen(nla_data(expr), nla_len(expr)) > PF_EXPR_MAX) {
			NL_SET_ERR_MSG_ATTR(extack, expr,
					    "filter expression longer than 1024 characters");
			return -EINVAL;
		}
		f->expr = nla_strdup(expr, GFP_KERNEL);
		if (!f->expr) {
			NL_SET_ERR_MSG(extack, "out of memory");
			return -ENOMEM;
		}
	}
	fprog.len = len / sizeof(struct sock_filter);
	fprog.filter = nla_data(prog);
	ret = bpf_prog_create(&f->prog, &fprog);
	if (ret) {
		f->prog = NULL;
		NL_SET_ERR_MSG_ATTR(extack, prog,
				    "the kernel refused the classic BPF program (bpf_check_classic())");
		return ret;
	}
	return 0;
}

/*
 * The IP datagram's length by its header, from skb->data on (the IP
 * header), if the skb holds more than that; else 0 (nothing to hide, or a
 * header that gives no length: a jumbogram, BIG TCP, a bad one).
 */
static unsigned int notrace pf_bpf_ip_len(const struct sk_buff *skb)
{
	union {
		struct iphdr v4;
		struct ipv6hdr v6;
	} buf;
	const void *h;
	unsigned int len;

	h = skb_header_pointer(skb, 0, sizeof(struct iphdr), &buf);
	if (!h)
		return 0;
	if (((const struct iphdr *)h)->version == 4) {
		len = ntohs(((const struct iphdr *)h)->tot_len);
		if (len < sizeof(struct iphdr))
			return 0;
	} else {
		h = skb_header_pointer(skb, 0, sizeof(struct ipv6hdr), &buf);
		if (!h || ((const struct ipv6hdr *)h)->version != 6)
			return 0;
		len = ntohs(((const struct ipv6hdr *)h)->payload_len);
		if (!len)
			return 0;
		len += sizeof(struct ipv6hdr);
	}
	return len < skb->len ? len : 0;
}

/*
 * Does the packet pass the program? Softirq, or BH disabled. The skb is
 * this CPU's for the while (a hook's, before or after the stack's own
 * work): its data pointer and lengths are moved for the run, and put back.
 */
bool notrace pf_bpf_match(const struct bpf_prog *prog, struct sk_buff *skb)
{
	int off = skb_network_offset(skb);
	unsigned int len, data_len, ip_len;
	u32 ret;

	/* The program reads from skb->data on: the IP header. */
	if (off > (int)skb_headlen(skb))
		return false;
	if (off < 0)
		__skb_push(skb, -off);
	else if (off > 0)
		__skb_pull(skb, off);
	len = skb->len;
	data_len = skb->data_len;
	ip_len = pf_bpf_ip_len(skb);
	if (ip_len) {
		/* Only the end moves: the bytes up to ip_len stay where they are. */
		if (ip_len >= skb_headlen(skb))
			skb->data_len -= len - ip_len;
		else
			skb->data_len = 0;
		skb->len = ip_len;
	}
#ifdef PF_BPF_PROG_RUN
	ret = bpf_prog_run(prog, skb);
#else
	ret = BPF_PROG_RUN(prog, skb);
#endif
	skb->len = len;
	skb->data_len = data_len;
	if (off < 0)
		__skb_pull(skb, -off);
	else if (off > 0)
		__skb_push(skb, off);
	return ret;
}

void pf_bpf_free(struct pf_filter *f)
{
	if (f->prog)
		bpf_prog_destroy(f->prog);
	kfree(f->expr);
}
