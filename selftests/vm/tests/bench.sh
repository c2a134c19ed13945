# SPDX-License-Identifier: GPL-2.0
# make bench, the part that runs in the VM (selftests/vm/bench boots it and
# turns the "bench:" lines printed here into BENCHMARKS.md). Nothing here
# is a test: no case fails, figures are printed.
#
#	selftests/vm/run --kernel 6.12 -- sh selftests/vm/tests/bench.sh
#
# Knobs (environment): BENCH_ROUNDS (5), BENCH_SECONDS (3),
# BENCH_FASTPATH_PACKETS (1000000), BENCH_SCOPE (--functions globs for the
# scoped configuration instead of pktfilt trace's default scope),
# BENCH_CONFIGS (all of them, in this order), BENCH_ARM_ROUNDS (5, also
# the hold latency's rounds), BENCH_PARTS (what runs after the
# configurations: fastpath arm hold footprint),
# BENCH_MODE (realtime or icount: only printed, for bench-report; the mode
# is the VM's, selftests/vm/bench boots it with PKTFILT_VM_ICOUNT=1). In
# icount mode the guest's clock counts instructions (2 ns each), so every
# time here (BENCH_SECONDS, the ns and ms printed) is guest time.
#
# Traffic: netns a sends, b receives (10.9.0.1 -> 10.9.0.2 over veth):
# UDP request/response (64 bytes, port 7001) and a TCP stream (port 7002).
# The filter names UDP port 9000, so no packet of it matches. Throughput is
# packets per second through the IP receive path of both namespaces
# (Ip InReceives: requests, responses, data segments, ACKs). Each bench
# line also counts the context switches of the window (/proc/stat ctxt):
# ftrace's PID filter and the gate's probes run at each of them.

. /pktfilt/selftests/vm/lib.sh
. /pktfilt/selftests/vm/tests/common.sh

ROUNDS=${BENCH_ROUNDS:-5}
NCPU=$(nproc)
CPUS=$(seq 0 $((NCPU - 1)))
SECS=${BENCH_SECONDS:-3}
CONFIGS=${BENCH_CONFIGS:-baseline disarmed pidonly gateonly hooked hooked_rx hooked_tx hooked_expr armed_all armed_scoped armed_l4 armed_tx armed_all_l4 armed_all_tx armed_eager armed_all_eager armed_lean armed_reach armed_learned fgraph_unfiltered bpftrace}
# What runs after the configurations' rounds: fastpath (the hook's own
# cost), arm (arming and disarming times), hold (the lazy hold's latency),
# footprint. BENCH_PARTS picks some, e.g. "hold" alone for a real-time
# run of the hold latency.
PARTS=${BENCH_PARTS:-fastpath arm hold footprint}
# armed_scoped: pktfilt trace's default scope (the functions by subsystem
# that a network engineer looks for on the receive path, 'pktfilt help
# trace'), or BENCH_SCOPE's globs.
SCOPE_OPTS=
[ -n "${BENCH_SCOPE:-}" ] && SCOPE_OPTS="--functions $BENCH_SCOPE"
# armed_lean: the default scope less the kernel-wide helpers it holds (slab
# allocation, raw spinlocks, wakeups), which every subsystem calls: skb
# allocation and the socket lock stay. nft_* is left out because nf_tables
# is not loaded here (--functions refuses a glob that matches nothing).
# A copy of pf_trace_default_scope[] (tool/trace_scope.c) less those: keep
# the two in step.
LEAN="tcp_*,__tcp_*,udp*,__udp*,icmp*,ping_*,ip_*,__ip_*,ipv4_*,ip6_*,__ip6_*,ipv6_*,fib_*,fib6_*,rt6_*,dst_*,neigh_*,inet_*,__inet_*,inet6_*,__inet6_*,sock_*,__sock_*,sk_*,__sk_*,lock_sock*,release_sock,__release_sock,nf_*,__nf_*,xfrm*,__xfrm*,security_*,selinux_*,apparmor_*,skb_*,__skb_*,kfree_skb*,consume_skb,__alloc_skb"
# armed_learned: the functions seen in the graphs of the benchmark's own
# packets (one UDP request, one TCP segment), traced in full in this run.
LEARNED=
FILTER="--proto udp --dport 9000"

