// SPDX-License-Identifier: GPL-2.0
/*
 * "pktfilt trace": the whole recipe in one command.
 *
 *  1. parse everything; refuse early: a second trace (flock on
 *     /run/pktfilt.lock, then the module's filter owned by another trace),
 *     the module not loaded, not in the initial network namespace;
 *  2. join the "events" multicast group, save the tracefs settings, set
 *     function_graph up, start it;
 *  3. arm the filter with PKTFILT_F_OWNED | PKTFILT_F_EXCLUSIVE: the module
 *     disarms it when our socket closes, however we exit;
 *  4. run COMMAND, if any; count the PACKET notifications until --count
 *     (or --timeout, a signal, COMMAND's end with --count 0);
 *  5. close the arming socket: the module disarms, and its
 *     synchronize_net() waits for the handlers being traced, so their
 *     graphs are closed (checked anyway, for a bounded while);
 *  6. tracing off, read the trace, restore tracefs and check it;
 *  7. wait for COMMAND, then print the packets (render.h).
 *
 * SIGINT, SIGTERM, SIGHUP and SIGCHLD are blocked from the start and read
 * from a signalfd, so no signal can cut a path that must restore tracefs.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* pipe2, sigabbrev_np, signalfd */
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "pktfilt.h"
#include "fgraph.h"
#include "nl.h"
#include "parse.h"
#include "render.h"
#include "show.h"
#include "tracecmd.h"
#include "tracefs.h"

#define EXIT_OK		0
#define EXIT_RUNTIME	1
#define EXIT_USAGE	2

#define PF_LOCK_PATH		"/run/pktfilt.lock"
#define PF_LINGER_MS		1000	/* after COMMAND exits */
#define PF_CLOSE_WAIT_MS	2000	/* for graphs to close */
#define PF_CHECK_MS		1000	/* ask the module how it goes */
/*
 * After the Nth packet, with stages after it: the module keeps the filter
 * armed for the later stages of the packets it traced until they are
 * freed, or 2 s (module/filter.c PF_EXHAUSTED_WAIT); wait for its disarm,
 * asking every PF_FOLLOW_CHECK_MS, PF_FOLLOW_MS at most.
 */
#define PF_FOLLOW_MS		3000
#define PF_FOLLOW_CHECK_MS	50
#define PF_KILL_WAIT_MS		3000	/* SIGTERM, then SIGKILL */
#define PF_BUF_KB_PACKET	1024
#define PF_BUF_KB_UNLIMITED	16384
#define PF_BUF_KB_MAX		65536
#define PF_MAX_TIMEOUT		(365UL * 24 * 3600)

const char pf_trace_synopsis[] =
"pktfilt trace [PREDICATE]... [--count N] [--at STAGE[,STAGE]...]\n"
"                  [--timeout SEC] [--format text|json|folded|chrome] [-o FILE]\n"
"                  [--raw FILE] [--svg FILE]\n"
"                  [--functions GLOB[,GLOB]... | --all-functions] [-q]\n"
"                  [-- COMMAND [ARG]...]";

