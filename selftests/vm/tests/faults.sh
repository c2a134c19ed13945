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
#           (set eager, lazy, with BPF, READY, a replacing set, get)
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
		> /tmp/faults.out 2>&1 && grep -q '^# packet [0-9]* ' /tmp/faults.out; then
		ok "$_n"
	else
		fail "$_n" "exit or output (below)"
		head -n 20 /tmp/faults.out | sed 's/^/# /'
	fi
}

# fault_dmesg_check NAME SEEN: check_dmesg over the lines after line SEEN,
# but for the kernel's own reports of the failures it was made to inject
# (fail_dump()'s "FAULT_INJECTION: forcing a failure", warn_alloc()'s "page
# allocation failure" and "vmalloc error", each with its stack): what the
# faults were meant to cause, not a complaint.
fault_dmesg_check() {
	_log=$(dmesg)
	_bad=$(printf '%s\n' "$_log" | tail -n "+$(($2 + 1))" | awk '
		/FAULT_INJECTION: forcing a failure|page allocation failure:|vmalloc error:/ { skip = 1 }
		skip { if (/<\/TASK>/) skip = 0; next }
		/BUG|WARNING|Oops|Call Trace/')
	VMTEST_DMESG_SEEN=$(printf '%s\n' "$_log" | wc -l)
	if [ -z "$_bad" ]; then
		ok "$1"
		return 0
	fi
	fail "$1" "kernel complained (below)"
	printf '%s\n' "$_log" | tail -n "+$(($2 + 1))" | head -n 150 | sed 's/^/# dmesg: /'
	return 1
}

# noextack_whose SCENARIO N: the N-th fault of SCENARIO, injected alone with
# the kernel's report on: was the allocation that failed pktfilt's own
# (a frame of the module's above the generic netlink core's)? Prints the
# failing call's first frames.
noextack_whose() {
	_s0=$(dmesg | wc -l)
	echo 2 > $DBG/failslab/verbose
	echo 2 > $DBG/fail_page_alloc/verbose
	pffail --nth "$2" "$1" | sed 's/^/# /'
	echo 0 > $DBG/failslab/verbose
	echo 0 > $DBG/fail_page_alloc/verbose
	dmesg | tail -n "+$((_s0 + 1))" | awk '
		/FAULT_INJECTION: forcing a failure/ { on = 1 }
		on && /^\[[ 0-9.]*\]  [a-z_]/ && !/ \? / { sub(/^\[[ 0-9.]*\]  /, ""); print }
		on && /<\/TASK>/ { exit }' > /tmp/faults.stack
	sed -n '1,12s/^/#   /p' /tmp/faults.stack
	# Above genl_rcv_msg(): the family's code; below it, the core's.
	awk '/^genl_rcv_msg/ { exit } /\[pktfilt\]/ { found = 1 } END { exit !found }' /tmp/faults.stack
}

nth_case() {
	fi_available || { fail "nth: no fail-nth (a kernel without CONFIG_FAULT_INJECTION)"; return; }
	pf_insmod || { fail "nth: insmod"; return; }
	fi_quiet failslab
	fi_quiet fail_page_alloc
	# nf_tables loaded: arming probes it (nft.c), and that can fail too.
	modprobe nf_tables || fail "nth: modprobe nf_tables"
	# Arming needs set_ftrace_pid set (the tracefs watch).
	idle_pid > $T/set_ftrace_pid
	# Not CLEAR: pktfilt's teardown has no failure branch, and a
	# failure inside unregister_kprobe() (ftrace_set_filter_ip()'s
	# allocation, kernel/kprobes.c __disarm_kprobe_ftrace()) leaves the
	# kprobe registered with kprobes' own count already decremented, a
	# WARN: no caller can repair that, and the next register_kprobe()
	# walks a freed module's kprobe.
	for s in eager lazy bpf ready replace get; do
		seen=$(dmesg | wc -l)
		if out=$(pffail -v "$s" 2>&1); then
			ok "nth: $s: every fault point once, the state clean after each"
		else
			fail "nth: $s" "$(echo "$out" | tr '\n' ';')"
		fi
		echo "$out" | sed 's/^/# /'
		# Every refusal of pktfilt's own says why (extack); the
		# generic netlink core's (its attribute buffer) cannot.
		for n in $(echo "$out" | sed -n 's/.*: fault \([0-9]*\): .* without extack$/\1/p'); do
			if noextack_whose "$s" "$n"; then
				fail "nth: $s: fault $n: pktfilt refused without an extack message"
			else
				ok "nth: $s: fault $n: refused without extack by the generic netlink core, not pktfilt"
			fi
		done
		fault_dmesg_check "nth: $s: dmesg clean but for the reports of the injected failures" "$seen"
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