in_receives() {
	ip netns exec "$1" awk '/^Ip: [0-9]/ { print $4 }' /proc/net/snmp
}
ctxt() { awk '$1 == "ctxt" { print $2 }' /proc/stat; }
now_ns() { pfbench now; }

# traffic CONFIG ROUND: each workload for SECS seconds, one bench line each.
traffic() {
	for w in udp_rr tcp_stream; do
		a0=$(in_receives a) b0=$(in_receives b) c0=$(ctxt) t0=$(now_ns)
		if [ $w = udp_rr ]; then
			out=$(ip netns exec a pfbench udp-rr --dst 10.9.0.2 --port 7001 --seconds "$SECS")
		else
			out=$(ip netns exec a pfbench tcp-stream --dst 10.9.0.2 --port 7002 --seconds "$SECS")
		fi
		t1=$(now_ns) c1=$(ctxt) a1=$(in_receives a) b1=$(in_receives b)
		bytes=$(echo "$out" | sed -n 's/.* bytes=\([0-9]*\).*/\1/p')
		echo "bench: round=$2 config=$1 workload=$w" \
			"packets=$((a1 - a0 + b1 - b0)) ns=$((t1 - t0)) bytes=${bytes:-0} ctxt=$((c1 - c0))"
	done
}

# The configurations. Each starts from: module not loaded, nop tracer.
run_baseline() { traffic baseline "$1"; }

run_disarmed() {
	insmod $PKTFILT_KO
	traffic disarmed "$1"
	rmmod pktfilt
}

# What set_ftrace_pid costs by itself: ftrace's PID-filter probes on
# sched_switch and wakeups, the module loaded, nothing armed. Against
# hooked, it tells the gate's and the hooks' share from ftrace's.
run_pidonly() {
	insmod $PKTFILT_KO
	idle_pid > $T/set_ftrace_pid
	traffic pidonly "$1"
	echo > $T/set_ftrace_pid
	rmmod pktfilt
}

# Armed, but with no hook on the traffic's path: pktfilt set --at l4
# --proto icmp wraps icmp_rcv alone, and the benchmark sends no ICMP. What
# arming adds besides the hooks is then all there is: the gate's kprobe
# and kretprobe on trace_ignore_this_task(), which ftrace's PID-filter
# probe calls at every context switch (pidonly has that probe without
# them), and the free probes (kfree_skb, consume_skb tracepoints; one
# test of an empty table per freed skb). gateonly against pidonly: the
# gate's probes' cost (the lead of BENCHMARKS.md); hooked_* against
# gateonly: the hooks' own.
run_gateonly() {
	insmod $PKTFILT_KO
	idle_pid > $T/set_ftrace_pid
	pktfilt set --at l4 --proto icmp --count 0
	traffic gateonly "$1"
	pktfilt clear
	echo > $T/set_ftrace_pid
	rmmod pktfilt
}

# The hooks alone, per stage: armed (pktfilt set --at STAGE, set_ftrace_pid
# holding a PID that never runs) with the nop tracer, so no function is
# patched: every packet of the traffic goes through the stage's hook and is
# rejected on the fast path. hooked is --at l4 (the protocol handlers'
# wrappers; the name kept from before the stages), hooked_rx the wrappers
# of ip_rcv/ipv6_rcv (every IP packet received), hooked_tx the netfilter
# LOCAL_OUT hook (every locally generated IP packet).
hooked_stage() {
	insmod $PKTFILT_KO
	idle_pid > $T/set_ftrace_pid
	pktfilt set --at "$1" $FILTER --count 0
	traffic "$2" "$3"
	pktfilt clear
	echo > $T/set_ftrace_pid
	rmmod pktfilt
}
run_hooked() { hooked_stage l4 hooked "$1"; }
run_hooked_rx() { hooked_stage rx hooked_rx "$1"; }
run_hooked_tx() { hooked_stage tx hooked_tx "$1"; }

