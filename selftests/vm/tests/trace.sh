# SPDX-License-Identifier: GPL-2.0
# Issue 3's VM tests: pktfilt trace. Sourced by all.sh after lib.sh and
# common.sh; trace_cases needs topo_setup. Every case compares a snapshot of
# all the tracefs settings before and after the run, byte for byte, with a
# user's own non-default settings in place (tr_user_state).
#
# Alone: selftests/vm/run --kernel 6.1 -- sh selftests/vm/tests/trace-only.sh

TR=/tmp/tr
TR_KEPT=/var/cache/pktfilt/functions

# A snapshot of every tracefs file that is a setting: all of them but the
# trace, the pipes, statistics, logs, and read-only catalogues; one
# "==> file <==" block each. Of the events (thousands of directories, each
# walk of them a second or more under TCG, and on 6.6 and later eventfs
# makes their inodes on the walk), the events/pktfilt ones, which the
# tool writes, and each system's enable, which says 0, 1 or X: any one of
# its events turned on or off changes it.
tr_snap() {
	{
		find "$T" \( -path "$T/events" -o -path "$T/instances/*/events" \) -prune -o \
			-type f -print
		for _e in "$T" "$T"/instances/*; do
			[ -d "$_e/events" ] || continue
			ls -d "$_e"/events/enable "$_e"/events/*/enable
			[ -d "$_e/events/pktfilt" ] && find "$_e/events/pktfilt" -type f
		done
	} |
		grep -v -E '/(trace|trace_pipe|trace_pipe_raw|snapshot|snapshot_raw|stats|hist|format|id|inject|error_log|trace_marker|trace_marker_raw|free_buffer|README|available_filter_functions|available_filter_functions_addrs|available_events|enabled_functions|touched_functions|dyn_ftrace_total_info|printk_formats|saved_cmdlines|saved_tgids|kprobe_profile|uprobe_profile|user_events_status|user_events_data|stack_trace|timerlat_fd)$' |
		sort | xargs tail -n +1 > "$1" 2> "$1.err"
}

# tr_same NAME BEFORE AFTER
tr_same() {
	if cmp -s "$2" "$3"; then
		ok "$1: tracefs settings as before"
	else
		fail "$1: tracefs settings as before" "$(diff "$2" "$3" | head -30)"
	fi
}

# A user's own tracing, which every run must leave as it found it: the
# function tracer on a few functions (one of a module), a notrace list, a
# graph function, funcgraph-irqs off and funcgraph-proc on, a graph depth,
# PID lists, a 2 MB buffer.
tr_user_state() {
	echo 0 > $T/tracing_on
	echo nop > $T/current_tracer
	echo 2048 > $T/buffer_size_kb
	echo 'ip_rcv udp_rcv tcp_v4_rcv' > $T/set_ftrace_filter
	echo 'veth_poll:mod:veth' >> $T/set_ftrace_filter
	echo kfree > $T/set_ftrace_notrace
	echo ip_rcv > $T/set_graph_function
	echo 0 > $T/options/funcgraph-irqs
	echo 1 > $T/options/funcgraph-proc
	echo 5 > $T/max_graph_depth
	echo 1 > $T/set_ftrace_notrace_pid
	echo $$ > $T/set_event_pid
	echo function > $T/current_tracer
	echo 1 > $T/tracing_on
}

# Back to the boot's defaults.
tr_user_unset() {
	echo 0 > $T/tracing_on
	echo nop > $T/current_tracer
	echo > $T/set_ftrace_filter
	echo > $T/set_ftrace_notrace
	echo > $T/set_graph_function
	echo 1 > $T/options/funcgraph-irqs
	echo 0 > $T/options/funcgraph-proc
	echo 0 > $T/max_graph_depth
	echo > $T/set_ftrace_notrace_pid
	echo > $T/set_event_pid
	echo 1408 > $T/buffer_size_kb
	echo > $T/trace
	echo 1 > $T/tracing_on
}

# Wait until a filter is armed (up to 60 s).
tr_when_armed() {
	_i=0
	while ! pktfilt show 2>/dev/null | grep -q '^state: *armed'; do
		_i=$((_i + 1))
		[ $_i -gt 600 ] && return 1
		sleep 0.1
	done
}

tr_module_idle() {
	if pktfilt show | grep -q '^state: *idle'; then
		ok "$1: filter disarmed afterwards"
	else
		fail "$1: filter disarmed afterwards" "$(pktfilt show | head -3)"
	fi
}

# tr_run NAME WANT_STATUS ARGS...: pktfilt trace ARGS (at $TR_AT, l4 if
# unset) with stdout in $TR/out and stderr in $TR/err; checks the exit
# status and tracefs.
tr_run() {
	_name=$1 _want=$2
	shift 2
	tr_snap $TR/before
	pktfilt trace --at "${TR_AT:-l4}" "$@" > $TR/out 2> $TR/err
	_rc=$?
	tr_snap $TR/after
	if [ "$_rc" = "$_want" ]; then
		ok "$_name: exit status $_rc"
	else
		fail "$_name: exit status" "got $_rc, want $_want: $(head -c 800 $TR/err)"
	fi
	tr_same "$_name" $TR/before $TR/after
}

# tr_expect NAME FILE PATTERN: FILE has a line matching PATTERN (grep -E).
tr_expect() {
	if grep -q -E -- "$3" "$2"; then
		ok "$1"
	else
		fail "$1" "no /$3/ in $2: $(head -c 400 "$2")"
	fi
}

# tr_agree NAME RAW: the json and folded renderings of one raw trace agree:
# the same functions (folded's fate frames, "[consumed]" or "[dropped:
# ...]" at the root, aside), and the folded weights add up to the sum of
# the packets' root durations.
tr_agree() {
	pktfilt report --format json "$2" > $TR/agree.json 2>/dev/null
	pktfilt report --format folded "$2" > $TR/agree.folded 2>/dev/null
	jf=$(grep -o '"func":"[^"]*"' $TR/agree.json | sed 's/^"func":"//; s/"$//' | sort -u | md5sum)
	ff=$(sed -e '/^\[[^]]*\] [0-9]*$/d' -e 's/^\[[^]]*\];//' -e 's/ [0-9]*$//' $TR/agree.folded |
		tr ';' '\n' | sort -u | md5sum)
	jd=$(sed -n 's/.*"graph":{"func":"[^"]*","duration_ns":\([0-9]*\).*/\1/p' $TR/agree.json |
		awk '{ s += $1 } END { printf "%d", s }')
	fd=$(awk '{ s += $NF } END { printf "%d", s }' $TR/agree.folded)
	if [ "$jd" != 0 ] && [ "$jf" = "$ff" ] && [ "$jd" = "$fd" ]; then
		ok "$1: json and folded of the raw trace agree (functions, total $jd ns)"
	else
		fail "$1: json and folded of the raw trace agree" "json total $jd, folded total $fd, functions same: $([ "$jf" = "$ff" ] && echo yes || echo no)"
	fi
}

# One packet of each handler, from a to b.
TR_SEND6='set -e
ip netns exec a pfsend udp --src 10.9.0.1 --dst 10.9.0.2 --sport 4000 --dport 9000 -q
ip netns exec a pfsend tcp --src 10.9.0.1 --dst 10.9.0.2 --sport 4000 --dport 9000 -q
ip netns exec a pfsend icmp --src 10.9.0.1 --dst 10.9.0.2 -q
ip netns exec a pfsend udp -6 --src fd00::1 --dst fd00::2 --sport 4000 --dport 9000 -q
ip netns exec a pfsend tcp -6 --src fd00::1 --dst fd00::2 --sport 4000 --dport 9000 -q
ip netns exec a pfsend icmp -6 --src fd00::1 --dst fd00::2 -q'

