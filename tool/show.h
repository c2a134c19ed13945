/* SPDX-License-Identifier: GPL-2.0 */
/*
 * "pktfilt show": a GET reply, decoded and printed.
 */
#ifndef PKTFILT_SHOW_H
#define PKTFILT_SHOW_H

#include <stdio.h>
#include <linux/types.h>

#include "pktfilt.h"
#include "parse.h"

struct nlattr;

struct pf_status {
	int has_filter;		/* any predicate or count attribute */
	struct pf_filter filter;
	int has_state;
	__u8 state;		/* enum pktfilt_state */
	int has_remaining;
	__u32 remaining;
	int has_id;
	__u32 id;
	int has_lazy;		/* a lazy filter's (version 3) */
	__u8 lazy;		/* enum pktfilt_lazy */
	__u32 hold_ms;		/* its hold's bound */
	__u32 held;		/* packets held now */
	char reason[128];	/* empty: none given */
	char problem[512];	/* empty: none given */
	int rx_from_ip;		/* rx starts at ip_rcv(), not the device */
	int filter_hidden;	/* a STATS reply: the caller may not read it */
	__u32 has_stat;		/* bit per enum pktfilt_stat */
	__u64 stat[PKTFILT_STAT_MAX + 1];
};

/* A pf_nl_reply_fn: decode a GET reply into the struct pf_status @arg. */
int pf_show_decode(struct nlattr **tb, void *arg);
void pf_show_print(FILE *out, const struct pf_status *st,
		   const struct pf_resolver *res);

#endif /* PKTFILT_SHOW_H */