# A filter expression on packets it does not match (issue 15): armed as
# hooked_rx, with the expression that says what its predicates say, 'udp
# dst port 9000', instead of them. No structured predicate rejects a
# packet in place then: every IP packet received is turned into a key and
# run through the classic BPF program (the kernel's engine), which
# rejects it. Against hooked_rx: the expression's cost over the fast path's.
EXPR_FILTER='udp dst port 9000'
run_hooked_expr() {
	insmod $PKTFILT_KO
	idle_pid > $T/set_ftrace_pid
	pktfilt set --at rx --count 0 "$EXPR_FILTER"
	traffic hooked_expr "$1"
	pktfilt clear
	echo > $T/set_ftrace_pid
	rmmod pktfilt
}

# What a user of pktfilt trace waits in. Lazy, the default since issue 32:
# the tracer stays nop (set_ftrace_filter names the scope, nothing is
# patched) and set_ftrace_pid empty while no packet matches (none does
# here): the traffic pays the stage's hooks (rx) and the free probes.
# armed_all is the same with --all-functions; armed_eager and
# armed_all_eager keep the behaviour of before (--eager): the scope, or
# every function, patched in advance, the PID filter keeping all but the
# gate's CPU out.
run_armed_all() {
	insmod $PKTFILT_KO
	pktfilt trace $FILTER --count 0 --all-functions -o /dev/null -- \
		sh -c ". /tmp/bench-traffic.sh; traffic armed_all $1"
	rmmod pktfilt
}

run_armed_scoped() {
	insmod $PKTFILT_KO
	# shellcheck disable=SC2086
	pktfilt trace $FILTER --count 0 $SCOPE_OPTS -o /dev/null -- \
		sh -c ". /tmp/bench-traffic.sh; traffic armed_scoped $1"
	rmmod pktfilt
}

# armed_l4: as armed_scoped, lazy, at l4 (--at l4): the protocol handlers'
# wrappers instead of rx's ftrace_ops on __netif_receive_skb() and its
# ip_rcv wrappers. Against hooked (l4, nop tracer, set_ftrace_pid set) it
# shows what waiting lazily costs besides the hooks (the PID filter off,
# the tracer nop: less than hooked); against armed_scoped, what rx's hooks
# cost more than l4's.
run_armed_l4() {
	insmod $PKTFILT_KO
	# shellcheck disable=SC2086
	pktfilt trace --at l4 $FILTER --count 0 $SCOPE_OPTS -o /dev/null -- \
		sh -c ". /tmp/bench-traffic.sh; traffic armed_l4 $1"
	rmmod pktfilt
}

# armed_tx: as armed_scoped, lazy, at tx: the LOCAL_OUT hook instead.
run_armed_tx() {
	insmod $PKTFILT_KO
	# shellcheck disable=SC2086
	pktfilt trace --at tx $FILTER --count 0 $SCOPE_OPTS -o /dev/null -- \
		sh -c ". /tmp/bench-traffic.sh; traffic armed_tx $1"
	rmmod pktfilt
}

# armed_all_l4, armed_all_tx: armed_l4 and armed_tx with --all-functions
# (a lazy wait patches nothing of any scope: these should equal them).
run_armed_all_l4() {
	insmod $PKTFILT_KO
	pktfilt trace --at l4 $FILTER --count 0 --all-functions -o /dev/null -- \
		sh -c ". /tmp/bench-traffic.sh; traffic armed_all_l4 $1"
	rmmod pktfilt
}

run_armed_all_tx() {
	insmod $PKTFILT_KO
	pktfilt trace --at tx $FILTER --count 0 --all-functions -o /dev/null -- \
		sh -c ". /tmp/bench-traffic.sh; traffic armed_all_tx $1"
	rmmod pktfilt
}

run_armed_eager() {
	insmod $PKTFILT_KO
	# shellcheck disable=SC2086
	pktfilt trace $FILTER --count 0 --eager $SCOPE_OPTS -o /dev/null -- \
		sh -c ". /tmp/bench-traffic.sh; traffic armed_eager $1"
	rmmod pktfilt
}

run_armed_all_eager() {
	insmod $PKTFILT_KO
	pktfilt trace $FILTER --count 0 --eager --all-functions -o /dev/null -- \
		sh -c ". /tmp/bench-traffic.sh; traffic armed_all_eager $1"
	rmmod pktfilt
}