# Functions enough for nested graphs in every handler, far fewer than all:
# ftrace patches only these (see tr_format).
TR_FUNCS='__udp*,udp*,ip_*,ip6_*,ipv6_*,icmp*,tcp_v4_*,tcp_v6_*,__inet*,inet6_*'

# tr_format FORMAT [--functions GLOBS]: TCP, UDP and ICMP over IPv4 and
# IPv6, one packet each, all that enters b while COMMAND sends them.
#
# Switching function_graph on patches every function it traces, with
# cross-CPU IPIs, and QEMU's TCG now and then hangs a vCPU there (see
# selftests/vm/README.md): only the text run traces all functions
# (--all-functions); json records the default scope, the others fewer.
tr_format() {
	fmt=$1
	shift
	name="trace --format $fmt${1:+ $1}"
	rm -f $TR/raw $TR/svg
	# --eager with --all-functions: under TCG patching every function
	# takes seconds, which a held TCP SYN would not wait for (pfsend
	# tcp gives up); lazy, that is tr_lazy_case's.
	_e=
	case " $* " in *" --all-functions "*) _e=--eager ;; esac
	tr_run "$name" 0 --netns /run/netns/b --dev veth-b --count 0 $_e \
		--format "$fmt" --raw $TR/raw --svg $TR/svg --timeout 120 "$@" \
		-- sh -c "$TR_SEND6"
	tr_expect "$name: stopped when COMMAND was done" $TR/err "stopped by the end of COMMAND"
	tr_format_check "$name" "$fmt"
	pktfilt report --format "$fmt" $TR/raw > $TR/report 2>/dev/null
	if [ "$fmt" = json ]; then
		# The one difference: report of a raw trace does not know the
		# filter that made it ("filter":null).
		expect_eq "$name: each record names the filter" \
			"$(grep -c ',"filter":"--netns /run/netns/b --dev veth-b --count 0 --at l4"}$' $TR/out)" \
			"$(wc -l < $TR/out)"
		sed 's/,"filter":"[^"]*"}$/,"filter":null}/' $TR/out > $TR/out.null
		mv $TR/out.null $TR/out
	fi
	if cmp -s $TR/out $TR/report; then
		ok "$name: same as 'pktfilt report' of --raw"
	else
		fail "$name: same as 'pktfilt report' of --raw" "$(diff $TR/out $TR/report | head -10)"
	fi
	tr_expect "$name: --svg" $TR/svg "<svg"
	tr_agree "$name" $TR/raw
	tr_scope "$name" "$@"
}

# tr_format_check NAME FORMAT: $TR/out, a FORMAT rendering of tr_format's
# six packets, holds each once, its graph rooted at its handler, all
# complete.
tr_format_check() {
	name=$1 fmt=$2
	for t in "udp 10.9.0.1 10.9.0.2 4000 9000 udp_rcv" \
		 "tcp 10.9.0.1 10.9.0.2 4000 9000 tcp_v4_rcv" \
		 "icmp 10.9.0.1 10.9.0.2 0 0 icmp_rcv" \
		 "udp fd00::1 fd00::2 4000 9000 udpv6_rcv" \
		 "tcp fd00::1 fd00::2 4000 9000 tcp_v6_rcv" \
		 "icmpv6 fd00::1 fd00::2 0 0 icmpv6_rcv"; do
		# shellcheck disable=SC2086
		set -- $t
		p=$1 sa=$2 da=$3 sp=$4 dp=$5 root=$6
		case $fmt in
		text)
			case $p in
			icmp*) tup="$p $sa -> $da" ;;
			*) case $sa in
			   *:*) tup="$p [$sa]:$sp -> [$da]:$dp" ;;
			   *) tup="$p $sa:$sp -> $da:$dp" ;;
			   esac ;;
			esac
			# The header, the event, then the handler's entry.
			n=$(grep -c -F ": $tup ifindex " $TR/out)
			r=$(awk -v h=": $tup ifindex " -v root="|  $root() {" '
				/^# packet / && index($0, h) { want = 2; next }
				want == 2 && /pktfilt_packet/ { want = 1; next }
				want == 1 { if (index($0, root)) ok++; want = 0 }
				END { print ok + 0 }' $TR/out)
			;;
		json)
			line="\"proto\":\"$p\",\"saddr\":\"$sa\",\"daddr\":\"$da\",\"sport\":$sp,\"dport\":$dp,"
			n=$(grep -c -F "$line" $TR/out)
			# No nftables verdict at l4 (the chains ran before it).
			r=$(grep -F "$line" $TR/out | grep -c -F "\"complete\":true,\"incomplete\":null,\"nft\":[],\"graph\":{\"func\":\"$root\"")
			;;
		folded)
			n=1
			# Under a fate frame ("[consumed];"), if the trace told it.
			r=$(grep -c -E "^(\[[^]]*\];)?$root(;[^ ]+)? [0-9]+$" $TR/out)
			[ "$r" -ge 1 ] && r=1
			;;
		esac
		expect_eq "$name: one $p $sa packet" "$n" 1
		expect_eq "$name: $p $sa graph rooted at $root" "$r" 1
		if [ "$r" != 1 ] && [ "$fmt" = text ]; then
			# What came instead: the packet's header and first lines.
			grep -F -A6 ": $tup ifindex " $TR/out | cut -c1-160 | sed 's/^/#   | /'
		fi
	done
	if grep -q INCOMPLETE $TR/out; then
		fail "$name: all complete" "$(grep INCOMPLETE $TR/out)"
	else
		ok "$name: all complete"
	fi
}

# tr_format_report FORMAT: tr_format_check on 'pktfilt report --format
# FORMAT' of the trace 'tr_format text' kept ($TR/raw.text): the kernels
# other than make check's first render it without tracing it again.
tr_format_report() {
	pktfilt report --format "$1" $TR/raw.text > $TR/out 2> $TR/err
	expect_eq "report --format $1 of the text trace: exit status" "$?" 0
	tr_format_check "report --format $1 of the text trace" "$1"
}

# tr_scope NAME [OPTIONS]: what the graphs of tr_format hold. RCU's read
# lock is taken many times in every receive path: always in the whole
# graph (--all-functions), never in the default scope, which keeps the
# UDP receive path (__udp4_lib_rcv, matched by __udp*; inlined into
# udp_rcv on 7.2, whose graph shows __udp4_lib_lookup instead) and the
# sockets (sock_*, sk_*: the unreachable port's reply, or the queueing).
# A kernel without preemptible RCU (5.10's PREEMPT_VOLUNTARY, TREE_RCU) has
# no __rcu_read_lock function (rcu_read_lock() is inline there): the mark of
# the whole graph is __local_bh_enable_ip there, also outside the default
# scope.
tr_scope() {
	_m=__rcu_read_lock
	grep -q '^__rcu_read_lock$' $T/available_filter_functions ||
		_m=__local_bh_enable_ip
	_n=$(grep -c -E "[ \"]$_m(\\(\\)|\")" $TR/raw)
	case " $* " in
	*" --all-functions "*)
		if [ "$_n" -gt 0 ]; then
			ok "$1: the whole graph ($_n calls of $_m)"
		else
			fail "$1: the whole graph" "no $_m in $TR/raw; its most called: $(grep -oE '[a-z_][a-z_0-9.]*\(\)' $TR/raw | sort | uniq -c | sort -rn | head -30 | tr '\n' ' ')"
		fi ;;
	*" --functions "*) ;;
	*)
		expect_eq "$1: default scope leaves RCU out" "$_n" 0
		tr_expect "$1: default scope has the UDP path" $TR/raw ' __udp4_lib_(rcv|lookup)\(\)'
		tr_expect "$1: default scope has sockets" $TR/raw ' (sock|sk)_[a-z_]*\(\)' ;;
	esac
}

