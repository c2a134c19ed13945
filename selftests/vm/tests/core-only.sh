# SPDX-License-Identifier: GPL-2.0
# core.sh's cases without trace.sh's (all.sh runs both), or some of them:
#   selftests/vm/run --kernel 6.12 -- sh selftests/vm/tests/core-only.sh [CASE...]
# CASE: a function of core.sh, its arguments after colons (core_case udp 4
# is "core_case:udp:4"); none: core_cases, all of them. The arm64 group of
# selftests/check runs it whole (selftests/lib/arm64-vm).
. /pktfilt/selftests/vm/lib.sh
. /pktfilt/selftests/vm/tests/common.sh
. /pktfilt/selftests/vm/tests/core.sh

echo "kernel $(uname -r)"
topo_setup
[ $# -gt 0 ] || core_cases
for c in "$@"; do
	# shellcheck disable=SC2046
	timed $(echo "$c" | tr ':' ' ')
done
check_dmesg
summary