# armed_lean, armed_reach and armed_learned compare scopes patched: --eager
# (lazy, each would wait with the tracer nop, as armed_scoped does).
run_armed_lean() {
	insmod $PKTFILT_KO
	pktfilt trace $FILTER --count 0 --eager --functions "$LEAN" -o /dev/null -- \
		sh -c ". /tmp/bench-traffic.sh; traffic armed_lean $1"
	rmmod pktfilt
}

# armed_reach: the functions direct calls lead to from udp_rcv and
# udpv6_rcv, the handlers of the filter (selftests/vm/reach-scope, run by
# selftests/vm/bench on the host, which puts the list into the VM).
run_armed_reach() {
	reach=$(ls /usr/bin/pf-reach-scope-* 2>/dev/null | head -n1)
	[ -n "$reach" ] || { echo "bench: round=$1 config=armed_reach skipped=no-reach-scope"; return; }
	insmod $PKTFILT_KO
	pktfilt trace $FILTER --count 0 --eager --functions "$($reach)" -o /dev/null -- \
		sh -c ". /tmp/bench-traffic.sh; traffic armed_reach $1"
	rmmod pktfilt
}

run_armed_learned() {
	[ -n "$LEARNED" ] || { echo "bench: round=$1 config=armed_learned skipped=nothing-learned"; return; }
	insmod $PKTFILT_KO
	pktfilt trace $FILTER --count 0 --eager --functions "$LEARNED" -o /dev/null -- \
		sh -c ". /tmp/bench-traffic.sh; traffic armed_learned $1"
	rmmod pktfilt
}

# The function names of one traced packet of each workload, comma-separated.
learn_scope() {
	insmod $PKTFILT_KO
	for w in "udp 7001 udp-rr" "tcp 7002 tcp-stream"; do
		set -- $w
		pktfilt trace --proto $1 --dport $2 --count 1 --all-functions --format folded \
			-o /tmp/learn-$1.folded -- \
			ip netns exec a pfbench $3 --dst 10.9.0.2 --port $2 --seconds 1 > /dev/null
	done
	rmmod pktfilt
	# folded: "root;child;...;leaf COUNT"
	LEARNED=$(cat /tmp/learn-*.folded 2>/dev/null | sed 's/ [0-9]*$//' | tr ';' '\n' |
		sed 's/^\([A-Za-z0-9_.]*\).*/\1/' | grep -v '^$' | sort -u | paste -sd, -)
	echo "bench-learned: functions=$(echo "$LEARNED" | tr ',' '\n' | grep -c .)"
	echo "# learned: $LEARNED"
}

# What people do today: function_graph from the handlers, every packet.
run_fgraph_unfiltered() {
	echo 0 > $T/tracing_on
	echo 0 > $T/options/funcgraph-irqs
	echo "$HANDLERS" > $T/set_graph_function
	echo function_graph > $T/current_tracer
	echo > $T/trace
	echo 1 > $T/tracing_on
	traffic fgraph_unfiltered "$1"
	echo 0 > $T/tracing_on
	echo nop > $T/current_tracer
	echo > $T/set_graph_function
	echo 1 > $T/options/funcgraph-irqs
	echo > $T/trace
	echo 1 > $T/tracing_on
}

# The eBPF tools' way: a kprobe on the handlers with the filter in BPF.
BPF_PROG='
kprobe:udp_rcv, kprobe:tcp_v4_rcv {
	$skb = (struct sk_buff *)arg0;
	$th = (struct udphdr *)($skb->head + $skb->transport_header);
	if ($th->dest == 0x2823) { @matched = count(); }
}'
run_bpftrace() {
	command -v bpftrace > /dev/null || { echo "bench: round=$1 config=bpftrace skipped=no-bpftrace"; return; }
	rm -f /tmp/bpftrace.out
	bpftrace -e "$BPF_PROG" > /tmp/bpftrace.out 2>&1 &
	bp=$!
	i=0
	# Up to 300 s: its LLVM start costs many instructions (icount mode).
	while ! grep -q 'Attaching' /tmp/bpftrace.out 2>/dev/null && [ $i -lt 3000 ]; do
		kill -0 $bp 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	if ! kill -0 $bp 2>/dev/null; then
		echo "bench: round=$1 config=bpftrace skipped=bpftrace-failed"
		sed 's/^/# bpftrace: /' /tmp/bpftrace.out | head -20
		return
	fi
	sleep 1	# attached after the message
	traffic bpftrace "$1"
	kill -INT $bp
	i=0
	while kill -0 $bp 2>/dev/null && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -KILL $bp 2>/dev/null
	wait $bp 2>/dev/null
}