# A few functions: ftrace patches little (see tr_format). A glob: 7.2 has
# no __udp4_lib_rcv (inlined), and --functions refuses a name that
# matches nothing.
TR_FEW='__udp4_lib_*'

# --count 3 out of 10 matching packets, with --functions; COMMAND's exit
# status is told, and does not change pktfilt's.
tr_count_case() {
	name="trace --count 3 --functions"
	tr_run "$name" 0 --proto udp --daddr 10.9.0.2 --dport 9000 --count 3 \
		--functions 'ip_*,__udp4_lib_*' --format json --timeout 60 -- \
		sh -c 'ip netns exec a pfsend udp --dst 10.9.0.2 --dport 9000 --count 10 -q; exit 3'
	tr_expect "$name: COMMAND's exit status told" $TR/err "sh exited with status 3$"
	expect_eq "$name: three packets" "$(grep -c '"complete":true' $TR/out)" 3
	expect_eq "$name: three sequence numbers" \
		"$(sed 's/^{"seq":\([0-9]*\),.*/\1/' $TR/out | sort -u | wc -l)" 3
	expect_eq "$name: each record names the filter that traced it" \
		"$(grep -c '"filter":"--proto udp --daddr 10\.9\.0\.2 --dport 9000 --count 3 --at l4"}$' $TR/out)" 3
	others=$(grep -o '"func":"[^"]*"' $TR/out | sed 's/^"func":"//; s/"$//' |
		grep -v -E '^(udp_rcv|ip_.*|__udp4_lib_.*)$' | sort -u | tr '\n' ' ')
	expect_eq "$name: only the handler and matching functions" "$others" ""
	tr_expect "$name: matching functions below the handler" $TR/out '"func":"__udp4_lib_(rcv|lookup)"'
}

# Fewer packets than --count: by the --timeout, or when COMMAND is done.
tr_timeout_case() {
	name="trace --timeout"
	( tr_when_armed && ip netns exec a pfsend udp --dst 10.9.0.2 --dport 9000 -q ) &
	sender=$!
	tr_run "$name" 1 --proto udp --daddr 10.9.0.2 --dport 9000 --count 2 \
		--functions $TR_FEW --timeout 4
	wait $sender
	tr_expect "$name: says so" $TR/err "timed out after 4 s: saw 1 of 2 packets"
	expect_eq "$name: prints the packet it saw" "$(grep -c '^# packet ' $TR/out)" 1
	tr_module_idle "$name"

	name="trace, COMMAND sent too few"
	tr_run "$name" 1 --proto udp --daddr 10.9.0.2 --dport 9000 --count 2 \
		--functions $TR_FEW --timeout 60 -- \
		ip netns exec a pfsend udp --dst 10.9.0.2 --dport 9000 -q
	tr_expect "$name: says so" $TR/err "saw 1 of 2 packets"
	tr_expect "$name: prints the packet it saw" $TR/out '^# packet '
}

# tr_signal_case SIG COUNT WANT_STATUS: the signal while waiting.
tr_signal_case() {
	sig=$1 count=$2 want=$3
	name="trace, SIG$sig while waiting (--count $count)"
	tr_snap $TR/before
	pktfilt trace --at l4 --proto udp --daddr 10.9.0.2 --dport 9000 --count "$count" \
		--functions $TR_FEW > $TR/out 2> $TR/err &
	pid=$!
	( tr_when_armed
	  [ "$count" = 0 ] && ip netns exec a pfsend udp --dst 10.9.0.2 --dport 9000 --count 2 -q
	  sleep 1
	  kill -"$sig" $pid ) &
	killer=$!
	wait $pid
	rc=$?
	wait $killer
	tr_snap $TR/after
	expect_eq "$name: exit status" "$rc" "$want"
	tr_same "$name" $TR/before $TR/after
	tr_expect "$name: says so" $TR/err "stopped by SIG$sig"
	if [ "$count" = 0 ]; then
		expect_eq "$name: prints the packets traced" "$(grep -c '^# packet ' $TR/out)" 2
	fi
	tr_module_idle "$name"
}

tr_error_case() {
	name="trace, unknown --functions glob"
	tr_run "$name" 1 --proto udp --functions 'ip_rcv,nosuch_pktfilt_fn*' --timeout 5
	tr_expect "$name: names the glob" $TR/err "'nosuch_pktfilt_fn\*'"
	tr_module_idle "$name"

	name="trace, COMMAND not found"
	tr_run "$name" 1 --proto udp --functions $TR_FEW --timeout 5 -- /nonexistent/cmd
	tr_expect "$name: says so" $TR/err "cannot run /nonexistent/cmd: No such file"
	tr_module_idle "$name"

	name="trace, bad option"
	tr_run "$name" 2 --proto udp --timeout x
}

# Two at once: the second is refused before it touches tracefs, by the
# lock file or, with another lock file, by the module's owned filter; the
# first goes on and traces its packet.
tr_concurrent_case() {
	name="trace, two at once"
	tr_snap $TR/before
	pktfilt trace --at l4 --proto udp --daddr 10.9.0.2 --dport 9000 --timeout 120 \
		--functions $TR_FEW > $TR/out1 2> $TR/err1 &
	first=$!
	tr_when_armed
	tr_snap $TR/during
	pktfilt trace --at l4 --proto udp --dport 9001 --timeout 5 > $TR/out 2> $TR/err
	rc=$?
	expect_eq "$name: the second fails" "$rc" 1
	tr_expect "$name: the second says why" $TR/err "^pktfilt: another pktfilt trace is running"
	PKTFILT_LOCK=/tmp/other.lock pktfilt trace --at l4 --proto udp --dport 9001 --timeout 5 > $TR/out 2> $TR/err
	rc=$?
	expect_eq "$name: the second fails without the lock too" "$rc" 1
	tr_expect "$name: the module's check says why" $TR/err "^pktfilt: another pktfilt trace is running$"
	tr_snap $TR/during2
	if cmp -s $TR/during $TR/during2; then
		ok "$name: the second changed nothing in tracefs"
	else
		fail "$name: the second changed nothing in tracefs" "$(diff $TR/during $TR/during2 | head -20)"
	fi
	ip netns exec a pfsend udp --dst 10.9.0.2 --dport 9000 -q
	wait $first
	rc=$?
	tr_snap $TR/after
	expect_eq "$name: the first succeeds" "$rc" 0
	expect_eq "$name: the first traced its packet" "$(grep -c '^# packet ' $TR/out1)" 1
	tr_same "$name" $TR/before $TR/after
}

# No module: refused before tracefs is touched. (Without the module, the
# kernel would load it for the family's name: not this time.)
tr_nomodule_case() {
	modprobe_path=$(cat /proc/sys/kernel/modprobe)
	echo /bin/false > /proc/sys/kernel/modprobe
	rmmod pktfilt
	tr_run "trace without the module" 1 --proto udp --timeout 5
	tr_expect "trace without the module: says so" $TR/err "module is not loaded"
	echo "$modprobe_path" > /proc/sys/kernel/modprobe
	insmod $PKTFILT_KO
}

