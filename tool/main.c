// SPDX-License-Identifier: GPL-2.0
/*
 * pktfilt: arm the pktfilt module so that ftrace's function_graph records
 * exactly one chosen packet's path through the network stack (IP receive,
 * the protocol handler, IP output).
 *
 * Exit statuses: 0 done, 1 runtime or kernel error, 2 usage error.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pktfilt.h"
#include "parse.h"
#include "nl.h"
#include "show.h"
#include "report.h"
#include "diff.h"
#include "merge.h"
#include "tracecmd.h"
#include "kcheck.h"

#ifndef PKTFILT_VERSION
#error "PKTFILT_VERSION must be defined (see tool/Makefile)"
#endif

#define EXIT_OK		0
#define EXIT_RUNTIME	1
#define EXIT_USAGE	2

#define HINT	"try 'pktfilt --help'"

struct pf_cmd {
	const char *name;
	int (*run)(const struct pf_cmd *cmd, int argc, char **argv);
	__u8 nl_cmd;
	const char *synopsis;
	const char *help;	/* its paragraph of COMMANDS */
	const char *examples;	/* its part of EXAMPLES, or NULL */
};

static const char help_name[] =
"NAME\n"
"    pktfilt - trace one chosen packet through the kernel's network stack\n";

static const char help_description[] =
"DESCRIPTION\n"
"    pktfilt controls the pktfilt kernel module. The module hooks the\n"
"    receive handlers of TCP, UDP, ICMP and ICMPv6 (over IPv4 and IPv6).\n"
"    When a received packet matches the armed filter, it lets ftrace's\n"
"    function_graph tracer record that packet's handler, every function it\n"
"    calls included, and nothing else: the trace shows how the kernel\n"
"    processed exactly that packet, not the interleaved work of the\n"
"    thousands of packets around it. A pktfilt trace event marks the start\n"
"    of each traced packet. With --at (see STAGES) the graph starts\n"
"    earlier, where the device hands the packet to the stack or at IP\n"
"    output, and one packet is followed through its stages under one\n"
"    packet id.\n"
"\n"
"    A filter is a set of predicates, a filter expression in tcpdump's\n"
"    language if given, and a packet count. It stays armed until it has\n"
"    traced COUNT packets or is cleared; then the module is idle and\n"
"    costs nothing. There is one filter at a time.\n";

static const char help_set[] =
"    pktfilt set [PREDICATE]... [--count N] [--at STAGE[,STAGE]...] [EXPRESSION]\n"
"        Arm a filter made of the given predicates (see PREDICATES) and\n"
"        filter EXPRESSION (see FILTER EXPRESSIONS), replacing the armed\n"
"        filter if there is one (the counters stay: they count from\n"
"        module load). All values are checked, and the expression\n"
"        compiled, before anything is sent. Needs CAP_NET_ADMIN; prints\n"
"        nothing on success.\n"
"\n"
"        --count N\n"
"            Trace the first N matching packets, then disarm. 0 means no\n"
"            limit: trace every matching packet until 'pktfilt clear'.\n"
"            Default 1. A packet that matches after the count is used up\n"
"            is not traced; it counts as \"exhausted\".\n"
"\n"
"        --at STAGE[,STAGE]...\n"
"            Where on its way through the kernel a matching packet is\n"
"            traced (see STAGES). Default: l4 for set (what pktfilt 1\n"
"            did, so that its recipes keep working), rx for trace.\n"
"\n"
"        --snaplen N\n"
"            Bytes of each traced packet, from its IP header, that its\n"
"            pktfilt_packet event carries (data=, in hex; len= is its\n"
"            length), 0 to 1500, default 256 (see trace's --snaplen).\n"
"            Needs a module of version 6.\n"
"\n"
"        --lazy [--hold SEC]\n"
"            Hold the first matching packet at its stage's hook instead\n"
"            of tracing it, until 'pktfilt ready' says that the scope is\n"
"            in set_ftrace_filter: set cannot patch for you, so the\n"
"            recipe is: set_ftrace_filter names one function that is\n"
"            never called (pktfilt_anchor [pktfilt]) while waiting;\n"
"            'pktfilt show' says \"lazy: holding\"; write your scope to\n"
"            set_ftrace_filter, then 'pktfilt ready', and the held\n"
"            packets are traced. A packet held SEC seconds (1 to 60,\n"
"            default 5) goes on untraced. pktfilt trace does all this\n"
"            by itself.\n";

