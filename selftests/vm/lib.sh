# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# selftests/vm/lib.sh - helpers for test scripts that run INSIDE the VM.
#
# POSIX sh only (the VM's /bin/sh is dash, and the scripts must also work
# with busybox sh). In a test:
#
#	. /pktfilt/selftests/vm/lib.sh
#	ns_setup
#	if ip netns exec a ping -c1 -W2 10.9.0.2 >/dev/null; then
#		ok "ping a -> b"
#	else
#		fail "ping a -> b" "no reply"
#	fi
#	check_dmesg
#	summary
#
# Output is TAP-like: "ok N - name" / "not ok N - name: why", and summary
# prints "vmtest: N passed, M failed" and returns non-zero if any failed.

VMTEST_PASSED=0
VMTEST_FAILED=0
# Where check_dmesg starts: the boot, or, when several groups share a boot
# (selftests/vm/groups.sh), the end of the previous group's log.
VMTEST_DMESG_SEEN=$(cat /run/vmtest.dmesg-seen 2>/dev/null || echo 0)
TRACEFS=/sys/kernel/tracing

# --- reporting ---------------------------------------------------------------

# ok NAME
ok() {
	VMTEST_PASSED=$((VMTEST_PASSED + 1))
	echo "ok $((VMTEST_PASSED + VMTEST_FAILED)) - $1"
}

# fail NAME [WHY]
fail() {
	VMTEST_FAILED=$((VMTEST_FAILED + 1))
	if [ -n "${2:-}" ]; then
		echo "not ok $((VMTEST_PASSED + VMTEST_FAILED)) - $1: $2"
	else
		echo "not ok $((VMTEST_PASSED + VMTEST_FAILED)) - $1"
	fi
}

# check NAME CMD [ARGS...]: ok if CMD succeeds, else fail with its status.
check() {
	_name=$1
	shift
	if "$@"; then
		ok "$_name"
	else
		fail "$_name" "'$*' exited $?"
	fi
}

# check_dmesg [NAME]: fail if the kernel logged BUG, WARNING, Oops, a kCFI
# report (CFI failure) or a
# Call Trace since the previous check_dmesg (or boot), printing those lines.
check_dmesg() {
	_name=${1:-dmesg clean}
	_log=$(dmesg)
	_total=$(printf '%s\n' "$_log" | wc -l)
	_bad=$(printf '%s\n' "$_log" | tail -n "+$((VMTEST_DMESG_SEEN + 1))" |
		grep -E 'BUG|WARNING|Oops|Call Trace|CFI failure')
	VMTEST_DMESG_SEEN=$_total
	if [ -n "$_bad" ]; then
		printf '%s\n' "$_bad" | sed 's/^/# /'
		fail "$_name" "kernel complained (see dmesg)"
		return 1
	fi
	ok "$_name"
}

# --- kmemleak (debug kernels) -------------------------------------------------

KMEMLEAK=/sys/kernel/debug/kmemleak

# kmemleak_baseline: on a kernel with kmemleak, forget what it suspects
# already (boot-time allocations of the kernel's own), so that the check at
# the end reports only what leaked while the test ran. Run when lib.sh is
# sourced.
kmemleak_baseline() {
	[ -w $KMEMLEAK ] || return 0
	echo scan > $KMEMLEAK 2>/dev/null
	echo clear > $KMEMLEAK 2>/dev/null
	return 0
}

# kmemleak_check: on a kernel with kmemleak, fail if it suspects anything
# allocated since kmemleak_baseline, printing the reports. An object must be
# unreferenced for 5 s and through two scans before kmemleak reports it.
kmemleak_check() {
	[ -w $KMEMLEAK ] || return 0
	echo scan > $KMEMLEAK
	sleep 6
	echo scan > $KMEMLEAK
	_n=$(grep -c '^unreferenced object' $KMEMLEAK)
	if [ "$_n" -eq 0 ]; then
		ok "kmemleak: no suspected leaks"
	else
		sed 's/^/# /' $KMEMLEAK | head -60
		fail "kmemleak" "$_n suspected leak(s) (above)"
	fi
}

# summary: the closing line; returns 1 if anything failed.
summary() {
	kmemleak_check
	echo "vmtest: $VMTEST_PASSED passed, $VMTEST_FAILED failed"
	[ "$VMTEST_FAILED" -eq 0 ]
}

