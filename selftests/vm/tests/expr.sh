# SPDX-License-Identifier: GPL-2.0
# Issue 15's filter expressions in the VM: the oracle (the module's
# decisions against libpcap's, packet for packet), an expression ANDed
# with the structured predicates, show, the refusals, and the l4 and tx
# stages with real traffic.
#
#	selftests/vm/run --kernel 6.12 -- sh selftests/vm/tests/expr.sh [CASE...]
#
# CASEs (default: all, in this order): oracle oracle_tx oracle_l4 anded
# show refused stages.
#
# oracle: selftests/vm/expr/corpus is ~60 varied IPv4 and IPv6 packets
# (TCP flags and ports, UDP, ICMP and ICMPv6 types, IPv4 options, IPv4
# and IPv6 fragments, IPv6 extension headers, TTLs, classes, lengths),
# packet N from 10.77.0.N or fd77::N; selftests/vm/expr/cases holds, for
# each expression, the packets that libpcap in user space matches
# (pcap_offline_filter; selftests/host/expr-oracle writes both files and
# make check proves they are this libpcap's answers). For each expression:
# pktfilt set --at rx --count 0 EXPR, every packet of the corpus sent from
# namespace a over veth to b (pfinject: the bytes as they are, so
# ip_rcv()/ipv6_rcv() in b sees exactly them), and the sources of the
# pktfilt_packet events are the expected set, no more, no less, no packet
# twice. Each frame is padded to Ethernet's minimum as a NIC pads it
# (pfinject --pad): the padding is not the packet's. Packets 61 and 62 are
# non-linear at the hook (pages of an AF_PACKET send). oracle_tx: the
# same at tx, the corpus sent from a through raw sockets with their own
# headers (pfinject --raw: LOCAL_OUT sees these bytes); oracle_l4: at l4,
# the corpus injected as for rx, for the packets that reach a protocol
# handler in b (the set a filter without predicates traces there).
# EXPR_STAGES_HALF=1 (make check): tx runs every other expression (the
# first, third, ...), l4 the others, so that each one still runs at rx
# and at one more stage (make soak: every one at all three).
# anded: the same with structured flags (--proto, --dport) given
# too, the expected set computed from the packets' keys. The recipe is
# the manual one (function_graph, set_graph_function = the stages'
# roots, max_graph_depth 3 so that the graphs stay short under TCG; put
# back at the end); every event must head a graph.
. /pktfilt/selftests/vm/lib.sh
. /pktfilt/selftests/vm/tests/common.sh

EXPR_DIR=/pktfilt/selftests/vm/expr
CORPUS=$EXPR_DIR/corpus
ROOTS="netif_receive_skb_core ip_rcv ipv6_rcv nf_hook_slow"
NPKT=$(grep -c '^[0-9]' $CORPUS)

# --- tracing -------------------------------------------------------------------

expr_trace_start() {
	echo 0 > $T/tracing_on
	idle_pid > $T/set_ftrace_pid
	echo 0 > $T/options/funcgraph-irqs
	echo "$ROOTS $HANDLERS" > $T/set_graph_function
	OLD_DEPTH=$(cat $T/max_graph_depth)
	echo 3 > $T/max_graph_depth
	if [ "$(cat $T/current_tracer)" != function_graph ]; then
		echo function_graph > $T/current_tracer
	fi
	echo > $T/trace
	echo 1 > $T/events/pktfilt/enable
	echo 1 > $T/tracing_on
}

expr_trace_end() {
	echo 0 > $T/tracing_on
	echo > $T/trace
	echo 0 > $T/events/pktfilt/enable
	echo "${OLD_DEPTH:-0}" > $T/max_graph_depth
	echo > $T/set_graph_function
	echo 1 > $T/tracing_on
}

# overruns: events lost to a full ring buffer, all CPUs.
overruns() { cat $T/per_cpu/cpu*/stats | awk '/^overrun:/ { n += $2 } END { print n + 0 }'; }

# The trace so far to /tmp/trace.txt (tracing stays on), and the buffer
# emptied.
trace_grab() {
	cat $T/trace > /tmp/trace.txt
	echo > $T/trace
}