static const char help_ready[] =
"    pktfilt ready\n"
"        For a filter armed with 'pktfilt set --lazy': the scope is in\n"
"        set_ftrace_filter now; the held packets are replayed, traced,\n"
"        and later ones are traced at once.\n";

static const char help_show[] =
"    pktfilt show\n"
"        Print the state of the module:\n"
"            state        armed, or idle when nothing is armed\n"
"            filter id    a number that grows with every 'set'\n"
"            filter       the armed filter, as the 'pktfilt set' command\n"
"                         that arms it again (copy and paste it); when\n"
"                         idle, \"last filter\" if the module reports one\n"
"            at           its stages (see STAGES), as --at takes them;\n"
"                         l4 for a module of version 1\n"
"            remaining    packets still to trace, or unlimited\n"
"            lazy         a lazy filter's (trace's, set --lazy): waiting\n"
"                         (nothing patched), holding (packets held while\n"
"                         the scope is patched) or armed\n"
"            last disarm  why the previous filter was disarmed\n"
"            rx           \"from ip_rcv() and ipv6_rcv() on\" where the\n"
"                         kernel's device receive cannot be hooked (arm64\n"
"                         before 6.2): rx graphs start at IP receive\n"
"        and the counters, which run from module load:\n"
"            seen         packets that went through pktfilt's hooks\n"
"            matched      packets that matched the filter's predicates\n"
"            traced       matched packets whose handler was traced\n"
"            not ready    matched but not traced: tracefs not prepared\n"
"                         (see TRACEFS PREPARATION)\n"
"            exhausted    matched after the count was used up\n"
"            gate missed  matched but not traced: the gate could not open\n"
"                         (not expected; never a half graph)\n"
"            followed     graphs of packets followed from an earlier stage\n"
"            dropped      traced packets freed with a drop reason\n"
"                         (the last two from version 2 modules only)\n"
"            held         matching packets a lazy filter held\n"
"            hold expired held packets that went on untraced: the bound\n"
"                         (--hold) passed, or the filter was disarmed\n"
"            hold flushed held packets dropped: their device went down\n"
"                         or away\n"
"            hold full    matching packets not held: 256 were held\n"
"                         (the last four from version 3 modules only)\n"
"        and, if there is one, a problem of the module's: a tracefs\n"
"        handler it cannot watch on this kernel (it then refuses to\n"
"        arm), or a protocol slot another module took over (it then\n"
"        stays loaded until that module gives the slot back).\n"
"        Needs CAP_NET_ADMIN: the filter names hosts, and the counters\n"
"        tell anyone who can send packets which of them match. (An older\n"
"        module shows the state and counters to any user of the initial\n"
"        network namespace: then only the filter is not shown.)\n"
"        A namespace is shown by its /run/netns name when it has one, an\n"
"        interface by name when pktfilt can see into its namespace,\n"
"        else both by number.\n";

static const char help_clear[] =
"    pktfilt clear\n"
"        Disarm the filter. Needs CAP_NET_ADMIN.\n";

static const char help_help[] =
"    pktfilt help [COMMAND], pktfilt COMMAND --help, pktfilt --help\n"
"        This text, or the part of it about COMMAND.\n"
"\n"
"    pktfilt --version\n"
"        The version of pktfilt and of the netlink interface it speaks.\n";