# send_udp_all DPORT N: N UDP packets from a to b's port DPORT, sent from
# every vCPU in equal parts at once.
send_udp_all() {
	_per=$(($2 / NCPU)) _pids=
	for cpu in $CPUS; do
		ip netns exec a taskset -c "$cpu" pfsend udp -q --src 10.9.0.1 \
			--dst 10.9.0.2 --sport 4000 --dport "$1" --count $_per &
		_pids="$_pids $!"
	done
	# shellcheck disable=SC2086
	wait $_pids
}

# The hook's own cost, in the kernel (module/timing.c, the l4 wrappers
# only: --at l4 here, as before the stages): a million
# non-matching UDP packets (rejected on the fast path, by their port), a
# fifth as many near misses (ports match, the mark does not: the same flow
# as the traced packets, handled untraced); then 50 traced, and the trace
# bytes per traced packet.
fastpath() {
	n=${BENCH_FASTPATH_PACKETS:-1000000}
	insmod $PKTFILT_KO timing=1
	trace_start
	pktfilt set --at l4 $FILTER --count 0
	echo 0 > /sys/kernel/debug/pktfilt/timing
	echo "# fastpath: $n non-matching packets, from $NCPU vCPU(s)"
	send_udp_all 9001 "$n"
	sed 's/^/# timing: /' /sys/kernel/debug/pktfilt/timing
	echo "bench-fastpath: $(awk '$1 == "quick" { printf "packets=%s ns=%s", $3, $5 }
		$1 == "clock_ns" { c = $2 } END { printf " clock_ns=%s", c }' \
		/sys/kernel/debug/pktfilt/timing)"

	# The same fast path, a million passes per run on a packet built in
	# the kernel, timed per 10,000 passes (module/timing.c): free of the
	# per-packet clock reads. Three runs armed, then one with nothing armed.
	for r in 1 2 3; do
		fastloop armed 9001
	done

	# Near misses: the ports match, the mark does not, so the fast path
	# lets them through and the whole key is built and tested.
	pktfilt set --at l4 $FILTER --mark 7 --count 0
	fastloop nearmiss 9000
	echo 0 > /sys/kernel/debug/pktfilt/timing
	echo "# near misses: $((n / 5)) packets whose ports match"
	send_udp_all 9000 $((n / 5))
	sed 's/^/# timing: /' /sys/kernel/debug/pktfilt/timing
	echo "bench-nearmiss: $(awk '$1 == "nomatch" { printf "packets=%s ns=%s", $3, $5 }
		$1 == "nomatch_total" { printf " total_ns=%s", $5 }' \
		/sys/kernel/debug/pktfilt/timing)"

	pktfilt set --at l4 $FILTER --count 50
	echo > $T/trace
	rb0=$(cat $T/per_cpu/cpu*/stats | awk '/^bytes:/ { s += $2 } END { print s + 0 }')
	echo 0 > /sys/kernel/debug/pktfilt/timing
	ip netns exec a pfsend udp -q --src 10.9.0.1 --dst 10.9.0.2 \
		--sport 4000 --dport 9000 --count 100
	sleep 1
	rb1=$(cat $T/per_cpu/cpu*/stats | awk '/^bytes:/ { s += $2 } END { print s + 0 }')
	traced=$(pf_stat traced)
	tb=$(cat $T/trace | wc -c)
	sed 's/^/# timing: /' /sys/kernel/debug/pktfilt/timing
	echo "bench-traced: $(awk '$1 == "traced" || $1 == "untraced" { printf "%s_packets=%s %s_ns=%s ", $1, $3, $1, $5 }' \
		/sys/kernel/debug/pktfilt/timing)traced=$traced ring_bytes=$((rb1 - rb0)) text_bytes=$tb"
	pktfilt clear
	fastloop disarmed 9001
	trace_teardown
	rmmod pktfilt
}

