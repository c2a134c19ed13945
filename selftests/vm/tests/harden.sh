# SPDX-License-Identifier: GPL-2.0
# Issue 12's VM tests (the hardening of a line-by-line review): counts
# above INT_MAX, who may read what (events group, GET, STATS), the gate's
# repair when set_ftrace_pid is emptied under it, another module in the
# same protocol slot, a tracefs watcher that cannot be registered, arming
# that stalls no other generic netlink family, and rmmod right after
# arming with small counts under matching floods. And the lazy hold's
# failure branches, forced by module/testfault.c's knobs (hold*).
#
#	selftests/vm/run --kernel 6.12 -- sh selftests/vm/tests/harden.sh [CASE...]
#
# CASEs: bigcount perm slot watch gateopt ibt armstall settle closerace trialrace unloadclaim rmmodcount
# holddst holdsk holdalloc holdbound holdreplace holddev
# (default: all, in this order: settle leaves the nop tracer on).
# Knobs: SETTLE_ROUNDS (40), RMMOD_CYCLES (30).
. /pktfilt/selftests/vm/lib.sh
. /pktfilt/selftests/vm/tests/common.sh

SLOTTEST_KO=/pktfilt/kmod/pf_slottest.ko
UNPRIV="setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps=-all --bounding-set=-all"

# out_has NAME TEXT OUTPUT: ok if OUTPUT contains TEXT.
out_has() {
	case $3 in
	*"$2"*) ok "$1" ;;
	*) fail "$1" "$(echo "$3" | tr '\n' ';')" ;;
	esac
}

# out_lacks NAME TEXT OUTPUT: ok if OUTPUT does not contain TEXT.
out_lacks() {
	case $3 in
	*"$2"*) fail "$1" "$(echo "$3" | tr '\n' ';')" ;;
	*) ok "$1" ;;
	esac
}

# Packets IP delivered in namespace b (Ip: InDelivers).
b_delivered() { ip netns exec b awk '/^Ip: [0-9]/ { print $10 }' /proc/net/snmp; }

# listen_while_sending CMD...: runs CMD --listen-ms 3000 (a pfjoin) while 5
# matching packets are sent, and prints its output.
listen_while_sending() {
	"$@" --listen-ms 3000 > /tmp/pfjoin.out 2>&1 &
	_jpid=$!
	sleep 1
	ip netns exec a pfsend udp --src 10.9.0.1 --dst 10.9.0.2 \
		--sport 4000 --dport 9000 --count 5 > /dev/null
	wait $_jpid
	cat /tmp/pfjoin.out
}

# expect_udp_delivered NAME: 10 UDP packets from a reach b's IP layer.
expect_udp_delivered() {
	_d0=$(b_delivered)
	ip netns exec a pfsend udp --src 10.9.0.1 --dst 10.9.0.2 \
		--sport 4000 --dport 9001 --count 10 > /dev/null
	if [ "$(b_delivered)" -gt "$_d0" ]; then
		ok "$1"
	else
		fail "$1" "InDelivers did not grow"
	fi
}

# remaining: the "remaining:" of pktfilt show.
remaining() { pktfilt show | sed -n 's/^remaining: *//p'; }

# Flood of matching UDP packets (dport 9000) from both vCPUs, until
# /tmp/hflood.stop exists.
flood_start() {
	rm -f /tmp/hflood.stop
	for cpu in 0 1; do
		(
			while [ ! -e /tmp/hflood.stop ]; do
				ip netns exec a taskset -c $cpu pfsend udp -q --src 10.9.0.1 \
					--dst 10.9.0.2 --sport 400$cpu --dport 9000 --count 200
			done
		) > /dev/null 2>&1 &
	done
}

flood_stop() {
	touch /tmp/hflood.stop
	wait
}

# switch_event 1|0: the sched_switch event on (off), so that the tracepoint
# keeps two probes of its own (the event's and the comm recorder's) while
# set_ftrace_pid comes and goes: ftrace's PID probe then joins and leaves
# the tracepoint's iterator, and no text of __schedule() is re-patched,
# where QEMU's TCG ran stale copies of it on the other vCPU (an int3 oops
# at __schedule+0x339 on 6.12; selftests/vm/README.md, "Known emulator
# faults"). The same for the skb tracepoints of the module's free probes
# (skb_events_hold). The trace buffer is emptied after.
switch_event() {
	echo "$1" > $T/events/sched/sched_switch/enable
	skb_events_hold "$1"
	[ "$1" = 0 ] && echo > $T/trace
	return 0
}

# fgraph_every_cpu NAME: with set_ftrace_pid empty, function_graph traces
# every CPU: a command pinned to each must show up in the trace. Leaves the
# nop tracer on.
fgraph_every_cpu() {
	echo > $T/set_graph_function
	echo vfs_read > $T/set_ftrace_filter ||
		fail "$1: vfs_read in set_ftrace_filter"
	echo function_graph > $T/current_tracer
	echo > $T/trace
	echo 1 > $T/tracing_on
	for cpu in 0 1; do
		# The shell's read builtin: read(2) for sure (busybox cat
		# may use sendfile(2), which has no vfs_read()).
		taskset -c $cpu sh -c 'read l < /proc/version; read l < /proc/version'
	done
	echo 0 > $T/tracing_on
	for cpu in 0 1; do
		n=$(grep -c "^ $cpu).*vfs_read" $T/trace)
		if [ "$n" -gt 0 ]; then
			ok "$1: function_graph still traces CPU $cpu ($n calls)"
		else
			fail "$1: function_graph still traces CPU $cpu" "no vfs_read on it"
			grep -v '^#' $T/trace | head -5
		fi
	done
	echo nop > $T/current_tracer
	echo > $T/set_ftrace_filter
	echo > $T/trace
	echo 1 > $T/tracing_on
}

# test_delays: the module's "test delay" lines in dmesg, one word each
# (exit, last, count-reached, gate), oldest first.
test_delays() {
	dmesg | sed -n 's/.*pktfilt: test delay: \([a-z-]*\).*/\1/p' | tr '\n' ' '
}

