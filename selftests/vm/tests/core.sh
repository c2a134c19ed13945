# SPDX-License-Identifier: GPL-2.0
# Issue 2's VM tests: for TCP, UDP and ICMP over IPv4 and IPv6, background
# traffic with near misses that differ from the filter in exactly one
# predicate, plus one matching packet, yield exactly one graph rooted at the
# right handler, headed by the module's event with the right tuple.
# Sourced by all.sh and core-only.sh.

# send NS PROTO FAMILY SRC DST SPORT DPORT COUNT
send() {
	_ns=$1 _p=$2 _f=$3 _s=$4 _d=$5 _sp=$6 _dp=$7 _n=$8
	_six=
	[ "$_f" = 6 ] && _six=-6
	case $_p in
	icmp) ip netns exec "$_ns" pfsend icmp $_six --src "$_s" --dst "$_d" --count "$_n" ;;
	*) ip netns exec "$_ns" pfsend "$_p" $_six --src "$_s" --dst "$_d" \
		--sport "$_sp" --dport "$_dp" --count "$_n" ;;
	esac
}

root_of() {
	case $1$2 in
	tcp4) echo tcp_v4_rcv ;;
	udp4) echo udp_rcv ;;
	icmp4) echo icmp_rcv ;;
	tcp6) echo tcp_v6_rcv ;;
	udp6) echo udpv6_rcv ;;
	icmp6) echo icmpv6_rcv ;;
	esac
}

# core_case PROTO FAMILY
core_case() {
	p=$1 f=$2
	name="$p/ipv$f"
	if [ "$f" = 4 ]; then S=10.9.0.1 S2=10.9.0.3 D=10.9.0.2 D2=10.9.0.4
	else S=fd00::1 S2=fd00::3 D=fd00::2 D2=fd00::4; fi
	proto=$p
	[ "$p$f" = icmp6 ] && proto=icmpv6
	case $p in
	tcp) q=udp ;;
	*) q=tcp ;;
	esac
	root=$(root_of "$p" "$f")
	ports="--sport 4000 --dport 9000"
	[ "$p" = icmp ] && ports=

	insmod $PKTFILT_KO || { fail "$name: insmod"; return; }
	trace_start
	if ! pktfilt set --proto $proto --saddr $S --daddr $D $ports \
		--dev veth-b --netns /run/netns/b; then
		fail "$name: pktfilt set"
		trace_stop
		rmmod pktfilt
		return
	fi

	# Background: other ports (ICMP: another source), the other protocol.
	if [ "$p" = icmp ]; then
		send a "$p" "$f" $S2 $D 0 0 100
	else
		send a "$p" "$f" $S $D 5000 5001 100
	fi
	send a "$q" "$f" $S $D 5000 9000 100
	# Near misses, each differing in exactly one predicate.
	send a "$q" "$f" $S $D 4000 9000 5		# protocol
	send a "$p" "$f" $S2 $D 4000 9000 5		# source address
	send a "$p" "$f" $S $D2 4000 9000 5		# destination address
	if [ "$p" != icmp ]; then
		send a "$p" "$f" $S $D 4001 9000 5	# source port
		send a "$p" "$f" $S $D 4000 9001 5	# destination port
	fi
	via_second_link on
	send a "$p" "$f" $S $D 4000 9000 5		# input interface
	via_second_link off
	send c "$p" "$f" $S $D 4000 9000 5		# network namespace

	expect_eq "$name: near misses traced nothing" "$(pf_stat traced)" 0
	# The one matching packet.
	send a "$p" "$f" $S $D 4000 9000 1
	send a "$q" "$f" $S $D 4000 9000 20
	sleep 1
	trace_stop

	expect_graphs "$name" "$root" 1
	if trace_has_nested "" ; then ok "$name: graph has nested calls"; else fail "$name: graph has nested calls"; fi
	ev=$(trace_events)
	want="proto=$proto saddr=$S daddr=$D"
	case "$ev" in *"$want "*) ok "$name: event has $want" ;; *) fail "$name: event tuple" "$ev" ;; esac
	if [ "$p" != icmp ]; then
		case "$ev" in *"sport=4000 dport=9000 "*) ok "$name: event ports" ;; *) fail "$name: event ports" "$ev" ;; esac
	fi
	want="ifindex=$(ifindex b veth-b) netns=$(netns_inode b)"
	case "$ev" in *"$want"*) ok "$name: event has $want" ;; *) fail "$name: event ifindex/netns" "$ev want $want" ;; esac
	expect_eq "$name: matched counter" "$(pf_stat matched)" 1
	expect_eq "$name: traced counter" "$(pf_stat traced)" 1
	if pktfilt show | grep -q idle; then ok "$name: disarmed after its one packet"; else fail "$name: disarmed after its one packet" "$(pktfilt show)"; fi
	rmmod pktfilt || fail "$name: rmmod"
}

