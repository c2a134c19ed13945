# SPDX-License-Identifier: GPL-2.0
# pktfilt trace's VM tests alone (all.sh runs them with the rest):
#   selftests/vm/run --kernel 6.1 -- sh selftests/vm/tests/trace-only.sh [CASE...]
# CASE: a function of trace.sh (tr_case udp 4 text is "tr_case:udp:4:text");
# none: trace_cases, all of them.
. /pktfilt/selftests/vm/lib.sh
. /pktfilt/selftests/vm/tests/common.sh
. /pktfilt/selftests/vm/tests/trace.sh

echo "kernel $(uname -r)"
topo_setup
if [ $# -eq 0 ]; then
	trace_cases
else
	mkdir -p $TR
	insmod $PKTFILT_KO
	tr_user_state
	for c in "$@"; do
		# shellcheck disable=SC2046
		$(echo "$c" | tr ':' ' ')
	done
fi
check_dmesg
summary