# --- counts above INT_MAX ----------------------------------------------------
# The count was an atomic_t: 2147483648 and more read as negative, and every
# match counted as exhausted (nothing traced, never disarmed).
bigcount_case() {
	pf_insmod || { fail "bigcount: insmod"; return; }
	trace_start
	# Room for the 6 graphs on the debug kernel too.
	buffer_resize 8192
	for n in 2147483648 4294967295; do
		pktfilt set --proto udp --daddr 10.9.0.2 --dport 9000 --count $n ||
			fail "bigcount: set --count $n"
		expect_eq "bigcount: --count $n: remaining before" "$(remaining)" $n
		t0=$(pf_stat traced)
		ip netns exec a pfsend udp --src 10.9.0.1 --dst 10.9.0.2 \
			--sport 4000 --dport 9000 --count 3 > /dev/null
		expect_eq "bigcount: --count $n: 3 matching packets traced" \
			"$(($(pf_stat traced) - t0)) $(remaining)" "3 $((n - 3))"
	done
	trace_stop
	buffer_restore
	expect_eq "bigcount: 6 events in the trace" "$(trace_events | wc -l)" 6
	expect_eq "bigcount: nothing exhausted" "$(pf_stat exhausted)" 0
	pktfilt clear
	pf_rmmod
}

# --- who may read what -------------------------------------------------------
# The events group carried every traced packet's tuple to any local user,
# and GET the filter (the hosts traced) to any user and any container.
perm_case() {
	pf_insmod || { fail "perm: insmod"; return; }
	trace_start
	pktfilt set --proto udp --daddr 10.9.0.2 --dport 9000 --count 0 ||
		fail "perm: root set"

	out=$(pfjoin 2>&1)
	out_has "perm: root joins the events group" "joined" "$out"
	out=$($UNPRIV pfjoin 2>&1)
	out_has "perm: an unprivileged user cannot join the events group" \
		"join: Operation not permitted" "$out"
	out=$(unshare -Ur pfjoin 2>&1)
	out_has "perm: root of a user namespace cannot join the events group" \
		"join: Operation not permitted" "$out"
	# Joined in its own netns (allowed there), it still hears nothing of
	# the host's packets: notifications go to the initial netns only.
	out_has "perm: a container's root, joined in its own netns, gets no packet" \
		"joined, 0 notifications" "$(listen_while_sending unshare -Urn pfjoin)"
	# The same for root in the initial netns: it hears them (the test
	# above can fail).
	out_has "perm: root in the initial netns gets the 5 packets" \
		"joined, 5 notifications" "$(listen_while_sending pfjoin)"

	# Nor the counters: matched and traced would tell whoever sends
	# packets which of them match, i.e. the filter.
	for who in unprivileged userns container; do
		case $who in
		unprivileged) run=$UNPRIV ;;
		userns) run="unshare -Ur" ;;
		container) run="unshare -Urn" ;;
		esac
		if out=$($run pktfilt show 2>&1); then
			fail "perm: $who show refused" "$out"
		else
			out_has "perm: $who show refused, the message names CAP_NET_ADMIN" \
				"CAP_NET_ADMIN" "$out"
		fi
	done
	out=$(ip netns exec b pktfilt show 2>&1)
	out_has "perm: real root in another netns reads the filter" "10.9.0.2" "$out"
	out=$(pktfilt show 2>&1)
	out_has "perm: root reads the filter" "--dport 9000" "$out"
	trace_stop
	pktfilt clear
	pf_rmmod
}

# --- set_ftrace_pid emptied under the gate -----------------------------------
# Emptying set_ftrace_pid resets every CPU to "trace all"; a gate call that
# lands after that reset left "ignore" on its CPU, and function_graph then
# stayed silent there until set_ftrace_pid was written again.
settle_case() {
	rounds=${SETTLE_ROUNDS:-40}
	pf_insmod || { fail "settle: insmod"; return; }
	# The nop tracer while set_ftrace_pid comes and goes: with
	# function_graph on, every write re-patches ftrace's trampoline, and
	# under floods QEMU's TCG then runs stale copies of it (the emulator
	# fault of selftests/vm/README.md) in most boots on 6.1. The per-CPU
	# state the gate steers is the same with either tracer.
	echo 0 > $T/tracing_on
	echo nop > $T/current_tracer
	switch_event 1
	flood_start
	i=0 armed=0
	while [ $i -lt "$rounds" ]; do
		idle_pid > $T/set_ftrace_pid
		pktfilt set --proto udp --daddr 10.9.0.2 --dport 9000 --count 0 2>/dev/null &&
			armed=$((armed + 1))
		# Let matching packets open and close the gate meanwhile.
		sleep 0.2
		echo > $T/set_ftrace_pid
		i=$((i + 1))
	done
	flood_stop
	switch_event 0
	pktfilt clear 2>/dev/null
	expect_eq "settle: $rounds rounds of arming, then emptying set_ftrace_pid under matching floods" \
		"$armed" "$rounds"
	fgraph_every_cpu settle
	pf_rmmod
}

# --- arming does not stall the other generic netlink families -----------------
# Arming's slow part (synchronize_net(), kprobe registration) ran under the
# genetlink mutex, which every other family's requests take too, and every
# generic netlink socket's close then waited for pktfilt's lock. With
# arming held 5 s (test_delay_arm_ms), another client resolves a family
# with nlctrl, joins a group and closes its socket (pfjoin) while arming
# still goes on (before: only after it, some 4.5 s later).
armstall_case() {
	pf_insmod test_delay_arm_ms=5000 || { fail "armstall: insmod"; return; }
	trace_start
	pktfilt set --proto udp --daddr 10.9.0.2 --dport 9000 --count 1 > /tmp/armstall.out 2>&1 &
	spid=$!
	sleep 0.5
	t1=$(pfbench now)
	pfjoin > /tmp/pfjoin.out 2>&1 &
	jpid=$!
	# Where pfjoin waits, if it still does a second later.
	sleep 1
	jstack=$(cat /proc/$jpid/stack 2>/dev/null)
	wait $jpid
	t2=$(pfbench now)
	out=$(cat /tmp/pfjoin.out)
	kill -0 $spid 2>/dev/null && during=1 || during=0
	wait $spid
	src=$?
	ms=$(((t2 - t1) / 1000000))
	expect_eq "armstall: pktfilt set with arming held 5 s succeeds" "$src" 0
	if [ "$during" = 1 ] && [ "$ms" -lt 2500 ]; then
		ok "armstall: another genetlink client (nlctrl, join, close) done while arming goes on ($ms ms)"
	elif echo "$jstack" | grep -q 'rwsem_down_write' &&
	     echo "$jstack" | grep -q 'genl_bind'; then
		# Debian's 5.10 (its backport of the multicast permission
		# check) has genl_bind() take genl_lock_all(), cb_lock for
		# writing (mainline: for reading): a multicast join of any
		# family waits for every generic netlink request in
		# progress, each of which holds it for reading (genl_rcv()).
		# The kernel's lock, not pktfilt's.
		echo "# armstall: the join waited $ms ms in genl_bind(), for the kernel's cb_lock: $(echo "$jstack" | head -3 | tr '\n' ' ')"
		ok "armstall: another genetlink client waited only for the kernel's own cb_lock (genl_bind() takes it for writing here)"
	else
		fail "armstall: another genetlink client (nlctrl, join, close) done while arming goes on" \
			"pfjoin took $ms ms ($out); arming still going on then: $during"
	fi
	trace_stop
	pktfilt clear 2>/dev/null
	pf_rmmod
}