# tracefs not at /sys/kernel/tracing: the debugfs path, then not mounted
# at all: mounted for the run, unmounted after.
tr_mount_case() {
	name="trace, tracefs only under debugfs"
	tr_snap $TR/before
	umount $T
	pktfilt trace --at l4 --proto udp --daddr 10.9.0.2 --dport 9000 --timeout 60 \
		--functions $TR_FEW -- \
		ip netns exec a pfsend udp --dst 10.9.0.2 --dport 9000 -q > $TR/out 2> $TR/err
	expect_eq "$name: exit status" "$?" 0
	expect_eq "$name: one packet" "$(grep -c '^# packet ' $TR/out)" 1

	name="trace, tracefs not mounted"
	umount /sys/kernel/debug/tracing 2>/dev/null
	umount /sys/kernel/debug
	pktfilt trace --at l4 --proto udp --daddr 10.9.0.2 --dport 9000 --timeout 60 \
		--functions $TR_FEW -- \
		ip netns exec a pfsend udp --dst 10.9.0.2 --dport 9000 -q > $TR/out 2> $TR/err
	expect_eq "$name: exit status" "$?" 0
	expect_eq "$name: one packet" "$(grep -c '^# packet ' $TR/out)" 1
	expect_eq "$name: unmounted afterwards" "$(grep -c tracefs /proc/mounts)" 0
	mount -t debugfs nodev /sys/kernel/debug
	mount -t tracefs nodev $T
	tr_snap $TR/after
	tr_same "$name" $TR/before $TR/after
}

# The snapshot sees the user's settings, and a change of any of them.
tr_snap_case() {
	tr_snap $TR/before
	for want in 'set_ftrace_filter <==' '^veth_poll \[veth\]$' '^kfree$' \
		    'set_event_pid <==' "^$$\$" '^function$' '^2051$'; do
		tr_expect "snapshot has /$want/" $TR/before "$want"
	done
	echo 1 > $T/options/funcgraph-abstime
	tr_snap $TR/after
	echo 0 > $T/options/funcgraph-abstime
	if cmp -s $TR/before $TR/after; then
		fail "snapshot sees a changed option"
	else
		ok "snapshot sees a changed option"
	fi
}

# The default scope of tool/trace_scope.c (pf_trace_default_scope), for
# writing it to set_ftrace_filter as globs.
TR_SCOPE='__netif_* netif_* __dev_queue_xmit dev_queue_xmit* dev_hard_start_xmit validate_xmit_* sch_* __qdisc_* qdisc_* pfifo_* fq_codel_* veth_* virtnet_* start_xmit loopback_xmit eth_* br_* dev_forward_skb* __dev_forward_skb* enqueue_to_backlog deliver_skb packet_rcv tpacket_rcv tcf_* tcx_* *_classify vlan_* __vlan_* do_xdp_generic tcp_* __tcp_* udp* __udp* icmp* ping_* ip_* __ip_* ipv4_* ip6_* __ip6_* ipv6_* fib_* fib6_* rt6_* dst_* neigh_* inet_* __inet_* inet6_* __inet6_* sock_* __sock_* sk_* __sk_* lock_sock* release_sock __release_sock __wake_up* nf_* __nf_* nft_* xfrm* __xfrm* security_* selinux_* apparmor_* skb_* __skb_* kfree_skb* consume_skb __alloc_skb kmem_cache_alloc* kmem_cache_free kmalloc* __kmalloc* kfree _raw_spin_lock* _raw_spin_unlock*'

# tr_wait_ready FILE PID: until FILE has pktfilt trace's ready line (60 s
# at most, or PID gone).
tr_wait_ready() {
	_i=0
	while ! grep -q '^pktfilt: tracing ' "$1" 2>/dev/null; do
		_i=$((_i + 1))
		if [ $_i -gt 1200 ] || ! kill -0 "$2" 2>/dev/null; then
			return 1
		fi
		sleep 0.05
	done
}

# tr_by_globs FILE GLOB...: set_ftrace_filter as ftrace makes it of the
# GLOBs, each written on its own (those it refuses left out), into FILE;
# then the user's filter again. The tracer must be nop (no patching).
tr_by_globs() {
	_f=$1
	shift
	: > $T/set_ftrace_filter
	for _g in "$@"; do
		echo "$_g" >> $T/set_ftrace_filter 2>/dev/null
	done
	cat $T/set_ftrace_filter > "$_f"
	echo 'ip_rcv udp_rcv tcp_v4_rcv' > $T/set_ftrace_filter
	echo 'veth_poll:mod:veth' >> $T/set_ftrace_filter
}

# tr_kept_stale: the kept copy of available_filter_functions with udp_rcv's
# line and the kernel's first swapped: every count right, two numbers
# wrong, as if the list had changed where no key sees it.
tr_kept_stale() {
	_k=$TR_KEPT
	_f=$(($(grep -n -m 1 '^segment ' $_k | cut -d: -f1) + 1))
	_u=$(grep -n -m 1 '^udp_rcv$' $_k | cut -d: -f1)
	awk -v f="$_f" -v u="$_u" 'NR == FNR { if (FNR == f) first = $0; if (FNR == u) udp = $0; next }
		FNR == f { print udp; next } FNR == u { print first; next } { print }' \
		$_k $_k > $_k.new && chmod 600 $_k.new && mv $_k.new $_k
	echo "# stale copy: lines $_f and $_u swapped ($(sed -n "${_f}p" $_k), $(sed -n "${_u}p" $_k))"
}