# --- network namespaces --------------------------------------------------------

# ns_setup: netns "a" and "b" joined by a veth pair:
#   a: veth-a 10.9.0.1/24 fd00::1/64     b: veth-b 10.9.0.2/24 fd00::2/64
# lo up in both; waits (up to 5 s) for the link to come up.
ns_setup() {
	ip netns add a || return 1
	ip netns add b || return 1
	ip link add veth-a netns a type veth peer name veth-b netns b || return 1
	ip -n a link set lo up &&
	ip -n b link set lo up &&
	ip -n a addr add 10.9.0.1/24 dev veth-a &&
	ip -n a addr add fd00::1/64 dev veth-a nodad &&
	ip -n b addr add 10.9.0.2/24 dev veth-b &&
	ip -n b addr add fd00::2/64 dev veth-b nodad &&
	ip -n a link set veth-a up &&
	ip -n b link set veth-b up || return 1
	_i=0
	while [ $_i -lt 50 ]; do
		if ip -n a link show veth-a | grep -q LOWER_UP &&
		   ip -n b link show veth-b | grep -q LOWER_UP; then
			return 0
		fi
		sleep 0.1
		_i=$((_i + 1))
	done
	echo "ns_setup: veth link did not come up" >&2
	return 1
}

# ns_cleanup: remove what ns_setup made (deleting a netns deletes its veth).
ns_cleanup() {
	ip netns del a 2>/dev/null
	ip netns del b 2>/dev/null
	return 0
}

# wait_for_file FILE [TENTHS]: wait until FILE exists, by default up to 5 s
# (e.g. for "pfsend udp-listen --ready FILE" started in the background).
wait_for_file() {
	_i=0
	while [ ! -e "$1" ]; do
		[ $_i -ge "${2:-50}" ] && return 1
		sleep 0.1
		_i=$((_i + 1))
	done
}

# --- tracefs -------------------------------------------------------------------
# Neither helper changes the current directory.

# idle_pid: a PID for set_ftrace_pid that no task has: pid_max. Before 5.17
# (5.10) set_ftrace_pid only takes PIDs below pid_max (a bitmap of pid_max
# bits): pid_max - 1 there, which a task gets only once the PIDs wrap.
idle_pid() {
	_m=$(cat /proc/sys/kernel/pid_max)
	case $(uname -r) in
	[1-4].*|5.[0-9].*|5.1[0-6].*) echo $((_m - 1)) ;;
	*) echo "$_m" ;;
	esac
}

# drop_reason NAME: how pktfilt_free names the drop reason NAME on this
# kernel: NAME, or UNKNOWN where kfree_skb gives no reason (before 5.17).
drop_reason() {
	if grep -q 'reason' "$TRACEFS/events/skb/kfree_skb/format" 2>/dev/null; then
		echo "$1"
	else
		echo UNKNOWN
	fi
}

# tracefs_prepare: function_graph tracer, no irq functions in the graph,
# trace buffer empty, set_ftrace_pid set to a pid that cannot exist (pid_max)
# so that no task is traced until a test says which, tracing on.
tracefs_prepare() {
	echo 0 >"$TRACEFS/tracing_on" &&
	echo nop >"$TRACEFS/current_tracer" &&
	echo >"$TRACEFS/trace" &&
	idle_pid >"$TRACEFS/set_ftrace_pid" &&
	echo 0 >"$TRACEFS/options/funcgraph-irqs" &&
	echo function_graph >"$TRACEFS/current_tracer" &&
	echo 1 >"$TRACEFS/tracing_on"
}

# tracefs_reset: back to the boot state: nop tracer, no pid or function
# filters, all events off, buffer empty, funcgraph-irqs on, tracing on.
tracefs_reset() {
	echo 0 >"$TRACEFS/tracing_on"
	echo nop >"$TRACEFS/current_tracer"
	echo >"$TRACEFS/set_ftrace_pid"
	echo >"$TRACEFS/set_ftrace_filter"
	echo >"$TRACEFS/set_graph_function"
	echo 0 >"$TRACEFS/events/enable"
	echo 1 >"$TRACEFS/options/funcgraph-irqs"
	echo >"$TRACEFS/trace"
	echo 1 >"$TRACEFS/tracing_on"
}

kmemleak_baseline