# describe IDS...: each packet's corpus line without its hex.
describe() {
	for _i in "$@"; do
		awk -v n="$_i" '$1 == n { $2 = ""; print "#     " $0 }' $CORPUS
	done
}

# --- sending -------------------------------------------------------------------

MAC_B=
# stage_set STAGE [N...]: the stage the oracle runs at (STAGE), the corpus
# packets that reach it (STAGE_SET: N..., or every one) and how many hook
# passes that is (STAGE_SEEN).
stage_set() {
	STAGE=$1
	shift
	if [ $# -gt 0 ]; then
		STAGE_SET="$*"
	else
		STAGE_SET=$(awk '/^[0-9]/ { printf "%s%d", n++ ? " " : "", $1 }' $CORPUS)
	fi
	STAGE_SEEN=$(echo $STAGE_SET | wc -w)
}
stage_set rx
# inject [--only N]: the corpus, as STAGE needs it: into b (rx, l4), or
# sent from a (tx).
inject() {
	_before=$(pf_stat seen)
	if [ "$STAGE" = tx ]; then
		ip netns exec a pfinject --raw --dev veth-a "$@" $CORPUS > /tmp/inject.out ||
			return 1
	elif ! ip netns exec a pfinject --dev veth-a --dst-mac "$MAC_B" --pad "$@" $CORPUS > /tmp/inject.out; then
		return 1
	fi
	# Every packet passes the stage's hook once: wait until it has seen
	# them (at rx and tx they pass in pfinject's own sendto(), unless
	# ksoftirqd took over), 3 s at most.
	_n=$STAGE_SEEN
	case "$*" in *--only*) _n=1 ;; esac
	_i=0
	while [ $(($(pf_stat seen) - _before)) -lt "$_n" ] && [ $_i -lt 30 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	return 0
}

# --- the oracle ----------------------------------------------------------------

# corpus_sources: the corpus numbers of /tmp/trace.txt's events' sources
# (10.77.0.N, fd77::N: N; the namespaces' own packets left out), sorted,
# after the number of events.
corpus_sources() {
	awk '/pktfilt_packet:/ {
		ev++
		if (match($0, / saddr=(10\.77\.0\.|fd77::)[0-9]+ /)) {
			s = substr($0, RSTART, RLENGTH - 1)
			sub(/.*[.:]/, "", s)
			id[++n] = s + 0
		}
	}
	END {
		for (i = 1; i <= n; i++)	# insertion sort: a few dozen
			for (j = i; j > 1 && id[j - 1] > id[j]; j--) {
				t = id[j]; id[j] = id[j - 1]; id[j - 1] = t
			}
		printf "%d", ev + 0
		for (i = 1; i <= n; i++)
			printf " %d", id[i]
	}' /tmp/trace.txt
}

# one_case FLAGS EXPR WANT: arm at STAGE (replacing the armed filter: the
# hooks and the gate stay), inject the corpus, compare with WANT, those of
# STAGE_SET.
one_case() {
	_flags=$1 _expr=$2 _want=
	[ "$_flags" = - ] && _flags=
	for _i in $3; do
		case " $STAGE_SET " in *" $_i "*) _want="$_want${_want:+ }$_i" ;; esac
	done
	_name="${STAGE}: '$_expr'${_flags:+ with $_flags}"
	echo > $T/trace
	# shellcheck disable=SC2086 # the flags are words
	if ! _out=$(pktfilt set --at $STAGE --count 0 $_flags "$_expr" 2>&1); then
		fail "$_name: pktfilt set" "$_out"
		return
	fi
	if ! inject; then
		fail "$_name: pfinject" "could not send the corpus"
		return
	fi
	trace_grab
	_got=$(corpus_sources)
	_ev=${_got%% *}
	_got=${_got#"$_ev"}
	_got=${_got# }
	_ngot=$(echo "$_got" | wc -w)
	if [ "$_got" = "$_want" ]; then
		ok "$_name: the module matches the $_ngot of $(echo $STAGE_SET | wc -w) packets libpcap does"
	else
		fail "$_name" "module: [$_got], libpcap: [$_want]"
		_missed=$(for _i in $_want; do case " $_got " in *" $_i "*) ;; *) echo "$_i" ;; esac; done)
		_extra=$(for _i in $_got; do case " $_want " in *" $_i "*) ;; *) echo "$_i" ;; esac; done)
		[ -n "$_missed" ] && echo "#   libpcap matches, the module does not:" && describe $_missed
		[ -n "$_extra" ] && echo "#   the module matches, libpcap does not (or twice):" && describe $_extra
	fi
	# Every event headed a graph rooted at the stage's roots (rx: the
	# device's receive, or ip_rcv()/ipv6_rcv() for what is not seen
	# there).
	_roots=$(trace_roots | grep -cxE "$(stage_roots)")
	if [ "$_ev" != "$_roots" ]; then
		echo "# $_name: $_ev events, $_roots graphs at a $STAGE root"
	fi
}