# tr_index_case: the functions pktfilt trace writes as numbers are those
# ftrace's own matching of the globs gives, line for line (the default
# scope, and --functions of every form: prefix, suffix, middle, glob with
# ? and [...], negation, :mod:), and it says when ready. The default scope
# four times: no kept copy of available_filter_functions (read from the
# kernel, then kept in $TR_KEPT, mode 600), the kept copy, the kept copy
# after pktfilt.ko was loaded again (its segment is keyed by its build ID,
# not where it was loaded), and a copy whose numbers are wrong (the
# read-back tells; the kernel's list is read again).
tr_index_case() {
	# The user's tracer off meanwhile: each switch patches code, which
	# TCG now and then gets wrong (selftests/vm/README.md).
	echo 0 > $T/tracing_on
	echo nop > $T/current_tracer
	# The kept list's variants are the tool's own logic: with TRACE_CLI=0
	# (make check's other kernels) the kernel's list and --functions.
	vs="fresh kept reload stale funcs"
	[ "${TRACE_CLI:-1}" = 0 ] && vs="fresh funcs"
	for v in $vs; do
		if [ $v != funcs ]; then
			name="trace, default scope by number ($v list)"
			set -- --proto udp --daddr 10.9.0.2 --dport 9000
			globs="udp_rcv $TR_SCOPE"
			case $v in
			fresh) rm -f $TR_KEPT ;;
			reload) rmmod pktfilt && insmod $PKTFILT_KO ;;
			stale) tr_kept_stale ;;
			esac
		else
			name="trace, --functions of every form by number"
			fl='*_rcv,ip_*_finish*,tcp_v[46]_*,!tcp_v4_do_rcv,?dp_*,__sk*:mod:!,veth_*:mod:veth,*_xmit*:mod:*,*rcv_state*'
			set -- --proto udp --daddr 10.9.0.2 --dport 9000 --functions "$fl"
			globs="udp_rcv $(echo "$fl" | tr ',' ' ')"
		fi
		tr_snap $TR/before
		# Emptied here: the background job's own redirection may come
		# after tr_wait_ready has read the last case's ready line.
		: > $TR/err
		times=1
		[ $v = stale ] && times=2	# says which list it read
		# --eager: the scope is in set_ftrace_filter while it waits
		# (lazy, the numbers are written the same way, at the packet).
		PKTFILT_TRACE_TIMES=$times pktfilt trace --eager --at l4 "$@" --timeout 120 > $TR/out 2> $TR/err &
		pid=$!
		if tr_wait_ready $TR/err $pid; then
			ok "$name: ready line"
		else
			fail "$name: ready line" "$(head -c 600 $TR/err)"
		fi
		# Sorted: set_ftrace_filter lists its hash's buckets, in an
		# order that may depend on how it was filled (numbers or globs).
		grep -v -e '^#' -e ':' $T/set_ftrace_filter | sort > $TR/by_index
		kill -INT $pid
		wait $pid
		tr_snap $TR/after
		tr_same "$name" $TR/before $TR/after
		tr_expect "$name: written as numbers" $TR/err 'functions by number'
		case $v in
		kept|reload|funcs)
			tr_expect "$name: from the kept list" $TR/err \
				'functions by number, kept list' ;;
		*)
			[ $v = stale ] && tr_expect "$name: the copy read first" \
				$TR/err 'read available_filter_functions .kept copy.'
			expect_eq "$name: from the kernel's list" \
				"$(grep -c 'kept list' $TR/err)" 0
			expect_eq "$name: the list kept, mode 600" \
				"$(stat -c %a $TR_KEPT 2>&1)" 600 ;;
		esac
		# ftrace's own matching of the same globs, done once: the
		# default scope's variants share it (each match is a pass of
		# the kernel's whole function list per glob).
		if [ "$globs" != "${tr_globs_done:-}" ]; then
			# shellcheck disable=SC2086
			set -f; tr_by_globs $TR/by_globs.all $globs; set +f
			grep -v -e '^#' -e ':' $TR/by_globs.all | sort > $TR/by_globs
			tr_globs_done=$globs
		fi
		n=$(wc -l < $TR/by_index)
		if [ "$n" -gt 10 ] && cmp -s $TR/by_index $TR/by_globs; then
			ok "$name: $n functions, as ftrace matches the globs"
		else
			fail "$name: as ftrace matches the globs" "$n lines; $(diff $TR/by_globs $TR/by_index | head -20)"
		fi
		tr_expect "$name: the ready line counts them" $TR/err "^pktfilt: tracing .*, $(echo "$n" | awk '{ n = $1; s = ""; while (length(n) > 3) { s = "," substr(n, length(n) - 2) s; n = substr(n, 1, length(n) - 3) }; print n s }') functions\); "
		grep '^pktfilt: ' $TR/err | head -30
	done
	echo function > $T/current_tracer
	echo 1 > $T/tracing_on
}

# tr_ready_diag NAME PID: pktfilt trace (PID) still armed 10 s after its
# one packet was sent: what the module and b's UDP saw, for the failure's
# report (the checks after it decide).
tr_ready_diag() {
	_i=0
	while kill -0 "$2" 2>/dev/null && [ $_i -lt 100 ]; do
		_i=$((_i + 1))
		sleep 0.1
	done
	kill -0 "$2" 2>/dev/null || return 0
	pktfilt show 2>&1 | sed "s/^/# $1: show: /"
	ip netns exec b cat /proc/net/snmp | grep '^Udp:' | sed "s/^/# $1: b: /"
	grep -v '^#' $T/set_ftrace_pid | head -3 | sed "s/^/# $1: set_ftrace_pid: /"
	sed "s/^/# $1: current_tracer: /" $T/current_tracer
	sed "s/^/# $1: tracing_on: /" $T/tracing_on
}

# tr_ready_case [ROUNDS]: without COMMAND, wait for the ready line, send
# exactly one packet: it is traced, every time. -q: no line.
tr_ready_case() {
	rounds=${1:-3}
	r=1
	while [ $r -le "$rounds" ]; do
		name="trace, ready line then one packet (round $r)"
		# The default scope once; then few functions, less patching.
		scope=
		[ $r -gt 1 ] && scope="--functions ip_*,__udp4_lib_*"
		tr_snap $TR/before
		: > $TR/err	# not the last case's ready line (tr_index_case)
		# shellcheck disable=SC2086
		pktfilt trace --at l4 --proto udp --daddr 10.9.0.2 --dport 9000 $scope \
			--format json --timeout 120 > $TR/out 2> $TR/err &
		pid=$!
		if tr_wait_ready $TR/err $pid; then
			ip netns exec a pfsend udp --dst 10.9.0.2 --dport 9000 -q ||
				echo "# $name: pfsend failed: $?"
			tr_ready_diag "$name" $pid
		else
			fail "$name: ready line" "$(head -c 600 $TR/err)"
		fi
		wait $pid
		rc=$?
		tr_snap $TR/after
		expect_eq "$name: exit status" "$rc" 0
		expect_eq "$name: one graph" "$(grep -c '"complete":true' $TR/out)" 1
		[ "$rc" = 0 ] || { sed 's/^/  err: /' $TR/err; head -c 600 $TR/out | sed 's/^/  out: /'; }
		expect_eq "$name: one ready line" "$(grep -c '^pktfilt: tracing ' $TR/err)" 1
		tr_expect "$name: says what, the scope, the count, how to stop" $TR/err \
			'^pktfilt: tracing --proto udp --daddr 10\.9\.0\.2 --dport 9000 \((default scope|--functions), [0-9,]+ functions, patched when a packet matches\); waiting for 1 packet for 120 s at most, Ctrl-C to stop$'
		tr_same "$name" $TR/before $TR/after
		r=$((r + 1))
	done
	name="trace -q"
	pktfilt trace --at l4 --proto udp --daddr 10.9.0.2 --dport 9000 -q \
		--functions $TR_FEW --timeout 120 > $TR/out 2> $TR/err &
	pid=$!
	tr_when_armed
	sleep 1
	ip netns exec a pfsend udp --dst 10.9.0.2 --dport 9000 -q
	wait $pid
	expect_eq "$name: exit status" "$?" 0
	expect_eq "$name: no ready line" "$(grep -c '^pktfilt: tracing ' $TR/err)" 0
	name="trace -- COMMAND"
	tr_run "$name" 0 --proto udp --daddr 10.9.0.2 --dport 9000 \
		--functions $TR_FEW --timeout 60 -- \
		ip netns exec a pfsend udp --dst 10.9.0.2 --dport 9000 -q
	expect_eq "$name: no ready line" "$(grep -c '^pktfilt: tracing ' $TR/err)" 0
}

# tr_arm_times [ROUNDS]: the default scope, --count 1: from pktfilt trace's
# start to COMMAND (armed), and from COMMAND's end to pktfilt's exit
# (1 s of waiting for the packet, then restored), in ms, as bench.sh's
# arm_latency; for pktfilt-old too if the VM has it
# (PKTFILT_VM_EXTRA_BINS=/path/to/pktfilt-old). Then one run's steps.
tr_arm_times() {
	rounds=${1:-3}
	tools=pktfilt
	command -v pktfilt-old > /dev/null && tools="pktfilt-old pktfilt"
	echo 0 > $T/tracing_on
	echo nop > $T/current_tracer
	r=1
	while [ $r -le "$rounds" ]; do
		for tool in $tools; do
			t0=$(pfbench now)
			t1=$($tool trace --proto udp --dport 9000 -o /dev/null -- pfbench now 2> $TR/times.err)
			t2=$(pfbench now)
			echo "tr-arm: round=$r tool=$tool scope=default arm_ms=$(((t1 - t0) / 1000000)) restore_ms=$(((t2 - t1) / 1000000))"
		done
		r=$((r + 1))
	done
	PKTFILT_TRACE_TIMES=2 pktfilt trace --at l4 --proto udp --dport 9000 -o /dev/null -- true 2> $TR/times.err
	sed 's/^/tr-arm-steps: /' $TR/times.err
	echo function > $T/current_tracer
	echo 1 > $T/tracing_on
}