const char pf_trace_help[] =
"    pktfilt trace [PREDICATE]... [--count N] [--at STAGE[,STAGE]...]\n"
"                  [--timeout SEC] [--format text|json|folded|chrome] [-o FILE]\n"
"                  [--raw FILE] [--svg FILE]\n"
"                  [--functions GLOB[,GLOB]... | --all-functions] [-q]\n"
"                  [-- COMMAND [ARG]...]\n"
"        Everything in one command: set tracefs up for function_graph\n"
"        (see TRACEFS below), arm a filter made of the PREDICATEs, run\n"
"        COMMAND if given, wait until N matching packets were traced,\n"
"        read their graphs, put every tracefs setting back as it was,\n"
"        and print the packets as 'pktfilt report' does. Needs root\n"
"        (tracefs, and CAP_NET_ADMIN to arm).\n"
"        Run it in the initial network namespace: the module announces\n"
"        each traced packet there only. --netns and --dev choose packets\n"
"        of other namespaces.\n"
"\n"
"        --count N\n"
"            Trace N matching packets, 1-4294967295 (default 1). 0: every\n"
"            matching packet until --timeout, a signal, or COMMAND's end.\n"
"            N counts packets (packet ids), not graphs: a packet followed\n"
"            through several stages has a graph at each. After the Nth\n"
"            packet, with --at rx or tx, the module stays armed for the\n"
"            later stages of the packets it traced, until they are freed\n"
"            (the pktfilt_free event) or for 2 s, and pktfilt waits for it.\n"
"\n"
"        --at STAGE[,STAGE]...\n"
"            Where the packets are traced: l4, rx (the default) or tx;\n"
"            see STAGES. The graph roots written to set_graph_function\n"
"            follow from it.\n"
"\n"
"        --timeout SEC\n"
"            Stop after SEC seconds (default 0: no limit). Fewer than N\n"
"            packets by then is a failure (\"saw K of N packets\", exit\n"
"            status 1); the packets traced are printed all the same.\n"
"            With --count 0 it is how tracing ends, and no failure.\n"
"\n"
"        --format text|json|folded|chrome\n"
"            How to print the packets (default text), as for 'pktfilt\n"
"            report', which describes each (chrome: a timeline for\n"
"            ui.perfetto.dev; trace leaves funcgraph-abstime off, so its\n"
"            times within a graph are reconstructed from the durations).\n"
"\n"
"        -o FILE, --output FILE\n"
"            Print them to FILE, not standard output.\n"
"\n"
"        --svg FILE\n"
"            Also draw them into FILE, a flame graph (see report).\n"
"\n"
"        --raw FILE\n"
"            Also save the trace as tracefs printed it, for 'pktfilt\n"
"            report' or a bug report.\n"
"\n"
"        --functions GLOB[,GLOB]...\n"
"            Record only the functions matching a GLOB in the handlers'\n"
"            graphs (ftrace's set_ftrace_filter syntax: *, ?, [...],\n"
"            !GLOB to leave out, GLOB:mod:MODULE); the handler itself is\n"
"            always recorded. A GLOB the kernel refuses (no function it\n"
"            can trace matches it) is an error, named in the message.\n"
"            Default: the network scope below.\n"
"\n"
"        -q, --quiet\n"
"            Without COMMAND, do not say when ready (see READY).\n"
"\n"
"        --all-functions\n"
"            Record every function the handlers call: the whole graph.\n"
"            While armed, every function of the kernel is patched, and\n"
"            every call on every CPU pays for ftrace's PID check, not only\n"
"            the traced packet's: in the benchmark VM, non-matching\n"
"            traffic ran at 0.41-0.47 of its rate, against 0.58-0.65 with\n"
"            the default scope (BENCHMARKS.md).\n"
"\n"
"        SCOPE. By default the graphs hold the functions a network\n"
"        engineer looks for on the receive and transmit paths, by\n"
"        subsystem:\n"
"            devices     __netif_* netif_* __dev_queue_xmit dev_queue_xmit*\n"
"                        dev_hard_start_xmit validate_xmit_* eth_*\n"
"                        dev_forward_skb* __dev_forward_skb*\n"
"                        enqueue_to_backlog\n"
"            qdiscs      sch_* __qdisc_* qdisc_* pfifo_* fq_codel_*\n"
"            drivers     veth_* virtnet_* start_xmit loopback_xmit\n"
"            bridge      br_*\n"
"            protocols   tcp_* __tcp_* udp* __udp* icmp* ping_*\n"
"            IP, routes  ip_* __ip_* ipv4_* ip6_* __ip6_* ipv6_* fib_*\n"
"                        fib6_* rt6_* dst_* neigh_*\n"
"            sockets     inet_* __inet_* inet6_* __inet6_* sock_* __sock_*\n"
"                        sk_* __sk_* lock_sock* release_sock\n"
"                        __release_sock __wake_up*\n"
"            netfilter   nf_* __nf_* nft_* xfrm* __xfrm*\n"
"            LSM         security_* selinux_* apparmor_*\n"
"            memory      skb_* __skb_* kfree_skb* consume_skb __alloc_skb\n"
"                        kmem_cache_alloc* kmem_cache_free kmalloc*\n"
"                        __kmalloc* kfree\n"
"            locking     _raw_spin_lock* _raw_spin_unlock*\n"
"        (a glob no function matches on this kernel, such as nft_* without\n"
"        nf_tables loaded or br_* without the bridge, is left out). What it hides: RCU read-side calls,\n"
"        timekeeping, scheduler and wakeup internals below __wake_up*,\n"
"        per-CPU and preemption helpers, BPF programs and cgroup hooks,\n"
"        and any driver or subsystem not named; a hidden function's\n"
"        recorded callees appear at its depth. --all-functions shows all.\n"
"\n"
"        -- COMMAND [ARG]...\n"
"            Run COMMAND once the filter is armed, so that no packet it\n"
"            causes can be missed (a client sending the packet, say).\n"
"            With --count 0, tracing ends when COMMAND exits; with N, when\n"
"            N packets were traced, or 1 s after COMMAND exited (time for\n"
"            the packets it sent to arrive) if fewer. pktfilt then waits\n"
"            for COMMAND to end; on --timeout or a signal it sends it\n"
"            SIGTERM first (SIGKILL 3 s later). COMMAND's exit status\n"
"            does not change pktfilt's, which tells it when it is not 0.\n"
"\n"
"        READY. Without COMMAND, once the filter is armed and the tracer\n"
"        set up, one line on standard error says so, as tcpdump says\n"
"        \"listening on\": what is traced, the scope and its number of\n"
"        functions, how many packets it waits for, how to stop, e.g.\n"
"            pktfilt: tracing --proto udp --dport 9000 (default scope,\n"
"            3,079 functions); waiting for 1 packet, Ctrl-C to stop\n"
"        A matching packet sent after that line is traced. -q: no line.\n"
"\n"
"        TRACEFS. trace uses /sys/kernel/tracing, else\n"
"        /sys/kernel/debug/tracing, else mounts tracefs on\n"
"        /sys/kernel/tracing (and unmounts it when done). Before it\n"
"        changes anything it saves every setting it may change: tracing_on,\n"
"        current_tracer, set_ftrace_pid, set_ftrace_notrace_pid,\n"
"        set_event_pid, set_event_notrace_pid, set_graph_function,\n"
"        set_graph_notrace, set_ftrace_filter, set_ftrace_notrace,\n"
"        max_graph_depth, tracing_thresh, the options that shape the\n"
"        graph (funcgraph-*, context-info, latency-format, sym-offset,\n"
"        sym-addr, hex, bin, raw), buffer_size_kb and each CPU's, and the\n"
"        pktfilt events' enable and filter. With tracing off and the\n"
"        nop tracer, it sets: set_ftrace_pid to the value of\n"
"        /proc/sys/kernel/pid_max, a PID no task can have (nothing is\n"
"        traced but what the module lets through; before Linux 5.17,\n"
"        whose set_ftrace_pid takes PIDs below pid_max only, pid_max - 1,\n"
"        which a task gets only once the PIDs wrap); the notrace and event\n"
"        PID lists, set_graph_notrace and set_ftrace_notrace empty;\n"
"        set_graph_function to the roots the --at stages and predicates\n"
"        can reach (l4: tcp_v4_rcv udp_rcv icmp_rcv tcp_v6_rcv udpv6_rcv\n"
"        icmpv6_rcv; rx: ip_rcv ipv6_rcv; tx: ip_local_out ip6_local_out;\n"
"        as --proto and the address family allow: graphs start there and\n"
"        nowhere else); set_ftrace_filter to the roots and the\n"
"        --functions globs or the SCOPE, or empty (--all-functions);\n"
"        max_graph_depth and tracing_thresh 0; funcgraph-irqs off (no\n"
"        interrupt shows in a packet's graph) and the other options to\n"
"        their defaults; the buffer (see BUFFER); the pktfilt events on,\n"
"        without filter. A setting already as needed is not written. It\n"
"        empties the trace, starts function_graph, and turns tracing on.\n"
"        At the end - done, --timeout, an error, SIGINT, SIGTERM or\n"
"        SIGHUP - tracing goes off, the tracer to nop, each setting it\n"
"        changed back to what it was, then the tracer, then tracing_on.\n"
"        Then every saved setting is read again and compared, byte for\n"
"        byte, with what it read before: a difference is told, and makes\n"
"        the exit status 1.\n"
"        What cannot be undone: a ring buffer that was never used\n"
"        (buffer_size_kb reads \"7 (expanded: 1408)\") stays allocated at\n"
"        its full size (1408), as after any use of tracing; the trace\n"
"        itself, emptied; and, in a set_ftrace_filter restored by name\n"
"        (fewer than 8 functions, see SPEED), functions named alike in\n"
"        several places: restoring by name enables all of them (then\n"
"        the check says so). Killed by SIGKILL, pktfilt cannot restore\n"
"        anything (the module still disarms).\n"
"\n"
"        SPEED. The globs (the SCOPE's, --functions') are matched by\n"
"        pktfilt against available_filter_functions, read while the\n"
"        other settings are saved and set, as ftrace matches them, and\n"
"        the functions written to set_ftrace_filter as their line\n"
"        numbers there, which ftrace takes without the symbol lookup of\n"
"        every function that a name or glob costs; what ftrace then\n"
"        lists is read back and must be what was meant (a module loaded\n"
"        or removed meanwhile renumbers them: then once more), else the\n"
"        globs are written as they are. A restored set_ftrace_filter or\n"
"        set_ftrace_notrace of 8 functions or more is written as\n"
"        numbers too. The environment variable PKTFILT_TRACE_TIMES=1\n"
"        tells on standard error how long each step of arming and\n"
"        restoring took; =2 also each tracefs file written.\n"
"\n"
"        BUFFER. Each CPU's ring buffer is made at least 1 MiB per packet\n"
"        to trace (16 MiB for --count 0), 64 MiB at most, and at most a\n"
"        quarter of the available memory for all CPUs together; it is\n"
"        never made smaller. A graph takes some 50 bytes per call.\n"
"\n"
"        ONE AT A TIME. A second 'pktfilt trace' is refused before it\n"
"        changes anything (\"another pktfilt trace is running\", exit\n"
"        status 1): it finds /run/pktfilt.lock locked (flock(2); the\n"
"        environment variable PKTFILT_LOCK names another file), or the\n"
"        module's filter owned by a trace; and the module refuses to\n"
"        replace an owned filter with another trace's. The owned filter\n"
"        is disarmed by the module when pktfilt exits, however it exits.\n"
"        'pktfilt set' and 'pktfilt clear' can still replace or remove\n"
"        it: the trace then ends (\"the filter was removed\").\n"
"\n"
"        RESULT. The packets are printed after tracefs is restored and\n"
"        COMMAND has ended. A packet whose graph is incomplete is marked\n"
"        so, never printed as complete (folded and --svg leave it out):\n"
"        its CPU's ring buffer lost events (\"LOST\" in the trace, or the\n"
"        overrun, commit overrun or dropped events counters of\n"
"        per_cpu/cpuN/stats grew), or its graph was cut. A packet the\n"
"        module announced but the trace lacks is told. Exit status 0\n"
"        when N packets were traced (with --count 0: any number) and all\n"
"        are complete, tracefs restored and the output written; else 1.\n";

const char pf_trace_examples[] =
"    Trace the next UDP packet to port 9000 of namespace b, sent by a\n"
"    client in namespace a:\n"
"        pktfilt trace --proto udp --dport 9000 --netns /run/netns/b -- \\\n"
"            ip netns exec a pfsend udp --dst 10.9.0.2 --dport 9000\n"
"\n"
"    The next 3 TCP packets to port 22 within 30 s, as JSON, keeping the\n"
"    raw trace:\n"
"        pktfilt trace --proto tcp --dport 22 --count 3 --timeout 30 \\\n"
"            --format json -o ssh.json --raw ssh.trace\n"
"\n"
"    Only netfilter and routing in the graph of an echo reply:\n"
"        pktfilt trace --proto icmp --saddr 192.0.2.1 \\\n"
"            --functions 'nf_*,ip_route_*,fib_*' -- ping -c 1 192.0.2.1\n"
"\n"
"    A flame graph of all UDP packets to 10.9.0.2 during 10 s:\n"
"        pktfilt trace --proto udp --daddr 10.9.0.2 --count 0 \\\n"
"            --timeout 10 --svg udp.svg -o /dev/null\n";

struct trace_opts {
	struct pf_filter filter;
	unsigned long timeout;		/* s, 0: none */
	const char *format;
	const char *output;
	const char *raw;
	const char *svg;
	const char *functions;
	bool all_functions;
	bool quiet;			/* -q: no ready line */
	char **globs;
	size_t nglobs;
	char **cmd;			/* NULL-terminated, or NULL */
};

enum trace_end {
	END_NONE,
	END_COUNT,		/* N packets traced */
	END_TIMEOUT,
	END_SIGNAL,
	END_COMMAND,		/* COMMAND exited (and the linger passed) */
	END_GONE,		/* the filter was replaced or cleared */
	END_ERROR,
};

struct trace_run {
	struct trace_opts o;
	struct pf_nl *nl;		/* arming socket: closing it disarms */
	struct pf_nl_events *ev;
	struct pf_tracefs tfs;
	bool tfs_open, started;
	int lock_fd;
	int sfd;			/* signalfd */
	sigset_t oldmask;
	bool ignored[NSIG];		/* on entry: given back to COMMAND */
	pid_t child;
	bool child_done;
	int child_status;
	int child_killed;		/* signal we sent it */
	uint64_t *lost_before, *lost_after;
	uint64_t *seqs;			/* of the PACKET notifications */
	size_t nseen, cap;
	uint64_t *ids;			/* packet ids seen: a hash set, 0 free */
	size_t nids, idcap;		/* packets seen (what --count counts) */
	unsigned int version;		/* of the module's family */
	bool overflow;			/* notifications were dropped */
	__u32 filter_id;
	bool module_done;		/* the module said: count reached */
	bool module_idle;		/* ... and it disarmed */
	char gone[160];			/* why the filter went away */
	enum trace_end end;
	int signo;
	long long deadline;		/* of --timeout, in now_ms(); -1: none */
	bool waited;			/* wait_packets() ran */
	FILE *saved;			/* the trace as read: a temporary file */
};