# race_arm NAME DELAY=MS...: for the races held open by the module's test
# delays: loaded with them, the nop tracer, the sched_switch event on (see
# switch_event), set_ftrace_pid set and --count 1 armed on port 9000.
race_arm() {
	_name=$1
	shift
	pf_insmod "$@" || { fail "$_name: insmod $*"; return 1; }
	echo 0 > $T/tracing_on
	echo nop > $T/current_tracer
	switch_event 1
	idle_pid > $T/set_ftrace_pid
	pktfilt set --proto udp --daddr 10.9.0.2 --dport 9000 --count 1 ||
		fail "$_name: pktfilt set --count 1"
}

# send_one_from_cpu1: one matching datagram, sent (and received: veth) on
# CPU 1.
send_one_from_cpu1() {
	ip netns exec a taskset -c 1 pfsend udp -q --src 10.9.0.1 --dst 10.9.0.2 \
		--sport 4001 --dport 9000 --count 1 > /dev/null 2>&1
}

# --- set_ftrace_pid emptied inside the gate's close, every time ----------------
# settle's rounds race by chance; here the window is held open: the next
# close spins 3 s inside ftrace's probe (test_delay_close_ms), after it
# read the PID lists and before it writes this CPU's value, and
# set_ftrace_pid is emptied meanwhile from the other CPU, by truncation
# alone (`: >`, as `> file` or a zero-length write does: echo's newline
# would be a write, and ftrace recomputes every CPU after a write). The
# probe's write then lands "ignore" after ftrace reset every CPU to
# "trace"; the gate must see the probe gone and set its CPU back.
closerace_case() {
	race_arm closerace test_delay_close_ms=3000 || return
	before=$(test_delays)
	send_one_from_cpu1 &
	spid=$!
	sleep 1
	taskset -c 0 sh -c ": > $T/set_ftrace_pid"
	wait $spid
	after=$(test_delays)
	expect_eq "closerace: set_ftrace_pid emptied while the gate's close was inside ftrace's probe" \
		"${after#"$before"}" "gate "
	switch_event 0
	pktfilt clear 2>/dev/null
	fgraph_every_cpu closerace
	pf_rmmod
}

# --- set_ftrace_pid emptied inside the gate's trial, every time ----------------
# The gate's trial (does its kprobe fire here? pf_gate_prepare() for each
# matching packet, pf_gate_kprobe_fires() for arming and pktfilt show)
# calls ftrace's probe as the close does, and had no repair after it. The
# window held open as in closerace: pktfilt show's trial on CPU 1 spins
# 3 s inside ftrace's probe (test_delay_trial_ms, written once the filter
# is armed, so that arming's own trial does not take it), and
# set_ftrace_pid is emptied meanwhile from CPU 0. The probe's write then
# lands "ignore" on CPU 1 after ftrace reset every CPU to "trace": before
# the fix, function_graph stayed silent there.
trialrace_case() {
	race_arm trialrace || return
	before=$(test_delays)
	echo 3000 > /sys/module/pktfilt/parameters/test_delay_trial_ms
	taskset -c 1 pktfilt show > /dev/null 2>&1 &
	spid=$!
	sleep 1
	taskset -c 0 sh -c ": > $T/set_ftrace_pid"
	wait $spid
	after=$(test_delays)
	expect_eq "trialrace: set_ftrace_pid emptied while the gate's trial was inside ftrace's probe" \
		"${after#"$before"}" "gate "
	switch_event 0
	pktfilt clear 2>/dev/null
	fgraph_every_cpu trialrace
	pf_rmmod
}

# --- rmmod while a packet claims the last count --------------------------------
# Exit cancelled the work items before it cleared the filter: a packet that
# claimed the last count meanwhile queued the disarming work after the
# cancel, and the work ran in freed module code. Held open here: rmmod
# waits 3 s before the filter goes (the tracefs watch already gone), one
# packet sent then claims --count 1 and spins 3 s before it queues the
# work, and the work sleeps 3 s before it takes the module's lock. With the
# old order the work wakes up in freed code (an oops, which check_dmesg
# reports); now rmmod waits for it.
unloadclaim_case() {
	race_arm unloadclaim test_delay_exit_ms=3000 test_delay_claim_ms=3000 \
		test_delay_work_ms=3000 || return
	before=$(test_delays)
	taskset -c 0 rmmod pktfilt > /tmp/unloadclaim.out 2>&1 &
	rpid=$!
	sleep 1
	send_one_from_cpu1 &
	spid=$!
	sleep 1.5
	# Cold for the gate's kprobe, removed at the end of the exit (see
	# pf_rmmod); ftrace waits for the spinning packet.
	echo > $T/set_ftrace_pid
	wait $spid
	wait $rpid
	rc=$?
	# The work's sleep ends: in freed code it would oops now.
	sleep 4
	switch_event 0
	expect_eq "unloadclaim: rmmod while a packet claims the last count succeeds" \
		"$rc $(grep -c '^pktfilt ' /proc/modules)" "0 0"
	after=$(test_delays)
	expect_eq "unloadclaim: the claim came inside rmmod, and the work after it" \
		"${after#"$before"}" "exit last count-reached "
}

# --- the lazy hold's failure branches (module/testfault.c) --------------------
# A filter armed lazily by hand (pktfilt set --lazy: no one says READY, so
# what it holds goes on at its bound), and a fault forced where no packet
# takes the branch by itself.
PARAMS=/sys/module/pktfilt/parameters

# hold_set ARGS...: pktfilt set --lazy --count 0 ARGS (set_ftrace_pid set
# first: arming needs it; the tracefs watch disarms at pf_rmmod's reset).
hold_set() {
	idle_pid > $T/set_ftrace_pid
	pktfilt set --lazy --count 0 "$@" || fail "pktfilt set --lazy $*" "exit $?"
}

# hold_faults: the module's test fault and delay lines in dmesg so far, one
# word each (dst, alloc, replayed, off-list).
hold_faults() {
	dmesg | sed -n -e "s/.*pktfilt: test fault: a held packet's \([a-z]*\).*/\1/p" \
		-e 's/.*pktfilt: test fault: the held packet replayed.*/replayed/p' \
		-e 's/.*pktfilt: test delay: a held packet off the list.*/off-list/p' |
		sed 's/^entry$/alloc/' | tr '\n' ' '
}

