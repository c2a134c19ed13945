# SPDX-License-Identifier: GPL-2.0
# Helpers for the pktfilt VM tests; sourced by busybox sh in the guest after
# ../lib.sh. The topology (see topo_setup):
#
#   ns a  veth-a  10.9.0.1 10.9.0.3 fd00::1 fd00::3 --- veth-b  10.9.0.2 10.9.0.4 fd00::2 fd00::4  ns b
#   ns a  veth-a2 (no address)                     --- veth-b2 (no address)                       ns b
#   ns c  veth-c  10.9.0.1 fd00::1                 --- veth-d  10.9.0.2 fd00::2                   ns d
#
# ns c/d repeat a/b's addresses: a packet there differs from one into b only
# by its netns. veth-a2/veth-b2 carry a/b traffic when a test routes it there:
# it then differs only by its input interface.

T=/sys/kernel/tracing
HANDLERS="tcp_v4_rcv udp_rcv icmp_rcv tcp_v6_rcv udpv6_rcv icmpv6_rcv"
PKTFILT_KO=/pktfilt/pktfilt.ko

# mac NS DEV
mac() { ip netns exec "$1" cat "/sys/class/net/$2/address"; }

# Static neighbours: no ARP/ND traffic of its own interferes with a test.
neigh_static() {
	ns=$1 dev=$2 peer_ns=$3 peer_dev=$4
	shift 4
	m=$(mac "$peer_ns" "$peer_dev")
	for addr in "$@"; do
		ip -n "$ns" neigh replace "$addr" lladdr "$m" dev "$dev" nud permanent
	done
}

topo_setup() {
	ns_setup
	ip -n a addr add 10.9.0.3/24 dev veth-a
	ip -n a addr add fd00::3/64 dev veth-a nodad
	ip -n b addr add 10.9.0.4/24 dev veth-b
	ip -n b addr add fd00::4/64 dev veth-b nodad
	ip link add veth-a2 netns a type veth peer name veth-b2 netns b
	ip -n a link set veth-a2 up
	ip -n b link set veth-b2 up
	ip netns add c
	ip netns add d
	ip link add veth-c netns c type veth peer name veth-d netns d
	ip -n c link set lo up
	ip -n d link set lo up
	ip -n c addr add 10.9.0.1/24 dev veth-c
	ip -n c addr add fd00::1/64 dev veth-c nodad
	ip -n d addr add 10.9.0.2/24 dev veth-d
	ip -n d addr add fd00::2/64 dev veth-d nodad
	ip -n c link set veth-c up
	ip -n d link set veth-d up
	for ns in a b c d; do
		ip netns exec $ns sysctl -qw net.ipv4.conf.all.rp_filter=0
		ip netns exec $ns sysctl -qw net.ipv4.conf.default.rp_filter=0
	done
	neigh_static a veth-a b veth-b 10.9.0.2 10.9.0.4 fd00::2 fd00::4
	neigh_static b veth-b a veth-a 10.9.0.1 10.9.0.3 fd00::1 fd00::3
	neigh_static a veth-a2 b veth-b2 10.9.0.2 fd00::2
	neigh_static b veth-b2 a veth-a2 10.9.0.1 fd00::1
	neigh_static c veth-c d veth-d 10.9.0.2 fd00::2
	neigh_static d veth-d c veth-c 10.9.0.1 fd00::1
	# No router solicitations or MLD reports while a test runs.
	for ns in a b c d; do
		ip netns exec $ns sysctl -qw net.ipv6.conf.all.router_solicitations=0
		ip netns exec $ns sysctl -qw net.ipv6.conf.default.router_solicitations=0
	done
}

# Route a's traffic to b's first addresses over veth-a2/veth-b2 (on) or back.
via_second_link() {
	if [ "$1" = on ]; then
		ip -n a route add 10.9.0.2/32 dev veth-a2 src 10.9.0.1
		ip -n a -6 route add fd00::2/128 dev veth-a2 src fd00::1
	else
		ip -n a route del 10.9.0.2/32 dev veth-a2
		ip -n a -6 route del fd00::2/128 dev veth-a2
	fi
}