const char *const pf_trace_default_scope[] = {
	/* device receive and transmit, qdiscs, drivers, the bridge */
	"__netif_*", "netif_*", "__dev_queue_xmit", "dev_queue_xmit*",
	"dev_hard_start_xmit", "validate_xmit_*", "sch_*", "__qdisc_*",
	"qdisc_*", "pfifo_*", "fq_codel_*", "veth_*", "virtnet_*", "start_xmit",
	"loopback_xmit", "eth_*", "br_*", "dev_forward_skb*",
	"__dev_forward_skb*", "enqueue_to_backlog",
	/* the protocols */
	"tcp_*", "__tcp_*", "udp*", "__udp*", "icmp*", "ping_*",
	/* IP, routing, neighbours */
	"ip_*", "__ip_*", "ipv4_*", "ip6_*", "__ip6_*", "ipv6_*", "fib_*",
	"fib6_*", "rt6_*", "dst_*", "neigh_*",
	/* sockets: lookup, queueing, the owner's backlog, wakeups */
	"inet_*", "__inet_*", "inet6_*", "__inet6_*", "sock_*", "__sock_*",
	"sk_*", "__sk_*", "lock_sock*", "release_sock", "__release_sock",
	"__wake_up*",
	/* netfilter and IPsec policy */
	"nf_*", "__nf_*", "nft_*", "xfrm*", "__xfrm*",
	/* LSM */
	"security_*", "selinux_*", "apparmor_*",
	/* skb and slab allocation */
	"skb_*", "__skb_*", "kfree_skb*", "consume_skb", "__alloc_skb",
	"kmem_cache_alloc*", "kmem_cache_free", "kmalloc*", "__kmalloc*",
	"kfree",
	/* locking */
	"_raw_spin_lock*", "_raw_spin_unlock*",
	NULL
};

/* ------------------------------------------------------------------ */
/* Pure helpers, exported for the tests */

size_t pf_trace_roots(const struct pf_spec *spec, __u32 stages,
		      const char **roots, size_t max)
{
	static const struct {
		const char *name;
		__u8 stage;
		__u8 proto;	/* 0: any protocol */
		__u8 family;
	} handlers[] = {
		{ "tcp_v4_rcv",	PKTFILT_STAGE_L4, PKTFILT_PROTO_TCP, PF_FAMILY_IPV4 },
		{ "udp_rcv",	PKTFILT_STAGE_L4, PKTFILT_PROTO_UDP, PF_FAMILY_IPV4 },
		{ "icmp_rcv",	PKTFILT_STAGE_L4, PKTFILT_PROTO_ICMP, PF_FAMILY_IPV4 },
		{ "tcp_v6_rcv",	PKTFILT_STAGE_L4, PKTFILT_PROTO_TCP, PF_FAMILY_IPV6 },
		{ "udpv6_rcv",	PKTFILT_STAGE_L4, PKTFILT_PROTO_UDP, PF_FAMILY_IPV6 },
		{ "icmpv6_rcv",	PKTFILT_STAGE_L4, PKTFILT_PROTO_ICMPV6, PF_FAMILY_IPV6 },
		{ "ip_rcv",	PKTFILT_STAGE_RX, 0, PF_FAMILY_IPV4 },
		{ "ipv6_rcv",	PKTFILT_STAGE_RX, 0, PF_FAMILY_IPV6 },
		{ "ip_local_out", PKTFILT_STAGE_TX, 0, PF_FAMILY_IPV4 },
		{ "ip6_local_out", PKTFILT_STAGE_TX, 0, PF_FAMILY_IPV6 },
	};
	__u8 family = spec->saddr.family ? spec->saddr.family :
		      spec->daddr.family;
	size_t i, n = 0;

	if (!stages)
		stages = 1U << PKTFILT_STAGE_L4;	/* a version 1 module */
	/* ICMP is IPv4's, ICMPv6 IPv6's, at every stage. */
	if (!family && spec->proto == PKTFILT_PROTO_ICMP)
		family = PF_FAMILY_IPV4;
	if (!family && spec->proto == PKTFILT_PROTO_ICMPV6)
		family = PF_FAMILY_IPV6;
	for (i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++) {
		if (!(stages & (1U << handlers[i].stage)))
			continue;
		if (spec->proto && handlers[i].proto &&
		    spec->proto != handlers[i].proto)
			continue;
		if (family && family != handlers[i].family)
			continue;
		/* Ports: only TCP and UDP have them. */
		if ((spec->sport.set || spec->dport.set) && handlers[i].proto &&
		    handlers[i].proto != PKTFILT_PROTO_TCP &&
		    handlers[i].proto != PKTFILT_PROTO_UDP)
			continue;
		if (n < max)
			roots[n] = handlers[i].name;
		n++;
	}
	return n;
}

unsigned long pf_trace_buffer_kb(__u32 count, unsigned long ncpus,
				 unsigned long mem_kb)
{
	unsigned long kb;

	if (!count)
		kb = PF_BUF_KB_UNLIMITED;
	else if (count >= PF_BUF_KB_MAX / PF_BUF_KB_PACKET)
		kb = PF_BUF_KB_MAX;
	else
		kb = (unsigned long)count * PF_BUF_KB_PACKET;
	if (kb > PF_BUF_KB_MAX)
		kb = PF_BUF_KB_MAX;
	if (mem_kb && ncpus && kb > mem_kb / 4 / ncpus)
		kb = mem_kb / 4 / ncpus;
	return kb;
}

/* ------------------------------------------------------------------ */
/* Arguments */

static int trace_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "pktfilt: trace: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\ntry 'pktfilt trace --help'\n");
	return EXIT_USAGE;
}

/*
 * argv[*i] is @name or @shortname with a value, or "@name=value": 1 and
 * *val set, 0 if it is another option, or a usage error's status.
 */
static int take_opt(const char *name, const char *shortname, int argc,
		    char **argv, int *i, const char **val)
{
	const char *arg = argv[*i];
	size_t len = strlen(name);

	if (!strncmp(arg, name, len) && arg[len] == '=') {
		if (*val)
			return trace_usage("%s given twice", name);
		*val = arg + len + 1;
	} else if (!strcmp(arg, name) || (shortname && !strcmp(arg, shortname))) {
		if (*val)
			return trace_usage("%s given twice", name);
		if (*i + 1 >= argc)
			return trace_usage("%s needs a value", arg);
		*val = argv[++*i];
	} else {
		return 0;
	}
	if (!**val)
		return trace_usage("%s: empty value", name);
	return 1;
}

static int split_globs(struct trace_opts *o)
{
	char *s, *tok, *save = NULL;
	size_t n = 1;
	const char *p;

	for (p = o->functions; *p; p++)
		n += *p == ',';
	o->globs = calloc(n, sizeof(*o->globs));
	s = strdup(o->functions);
	if (!o->globs || !s) {
		free(s);
		fprintf(stderr, "pktfilt: trace: out of memory\n");
		return EXIT_RUNTIME;
	}
	/* strtok_r would skip empty globs; they are mistakes. */
	for (p = o->functions; ; p++) {
		if (*p == ',' && (p == o->functions || p[1] == ',' || !p[1])) {
			free(s);
			return trace_usage("--functions %s: an empty glob",
					   o->functions);
		}
		if (!*p)
			break;
	}
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (strchr(tok, ' ') || strchr(tok, '\t') || strchr(tok, '\n')) {
			char msg[300];

			snprintf(msg, sizeof(msg), "%s", tok);
			free(s);
			return trace_usage("--functions: '%s': a glob has no blanks",
					   msg);
		}
		o->globs[o->nglobs] = strdup(tok);
		if (!o->globs[o->nglobs]) {
			free(s);
			fprintf(stderr, "pktfilt: trace: out of memory\n");
			return EXIT_RUNTIME;
		}
		o->nglobs++;
	}
	free(s);
	return EXIT_OK;
}