# b_udp FIELD: namespace b's Udp counter FIELD (InDatagrams, NoPorts).
b_udp() {
	ip netns exec b awk -v f="$1" '/^Udp: / {
		if (!c) { for (i = 2; i <= NF; i++) if ($i == f) c = i } else print $c }' /proc/net/snmp
}

# uptime_ms: /proc/uptime in milliseconds.
uptime_ms() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }

# b_noports_reach N TENTHS: wait until b's NoPorts reaches N, TENTHS of a
# second at most; prints the uptime_ms it did (or nothing).
b_noports_reach() {
	_i=0
	while [ $_i -lt "$2" ]; do
		if [ "$(b_udp NoPorts)" -ge "$1" ]; then
			uptime_ms
			return 0
		fi
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

# A held packet's noref dst that cannot be referenced (dst_hold_safe()
# failing: another CPU dropped the input route's last reference): the
# packet is not held and must go on with its route. skb_dst_force() left
# it without one, and udp, icmp (and tcp's conn_request, IPv6's
# ipv6_unicast_destination()) dereferenced NULL: an oops; at tx,
# dst_output().
holddst_case() {
	pf_insmod || { fail "holddst: insmod"; return; }
	before=$(hold_faults)
	for v in 4 6; do
		src=10.9.0.1 dst=10.9.0.2 six=
		[ $v = 6 ] && src=fd00::1 dst=fd00::2 six=-6
		# The input route cached first: the first packet to an
		# address gets a counted dst of its own, the next the
		# cache's, without a reference (the branch's).
		ip netns exec a pfsend udp $six --src $src --dst $dst --sport 4000 \
			--dport 9001 -q
		hold_set --hold 30 --at l4 --proto udp --daddr $dst --dport 9000
		echo 1 > $PARAMS/test_fault_dst
		rm -f /tmp/holddst.ready
		ip netns exec b pfsend udp-listen $six --port 9000 --timeout 5 \
			--ready /tmp/holddst.ready > /tmp/holddst.out 2>&1 &
		lpid=$!
		wait_for_file /tmp/holddst.ready
		ip netns exec a pfsend udp $six --src $src --dst $dst --sport 4000 \
			--dport 9000 -q
		wait $lpid
		expect_eq "holddst: udp v$v, its dst not referenced: not held, received at once" \
			"$(cat /tmp/holddst.out)" "received 1"
	done
	hold_set --hold 30 --at l4 --proto icmp --daddr 10.9.0.2
	echo 1 > $PARAMS/test_fault_dst
	if ip netns exec a ping -c 1 -W 5 10.9.0.2 > /dev/null 2>&1; then
		ok "holddst: ping, its dst not referenced: not held, answered"
	else
		fail "holddst: ping, its dst not referenced: not held, answered" "no reply"
	fi
	# tx: TCP's output sets a noref dst (__ip_queue_xmit()); without it
	# dst_output() called NULL. A SYN to a closed port: refused.
	hold_set --hold 30 --at tx --proto tcp --daddr 10.9.0.2 --dport 81
	echo 1 > $PARAMS/test_fault_dst
	if ip netns exec a pfsend tcp --src 10.9.0.1 --dst 10.9.0.2 --dport 81 -q; then
		ok "holddst: a TCP SYN at tx, its dst not referenced: not held, refused"
	else
		fail "holddst: a TCP SYN at tx, its dst not referenced: not held, refused" "pfsend tcp failed"
	fi
	after=$(hold_faults)
	expect_eq "holddst: the fault fired for each" "${after#"$before"}" "dst dst dst dst "
	pktfilt clear
	pf_rmmod
}

# A held tx packet's socket that cannot be referenced (another CPU dropped
# its last reference meanwhile): the packet is not held, and goes on at
# once with the socket and route the stack gave it (the route referenced
# already: UDP's output sets a counted dst, so this branch is the first
# that fails).
holdsk_case() {
	pf_insmod || { fail "holdsk: insmod"; return; }
	before=$(hold_faults)
	hold_set --hold 30 --at tx --proto udp --daddr 10.9.0.2 --dport 9000
	echo 1 > $PARAMS/test_fault_sk
	n0=$(b_udp NoPorts)
	ip netns exec a pfsend udp --src 10.9.0.1 --dst 10.9.0.2 --sport 4000 --dport 9000 -q
	if b_noports_reach $((n0 + 1)) 50 > /dev/null; then
		ok "holdsk: udp at tx, its socket not referenced: not held, received at once"
	else
		fail "holdsk: udp at tx, its socket not referenced: not held, received at once" \
			"not within 5 s (--hold 30)"
	fi
	after=$(hold_faults)
	expect_eq "holdsk: the fault fired" "${after#"$before"}" "socket "
	pktfilt clear
	pf_rmmod
}

# The first matching packet of a filter armed by hand cannot be held (its
# entry not allocated): the filter holds the next ones anyway, and each
# must go on at its bound. The bound was armed only where the first packet
# was held: the next were held until clear. (--hold 3: the emulator's
# sleep 0.3 and a look at the counters took over 1 s on a loaded host.)
holdalloc_case() {
	pf_insmod || { fail "holdalloc: insmod"; return; }
	before=$(hold_faults)
	hold_set --hold 3 --at l4 --proto udp --daddr 10.9.0.2 --dport 9000
	echo 1 > $PARAMS/test_fault_alloc
	n0=$(b_udp NoPorts)
	ip netns exec a pfsend udp --src 10.9.0.1 --dst 10.9.0.2 --sport 4000 --dport 9000 -q
	sleep 0.3
	expect_eq "holdalloc: the first packet, not held (no entry), goes on at once" \
		$(($(b_udp NoPorts) - n0)) 1
	ip netns exec a pfsend udp --src 10.9.0.1 --dst 10.9.0.2 --sport 4001 --dport 9000 -q
	t=$(uptime_ms)
	sleep 0.3
	expect_eq "holdalloc: the second is held" $(($(b_udp NoPorts) - n0)) 1
	if r=$(b_noports_reach $((n0 + 2)) 70); then
		ok "holdalloc: the second goes on at its bound, --hold 3 (after $((r - t)) ms)"
	else
		fail "holdalloc: the second goes on at its bound, --hold 3" "not within 7 s: held until clear"
		pktfilt show | grep -E 'lazy|hold|held|matched' | sed 's/^/# holdalloc: /'
	fi
	after=$(hold_faults)
	expect_eq "holdalloc: the fault fired once" "${after#"$before"}" "alloc "
	pktfilt clear
	pf_rmmod
}

# A hold that starts again after an expiry must not postpone the packets
# held before: A is held, then B; A goes on at its bound and the filter
# waits again; C, held then, asked for the scope again, which moved the
# bound's timer to C's deadline: B went on with C, its bound nearly
# doubled. With --hold 4, B held 2 s after A and C as soon as A went on,
# B must go on at its own deadline, some 2 s before C; a loaded host
# makes the emulator's timers and the polling late by seconds, so the
# order is what is checked, and each hold only against the bound plus
# 3 s.
holdbound_case() {
	pf_insmod || { fail "holdbound: insmod"; return; }
	hold_set --hold 4 --at l4 --proto udp --daddr 10.9.0.2 --dport 9000
	n0=$(b_udp NoPorts)
	ip netns exec a pfsend udp --src 10.9.0.1 --dst 10.9.0.2 --sport 4000 --dport 9000 -q
	ta=$(uptime_ms)
	sleep 2
	ip netns exec a pfsend udp --src 10.9.0.1 --dst 10.9.0.2 --sport 4001 --dport 9000 -q
	tb=$(uptime_ms)
	if ! ra=$(b_noports_reach $((n0 + 1)) 80); then
		fail "holdbound: A goes on at its bound" "not within 8 s"
		pktfilt clear
		pf_rmmod
		return
	fi
	ip netns exec a pfsend udp --src 10.9.0.1 --dst 10.9.0.2 --sport 4002 --dport 9000 -q
	tc=$(uptime_ms)
	rb=$(b_noports_reach $((n0 + 2)) 80)
	# C still held when B is seen gone on.
	cheld=$(($(b_udp NoPorts) - n0))
	rc=$(b_noports_reach $((n0 + 3)) 80)
	echo "# holdbound: A held $((ra - ta)) ms, B $((${rb:-0} - tb)) ms, C $((${rc:-0} - tc)) ms (--hold 4); C sent $((tc - tb)) ms after B"
	if [ -n "$rb" ] && [ "$cheld" = 2 ]; then
		ok "holdbound: B, held before A went on, goes on before C, held after"
	else
		fail "holdbound: B goes on before C" \
			"$cheld of 3 gone on when B was seen gone on (or 8 s later): B went on with C"
	fi
	if [ -n "$rb" ] && [ $((rb - tb)) -le 7000 ] && [ -n "$rc" ] && [ $((rc - tc)) -le 7000 ]; then
		ok "holdbound: B and C go on within their bound (+3 s)"
	else
		fail "holdbound: B and C go on within their bound (+3 s)" \
			"B held $((${rb:-99999} - tb)) ms, C $((${rc:-99999} - tc)) ms, --hold 4"
	fi
	pktfilt clear
	pf_rmmod
}

# Replacing a lazy filter (pktfilt set again) lets what it held go on at
# once, untraced: it waited for its bound (30 s here), or for the new
# filter's READY.
holdreplace_case() {
	pf_insmod || { fail "holdreplace: insmod"; return; }
	hold_set --hold 30 --at l4 --proto udp --daddr 10.9.0.2 --dport 9000
	n0=$(b_udp NoPorts)
	ip netns exec a pfsend udp --src 10.9.0.1 --dst 10.9.0.2 --sport 4000 --dport 9000 -q
	sleep 0.3
	expect_eq "holdreplace: the packet is held" $(($(b_udp NoPorts) - n0)) 0
	pktfilt set --lazy --count 0 --hold 30 --at l4 --proto udp --daddr 10.9.0.2 \
		--dport 9001 || fail "holdreplace: pktfilt set again" "exit $?"
	sleep 0.3
	expect_eq "holdreplace: replacing the filter lets its held packet go on at once" \
		$(($(b_udp NoPorts) - n0)) 1
	pktfilt clear
	pf_rmmod
}

# hold_dev_del NAME NS DEV: one packet held at tx waits 4 s off the list
# before its replay (test_fault_replay_ms); DEV is removed meanwhile. The
# removal must wait for the replay (a device the packet refers to is
# referenced), and the replay must end cleanly (check_dmesg).
hold_dev_del() {
	_i=0
	while [ $_i -lt 60 ]; do
		_f=$(hold_faults)
		case ${_f#"$before"} in *off-list*) break ;; esac
		sleep 0.1
		_i=$((_i + 1))
	done
	case ${_f#"$before"} in
	*off-list*) ;;
	*) fail "$1: the held packet waits before its replay" "no test delay line"; return ;;
	esac
	_t0=$(uptime_ms)
	ip -n "$2" link del "$3"
	_t1=$(uptime_ms)
	_f=$(hold_faults)
	case ${_f#"$before"} in
	*replayed*) ok "$1: $3 removed once the replay was over ($((_t1 - _t0)) ms)" ;;
	*) fail "$1: $3 removed once the replay was over" \
		"removed in $((_t1 - _t0)) ms, before the replay: the held packet did not reference it" ;;
	esac
	_i=0
	while [ $_i -lt 50 ]; do
		_f=$(hold_faults)
		case ${_f#"$before"} in *replayed*) break ;; esac
		sleep 0.1
		_i=$((_i + 1))
	done
}

# A held tx packet whose skb->dev is not its output device: encapsulated by
# an ipip tunnel (skb->dev the tunnel, the output veth-a). Only the output
# device was referenced: removing the tunnel while the packet was off the
# list, before its replay, freed the device the replay goes on with (the
# netdev notifier no longer sees the packet). Then the output device
# itself (a veth pair of its own) removed in the same window.
holddev_case() {
	pf_insmod || { fail "holddev: insmod"; return; }
	# selftests/vm/run has ipip where the kernel has it (not the debug
	# kernel's build).
	if modprobe ipip 2> /dev/null; then
		ip -n a link add pfip0 type ipip local 10.9.0.1 remote 10.9.0.2 dev veth-a &&
			ip -n a addr add 10.30.0.1/24 dev pfip0 &&
			ip -n a link set pfip0 up || fail "holddev: ipip tunnel"
		before=$(hold_faults)
		hold_set --hold 1 --at tx --saddr 10.9.0.1 --daddr 10.9.0.2
		echo 4000 > $PARAMS/test_fault_replay_ms
		ip netns exec a pfsend udp --src 10.30.0.1 --dst 10.30.0.2 --dport 9000 -q
		hold_dev_del "holddev: tunnel (skb->dev) removed while its held packet waits to be replayed" \
			a pfip0
		pktfilt clear
		# Its fallback tunnels (tunl0 in every netns) gone for what
		# runs after in the same boot.
		modprobe -r ipip 2> /dev/null
	else
		echo "# holddev: no ipip module on this kernel: the tunnel round left out"
	fi

	ip link add pfh-a netns a type veth peer name pfh-b netns b &&
		ip -n a addr add 10.31.0.1/24 dev pfh-a &&
		ip -n b addr add 10.31.0.2/24 dev pfh-b &&
		ip -n a link set pfh-a up && ip -n b link set pfh-b up &&
		neigh_static a pfh-a b pfh-b 10.31.0.2 ||
		{ fail "holddev: veth pair"; pf_rmmod; return; }
	before=$(hold_faults)
	hold_set --hold 1 --at tx --saddr 10.31.0.1 --daddr 10.31.0.2
	echo 4000 > $PARAMS/test_fault_replay_ms
	ip netns exec a pfsend udp --src 10.31.0.1 --dst 10.31.0.2 --dport 9000 -q
	hold_dev_del "holddev: output veth removed while its held packet waits to be replayed" a pfh-a
	pktfilt clear
	pf_rmmod
}

# --- another module in the same slot -----------------------------------------
# pf_slottest.ko swaps inet_protos[UDP] like another tracer would.
slot_case() {
	if [ ! -f $SLOTTEST_KO ]; then
		fail "slot: $SLOTTEST_KO is missing (selftests/vm/run builds it)"
		return
	fi
	insmod $PKTFILT_KO || { fail "slot: insmod"; return; }
	trace_start
	# 1. The slot already holds another module's copy: refused, other
	# slots still work.
	insmod $SLOTTEST_KO || fail "slot: insmod pf_slottest"
	if out=$(pktfilt set --proto udp --daddr 10.9.0.2 --dport 9000 2>&1); then
		fail "slot: a slot holding another module's handler is not wrapped" "armed: $out"
	else
		out_has "slot: a slot holding another module's handler is not wrapped, and set says why" \
			"another module" "$out"
	fi
	pktfilt set --proto tcp --daddr 10.9.0.2 --dport 9000 ||
		fail "slot: a filter on the other slots still arms"
	pktfilt clear
	rmmod pf_slottest || fail "slot: rmmod pf_slottest"

	# 2. Armed, then the other module takes the slot over (it calls our
	# wrapper through its copy): clearing must not free what it calls.
	pktfilt set --proto udp --daddr 10.9.0.2 --dport 9000 --count 0 ||
		fail "slot: set"
	insmod $SLOTTEST_KO || fail "slot: insmod pf_slottest over the armed filter"
	pktfilt clear
	out=$(pktfilt show 2>&1)
	out_has "slot: show says pktfilt is pinned" "pinned" "$out"
	dmesg | grep -q 'pktfilt: the udp_rcv slot was taken over' &&
		ok "slot: dmesg names the slot taken over" ||
		fail "slot: dmesg names the slot taken over" "$(dmesg | tail -3)"
	if rmmod pktfilt 2>/dev/null; then
		fail "slot: rmmod refused while another module may call pktfilt's code" "unloaded"
		# The slot now leads into freed code: UDP would oops.
		rmmod pf_slottest
		return
	fi
	ok "slot: rmmod refused while another module may call pktfilt's code"
	# Traffic through both wrappers, nothing armed: delivered.
	expect_udp_delivered "slot: UDP still delivered through both"
	if out=$(pktfilt set --proto udp --dport 9000 2>&1); then
		fail "slot: re-arming does not wrap the other module's copy" "armed: $out"
		pktfilt clear
	else
		ok "slot: re-arming does not wrap the other module's copy (no recursion)"
	fi
	# 3. The other module gives our copy back: pktfilt takes the slot
	# back, unpins, and unloads.
	rmmod pf_slottest || fail "slot: rmmod pf_slottest"
	out=$(pktfilt show 2>&1)
	out_lacks "slot: handed back: no longer pinned" "pinned" "$out"
	pktfilt set --proto udp --daddr 10.9.0.2 --dport 9000 ||
		fail "slot: arms again once the slot is the kernel's"
	pktfilt clear
	trace_stop
	if rmmod pktfilt; then
		ok "slot: rmmod once the slot is the kernel's again"
	else
		fail "slot: rmmod once the slot is the kernel's again"
	fi
	# Through the kernel's own handler again.
	expect_udp_delivered "slot: UDP delivered after both are gone"
}

# --- another module in ip_packet_type's func (issue 31) ------------------------
# rx.c's wrapper taken over while armed pinned pktfilt for good: no
# take-back once the other module handed the pointer back, so --at rx
# failed and rmmod was refused until reboot.
rxslot_case() {
	if [ ! -f $SLOTTEST_KO ]; then
		fail "rxslot: $SLOTTEST_KO is missing (selftests/vm/run builds it)"
		return
	fi
	insmod $PKTFILT_KO || { fail "rxslot: insmod"; return; }
	trace_start
	pktfilt set --at rx --proto udp --daddr 10.9.0.2 --dport 9000 --count 0 ||
		fail "rxslot: set --at rx"
	insmod $SLOTTEST_KO rx=1 || fail "rxslot: insmod pf_slottest rx=1 over the armed filter"
	pktfilt clear
	out_has "rxslot: taken over while armed: show says pktfilt is pinned" "pinned" \
		"$(pktfilt show 2>&1)"
	if rmmod pktfilt 2>/dev/null; then
		fail "rxslot: rmmod refused while another module may call pktfilt's code" "unloaded"
		rmmod pf_slottest
		return
	fi
	ok "rxslot: rmmod refused while another module may call pktfilt's code"
	expect_udp_delivered "rxslot: UDP still delivered through both"
	rmmod pf_slottest || fail "rxslot: rmmod pf_slottest"
	out_lacks "rxslot: handed back: no longer pinned" "pinned" "$(pktfilt show 2>&1)"
	if out=$(pktfilt set --at rx --proto udp --daddr 10.9.0.2 --dport 9000 2>&1); then
		ok "rxslot: --at rx arms again once the handler is the kernel's"
	else
		fail "rxslot: --at rx arms again once the handler is the kernel's" "$out"
	fi
	pktfilt clear
	trace_stop
	if rmmod pktfilt; then
		ok "rxslot: rmmod once the handler is the kernel's again"
	else
		fail "rxslot: rmmod once the handler is the kernel's again"
	fi
	expect_udp_delivered "rxslot: UDP delivered after both are gone"
}

# --- the family outlives the hooks at rmmod (issue 31) -------------------------
# Exit unregistered the generic netlink family first and removed the hooks
# after: a packet traced in between was announced under a family that was
# gone (its listeners had been dropped; its group may be another family's
# by then). Held open: rmmod waits 3 s before the filter goes
# (test_delay_exit_ms), a matching packet is sent meanwhile, and a root
# listener joined before must get its notification: as many as the trace
# has events.
unloadnotify_case() {
	race_arm unloadnotify test_delay_exit_ms=3000 || return
	pktfilt clear
	pktfilt set --proto udp --daddr 10.9.0.2 --dport 9000 --count 0 ||
		fail "unloadnotify: set --count 0"
	echo > $T/trace
	echo 1 > $T/events/pktfilt/enable
	echo 1 > $T/tracing_on
	pfjoin --listen-ms 6000 > /tmp/pfjoin.out 2>&1 &
	jpid=$!
	sleep 0.5
	rmmod pktfilt > /tmp/unloadnotify.out 2>&1 &
	rpid=$!
	sleep 1
	ip netns exec a pfsend udp -q --src 10.9.0.1 --dst 10.9.0.2 --sport 4001 \
		--dport 9000 --count 1 > /dev/null 2>&1
	sleep 0.3
	# Read while the module (its event's format) is still there.
	events=$(grep -c 'pktfilt_packet:' $T/trace)
	# The tracefs watch is gone already: cold for the gate's kprobe.
	echo > $T/set_ftrace_pid
	wait $rpid
	rc=$?
	wait $jpid
	echo 0 > $T/tracing_on
	switch_event 0
	expect_eq "unloadnotify: rmmod while armed succeeds" \
		"$rc $(grep -c '^pktfilt ' /proc/modules)" "0 0"
	expect_eq "unloadnotify: the packet sent during rmmod was traced and notified" \
		"$(cat /tmp/pfjoin.out) ($events events)" "pfjoin: joined, 1 notifications (1 events)"
}

# --- the filter decides once per packet at rx (issue 31) -----------------------
# A packet rxcore.c decided on at the device and did not trace (here: the
# count used up) was decided on again by rx.c at ip_rcv(): the program ran
# again and matched, exhausted counted twice. test_delay_work_ms holds the
# filter armed 2 s after its count ran out.
stat_of() { pktfilt show | sed -n "s/^$1: *//p"; }
matchonce_case() {
	pf_insmod test_delay_work_ms=2000 || { fail "matchonce: insmod"; return; }
	echo 0 > $T/tracing_on
	echo nop > $T/current_tracer
	switch_event 1
	idle_pid > $T/set_ftrace_pid
	m0=$(stat_of matched) e0=$(stat_of exhausted) t0=$(stat_of traced)
	pktfilt set --at rx --proto udp --daddr 10.9.0.2 --dport 9000 --count 1 \
		'udp dst port 9000' || fail "matchonce: set"
	ip netns exec a pfsend udp -q --src 10.9.0.1 --dst 10.9.0.2 --sport 4001 \
		--dport 9000 --count 3 > /dev/null 2>&1
	sleep 2.5
	expect_eq "matchonce: 3 matching packets at rx, --count 1: matched, exhausted, traced" \
		"$(($(stat_of matched) - m0)) $(($(stat_of exhausted) - e0)) $(($(stat_of traced) - t0))" \
		"3 2 1"
	switch_event 0
	pktfilt clear 2>/dev/null
	pf_rmmod
}

# --- only traced packets are claimed and announced ----------------------------
# The count is claimed and the event and notification sent before the gate
# opens, so the opening must not fail: the gate's kprobe only changes
# argument registers and has no return probe (which could miss for want of
# an instance, as the kretprobe of the gate before did). Under floods on
# both vCPUs: every packet counted traced has its event and its graph, and
# "gate missed" stays 0. And the kprobe is optimized into a jump where the
# kernel can (CONFIG_OPTPROBES): the scheduler passes it at every context
# switch while armed (BENCHMARKS.md, the gate's cost).
# gate_unoptimizable: the gate's kprobe was not optimized: ok only if the
# first 5 bytes of trace_ignore_this_task(), which an optprobe's jump
# replaces (its instructions run copied elsewhere), hold a conditional
# jump, which x86 kprobes never copy (can_boost()). Debian's 5.10 compiles
# it to "test %rdi,%rdi; je" (its PID lookup inlined, no frame); 6.1 on to
# push/mov first. Decodes only what such a prologue holds; anything else
# is a failure that prints the bytes (gate_bytes: read before the probe's
# int3 went in).
gate_unoptimizable() {
	_b=$gate_bytes
	_why=$(echo "$_b" | awk '
	function hex(s,  n, k) {
		for (k = 1; k <= length(s); k++)
			n = n * 16 + index("0123456789abcdef", substr(s, k, 1)) - 1
		return n
	}
	{
		i = 1
		while (i <= 5) {
			op = hex($i); len = 0
			if (op >= 64 && op <= 79) { i++; continue }	# REX
			if (op >= 112 && op <= 127) { print "jcc at +" (i - 1); exit }
			if (op >= 80 && op <= 87) len = 1		# push
			else if (op == 133 || op == 137 || op == 139 || op == 49 ||
				 op == 51 || op == 57 || op == 59) {	# test mov xor cmp
				if (int(hex($(i + 1)) / 64) == 3) len = 2
			}
			if (!len) { print "unknown"; exit }
			i += len
		}
		print "none"
	}')
	case $_why in
	jcc*)
		ok "gateopt: not optimizable on $(uname -r): a conditional jump in the 5 bytes an optprobe replaces ($_why: $_b); the gate stays an int3 kprobe" ;;
	*)
		fail "gateopt: the gate's kprobe is optimized" "$probe; first bytes $_b ($_why)" ;;
	esac
}