# skb_events_hold 1|0: the skb:kfree_skb and skb:consume_skb events on
# (off) in the top trace array and in an instance of their own: two probes
# on each tracepoint, so that the module's free probes, registered at
# insmod and removed at rmmod, join and leave the tracepoints' iterators
# and nothing in the code that frees every packet is re-patched (with one
# probe a tracepoint's static call goes straight to it, and a second one
# re-patches the call). QEMU's TCG ran stale copies of that text on the
# other vCPU: int3 oopses at sk_skb_reason_drop+0x36 and +0xa2 on 7.2 in
# harden's rmmodcount (selftests/vm/README.md, "Known emulator faults").
# What the events record is not read.
skb_events_hold() {
	_h=$T/instances/pf-skbhold
	[ "$1" = 1 ] && mkdir -p $_h 2>/dev/null
	for _e in kfree_skb consume_skb; do
		for _d in $T $_h; do
			[ -e $_d/events/skb/$_e/enable ] && echo "$1" > $_d/events/skb/$_e/enable
		done
	done
	[ "$1" = 0 ] && rmdir $_h 2>/dev/null
	return 0
}

ifindex() { ip netns exec "$1" cat "/sys/class/net/$2/ifindex"; }
netns_inode() { stat -L -c %i "/run/netns/$1"; }

# The manual recipe of docs/usage.md ("By hand"). function_graph is switched
# on once per boot and left on: every switch patches tens of thousands of call
# sites with cross-CPU IPIs, and under heavy host load QEMU TCG sometimes never
# completes one (a soft lockup in text_poke_bp seen without pktfilt loaded
# at all). Between cases only tracing_on, the buffer and the event change.
trace_start() {
	echo 0 > $T/tracing_on
	idle_pid > $T/set_ftrace_pid
	echo 0 > $T/options/funcgraph-irqs
	# Graphs only from the handlers: an interrupt that lands in the few
	# instructions between the gate and the handler stays out
	# (docs/output.md, "Reading the output").
	# Written only when it differs: ftrace matches each name against
	# every function it knows (0.4-1.6 s a write under TCG), and the
	# tests start a trace hundreds of times.
	if [ "$(grep -v '^#' $T/set_graph_function | sort | tr '\n' ' ')" != \
	     "$(echo "$HANDLERS" | tr ' ' '\n' | sort | tr '\n' ' ')" ]; then
		echo "$HANDLERS" > $T/set_graph_function
	fi
	if [ "$(cat $T/current_tracer)" != function_graph ]; then
		echo function_graph > $T/current_tracer
	fi
	echo > $T/trace
	echo 1 > $T/events/pktfilt/enable
	echo 1 > $T/tracing_on
}

# gate_optimized: wait (2 s at most) until the gate's kprobe is optimized,
# where the kernel optimizes kprobes.
gate_optimized() {
	[ "$(cat /proc/sys/debug/kprobes-optimization 2>/dev/null)" = 1 ] || return 0
	_i=0
	while [ $_i -lt 40 ] &&
		! grep 'trace_ignore_this_task' /sys/kernel/debug/kprobes/list 2>/dev/null |
			grep -q OPTIMIZED; do
		_i=$((_i + 1))
		sleep 0.05
	done
}

# The gate's kprobe on trace_ignore_this_task() is registered and then
# optimized at insmod, and removed at rmmod. With set_ftrace_pid set, every
# context switch runs that function, and QEMU's TCG then ran stale copies
# of its re-patched text on the other vCPU (int3 oopses in the kprobe
# optimizer at trace_ignore_this_task+0x5 on 6.12, frozen vCPUs on 6.1;
# selftests/vm/README.md, "Known emulator faults"). So the cases patch it
# cold: set_ftrace_pid empty (trace_start sets it again; emptying it
# disarms an armed filter, through the tracefs watch), and insmod waits for
# the optimization.
pf_insmod() {
	echo > $T/set_ftrace_pid
	insmod $PKTFILT_KO "$@" || return
	gate_optimized
}
pf_rmmod() {
	echo > $T/set_ftrace_pid
	rmmod pktfilt
}

