#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The reproducer of the emulator's stale-text fault (selftests/vm/README.md,
# "Known emulator faults"), with no pktfilt involved: UDP flows between two
# namespaces from every vCPU while current_tracer goes from nop to
# function_graph (every function) and back, TCG_TOGGLES times (default
# 100). Each switch re-patches every ftrace call site with text_poke_bp()
# while other CPUs run them. Prints one line per 10 toggles and, at the
# end, "tcg-fault: N toggles in S s"; a faulting emulator freezes or
# soft-locks the guest before that (run under make check's
# softlockup_panic=1 so a lockup ends the run):
#
#   PKTFILT_VM_NO_MODULE=1 PKTFILT_VM_APPEND=softlockup_panic=1 \
#     selftests/vm/run --kernel 6.1 -- sh selftests/vm/tests/tcg-fault.sh
. /pktfilt/selftests/vm/lib.sh

toggles=${TCG_TOGGLES:-100}
ns_setup || exit 1
ip netns exec b pfsend udp-listen --port 9 --count 1000000000 --timeout 100000 \
	>/dev/null 2>&1 &
ncpu=$(grep -c ^processor /proc/cpuinfo)
cpu=0
while [ "$cpu" -lt "$ncpu" ]; do
	ip netns exec a taskset -c "$cpu" sh -c \
		'while :; do pfsend udp -q --dst 10.9.0.2 --dport 9 --count 200; done' \
		>/dev/null 2>&1 &
	cpu=$((cpu + 1))
done
t0=$(date +%s)
i=0
while [ "$i" -lt "$toggles" ]; do
	echo function_graph >/sys/kernel/tracing/current_tracer
	sleep 0.2
	echo nop >/sys/kernel/tracing/current_tracer
	sleep 0.2
	i=$((i + 1))
	[ $((i % 10)) -eq 0 ] && echo "tcg-fault: $i toggles, $(($(date +%s) - t0)) s"
done
echo "tcg-fault: $i toggles in $(($(date +%s) - t0)) s"
kill $(jobs -p) 2>/dev/null
wait 2>/dev/null
ns_cleanup