gateopt_case() {
	gate_bytes=$(pfendbr --bytes 8 trace_ignore_this_task | cut -d' ' -f2-)
	pf_insmod || { fail "gateopt: insmod"; return; }
	trace_start
	echo 2 > $T/max_graph_depth
	buffer_resize 8192
	echo > $T/trace
	n=300
	pktfilt set --proto udp --daddr 10.9.0.2 --dport 9000 --count $n ||
		fail "gateopt: set"
	for cpu in 0 1; do
		ip netns exec a taskset -c $cpu pfsend udp -q --src 10.9.0.1 \
			--dst 10.9.0.2 --sport 400$cpu --dport 9000 --count 2000 &
	done
	wait
	sleep 1
	echo 0 > $T/tracing_on
	cat $T/trace > /tmp/trace.txt
	echo 1 > $T/tracing_on
	traced=$(pf_stat traced) missed=$(pf_stat "gate missed")
	events=$(trace_events | wc -l)
	roots=$(trace_roots | grep -cx udp_rcv)
	echo "# gateopt: traced=$traced events=$events graphs=$roots gate_missed=$missed"
	expect_eq "gateopt: $n packets traced" "$traced" "$n"
	expect_eq "gateopt: events and graphs equal the packets counted traced" \
		"$events $roots" "$traced $traced"
	expect_eq "gateopt: the gate never missed" "${missed:-0}" 0
	# Optimized a moment after registration (the kprobe optimizer's delay).
	pktfilt set --proto udp --daddr 10.9.0.2 --dport 9000 --count 0 ||
		fail "gateopt: set again"
	sleep 1
	probe=$(grep 'trace_ignore_this_task' /sys/kernel/debug/kprobes/list)
	echo "# gateopt: $probe"
	if [ ! -e /proc/sys/debug/kprobes-optimization ]; then
		echo "# gateopt: $(uname -r) has no optprobes: not checked"
	elif [ "$(cat /proc/sys/debug/kprobes-optimization)" != 1 ]; then
		echo "# gateopt: kprobes-optimization is off here: not checked"
	else
		case $probe in
		*"[OPTIMIZED]"*) ok "gateopt: the gate's kprobe is optimized" ;;
		*) gate_unoptimizable ;;
		esac
	fi
	pktfilt clear 2>/dev/null
	echo 0 > $T/max_graph_depth
	buffer_restore
	trace_stop
	pf_rmmod
}