# buffer_kb: the ring buffer's size per CPU in KB, in a form buffer_size_kb
# takes back (before any tracer it reads "7 (expanded: 1408)").
buffer_kb() { sed 's/.*expanded: \([0-9]*\).*/\1/' $T/buffer_size_kb; }

# buffer_resize KB: the ring buffer KB per CPU, its size kept for
# buffer_restore (one at a time: not nested). A count of whole graphs needs
# room: a graph is some 5,000 lines on the debug kernel (KASAN, kmemleak),
# and an overrun loses the first ones, not the module's count.
buffer_resize() {
	pf_saved_kb=$(buffer_kb)
	echo "$1" > $T/buffer_size_kb
}
# buffer_restore: the ring buffer back to the size buffer_resize found.
buffer_restore() { echo "$pf_saved_kb" > $T/buffer_size_kb; }

# pktfilt's own calls inside a graph (issue 31): a graph must hold only
# what the kernel did for the packet. pktfilt's code runs inside an open
# graph where the kernel calls into it: its free probes at the kfree_skb
# and consume_skb tracepoints, and its hooks when a traced packet passes
# another stage (the L4 handler wrapped at the protocol dispatch, the
# LOCAL_OUT hook of a reply sent from the receive path). Its own functions
# have no ftrace call site (module/Kbuild; own_calls flags any that shows
# as "NAME [pktfilt]()"), but a kernel function it calls is traced and shows as a
# direct child of the kernel function that called into pktfilt. These are
# the kernel functions pktfilt's hook and probe code could call there
# (header walks, the filter program's helpers, bottom halves), and the
# callers they would show under; the kernel itself calls none of them
# directly from those callers. The kernel's spinlock functions are checked
# where the calls are, in the module's relocations (build-test: it calls
# none). In a graph a bare _raw_spin_lock/_raw_spin_unlock pair did show
# under consume_skb, before pktfilt_free, on 7.2 (journey.sh tool, once,
# 2026-11-27) with a module that calls no spinlock function: most likely
# an interrupt's exit path after the hardirq count dropped, which
# function_graph records at the interrupted depth with funcgraph-irqs off
# (pktfilt trace's setting), the interrupt having waited for the free
# probe's interrupts-off section to end. Not verified further.
PF_OWN_CALLS="ipv6_skip_exthdr ipv6_find_hdr skb_copy_bits __local_bh_enable_ip
bpf_skb_load_helper_8 bpf_skb_load_helper_16 bpf_skb_load_helper_32
__skb_get_pay_offset __skb_get_nlattr __skb_get_nlattr_nest bpf_prog_run
__bpf_prog_run32 kstrtobool"
PF_HOOK_CALLERS="sk_skb_reason_drop kfree_skb_reason kfree_skb_list_reason
consume_skb napi_consume_skb __consume_stateless_skb kfree_skb_partial
nf_hook_slow ip_protocol_deliver_rcu ip6_protocol_deliver_rcu"