static const char help_predicates[] =
"PREDICATES\n"
"    A packet matches when it satisfies every predicate given: they are\n"
"    ANDed. A predicate not given matches any packet; with none at all,\n"
"    every packet matches. Write each as --opt VALUE or --opt=VALUE, and\n"
"    each at most once.\n"
"\n"
"    --proto tcp|udp|icmp|icmpv6\n"
"        The receive handler the packet enters. tcp and udp match over\n"
"        IPv4 and IPv6, icmp only over IPv4, icmpv6 only over IPv6.\n"
"\n"
"    --saddr ADDR[/LEN]\n"
"    --daddr ADDR[/LEN]\n"
"        Source or destination address: an IPv4 address (192.0.2.1) or\n"
"        an IPv6 one (2001:db8::1), with an optional prefix length LEN,\n"
"        0-32 for IPv4 and 0-128 for IPv6. Only the first LEN bits are\n"
"        compared; without LEN, the whole address. An IPv4 predicate never\n"
"        matches an IPv6 packet, nor an IPv6 one an IPv4 packet, even with\n"
"        LEN 0: 0.0.0.0/0 means \"any IPv4 packet\". --saddr and --daddr\n"
"        must be of the same family; with --proto icmp they must be IPv4,\n"
"        with --proto icmpv6 IPv6.\n"
"\n"
"    --sport P[-P]\n"
"    --dport P[-P]\n"
"        Source or destination port, or an inclusive range MIN-MAX, each\n"
"        0-65535, MIN <= MAX. Only TCP and UDP have ports: a port\n"
"        predicate never matches an ICMP or ICMPv6 packet, and is refused\n"
"        with --proto icmp or icmpv6.\n"
"\n"
"    --dev IFNAME\n"
"        The interface the packet was received on. The name is turned into\n"
"        an interface index once, by 'set': recreating the interface\n"
"        later makes a new index that does not match. With --netns, the\n"
"        name is looked up inside that namespace, which pktfilt enters for\n"
"        the purpose (needs CAP_SYS_ADMIN unless it is pktfilt's own).\n"
"        Without --netns, it is the interface of pktfilt's own namespace,\n"
"        and 'set' adds the --netns predicate for it: an index alone\n"
"        would match in every namespace (lo is 1 in all of them).\n"
"\n"
"    --ifindex N\n"
"        The same predicate by interface index, 1-4294967295. 'show'\n"
"        prints it when it cannot tell the interface's name. Without\n"
"        --netns, it matches that index in every namespace.\n"
"\n"
"    --netns PATH|INODE\n"
"        The network namespace the packet was received in: a namespace\n"
"        file, like /run/netns/NAME ('ip netns add NAME') or\n"
"        /proc/PID/ns/net, or the namespace's inode number in decimal, as\n"
"        'lsns -t net' or 'stat -L -c %i /proc/PID/ns/net' print it.\n"
"\n"
"    --mark VALUE[/MASK]\n"
"        The packet mark (skb->mark), as set by nftables 'meta mark set',\n"
"        iptables -j MARK or SO_MARK. Matches when\n"
"        (mark & MASK) == (VALUE & MASK). VALUE and MASK are 32-bit\n"
"        numbers, decimal or hexadecimal after 0x; MASK defaults to\n"
"        0xffffffff.\n";

static const char help_expr[] =
"FILTER EXPRESSIONS\n"
"    The arguments of set and trace that are not options (trace's before\n"
"    its --) are a filter expression in tcpdump's language, as\n"
"    pcap-filter(7) describes it: one quoted argument, such as 'udp and\n"
"    (port 53 or port 853)', or several words, joined by blanks; 1024\n"
"    bytes at most. libpcap compiles it in pktfilt for raw IP packets\n"
"    (DLT_RAW) into a classic BPF program, which the module runs on each\n"
"    packet from its IP header on, at every stage: offsets such as ip[8],\n"
"    tcp[13] or ip6[40] count from the IP header, as in tcpdump. It is\n"
"    ANDed with the predicates, which are tested first: a packet must\n"
"    pass both. Give what you can as predicates, the rest as an\n"
"    expression, which costs more per packet.\n"
"\n"
"    There is no link layer: an expression with link-layer words (ether,\n"
"    vlan, arp, broadcast, ...) is refused with libpcap's message and a\n"
"    note saying so, and so is a link-layer load (ether[0], ppp[...],\n"
"    slip[...], link[...]), which on raw IP would read the IP header:\n"
"    write ip[...] or ip6[...]. inbound, outbound and ifindex N are\n"
"    refused: libpcap compiles them to loads of the kernel's packet\n"
"    metadata, which it gives no meaning outside a live capture; --at\n"
"    says the direction, --dev or --ifindex the interface. protochain\n"
"    compiles to a loop, which the kernel's BPF checker refuses: it is\n"
"    refused too, with what to write instead. Each is a usage error, as\n"
"    is any expression libpcap cannot compile. The netmask is unknown, as\n"
"    for tcpdump -r: 'ip broadcast' matches the destinations\n"
"    255.255.255.255 and 0.0.0.0 only; name a subnet's broadcast address\n"
"    (dst host 10.1.255.255). 'pktfilt show' prints the expression as\n"
"    it was written, quoted as one shell word of the 'pktfilt set'\n"
"    command line. A module of pktfilt version 1 takes no expression.\n";