# --- IBT: every indirect call lands on ENDBR64 --------------------------------
# The module's indirect calls (listed at the top of gate.c, hooks.c,
# rx.c, rxcore.c, watch.c and timing.c) and the module functions the kernel calls through
# pointers (kprobe handlers, the hooks, genetlink ops, work items, the
# netlink notifier). QEMU does not enforce IBT, so the bytes are read.
IBT_KERNEL_TARGETS="tcp_v4_rcv udp_rcv icmp_rcv tcp_v6_rcv udpv6_rcv icmpv6_rcv
	ftrace_filter_pid_sched_switch_probe ip_rcv ip_list_rcv ipv6_rcv
	ipv6_list_rcv"
IBT_MODULE_TARGETS="pf_tr_arg0 pf_tr_truncating_open pf_tr_seq_write
	pf_tr_inode_write pf_fastpath_once pf_fastpath_slow pf_fastpath_empty
	pf_tit_pre pf_watch_pre
	pf_watch_post pf_tcp4_rcv pf_udp4_rcv pf_icmp4_rcv pf_tcp6_rcv
	pf_udp6_rcv pf_icmp6_rcv pf_netlink_event pf_cmd_set pf_cmd_get
	pf_cmd_clear pf_exhausted_work_fn pf_stale_work_fn pf_stale_irq_work_fn
	pf_ip_rcv pf_ip_list_rcv pf_ipv6_rcv pf_ipv6_list_rcv pf_rx_probe_rcv
	pf_tx_hook pf_tx_net_init pf_tx_net_exit pf_kfree_probe pf_consume_probe
	pf_core_entry pf_core_receive pf_core_list"