# fastloop LABEL DPORT: BENCH_FASTPATH_PACKETS passes of the fast path on
# a UDP packet from 10.9.0.1:4000 to 10.9.0.2:DPORT, against what is armed.
fastloop() {
	echo "${BENCH_FASTPATH_PACKETS:-1000000} 4000 $2 10.9.0.1 10.9.0.2" \
		> /sys/kernel/debug/pktfilt/fastpath
	echo "bench-fastloop: state=$1 $(sed 's/ \([0-9]\)/=\1/g' \
		/sys/kernel/debug/pktfilt/fastpath)"
}

# Arm and disarm: pktfilt set / clear, and pktfilt trace from its start to
# COMMAND (armed) and from COMMAND to its exit (everything restored).
arm_latency() {
	echo "# arm and disarm latency"
	insmod $PKTFILT_KO
	for r in $(seq 1 "${BENCH_ARM_ROUNDS:-5}"); do
		# trace-cold: the default scope with no kept copy of
		# available_filter_functions (read from the kernel each time).
		# Lazy (the default) leaves the tracer nop, the scope patched
		# only when a packet matches (hold_latency); trace-eager
		# patches it before COMMAND, as before issue 32.
		for v in all scoped cold eager all_eager; do
			tool=trace
			scoped=1
			cache=/var/cache/pktfilt/functions
			# shellcheck disable=SC2086
			case $v in
			all) set -- --all-functions; scoped=0 ;;
			scoped) set -- $SCOPE_OPTS ;;
			cold) set -- $SCOPE_OPTS; tool=trace-cold; cache=none ;;
			eager) set -- --eager $SCOPE_OPTS; tool=trace-eager ;;
			all_eager) set -- --eager --all-functions; tool=trace-eager; scoped=0 ;;
			esac
			t0=$(now_ns)
			t1=$(PKTFILT_CACHE=$cache pktfilt trace $FILTER --count 0 "$@" -o /dev/null -- pfbench now)
			t2=$(now_ns)
			echo "bench-arm: round=$r tool=$tool scoped=$scoped arm_ns=$((t1 - t0)) disarm_ns=$((t2 - t1))"
		done
		trace_start
		t0=$(now_ns)
		pktfilt set --at l4 $FILTER
		t1=$(now_ns)
		pktfilt clear
		t2=$(now_ns)
		echo "bench-arm: round=$r tool=set scoped=0 arm_ns=$((t1 - t0)) disarm_ns=$((t2 - t1))"
		trace_teardown
	done
	rmmod pktfilt
}