static const char help_stages[] =
"STAGES\n"
"    --at names where a packet is matched and its graph starts, one or\n"
"    more of the following, comma-separated, each at most once. Each\n"
"    stage's graph has its own root function, the one 'pktfilt trace'\n"
"    gives set_graph_function:\n"
"\n"
"    rx  The receive from the device on (trace's default). Root\n"
"        netif_receive_skb_core, which the module calls for a matching\n"
"        packet in place of the kernel's own receive, one skb at a time\n"
"        or taken in order out of a NAPI batch. The graph holds the\n"
"        device receive core (generic XDP, VLAN untagging, taps such as\n"
"        tcpdump's, tc ingress, netfilter ingress, a bridge's, bond's or\n"
"        macvlan's handler, the protocol dispatch), then IP receive:\n"
"        netfilter PREROUTING, the routing decision, then either\n"
"        LOCAL_IN and the protocol handler down to the socket, or\n"
"        FORWARD and the output of the forwarded packet down to the next\n"
"        device's transmit. A packet the module does not see there (a\n"
"        VLAN tag still in the frame) is traced from IP receive on, root\n"
"        ip_rcv or ipv6_rcv. Everything --at l4 shows is in it. --dev is\n"
"        the input device.\n"
"\n"
"    tx  IP output of a locally generated packet, from a netfilter\n"
"        LOCAL_OUT hook of the first priority. Root nf_hook_slow: the\n"
"        LOCAL_OUT hooks after the module's (netfilter OUTPUT,\n"
"        conntrack), then the output the kernel would have gone on with\n"
"        (routing, POSTROUTING, the neighbour, the qdisc and the driver's\n"
"        transmit: veth_xmit, virtio's start_xmit, loopback_xmit), each\n"
"        once. --dev is the output device.\n"
"\n"
"    l4  The protocol receive handler only, as pktfilt version 1 did:\n"
"        root tcp_v4_rcv, udp_rcv, icmp_rcv, tcp_v6_rcv, udpv6_rcv or\n"
"        icmpv6_rcv: socket lookup and delivery, without IP, netfilter\n"
"        and routing.\n"
"\n"
"    rx and tx see every IP protocol (the trace event names others by\n"
"    number, e.g. proto=0x32); l4 only TCP, UDP, ICMP and ICMPv6.\n"
"    A packet that matched at one stage is followed to its later\n"
"    stages (sent, then received in another namespace; received, then\n"
"    forwarded), even if NAT changed it, and traced there under the\n"
"    same packet id, without counting against --count again: --count\n"
"    counts packets, not graphs. A stage reached while another stage's\n"
"    graph is open on that CPU (a reply sent from inside an rx graph)\n"
"    is part of that graph. When a followed packet is freed, a\n"
"    pktfilt_free trace event tells how: the kernel's drop reason and\n"
"    the function that dropped it, or CONSUMED.\n"
"\n"
"    A module of pktfilt version 1 (netlink family version 1) knows l4\n"
"    only: with it, --at rx or tx is refused, and without --at pktfilt\n"
"    traces at l4 and says so. A module newer than pktfilt is warned of.\n"
"    A pktfilt of version 1 asking a newer module to show a filter armed\n"
"    at another stage, or with an expression, is refused with a message\n"
"    saying why, rather than shown the filter as if at l4.\n";

static const char help_tracefs[] =
"TRACEFS PREPARATION\n"
"    'pktfilt trace' does all of this itself, and undoes it. 'pktfilt\n"
"    set' does not set the tracer up: do it once, as root, before\n"
"    arming a filter:\n"
"\n"
"        cd /sys/kernel/tracing\n"
"        cat /proc/sys/kernel/pid_max > set_ftrace_pid\n"
"        echo 1 > events/pktfilt/enable\n"
"        echo function_graph > current_tracer\n"
"\n"
"    The first line limits function tracing to a PID that no task can\n"
"    have, so that function_graph records nothing by itself: the module\n"
"    lets through the traced packet's handler only (5.16 and earlier\n"
"    refuse pid_max itself: write pid_max - 1 there, a PID no task has\n"
"    in practice; 'pktfilt trace' does). The second enables\n"
"    pktfilt's trace events, which mark each traced packet in the trace.\n"
"    The third starts the tracer. Then read the result from trace or\n"
"    trace_pipe. 'set' refuses to arm a filter while set_ftrace_pid is\n"
"    empty; a packet that matches while tracing is not in place is not\n"
"    traced and counts as \"not ready\". To undo: echo nop > current_tracer;\n"
"    echo > set_ftrace_pid; echo 0 > events/pktfilt/enable. Where tracefs\n"
"    is not mounted there, it is at /sys/kernel/debug/tracing, or:\n"
"    mount -t tracefs nodev /sys/kernel/tracing.\n";

