#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# selftests/vm/groups.sh NAME 'SCRIPT [ARGS...]' [NAME 'SCRIPT [ARGS...]']...
#
# Runs in the guest: several test groups in one VM boot, each as
# "sh selftests/vm/tests/SCRIPT ARGS...", one after the other. selftests/check
# boots one VM per kernel for the groups that do not need a fresh kernel
# (and one for those with their own kernel command line), so that the boot,
# the build checks and the initramfs are paid once.
#
# Each group is framed by two lines the host parses (selftests/check):
#
#	vmgroup: NAME start
#	... the group's output, ending with its "vmtest: N passed, M failed" ...
#	vmgroup: NAME end rc=RC SECONDS s
#
# A group that did not print its end line did not finish (the guest died,
# froze or timed out in it); the host retries it and those after it when
# that was a known emulator fault, and keeps the results of the groups
# before. Between groups: what a group may leave behind (its background
# senders, network namespaces, the module, /tmp) is cleared; tracefs is
# left as it is (every group sets up its own, and each tracer switch is a
# chance of the emulator fault of selftests/vm/README.md). The dmesg check
# of each group starts where the previous group's ended (lib.sh reads
# /run/vmtest.dmesg-seen).
#
# Exits non-zero if any group did.

between_groups() {
	for _p in pfsend pffuzz pfpreempt pfbench pktfilt; do
		killall -q -9 "$_p" 2>/dev/null
	done
	sleep 0.2
	ip -all netns delete 2>/dev/null
	grep -q '^pktfilt ' /proc/modules && rmmod pktfilt 2>/dev/null
	rm -rf /tmp/* 2>/dev/null
	return 0
}

final=0
first=1
while [ $# -ge 2 ]; do
	name=$1 spec=$2
	shift 2
	[ "$first" = 1 ] || between_groups
	first=0
	dmesg | wc -l > /run/vmtest.dmesg-seen
	echo "vmgroup: $name start"
	t0=$(cut -d. -f1 /proc/uptime)
	# shellcheck disable=SC2086 # SPEC is a script and its words
	(cd /pktfilt && sh selftests/vm/tests/$spec)
	rc=$?
	echo "vmgroup: $name end rc=$rc $(($(cut -d. -f1 /proc/uptime) - t0)) s"
	[ "$rc" -eq 0 ] || final=$rc
done
rm -f /run/vmtest.dmesg-seen
exit "$final"