# count_case: --count 3 yields exactly 3 graphs out of 10 matching packets.
count_case() {
	insmod $PKTFILT_KO
	trace_start
	pktfilt set --proto udp --daddr 10.9.0.2 --dport 9000 --count 3 || fail "count: set"
	send a udp 4 10.9.0.1 10.9.0.2 4000 9000 10
	send a udp 4 10.9.0.1 10.9.0.2 4000 9001 50
	sleep 1
	trace_stop
	expect_graphs "--count 3" udp_rcv 3
	expect_eq "--count 3: traced counter" "$(pf_stat traced)" 3
	seqs=$(trace_events | sed 's/.*seq=\([0-9]*\).*/\1/' | tr '\n' ' ')
	expect_eq "--count 3: event sequence numbers" "$seqs" "1 2 3 "
	if pktfilt show | grep -qi 'count'; then ok "--count 3: show gives the reason"; else fail "--count 3: show gives the reason" "$(pktfilt show)"; fi
	rmmod pktfilt
}

# clear_case: after clear nothing is traced, the hooks are out of the path,
# and traffic still flows.
clear_case() {
	insmod $PKTFILT_KO
	trace_start
	pktfilt set --proto udp --daddr 10.9.0.2 --dport 9000 --count 0 || fail "clear: set"
	pktfilt clear || fail "clear: clear"
	seen=$(pf_stat seen)
	ip netns exec b pfsend udp-listen --port 9000 --count 20 --timeout 10 > /tmp/listen.out &
	lp=$!
	sleep 1
	send a udp 4 10.9.0.1 10.9.0.2 4000 9000 20
	wait $lp
	sleep 1
	trace_stop
	expect_graphs "after clear" udp_rcv 0
	expect_eq "after clear: hooks out of the path (seen unchanged)" "$(pf_stat seen)" "$seen"
	if grep -q 20 /tmp/listen.out; then ok "after clear: traffic flows"; else fail "after clear: traffic flows" "$(cat /tmp/listen.out)"; fi
	rmmod pktfilt
}

# rmmod_case: rmmod while armed restores the handlers; traffic flows.
rmmod_case() {
	insmod $PKTFILT_KO
	trace_start
	pktfilt set --proto udp --daddr 10.9.0.2 --dport 9000 --count 0 || fail "rmmod: set"
	if rmmod pktfilt; then ok "rmmod while armed"; else fail "rmmod while armed"; fi
	for f in 4 6; do
		if [ $f = 4 ]; then D=10.9.0.2; else D=fd00::2; fi
		six=; [ $f = 6 ] && six=-6
		ip netns exec b pfsend udp-listen $six --port 9000 --count 20 --timeout 10 > /tmp/listen.out &
		lp=$!
		sleep 1
		if [ $f = 4 ]; then S=10.9.0.1; else S=fd00::1; fi
		send a udp $f $S $D 4000 9000 20
		send a tcp $f $S $D 4000 9001 2
		send a icmp $f $S $D 0 0 2
		wait $lp
		if grep -q 20 /tmp/listen.out; then ok "after rmmod: IPv$f traffic flows"; else fail "after rmmod: IPv$f traffic flows" "$(cat /tmp/listen.out)"; fi
	done
	trace_stop
	expect_graphs "after rmmod" udp_rcv 0
	if grep -q pktfilt /proc/modules; then fail "module gone"; else ok "module gone"; fi
}

# notready_case: set refuses to arm while set_ftrace_pid is empty.
notready_case() {
	insmod $PKTFILT_KO
	echo > $T/set_ftrace_pid
	if out=$(pktfilt set --proto udp --dport 9000 2>&1); then
		fail "set refused while set_ftrace_pid is empty" "$out"
	else
		case $out in
		*set_ftrace_pid*) ok "set refused while set_ftrace_pid is empty, says why" ;;
		*) fail "refusal names set_ftrace_pid" "$out" ;;
		esac
	fi
	# Emptied while armed: see interference_cases in hostile.sh.
	rmmod pktfilt
}