# The functions of a text trace's graphs, one a line, sorted.
tr_funcs() {
	sed -n 's/^ *[0-9]*) .*|  *\([A-Za-z0-9_.]*\)().*/\1/p' "$1" | sort -u
}

# Lazy (the default): while trace waits, the tracer is nop (nothing
# patched), set_ftrace_pid empty, and show says so; the first matching
# packet is held, replayed traced ("held" in its header), the settings
# restored; and the same packet traced with --eager has the same root and
# functions.
tr_lazy_case() {
	tr_snap $TR/before
	: > $TR/err
	pktfilt trace --at rx --proto udp --dport 9000 --timeout 120 -o $TR/lazy.txt 2> $TR/err &
	pid=$!
	if tr_wait_ready $TR/err $pid; then
		tr_expect "lazy: the ready line says so" $TR/err 'patched when a packet matches'
		# Nothing patched while waiting: the tracer nop, the scope
		# in set_ftrace_filter but none of it in enabled_functions
		# (only rx's own hook on __netif_receive_skb and kprobes'),
		# no PID filter: no context switch pays for either.
		expect_eq "lazy: current_tracer while waiting" "$(cat $T/current_tracer)" nop
		# Enabled events make ftrace record task names at switches.
		expect_eq "lazy: the pktfilt events off while waiting" \
			"$(cat $T/events/pktfilt/enable)" 0
		n=$(grep -vc '^#' $T/set_ftrace_filter)
		e=$(wc -l < $T/enabled_functions)
		if [ "$n" -gt 1000 ] && [ "$e" -lt 20 ]; then
			ok "lazy: the scope named ($n functions), not patched ($e enabled)"
		else
			fail "lazy: the scope named, not patched" "$n in set_ftrace_filter, $e enabled: $(head -20 $T/enabled_functions)"
		fi
		expect_eq "lazy: set_ftrace_pid empty while waiting" \
			"$(cat $T/set_ftrace_pid)" "no pid"
		pktfilt show > $TR/show
		tr_expect "lazy: show says waiting" $TR/show '^lazy: *waiting'
		ip netns exec a pfsend udp --src 10.9.0.1 --dst 10.9.0.2 --sport 4000 --dport 9000 -q
	else
		fail "lazy: ready line" "$(head -c 600 $TR/err)"
		kill -INT $pid
	fi
	wait $pid
	expect_eq "lazy: exit status" $? 0
	tr_snap $TR/after
	tr_same "lazy" $TR/before $TR/after
	tr_expect "lazy: the packet held, then traced" $TR/lazy.txt '^# packet [0-9]* .rx, id .* held [0-9.]* us$'
	# Only trace's own process may empty or set set_ftrace_pid while it
	# waits: anyone else's write ends the trace, as while armed.
	: > $TR/err
	pktfilt trace --at rx --proto udp --dport 9000 --timeout 60 -o $TR/lazy-pid.txt 2> $TR/err &
	pid=$!
	if tr_wait_ready $TR/err $pid; then
		echo $(($(cat /proc/sys/kernel/pid_max) - 1)) > $T/set_ftrace_pid
	else
		fail "lazy, set_ftrace_pid written: ready line" "$(head -c 600 $TR/err)"
		kill -INT $pid
	fi
	wait $pid
	rc=$?
	if [ $rc -ne 0 ] && grep -q 'set_ftrace_pid was written' $TR/err; then
		ok "lazy: another process's set_ftrace_pid write ends the wait, says why"
	else
		fail "lazy: another process's set_ftrace_pid write ends the wait" "exit $rc; $(head -c 600 $TR/err)"
	fi
	tr_snap $TR/after2
	tr_same "lazy, set_ftrace_pid written" $TR/before $TR/after2
	# Every function, patched at the packet (seconds under TCG: --hold 60).
	PKTFILT_TRACE_TIMES=1 pktfilt trace --at l4 --all-functions --hold 60 --proto udp --dport 9000 \
		-o $TR/lazy-all.txt -- ip netns exec a pfsend udp --src 10.9.0.1 --dst 10.9.0.2 \
		--sport 4000 --dport 9000 -q 2> $TR/lazy-all.err
	expect_eq "lazy --all-functions: exit status" $? 0
	tr_expect "lazy --all-functions: the packet held, then traced" $TR/lazy-all.txt \
		'^# packet [0-9]* .l4, id .* held [0-9.]* us$'
	sed -n 's/^pktfilt: time: /# lazy --all-functions: /p' $TR/lazy-all.err
	# Every stage on one kernel in make check (TRACE_CLI, the tool's own
	# logic: held, patched, replayed the same way), rx on the others.
	ats=rx
	[ "${TRACE_CLI:-1}" != 0 ] && ats="l4 rx tx"
	for at in $ats; do
		# Caches warm (the reply's route, say) for both runs alike.
		ip netns exec a pfsend udp --src 10.9.0.1 --dst 10.9.0.2 --sport 4000 --dport 9000 -q
		for m in lazy eager; do
			e=
			[ $m = eager ] && e=--eager
			# The sender lives on while its first packet is held:
			# else the held packet's free would free its socket too.
			pktfilt trace $e --at $at --proto udp --dport 9000 -o $TR/$m-$at.txt -- \
				ip netns exec a pfsend udp --src 10.9.0.1 --dst 10.9.0.2 --sport 4000 --dport 9000 \
				--count 2 --interval-us 1500000 -q 2> $TR/$m-$at.err
			tr_funcs $TR/$m-$at.txt > $TR/$m-$at.funcs
		done
		lr=$(sed -n 's/.* root=\([a-z_0-9]*\).*/\1/p' $TR/lazy-$at.txt | head -1)
		er=$(sed -n 's/.* root=\([a-z_0-9]*\).*/\1/p' $TR/eager-$at.txt | head -1)
		n=$(wc -l < $TR/lazy-$at.funcs)
		# Two traces of one packet type may differ by a lock or a
		# wakeup the timing decides (seen: one _raw_spin_lock more on
		# 6.12, once in two): at most two functions apart; a replay
		# gone another way differs by many.
		d=$(diff $TR/eager-$at.funcs $TR/lazy-$at.funcs | grep -c '^[<>]')
		if [ -n "$lr" ] && [ "$lr" = "$er" ] && [ "$n" -gt 5 ] && [ "$d" -le 2 ]; then
			ok "lazy and eager at $at: the same root ($lr) and $n functions ($d apart)"
			[ "$d" = 0 ] || diff $TR/eager-$at.funcs $TR/lazy-$at.funcs | sed -n 's/^\([<>]\)/# lazy and eager at '"$at"': eager \1 lazy:/p'
		else
			fail "lazy and eager at $at: the same root and functions" \
				"roots '$lr' '$er'; $d apart: $(diff $TR/eager-$at.funcs $TR/lazy-$at.funcs | head -20)"
			# Where the first function of one only is called.
			x=$(diff $TR/eager-$at.funcs $TR/lazy-$at.funcs | sed -n 's/^[<>] //p' | head -1)
			for m in lazy eager; do
				grep -n -B12 -A2 " $x()" $TR/$m-$at.txt | head -30 | sed "s/^/# $m: /"
			done
		fi
	done
}

