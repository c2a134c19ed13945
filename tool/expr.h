/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Filter expressions in tcpdump's language (pcap-filter(7)), compiled by
 * libpcap for raw IP packets (DLT_RAW): the program the module runs on
 * each packet from its IP header on.
 */
#ifndef PKTFILT_EXPR_H
#define PKTFILT_EXPR_H

#include <stddef.h>
#include <linux/filter.h>

#define PF_EXPR_MAX	1024	/* bytes, as the module takes it */
#define PF_BPF_MAX	4096	/* instructions: BPF_MAXINSNS */

/*
 * Compiles @expr into @insns (room for PF_BPF_MAX). Returns the number of
 * instructions, or 0 with libpcap's message (and a hint for link-layer
 * words) in @err.
 */
unsigned int pf_expr_compile(const char *expr, struct sock_filter *insns,
			     char *err, size_t len);

/* Runs @insns on @pkt (its IP header on), as the module does: != 0 matches. */
unsigned int pf_expr_run(const struct sock_filter *insns, unsigned int n,
			 const unsigned char *pkt, unsigned int len);

#endif /* PKTFILT_EXPR_H */