# instancepid_case: a tracefs instance's set_ftrace_pid registers ftrace's
# PID probe too, with the instance's trace array. Written before the
# top-level one, its probe comes first in sched_switch's table: the gate
# must still steer global_trace (the one static trace array; on a kernel
# without CONFIG_KALLSYMS_ALL, Debian's arm64 6.1, that is all it can go
# by), so the packet's graph is in the top-level buffer.
instancepid_case() {
	name=instancepid
	_i=$T/instances/pf-pid
	grep -q ' global_trace$' /proc/kallsyms ||
		echo "# /proc/kallsyms has no data symbols (no CONFIG_KALLSYMS_ALL)"
	insmod $PKTFILT_KO
	echo > $T/set_ftrace_pid
	mkdir $_i
	idle_pid > $_i/set_ftrace_pid
	trace_start
	pktfilt set --proto udp --daddr 10.9.0.2 --dport 9000 --count 1 ||
		fail "instancepid: set"
	send a udp 4 10.9.0.1 10.9.0.2 4000 9000 3
	sleep 1
	trace_stop
	expect_graphs "an instance's set_ftrace_pid first" udp_rcv 1
	rmmod pktfilt
	echo > $_i/set_ftrace_pid
	rmdir $_i
}

# mark_case: --mark VALUE/MASK, a prefix and a port range, on loopback in
# netns b (the mark survives there; it is scrubbed across veth).
mark_case() {
	insmod $PKTFILT_KO
	trace_start
	pktfilt set --proto udp --mark 0x42/0xff --saddr 127.0.0.0/31 \
		--dport 8990-9010 --netns /run/netns/b || fail "mark: set"
	lo() { ip netns exec b pfsend udp --src "$1" --dst 127.0.0.1 --sport 4000 --dport "$2" --mark "$3" --count "$4"; }
	lo 127.0.0.1 9000 0x43 5	# mark differs under the mask
	lo 127.0.0.2 9000 0x42 5	# source outside the /31
	lo 127.0.0.1 9011 0x42 5	# port outside the range
	lo 127.0.0.1 9000 0x142 1	# matches: 0x142 & 0xff = 0x42
	sleep 1
	trace_stop
	expect_graphs "--mark/--saddr prefix/--dport range" udp_rcv 1
	case "$(trace_events)" in
	*"saddr=127.0.0.1 daddr=127.0.0.1 sport=4000 dport=9000 "*) ok "mark: the matching packet's event" ;;
	*) fail "mark: the matching packet's event" "$(trace_events)" ;;
	esac
	rmmod pktfilt
}

# concurrent_case: matching packets on both vCPUs at once; --count N gives
# exactly N graphs and N events.
concurrent_case() {
	# Room for 10 whole graphs on one CPU, on the debug kernel too.
	buffer_resize 8192
	for n in 1 2 10; do
		insmod $PKTFILT_KO
		trace_start
		pktfilt set --proto udp --daddr 10.9.0.2 --dport 9000 --count $n || fail "concurrent: set"
		for cpu in 0 1; do
			ip netns exec a taskset -c $cpu pfsend udp --src 10.9.0.1 --dst 10.9.0.2 \
				--sport 400$cpu --dport 9000 --count 100 > /dev/null &
		done
		wait
		sleep 1
		trace_stop
		expect_graphs "--count $n, senders on both CPUs" udp_rcv $n
		expect_eq "--count $n, senders on both CPUs: traced counter" "$(pf_stat traced)" $n
		rmmod pktfilt
	done
	buffer_restore
}

