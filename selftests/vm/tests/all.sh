# SPDX-License-Identifier: GPL-2.0
# Every VM test, run in the guest by `selftests/vm/run -- sh selftests/vm/tests/all.sh`.
# Ends with "vmtest: N passed, M failed".
. /pktfilt/selftests/vm/lib.sh
. /pktfilt/selftests/vm/tests/common.sh
. /pktfilt/selftests/vm/tests/core.sh
. /pktfilt/selftests/vm/tests/trace.sh

echo "kernel $(uname -r)"
topo_setup
core_cases
trace_teardown
trace_cases
check_dmesg
summary