static const char help_exit[] =
"EXIT STATUS\n"
"    0   Success.\n"
"    1   Runtime error: the module is not loaded, permission denied, the\n"
"        kernel refused the request (pktfilt prints its reason), a\n"
"        namespace could not be entered. For report: a packet's graph\n"
"        is incomplete or the trace lost events, or a file could not be\n"
"        read or written. For trace: the same, or fewer packets than\n"
"        --count were traced, another trace is running, the kernel\n"
"        refused a --functions glob, or a tracefs setting could not be\n"
"        put back as it was.\n"
"    2   Usage error: unknown command or option, a stray argument, a\n"
"        missing, malformed or inconsistent value, an interface or\n"
"        namespace that does not exist. Nothing was sent to the kernel.\n";

static const char examples_set[] =
"    Trace the next TCP packet for port 22 from 192.0.2.0/24:\n"
"        pktfilt set --proto tcp --saddr 192.0.2.0/24 --dport 22\n"
"\n"
"    Trace the next echo reply from 192.0.2.1, and read the trace:\n"
"        pktfilt set --proto icmp --saddr 192.0.2.1\n"
"        ping -c 1 192.0.2.1\n"
"        cat /sys/kernel/tracing/trace\n"
"\n"
"    Trace the next 5 DNS answers received on eth0 of namespace blue:\n"
"        pktfilt set --proto udp --sport 53 --netns /run/netns/blue \\\n"
"                    --dev eth0 --count 5\n"
"\n"
"    Trace the next packet to 192.0.2.7 port 53 sent by this host, and its\n"
"    later stages (received in a namespace, forwarded):\n"
"        pktfilt set --daddr 192.0.2.7 --dport 53 --at tx,rx\n"
"\n"
"    Trace the next 5 DNS packets received, plain or over TLS, as tcpdump\n"
"    would select them:\n"
"        pktfilt set --at rx 'udp port 53 or tcp port 853' --count 5\n"
"\n"
"    Trace IPv6 packets to ports 8000-8099 marked 0x10 in the low byte of\n"
"    their mark, until cleared:\n"
"        pktfilt set --daddr=::/0 --dport=8000-8099 --mark=0x10/0xff \\\n"
"                    --count=0\n";

static const char examples_show[] =
"    See what is armed and what it did:\n"
"        pktfilt show\n";

static const char examples_ready[] =
"    Wait with nothing patched, then trace the held packet:\n"
"        pktfilt set --lazy --proto udp --dport 53\n"
"        echo pktfilt_anchor > /sys/kernel/tracing/set_ftrace_filter\n"
"        # pktfilt show says \"lazy: holding\": then\n"
"        echo 'udp_*' > /sys/kernel/tracing/set_ftrace_filter\n"
"        pktfilt ready\n";

static const char examples_clear[] =
"    Disarm:\n"
"        pktfilt clear\n";

static int cmd_set(const struct pf_cmd *cmd, int argc, char **argv);
static int cmd_show(const struct pf_cmd *cmd, int argc, char **argv);
static int cmd_clear(const struct pf_cmd *cmd, int argc, char **argv);
static int cmd_ready(const struct pf_cmd *cmd, int argc, char **argv);

static const struct pf_cmd pf_cmds[] = {
	{ "set",   cmd_set,   PKTFILT_CMD_SET,
	  "pktfilt set [PREDICATE]... [--count N] [--at STAGE[,STAGE]...] [EXPRESSION]",
	  help_set, examples_set },
	{ "show",  cmd_show,  PKTFILT_CMD_GET,
	  "pktfilt show", help_show, examples_show },
	{ "clear", cmd_clear, PKTFILT_CMD_CLEAR,
	  "pktfilt clear", help_clear, examples_clear },
	{ "ready", cmd_ready, PKTFILT_CMD_READY,
	  "pktfilt ready", help_ready, examples_ready },
	{ "report", pf_report_run, PKTFILT_CMD_UNSPEC,
	  pf_report_synopsis, pf_report_help, pf_report_examples },
	{ "trace", pf_trace_run, PKTFILT_CMD_SET,
	  pf_trace_synopsis, pf_trace_help, pf_trace_examples },
	{ "diff", pf_diff_run, PKTFILT_CMD_UNSPEC,
	  pf_diff_synopsis, pf_diff_help, pf_diff_examples },
	{ "merge", pf_merge_run, PKTFILT_CMD_UNSPEC,
	  pf_merge_synopsis, pf_merge_help, pf_merge_examples },
	{ "check", pf_check_run, PKTFILT_CMD_UNSPEC,
	  pf_check_synopsis, pf_check_help, pf_check_examples },
};

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define NR_CMDS		ARRAY_SIZE(pf_cmds)