# The receiver's TCPOFOQueue (segments queued out of order), in b.
tr_tcp_ofo() {
	ip netns exec b awk '$1 == "TcpExt:" {
		if (!c) { for (i = 2; i <= NF; i++) if ($i == "TCPOFOQueue") c = i; next }
		print $c }' /proc/net/netstat
}

# Lazy, a TCP stream: its first segment after the SYN is held at rx,
# those after it match too and queue behind it, so the receiver gets
# them in order (no out-of-order queue), and the stream goes on.
tr_lazy_tcp_case() {
	ip netns exec b pfbench tcp-sink --port 7102 > /dev/null &
	sink=$!
	sleep 0.5
	o0=$(tr_tcp_ofo) h0=$(pf_stat held)
	# Every segment of a to b after the SYN matches: the handshake's
	# last ACK is held, and the data segments come behind it.
	pktfilt trace --at rx --count 1 -o $TR/tcp.txt \
		'tcp dst port 7102 and tcp[tcpflags] & tcp-syn == 0' -- \
		ip netns exec a pfbench tcp-stream --dst 10.9.0.2 --port 7102 --seconds 3 \
		> $TR/tcp.out 2> $TR/tcp.err
	expect_eq "lazy TCP stream: exit status" $? 0
	tr_expect "lazy TCP stream: its first segment held, then traced" $TR/tcp.txt \
		'^# packet [0-9]* .rx, id .*tcp .* held [0-9.]* us$'
	tr_expect "lazy TCP stream: the stream went on" $TR/tcp.out 'bytes=[1-9]'
	held=$(($(pf_stat held) - h0))
	expect_eq "lazy TCP stream: no segment out of order at the receiver ($held held)" \
		$(($(tr_tcp_ofo) - o0)) 0
	kill $sink 2> /dev/null
	wait $sink 2> /dev/null
}

# In namespace y, what reached IP: its InReceives.
tr_y_receives() { ip netns exec y awk '/^Ip: [0-9]/ { print $4 }' /proc/net/snmp; }

# A packet from x to y, held by pktfilt set --lazy at rx (no one says
# ready), with --hold 30 unless given.
tr_hold_one() {
	pktfilt set --lazy --hold "${1:-30}" --at rx --proto udp --dport 9300 --count 0 ||
		fail "hold: set --lazy" "exit $?"
	ip netns exec x pfsend udp --src 10.77.0.1 --dst 10.77.0.2 --sport 4000 --dport 9300 -q
	sleep 0.3
}

tr_hold_topo() {
	ip netns add x && ip netns add y &&
	ip link add veth-x netns x type veth peer name veth-y netns y &&
	ip -n x addr add 10.77.0.1/24 dev veth-x &&
	ip -n y addr add 10.77.0.2/24 dev veth-y &&
	ip -n x link set veth-x up && ip -n y link set veth-y up &&
	ip -n x link set lo up && ip -n y link set lo up &&
	neigh_static x veth-x y veth-y 10.77.0.2 &&
	neigh_static y veth-y x veth-x 10.77.0.1
	sleep 1
}

# pktfilt set --lazy: a held packet is not received until it goes on;
# clear, the bound, rmmod let it go on untraced (received, once); a
# device or namespace removed drops it; nothing is left behind (no
# device reference: no "waiting for ... to become free").
tr_hold_case() {
	tr_hold_topo || { fail "hold: topology" "x/y"; return; }
	r0=$(tr_y_receives)
	tr_hold_one
	pktfilt show > $TR/show
	tr_expect "hold: show says holding" $TR/show '^lazy: *holding .1 packet,'
	expect_eq "hold: not received while held" "$(tr_y_receives)" "$r0"
	e0=$(pf_stat "hold expired")
	pktfilt clear
	sleep 0.5
	expect_eq "hold: clear lets it go on, received once" "$(tr_y_receives)" $((r0 + 1))
	expect_eq "hold: counted as expired" "$(pf_stat "hold expired")" $((e0 + 1))

	tr_hold_one 1
	sleep 2.5
	expect_eq "hold: past --hold it goes on, received once" "$(tr_y_receives)" $((r0 + 2))
	pktfilt show > $TR/show
	tr_expect "hold: waiting again after the bound" $TR/show '^lazy: *waiting'
	pktfilt clear

	tr_hold_one
	rmmod pktfilt || fail "hold: rmmod while a packet is held" "exit $?"
	expect_eq "hold: rmmod lets it go on, received once" "$(tr_y_receives)" $((r0 + 3))
	insmod $PKTFILT_KO

	tr_hold_one
	f0=$(pf_stat "hold flushed")
	ip -n y link set veth-y down
	expect_eq "hold: device down drops it" "$(pf_stat "hold flushed")" $((f0 + 1))
	expect_eq "hold: nothing held after device down" \
		"$(pktfilt show | sed -n 's/^lazy: *//p' | cut -c1-7)" waiting
	ip -n y link set veth-y up
	sleep 1

	tr_hold_one
	ip netns del y
	ip netns del x
	sleep 1
	expect_eq "hold: namespace removed drops it" "$(pf_stat "hold flushed")" $((f0 + 2))
	pktfilt clear
	if dmesg | grep -q 'waiting for .* to become free'; then
		fail "hold: no device reference left" "$(dmesg | grep 'to become free' | head -3)"
	else
		ok "hold: no device reference left"
	fi
}

# trace --pcap (issue 33): one UDP packet, v4 then v6, traced at tx and
# rx (v4) or tx and l4 (v6; an rx graph holds the l4 handler, so l4 has a
# graph of its own only without rx): two graphs of one id, their bytes
# written as pcapng, the interfaces named; the same frames from report
# --format pcapng of the raw trace. Then a packet longer than --snaplen
# at l4 (v4, 1500: the most) and rx (v6, 64): its event carries that many
# bytes, and its length. selftests/host/pcap-check reads the files with
# tshark on the host. On the kernels other than the first (TRACE_CLI=0)
# the snaplen runs alone: the files are the tool's, and journey.sh's tool
# case traces a ping at tx,rx with --pcap on every kernel.
tr_pcap_case() {
	for v in 4 6; do
		src=10.9.0.1 dst=10.9.0.2 six= at=rx
		[ $v = 6 ] && src=fd00::1 dst=fd00::2 six=-6 at=l4
		[ "${TRACE_CLI:-1}" = 0 ] || tr_pcap_both $v $src $dst "$six" $at

		# v4: the most, 1500 of a 2,028-byte datagram sent in two
		# fragments, reassembled for l4 (skb_copy_bits() over its
		# fragment list); v6: 64 of 448 at rx.
		at=l4 size=2000 len=2028 snap=1500
		[ $v = 6 ] && at=rx size=400 len=448 snap=64
		name="trace --pcap --snaplen $snap at $at, udp v$v of $len bytes"
		TR_AT=$at
		tr_run "$name" 0 --snaplen $snap --proto udp --daddr $dst --dport 9000 \
			--functions "$TR_FUNCS" --pcap $TR/cut$v.pcapng --raw $TR/cut$v.raw \
			--timeout 60 -- ip netns exec a pfsend udp $six --src $src --dst $dst \
			--sport 4000 --dport 9000 --size $size -q
		TR_AT=
		expect_eq "$name: the event's length and $snap bytes" \
			"$(sed -n 's/.* len=\([0-9]*\) .* data=\([0-9a-f]*\).*/\1 \2/p' $TR/cut$v.raw |
				awk '{ print $1, length($2) / 2 }')" "$len $snap"
		pcap_emit cut$v $TR/cut$v.pcapng $TR/cut$v.raw snaplen=$snap
	done
	tr_module_idle "trace --pcap"
}