static int parse_args(int argc, char **argv, struct trace_opts *o)
{
	const char *timeout = NULL;
	struct pf_parser p;
	enum pf_parse_status st;
	unsigned long v;
	int end = argc, i = 0, r;

	memset(o, 0, sizeof(*o));
	pf_parser_init(&p, &o->filter, &pf_system_resolver);
	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			end = i;
			if (i + 1 >= argc)
				return trace_usage("%s", "-- must be followed by a COMMAND");
			o->cmd = argv + i + 1;
			break;
		}
	}
	i = 0;
	while (i < end) {
		st = pf_parse_arg(&p, end, argv, &i);
		if (st == PF_PARSE_OK)
			continue;
		if (st == PF_PARSE_SYNTAX)
			return trace_usage("%s", p.err);
		if (st != PF_PARSE_UNKNOWN) {
			fprintf(stderr, "pktfilt: trace: %s\n", p.err);
			return st == PF_PARSE_SYSTEM ? EXIT_RUNTIME : EXIT_USAGE;
		}
		r = take_opt("--timeout", NULL, end, argv, &i, &timeout);
		if (!r)
			r = take_opt("--format", NULL, end, argv, &i, &o->format);
		if (!r)
			r = take_opt("--output", "-o", end, argv, &i, &o->output);
		if (!r)
			r = take_opt("--raw", NULL, end, argv, &i, &o->raw);
		if (!r)
			r = take_opt("--svg", NULL, end, argv, &i, &o->svg);
		if (!r)
			r = take_opt("--functions", NULL, end, argv, &i,
				     &o->functions);
		if (r > 1)
			return r;
		if (r == 1) {
			i++;
			continue;
		}
		if (!strcmp(argv[i], "--all-functions")) {
			o->all_functions = true;
			i++;
			continue;
		}
		if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet")) {
			o->quiet = true;
			i++;
			continue;
		}
		if (argv[i][0] == '-' && argv[i][1])
			return trace_usage("unknown option '%s'", argv[i]);
		/* A word of the filter expression (a COMMAND goes after --). */
		st = pf_parse_word(&p, argv[i++]);
		if (st != PF_PARSE_OK) {
			fprintf(stderr, "pktfilt: trace: %s\n", p.err);
			return EXIT_USAGE;
		}
	}
	st = pf_parse_finish(&p);
	if (st != PF_PARSE_OK) {
		fprintf(stderr, "pktfilt: trace: %s\n", p.err);
		return st == PF_PARSE_SYSTEM ? EXIT_RUNTIME : EXIT_USAGE;
	}
	if (timeout) {
		if (pf_parse_decimal(timeout, PF_MAX_TIMEOUT, &v))
			return trace_usage("--timeout %s: a number of seconds, 0 for no limit",
					   timeout);
		o->timeout = v;
	}
	if (!o->format)
		o->format = "text";
	if (strcmp(o->format, "text") && strcmp(o->format, "json") &&
	    strcmp(o->format, "folded") && strcmp(o->format, "chrome"))
		return trace_usage("unknown --format '%s': text, json, folded or chrome",
				   o->format);
	if (o->functions && o->all_functions)
		return trace_usage("%s", "--functions and --all-functions exclude each other");
	if (o->functions)
		return split_globs(o);
	return EXIT_OK;
}

/* ------------------------------------------------------------------ */
/* Time */

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * PKTFILT_TRACE_TIMES=1 (or 2, see tracefs.c): how long each step of
 * arming and restoring took, on standard error, from the previous step and
 * from the start.
 */
static long long times_start = -1, times_last;

static void times_step(const char *what)
{
	const char *env = getenv("PKTFILT_TRACE_TIMES");
	long long now = now_ms();

	if (!env || (strcmp(env, "1") && strcmp(env, "2")))
		return;
	if (times_start < 0) {
		times_start = times_last = now;
		return;
	}
	fprintf(stderr, "pktfilt: time: %s %lld ms (at %lld ms)\n", what,
		now - times_last, now - times_start);
	times_last = now;
}

/* ------------------------------------------------------------------ */
/* Refusing early */

static bool in_init_netns(void)
{
	struct stat self, init;

	if (stat("/proc/self/ns/net", &self) || stat("/proc/1/ns/net", &init))
		return true;	/* cannot tell: let it be */
	return self.st_ino == init.st_ino && self.st_dev == init.st_dev;
}