# stage_roots: STAGE's graph roots, as an extended regular expression.
stage_roots() {
	case $STAGE in
	rx) echo 'netif_receive_skb_core|ip_rcv|ipv6_rcv' ;;
	tx) echo 'nf_hook_slow' ;;
	l4) echo 'tcp_v4_rcv|udp_rcv|icmp_rcv|tcp_v6_rcv|udpv6_rcv|icmpv6_rcv' ;;
	esac
}

# run_cases FILTER [odd|even]: the lines of cases whose FLAGS are "-"
# (FILTER plain) or not (anded), at STAGE; with odd or even, every other
# one of them (the first, third, ...: odd).
run_cases() {
	_o0=$(overruns)
	_tab=$(printf '\t')
	_nth=0
	grep -v '^#' $EXPR_DIR/cases | while IFS=$_tab read -r flags expr want; do
		case $1$flags in
		plain-|anded-) [ "$1" = plain ] || continue ;;
		plain*) continue ;;
		esac
		_nth=$((_nth + 1))
		case ${2:-}$((_nth % 2)) in
		odd0|even1) continue ;;
		esac
		one_case "$flags" "$expr" "$want"
	done > /tmp/expr-cases.out
	pktfilt clear
	cat /tmp/expr-cases.out
	# The subshell's counts: from its ok/not ok lines.
	VMTEST_PASSED=$((VMTEST_PASSED + $(grep -c '^ok ' /tmp/expr-cases.out)))
	VMTEST_FAILED=$((VMTEST_FAILED + $(grep -c '^not ok ' /tmp/expr-cases.out)))
	_bad=$(grep -c '^# .*events, .* graphs at' /tmp/expr-cases.out)
	expect_eq "$STAGE $1: every event heads a graph at a $STAGE root" "$_bad" 0
	expect_eq "$STAGE $1: no trace data lost (ring buffer overruns)" "$(($(overruns) - _o0))" 0
}

oracle_cases() { run_cases plain; }

# At tx: the packets a's raw sockets sent, each through LOCAL_OUT once.
oracle_tx_cases() {
	stage_set tx
	pktfilt clear
	echo > $T/trace
	if ! inject; then
		fail "tx: pfinject --raw" "$(cat /tmp/inject.out)"
		stage_set rx
		return
	fi
	_unsent=$(sed -n 's/^unsent //p' /tmp/inject.out | tr ',' ' ')
	_sent=$(awk -v u=" $_unsent " '/^[0-9]/ && index(u, " " $1 " ") == 0 { print $1 }' $CORPUS)
	if [ -z "$_sent" ]; then
		fail "tx: pfinject --raw sent packets" "none: $(cat /tmp/inject.out)"
		stage_set rx
		return
	fi
	stage_set tx $_sent
	echo "# tx: $STAGE_SEEN of $NPKT packets sent (the kernel refused: ${_unsent:-none})"
	run_cases plain ${EXPR_STAGES_HALF:+odd}
	stage_set rx
}

