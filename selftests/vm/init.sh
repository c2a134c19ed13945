#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the pktfilt test VM (busybox sh, PID 1). Installed by
# selftests/vm/run, which also appends /etc/vm/env and /etc/vm/cmd for each
# run as a second cpio archive.
#
# It mounts the usual filesystems, loads (modprobe) the kernel modules listed
# in /etc/vm/modules, runs /etc/vm/cmd with /bin/sh from /pktfilt with its output
# on the console, checks dmesg for BUG/WARNING/Oops/Call Trace (and kCFI's
# "CFI failure at", a BUG or, with CFI_PERMISSIVE, a WARNING), prints
# "<marker> exit=RC dmesg=ok|bad" (the host strips that line), and powers off.

export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root
export TERM="${TERM:-linux}"

# VM_MARKER, VM_INTERACTIVE, VM_DMESG_IGNORE come from the host.
VM_MARKER=
VM_INTERACTIVE=0
VM_DMESG_IGNORE=
VM_TIMEOUT=
# shellcheck source=/dev/null
. /etc/vm/env

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
exec </dev/console >/dev/console 2>&1
# The host shows the console from here on; anything going wrong below shows.
[ "$VM_INTERACTIVE" = 1 ] || echo "$VM_MARKER start"
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
mkdir -p /run/netns
mount -t tmpfs tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing
mount -t bpf bpf /sys/fs/bpf 2>/dev/null
ln -s /proc/self/fd /dev/fd 2>/dev/null
ln -s /proc/mounts /etc/mtab 2>/dev/null
hostname pktfilt-vm
# selftests/check boots some groups with maxcpus=1, so that code patching
# at boot (ftrace=function_graph) runs on one vCPU only: the emulator can
# run stale text on a vCPU running while another patches it. The tests
# want every vCPU, so the rest come online here.
for _c in /sys/devices/system/cpu/cpu[0-9]*/online; do
	[ "$(cat "$_c" 2>/dev/null)" = 0 ] && echo 1 >"$_c"
done
echo /sbin/modprobe >/proc/sys/kernel/modprobe

while read -r m; do
	[ -n "$m" ] && { modprobe "$m" || echo "vm-init: modprobe $m failed"; }
done </etc/vm/modules

ip link set lo up

hang_report() {
	echo "vm-init: still running 60 s before the timeout; processes:"
	for d in /proc/[0-9]*; do
		read -r _st <"$d/stat" 2>/dev/null || continue
		_cmd=$(tr '\0' ' ' <"$d/cmdline" 2>/dev/null)
		[ -n "$_cmd" ] || continue	# kernel threads
		echo "vm-init: ${d#/proc/} $(echo "$_st" | sed 's/^[^)]*) //' | cut -d' ' -f1) $_cmd"
		sed 's/^/vm-init:     /' "$d/stack" 2>/dev/null | head -12
	done
	echo "vm-init: blocked tasks and the kernel log's tail:"
	echo w >/proc/sysrq-trigger 2>/dev/null
	dmesg | tail -80 | sed 's/^/vm-init: /'
}

# For the host's freeze watch (selftests/vm/run): where the kernel text is
# (KASLR), and a heartbeat every 20 s. A guest that stops beating froze
# as a whole, every vCPU stuck, since a user-space sleep loop still runs
# under any load the tests make.
if [ "$VM_INTERACTIVE" != 1 ]; then
	echo "$VM_MARKER stext=$(awk '$3 == "_stext" { print $1; exit }' /proc/kallsyms)"
	(while sleep 20; do echo "$VM_MARKER alive"; done) &
	beat_pid=$!
fi

cd /pktfilt || cd /
if [ "$VM_INTERACTIVE" = 1 ]; then
	echo "pktfilt VM: $(uname -r); 'poweroff -f' or exit the shell to stop"
	if [ -s /etc/vm/cmd ]; then
		setsid cttyhack /bin/sh /etc/vm/cmd
	else
		# busybox ash for its line editing; /etc/profile aliases the
		# commands whose real programs its applets would shadow (ip).
		setsid cttyhack /bin/busybox ash -l
	fi
	rc=$?
else
	# A run about to be killed for its timeout says first where every
	# process waits: a hang in user space prints nothing by itself.
	if [ "${VM_TIMEOUT:-0}" -gt 120 ]; then
		(sleep $((VM_TIMEOUT - 60)) && hang_report) &
		hang_pid=$!
	fi
	/bin/sh /etc/vm/cmd </dev/null
	rc=$?
	[ -n "${hang_pid:-}" ] && kill "$hang_pid" 2>/dev/null
	kill "$beat_pid" 2>/dev/null
fi

# Kernel complaints anywhere since boot fail the run. VM_DMESG_IGNORE is an
# extended regex of known-harmless lines.
dmesg_status=ok
bad=$(dmesg | grep -E 'BUG|WARNING|Oops|Call Trace|CFI failure')
if [ -n "$bad" ] && [ -n "$VM_DMESG_IGNORE" ]; then
	bad=$(printf '%s\n' "$bad" | grep -Ev "$VM_DMESG_IGNORE")
fi
if [ -n "$bad" ]; then
	dmesg_status=bad
	echo "vm: dmesg has BUG/WARNING/Oops/Call Trace; full dmesg follows"
	echo "----- dmesg -----"
	dmesg
	echo "----- end of dmesg -----"
fi

if [ "$VM_INTERACTIVE" = 1 ]; then
	echo "vm: exit $rc, dmesg $dmesg_status"
else
	echo "$VM_MARKER exit=$rc dmesg=$dmesg_status"
fi
poweroff -f
# Should poweroff fail, PID 1 must not exit normally; force it.
echo 1 >/proc/sys/kernel/sysrq
echo o >/proc/sysrq-trigger
sleep 5