static int take_lock(struct trace_run *r)
{
	const char *path = getenv("PKTFILT_LOCK");
	char buf[32] = "";
	ssize_t n;

	if (!path || !*path)
		path = PF_LOCK_PATH;
	r->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (r->lock_fd < 0)
		return EXIT_OK;	/* no /run: the module's check remains */
	if (!flock(r->lock_fd, LOCK_EX | LOCK_NB)) {
		if (!ftruncate(r->lock_fd, 0)) {
			snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
			n = pwrite(r->lock_fd, buf, strlen(buf), 0);
			(void)n;
		}
		return EXIT_OK;
	}
	if (errno != EWOULDBLOCK) {
		close(r->lock_fd);
		r->lock_fd = -1;
		return EXIT_OK;
	}
	n = pread(r->lock_fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (buf[0])
		fprintf(stderr, "pktfilt: another pktfilt trace is running (pid %s, holding %s)\n",
			buf, path);
	else
		fprintf(stderr, "pktfilt: another pktfilt trace is running (holding %s)\n",
			path);
	close(r->lock_fd);
	r->lock_fd = -1;
	return EXIT_RUNTIME;
}

static int get_status(struct trace_run *r, struct pf_status *st)
{
	struct nl_msg *msg = pf_nl_msg(r->nl, PKTFILT_CMD_GET);

	if (!msg)
		return -ENOMEM;
	memset(st, 0, sizeof(*st));
	return pf_nl_request(r->nl, msg, pf_show_decode, st);
}

static void kernel_error(struct trace_run *r, const char *what, int err)
{
	const char *msg = pf_nl_extack(r->nl);

	if (err == -EPERM) {
		fprintf(stderr,
			"pktfilt: trace: permission denied: arming needs CAP_NET_ADMIN\n");
		return;
	}
	if (msg)
		fprintf(stderr, "pktfilt: kernel: %s\n", msg);
	fprintf(stderr, "pktfilt: trace: %s: %s\n", what, strerror(-err));
}

/* ------------------------------------------------------------------ */
/* Notifications */

/*
 * A packet id seen: 1 if new, 0 if not, -ENOMEM. Ids are >= 1; one of 0
 * (a version 1 module sends none) is a packet of its own each time.
 */
static int id_add(struct trace_run *r, uint64_t id)
{
	size_t i, mask;

	if (!id) {
		r->nids++;
		return 1;
	}
	if (2 * (r->nids + 1) > r->idcap) {
		size_t cap = r->idcap ? 2 * r->idcap : 64, k;
		uint64_t *n = calloc(cap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		for (k = 0; k < r->idcap; k++) {
			if (!r->ids[k])
				continue;
			for (i = r->ids[k] & (cap - 1); n[i]; i = (i + 1) & (cap - 1))
				;
			n[i] = r->ids[k];
		}
		free(r->ids);
		r->ids = n;
		r->idcap = cap;
	}
	mask = r->idcap - 1;
	for (i = id & mask; r->ids[i]; i = (i + 1) & mask)
		if (r->ids[i] == id)
			return 0;
	r->ids[i] = id;
	r->nids++;
	return 1;
}

static int on_packet(struct nlattr **tb, void *arg)
{
	struct trace_run *r = arg;
	int err;

	if (r->nseen == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		uint64_t *n = realloc(r->seqs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->seqs = n;
		r->cap = cap;
	}
	r->seqs[r->nseen++] = tb[PKTFILT_A_SEQ] ?
			      nla_get_u64(tb[PKTFILT_A_SEQ]) : 0;
	/* Several graphs of one packet: --count counts the packets. */
	err = id_add(r, tb[PKTFILT_A_PACKET_ID] ?
		     nla_get_u64(tb[PKTFILT_A_PACKET_ID]) : 0);
	return err < 0 ? err : 0;
}

/*
 * Ask the module: is our filter still armed, how many are left? Catches
 * notifications lost to a full socket, and a filter someone replaced.
 */
static int check_module(struct trace_run *r)
{
	struct pf_status st;
	int err = get_status(r, &st);

	if (err)
		return err;
	if (st.state == PKTFILT_STATE_ARMED && st.has_id &&
	    st.id == r->filter_id) {
		if (r->o.filter.count && st.has_remaining && !st.remaining)
			r->module_done = true;
		return 0;
	}
	if (r->o.filter.count && st.state == PKTFILT_STATE_IDLE &&
	    strstr(st.reason, "count reached")) {
		r->module_done = true;
		r->module_idle = true;
		return 0;
	}
	if (st.state == PKTFILT_STATE_ARMED)
		snprintf(r->gone, sizeof(r->gone),
			 "another filter replaced it (filter id %u, ours was %u)",
			 st.id, r->filter_id);
	else
		snprintf(r->gone, sizeof(r->gone), "%s",
			 st.reason[0] ? st.reason : "disarmed");
	return 0;
}

/* ------------------------------------------------------------------ */
/* COMMAND */

static int start_command(struct trace_run *r)
{
	int pfd[2], e = 0;
	ssize_t n;

	if (pipe2(pfd, O_CLOEXEC)) {
		fprintf(stderr, "pktfilt: trace: pipe: %s\n", strerror(errno));
		return EXIT_RUNTIME;
	}
	fflush(stdout);
	fflush(stderr);
	r->child = fork();
	if (r->child < 0) {
		fprintf(stderr, "pktfilt: trace: fork: %s\n", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		r->child = 0;
		return EXIT_RUNTIME;
	}
	if (!r->child) {
		close(pfd[0]);
		signal(SIGPIPE, r->ignored[SIGPIPE] ? SIG_IGN : SIG_DFL);
		if (r->ignored[SIGINT])
			signal(SIGINT, SIG_IGN);
		if (r->ignored[SIGTERM])
			signal(SIGTERM, SIG_IGN);
		sigprocmask(SIG_SETMASK, &r->oldmask, NULL);
		execvp(r->o.cmd[0], r->o.cmd);
		e = errno;
		n = write(pfd[1], &e, sizeof(e));
		(void)n;
		_exit(127);
	}
	close(pfd[1]);
	do {
		n = read(pfd[0], &e, sizeof(e));
	} while (n < 0 && errno == EINTR);
	close(pfd[0]);
	if (n == sizeof(e)) {
		fprintf(stderr, "pktfilt: trace: cannot run %s: %s\n",
			r->o.cmd[0], strerror(e));
		waitpid(r->child, &r->child_status, 0);
		r->child_done = true;
		r->child = 0;
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

static void reap(struct trace_run *r)
{
	int status;

	if (!r->child || r->child_done)
		return;
	if (waitpid(r->child, &status, WNOHANG) == r->child) {
		r->child_done = true;
		r->child_status = status;
	}
}

/* Reads the pending signals: 0, or the first terminating one. */
static int read_signals(struct trace_run *r)
{
	struct signalfd_siginfo si;
	int term = 0;

	while (read(r->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			continue;
		if (!term)
			term = (int)si.ssi_signo;
	}
	reap(r);
	return term;
}

static void kill_child(struct trace_run *r, int sig)
{
	if (r->child && !r->child_done)
		kill(r->child, sig);
	r->child_killed = sig;
}

/*
 * Waits for COMMAND to end. A signal, or the --timeout deadline, sends it
 * SIGTERM; if it is still there PF_KILL_WAIT_MS later, SIGKILL.
 */
static void wait_command(struct trace_run *r, long long deadline)
{
	long long kill_at = -1;

	if (!r->child)
		return;
	if (r->child_killed)
		kill_at = now_ms() + PF_KILL_WAIT_MS;
	for (;;) {
		struct pollfd pfd = { .fd = r->sfd, .events = POLLIN };
		long long now, wake = -1;
		int sig;

		reap(r);
		if (r->child_done)
			return;
		now = now_ms();
		if (kill_at < 0 && deadline >= 0 && now >= deadline) {
			fprintf(stderr,
				"pktfilt: trace: %s still runs at the --timeout: sending it SIGTERM\n",
				r->o.cmd[0]);
			kill_child(r, SIGTERM);
			kill_at = now + PF_KILL_WAIT_MS;
		}
		if (kill_at >= 0 && now >= kill_at && r->child_killed != SIGKILL) {
			kill_child(r, SIGKILL);
			kill_at = LLONG_MAX;
		}
		if (kill_at >= 0 && kill_at != LLONG_MAX)
			wake = kill_at;
		else if (kill_at < 0 && deadline >= 0)
			wake = deadline;
		poll(&pfd, 1, wake < 0 ? -1 : (int)(wake > now ? wake - now : 0));
		sig = read_signals(r);
		if (sig && kill_at < 0) {
			kill_child(r, SIGTERM);
			kill_at = now_ms() + PF_KILL_WAIT_MS;
		}
	}
}

/* ------------------------------------------------------------------ */
/* Waiting for the packets */

static const char *end_name(const struct trace_run *r)
{
	static char buf[32];

	switch (r->end) {
	case END_SIGNAL:
		if (sigabbrev_np(r->signo))
			snprintf(buf, sizeof(buf), "SIG%s",
				 sigabbrev_np(r->signo));
		else
			snprintf(buf, sizeof(buf), "signal %d", r->signo);
		return buf;
	case END_TIMEOUT:
		return "--timeout";
	case END_COMMAND:
		return "the end of COMMAND";
	default:
		return "?";
	}
}

static int wait_packets(struct trace_run *r)
{
	__u32 count = r->o.filter.count;
	long long deadline = r->deadline;
	long long linger = -1, next_check = now_ms() + PF_CHECK_MS;
	long long follow = -1;
	/* Later stages of the last packet may still come: wait for them. */
	bool later = r->version >= 2 &&
		     (r->o.filter.stages & ~(1U << PKTFILT_STAGE_L4));

	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = pf_nl_events_fd(r->ev), .events = POLLIN },
			{ .fd = r->sfd, .events = POLLIN },
		};
		long long now, wake;
		int err, sig;

		if (count && (r->nids >= count || r->module_done) &&
		    (!later || r->module_idle ||
		     (follow >= 0 && now_ms() >= follow))) {
			r->end = END_COUNT;
			return 0;
		}
		if (count && (r->nids >= count || r->module_done) &&
		    follow < 0) {
			follow = now_ms() + PF_FOLLOW_MS;
			next_check = now_ms() + PF_FOLLOW_CHECK_MS;
		}
		if (r->gone[0]) {
			r->end = END_GONE;
			return 0;
		}
		now = now_ms();
		if (deadline >= 0 && now >= deadline) {
			r->end = END_TIMEOUT;
			return 0;
		}
		if (linger >= 0 && now >= linger) {
			r->end = END_COMMAND;
			return 0;
		}
		wake = next_check;
		if (follow >= 0 && follow < wake)
			wake = follow;
		if (deadline >= 0 && deadline < wake)
			wake = deadline;
		if (linger >= 0 && linger < wake)
			wake = linger;
		poll(pfd, 2, wake > now ? (int)(wake - now) : 0);

		if (pfd[0].revents) {
			err = pf_nl_events_read(r->ev);
			if (err == -ENOBUFS) {
				r->overflow = true;
				next_check = 0;	/* ask the module now */
			} else if (err) {
				fprintf(stderr,
					"pktfilt: trace: reading notifications: %s\n",
					strerror(-err));
				r->end = END_ERROR;
				return -1;
			}
		}
		if (pfd[1].revents) {
			sig = read_signals(r);
			if (sig) {
				r->end = END_SIGNAL;
				r->signo = sig;
				return 0;
			}
		}
		if (r->child && r->child_done && linger < 0)
			linger = now_ms() + PF_LINGER_MS;
		if (now_ms() >= next_check) {
			err = check_module(r);
			if (err) {
				kernel_error(r, "asking the module", err);
				r->end = END_ERROR;
				return -1;
			}
			next_check = now_ms() + (follow >= 0 ?
						 PF_FOLLOW_CHECK_MS : PF_CHECK_MS);
		}
	}
}

/*
 * The packets the module announced (r->seqs), looked up by seq as a
 * reading of the trace streams by: for each, whether its first packet in
 * the trace was there, and complete.
 */
struct seq_key {
	uint64_t seq;
	size_t i;			/* in r->seqs */
};

enum { SEQ_MISSING, SEQ_INCOMPLETE, SEQ_COMPLETE };

struct seq_check {
	struct seq_key *keys;		/* by seq */
	unsigned char *found;		/* per r->seqs: SEQ_* */
	size_t n;
};

static int seq_key_cmp(const void *a, const void *b)
{
	const struct seq_key *x = a, *y = b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static int seq_check_init(struct seq_check *c, const struct trace_run *r)
{
	size_t i;

	c->n = r->nseen;
	c->keys = malloc((c->n ? c->n : 1) * sizeof(*c->keys));
	c->found = calloc(c->n ? c->n : 1, 1);
	if (!c->keys || !c->found)
		return -ENOMEM;
	for (i = 0; i < c->n; i++) {
		c->keys[i].seq = r->seqs[i];
		c->keys[i].i = i;
	}
	qsort(c->keys, c->n, sizeof(*c->keys), seq_key_cmp);
	return 0;
}

static void seq_check_free(struct seq_check *c)
{
	free(c->keys);
	free(c->found);
}

static void seq_check_packet(struct seq_check *c, const struct pf_packet *pkt)
{
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->keys[mid].seq < pkt->seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < c->n && c->keys[lo].seq == pkt->seq; lo++)
		if (c->found[c->keys[lo].i] == SEQ_MISSING)
			c->found[c->keys[lo].i] = pkt->complete ?
						  SEQ_COMPLETE : SEQ_INCOMPLETE;
}

/* Is every packet the module announced in the trace, its graph closed? */
static bool all_closed(const struct seq_check *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->found[i] != SEQ_COMPLETE)
			return false;
	return true;
}

static int on_collect(void *arg, const struct pf_packet *pkt)
{
	seq_check_packet(arg, pkt);
	return 0;
}

/* The chunks the trace is read in: memory does not grow with the trace. */
#define PF_READ_CHUNK	(1U << 16)

/*
 * Read all of @fd in chunks, each copied to @copy (if not -1) and fed to
 * @p (if not NULL). 0, or -errno: *@reading tells whether reading @fd
 * failed (else writing @copy, or the parser).
 */
static int read_chunks(int fd, int copy, struct pf_fgraph *p, bool *reading)
{
	static char buf[PF_READ_CHUNK];
	int err;

	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		*reading = true;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return 0;
		*reading = false;
		if (copy >= 0) {
			err = pf_write_full(copy, buf, (size_t)n);
			if (err)
				return err;
		}
		if (p) {
			err = pf_fgraph_feed(p, buf, (size_t)n);
			if (err)
				return err;
		}
	}
}

/*
 * Read tracefs's trace once, in chunks, into r->saved (emptied first) and,
 * if @c, through the streaming parser, which tells @c which announced
 * packets are there and complete. Memory holds a chunk and the packets
 * still open, not the trace. 0, or -errno with r->tfs.err set.
 */
static int read_trace(struct trace_run *r, struct seq_check *c)
{
	int save = fileno(r->saved), fd, err = 0, n;
	struct pf_fgraph *p = NULL;
	struct pf_trace *t;
	char path[sizeof(r->tfs.root) + 16];
	bool reading = false;

	if (ftruncate(save, 0) || lseek(save, 0, SEEK_SET) < 0) {
		err = -errno;
		snprintf(r->tfs.err, sizeof(r->tfs.err),
			 "cannot save the trace: %s", strerror(-err));
		return err;
	}
	if (c) {
		memset(c->found, 0, c->n);
		p = pf_fgraph_new_stream(on_collect, c);
		if (!p) {
			snprintf(r->tfs.err, sizeof(r->tfs.err), "out of memory");
			return -ENOMEM;
		}
	}
	n = snprintf(path, sizeof(path), "%s/trace", r->tfs.root);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		err = -ENAMETOOLONG;
		reading = true;
	} else {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			err = -errno;
			reading = true;
		} else {
			err = read_chunks(fd, save, p, &reading);
			close(fd);
		}
	}
	if (p && !err) {
		t = pf_fgraph_finish(p);
		if (!t)
			err = errno ? -errno : -ENOMEM;
		pf_trace_free(t);
	} else {
		pf_fgraph_free(p);
	}
	if (err && reading)
		snprintf(r->tfs.err, sizeof(r->tfs.err), "cannot read %s: %s",
			 path, strerror(-err));
	else if (err == -ENOMEM)
		snprintf(r->tfs.err, sizeof(r->tfs.err), "out of memory");
	else if (err)
		snprintf(r->tfs.err, sizeof(r->tfs.err),
			 "cannot save the trace: %s", strerror(-err));
	return err;
}