static void print_synopsis(FILE *out)
{
	size_t i;

	fprintf(out, "SYNOPSIS\n");
	for (i = 0; i < NR_CMDS; i++)
		fprintf(out, "    %s\n", pf_cmds[i].synopsis);
	fprintf(out,
		"    pktfilt help [COMMAND]\n"
		"    pktfilt --help | --version\n"
		"\n"
		"    PREDICATE := --proto tcp|udp|icmp|icmpv6 |\n"
		"                 --saddr ADDR[/LEN] | --daddr ADDR[/LEN] |\n"
		"                 --sport P[-P] | --dport P[-P] |\n"
		"                 --dev IFNAME | --ifindex N | --netns PATH|INODE |\n"
		"                 --mark VALUE[/MASK]\n"
		"    STAGE := l4 | rx | tx\n"
		"    EXPRESSION := a pcap-filter(7) expression, as tcpdump takes it\n");
}

static void print_help(FILE *out)
{
	size_t i;

	fprintf(out, "%s\n", help_name);
	print_synopsis(out);
	fprintf(out, "\n%s\nCOMMANDS\n", help_description);
	for (i = 0; i < NR_CMDS; i++)
		fprintf(out, "%s\n", pf_cmds[i].help);
	fprintf(out, "%s\n%s\n%s\n%s\n%s\n%s\nEXAMPLES\n", help_help,
		help_predicates, help_expr, help_stages, help_tracefs,
		help_exit);
	for (i = 0; i < NR_CMDS; i++)
		fprintf(out, "%s%s", i ? "\n" : "", pf_cmds[i].examples);
}

static void print_cmd_help(FILE *out, const struct pf_cmd *cmd)
{
	fprintf(out, "SYNOPSIS\n    %s\n\nDESCRIPTION\n%s", cmd->synopsis,
		cmd->help);
	if (cmd->run == cmd_set)
		fprintf(out, "\n%s\n%s\n%s\n%s", help_predicates, help_expr,
			help_stages, help_tracefs);
	if (cmd->run == pf_trace_run)
		fprintf(out, "\n%s\n%s\n%s", help_predicates, help_expr,
			help_stages);
	fprintf(out, "\n%s\nEXAMPLES\n%s", help_exit, cmd->examples);
}

static void print_version(void)
{
	printf("pktfilt %s (netlink family version %d)\n", PKTFILT_VERSION,
	       PKTFILT_GENL_VERSION);
}

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "pktfilt: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n" HINT "\n");
	return EXIT_USAGE;
}

static const struct pf_cmd *find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < NR_CMDS; i++)
		if (!strcmp(name, pf_cmds[i].name))
			return &pf_cmds[i];
	return NULL;
}

static int open_nl(struct pf_nl **nl)
{
	int err = pf_nl_open(nl);

	if (err == -ENOENT)
		fprintf(stderr,
			"pktfilt: the pktfilt module is not loaded (insmod pktfilt.ko)\n");
	else if (err)
		fprintf(stderr, "pktfilt: cannot talk to the kernel: %s\n",
			strerror(-err));
	return err ? EXIT_RUNTIME : EXIT_OK;
}

/* The kernel's own words first, then ours. */
static int kernel_error(const struct pf_cmd *cmd, struct pf_nl *nl, int err)
{
	const char *msg = pf_nl_extack(nl);

	/* The kernel would only say the same thing about CAP_NET_ADMIN. */
	if (err == -EPERM && !msg) {
		fprintf(stderr,
			"pktfilt: permission denied: %s needs CAP_NET_ADMIN\n",
			cmd->name);
		return EXIT_RUNTIME;
	}
	if (msg)
		fprintf(stderr, "pktfilt: kernel: %s\n", msg);
	fprintf(stderr, "pktfilt: %s: %s\n", cmd->name, strerror(-err));
	return EXIT_RUNTIME;
}