ibt_case() {
	pf_insmod timing=1 || { fail "ibt: insmod"; return; }
	# sk->sk_data_ready's default: an indirect-call target in every kernel.
	if [ "$(pfendbr sock_def_readable)" != "sock_def_readable endbr" ]; then
		echo "# ibt: $(uname -r) is not an IBT kernel (sock_def_readable has no ENDBR64): skipped"
		pf_rmmod
		return
	fi
	# shellcheck disable=SC2086 # lists of names
	out=$(pfendbr $IBT_KERNEL_TARGETS $IBT_MODULE_TARGETS 2>&1)
	bad=$(echo "$out" | grep -v ' endbr$')
	if [ -z "$bad" ]; then
		ok "ibt: the $(echo "$out" | wc -l) indirect-call targets start with ENDBR64"
	else
		fail "ibt: indirect-call targets start with ENDBR64" "$(echo "$bad" | tr '\n' ';')"
	fi
	pf_rmmod
}

# --- a tracefs handler that cannot be watched --------------------------------
watch_case() {
	pf_insmod test_missing_watch=1 || { fail "watch: insmod"; return; }
	trace_start
	if out=$(pktfilt set --proto udp --dport 9000 2>&1); then
		fail "watch: refuses to arm when a watcher is missing" "armed: $out"
		pktfilt clear
	else
		out_has "watch: refuses to arm when a watcher is missing, and says why" \
			"cannot arm" "$out"
	fi
	out=$(pktfilt show 2>&1)
	out_has "watch: show names the missing watcher" \
		"problem:     cannot arm: no kprobe on pktfilt_no_such_function" "$out"
	trace_stop
	pf_rmmod
	pf_insmod || { fail "watch: insmod"; return; }
	out=$(pktfilt show 2>&1)
	out_lacks "watch: no problem when every watcher is in place" "problem:" "$out"
	pf_rmmod
}