# At l4: the packets that reach a protocol handler in b, as a filter
# without predicates traces them.
oracle_l4_cases() {
	stage_set l4
	STAGE_SEEN=1	# inject waits for the first
	echo > $T/trace
	if ! out=$(pktfilt set --at l4 --count 0 2>&1) || ! inject; then
		fail "l4: the packets that reach a handler" "$out"
		stage_set rx
		return
	fi
	sleep 1
	trace_grab
	_got=$(corpus_sources)
	_reach=${_got#* }
	[ "$_reach" = "${_got%% *}" ] && _reach=
	_n=$(echo $_reach | wc -w)
	echo "# l4: $_n of $NPKT packets reach a handler: $_reach"
	if [ "$_n" -ge 30 ]; then
		ok "l4: $_n packets of the corpus reach a handler in b"
	else
		fail "l4: the packets that reach a handler in b" "only $_n: $_reach"
	fi
	if [ "$_n" -gt 0 ]; then
		stage_set l4 $_reach
		run_cases plain ${EXPR_STAGES_HALF:+even}
	fi
	stage_set rx
}
anded_cases() { run_cases anded; }

# --- show, refusals ------------------------------------------------------------

show_cases() {
	e="udp and (port 53 or port 853) and ip[8] != 0"
	if ! out=$(pktfilt set --at rx --proto udp --count 0 "$e" 2>&1); then
		fail "show: pktfilt set" "$out"
		return
	fi
	line=$(pktfilt show | grep '^filter: ')
	case $line in
	*"--proto udp"*"'$e'"*) ok "show prints the expression as written, with the flags: $line" ;;
	*) fail "show prints the expression" "got '$line'" ;;
	esac
	# Pasted as it is, show's line arms the same filter.
	pktfilt clear
	pktfilt set --at rx --count 0 "ip and ip[8] != 0" >/dev/null 2>&1
	line=$(pktfilt show | sed -n "s/^filter: *//p")
	if [ -n "$line" ] && eval "$line" 2>/dev/null &&
	   [ "$(pktfilt show | grep '^filter: ')" = "filter:      $line" ]; then
		ok "show's line, pasted, arms the same filter"
	else
		fail "show's line, pasted, arms the same filter" "'$line'"
	fi
	pktfilt clear
}

# refused NAME WANT-IN-STDERR ARGS...: pktfilt set ARGS exits 2 and says WANT.
refused() {
	_name=$1 _want=$2
	shift 2
	_out=$(pktfilt set "$@" 2>&1)
	_rc=$?
	case $_out in
	*"$_want"*) _said=1 ;;
	*) _said=0 ;;
	esac
	if [ "$_rc" = 2 ] && [ "$_said" = 1 ] && ! pktfilt show | grep -q '^state: *armed'; then
		ok "$_name: exit 2, '$_out'"
	else
		fail "$_name" "exit $_rc, '$_out' (want exit 2 and '$_want')"
	fi
}

refused_cases() {
	pktfilt clear 2>/dev/null
	refused "a syntax error" "filter expression 'tcp port': can't parse filter expression: syntax error" --at rx 'tcp port'
	refused "an unknown word" "filter expression 'udp and bogus 5'" --at rx 'udp and bogus 5'
	refused "ether host: the link layer" "'ether' and other link-layer words do not apply" \
		--at rx 'ether host 02:00:00:00:00:01'
	refused "vlan: the link layer" "'vlan' and other link-layer words do not apply" --at rx 'vlan and udp'
	refused "a port out of range" "filter expression 'port 70000'" --at rx 'port 70000'
	# Issue 31: kernel metadata and link-layer loads, which libpcap in
	# user space would not decide as the module does.
	refused "inbound: the kernel's packet metadata" "'inbound', 'outbound' and 'ifindex' read the kernel's packet metadata" \
		--at rx 'udp and inbound'
	refused "ether[0]: a link-layer load" "'ether[...]' reads the link-layer header" --at rx 'ether[0] = 0x45'
	# protochain compiles to a loop (a backward jump), which libpcap's
	# interpreter runs and the kernel's classic BPF checker refuses: the
	# tool says so before sending (exit 2, as for any bad expression).
	out=$(pktfilt set --at rx 'ip6 protochain 17' 2>&1)
	rc=$?
	case $rc:$out in
	2:*"compiles to a loop"*) ok "ip6 protochain: refused, a loop (exit 2): $(echo "$out" | head -1)" ;;
	*) fail "ip6 protochain: refused as a loop, exit 2" "exit $rc, '$out'" ;;
	esac
	pktfilt clear 2>/dev/null
}

