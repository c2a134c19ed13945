# SPDX-License-Identifier: GPL-2.0
# Every VM test, run in the guest by `selftests/vm/run -- sh selftests/vm/tests/all.sh`.
# Ends with "vmtest: N passed, M failed".
. /pktfilt/selftests/vm/lib.sh
. /pktfilt/selftests/vm/tests/common.sh
. /pktfilt/selftests/vm/tests/core.sh
. /pktfilt/selftests/vm/tests/trace.sh

echo "kernel $(uname -r)"
topo_setup
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
timed rmmod_case
timed timing_case
trace_teardown
trace_cases
check_dmesg
summary