# --- rmmod right after set, small counts, matching floods ---------------------
# With --count 1 the first matching packet claims the last count and queues
# the disarm work; the module exit used to cancel that work before the
# hooks were gone, so a packet could queue it again, to run in freed code.
#
# The gate's kprobe on trace_ignore_this_task() is registered, optimized
# and removed with each insmod and rmmod. With set_ftrace_pid set, every
# context switch runs that function, and QEMU's TCG then ran stale copies
# of its re-patched text on the other vCPU (selftests/vm/README.md, "Known
# emulator faults": 6.1 froze in this case in 3 of 4 boots on 2026-11-25).
# So set_ftrace_pid is set only while armed (pf_insmod, pf_rmmod), and the
# sched_switch event stays on (switch_event).
rmmodcount_case() {
	cycles=${RMMOD_CYCLES:-30}
	echo > $T/set_ftrace_pid
	switch_event 1
	flood_start
	i=0 bad=0
	while [ $i -lt "$cycles" ]; do
		pf_insmod || { bad=$((bad + 1)); break; }
		idle_pid > $T/set_ftrace_pid
		pktfilt set --proto udp --daddr 10.9.0.2 --dport 9000 \
			--count $((i % 3 + 1)) || bad=$((bad + 1))
		pf_rmmod || { bad=$((bad + 1)); break; }
		i=$((i + 1))
	done
	# A work item run after the exit would oops within moments.
	sleep 2
	flood_stop
	switch_event 0
	expect_eq "rmmodcount: $cycles cycles of insmod, set --count 1-3, rmmod under matching floods" \
		"$i $bad" "$cycles 0"
}

echo "kernel $(uname -r)"
topo_setup
kmemleak_baseline
for c in ${*:-bigcount perm slot rxslot watch gateopt ibt armstall settle closerace trialrace unloadclaim unloadnotify matchonce rmmodcount holddst holdsk holdalloc holdbound holdreplace holddev}; do
	timed "${c}_case"
done
trace_teardown
check_dmesg
summary