# tr_pcap_both V SRC DST SIX AT: one UDP packet traced at tx and AT with
# --pcap: two events with bytes, one id; the file names veth-b; report
# --format pcapng of the raw trace gives the same frames.
tr_pcap_both() {
	v=$1 src=$2 dst=$3 six=$4 at=$5
	name="trace --pcap, udp v$v at tx,$at"
	TR_AT=tx,$at
	tr_run "$name" 0 --proto udp --daddr $dst --dport 9000 \
		--functions "$TR_FUNCS" --pcap $TR/pcap$v.pcapng --raw $TR/pcap$v.raw \
		--timeout 60 -- ip netns exec a pfsend udp $six --src $src --dst $dst \
		--sport 4000 --dport 9000 -q
	expect_eq "$name: both events with bytes, one id" \
		"$(grep -o 'pktfilt_packet: .* stage=[a-z0-9]* id=[0-9]* .* data=[0-9a-f]' $TR/pcap$v.raw |
			sed 's/.* stage=\([a-z0-9]*\) id=\([0-9]*\) .*/\1 \2/' | sort -u |
			awk '{ s = s $1 " "; id[$2] } END { n = 0; for (i in id) n++; print s n }')" \
		"$(echo "$at tx" | tr ' ' '\n' | sort | tr '\n' ' ')1"
	# trace names the interfaces it finds: b's veth-b here.
	if grep -a -q veth-b $TR/pcap$v.pcapng; then
		ok "$name: the file names veth-b"
	else
		fail "$name: the file names veth-b" "$(od -c $TR/pcap$v.pcapng | head -20)"
	fi
	pktfilt report --format pcapng -o $TR/report$v.pcapng $TR/pcap$v.raw 2> $TR/err
	expect_eq "$name: report --format pcapng of the raw trace" "$? $(cat $TR/err)" "0 "
	pcap_emit udp$v $TR/pcap$v.pcapng $TR/pcap$v.raw
	pcap_emit report$v $TR/report$v.pcapng $TR/pcap$v.raw
}

trace_cases() {
	mkdir -p $TR
	grep -q '^pktfilt ' /proc/modules || insmod $PKTFILT_KO
	tr_user_state
	timed tr_snap_case
	timed tr_format text --all-functions
	cp $TR/raw $TR/raw.text
	# The renderings are the tool's: traced live in each format on one
	# kernel (TRACE_CLI), rendered from the text run's trace on the others.
	if [ "${TRACE_CLI:-1}" != 0 ]; then
		timed tr_format json
		timed tr_format folded --functions "$TR_FUNCS"
	else
		timed tr_format_report json
		timed tr_format_report folded
	fi
	timed tr_count_case
	timed tr_lazy_case
	timed tr_lazy_tcp_case
	timed tr_hold_case
	timed tr_args_case
	timed tr_pcap_case
	# The tool's own behaviour, the same on every kernel (TRACE_CLI=0:
	# left out, and tr_index_case's kept-list variants and two rounds of
	# tr_ready_case; make check runs them on one kernel, make soak on all).
	if [ "${TRACE_CLI:-1}" != 0 ]; then
		timed tr_timeout_case
		timed tr_signal_case INT 1 1
		timed tr_signal_case TERM 1 1
		timed tr_signal_case HUP 0 0
		timed tr_error_case
		timed tr_concurrent_case
	fi
	timed tr_index_case
	if [ "${TRACE_CLI:-1}" != 0 ]; then timed tr_ready_case 2; else timed tr_ready_case 1; fi
	[ "${TRACE_CLI:-1}" != 0 ] && timed tr_nomodule_case
	timed tr_mount_case
	tr_user_unset
	rmmod pktfilt
}

# --args and --retval (issue 33): on a kernel with the option, the graph
# shows udp_rcv's argument list (text and json); without it, trace fails
# before arming and names the kernel's config option.
tr_args_case() {
	send='ip netns exec a pfsend udp --dst 10.9.0.2 --dport 9000 -q'
	name="trace --args"
	if [ -e $T/options/funcgraph-args ]; then
		tr_run "$name" 0 --proto udp --daddr 10.9.0.2 --dport 9000 \
			--functions 'ip_*,__udp4_lib_*' --args --raw $TR/args.raw \
			--timeout 60 -- $send
		tr_expect "$name: udp_rcv's argument in the graph" $TR/out \
			'^ *[0-9]+\) .*\| +udp_rcv\(skb=0x[0-9a-f]+\) \{$'
		pktfilt report --format json $TR/args.raw > $TR/args.json 2> $TR/err
		tr_expect "$name: json has it" $TR/args.json \
			'"graph":\{"func":"udp_rcv","duration_ns":[0-9]+,"args":\{"skb":"0x[0-9a-f]+"\}'
		# __udp4_lib_rcv is inlined into udp_rcv in 7.2: any callee.
		tr_expect "$name: json has a callee's arguments" $TR/args.json \
			'"children":\[\{"func":"[^"]+","duration_ns":[0-9]+,"args":\{"[a-z_]+":"'
		echo "# $name: $(grep -c -E '\| +[a-z_0-9.]+\([a-z_]+=' $TR/args.raw) lines with arguments, e.g.:"
		grep -m 4 -E '\| +[a-z_0-9.]+\([a-z_]+=' $TR/args.raw | sed 's/^/#   /'
		pktfilt report --format chrome $TR/args.raw > $TR/args.chrome 2> $TR/err
		tr_expect "$name: chrome has them" $TR/args.chrome \
			'"cat":"call",.*"args":\{"args":\{"[a-z_]+":"'
		pktfilt diff $TR/args.raw 1 $TR/args.raw 1 > $TR/args.diff 2> $TR/err
		expect_eq "$name: diff of the packet with itself: the same" "$?" 0
		expect_eq "$name: funcgraph-args off again" "$(cat $T/options/funcgraph-args)" 0
	else
		tr_run "$name" 1 --proto udp --functions $TR_FEW --args --timeout 5
		tr_expect "$name: names the config option" $TR/err \
			'--args: .*has no funcgraph-args: this kernel lacks CONFIG_FUNCTION_TRACE_ARGS'
		sed 's/^/# /' $TR/err
	fi
	tr_module_idle "$name"

	name="trace --retval"
	if [ -e $T/options/funcgraph-retval ]; then
		tr_run "$name" 0 --proto udp --daddr 10.9.0.2 --dport 9000 \
			--functions 'ip_*,__udp4_lib_*' --retval --format json \
			--timeout 60 -- $send
		tr_expect "$name: udp_rcv's return value in json" $TR/out \
			'"graph":\{"func":"udp_rcv","duration_ns":[0-9]+,"ret":"(0x[0-9a-f]+|-[0-9]+)"'
	else
		tr_run "$name" 1 --proto udp --functions $TR_FEW --retval --timeout 5
		tr_expect "$name: names the config option" $TR/err \
			'--retval: .*has no funcgraph-retval: this kernel lacks CONFIG_FUNCTION_GRAPH_RETVAL'
		sed 's/^/# /' $TR/err
	fi
	tr_module_idle "$name"
}