# --- the l4 and tx stages, real traffic ----------------------------------------

# stage_case STAGE EXPR WANT-EVENTS WANT-ROOTS-RE SENDS...: pfsend's traffic
# from a to b (each SEND one pfsend command line), with EXPR armed at STAGE;
# WANT-EVENTS events, all with stage=STAGE and dport 853 or 8443, and as
# many graphs rooted at WANT-ROOTS-RE.
stage_case() {
	st=$1 e=$2 want=$3 roots=$4
	shift 4
	trace_grab
	if ! out=$(pktfilt set --at "$st" --count 0 "$e" 2>&1); then
		fail "--at $st '$e': pktfilt set" "$out"
		return
	fi
	for s in "$@"; do
		# shellcheck disable=SC2086 # a command line
		ip netns exec a pfsend $s -q 2>/dev/null
	done
	sleep 0.3
	pktfilt clear
	trace_grab
	ev=$(trace_events | wc -l)
	good=$(trace_events | grep " stage=$st " | grep -cE ' dport=(853|8443) ')
	r=$(trace_roots | grep -cxE "$roots")
	if [ "$ev" = "$want" ] && [ "$good" = "$want" ] && [ "$r" = "$want" ]; then
		ok "--at $st '$e': $want packet(s) of the traffic, graphed at $roots"
	else
		fail "--at $st '$e'" "events=$ev (stage=$st, dport 853/8443: $good) graphs=$r, want $want"
		trace_events | head -8 | sed 's/^/#   /'
		trace_roots | sort | uniq -c | sed 's/^/#   /'
	fi
}

stages_cases() {
	# The expression reads bytes at fixed offsets from the IP header:
	# at l4 the module pushes the IP header back for the program.
	e='udp dst port 853 and (ip[8] = 64 or ip6[7] = 64)'
	for st in l4 tx; do
		case $st in
		l4) roots='udp_rcv|udpv6_rcv' ;;
		tx) roots='nf_hook_slow' ;;
		esac
		stage_case $st "$e" 4 "$roots" \
			"udp --dst 10.9.0.2 --dport 853 --count 2" \
			"udp --dst 10.9.0.2 --dport 854 --count 2" \
			"udp -6 --dst fd00::2 --dport 853 --count 2" \
			"udp -6 --dst fd00::2 --dport 854 --count 2"
	done
	# TCP flags at l4: the SYN, not the RST|ACK b answers with.
	stage_case l4 'tcp[tcpflags] & tcp-syn != 0 and tcp port 8443' 1 'tcp_v4_rcv' \
		"tcp --dst 10.9.0.2 --dport 8443 --count 1" \
		"tcp --dst 10.9.0.2 --dport 8444 --count 1"
}

# --- main ----------------------------------------------------------------------

cases=${*:-oracle oracle_tx oracle_l4 anded show refused stages}
ns_setup || { fail "ns_setup"; summary; exit 1; }
# Packets 61 and 62 are 5000 bytes; a's raw sockets send anywhere.
ip -n a link set veth-a mtu 9000
ip -n b link set veth-b mtu 9000
ip -n a route add default dev veth-a
ip -n a -6 route add default dev veth-a
MAC_B=$(mac b veth-b)
check "insmod" insmod $PKTFILT_KO
expr_trace_start
if ! pktfilt set --at rx --count 0 'ip' >/dev/null 2>&1; then
	fail "pktfilt set takes an expression" "$(pktfilt set --at rx --count 0 ip 2>&1)"
	expr_trace_end
	summary
	exit 1
fi
pktfilt clear
for c in $cases; do
	case $c in
	oracle | oracle_tx | oracle_l4 | anded | show | refused | stages) "${c}_cases" ;;
	*) fail "unknown case $c" ;;
	esac
	echo "# $c: done at $(cut -d' ' -f1 /proc/uptime) s"
done
expr_trace_end
check "rmmod" rmmod pktfilt
ns_cleanup
check_dmesg
summary
