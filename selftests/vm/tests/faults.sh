# SPDX-License-Identifier: GPL-2.0
# The kernel's own fault injection on pktfilt's failure branches, on a
# kernel built with CONFIG_FAULT_INJECTION (the debug kernel:
# selftests/vm/debug-kernel). selftests/vm/fault-soak runs it with the
# hold cases of harden.sh and the journeys, and reads the coverage.
#
#	selftests/vm/run --kernel 6.1-debug -- sh selftests/vm/tests/faults.sh [CASE...]
#
# CASEs:
#   nth     every fault-injection point each command of pktfilt reaches
#           (set eager, lazy, with BPF, READY, a replacing set, clear, get)
#           fails once (pffail: fail-nth, failslab and fail_page_alloc on
#           every allocation); after each the state is clean, and a trace
#           still works after all
#   atomic  atomic allocations fail at random (failslab, 1 in 20, at most
#           400) while lazy filters hold and replay packets at l4, rx and
#           tx: every packet goes on, dmesg stays clean
#   gcov    the coverage the module gathered (a PF_GCOV=y build), printed
#           between markers for the host (fault-soak)
# (default: nth atomic).
. /pktfilt/selftests/vm/lib.sh
. /pktfilt/selftests/vm/tests/common.sh

DBG=/sys/kernel/debug

# fi_quiet ATTR: the fault attribute ATTR (failslab, fail_page_alloc) off
# (probability 0), counting sleeping allocations too, and silent: a forced
# failure's report (with a stack) is not a complaint of the kernel's.
fi_quiet() {
	echo 0 > $DBG/$1/probability
	echo 0 > $DBG/$1/verbose
	echo N > $DBG/$1/ignore-gfp-wait
	echo N > $DBG/$1/task-filter
	echo 1 > $DBG/$1/interval
	echo -1 > $DBG/$1/times
	[ -e $DBG/$1/min-order ] && echo 0 > $DBG/$1/min-order
	return 0
}

fi_available() {
	[ -e /proc/self/fail-nth ] && [ -d $DBG/failslab ] && [ -d $DBG/fail_page_alloc ]
}

# trace_one NAME ARGS...: pktfilt trace --count 1 ARGS around a datagram
# from a to b (udp 4000 -> 9000): its graph must come.
trace_one() {
	_n=$1
	shift
	if pktfilt trace --count 1 --timeout 60 "$@" -- ip netns exec a \
		pfsend udp --src 10.9.0.1 --dst 10.9.0.2 --sport 4000 --dport 9000 -q \
		> /tmp/faults.out 2>&1 && grep -q '^# packet 1 ' /tmp/faults.out; then
		ok "$_n"
	else
		fail "$_n" "$(tail -n 5 /tmp/faults.out | tr '\n' ';')"
	fi
}

nth_case() {
	fi_available || { fail "nth: no fail-nth (a kernel without CONFIG_FAULT_INJECTION)"; return; }
	pf_insmod || { fail "nth: insmod"; return; }
	fi_quiet failslab
	fi_quiet fail_page_alloc
	# Arming needs set_ftrace_pid set (the tracefs watch).
	idle_pid > $T/set_ftrace_pid
	for s in eager lazy bpf ready replace clear get; do
		if out=$(pffail "$s" 2>&1); then
			ok "nth: $s: every fault point once, the state clean after each"
		else
			fail "nth: $s" "$(echo "$out" | tr '\n' ';')"
		fi
		echo "$out" | sed 's/^/# /'
		check_dmesg "nth: $s: dmesg clean"
	done
	out=$(pktfilt show 2>&1)
	case $out in
	*"state:"*idle*) ok "nth: show: idle after the sweeps" ;;
	*) fail "nth: show: idle after the sweeps" "$(echo "$out" | head -3 | tr '\n' ';')" ;;
	esac
	trace_one "nth: after the sweeps, a trace at l4 gets its graph" \
		--at l4 --proto udp --daddr 10.9.0.2 --dport 9000
	trace_one "nth: after the sweeps, a trace at rx and tx gets its graphs" \
		--at rx,tx --proto udp --daddr 10.9.0.2 --dport 9000
	pf_rmmod
}

# a_to_b_udp N PORT: N datagrams a -> b:PORT, from ports 5000 + i.
a_to_b_udp() {
	_i=0
	while [ $_i -lt "$1" ]; do
		ip netns exec a pfsend udp --src 10.9.0.1 --dst 10.9.0.2 \
			--sport $((5000 + _i)) --dport "$2" -q
		_i=$((_i + 1))
	done
}

atomic_case() {
	fi_available || { fail "atomic: no failslab (a kernel without CONFIG_FAILSLAB)"; return; }
	pf_insmod || { fail "atomic: insmod"; return; }
	fi_quiet failslab
	echo Y > $DBG/failslab/ignore-gfp-wait
	for at in l4 rx tx; do
		n0=$(b_noports)
		idle_pid > $T/set_ftrace_pid
		pktfilt set --lazy --count 0 --hold 1 --at $at --proto udp \
			--daddr 10.9.0.2 --dport 9000 ||
			fail "atomic: set --lazy --at $at" "exit $?"
		echo 400 > $DBG/failslab/times
		echo 5 > $DBG/failslab/probability
		a_to_b_udp 40 9000
		echo 0 > $DBG/failslab/probability
		# Each goes on at its bound (1 ms) at the latest; a datagram
		# the injected failures dropped elsewhere (an skb, a neighbour)
		# is the kernel's, not counted against the hold: at least 30.
		sleep 2
		got=$(($(b_noports) - n0))
		if [ "$got" -ge 30 ]; then
			ok "atomic: at $at, atomic allocations failing: $got of 40 datagrams went on"
		else
			fail "atomic: at $at, datagrams went on" "$got of 40"
			pktfilt show | sed 's/^/# /'
		fi
		pktfilt clear
		check_dmesg "atomic: at $at: dmesg clean"
	done
	fi_quiet failslab
	pf_rmmod
}

# b_noports: namespace b's Udp NoPorts (a datagram to a closed port that
# reached udp_rcv()).
b_noports() {
	ip netns exec b awk '/^Udp: / { if (!c) { for (i = 2; i <= NF; i++)
		if ($i == "NoPorts") c = i } else print $c }' /proc/net/snmp
}

# The coverage files of the module's objects, base64 between markers.
gcov_case() {
	files=$(find $DBG/gcov -name '*.gcda' -path '*/module/*' 2>/dev/null)
	if [ -z "$files" ]; then
		fail "gcov: the module's coverage data" "none under $DBG/gcov (not a PF_GCOV=y build?)"
		return
	fi
	for f in $files; do
		echo "@@pktfilt-gcov begin $(basename "$f")@@"
		base64 "$f"
		echo "@@pktfilt-gcov end@@"
	done
	ok "gcov: $(echo "$files" | wc -l) coverage files printed"
}

echo "kernel $(uname -r)"
topo_setup
kmemleak_baseline
for c in ${*:-nth atomic}; do
	timed "${c}_case"
done
trace_teardown
check_dmesg
summary