# own_calls [FILE]: the lines of FILE (/tmp/trace.txt) where a function of
# PF_OWN_CALLS is called directly by one of PF_HOOK_CALLERS, as
# "LINE: CALLER > FUNCTION", and where a function of pktfilt's own shows
# (a "NAME [pktfilt]()" line: the module has no traceable function but
# pktfilt_anchor, which is never called; module/Kbuild), as
# "LINE: CALLER > NAME [pktfilt]". Empty if none.
own_calls() {
	awk -v own="$PF_OWN_CALLS" -v callers="$PF_HOOK_CALLERS" '
	BEGIN {
		n = split(own, a, /[ \n]+/); for (i = 1; i <= n; i++) if (a[i] != "") isown[a[i]] = 1
		n = split(callers, a, /[ \n]+/); for (i = 1; i <= n; i++) if (a[i] != "") iscaller[a[i]] = 1
	}
	match($0, /^ *[0-9]+\)/) {
		c = substr($0, RSTART, RLENGTH) + 0
		s = $0
		if (!sub(/^[^|]*\|/, "", s))
			next
		match(s, /^ */)
		d = RLENGTH
		s = substr(s, RLENGTH + 1)
		if (s ~ /^}/) {
			fn[c, d] = ""
			next
		}
		if (s !~ /^[A-Za-z_][A-Za-z0-9_.]*( \[[A-Za-z0-9_]+\])?\(\)/)
			next
		name = s
		sub(/[ (].*/, "", name)
		parent = fn[c, d - 2]
		if (isown[name] && iscaller[parent])
			print NR ": " parent " > " name
		else if (s ~ /^[^ (]+ \[pktfilt\]\(/)
			print NR ": " parent " > " name " [pktfilt]"
		fn[c, d] = (s ~ /\{ *$/) ? name : ""
	}' "${1:-/tmp/trace.txt}"
}

# expect_no_own_calls NAME [FILE]: fails NAME if own_calls finds any;
# silent otherwise (trace_stop asks it of every trace a test captures).
expect_no_own_calls() {
	_oc=$(own_calls "${2:-/tmp/trace.txt}" | head -5)
	[ -z "$_oc" ] && return 0
	fail "$1: the graphs hold calls of pktfilt's own code" "$(echo "$_oc" | tr '\n' ';')"
	# The first one with its neighbours, to tell ours from the kernel's.
	_ol=$(echo "$_oc" | head -1 | cut -d: -f1)
	sed -n "$((_ol > 12 ? _ol - 12 : 1)),$((_ol + 4))p" "${2:-/tmp/trace.txt}" | sed 's/^/# own_calls: /'
	return 1
}

trace_stop() {
	echo 0 > $T/tracing_on
	cat $T/trace > /tmp/trace.txt
	echo > $T/trace
	[ -e $T/events/pktfilt/enable ] && echo 0 > $T/events/pktfilt/enable
	expect_no_own_calls "${name:-trace}"
	return 0
}

# At the very end: tracefs as the boot left it.
trace_teardown() {
	echo 0 > $T/tracing_on
	echo nop > $T/current_tracer
	echo > $T/set_ftrace_pid
	echo > $T/set_graph_function
	echo > $T/trace
	echo 1 > $T/tracing_on
}

# The roots of the graphs in /tmp/trace.txt, one function name per line: on
# each CPU, a function entered while no graph is open there. A graph is open
# from a root "f() {" to the closing brace at the root's depth (a leaf root
# "f();" is a whole graph). Three things ftrace does are why this is not just
# "the lines at depth 0" (each seen about once in 5,000 graphs):
#  - an interrupt that arrives in ftrace's return path of the root, after
#    the depth went back down and before the graph's "it is nested" state is
#    cleared, records irq_enter_rcu() at depth 0 inside the root's braces
#    (on RT also the preemption at the interrupt's exit, with braces of its
#    own): part of that graph, not graphs of their own;
#  - one that arrives in ftrace's entry path of the root, after that state
#    is set and before the root's line is written, records irq_enter_rcu()
#    and the like one level deeper just before the root's line: a prelude,
#    dropped when a shallower root follows on that CPU;
#  - a graph can be recorded one level deeper than the CPU's depth, its
#    root at depth 1: still a root, nothing open encloses it.
# trace_roots -n: "LINE NAME", LINE the root's line number in the file.
trace_roots() {
	awk -v lines="${1:-}" '
	function out(nr, name) { print (lines == "-n" ? nr " " name : name) }
	function flush(c,   i) {
		for (i = 1; i <= np[c]; i++)
			out(pnr[c, i], pname[c, i])
		np[c] = 0
	}
	match($0, /^ *[0-9]+\)/) {
		cpu = substr($0, RSTART, RLENGTH) + 0
		s = $0
		if (!sub(/^[^|]*\|/, "", s))
			next
		match(s, /^ */)
		depth = (RLENGTH - 2) / 2
		s = substr(s, RLENGTH + 1)
		if (s ~ /^\/\* pktfilt_packet:/) {
			flush(cpu)
			open[cpu] = 0		# a new packet: whatever was open ended
		} else if (s ~ /^}/) {
			if (!open[cpu] || depth > root[cpu])
				next
			if (inner[cpu])
				inner[cpu]--	# closes a function at the root depth
			else
				open[cpu] = 0
		} else if (s ~ /^[A-Za-z_][A-Za-z0-9_.]*\(\)/) {
			if (open[cpu]) {
				if (depth <= root[cpu] && $0 ~ /\{ *$/)
					inner[cpu]++
				next
			}
			sub(/\(.*/, "", s)
			if (np[cpu] && depth < pmin[cpu])
				np[cpu] = 0	# a prelude of this root
			if (depth == 0) {
				out(NR, s)
			} else {
				if (!np[cpu] || depth < pmin[cpu])
					pmin[cpu] = depth
				np[cpu]++
				pnr[cpu, np[cpu]] = NR
				pname[cpu, np[cpu]] = s
			}
			if ($0 ~ /\{ *$/) {
				open[cpu] = 1
				root[cpu] = depth
				inner[cpu] = 0
			}
		}
	}
	END { for (c in np) flush(c) }' /tmp/trace.txt
}

trace_events() { grep 'pktfilt_packet:' /tmp/trace.txt; }

# Functions the graph shows below its root.
trace_has_nested() { grep -q "|    .*$1()" /tmp/trace.txt; }

# stat NAME: a counter from pktfilt show.
pf_stat() { pktfilt show | sed -n "s/^ *$1:* *\([0-9][0-9]*\).*/\1/p" | head -1; }

# expect_eq NAME GOT WANT
# pcap_emit NAME FILE RAW [snaplen=N]: the pcapng FILE that pktfilt wrote
# and the pktfilt_packet events of the trace RAW, between markers, for
# selftests/host/pcap-check (tshark, on the host: selftests/check runs it
# on the output of each group that has such markers).
pcap_emit() {
	echo "@@pktfilt-pcap begin $1${4:+ $4}@@"
	grep -o 'pktfilt_packet: .*data=[0-9a-f]*' "$3" | sed 's/^/event: /'
	base64 "$2"
	echo "@@pktfilt-pcap end $1@@"
}

expect_eq() {
	if [ "$2" = "$3" ]; then ok "$1"; else fail "$1" "got '$2', want '$3'"; fi
}

# expect_graphs NAME ROOT N: exactly N roots in the trace, all ROOT, each with
# its nested graph, and N pktfilt events.
expect_graphs() {
	name=$1 root=$2 n=$3
	roots=$(trace_roots | wc -l)
	good=$(trace_roots | grep -cx "$root")
	events=$(trace_events | wc -l)
	if [ "$roots" -eq "$n" ] && [ "$good" -eq "$n" ] && [ "$events" -eq "$n" ]; then
		ok "$name: $n graph(s) rooted at $root, $n event(s)"
	else
		fail "$name" "roots=$roots ($root: $good) events=$events, want $n"
		trace_roots | sort | uniq -c | head -20
		trace_events | head -5
		# Where the stray roots are, with their neighbours.
		grep -n -B4 -A3 "|  [A-Za-z_]" /tmp/trace.txt | grep -v "|  $root() {\$" |
			grep -v '^[0-9]*-.*|    ' | head -40
	fi
}

dump_trace_head() { head -n "${1:-60}" /tmp/trace.txt; }

# timed CMD [ARGS...]: runs CMD, then says how long it took in the guest
# ("# time CMD: N s"), so that a group's time can be read case by case.
timed() {
	_tt0=$(cut -d' ' -f1 /proc/uptime)
	"$@"
	_trc=$?
	echo "# time $*: $(awk -v a="$_tt0" '{ printf "%.0f", $1 - a }' /proc/uptime) s"
	return $_trc
}