# The lazy hold, from the matching packet's hold to its replay: one UDP
# packet to b's port 9000 traced (--count 1, at rx, the default stage)
# with the default scope, then with --all-functions. held_ns is the
# module's (the packet's JSON): from the hook's hold to the replay, in the
# guest's time. The CLI's steps (PKTFILT_TRACE_TIMES=2) after "filter
# armed": the write of set_ftrace_pid (empty while waiting: the PID
# filter on again), the write of current_tracer (function_graph started:
# ftrace's patching pass over the scope set_ftrace_filter has named since
# setup), the read of set_ftrace_filter back (none since the tracer waits
# nop: na), "scope patched" (from "filter armed": the wait for the
# packet, the HELD notification and the writes), "held packets replayed"
# (READY, a netlink round trip with the module's ack). What held_ns has
# besides the writes and READY is the HELD notification's way to
# the CLI (netlink multicast, poll's wakeup) and the replay's start (a
# kernel worker). trace_ms: the whole pktfilt trace, start to exit.
# The sender sends a second packet 1 s later and so lives while its first
# is held (trace.sh's tr_lazy_case); only the first is traced.
hold_latency() {
	echo "# hold to replay: one matching packet held, the scope patched, replayed"
	insmod $PKTFILT_KO
	for r in $(seq 1 "${BENCH_ARM_ROUNDS:-5}"); do
		for v in scoped all; do
			# shellcheck disable=SC2086
			case $v in
			all) set -- --all-functions ;;
			scoped) set -- $SCOPE_OPTS ;;
			esac
			rm -f /tmp/hold.json /tmp/hold.err
			t0=$(now_ns)
			PKTFILT_TRACE_TIMES=2 pktfilt trace $FILTER --count 1 --timeout 120 "$@" \
				--format json -o /tmp/hold.json -- \
				ip netns exec a pfsend udp -q --src 10.9.0.1 --dst 10.9.0.2 \
				--sport 4000 --dport 9000 --count 2 --interval-us 1000000 \
				2> /tmp/hold.err
			rc=$?
			t1=$(now_ns)
			held=$(grep -o '"held_ns": *[0-9]*' /tmp/hold.json 2>/dev/null | head -n1 | tr -dc 0-9)
			# "pktfilt: time: WHAT N ms (at M ms)" (steps),
			# "pktfilt: time: wrote|read FILE N.NNN ms" (files).
			steps=$(awk '
				/^pktfilt: time: filter armed / { armed = 1; next }
				!armed { next }
				/^pktfilt: time: wrote set_ftrace_pid / && pw == "" { pw = $(NF - 1) }
				/^pktfilt: time: wrote current_tracer / && w == "" { w = $(NF - 1) }
				/^pktfilt: time: read set_ftrace_filter / && rd == "" { rd = $(NF - 1) }
				/^pktfilt: time: scope patched / { p = $5 }
				/^pktfilt: time: held packets replayed / { rp = $6 }
				END { printf "pid_ms=%s write_ms=%s verify_ms=%s patched_ms=%s ready_ms=%s",
					pw == "" ? "na" : pw,
					w == "" ? "na" : w, rd == "" ? "na" : rd,
					p == "" ? "na" : p, rp == "" ? "na" : rp }' /tmp/hold.err)
			echo "bench-hold: round=$r scope=$v rc=$rc held_ns=${held:-na} $steps trace_ms=$(((t1 - t0) / 1000000))"
			if [ -z "$held" ] || [ "$rc" != 0 ]; then
				sed 's/^/# hold: /' /tmp/hold.err | head -n 40
			fi
		done
	done
	rmmod pktfilt
}

footprint() {
	m0=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
	s0=$(awk '/^Slab:/ { print $2 }' /proc/meminfo)
	insmod $PKTFILT_KO
	core=$(cat /sys/module/pktfilt/coresize)
	trace_start
	pktfilt set --at l4 $FILTER
	s1=$(awk '/^Slab:/ { print $2 }' /proc/meminfo)
	m1=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
	pktfilt clear
	trace_teardown
	rmmod pktfilt
	echo "bench-footprint: coresize=$core slab_kb=$((s1 - s0)) memavail_kb=$((m0 - m1))"
}

echo "bench-info: kernel=$(uname -r) cpus=$(nproc) rounds=$ROUNDS seconds=$SECS mode=${BENCH_MODE:-realtime}"
topo_setup
# traffic() for the commands pktfilt trace runs.
{
	echo "SECS=$SECS"
	sed -n '/^in_receives() {/,/^}/p; /^now_ns() /p; /^ctxt() /p; /^traffic() {/,/^}/p' \
		/pktfilt/selftests/vm/tests/bench.sh
} > /tmp/bench-traffic.sh
ip netns exec b pfbench udp-echo --port 7001 &
srv1=$!
ip netns exec b pfbench tcp-sink --port 7002 &
srv2=$!
sleep 1
echo "# warm-up"
traffic warmup 0 > /dev/null
case " $CONFIGS " in *" armed_learned "*) learn_scope ;; esac
# Each round starts one configuration later than the one before, so that
# none is always measured right after the same other one.
order=$CONFIGS
for r in $(seq 1 "$ROUNDS"); do
	for c in $order; do
		"run_$c" "$r"
	done
	case $order in *" "*) order="${order#* } ${order%% *}" ;; esac
done
case " $PARTS " in *" fastpath "*) fastpath ;; esac
case " $PARTS " in *" arm "*) arm_latency ;; esac
case " $PARTS " in *" hold "*) hold_latency ;; esac
case " $PARTS " in *" footprint "*) footprint ;; esac
kill $srv1 $srv2 2>/dev/null
# The guest's time for the whole run (icount mode: 2 ns per instruction),
# against the host's (selftests/vm/bench's bench-host line).
echo "bench-end: uptime_s=$(cut -d' ' -f1 /proc/uptime)"
check_dmesg
summary
