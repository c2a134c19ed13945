# SPDX-License-Identifier: GPL-2.0
# Some of core.sh's cases alone (all.sh runs them all):
#   selftests/vm/run --kernel 6.12 -- sh selftests/vm/tests/core-only.sh CASE...
# CASE: a function of core.sh, its arguments after colons (core_case udp 4
# is "core_case:udp:4").
. /pktfilt/selftests/vm/lib.sh
. /pktfilt/selftests/vm/tests/common.sh
. /pktfilt/selftests/vm/tests/core.sh

echo "kernel $(uname -r)"
topo_setup
for c in "$@"; do
	# shellcheck disable=SC2046
	timed $(echo "$c" | tr ':' ' ')
done
check_dmesg
summary