/*
 * Where the trace is kept between its reading and report(): a file in
 * /tmp, or in memory (memfd) if /tmp will not do, as in a bare VM.
 */
static FILE *save_file(void)
{
	FILE *f = tmpfile();
	int fd, err;

	if (f)
		return f;
	err = errno;
	fd = memfd_create("pktfilt-trace", MFD_CLOEXEC);
	if (fd < 0) {
		errno = err;
		return NULL;
	}
	f = fdopen(fd, "w+");
	if (!f) {
		err = errno;
		close(fd);
		errno = err;
	}
	return f;
}

/*
 * The filter is disarmed: read the trace until every announced packet's
 * graph is closed, for PF_CLOSE_WAIT_MS at most. Then tracing off. The
 * last reading stays in r->saved (a temporary file) for report().
 */
static int collect_trace(struct trace_run *r)
{
	long long until = now_ms() + PF_CLOSE_WAIT_MS;
	struct seq_check c = { 0 };
	int err = 0;

	r->saved = save_file();
	if (!r->saved) {
		err = errno ? -errno : -EIO;
		snprintf(r->tfs.err, sizeof(r->tfs.err),
			 "cannot save the trace: %s", strerror(-err));
	}
	if (!err && seq_check_init(&c, r)) {
		err = -ENOMEM;
		snprintf(r->tfs.err, sizeof(r->tfs.err), "out of memory");
	}
	while (!err) {
		err = read_trace(r, r->nseen ? &c : NULL);
		if (err)
			break;
		if (!r->nseen)
			break;
		if (all_closed(&c) || now_ms() >= until)
			break;
		sleep_ms(50);
	}
	seq_check_free(&c);
	if (pf_tracefs_stop(&r->tfs) && !err)
		err = -EIO;
	if (!err && r->lost_after && pf_tracefs_lost(&r->tfs, r->lost_after))
		err = -EIO;
	if (err)
		fprintf(stderr, "pktfilt: trace: %s\n", r->tfs.err);
	return err;
}

/* ------------------------------------------------------------------ */
/* Output */

/* One output: the --format one, or the SVG. */
struct trace_out {
	const char *path;		/* "-": standard output */
	FILE *file;			/* NULL: could not be opened */
	struct pf_render *r;
	int err;			/* the first error writing it */
};

static enum pf_format format_of(const char *format)
{
	if (!strcmp(format, "json"))
		return PF_FORMAT_JSON;
	if (!strcmp(format, "folded"))
		return PF_FORMAT_FOLDED;
	if (!strcmp(format, "chrome"))
		return PF_FORMAT_CHROME;
	return PF_FORMAT_TEXT;
}