/*
 * Send @cmd's request, filled by @filter if not NULL (a SET's made fit
 * for the loaded module's version first: pf_stages_compat()); reply to
 * @reply.
 * With @eperm_quiet, an EPERM the core answered (no extack) is returned as
 * -EPERM and not reported.
 */
static int request_eperm(const struct pf_cmd *cmd,
			 struct pf_filter *filter, pf_nl_reply_fn reply,
			 void *arg, int eperm_quiet)
{
	struct pf_nl *nl;
	struct nl_msg *msg;
	int ret, err;

	ret = open_nl(&nl);
	if (ret)
		return ret;
	if (filter && cmd->nl_cmd == PKTFILT_CMD_SET) {
		struct pf_filter f = *filter;
		char why[512];

		switch (pf_stages_compat(&f, pf_nl_version(nl),
					 PF_SET_DEFAULT_STAGES, why,
					 sizeof(why))) {
		case PF_COMPAT_FAIL:
			fprintf(stderr, "pktfilt: %s: %s\n", cmd->name, why);
			pf_nl_close(nl);
			return EXIT_RUNTIME;
		case PF_COMPAT_OK:
			break;
		default:
			fprintf(stderr, "pktfilt: %s\n", why);
			break;
		}
		*filter = f;
	}
	msg = pf_nl_msg(nl, cmd->nl_cmd);
	if (!msg || (filter && pf_nl_put_filter(msg, filter))) {
		fprintf(stderr, "pktfilt: %s: cannot build the request\n",
			cmd->name);
		nlmsg_free(msg);
		pf_nl_close(nl);
		return EXIT_RUNTIME;
	}
	err = pf_nl_request(nl, msg, reply, arg);
	if (err == -EPERM && eperm_quiet && !pf_nl_extack(nl))
		ret = -EPERM;
	else if (err)
		ret = kernel_error(cmd, nl, err);
	else if (pf_nl_extack(nl))	/* a warning with the ack */
		fprintf(stderr, "pktfilt: kernel: %s\n", pf_nl_extack(nl));
	pf_nl_close(nl);
	return ret;
}

static int request(const struct pf_cmd *cmd, struct pf_filter *filter,
		   pf_nl_reply_fn reply, void *arg)
{
	return request_eperm(cmd, filter, reply, arg, 0);
}

static int request_quiet_eperm(const struct pf_cmd *cmd,
			       struct pf_filter *filter,
			       pf_nl_reply_fn reply, void *arg)
{
	return request_eperm(cmd, filter, reply, arg, 1);
}

static int no_arguments(int argc, char **argv)
{
	if (argc < 1)
		return EXIT_OK;
	if (argv[0][0] == '-' && argv[0][1])
		return usage_error("unknown option '%s'", argv[0]);
	return usage_error("unexpected argument '%s'", argv[0]);
}

/* set's own options, --lazy and --hold SEC, taken out of @argv. */
static int take_lazy(int *argc, char **argv, bool *lazy, unsigned long *hold)
{
	const char *val;
	int i, o = 0, n = *argc;

	*lazy = false;
	*hold = 0;
	for (i = 0; i < n; i++) {
		if (!strcmp(argv[i], "--lazy")) {
			*lazy = true;
			continue;
		}
		val = NULL;
		if (!strcmp(argv[i], "--hold")) {
			if (i + 1 >= n)
				return usage_error("%s", "--hold: missing value");
			val = argv[++i];
		} else if (!strncmp(argv[i], "--hold=", 7)) {
			val = argv[i] + 7;
		}
		if (val) {
			if (pf_parse_decimal(val, 60, hold) || !*hold)
				return usage_error("--hold %s: a number of seconds, 1 to 60",
						   val);
			continue;
		}
		argv[o++] = argv[i];
	}
	*argc = o;
	if (*hold && !*lazy)
		return usage_error("%s", "--hold is for --lazy");
	return EXIT_OK;
}

