/* SPDX-License-Identifier: GPL-2.0 */
/*
 * "pktfilt trace": set tracefs up, arm an owned filter, wait for the
 * packets, print their graphs, put tracefs back as it was.
 */
#ifndef PKTFILT_TRACECMD_H
#define PKTFILT_TRACECMD_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "match.h"

struct pf_cmd;

/* For main.c's command table and help. */
extern const char pf_trace_synopsis[];
extern const char pf_trace_help[];
extern const char pf_trace_examples[];

/*
 * What pktfilt trace records below the handlers unless --functions or
 * --all-functions says otherwise: set_ftrace_filter globs, NULL-ended.
 */
extern const char *const pf_trace_default_scope[];

/*
 * Run "pktfilt trace" with its arguments (after "trace"). Returns the exit
 * status: 0 all packets traced and complete, 1 otherwise or on a runtime
 * error, 2 usage error. @cmd is not used.
 */
int pf_trace_run(const struct pf_cmd *cmd, int argc, char **argv);

/*
 * The graph roots a filter can reach at @stages (bits 1 << PKTFILT_STAGE_*,
 * 0: l4, a version 1 module), for set_graph_function, in the order
 * tcp_v4_rcv udp_rcv icmp_rcv tcp_v6_rcv udpv6_rcv icmpv6_rcv (l4),
 * netif_receive_skb_core ip_rcv ipv6_rcv (rx), nf_hook_slow (tx; with a
 * module of @version 4 or older ip_local_out ip6_local_out), as the
 * predicates' protocol and address family allow. Returns how many there
 * are; the first @max of them are put into @roots.
 */
size_t pf_trace_roots(const struct pf_spec *spec, __u32 stages,
		      unsigned int version, const char **roots, size_t max);

/*
 * Ring buffer size per CPU, in KiB, for @count packets (0: no limit) on
 * @ncpus CPUs with @mem_kb of memory available (0: unknown); @args:
 * funcgraph-args on, each call's entry six words longer (half as much
 * again per packet).
 */
unsigned long pf_trace_buffer_kb(__u32 count, unsigned long ncpus,
				 unsigned long mem_kb, bool args);

#endif /* PKTFILT_TRACECMD_H */