/* EXIT_RUNTIME, said, if @path cannot be opened; o->file NULL then. */
static int out_open(struct trace_out *o, const char *path)
{
	o->path = path;
	o->file = strcmp(path, "-") ? fopen(path, "w") : stdout;
	o->r = NULL;
	o->err = 0;
	if (!o->file) {
		fprintf(stderr, "pktfilt: trace: cannot write %s: %s\n", path,
			strerror(errno));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

/* Flush or close @o, with @err the first error so far: EXIT_RUNTIME if any. */
static int out_close(struct trace_out *o, int err)
{
	bool std = !strcmp(o->path, "-");

	if (!o->file)
		return EXIT_RUNTIME;
	if (std) {
		if (fflush(o->file) && !err)
			err = errno ? -errno : -EIO;
	} else if (fclose(o->file) && !err) {
		err = errno ? -errno : -EIO;
	}
	o->file = NULL;
	if (err) {
		fprintf(stderr, "pktfilt: trace: writing %s: %s\n",
			std ? "standard output" : o->path, strerror(-err));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

/* The saved trace, as it was read, to --raw's @path. */
static int write_raw(struct trace_run *r, const char *path)
{
	struct trace_out o;
	int in = fileno(r->saved), out, err = 0;
	bool reading = false;

	if (out_open(&o, path))
		return EXIT_RUNTIME;
	if (fflush(o.file) || lseek(in, 0, SEEK_SET) < 0) {
		err = errno ? -errno : -EIO;
	} else {
		out = fileno(o.file);
		err = read_chunks(in, out, NULL, &reading);
	}
	return out_close(&o, err);
}

/* One reading of the saved trace, rendered: report()'s state. */
struct trace_report {
	struct trace_out outs[2];	/* --format's, then --svg's */
	size_t nouts;
	unsigned int *lost_cpus;	/* CPUs whose ring buffer lost events */
	size_t nlost;
	struct seq_check c;
	size_t bad;			/* packets incomplete, marks included */
};

/*
 * Packets on a CPU whose ring buffer lost events, by its counters, are
 * not to be trusted: find those CPUs, to mark their packets as they come.
 * Returns the events lost in all.
 */
static uint64_t mark_lost(struct trace_run *r, struct trace_report *rep)
{
	uint64_t sum = 0;
	size_t i;

	if (!r->lost_before || !r->lost_after)
		return 0;
	for (i = 0; i < r->tfs.ncpus; i++) {
		uint64_t d = r->lost_after[i] - r->lost_before[i];

		if (r->lost_after[i] <= r->lost_before[i])
			continue;
		sum += d;
		fprintf(stderr,
			"pktfilt: trace: CPU %u's ring buffer lost %" PRIu64 " event%s (per_cpu/cpu%u/stats)\n",
			r->tfs.cpus[i], d, d == 1 ? "" : "s", r->tfs.cpus[i]);
		rep->lost_cpus[rep->nlost++] = r->tfs.cpus[i];
	}
	return sum;
}

static int on_report(void *arg, const struct pf_packet *pkt)
{
	struct trace_report *rep = arg;
	struct pf_packet p = *pkt;	/* the renderers read it only */
	size_t i;

	for (i = 0; i < rep->nlost; i++) {
		if (p.cpu != rep->lost_cpus[i])
			continue;
		p.complete = false;
		p.incomplete |= PF_INC_LOST;
	}
	rep->bad += !p.complete;
	seq_check_packet(&rep->c, &p);
	for (i = 0; i < rep->nouts; i++) {
		struct trace_out *o = &rep->outs[i];

		if (o->r && !o->err)
			o->err = pf_render_packet(o->r, &p);
	}
	return 0;
}

/*
 * Read the saved trace once more, in chunks, through the streaming
 * parser, each packet rendered to every output as it completes. The
 * trace's counts, or NULL (said).
 */
static struct pf_trace *render_saved(struct trace_run *r,
				     struct trace_report *rep)
{
	int in = fileno(r->saved), err = 0;
	struct pf_fgraph *p;
	struct pf_trace *t = NULL;
	bool reading = false;

	p = pf_fgraph_new_stream(on_report, rep);
	if (!p) {
		err = -ENOMEM;
	} else if (lseek(in, 0, SEEK_SET) < 0) {
		err = -errno;
		reading = true;
		pf_fgraph_free(p);
	} else {
		err = read_chunks(in, -1, p, &reading);
		if (err) {
			pf_fgraph_free(p);
		} else {
			t = pf_fgraph_finish(p);
			if (!t)
				err = errno ? -errno : -ENOMEM;
		}
	}
	if (err && reading)
		fprintf(stderr, "pktfilt: trace: reading the saved trace: %s\n",
			strerror(-err));
	else if (err)
		fprintf(stderr, "pktfilt: trace: out of memory\n");
	return t;
}

static int report(struct trace_run *r)
{
	struct trace_report rep = { .nouts = 0 };
	struct pf_trace *t;
	size_t i, n, missing = 0;
	uint64_t lost;
	int ret = EXIT_OK;

	if (r->o.raw && write_raw(r, r->o.raw))
		ret = EXIT_RUNTIME;
	rep.lost_cpus = calloc(r->tfs.ncpus ? r->tfs.ncpus : 1,
			       sizeof(*rep.lost_cpus));
	if (!rep.lost_cpus || seq_check_init(&rep.c, r)) {
		fprintf(stderr, "pktfilt: trace: out of memory\n");
		free(rep.lost_cpus);
		seq_check_free(&rep.c);
		return EXIT_RUNTIME;
	}
	lost = mark_lost(r, &rep);

	/* The --format output and the SVG, each packet to both as it comes. */
	if (out_open(&rep.outs[rep.nouts++],
		     r->o.output ? r->o.output : "-"))
		ret = EXIT_RUNTIME;
	if (r->o.svg && out_open(&rep.outs[rep.nouts++], r->o.svg))
		ret = EXIT_RUNTIME;
	for (i = 0; i < rep.nouts; i++) {
		struct trace_out *o = &rep.outs[i];

		if (!o->file)
			continue;
		o->r = pf_render_new(i ? PF_FORMAT_SVG : format_of(r->o.format),
				     o->file);
		if (!o->r)
			o->err = errno ? -errno : -ENOMEM;
	}
	t = render_saved(r, &rep);
	for (i = 0; i < rep.nouts; i++) {
		struct trace_out *o = &rep.outs[i];
		int err = o->r ? pf_render_end(o->r) : 0;

		if (o->file && out_close(o, o->err ? o->err : err))
			ret = EXIT_RUNTIME;
	}
	if (!t) {
		free(rep.lost_cpus);
		seq_check_free(&rep.c);
		return EXIT_RUNTIME;
	}

	for (i = 0; i < r->nseen; i++) {
		if (rep.c.found[i] != SEQ_MISSING)
			continue;
		if (!missing)
			fprintf(stderr, "pktfilt: trace: traced but not in the trace (lost):");
		fprintf(stderr, " seq %" PRIu64, r->seqs[i]);
		missing++;
	}
	if (missing) {
		fprintf(stderr, "\n");
		ret = EXIT_RUNTIME;
	}
	/* The counts with the lost CPUs' packets marked, as rendered. */
	t->stats.streamed_incomplete = rep.bad;
	n = pf_trace_packets(t);
	if (rep.bad || pf_trace_lost(t) || lost) {
		fprintf(stderr, "pktfilt: trace: %zu of %zu packet%s incomplete%s\n",
			rep.bad, n, n == 1 ? "" : "s",
			pf_trace_lost(t) || lost ?
			" (the ring buffer lost events: a larger buffer_size_kb or fewer --functions may help)" : "");
		fprintf(stderr, "pktfilt: trace: ");
		pf_trace_summary(stderr, t);
		ret = EXIT_RUNTIME;
	}
	pf_trace_free(t);
	free(rep.lost_cpus);
	seq_check_free(&rep.c);
	return ret;
}

/* ------------------------------------------------------------------ */
/* The run */

static unsigned long mem_available_kb(void)
{
	FILE *f = fopen("/proc/meminfo", "re");
	char line[128];
	unsigned long kb = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %lu kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static long pid_max(void)
{
	FILE *f = fopen("/proc/sys/kernel/pid_max", "re");
	long v = 0;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v > 0 ? v : 4194304;	/* PID_MAX_LIMIT: no PID is that */
}

/*
 * set_ftrace_pid's idle PID: pid_max. Before 5.17 (Debian 11's 5.10) the
 * PID list is a bitmap of pid_max bits that refuses pid_max: pid_max - 1,
 * the PID a task gets last, once the PIDs wrap.
 */
static long idle_pid(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (!uname(&u) && sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
	    (major < 5 || (major == 5 && minor < 17)))
		return pid_max() - 1;
	return pid_max();
}

/* Steps 2 and 3: tracefs, then the filter. */
static int arm(struct trace_run *r)
{
	const char *roots[16];
	struct pf_tfs_config c = { 0 };
	struct pf_status st;
	struct nl_msg *msg;
	int err;

	err = pf_tracefs_open(&r->tfs, NULL, PKTFILT_GENL_NAME);
	if (err) {
		fprintf(stderr, "pktfilt: trace: %s\n", r->tfs.err);
		return EXIT_RUNTIME;
	}
	r->tfs_open = true;

	c.idle_pid = (pid_t)idle_pid();
	c.nroots = pf_trace_roots(&r->o.filter.spec, r->o.filter.stages, roots,
				  16);
	c.roots = roots;
	if (r->o.functions) {
		c.globs = (const char *const *)r->o.globs;
		c.nglobs = r->o.nglobs;
	} else if (!r->o.all_functions) {
		c.globs = pf_trace_default_scope;
		while (c.globs[c.nglobs])
			c.nglobs++;
		c.globs_optional = true;
	}
	/* The functions are looked for while the settings are read. */
	err = pf_tracefs_prefetch(&r->tfs, &c);
	if (!err)
		err = pf_tracefs_save(&r->tfs);
	if (err) {
		fprintf(stderr, "pktfilt: trace: %s\n", r->tfs.err);
		return EXIT_RUNTIME;
	}
	r->lost_before = calloc(r->tfs.ncpus + 1, sizeof(uint64_t));
	r->lost_after = calloc(r->tfs.ncpus + 1, sizeof(uint64_t));
	if (!r->lost_before || !r->lost_after) {
		fprintf(stderr, "pktfilt: trace: out of memory\n");
		return EXIT_RUNTIME;
	}

	c.buffer_kb = pf_trace_buffer_kb(r->o.filter.count, r->tfs.ncpus,
					 mem_available_kb());
	times_step("tracefs saved");
	err = pf_tracefs_setup(&r->tfs, &c);
	if (err) {
		fprintf(stderr, "pktfilt: trace: %s\n", r->tfs.err);
		return EXIT_RUNTIME;
	}
	times_step(r->tfs.by_index ? "tracefs set up (functions by number)" :
		   "tracefs set up");
	if (r->tfs.note[0])
		fprintf(stderr,
			"pktfilt: trace: note: ftrace cannot trace %s: such packets are not graphed\n",
			r->tfs.note);
	if (pf_tracefs_lost(&r->tfs, r->lost_before) ||
	    pf_tracefs_start(&r->tfs)) {
		fprintf(stderr, "pktfilt: trace: %s\n", r->tfs.err);
		return EXIT_RUNTIME;
	}
	r->started = true;
	times_step("function_graph started");

	r->o.filter.flags = PKTFILT_F_OWNED | PKTFILT_F_EXCLUSIVE;
	msg = pf_nl_msg(r->nl, PKTFILT_CMD_SET);
	if (!msg || pf_nl_put_filter(msg, &r->o.filter)) {
		nlmsg_free(msg);
		fprintf(stderr, "pktfilt: trace: cannot build the request\n");
		return EXIT_RUNTIME;
	}
	err = pf_nl_request(r->nl, msg, NULL, NULL);
	if (err == -EBUSY) {
		fprintf(stderr, "pktfilt: another pktfilt trace is running\n");
		return EXIT_RUNTIME;
	}
	if (err) {
		kernel_error(r, "arming the filter", err);
		return EXIT_RUNTIME;
	}
	err = get_status(r, &st);
	if (err) {
		kernel_error(r, "asking the module", err);
		return EXIT_RUNTIME;
	}
	times_step("filter armed");
	if (st.has_id)
		r->filter_id = st.id;
	if (st.state != PKTFILT_STATE_ARMED) {
		/* Already done (count reached), or cleared at once. */
		if (!(r->o.filter.count && strstr(st.reason, "count reached")))
			snprintf(r->gone, sizeof(r->gone), "%s",
				 st.reason[0] ? st.reason : "disarmed");
		else
			r->module_done = true;
	}
	return EXIT_OK;
}

/* @n with a comma every three digits: "14,253". */
static void thousands(char *buf, size_t len, size_t n)
{
	char tmp[32];
	size_t l, i, o = 0;

	snprintf(tmp, sizeof(tmp), "%zu", n);
	l = strlen(tmp);
	for (i = 0; i < l && o + 2 < len; i++) {
		if (i && (l - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
}

/*
 * Without COMMAND: armed, the tracer on, so a packet sent from now on is
 * traced. Say so, on one line, as tcpdump's "listening on".
 */
static void tell_ready(const struct trace_run *r)
{
	char what[1024], scope[128], num[32], wait[96];
	const char *preds = what;
	__u32 count = r->o.filter.count;
	char *c;

	pf_format_filter(&r->o.filter, &pf_system_resolver, what, sizeof(what));
	c = strstr(what, " --count ");
	if (c)
		*c = '\0';
	while (*preds == ' ')
		preds++;
	thousands(num, sizeof(num), r->tfs.nfuncs);
	if (r->o.all_functions)
		snprintf(scope, sizeof(scope), "every function");
	else if (r->tfs.nfuncs)
		snprintf(scope, sizeof(scope), "%s, %s function%s",
			 r->o.functions ? "--functions" : "default scope", num,
			 r->tfs.nfuncs == 1 ? "" : "s");
	else
		snprintf(scope, sizeof(scope), "%s",
			 r->o.functions ? "--functions" : "default scope");
	if (count)
		snprintf(wait, sizeof(wait), "waiting for %u packet%s", count,
			 count == 1 ? "" : "s");
	else
		snprintf(wait, sizeof(wait), "tracing every matching packet");
	if (r->o.timeout)
		snprintf(wait + strlen(wait), sizeof(wait) - strlen(wait),
			 " for %lu s at most", r->o.timeout);
	fprintf(stderr, "pktfilt: tracing %s (%s); %s, Ctrl-C to stop\n",
		*preds ? preds : "every packet", scope, wait);
	fflush(stderr);
}

/* Step 1. */
static int prepare(struct trace_run *r)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
	struct pf_status st;
	char why[512];
	sigset_t set;
	size_t i;
	int err;

	if (!in_init_netns()) {
		fprintf(stderr,
			"pktfilt: trace: run pktfilt in the initial network namespace: the module announces traced packets there only (--netns chooses the packets' namespace)\n");
		return EXIT_RUNTIME;
	}
	/*
	 * A shell without job control starts background commands with
	 * SIGINT ignored: "kill -INT" would not reach us, and a trace must
	 * be stoppable. SIGHUP ignored (nohup) stays ignored.
	 */
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction sa;

		if (sigaction(sigs[i], NULL, &sa) || sa.sa_handler != SIG_IGN)
			continue;
		r->ignored[sigs[i]] = true;
		if (sigs[i] != SIGHUP && sigs[i] != SIGPIPE)
			signal(sigs[i], SIG_DFL);
	}
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, &r->oldmask)) {
		fprintf(stderr, "pktfilt: trace: sigprocmask: %s\n", strerror(errno));
		return EXIT_RUNTIME;
	}
	r->sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (r->sfd < 0) {
		fprintf(stderr, "pktfilt: trace: signalfd: %s\n", strerror(errno));
		return EXIT_RUNTIME;
	}
	signal(SIGPIPE, SIG_IGN);

	err = pf_nl_open(&r->nl);
	if (err == -ENOENT) {
		fprintf(stderr,
			"pktfilt: the pktfilt module is not loaded (insmod pktfilt.ko)\n");
		return EXIT_RUNTIME;
	}
	if (err) {
		fprintf(stderr, "pktfilt: cannot talk to the kernel: %s\n",
			strerror(-err));
		return EXIT_RUNTIME;
	}
	fcntl(pf_nl_fd(r->nl), F_SETFD, FD_CLOEXEC);
	r->version = pf_nl_version(r->nl);
	switch (pf_stages_compat(&r->o.filter, r->version,
				 PF_TRACE_DEFAULT_STAGES, why, sizeof(why))) {
	case PF_COMPAT_FAIL:
		fprintf(stderr, "pktfilt: trace: %s\n", why);
		return EXIT_RUNTIME;
	case PF_COMPAT_OK:
		break;
	default:
		fprintf(stderr, "pktfilt: trace: %s\n", why);
		break;
	}
	if (!r->version)
		r->version = PKTFILT_GENL_VERSION;

	if (take_lock(r))
		return EXIT_RUNTIME;
	err = get_status(r, &st);
	if (err) {
		kernel_error(r, "asking the module", err);
		return EXIT_RUNTIME;
	}
	if (st.state == PKTFILT_STATE_ARMED &&
	    (st.filter.flags & PKTFILT_F_OWNED)) {
		fprintf(stderr, "pktfilt: another pktfilt trace is running\n");
		return EXIT_RUNTIME;
	}
	err = pf_nl_events_open(&r->ev, on_packet, r);
	if (err) {
		fprintf(stderr,
			"pktfilt: trace: cannot join the module's \"%s\" group: %s\n",
			PKTFILT_MCGRP_EVENTS, strerror(-err));
		return EXIT_RUNTIME;
	}
	fcntl(pf_nl_events_fd(r->ev), F_SETFD, FD_CLOEXEC);
	return EXIT_OK;
}

/* Tells how the wait ended, if not as hoped. EXIT_RUNTIME if a failure. */
static int tell_end(struct trace_run *r)
{
	__u32 count = r->o.filter.count;
	size_t k = r->nids;

	if (r->module_done && k < count)
		k = count;	/* notifications lost, the module knows */
	switch (r->end) {
	case END_COUNT:
		return EXIT_OK;
	case END_GONE:
		fprintf(stderr,
			"pktfilt: trace: the filter was removed: %s; saw %zu of %u packet%s\n",
			r->gone, k, count, count == 1 ? "" : "s");
		return count && k >= count ? EXIT_OK : EXIT_RUNTIME;
	case END_TIMEOUT:
	case END_SIGNAL:
	case END_COMMAND:
		if (!count) {
			fprintf(stderr, "pktfilt: trace: stopped by %s: %zu packet%s traced\n",
				end_name(r), k, k == 1 ? "" : "s");
			return EXIT_OK;
		}
		if (r->end == END_TIMEOUT)
			fprintf(stderr,
				"pktfilt: trace: timed out after %lu s: saw %zu of %u packet%s\n",
				r->o.timeout, k, count, count == 1 ? "" : "s");
		else
			fprintf(stderr,
				"pktfilt: trace: stopped by %s: saw %zu of %u packet%s\n",
				end_name(r), k, count, count == 1 ? "" : "s");
		return EXIT_RUNTIME;
	default:
		return EXIT_RUNTIME;
	}
}

static void tell_command(const struct trace_run *r)
{
	int st = r->child_status;

	if (!r->o.cmd || !r->child_done)
		return;
	if (WIFEXITED(st) && WEXITSTATUS(st))
		fprintf(stderr, "pktfilt: trace: %s exited with status %d\n",
			r->o.cmd[0], WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		fprintf(stderr, "pktfilt: trace: %s was killed by signal %d (%s)\n",
			r->o.cmd[0], WTERMSIG(st), strsignal(WTERMSIG(st)));
}

int pf_trace_run(const struct pf_cmd *cmd, int argc, char **argv)
{
	struct trace_run r;
	int ret, bad;
	size_t i;

	(void)cmd;
	memset(&r, 0, sizeof(r));
	r.lock_fd = -1;
	r.sfd = -1;
	r.deadline = -1;
	ret = parse_args(argc, argv, &r.o);
	if (ret)
		goto free_opts;

	times_step(NULL);
	ret = prepare(&r);
	if (!ret)
		ret = arm(&r);
	if (!ret && !r.o.cmd && !r.o.quiet && !r.gone[0] && !r.module_done)
		tell_ready(&r);
	if (!ret && r.o.timeout)
		r.deadline = now_ms() + (long long)r.o.timeout * 1000;
	if (!ret && r.o.cmd)
		ret = start_command(&r);
	if (!ret) {
		r.waited = true;
		if (wait_packets(&r))
			ret = EXIT_RUNTIME;
	}

	/* Disarm: the module waits for the handlers it was tracing. */
	pf_nl_close(r.nl);
	r.nl = NULL;
	if (r.ev) {
		if (!ret && pf_nl_events_read(r.ev) == -ENOBUFS)
			r.overflow = true;
		pf_nl_events_close(r.ev);
		r.ev = NULL;
	}
	if (r.end == END_TIMEOUT || r.end == END_SIGNAL || r.end == END_ERROR ||
	    r.end == END_GONE || (ret && r.child))
		kill_child(&r, SIGTERM);
	if (!ret)
		ret = tell_end(&r);
	if (r.started && r.waited) {
		if (collect_trace(&r)) {
			if (r.saved)
				fclose(r.saved);
			r.saved = NULL;
			ret = EXIT_RUNTIME;
		}
	}
	if (r.tfs_open) {
		times_step("waited, trace read");
		bad = pf_tracefs_restore(&r.tfs, stderr);
		times_step("tracefs restored");
		if (bad > 0)
			fprintf(stderr,
				"pktfilt: trace: %d tracefs setting%s not as before (see above)\n",
				bad, bad == 1 ? " is" : "s are");
		if (bad)
			ret = EXIT_RUNTIME;
		pf_tracefs_close(&r.tfs);
	}
	wait_command(&r, r.deadline);
	tell_command(&r);
	if (r.lock_fd >= 0)
		close(r.lock_fd);	/* the lock goes with it */
	r.lock_fd = -1;
	if (r.saved && report(&r))
		ret = EXIT_RUNTIME;
	if (r.overflow)
		fprintf(stderr,
			"pktfilt: trace: some packet notifications were lost (socket buffer full)\n");

	if (r.saved)
		fclose(r.saved);
	free(r.seqs);
	free(r.ids);
	free(r.lost_before);
	free(r.lost_after);
	/* Signals stay blocked: one now would only change the status. */
	if (r.sfd >= 0)
		close(r.sfd);
free_opts:
	for (i = 0; i < r.o.nglobs; i++)
		free(r.o.globs[i]);
	free(r.o.globs);
	return ret;
}