static int cmd_set(const struct pf_cmd *cmd, int argc, char **argv)
{
	struct pf_filter filter;
	char err[PF_EXPR_MAX + 512];
	unsigned long hold;
	bool lazy;
	int ret = take_lazy(&argc, argv, &lazy, &hold);

	if (ret)
		return ret;
	switch (pf_parse_filter(argc, argv, &filter, &pf_system_resolver, err,
				sizeof(err))) {
	case PF_PARSE_OK:
		if (lazy)
			filter.flags |= PKTFILT_F_LAZY;
		filter.hold_ms = (__u32)(hold * 1000);
		return request(cmd, &filter, NULL, NULL);
	case PF_PARSE_SYNTAX:
		return usage_error("%s", err);
	case PF_PARSE_SYSTEM:
		fprintf(stderr, "pktfilt: %s\n", err);
		return EXIT_RUNTIME;
	default:
		fprintf(stderr, "pktfilt: %s\n", err);
		return EXIT_USAGE;
	}
}

static int cmd_show(const struct pf_cmd *cmd, int argc, char **argv)
{
	struct pf_status st;
	int ret = no_arguments(argc, argv);

	if (ret)
		return ret;
	memset(&st, 0, sizeof(st));
	ret = request_quiet_eperm(cmd, NULL, pf_show_decode, &st);
	if (ret == -EPERM) {
		/* An older module gives the counters without CAP_NET_ADMIN. */
		struct pf_cmd stats = *cmd;

		stats.nl_cmd = PKTFILT_CMD_STATS;
		ret = request(&stats, NULL, pf_show_decode, &st);
		st.filter_hidden = 1;
	}
	if (!ret)
		pf_show_print(stdout, &st, &pf_system_resolver);
	return ret;
}

static int cmd_clear(const struct pf_cmd *cmd, int argc, char **argv)
{
	int ret = no_arguments(argc, argv);

	return ret ? ret : request(cmd, NULL, NULL, NULL);
}

/* READY for the armed lazy filter: its id from a GET first. */
static int cmd_ready(const struct pf_cmd *cmd, int argc, char **argv)
{
	struct pf_cmd get = *cmd;
	struct pf_status st;
	struct pf_nl *nl;
	int ret = no_arguments(argc, argv), err;

	if (ret)
		return ret;
	memset(&st, 0, sizeof(st));
	get.nl_cmd = PKTFILT_CMD_GET;
	ret = request(&get, NULL, pf_show_decode, &st);
	if (ret)
		return ret;
	if (!st.has_id || st.state != PKTFILT_STATE_ARMED) {
		fprintf(stderr, "pktfilt: ready: no filter is armed\n");
		return EXIT_RUNTIME;
	}
	ret = open_nl(&nl);
	if (ret)
		return ret;
	err = pf_nl_ready(nl, st.id);
	if (err == -ENOMEM)
		fprintf(stderr, "pktfilt: ready: cannot build the request\n");
	ret = err == -ENOMEM ? EXIT_RUNTIME :
	      err ? kernel_error(cmd, nl, err) : EXIT_OK;
	pf_nl_close(nl);
	return ret;
}

static int is_help(const char *arg)
{
	return !strcmp(arg, "--help") || !strcmp(arg, "-h");
}

static int cmd_help(int argc, char **argv)
{
	const struct pf_cmd *cmd;

	if (argc < 1) {
		print_help(stdout);
		return EXIT_OK;
	}
	if (argc > 1)
		return usage_error("help: unexpected argument '%s'", argv[1]);
	cmd = find_cmd(argv[0]);
	if (!cmd)
		return usage_error("help: unknown command '%s'", argv[0]);
	print_cmd_help(stdout, cmd);
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	const struct pf_cmd *cmd;
	int i;

	if (argc < 2) {
		print_synopsis(stderr);
		fprintf(stderr, "\n" HINT "\n");
		return EXIT_USAGE;
	}
	if (is_help(argv[1]))
		return cmd_help(0, NULL);
	if (!strcmp(argv[1], "--version")) {
		print_version();
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "help"))
		return cmd_help(argc - 2, argv + 2);

	cmd = find_cmd(argv[1]);
	if (!cmd) {
		if (argv[1][0] == '-')
			return usage_error("unknown option '%s'", argv[1]);
		return usage_error("unknown command '%s'", argv[1]);
	}
	/*
	 * "--help" anywhere wins, as in git: no half-parsed command runs.
	 * Not after "--": that is trace's COMMAND, or report's file name.
	 */
	for (i = 2; i < argc && strcmp(argv[i], "--"); i++) {
		if (is_help(argv[i])) {
			print_cmd_help(stdout, cmd);
			return EXIT_OK;
		}
	}
	return cmd->run(cmd, argc - 2, argv + 2);
}