# timing_case: the benchmark's instruments (module/timing.c, timing=1) count
# what they claim: the per-packet buckets count the hooked packets, the
# fast-path loop rejects exactly the packets the filter does not want, and
# neither touches the module's own counters or traces anything.
timing_case() {
	insmod $PKTFILT_KO timing=1 || { fail "timing: insmod timing=1"; return; }
	D=/sys/kernel/debug/pktfilt
	trace_start
	pktfilt set --proto udp --daddr 10.9.0.2 --dport 9000 --count 0 || fail "timing: set"
	echo 0 > $D/timing
	send a udp 4 10.9.0.1 10.9.0.2 4000 9001 20
	expect_eq "timing: 20 non-matching packets in the quick bucket" \
		"$(awk '$1 == "quick" { print $3 }' $D/timing)" 20
	seen=$(pf_stat seen)
	echo "5000 4000 9001 10.9.0.1 10.9.0.2" > $D/fastpath || fail "timing: fastpath write"
	expect_eq "fastpath loop: a non-matching packet rejected every pass" \
		"$(cat $D/fastpath | awk '{ print $2, $4 }')" "5000 5000"
	echo "3000 4000 9000 10.9.0.1 10.9.0.2" > $D/fastpath
	expect_eq "fastpath loop: a matching packet passed every pass, both paths" \
		"$(cat $D/fastpath | awk '{ print $2, $4, $8 }')" "3000 0 0"
	echo "20000 4000 9000 10.9.0.1 10.9.0.3" > $D/fastpath
	expect_eq "fastpath loop: another daddr rejected" \
		"$(cat $D/fastpath | awk '{ print $4 }')" 20000
	if awk '$6 > 0 && $10 > 0 && $12 > 0 { ok = 1 } END { exit !ok }' $D/fastpath; then
		ok "fastpath loop: times reported"
	else
		fail "fastpath loop: times reported" "$(cat $D/fastpath)"
	fi
	bad=0
	for input in "0 1 2 10.0.0.1 10.0.0.2" "100000001 1 2 10.0.0.1 10.0.0.2" \
		"10 1 2 10.0.0.1" "10 1 2 10.0.0.1 10.0.0.300" \
		"10 1 2 $(printf 'x%.0s' $(seq 100))"; do
		if printf '%s' "$input" > $D/fastpath 2>/dev/null; then
			bad=$((bad + 1)); echo "# accepted: '$input'"
		fi
	done
	expect_eq "fastpath loop: malformed requests refused" $bad 0
	pktfilt set --proto udp --daddr 10.9.0.2 --dport 9000 --mark 7 --count 0 || fail "timing: set --mark"
	echo "2000 4000 9000 10.9.0.1 10.9.0.2" > $D/fastpath
	expect_eq "fastpath loop: a near miss passes the fast path, fails the slow one" \
		"$(cat $D/fastpath | awk '{ print $4, $8 }')" "0 2000"
	expect_eq "fastpath loop: seen counter untouched" "$(pf_stat seen)" "$seen"
	expect_eq "fastpath loop: nothing traced" "$(pf_stat traced)" 0
	pktfilt clear
	echo "2000 4000 9000 10.9.0.1 10.9.0.2" > $D/fastpath
	expect_eq "fastpath loop: nothing armed, nothing passes" \
		"$(cat $D/fastpath | awk '{ print $4 }')" 2000
	trace_stop
	expect_graphs "timing" udp_rcv 0
	rmmod pktfilt || fail "timing: rmmod"
	if [ -e $D ]; then fail "timing: debugfs files gone after rmmod"; else ok "timing: debugfs files gone after rmmod"; fi
}

# owncode_case: no function of pktfilt's own in a graph (module/Kbuild: the
# module's only traceable function is pktfilt_anchor, never called). Its
# tracepoints' __traceiter_pktfilt_*() were traceable and showed in every
# graph on arm64 6.12, which has no static calls; on x86-64 a tracepoint's
# static call goes to them too once two probes are registered: here the
# events enabled in an instance as well as in the top trace array. A UDP
# packet to a port nobody listens on is dropped inside udp_rcv's graph
# (pktfilt_free there); trace_stop's own_calls finds any "[pktfilt]" line.
owncode_case() {
	name="own code"
	insmod $PKTFILT_KO || { fail "$name: insmod"; return; }
	expect_eq "$name: pktfilt's traceable functions" \
		"$(grep '\[pktfilt\]$' $T/available_filter_functions | tr '\n' ' ')" \
		"pktfilt_anchor [pktfilt] "
	_oi=$T/instances/pf-owncode
	mkdir -p $_oi
	echo 1 > $_oi/events/pktfilt/enable
	trace_start
	pktfilt set --proto udp --daddr 10.9.0.2 --dport 9000 || fail "$name: set"
	send a udp 4 10.9.0.1 10.9.0.2 4000 9000 1
	sleep 1
	trace_stop
	echo 0 > $_oi/events/pktfilt/enable
	rmdir $_oi
	expect_graphs "$name" udp_rcv 1
	if grep -q 'pktfilt_free:' /tmp/trace.txt; then
		ok "$name: the free event inside the graph"
	else
		fail "$name: the free event inside the graph" "$(grep -c . /tmp/trace.txt) lines"
	fi
	rmmod pktfilt || fail "$name: rmmod"
}

# core_cases: every case above (all.sh, core-only.sh without a CASE).
core_cases() {
	for p in udp tcp icmp; do
		for f in 4 6; do
			timed core_case $p $f
		done
	done
	timed count_case
	timed owncode_case
	timed mark_case
	timed concurrent_case
	timed clear_case
	timed notready_case
	timed instancepid_case
	timed rmmod_case
	timed timing_case
}
