# SPDX-License-Identifier: GPL-2.0
# Issue 13's VM tests: the stages rx and tx, packet ids, drop reasons
# (/work/journey-spec.md is the interface). Needs the two virtio-net NICs:
#
#	selftests/vm/run --kernel 6.12 --nics 2 -- sh selftests/vm/tests/journey.sh [CASE...]
#
# CASEs (default: all but tool, nftv, ecmp and smoke, in this order): topo
# rx pad core fwd nat nearmiss drop nosock tx txrx exact tstamp count
# unload; and tool, nftv (nftables verdicts), ecmp (ECMP next hops kept
# while armed: one vCPU, the key not held), and smoke (make check's short
# tier for 5.10 and the PREEMPT_RT flavours: smoke_cases). topo checks the topology and nftables alone
# (no module); the others need a module and tool that take --at (else: one
# failure saying so, and they are skipped). exact: issue 31's exactness
# (stale follow entries, another packet's fate, kprobes disabled);
# own_calls (common.sh) checks every trace. tool is a group of its own in
# make check ("journey.sh tool", in the shared boot, which has no NICs and
# the nop tracer): each pktfilt trace switches the tracer, and from
# function_graph on every function (the journey boot's) to nop, the
# emulator fault of selftests/vm/README.md froze or soft-locked the guest
# in 2 of 2 boots on 6.1 (2026-11-25, host load 6-7), where from nop it
# patches only the trace's scope.
#
# Topology: journey-topo.sh (a - r - b over veth with r forwarding, a - b
# direct, x - y over the virtio NICs with GRO on). Graph roots: rx
# netif_receive_skb_core, tx nf_hook_slow. Every case but tool uses the
# manual recipe (pktfilt set --at, function_graph with set_graph_function =
# the roots, all functions, the pktfilt events) and reads the trace with
# jgraphs below; tool runs pktfilt trace --at.
#
# Knobs (selftests/check sets them per PKTFILT_COUNTS): JOURNEY_REPS (runs
# of each exact count, 1), JOURNEY_UNLOAD_CYCLES (insmod-set-rmmod cycles
# per stage under floods, 4), JOURNEY_FULL=1 (every protocol and family in
# the drops at b's input and the transmits over virtio-net, not three of
# six), JOURNEY_TIMES=1 (each case's time).
. /pktfilt/selftests/vm/lib.sh
. /pktfilt/selftests/vm/tests/common.sh
. /pktfilt/selftests/vm/tests/journey-topo.sh

ROOTS="netif_receive_skb_core ip_rcv ipv6_rcv nf_hook_slow"
J=/tmp/journey
mkdir -p $J

# --- tracing -------------------------------------------------------------------

# jtrace_setup: as trace_start, once, with the stages' roots as graph
# functions (the L4 handlers too: a graph rooted there would be a stray
# one). Writing set_graph_function looks every name up in every function
# ftrace knows: seconds under TCG, so not for each case.
jtrace_setup() {
	echo 0 > $T/tracing_on
	idle_pid > $T/set_ftrace_pid
	echo 0 > $T/options/funcgraph-irqs
	echo "$ROOTS $HANDLERS" > $T/set_graph_function
	if [ "$(cat $T/current_tracer)" != function_graph ]; then
		echo function_graph > $T/current_tracer
	fi
}

# jtrace_start: an empty buffer, the pktfilt events on, tracing on.
jtrace_start() {
	_jc0=$(cut -d' ' -f1 /proc/uptime)
	echo 0 > $T/tracing_on
	echo > $T/trace
	echo 1 > $T/events/pktfilt/enable
	echo 1 > $T/tracing_on
}

# jtrace_stop: the trace to /tmp/trace.txt (trace_stop), its graphs to
# $J/graphs (jgraphs).
jtrace_stop() {
	trace_stop
	jgraphs > $J/graphs
	[ -n "${JOURNEY_TIMES:-}" ] &&
		echo "# $(awk -v a="$_jc0" '{ printf "%.1f", $1 - a }' /proc/uptime) s to here: ${name:-}"
	return 0
}

# jgraphs: one line per graph of /tmp/trace.txt and per pktfilt_free event:
#   G id=ID stage=S eroot=ROOT netns=N ifindex=I proto=P root=FUNC cpu=C funcs=,f1,f2,...,
#     the event's fields (id=none: no event before the graph on that CPU),
#     the graph's real root and every function called in it; nested events
#     (an event printed inside an open graph) are listed as ,EV:STAGE:ID, in
#     funcs.
#   FREE id=ID reason=R func=F ingraph=0|1
# A graph is open on a CPU from a function entered while none is open
# there to the closing brace at its depth. An interrupt that arrives in
# ftrace's entry path of a root records irq_enter_rcu() and the like one
# level deeper just before the root's line (trace_roots, common.sh): such
# a prelude, a graph rooted at none of the graph functions and deeper than
# the root that follows it on its CPU, is dropped, and the packet's event
# goes to that root.
jgraphs() {
	awk -v gfuncs="$ROOTS $HANDLERS" '
	BEGIN { n = split(gfuncs, a, " "); for (i = 1; i <= n; i++) isgf[a[i]] = 1 }
	function field(s, f,   r) {
		if (!match(s, " " f "=[^ ]*"))
			return "none"
		r = substr(s, RSTART + length(f) + 2, RLENGTH - length(f) - 2)
		return r
	}
	function gline(c) {
		return "G id=" eid[c] " stage=" est[c] " eroot=" ert[c] " netns=" ens[c] \
			" ifindex=" eif[c] " proto=" epr[c] " root=" groot[c] " cpu=" c \
			" funcs=," fl[c]
	}
	# Graphs rooted elsewhere than the graph functions wait in buf[c]
	# for the next root on their CPU: dropped if it is shallower.
	function flush(c) {
		if (nb[c])
			printf "%s", buf[c]
		nb[c] = 0
		buf[c] = ""
	}
	function close_graph(c) {
		if (isgf[groot[c]]) {
			flush(c)
			print gline(c)
		} else {
			if (!nb[c] || gdepth[c] < bmin[c])
				bmin[c] = gdepth[c]
			if (!nb[c]) {
				bev[c] = pend[c]
				bid[c] = eid[c]; bst[c] = est[c]; brt[c] = ert[c]
				bns[c] = ens[c]; bif[c] = eif[c]; bpr[c] = epr[c]
			}
			nb[c]++
			buf[c] = buf[c] gline(c) "\n"
		}
		open[c] = 0
		pend[c] = 0
	}
	END { for (c in nb) flush(c) }
	match($0, /^ *[0-9]+\)/) {
		c = substr($0, RSTART, RLENGTH) + 0
		s = $0
		if (!sub(/^[^|]*\|/, "", s))
			next
		match(s, /^ */)
		depth = RLENGTH
		s = substr(s, RLENGTH + 1)
		if (s ~ /^\/\* pktfilt_packet:/) {
			if (open[c]) {
				fl[c] = fl[c] "EV:" field(s, "stage") ":" field(s, "id") ","
				next
			}
			flush(c)
			pend[c] = 1
			eid[c] = field(s, "id"); est[c] = field(s, "stage")
			ert[c] = field(s, "root"); ens[c] = field(s, "netns")
			eif[c] = field(s, "ifindex"); epr[c] = field(s, "proto")
			next
		}
		if (s ~ /^\/\* pktfilt_free:/) {
			t = s
			sub(/^\/\* pktfilt_free: /, " ", t)
			sub(/ *\*\/ *$/, "", t)
			# Inside a graph: the functions open there, innermost
			# last (the module leaves func= out there: the address
			# the tracepoint has is the function_graph trampoline).
			st = ""
			if (open[c])
				for (k = gdepth[c]; k < depth; k += 2)
					if (fr[c, k] != "")
						st = st (st == "" ? "" : ">") fr[c, k]
			print "FREE id=" field(t, "id") " reason=" field(t, "reason") \
				" func=" field(t, "func") " ingraph=" (open[c] ? 1 : 0) \
				" stack=" (st == "" ? "-" : st)
			next
		}
		if (s ~ /^}/) {
			fr[c, depth] = ""
			if (open[c] && depth == gdepth[c])
				close_graph(c)
			next
		}
		# "f()", "f() {", and in a module "veth_xmit [veth]() {".
		if (s !~ /^[A-Za-z_][A-Za-z0-9_.]*( \[[A-Za-z0-9_]+\])?\(\)/)
			next
		name = s
		sub(/[ (].*/, "", name)
		if (s ~ /\{ *$/)
			fr[c, depth] = name
		if (!open[c]) {
			if (nb[c] && depth < bmin[c]) {
				# A prelude: dropped; its event goes to this root.
				nb[c] = 0
				buf[c] = ""
				pend[c] = bev[c]
				eid[c] = bid[c]; est[c] = bst[c]; ert[c] = brt[c]
				ens[c] = bns[c]; eif[c] = bif[c]; epr[c] = bpr[c]
			}
			if (!pend[c]) {
				eid[c] = "none"; est[c] = "none"; ert[c] = "none"
				ens[c] = "none"; eif[c] = "none"; epr[c] = "none"
			}
			groot[c] = name
			gdepth[c] = depth
			fl[c] = ""
			gno[c]++
			if (s ~ /\{ *$/) {
				open[c] = 1
			} else {
				close_graph(c)
			}
			next
		}
		if (fseen[c, name] != gno[c]) {
			fl[c] = fl[c] name ","
			fseen[c, name] = gno[c]
		}
		next
	}
	' /tmp/trace.txt
}

# g_ids: the distinct event ids of the graphs.
g_ids() { sed -n 's/^G id=\([0-9][0-9]*\) .*/\1/p' $J/graphs | sort -u; }
# g_count [GREP-PATTERN]: graphs (matching the pattern).
g_count() { grep '^G ' $J/graphs | grep -c -e "${1:-.}"; }
# g_has_func LINE FUNC
g_has_func() { case $1 in *",$2,"*) return 0 ;; esac; return 1; }
# first_free ID: "REASON FUNC STACK" of the first pktfilt_free of ID.
first_free() {
	sed -n "s/^FREE id=$1 reason=\([^ ]*\) func=\([^ ]*\) ingraph=[01] stack=\([^ ]*\)/\1 \2 \3/p" $J/graphs | head -1
}

# g_show: the graphs in short (for a failure's explanation).
g_show() {
	sed 's/funcs=\(.\{0,300\}\).*/funcs=\1.../' $J/graphs | head -8 | sed 's/^/#   /'
	# The raw evidence: the trace's size, its pktfilt events and lost
	# events, each CPU's ring buffer counters (an overrun loses graphs).
	echo "#   trace: $(wc -l < /tmp/trace.txt) lines"
	grep -E 'pktfilt_|LOST|=>' /tmp/trace.txt | head -12 | cut -c1-200 | sed 's/^/#   | /'
	for _c in $T/per_cpu/cpu*; do
		echo "#   ${_c##*/}: $(grep -E '^(entries|overrun|dropped events):' $_c/stats | tr -s ' ' | tr '\n' ' ')"
	done
}

# g_expect NAME PATTERN COND: ok if the graph lines matching PATTERN
# satisfy COND ("n=K": exactly K of them).
g_expect_n() {
	_n=$(g_count "$2")
	if [ "$_n" = "$3" ]; then ok "$1"; return 0; fi
	fail "$1" "$_n graph(s) match '$2', want $3"
	g_show
	return 1
}

# --- sending -------------------------------------------------------------------

# jsend NS PROTO FAMILY SRC DST DPORT COUNT [PFSEND OPTIONS]: UDP and TCP
# from source port 4000; ICMP echo requests (DPORT ignored).
jsend() {
	_ns=$1 _p=$2 _f=$3 _s=$4 _d=$5 _dp=$6 _n=$7
	shift 7
	_six=
	[ "$_f" = 6 ] && _six=-6
	case $_p in
	icmp*) ip netns exec "$_ns" pfsend icmp $_six -q --src "$_s" --dst "$_d" --count "$_n" "$@" ;;
	*) ip netns exec "$_ns" pfsend "$_p" $_six -q --src "$_s" --dst "$_d" \
		--sport 4000 --dport "$_dp" --count "$_n" "$@" ;;
	esac 2>/dev/null
	return 0
}

# The addresses of a path: PATH FAMILY -> SRC DST (sender's, receiver's).
# direct: a -> b over veth-ab; fwd: a -> r -> b; virtio: x -> y.
addrs() {
	case $1$2 in
	direct4) echo "10.10.3.1 10.10.3.2" ;;
	direct6) echo "fd10:3::1 fd10:3::2" ;;
	fwd4) echo "10.10.1.1 10.10.2.2" ;;
	fwd6) echo "fd10:1::1 fd10:2::2" ;;
	virtio4) echo "10.11.0.1 10.11.0.2" ;;
	virtio6) echo "fd11::1 fd11::2" ;;
	esac
}

# rx graphs start at the device: netif_receive_skb_core (rxcore.c), either
# family; ip_rcv/ipv6_rcv only for what is not seen there, and for every
# packet where the device receive cannot be hooked (RX_FROM_IP=1: `pktfilt
# show` says "rx: from ip_rcv()", arm64 before 6.2).
RX_FROM_IP=0
rx_root() {
	if [ "$RX_FROM_IP" = 1 ]; then ip_root "$1"; else echo netif_receive_skb_core; fi
}
ip_root() { if [ "$1" = 4 ]; then echo ip_rcv; else echo ipv6_rcv; fi; }
tx_root() { echo nf_hook_slow; }
l4_of() {
	case $1$2 in
	tcp4) echo tcp_v4_rcv ;; udp4) echo udp_rcv ;; icmp4) echo icmp_rcv ;;
	tcp6) echo tcp_v6_rcv ;; udp6) echo udpv6_rcv ;; icmp6) echo icmpv6_rcv ;;
	esac
}
# The --proto name.
pname() { if [ "$1$2" = icmp6 ]; then echo icmpv6; else echo "$1"; fi; }
other_proto() { if [ "$1" = udp ]; then echo tcp; else echo udp; fi; }
fwd_of() { if [ "$1" = 4 ]; then echo ip_forward; else echo ip6_forward; fi; }

# jset NAME ARGS...: pktfilt set ARGS; fail NAME if refused.
jset() {
	_name=$1
	shift
	if ! _out=$(pktfilt set "$@" 2>&1); then
		fail "$_name: pktfilt set $*" "$_out"
		return 1
	fi
}

# --- topology and nftables alone ------------------------------------------------

# The rules: r drops what it would forward to port 7777 (UDP, TCP) and ICMP
# echo requests with id 4242; b drops at input port 7778 and id 4343.
nft_setup() {
	ip netns exec r nft -f - <<-EOF || return 1
	table inet jt {
		chain fw {
			type filter hook forward priority 0; policy accept;
			udp dport 7777 counter drop
			tcp dport 7777 counter drop
			icmp type echo-request icmp id 4242 counter drop
			icmpv6 type echo-request icmpv6 id 4242 counter drop
		}
	}
	EOF
	ip netns exec b nft -f - <<-EOF
	table inet jt {
		chain in {
			type filter hook input priority 0; policy accept;
			udp dport 7778 counter drop
			tcp dport 7778 counter drop
			icmp type echo-request icmp id 4343 counter drop
			icmpv6 type echo-request icmpv6 id 4343 counter drop
		}
		chain out {
			type filter hook output priority 0; policy accept;
		}
	}
	EOF
}

# nft_key_hold: on two vCPUs, nftables' trace key held on for the whole
# boot by a rule of the initial namespace that sets nftrace (to 0: it
# traces nothing; nft_meta.c bumps the key for each such rule). pktfilt's
# arming and disarming turn the key on and off (module/nft.c), and each
# turn re-patches nft_do_chain() while the other vCPU runs it, which is
# where QEMU's TCG ran stale text (selftests/vm/README.md, "Known emulator
# faults": both retries of the whole run of 2026-11-28 13:23, an int3 in
# nft_do_chain() during journey-2cpu). With the key already on, pktfilt's
# increments patch nothing; the verdicts are nftv's, on one vCPU.
nft_key_hold() {
	nft -f - <<-EOF
	table inet pfkey {
		chain hold {
			meta nftrace set 0
		}
	}
	EOF
}

# nft_drops NS: the sum of the rules' packet counters.
nft_drops() {
	ip netns exec "$1" nft list table inet jt |
		awk '{ for (i = 1; i < NF; i++) if ($i == "packets") s += $(i + 1) } END { print s + 0 }'
}

# udp_flows NAME NS FAMILY SRC DST LISTEN_NS: 20 datagrams to port 9100 arrive.
udp_flows() {
	_six=
	[ "$3" = 6 ] && _six=-6
	rm -f $J/ready
	ip netns exec "$6" pfsend udp-listen $_six --port 9100 --count 20 --timeout 10 \
		--ready $J/ready > $J/listen.out 2>&1 &
	_lp=$!
	wait_for_file $J/ready
	ip netns exec "$2" pfsend udp $_six -q --src "$4" --dst "$5" --sport 4100 \
		--dport 9100 --count 20 --interval-us 2000
	wait $_lp
	if grep -q 'received 20' $J/listen.out; then ok "$1"; else fail "$1" "$(cat $J/listen.out)"; fi
}

topo_cases() {
	for f in 4 6; do
		set -- $(addrs fwd $f)
		udp_flows "topo: UDP over IPv$f from a to b through r" a $f "$1" "$2" b
		set -- $(addrs direct $f)
		udp_flows "topo: UDP over IPv$f from a to b direct" a $f "$1" "$2" b
		if [ "$HAVE_NICS" = 1 ]; then
			set -- $(addrs virtio $f)
			udp_flows "topo: UDP over IPv$f from x to y over virtio-net" x $f "$1" "$2" y
		fi
	done
	check "topo: ping a -> b (busybox ping)" ip netns exec a ping -c1 -W5 10.10.3.2
	d0=$(nft_drops r)
	jsend a udp 4 10.10.1.1 10.10.2.2 7777 3
	jsend a icmp 6 fd10:1::1 fd10:2::2 0 2 --id 4242
	expect_eq "topo: nft in r drops what it would forward (UDP, ICMPv6 id 4242)" \
		"$(($(nft_drops r) - d0))" 5
	d0=$(nft_drops b)
	jsend a udp 6 fd10:3::1 fd10:3::2 7778 3
	jsend a tcp 4 10.10.3.1 10.10.3.2 7778 1
	# The SYN's retransmission (1 s) may come before pfsend gives up.
	d0=$(($(nft_drops b) - d0))
	if [ $d0 -ge 4 ] && [ $d0 -le 5 ]; then
		ok "topo: nft in b drops at input (UDP, TCP)"
	else
		fail "topo: nft in b drops at input (UDP, TCP)" "$d0 drops, want 4 (5)"
	fi
}

# --- rx: local delivery ----------------------------------------------------------

# rx_case PATH PROTO FAMILY: a matching packet delivered locally (PATH
# direct: over veth into b; virtio: over virtio-net into y, in the middle
# of a burst the NIC's NAPI hands up as one list) gives one rx graph rooted
# at ip_rcv/ipv6_rcv with the L4 handler inside; near misses (the other
# protocol, another port, the reverse direction) are not traced.
rx_case() {
	path=$1 p=$2 f=$3
	set -- $(addrs $path $f)
	S=$1 D=$2
	if [ $path = virtio ]; then snd=x rcv=y dev=v2; else snd=a rcv=b dev=veth-ba; fi
	name="rx $path $(pname $p $f)/ipv$f"
	root=$(rx_root $f) q=$(other_proto $p)
	ports="--sport 4000 --dport 9000"
	[ $p = icmp ] && ports=
	jtrace_start
	jset "$name" --at rx --proto $(pname $p $f) --saddr $S --daddr $D $ports \
		--dev $dev --netns /run/netns/$rcv --count 1 || { trace_stop; return; }
	jsend $snd $q $f $S $D 9000 3			# protocol
	if [ $p != icmp ]; then
		jsend $snd $p $f $S $D 9001 3		# port
		# The addresses: the reverse direction (for ICMP the echo
		# replies would match).
		jsend $rcv $p $f $D $S 9000 3
	fi
	lp=
	if [ $p = udp ]; then
		rm -f $J/ready
		six=; [ $f = 6 ] && six=-6
		ip netns exec $rcv pfsend udp-listen $six --port 9000 --count 1 --timeout 10 \
			--ready $J/ready > $J/listen.out 2>&1 &
		lp=$!
		wait_for_file $J/ready
	fi
	if [ $path = virtio ]; then
		# A burst around the matching packet: NAPI's list holds both.
		jsend $snd $q $f $S $D 9000 30 &
		bp=$!
		jsend $snd $p $f $S $D 9000 1
		wait $bp
	else
		jsend $snd $p $f $S $D 9000 1
	fi
	jsend $snd $q $f $S $D 9000 5
	[ -n "$lp" ] && wait $lp
	sleep 0.5
	jtrace_stop
	g_expect_n "$name: one graph (near misses untraced)" . 1 ||
		pktfilt show | grep -E 'matched|traced|not ready|gate missed|followed|dropped' |
			tr -s ' ' | tr '\n' ' ' | sed 's/^/# show: /; s/$/\n/'
	line=$(grep '^G ' $J/graphs | head -1)
	case $line in
	*" stage=rx eroot=$root netns=$(netns_inode $rcv) ifindex=$(ifindex $rcv $dev) proto=$(pname $p $f) root=$root "*)
		# The matching packet's: --count 1 went to no near miss.
		ok "$name: event stage=rx root=$root, $rcv's $dev, graph rooted at $root" ;;
	*) fail "$name: event and root" "$(echo "$line" | cut -c1-200)" ;;
	esac
	if g_has_func "$line" "$(l4_of $p $f)"; then
		ok "$name: $(l4_of $p $f) inside"
	else
		fail "$name: $(l4_of $p $f) inside"
	fi
	if [ -n "$lp" ]; then
		if grep -q 'received 1' $J/listen.out; then
			ok "$name: delivered to the socket"
		else
			fail "$name: delivered to the socket" "$(cat $J/listen.out)"
		fi
	fi
}

rx_cases() {
	for path in direct virtio; do
		[ $path = virtio ] && [ "$HAVE_NICS" != 1 ] && continue
		for p in udp tcp icmp; do
			for f in 4 6; do
				rx_case $path $p $f
			done
		done
	done
}

# --- rx: Ethernet padding (issue 31) ----------------------------------------------

# pad_case: a 28-byte IPv4 UDP datagram in a 60-byte frame (18 bytes of
# padding after it, as a NIC sends a short frame) from x's v1 to y's v2,
# twice. At rx the skb still holds the padding (ip_rcv_core() trims it);
# the filter expression must see the 28 bytes libpcap sees: 'len = 28 and
# less 40' matches both, 'greater 40' and a load past the datagram's end
# ('udp[8] = 0', a padding byte) match neither.
pad_case() {
	S=10.11.0.1 D=10.11.0.2
	mac=$(jt_mac y v2)
	for e in 'udp dst port 9000 and len = 28 and less 40:2' \
		 'udp dst port 9000 and (greater 40 or udp[8] = 0):0'; do
		expr=${e%:*} want=${e##*:}
		name="pad rx udp/ipv4, 18 bytes of Ethernet padding: '$expr'"
		jtrace_start
		jset "$name" --at rx --count 0 --dev v2 --netns /run/netns/y "$expr" ||
			{ trace_stop; continue; }
		ip netns exec x pfsend raw --dev v1 --dst-mac "$mac" --src $S --dst $D \
			--proto udp --sport 4000 --dport 9000 --size 0 --trailer 18 \
			--count 2 -q || fail "$name: pfsend raw"
		sleep 0.5
		pktfilt clear
		jtrace_stop
		g_expect_n "$name: $want graphs, as libpcap decides" . "$want"
	done
}

pad_cases() {
	if [ "$HAVE_NICS" != 1 ]; then
		fail "pad: needs the virtio-net NICs"
		return
	fi
	pad_case
}

# --- rx: what a traced packet keeps (issue 31) -------------------------------------

# tstamp_case: over virtio-net (x's v1 to y's v2, NAPI's list path), a
# burst of 30 UDP datagrams from port 4000 and, amid it, 4 from port 4001,
# to a socket in y with SO_TIMESTAMPNS that reads them 3 s after the first
# arrived (pfsend udp-listen --tstamp-wait). The filter (--sport 4001
# --count 1) traces the first of the 4; the 3 others match with the count
# used up. Every datagram must carry the timestamp of its receipt (age
# >= 1.5 s when read), the traced one too: the kernel stamps in
# netif_receive_skb_list_internal() or netif_receive_skb(), not in the
# core (netdev_tstamp_prequeue), and recvmsg() stamps an unstamped one
# itself (age about 0). And only the traced datagram may be received
# through netif_receive_skb_core() (hits of a kprobe event there): the 3
# that cannot be traced stay on the kernel's path.
tstamp_case() {
	S=10.11.0.1 D=10.11.0.2
	name="tstamp rx udp/ipv4 over virtio-net"
	n=34 kp=pfjt_nrsc
	if ! echo "p:$kp netif_receive_skb_core" >> $T/kprobe_events ||
	   ! echo 1 > $T/events/kprobes/$kp/enable; then
		fail "$name: a kprobe event on netif_receive_skb_core"
		echo "-:$kp" >> $T/kprobe_events 2>/dev/null
		return
	fi
	rm -f $J/ready
	ip netns exec y pfsend udp-listen --port 9000 --count $n --timeout 20 \
		--tstamp-wait 3 --ready $J/ready > $J/listen.out 2>&1 &
	lp=$!
	wait_for_file $J/ready
	# net_enable_timestamp() turns the static key on from a work item.
	sleep 0.5
	jtrace_start
	e0=$(pf_stat exhausted)
	if jset "$name" --at rx --proto udp --saddr $S --daddr $D --sport 4001 \
		--dport 9000 --dev v2 --netns /run/netns/y --count 1; then
		ip netns exec x pfsend udp -q --src $S --dst $D --sport 4000 --dport 9000 \
			--count 30 2>/dev/null &
		bp=$!
		ip netns exec x pfsend udp -q --src $S --dst $D --sport 4001 --dport 9000 \
			--count 4 2>/dev/null
		wait $bp
	fi
	wait $lp
	ex=$(($(pf_stat exhausted) - e0))
	hits=$(awk -v k="$kp" '$1 == k { print $2 }' $T/kprobe_profile)
	pktfilt clear
	jtrace_stop
	# After the trace is read: removing an event empties the buffers.
	echo 0 > $T/events/kprobes/$kp/enable
	echo "-:$kp" >> $T/kprobe_events
	g_expect_n "$name: one graph" . 1
	line=$(grep '^G ' $J/graphs | head -1)
	root=$(rx_root 4)
	case $line in
	*" stage=rx eroot=$root netns=$(netns_inode y) ifindex=$(ifindex y v2) proto=udp root=$root "*)
		ok "$name: the graph rooted at $root, y's v2" ;;
	*) fail "$name: the graph rooted at $root" "$(echo "$line" | cut -c1-200)" ;;
	esac
	if g_has_func "$line" udp_rcv; then ok "$name: udp_rcv inside"; else fail "$name: udp_rcv inside"; fi
	if grep -q "received $n\$" $J/listen.out; then
		ok "$name: $n datagrams delivered"
	else
		fail "$name: $n datagrams delivered" "$(tail -3 $J/listen.out | tr '\n' ' ')"
	fi
	# The first from port 4001 is the traced one.
	tr_age=$(sed -n 's/^datagram sport=4001 age_ms=//p' $J/listen.out | head -1)
	case $tr_age in
	[0-9]*) if [ "$tr_age" -ge 1500 ]; then ok "$name: the traced datagram's timestamp is from its receipt (${tr_age} ms old when read)"; else fail "$name: the traced datagram's timestamp is from its receipt" "${tr_age} ms old when read: stamped by recvmsg(), not on receipt"; fi ;;
	*) fail "$name: the traced datagram's timestamp is from its receipt" "age '${tr_age}'" ;;
	esac
	young=$(sed -n 's/^datagram sport=\([0-9]*\) age_ms=//p' $J/listen.out |
		awk '$1 == "none" || $1 < 1500' | wc -l)
	all=$(grep -c '^datagram ' $J/listen.out)
	expect_eq "$name: every datagram's timestamp from its receipt (>= 1500 ms old when read, of $all)" \
		"$young" 0
	[ "$young" = 0 ] || grep '^datagram ' $J/listen.out | tr '\n' ' ' | cut -c1-600 | sed 's/^/# /; s/$/\n/'
	if [ "$ex" -ge 1 ]; then
		ok "$name: $ex matching datagram(s) with the count used up (exhausted)"
	else
		fail "$name: matching datagrams with the count used up" "exhausted went up by $ex: were they sent while armed?"
	fi
	if [ "$RX_FROM_IP" = 1 ]; then
		expect_eq "$name: none diverted to netif_receive_skb_core() (rx from ip_rcv(); kprobe hits)" \
			"$hits" 0
	else
		expect_eq "$name: only the traced datagram diverted to netif_receive_skb_core() (kprobe hits)" \
			"$hits" 1
	fi
}

tstamp_cases() {
	if [ "$HAVE_NICS" != 1 ]; then
		fail "tstamp: needs the virtio-net NICs"
		return
	fi
	tstamp_case
}

# --- rx: the device's receive core ------------------------------------------------

# core_case FAMILY: what runs before IP receive is in the rx graph. In b, a
# tap on veth-ba (an AF_PACKET socket, as tcpdump) and a tc ingress filter
# (clsact, flower) that drops UDP to port 9100. A datagram to 9100: one
# graph rooted at netif_receive_skb_core with the core, the tap's
# packet_rcv and tc's tcf_classify, no IP receive, freed with tc's drop
# reason. A datagram to 9000: one graph with the tap, tc, IP receive and
# udp_rcv, delivered to the socket. Where rx starts at ip_rcv()
# (RX_FROM_IP=1), tc's drop comes before it: no graph of the datagram to
# 9100, and the other's is rooted at IP receive.
core_case() {
	f=$1
	set -- $(addrs direct $f)
	S=$1 D=$2
	tp=ip; [ $f = 6 ] && tp=ipv6
	name="core udp/ipv$f"
	if ! ip netns exec b tc qdisc add dev veth-ba clsact 2>/dev/null ||
	   ! ip netns exec b tc filter add dev veth-ba ingress protocol $tp flower \
		ip_proto udp dst_port 9100 action drop 2>/dev/null; then
		fail "$name: tc clsact and a flower filter in b" "$(ip netns exec b tc filter add dev veth-ba ingress protocol $tp flower ip_proto udp dst_port 9100 action drop 2>&1)"
		ip netns exec b tc qdisc del dev veth-ba clsact 2>/dev/null
		return
	fi
	rm -f $J/tapready
	ip netns exec b pfsend tap --dev veth-ba --count 100000 --timeout 30 \
		--ready $J/tapready > $J/tap.out 2>&1 &
	tapp=$!
	wait_for_file $J/tapready
	for port in 9100 9000; do
		jtrace_start
		jset "$name: port $port" --at rx --proto udp --saddr $S --daddr $D \
			--dport $port --netns /run/netns/b --count 1 || { trace_stop; continue; }
		lp=
		if [ $port = 9000 ]; then
			rm -f $J/ready
			six=; [ $f = 6 ] && six=-6
			ip netns exec b pfsend udp-listen $six --port 9000 --count 1 \
				--timeout 10 --ready $J/ready > $J/listen.out 2>&1 &
			lp=$!
			wait_for_file $J/ready
		fi
		jsend a udp $f $S $D $port 1
		[ -n "$lp" ] && wait $lp
		sleep 0.5
		jtrace_stop
		if [ "$RX_FROM_IP" = 1 ]; then
			core_case_from_ip "$port"
			continue
		fi
		g_expect_n "$name, port $port: one graph" . 1 || continue
		line=$(grep '^G ' $J/graphs | head -1)
		id=$(echo "$line" | sed -n 's/^G id=\([0-9]*\) .*/\1/p')
		case $line in
		*" stage=rx eroot=netif_receive_skb_core netns=$(netns_inode b) ifindex=$(ifindex b veth-ba) "*" root=netif_receive_skb_core "*)
			ok "$name, port $port: rooted at netif_receive_skb_core, b's veth-ba" ;;
		*) fail "$name, port $port: rooted at netif_receive_skb_core" "$(echo "$line" | cut -c1-200)" ;;
		esac
		# 5.10's ingress classifier is tcf_classify_ingress().
		for fns in packet_rcv tcf_classify,tcf_classify_ingress; do
			found=
			for fn in $(echo $fns | tr , ' '); do
				g_has_func "$line" $fn && found=$fn
			done
			if [ -n "$found" ]; then
				ok "$name, port $port: $found inside"
			else
				fail "$name, port $port: $fns inside" "$(echo "$line" | cut -c1-600)"
			fi
		done
		case $line in
		*",__netif_receive_skb_core"*) ok "$name, port $port: __netif_receive_skb_core inside" ;;
		*) fail "$name, port $port: __netif_receive_skb_core inside" ;;
		esac
		fr=$(first_free "${id:-none}")
		if [ $port = 9100 ]; then
			if g_has_func "$line" "$(ip_root $f)"; then
				fail "$name, port $port: no IP receive (tc dropped it)"
			else
				ok "$name, port $port: no IP receive (tc dropped it)"
			fi
			case $fr in
			TC_*|UNKNOWN*) ok "$name, port $port: pktfilt_free reason=${fr%% *} (func ${fr#* })" ;;
			*) fail "$name, port $port: pktfilt_free with tc's drop reason" "first free of id ${id:-none}: '$fr'" ;;
			esac
		else
			for fn in "$(ip_root $f)" "$(l4_of udp $f)"; do
				if g_has_func "$line" $fn; then
					ok "$name, port $port: $fn inside"
				else
					fail "$name, port $port: $fn inside"
				fi
			done
			if grep -q 'received 1' $J/listen.out; then
				ok "$name, port $port: delivered to the socket"
			else
				fail "$name, port $port: delivered to the socket" "$(cat $J/listen.out)"
			fi
		fi
	done
	kill $tapp 2>/dev/null
	wait $tapp 2>/dev/null
	ip netns exec b tc qdisc del dev veth-ba clsact
}

# core_case_from_ip PORT: core_case's checks where rx starts at ip_rcv().
core_case_from_ip() {
	if [ "$1" = 9100 ]; then
		g_expect_n "$name, port $1: no graph (tc dropped it before IP receive)" . 0
		return
	fi
	g_expect_n "$name, port $1: one graph rooted at $(ip_root $f), b's veth-ba" \
		" stage=rx eroot=$(ip_root $f) netns=$(netns_inode b) ifindex=$(ifindex b veth-ba) .* root=$(ip_root $f) " 1
	line=$(grep '^G ' $J/graphs | head -1)
	if g_has_func "$line" "$(l4_of udp $f)"; then
		ok "$name, port $1: $(l4_of udp $f) inside"
	else
		fail "$name, port $1: $(l4_of udp $f) inside"
	fi
	if grep -q 'received 1' $J/listen.out; then
		ok "$name, port $1: delivered to the socket"
	else
		fail "$name, port $1: delivered to the socket" "$(cat $J/listen.out)"
	fi
}

core_cases() { core_case 4; core_case 6; }

# --- rx: forwarded -----------------------------------------------------------------

# fwd_case PROTO FAMILY: a packet r forwards: its graph in r (ip_forward or
# ip6_forward, and veth_xmit to b, inside), then b's receive of the same
# packet (the same skb, through veth) under the same id.
fwd_case() {
	p=$1 f=$2
	set -- $(addrs fwd $f)
	S=$1 D=$2
	name="fwd $(pname $p $f)/ipv$f"
	root=$(rx_root $f)
	ports="--dport 9000"
	[ $p = icmp ] && ports=
	jtrace_start
	jset "$name" --at rx --proto $(pname $p $f) --saddr $S --daddr $D $ports \
		--dev veth-ra --netns /run/netns/r --count 1 || { trace_stop; return; }
	jsend a $p $f $S $D 9000 1
	sleep 0.5
	jtrace_stop
	ids=$(g_ids | wc -l)
	expect_eq "$name: one packet id" "$ids" 1
	id=$(g_ids | head -1)
	line=$(grep "^G id=$id stage=rx eroot=$root netns=$(netns_inode r) ifindex=$(ifindex r veth-ra) " $J/graphs | head -1)
	if [ -n "$line" ] && g_has_func "$line" "$(fwd_of $f)" && g_has_func "$line" veth_xmit; then
		ok "$name: graph in r rooted at $root with $(fwd_of $f) and veth_xmit"
	else
		fail "$name: graph in r rooted at $root with $(fwd_of $f) and veth_xmit"
		g_show
	fi
	g_expect_n "$name: b's receive under the same id, a graph of its own" \
		"^G id=$id stage=rx eroot=$root netns=$(netns_inode b) ifindex=$(ifindex b veth-br) .* root=$root " 1
	g_expect_n "$name: no other graph" . 2
}

fwd_cases() {
	for p in udp tcp icmp; do
		for f in 4 6; do
			fwd_case $p $f
		done
	done
}

# --- following through NAT ------------------------------------------------------------

# r rewrites the destination in its prerouting (DNAT: 10.10.2.99 ->
# 10.10.2.2, fd10:2::99 -> fd10:2::2). The filter names the address a sent
# to, which b never sees: b's receive must still be traced under the
# packet's id (followed: the fingerprint leaves out what NAT changes).
nat_setup() {
	[ -n "${NAT_DONE:-}" ] && return 0
	modprobe nft_chain_nat 2>/dev/null
	modprobe nft_nat 2>/dev/null
	ip netns exec r nft -f - > $J/nat.err 2>&1 <<-EOF || return 1
	table ip jtnat {
		chain pre {
			type nat hook prerouting priority -100; policy accept;
			ip daddr 10.10.2.99 dnat to 10.10.2.2
		}
	}
	table ip6 jtnat {
		chain pre {
			type nat hook prerouting priority -100; policy accept;
			ip6 daddr fd10:2::99 dnat to fd10:2::2
		}
	}
	EOF
	NAT_DONE=1
}

nat_case() {
	p=$1 f=$2
	if [ $f = 4 ]; then
		S=10.10.1.1 V=10.10.2.99
	else
		S=fd10:1::1 V=fd10:2::99
	fi
	name="nat $p/ipv$f"
	root=$(rx_root $f)
	jtrace_start
	jset "$name" --at rx --proto $p --daddr $V --dport 9000 --count 1 ||
		{ trace_stop; return; }
	jsend a $p $f $S $V 9000 1
	sleep 0.5
	jtrace_stop
	expect_eq "$name: one packet id" "$(g_ids | wc -l)" 1
	id=$(g_ids | head -1)
	line=$(grep "^G id=$id stage=rx eroot=$root netns=$(netns_inode r) ifindex=$(ifindex r veth-ra) " $J/graphs | head -1)
	if [ -n "$line" ] && g_has_func "$line" nf_nat_manip_pkt && g_has_func "$line" "$(fwd_of $f)"; then
		ok "$name: graph in r with the rewrite (nf_nat_manip_pkt) and $(fwd_of $f)"
	else
		fail "$name: graph in r with the rewrite (nf_nat_manip_pkt) and $(fwd_of $f)"
		g_show
	fi
	g_expect_n "$name: b's receive of the rewritten packet under the same id" \
		"^G id=$id stage=rx eroot=$root netns=$(netns_inode b) ifindex=$(ifindex b veth-br) .* root=$root " 1
	g_expect_n "$name: no other graph" . 2
}

nat_cases() {
	if ! nat_setup; then
		fail "nat: DNAT rules in r" "$(head -c 300 $J/nat.err)"
		return
	fi
	nat_case udp 4
	nat_case tcp 4
	nat_case udp 6
}

# --- near misses: every predicate but one, per stage -------------------------------------

# --dev is the input device at rx and the output device at tx. b holds
# 10.10.2.2 on veth-br (reached through r) and takes it on veth-ba too (a's
# direct link, with a host route in a): the same datagram, another device.
# Misses first (another port, protocol, device, namespace), then the one
# packet that matches: exactly its graph.
direct_route() {
	if [ "$1" = on ]; then
		ip -n a neigh replace 10.10.2.2 lladdr "$(jt_mac b veth-ba)" dev veth-ab nud permanent &&
		ip -n a route add 10.10.2.2/32 dev veth-ab
	else
		ip -n a route del 10.10.2.2/32 dev veth-ab
		ip -n a neigh del 10.10.2.2 dev veth-ab
	fi 2>/dev/null
}

nearmiss_case() {
	st=$1
	name="near misses at $st"
	if [ $st = rx ]; then
		ns=b dev=veth-ba
	else
		ns=a dev=veth-ab
	fi
	root=$(${st}_root 4)
	jtrace_start
	jset "$name" --at $st --proto udp --saddr 10.10.1.1 --daddr 10.10.2.2 \
		--dport 9000 --dev $dev --netns /run/netns/$ns --count 1 ||
		{ trace_stop; return; }
	# Through r: the right tuple on the wrong device (veth-br, veth-ar).
	jsend a udp 4 10.10.1.1 10.10.2.2 9000 2
	direct_route on
	jsend a udp 4 10.10.1.1 10.10.2.2 9001 2
	jsend a tcp 4 10.10.1.1 10.10.2.2 9000 2
	if [ $st = rx ]; then
		# The same as the hit, but from b to a: another namespace.
		jsend b udp 4 10.10.2.2 10.10.1.1 9000 2
	fi
	sleep 0.3
	miss=$(pktfilt show | sed -n 's/^remaining: *//p')
	jsend a udp 4 10.10.1.1 10.10.2.2 9000 1
	sleep 0.5
	direct_route off
	jtrace_stop
	expect_eq "$name: the misses left the count alone" "$miss" 1
	g_expect_n "$name: one graph, the hit's, in $ns on $dev" \
		"^G id=[0-9]* stage=$st eroot=$root netns=$(netns_inode $ns) ifindex=$(ifindex $ns $dev) .* root=$root " 1
	g_expect_n "$name: no other graph" . 1
}

nearmiss_cases() { nearmiss_case rx; nearmiss_case tx; }

# --- rx: dropped by nftables, and for want of a socket ----------------------------

# drop_case WHERE PROTO FAMILY: WHERE fw (r's forward chain) or in (b's
# input chain) drops the packet: its graph in r (b) has nft_do_chain, and
# its pktfilt_free says NETFILTER_DROP.
drop_case() {
	where=$1 p=$2 f=$3
	if [ $where = fw ]; then
		set -- $(addrs fwd $f)
		ns=r dev=veth-ra port=7777 icmpid=4242
	else
		set -- $(addrs direct $f)
		ns=b dev=veth-ba port=7778 icmpid=4343
	fi
	S=$1 D=$2
	name="drop $where $(pname $p $f)/ipv$f"
	root=$(rx_root $f)
	ports="--dport $port"
	[ $p = icmp ] && ports=
	jtrace_start
	d0=$(nft_drops $ns)
	jset "$name" --at rx --proto $(pname $p $f) --saddr $S --daddr $D $ports \
		--dev $dev --netns /run/netns/$ns --count 1 || { trace_stop; return; }
	jsend a $p $f $S $D $port 1 --id $icmpid
	sleep 0.5
	jtrace_stop
	# TCP: maybe the SYN's retransmission too (1 s).
	dr=$(($(nft_drops $ns) - d0))
	if [ "$dr" -ge 1 ]; then ok "$name: the rule dropped it"; else fail "$name: the rule dropped it" "$dr drops"; fi
	g_expect_n "$name: one graph" . 1
	line=$(grep '^G ' $J/graphs | head -1)
	id=$(echo "$line" | sed -n 's/^G id=\([0-9]*\) .*/\1/p')
	case $line in
	*" stage=rx eroot=$root netns=$(netns_inode $ns) "*" root=$root "*)
		ok "$name: graph in $ns rooted at $root" ;;
	*) fail "$name: graph in $ns rooted at $root" "$(echo "$line" | cut -c1-200)" ;;
	esac
	if g_has_func "$line" nft_do_chain; then ok "$name: nft_do_chain inside"; else fail "$name: nft_do_chain inside"; fi
	fr=$(first_free "${id:-none}")
	case $fr in
	"$(drop_reason NETFILTER_DROP) "*) ok "$name: pktfilt_free id=$id reason=$(drop_reason NETFILTER_DROP)" ;;
	*) fail "$name: pktfilt_free reason=$(drop_reason NETFILTER_DROP)" "first free of id ${id:-none}: '$fr'"
	   grep '^FREE' $J/graphs | head -5 ;;
	esac
	# 6.12's graph has the free under nft_do_chain (the verdict's).
	free_func "$name" "$fr" 'nf_hook_slow|nft_do_chain|nft_do_chain_inet'
}

# b's input: three of the six unless JOURNEY_FULL=1 (make soak).
drop_cases() {
	for where in fw in; do
		for p in udp tcp icmp; do
			for f in 4 6; do
				[ $where = in ] && [ "${JOURNEY_FULL:-0}" != 1 ] &&
					case $p$f in udp6|tcp4|icmp4) continue ;; esac
				drop_case $where $p $f
			done
		done
	done
}

# --- nftables verdicts inside the graph (module/nft.c) ------------------------------

# nftv_lines ID: the pktfilt_nft events of packet ID in /tmp/trace.txt,
# "family=F table=T chain=C handle=H type=Y verdict=V target=G" each.
nftv_lines() {
	sed -n "s/.*pktfilt_nft: id=$1 \(.*[^ ]\) *\*\/.*/\1/p" /tmp/trace.txt
}

# nft_handle NS FAMILY TABLE CHAIN REGEX: the handle of the chain's rule
# whose text (nft -a) matches REGEX.
nft_handle() {
	ip netns exec "$1" nft -a list chain "$2" "$3" "$4" |
		sed -n "/$5/s/.*# handle \([0-9]*\)$/\1/p" | head -1
}

# nftv_expect NAME ID WANT: packet ID has an nft event with WANT in it.
nftv_expect() {
	if nftv_lines "$2" | grep -q -F -e "$3"; then
		ok "$1: $3"
	else
		fail "$1: $3" "its nft events: $(nftv_lines "$2" | tr '\n' ';' | cut -c1-400)"
	fi
}

# nftv_trace NAME SETARGS -- SEND...: one traced packet; its id in $id.
nftv_trace() {
	_n=$1
	shift
	_set=
	while [ "$1" != -- ]; do _set="$_set $1"; shift; done
	shift
	jtrace_start
	jset "$_n" $_set --count 1 || { trace_stop; id=; return 1; }
	"$@"
	sleep 0.5
	jtrace_stop
	pktfilt clear 2>/dev/null
	id=$(g_ids | head -1)
	[ -n "$id" ] || { fail "$_n: traced" "no graph"; g_show; return 1; }
}

# A chain of b's that jumps (UDP 7790-7791), the user's own nftrace on UDP
# 7792 (the positive control of nft monitor trace), in table pfnft.
nftv_setup() {
	ip netns exec b nft -f - <<-EOF
	table inet pfnft {
		chain in {
			type filter hook input priority -10; policy accept;
			udp dport 7790-7791 jump sub
			udp dport 7792 meta nftrace set 1
		}
		chain sub {
			udp dport 7791 counter drop
			counter return
		}
	}
	EOF
}

nftv_cases() {
	name="nft verdicts"
	if ! nftv_setup; then
		fail "$name: table pfnft in b"
		return
	fi
	monitor=0
	if ip netns exec b sh -c 'nft monitor trace > /tmp/nftmon.txt 2>&1 & echo $! > /tmp/nftmon.pid'; then
		monitor=1
		sleep 0.3
	fi
	set -- $(addrs direct 4)
	S=$1 D=$2
	ino=$(netns_inode b)

	# rx: dropped by b's input rule.
	h=$(nft_handle b inet jt in 'udp dport 7778 counter')
	if nftv_trace "$name rx drop" --at rx --proto udp --dport 7778 --netns /run/netns/b -- \
		jsend a udp 4 $S $D 7778 1; then
		nftv_expect "nft rx drop" "$id" "family=inet table=jt chain=in handle=$h type=rule verdict=drop"
		nftv_expect "nft rx drop: pfnft's policy before it" "$id" "family=inet table=pfnft chain=in handle=0 type=policy verdict=accept"
		rep=$(pktfilt report /tmp/trace.txt 2>/dev/null)
		case $rep in
		*"# dropped: "*" by inet jt in handle $h"*) ok "nft rx drop: report's header names the rule" ;;
		*) fail "nft rx drop: report's header names the rule" "$(echo "$rep" | grep '^#' | head -3 | tr '\n' ';')" ;;
		esac
		case $rep in
		*"/* nft inet jt in handle $h: drop"*) ok "nft rx drop: report's text has the verdict in the graph" ;;
		*) fail "nft rx drop: report's text has the verdict in the graph" "$(echo "$rep" | grep nft | head -3 | tr '\n' ';')" ;;
		esac
		# Nothing of pktfilt's own (its kprobe handler, the event) is
		# recorded under nft_trace_notify(): a leaf, or an event only.
		# Before 5.16 the function runs (module/nft.c): its own calls
		# are there, none of pktfilt's module.
		_kv=$(uname -r | awk -F. '{ print $1 * 1000 + $2 }')
		_own='\\(\\)'
		[ "$_kv" -lt 5016 ] && _own='\\[pktfilt\\]'
		own=$(awk -v own="$_own" '/nft_trace_notify[^(]*\(\) \{/ { inn = 1; next }
			inn && /\|[ ]*}/ { inn = 0; next }
			inn && $0 ~ own { print }' /tmp/trace.txt | head -3)
		expect_eq "nft rx drop: nothing of pktfilt's under nft_trace_notify" "$own" ""
		if echo "$rep" | grep -q -E 'nft_trace_(init|notify)|__nft_trace_packet'; then
			fail "nft rx drop: nftables' tracing functions left out of the graph" "$(echo "$rep" | grep -E 'nft_trace' | head -3 | tr '\n' ';')"
		else
			ok "nft rx drop: nftables' tracing functions left out of the graph"
		fi
		js=$(pktfilt report --format json /tmp/trace.txt 2>/dev/null)
		case $js in
		*'"nft":[{'*'"table":"jt","chain":"in","handle":'$h',"type":"rule","verdict":"drop"'*) ok "nft rx drop: JSON nft" ;;
		*) fail "nft rx drop: JSON nft" "$(echo "$js" | grep -o '"nft":.\{0,300\}' | head -1)" ;;
		esac
	fi

	# rx: accepted by the policies, then no socket (port 7779).
	if nftv_trace "$name rx policy" --at rx --proto udp --dport 7779 --netns /run/netns/b -- \
		jsend a udp 4 $S $D 7779 1; then
		nftv_expect "nft rx policy accept" "$id" "family=inet table=jt chain=in handle=0 type=policy verdict=accept"
	fi

	# rx: a jump to sub, whose rule drops (7791) or which returns (7790).
	h=$(nft_handle b inet pfnft in 'jump sub')
	hs=$(nft_handle b inet pfnft sub 'udp dport 7791')
	if nftv_trace "$name rx jump" --at rx --proto udp --dport 7791 --netns /run/netns/b -- \
		jsend a udp 4 $S $D 7791 1; then
		nftv_expect "nft rx jump" "$id" "family=inet table=pfnft chain=in handle=$h type=rule verdict=jump target=sub"
		nftv_expect "nft rx jump: the target's rule" "$id" "family=inet table=pfnft chain=sub handle=$hs type=rule verdict=drop"
	fi
	if nftv_trace "$name rx jump return" --at rx --proto udp --dport 7790 --netns /run/netns/b -- \
		jsend a udp 4 $S $D 7790 1; then
		# 6.12 and later say type=rule, 6.1 and 5.10 type=return.
		h=$(nft_handle b inet pfnft sub 'return')
		if nftv_lines "$id" | grep -q -E "family=inet table=pfnft chain=sub handle=$h type=(rule|return) verdict=return "; then
			ok "nft rx jump return: sub's rule $h returns"
		else
			fail "nft rx jump return: sub's rule $h returns" "its nft events: $(nftv_lines "$id" | tr '\n' ';' | cut -c1-400)"
		fi
		nftv_expect "nft rx jump return: back in" "$id" "family=inet table=pfnft chain=in handle=0 type=policy verdict=accept"
	fi

	# tx: b's output chain, its policy.
	if nftv_trace "$name tx" --at tx --proto udp --dport 7778 --netns /run/netns/b -- \
		jsend b udp 4 $D $S 7778 1; then
		nftv_expect "nft tx policy accept" "$id" "family=inet table=jt chain=out handle=0 type=policy verdict=accept"
	fi

	# l4: nf_tables ran before the handler: no verdict in its graph.
	if nftv_trace "$name l4" --at l4 --proto udp --dport 7779 --netns /run/netns/b -- \
		jsend a udp 4 $S $D 7779 1; then
		expect_eq "nft l4: no verdict inside udp_rcv's graph" "$(nftv_lines "$id" | wc -l)" 0
	fi

	# NAT: r's DNAT chain (nat_setup) on a forwarded packet.
	if nat_setup && nftv_trace "$name nat" --at rx --proto udp --daddr 10.10.2.99 --dport 9000 -- \
		jsend a udp 4 10.10.1.1 10.10.2.99 9000 1; then
		if nftv_lines "$id" | grep -q 'type=rule verdict=accept' &&
			nftv_lines "$id" | grep -q 'chain=fw handle=0 type=policy verdict=accept'; then
			ok "nft nat: the nat chain's rule and r's forward policy"
		else
			fail "nft nat: the nat chain's rule and r's forward policy" "$(nftv_lines "$id" | tr '\n' ';' | cut -c1-400)"
		fi
	fi

	# Another skb inside the traced packet's graph, marked by the user's
	# own rule: b's port unreachable for UDP 7794 (no socket), sent from
	# udp_rcv() inside the graph, gets nftrace in a chain of pfnft's
	# output. It is not the traced packet: no event of its chains under
	# the traced packet's id, and nft monitor trace has its messages.
	reply=0
	if ip netns exec b nft -f - <<-EOF
	table inet pfnft {
		chain out {
			type filter hook output priority -10; policy accept;
			icmp type destination-unreachable meta nftrace set 1
		}
	}
	EOF
	then
		if nftv_trace "$name reply" --at rx --proto udp --dport 7794 --netns /run/netns/b -- \
			jsend a udp 4 $S $D 7794 1; then
			reply=1
			nftv_expect "nft reply: the traced packet's own verdicts" "$id" "family=inet table=jt chain=in handle=0 type=policy verdict=accept"
			expect_eq "nft reply: none of the reply's (output chains) under the traced packet's id" \
				"$(nftv_lines "$id" | grep 'chain=out' | tr '\n' ';')" ""
		fi
		ip netns exec b nft delete chain inet pfnft out
	else
		fail "$name: chain pfnft out in b"
	fi

	# Untraced packets: no events; and no message for pktfilt's packets.
	jtrace_start
	jset "$name untraced" --at rx --proto udp --dport 7778 --netns /run/netns/b --count 1 &&
		jsend a udp 4 $S $D 7777 3 && jsend a udp 4 $S $D 7792 1 &&
		jsend a udp 4 $S $D 7778 1
	sleep 0.5
	jtrace_stop
	pktfilt clear 2>/dev/null
	id=$(g_ids | head -1)
	expect_eq "nft untraced: events of the traced packet only" \
		"$(grep 'pktfilt_nft:' /tmp/trace.txt | grep -v -c "pktfilt_nft: id=${id:-none} ")" 0
	if [ $monitor = 1 ]; then
		kill "$(cat /tmp/nftmon.pid)" 2>/dev/null
		sleep 0.2
		if grep -q 'dport 7792' /tmp/nftmon.txt; then
			ok "nft monitor trace: the user's own nftrace is sent"
		else
			fail "nft monitor trace: the user's own nftrace is sent" "$(head -c 300 /tmp/nftmon.txt)"
		fi
		if [ $reply = 0 ]; then
			:
		elif grep -q 'inet pfnft out' /tmp/nftmon.txt; then
			ok "nft monitor trace: the user's own nftrace on a reply inside a traced packet's graph is sent"
		else
			fail "nft monitor trace: the user's own nftrace on a reply inside a traced packet's graph is sent" "$(head -c 300 /tmp/nftmon.txt)"
		fi
		# Before 5.16 the graph would record the skipped call as
		# pktfilt's: nft_trace_notify() runs (module/nft.c).
		_kv=$(uname -r | awk -F. '{ print $1 * 1000 + $2 }')
		if [ "$_kv" -lt 5016 ]; then
			echo "# nft monitor trace: pktfilt's packets are sent too before 5.16 (docs/limits.md)"
		elif grep -q -E 'dport (7778|7779|779[014])' /tmp/nftmon.txt; then
			fail "nft monitor trace: nothing of pktfilt's packets" "$(grep -E 'dport 77' /tmp/nftmon.txt | head -3 | tr '\n' ';')"
		else
			ok "nft monitor trace: nothing of pktfilt's packets"
		fi
	else
		echo "# nft monitor trace: not run"
	fi
	ip netns exec b nft delete table inet pfnft
}

# --- ECMP: armed, untraced flows keep their next hop (module/nft.c) -------------

# While nftables' trace key is on, nf_tables' nft_trace_init() would store
# an l4 hash in every skb through a base chain (6.1 and later), which
# fib_multipath_hash() (policy 1) takes instead of its own: flows through
# e's prerouting chain would move between n1 and n2 as pktfilt arms and
# disarms. 64 UDP flows (source ports 5000-5063, to port 9999) and the
# traced packet's flow (6000 to 9998) go from s through e; n1 and n2 note
# which source ports reach them (journey-topo.sh, ecmp_setup).

ECMP_FLOWS=64

# ecmp_flush: n1's and n2's notes emptied.
ecmp_flush() {
	for _h in n1 n2; do
		ip netns exec $_h nft flush set ip ecmp seen || return 1
	done
}

# ecmp_send_flows, ecmp_send_traced: the untraced flows, the traced one.
ecmp_send_flows() {
	ip netns exec s pfsend udp -q --src 10.12.0.1 --dst 10.12.9.9 --dport 9999 \
		--sport 5000 --flows $ECMP_FLOWS
}
ecmp_send_traced() {
	ip netns exec s pfsend udp -q --src 10.12.0.1 --dst 10.12.9.9 --dport 9998 \
		--sport 6000
}

# ecmp_map: "PORT=HOP" for each source port n1 and n2 noted, by port.
ecmp_map() {
	sleep 0.2
	for _h in n1 n2; do
		ip netns exec $_h nft -n list set ip ecmp seen |
			awk -v h=$_h '/elements/ { e = 1 }
				e { for (i = 1; i <= NF; i++) { v = $i; gsub(/[^0-9]/, "", v)
					if (v != "") print v "=" h } }
				e && /}/ { e = 0 }'
	done | sort -n
}

# ecmp_flows MAP: MAP without the traced flow's port; ecmp_traced MAP: its hop.
ecmp_flows() { echo "$1" | grep -v '^6000='; }
ecmp_traced() { echo "$1" | sed -n 's/^6000=//p'; }

# ecmp_wait_claimed SECONDS: until the armed filter claimed one of its two
# packets (pktfilt show: remaining 1; a lazy filter: its scope patched).
ecmp_wait_claimed() {
	_i=0
	while [ $_i -lt $(($1 * 10)) ]; do
		_sh=$(pktfilt show)
		case $_sh in
		*"lazy:        waiting"*|*"lazy:        holding"*) ;;
		*"remaining:   1"*) return 0 ;;
		esac
		sleep 0.1
		_i=$((_i + 1))
	done
	echo "$_sh" | tr '\n' ';'
	return 1
}

# ecmp_wait_armed SECONDS: until a filter is armed.
ecmp_wait_armed() {
	_i=0
	while [ $_i -lt $(($1 * 10)) ]; do
		pktfilt show | grep -q '^state: *armed' && return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

# ecmp_compare NAME MAP: the untraced flows and the traced one went where
# they went unarmed ($ECMP_BASE).
ecmp_compare() {
	_moved=$(printf '%s\n%s\n' "$(ecmp_flows "$ECMP_BASE")" "$(ecmp_flows "$2")" |
		sort | uniq -u | sed 's/=.*//' | sort -un | wc -l)
	_n=$(ecmp_flows "$2" | wc -l)
	if [ "$_n" -eq $ECMP_FLOWS ] && [ "$_moved" -eq 0 ]; then
		ok "ecmp $1: the $ECMP_FLOWS untraced flows kept their next hops"
	else
		fail "ecmp $1: the $ECMP_FLOWS untraced flows kept their next hops" \
			"$_n noted, $_moved moved: $(ecmp_flows "$2" | tr '\n' ' ' | cut -c1-300)"
	fi
	expect_eq "ecmp $1: the traced flow kept its next hop" \
		"$(ecmp_traced "$2")" "$(ecmp_traced "$ECMP_BASE")"
}

# ecmp_round NAME: the traced flow's packet, once the filter claimed it
# the untraced flows, then the map compared.
ecmp_round() {
	ecmp_flush
	ecmp_send_traced
	if ! _w=$(ecmp_wait_claimed 20); then
		fail "ecmp $1: the traced packet claimed" "$_w"
	fi
	ecmp_send_flows
	ecmp_compare "$1" "$(ecmp_map)"
}

# ecmp_trace NAME ARGS...: pktfilt trace ARGS in the background (its pid in
# $ecmp_pid), armed.
ecmp_trace() {
	_en=$1
	shift
	pktfilt trace -q "$@" --at rx --proto udp --dport 9998 --netns /run/netns/e \
		--count 2 --functions ip_forward -o $J/ecmp-trace.out 2> $J/ecmp-trace.err &
	ecmp_pid=$!
	if ! ecmp_wait_armed 60; then
		fail "ecmp $_en: pktfilt trace armed" "$(head -c 300 $J/ecmp-trace.err)"
		return 1
	fi
}

# ecmp_trace_end: the background trace stopped (SIGTERM: what it traced,
# one packet of two, then tracefs restored).
ecmp_trace_end() {
	kill -TERM "$ecmp_pid" 2>/dev/null
	wait "$ecmp_pid" 2>/dev/null
	ecmp_wait_idle=0
	while [ $ecmp_wait_idle -lt 50 ] && pktfilt show | grep -q '^state: *armed'; do
		sleep 0.1
		ecmp_wait_idle=$((ecmp_wait_idle + 1))
	done
}

ecmp_cases() {
	if ! ecmp_setup; then
		fail "ecmp: topology (ecmp_setup)"
		return
	fi
	# On two vCPUs nft_key_hold keeps the key on from boot: every skb
	# gets its hash from nf_tables with or without pktfilt.
	[ "$(nproc)" -gt 1 ] &&
		echo "# ecmp: nftables' trace key held (two vCPUs): this case cannot fail here"
	# Unarmed, twice: the map is the kernel's own, and stable (no
	# socket gives its skbs a hash: pfsend's are not connected).
	ecmp_flush && ecmp_send_traced && ecmp_send_flows
	ECMP_BASE=$(ecmp_map)
	ecmp_flush && ecmp_send_traced && ecmp_send_flows
	_again=$(ecmp_map)
	expect_eq "ecmp unarmed: $((ECMP_FLOWS + 1)) flows noted" "$(echo "$ECMP_BASE" | grep -c =)" $((ECMP_FLOWS + 1))
	expect_eq "ecmp unarmed: the map is the same twice" "$_again" "$ECMP_BASE"
	# Else the case could not fail.
	if echo "$ECMP_BASE" | grep -q '=n1' && echo "$ECMP_BASE" | grep -q '=n2'; then
		ok "ecmp unarmed: both next hops carry flows"
	else
		fail "ecmp unarmed: both next hops carry flows" "$(echo "$ECMP_BASE" | tr '\n' ' ' | cut -c1-300)"
	fi

	# pktfilt set: eager, the key on from the arming.
	if jset "ecmp set" --at rx --proto udp --dport 9998 --netns /run/netns/e --count 2; then
		ecmp_round "pktfilt set"
		pktfilt clear
	fi

	# pktfilt trace, from the nop tracer (a trace then patches only its
	# scope); function_graph back for the cases after this one.
	echo 0 > $T/tracing_on
	echo nop > $T/current_tracer
	if ecmp_trace "trace --eager" --eager; then
		ecmp_round "pktfilt trace --eager"
		ecmp_trace_end
	fi
	# Lazy: the key on once the first packet came (READY).
	if ecmp_trace "trace (lazy)"; then
		ecmp_round "pktfilt trace (lazy, after its first packet)"
		ecmp_trace_end
	fi
	echo function_graph > $T/current_tracer

	# Disarmed.
	ecmp_flush && ecmp_send_traced && ecmp_send_flows
	ecmp_compare "disarmed" "$(ecmp_map)"
	for _ns in s e n1 n2; do ip netns del $_ns 2>/dev/null; done
}

# free_func NAME "REASON FUNC STACK" WANT: the function that dropped the
# packet is WANT (an extended regex such as "f|g"): the free's func is
# WANT+0x../0x.., or it has none (a free inside a graph: the kernel's
# address is function_graph's trampoline, which the event leaves out,
# never says) and WANT is among the 3 innermost functions open in the
# graph at the free (the freeing function, kfree_skb_reason or
# sk_skb_reason_drop, and its callers).
free_func() {
	set -- "$1" "$(echo "$2" | cut -d' ' -f2)" "$(echo "$2" | cut -d' ' -f3)" "$3"
	if echo "$2" | grep -q -E "^($4)\+0x[0-9a-f]+/0x[0-9a-f]+$"; then
		ok "$1: pktfilt_free func=$2"
	elif [ "$2" = none ] &&
		echo "$3" | tr '>' '\n' | tail -3 | grep -q -x -E "$4"; then
		ok "$1: pktfilt_free inside the graph without func=, under $(echo "$3" | tr '>' '\n' | tail -3 | tr '\n' '>')"
	else
		fail "$1: pktfilt_free by $4" "func=$2, open in the graph: $(echo "$3" | tr '>' '\n' | tail -4 | tr '\n' '>')"
	fi
}

# nosock_case PROTO FAMILY: UDP or TCP to a port nobody listens on:
# NO_SOCKET, freed by the L4 handler (TCP after its reset).
nosock_case() {
	p=$1 f=$2
	set -- $(addrs direct $f)
	S=$1 D=$2
	name="no socket $p/ipv$f"
	case $p/$f in
	udp/4) by='__udp4_lib_rcv|udp_rcv' ;;
	udp/6) by='__udp6_lib_rcv|udpv6_rcv' ;;
	tcp/4) by='tcp_v4_rcv' ;;
	tcp/6) by='tcp_v6_rcv' ;;
	esac
	jtrace_start
	jset "$name" --at rx --proto $p --saddr $S --daddr $D --dport 9999 \
		--netns /run/netns/b --count 1 || { trace_stop; return; }
	jsend a $p $f $S $D 9999 1
	sleep 0.5
	jtrace_stop
	g_expect_n "$name: one graph rooted at $(rx_root $f)" " root=$(rx_root $f) " 1
	line=$(grep '^G ' $J/graphs | head -1)
	if g_has_func "$line" "$(l4_of $p $f)"; then ok "$name: $(l4_of $p $f) inside"; else fail "$name: $(l4_of $p $f) inside"; fi
	id=$(echo "$line" | sed -n 's/^G id=\([0-9]*\) .*/\1/p')
	fr=$(first_free "${id:-none}")
	case $fr in
	"$(drop_reason NO_SOCKET) "*) ok "$name: pktfilt_free id=$id reason=$(drop_reason NO_SOCKET)" ;;
	*) fail "$name: pktfilt_free reason=$(drop_reason NO_SOCKET)" "first free of id ${id:-none}: '$fr'"
	   grep '^FREE' $J/graphs | head -5 ;;
	esac
	free_func "$name" "$fr" "$by"
}

nosock_cases() {
	for p in udp tcp; do
		nosock_case $p 4
		nosock_case $p 6
	done
}

# --- tx ----------------------------------------------------------------------------

# tx_case PATH PROTO FAMILY: a locally generated matching packet: one tx
# graph rooted at nf_hook_slow (LOCAL_OUT's hooks after pktfilt's, then the
# output) down to the driver's transmit
# (veth_xmit; virtio-net's start_xmit); another port is not traced.
tx_case() {
	path=$1 p=$2 f=$3
	set -- $(addrs $path $f)
	S=$1 D=$2
	if [ $path = virtio ]; then snd=x dev=v1 drv=start_xmit; else snd=a dev=veth-ab drv=veth_xmit; fi
	name="tx $path $(pname $p $f)/ipv$f"
	root=$(tx_root $f)
	ports="--sport 4000 --dport 9000"
	[ $p = icmp ] && ports=
	jtrace_start
	jset "$name" --at tx --proto $(pname $p $f) --saddr $S --daddr $D $ports \
		--dev $dev --netns /run/netns/$snd --count 1 || { trace_stop; return; }
	jsend $snd $(other_proto $p) $f $S $D 9000 3
	[ $p != icmp ] && jsend $snd $p $f $S $D 9001 3
	jsend $snd $p $f $S $D 9000 1
	sleep 0.5
	jtrace_stop
	g_expect_n "$name: one graph (near misses untraced)" . 1
	line=$(grep '^G ' $J/graphs | head -1)
	case $line in
	*" stage=tx eroot=$root netns=$(netns_inode $snd) ifindex=$(ifindex $snd $dev) proto=$(pname $p $f) root=$root "*)
		ok "$name: event stage=tx root=$root, $snd's $dev, graph rooted at $root" ;;
	*) fail "$name: event and root" "$(echo "$line" | cut -c1-200)" ;;
	esac
	if g_has_func "$line" $drv; then ok "$name: $drv inside"; else fail "$name: $drv inside"; fi
}

# --- tx goes on from its hook (issue 31) ----------------------------------------------

# ip_out_requests NS: IPv4's OutRequests in NS.
ip_out_requests() {
	ip netns exec "$1" awk '/^Ip:/ { if (!k) { for (i = 1; i <= NF; i++) if ($i == "OutRequests") k = i; next } print $k }' /proc/net/snmp
}

# nft_packets NS TABLE CHAIN: the chain's counter.
nft_packets() {
	ip netns exec "$1" nft list chain inet "$2" "$3" |
		awk '{ for (i = 1; i < NF; i++) if ($i == "packets") print $(i + 1) }'
}

# txonce_case FAMILY: tx took the packet at LOCAL_OUT and sent it again from
# ip_local_out(), so a LOCAL_OUT hook registered before pktfilt's at its
# priority ran twice, and from 6.3 on IPv4's OutRequests counted it twice.
# It goes on from the hooks after pktfilt's and the okfn it was given:
# three traced packets pass a chain before pktfilt's hook (its priority,
# INT_MIN, created after arming) and one after (priority 0) three times
# each; the graphs hold the later chain and the output, not the earlier.
txonce_case() {
	f=$1
	set -- $(addrs direct $f)
	S=$1 D=$2
	name="tx once ipv$f"
	pktfilt clear 2>/dev/null
	jtrace_start
	jset "$name" --at tx --proto udp --saddr $S --daddr $D --dport 9000 --count 3 ||
		{ trace_stop; return; }
	# After arming: at one priority, the hook registered last runs first.
	ip netns exec a nft -f - <<-EOF || { fail "$name: nft table"; trace_stop; pktfilt clear; return; }
	table inet pf_txonce {
		chain early {
			type filter hook output priority -2147483648; policy accept;
			udp dport 9000 meta mark set 0 counter
		}
		chain late {
			type filter hook output priority 0; policy accept;
			udp dport 9000 counter
		}
	}
	EOF
	o0=$(ip_out_requests a)
	jsend a udp $f $S $D 9000 3
	sleep 0.5
	jtrace_stop
	o1=$(ip_out_requests a)
	expect_eq "$name: the chain before pktfilt's hook ran once per packet" \
		"$(nft_packets a pf_txonce early)" 3
	expect_eq "$name: the chain after it ran once per packet" \
		"$(nft_packets a pf_txonce late)" 3
	[ $f = 4 ] && expect_eq "$name: IPv4 OutRequests counted once per packet" \
		"$((o1 - o0))" 3
	g_expect_n "$name: three graphs rooted at nf_hook_slow in a" \
		" stage=tx eroot=nf_hook_slow netns=$(netns_inode a) .* root=nf_hook_slow " 3
	bad=
	for line in $(grep '^G ' $J/graphs | sed 's/.* funcs=//'); do
		for fn in nft_do_chain nft_counter_eval veth_xmit; do
			g_has_func "$line" $fn || bad="$bad no-$fn"
		done
		! g_has_func "$line" nft_meta_set_eval || bad="$bad nft_meta_set_eval"
	done
	expect_eq "$name: each graph holds the later chain and the output to veth_xmit, not the earlier chain" \
		"$bad" ""
	ip netns exec a nft delete table inet pf_txonce
}

# txheld_case: a packet held at tx by a lazy filter that is cleared before
# READY goes on untraced from the hook after pktfilt's: the module put
# the held packets back after removing its hook, so they ran the chain
# from its start (a chain before pktfilt's twice).
txheld_case() {
	set -- $(addrs direct 4)
	S=$1 D=$2
	name="tx held, then cleared"
	pktfilt clear 2>/dev/null
	jtrace_start
	jset "$name" --lazy --hold 30 --at tx --proto udp --saddr $S --daddr $D --dport 9000 --count 1 ||
		{ trace_stop; return; }
	ip netns exec a nft -f - <<-EOF || { fail "$name: nft table"; trace_stop; pktfilt clear; return; }
	table inet pf_txheld {
		chain early {
			type filter hook output priority -2147483648; policy accept;
			udp dport 9000 counter
		}
	}
	EOF
	rm -f $J/ready
	ip netns exec b pfsend udp-listen --port 9000 --count 1 --timeout 10 \
		--ready $J/ready > $J/listen.out 2>&1 &
	lp=$!
	wait_for_file $J/ready
	jsend a udp 4 $S $D 9000 1
	sleep 0.5
	case $(pktfilt show) in
	*"lazy:        holding"*) ok "$name: the packet is held" ;;
	*) fail "$name: the packet is held" "$(pktfilt show | grep lazy)" ;;
	esac
	pktfilt clear
	wait $lp
	jtrace_stop
	expect_eq "$name: it reaches b once cleared" "$(cat $J/listen.out)" "received 1"
	expect_eq "$name: the chain before pktfilt's hook ran once" \
		"$(nft_packets a pf_txheld early)" 1
	g_expect_n "$name: nothing traced" . 0
	ip netns exec a nft delete table inet pf_txheld
}

# srv6_case: SRv6 runs LOCAL_OUT on the forward path (seg6_input_core(),
# with net.netfilter.nf_hooks_lwtunnel=1: 5.15 on), with dst_input() to go
# on with. r encapsulates what a sends to fd10:9::/64 towards b
# (fd10:2::2); traced at tx in r, the packet must go on to ip6_forward()
# (the module that sent it again from ip6_local_out() skipped it: no hop
# limit, no FORWARD chain, and the packet labelled as r's own output).
srv6_case() {
	name="tx srv6 encapsulation in r"
	case $(uname -r) in
	5.1[0-4].*|5.[0-9].*)
		echo "# $name: no LOCAL_OUT hooks on SRv6's path before 5.15: skipped"
		return ;;
	esac
	modprobe nf_conntrack 2>/dev/null
	if ! ip netns exec r sysctl -qw net.netfilter.nf_hooks_lwtunnel=1 2>/dev/null &&
	   ! sysctl -qw net.netfilter.nf_hooks_lwtunnel=1; then
		fail "$name: net.netfilter.nf_hooks_lwtunnel=1"
		return
	fi
	ip -n r -6 route add fd10:9::/64 encap seg6 mode encap segs fd10:2::2 dev veth-rb ||
		{ fail "$name: seg6 route in r"; return; }
	jtrace_start
	if jset "$name" --at tx --netns /run/netns/r --daddr fd10:2::2 --count 1; then
		jsend a udp 6 fd10:1::1 fd10:9::1 9000 1
		sleep 0.5
	fi
	jtrace_stop
	g_expect_n "$name: one graph rooted at nf_hook_slow in r" \
		" stage=tx eroot=nf_hook_slow netns=$(netns_inode r) .* root=nf_hook_slow " 1
	line=$(grep '^G ' $J/graphs | head -1)
	if g_has_func "$line" ip6_forward; then
		ok "$name: the packet goes on to ip6_forward() (dst_input)"
	else
		fail "$name: the packet goes on to ip6_forward() (dst_input)" "$(echo "$line" | cut -c1-300)"
	fi
	ip -n r -6 route del fd10:9::/64
	ip netns exec r sysctl -qw net.netfilter.nf_hooks_lwtunnel=0 2>/dev/null ||
		sysctl -qw net.netfilter.nf_hooks_lwtunnel=0
}

# virtio-net: three of the six unless JOURNEY_FULL=1 (make soak).
tx_cases() {
	for path in direct virtio; do
		[ $path = virtio ] && [ "$HAVE_NICS" != 1 ] && continue
		for p in udp tcp icmp; do
			for f in 4 6; do
				[ $path = virtio ] && [ "${JOURNEY_FULL:-0}" != 1 ] &&
					case $p$f in udp4|tcp6|icmp4) continue ;; esac
				tx_case $path $p $f
			done
		done
	done
	txonce_case 4
	txonce_case 6
	txheld_case
	srv6_case
}

# --- tx,rx: one packet, one id -------------------------------------------------------

# txrx_case FAMILY: ping a -> b over veth-ab with --at tx,rx (the issue's
# example): a tx graph in a and b's receive, under one id. b's receive runs
# in the softirq that veth's transmit raised, when a's output enables
# bottom halves again, so it may be within a's graph (the spec: a
# stage entered while a graph is open on that CPU is part of that graph):
# either way is accepted, and said which.
txrx_case() {
	f=$1
	set -- $(addrs direct $f)
	S=$1 D=$2
	name="tx,rx ping ipv$f"
	six=; [ $f = 6 ] && six=-6
	jtrace_start
	jset "$name" --at tx,rx --proto $(pname icmp $f) --daddr $D --count 1 ||
		{ trace_stop; return; }
	ip netns exec a ping $six -c1 -W5 $D > $J/ping.out 2>&1 ||
		fail "$name: ping" "$(cat $J/ping.out)"
	sleep 0.5
	jtrace_stop
	expect_eq "$name: one packet id" "$(g_ids | wc -l)" 1
	id=$(g_ids | head -1)
	txl=$(grep "^G id=$id stage=tx eroot=$(tx_root $f) netns=$(netns_inode a) ifindex=$(ifindex a veth-ab) .* root=$(tx_root $f) " $J/graphs | head -1)
	if [ -n "$txl" ] && g_has_func "$txl" veth_xmit; then
		ok "$name: tx graph in a rooted at $(tx_root $f), veth_xmit inside"
	else
		fail "$name: tx graph in a rooted at $(tx_root $f), veth_xmit inside"
		g_show
	fi
	rxl=$(grep "^G id=$id stage=rx eroot=$(rx_root $f) netns=$(netns_inode b) ifindex=$(ifindex b veth-ba) .* root=$(rx_root $f) " $J/graphs | head -1)
	if [ -n "$rxl" ] && g_has_func "$rxl" "$(l4_of icmp $f)"; then
		ok "$name: b's receive under the same id: a graph of its own, rooted at $(rx_root $f)"
	elif [ -n "$txl" ] && g_has_func "$txl" "$(rx_root $f)" && g_has_func "$txl" "$(l4_of icmp $f)"; then
		ok "$name: b's receive under the same id: inside a's tx graph ($(rx_root $f), $(l4_of icmp $f))"
	else
		fail "$name: b's receive under the same id" "neither a graph of its own nor inside a's"
		g_show
	fi
	g_expect_n "$name: no graph under another id" "^G id=none" 0
}

txrx_cases() { txrx_case 4; txrx_case 6; }

# --- exact counts --------------------------------------------------------------------

# cpus: the guest's online CPUs, one per line (two in the two-vCPU boots,
# one in make check's smoke boot).
cpus() { seq 0 $(($(grep -c '^processor' /proc/cpuinfo) - 1)); }

# count_case STAGES N: UDP floods from a to b direct on every vCPU;
# --count N yields exactly N packet ids, each with a graph of each stage.
count_case() {
	stages=$1 n=$2
	name="--at $stages --count $n, floods on $(cpus | wc -l) vCPU(s)"
	jtrace_start
	jset "$name" --at $stages --proto udp --daddr 10.10.3.2 --dport 9000 --count $n ||
		{ trace_stop; return; }
	for cpu in $(cpus); do
		ip netns exec a taskset -c $cpu pfsend udp -q --src 10.10.3.1 --dst 10.10.3.2 \
			--sport 400$cpu --dport 9000 --count 100 > /dev/null 2>&1 &
	done
	wait
	sleep 0.5
	jtrace_stop
	expect_eq "$name: packet ids" "$(g_ids | wc -l)" $n
	bad=0
	for s in $(echo $stages | tr , ' '); do
		for id in $(g_ids); do
			if ! grep -q "^G id=$id stage=$s " $J/graphs &&
			   ! grep "^G id=$id " $J/graphs | grep -q ",EV:$s:$id,"; then
				bad=$((bad + 1))
			fi
		done
	done
	expect_eq "$name: a graph of every stage for every id" $bad 0
	g_expect_n "$name: no graph without an event" "^G id=none" 0
}

count_cases() {
	r=1
	while [ $r -le "${JOURNEY_REPS:-1}" ]; do
		for c in "rx 1" "rx 10" "tx 10" "tx,rx 10"; do
			count_case $c
		done
		r=$((r + 1))
	done
}

# --- exactly the packet (issue 31) --------------------------------------------------

# exact_stream NAME NS DST STAGES EXPR: one IPv6 TCP stream (1 MB) in NS
# to a sink on DST port 5201 (in b, or NS itself for ::1), armed with
# --at STAGES --count 1 EXPR, EXPR taking one of the sink's pure ACKs.
# TCP frees a received pure ACK without a free tracepoint (its fast
# path's __kfree_skb()), and the sink's next ACK gets the same skb, its
# IPv6 header equal (payload length, flow label): one packet id, at most
# one graph of each stage, at most one fate.
exact_stream() {
	name=$1 ns=$2 dst=$3 stages=$4 expr=$5
	rns=b
	[ "$dst" = ::1 ] && rns=$ns
	jtrace_start
	jset "$name" --at $stages --count 1 "$expr" || { trace_stop; return; }
	rm -f $J/sink.ready
	ip netns exec $rns pfsend tcp-sink -6 --port 5201 --timeout 20 \
		--ready $J/sink.ready > $J/sink.out 2>&1 &
	wait_for_file $J/sink.ready 100
	ip netns exec $ns pfsend tcp-stream -6 --dst $dst --dport 5201 --size 1048576 \
		> $J/stream.out 2>&1 || fail "$name: the stream" "$(cat $J/stream.out)"
	wait
	sleep 0.5
	jtrace_stop
	expect_eq "$name: one packet id" "$(g_ids | wc -l)" 1
	id=$(g_ids | head -1)
	for s in $(echo $stages | tr , ' '); do
		n=$(g_count "^G id=${id:-none} stage=$s ")
		if [ "$n" -le 1 ]; then
			ok "$name: at most one $s graph of id $id ($n)"
		else
			fail "$name: at most one $s graph of id $id" "$n graphs"
			g_show
		fi
	done
	n=$(grep -c "^FREE id=${id:-none} " $J/graphs)
	if [ "$n" -le 1 ]; then ok "$name: at most one fate ($n)"; else fail "$name: at most one fate" "$n pktfilt_free of id $id"; fi
}

# exact_fate: a's receive of the SYN-ACK of an IPv6 connection from a to
# b is traced; TCP frees it without a tracepoint. Then datagrams from b to
# a closed port of a take the same path and are dropped (NO_SOCKET), and
# a's ICMPv6 errors b's way, in skbs from the same cache: no drop is the
# SYN-ACK's fate, and none is counted.
exact_fate() {
	name="fate of a SYN-ACK freed silently"
	jtrace_start
	d0=$(pf_stat dropped)
	jset "$name" --at rx --netns /run/netns/a --count 1 \
		'ip6 and tcp and src port 5201 and ip6[53] == 0x12' || { trace_stop; return; }
	rm -f $J/sink.ready
	ip netns exec b pfsend tcp-sink -6 --port 5201 --timeout 20 \
		--ready $J/sink.ready > $J/sink.out 2>&1 &
	wait_for_file $J/sink.ready 100
	ip netns exec a pfsend tcp-stream -6 --dst fd10:3::2 --dport 5201 --size 100 \
		> $J/stream.out 2>&1 || fail "$name: the connection" "$(cat $J/stream.out)"
	wait
	jsend b udp 6 fd10:3::2 fd10:3::1 9999 20
	sleep 0.5
	jtrace_stop
	expect_eq "$name: one packet id" "$(g_ids | wc -l)" 1
	id=$(g_ids | head -1)
	fr=$(first_free "${id:-none}")
	case $fr in
	""|"CONSUMED "*) ok "$name: no other packet's drop given as its fate ('$fr')" ;;
	*) fail "$name: no other packet's drop given as its fate" "first free of id $id: '$fr'" ;;
	esac
	expect_eq "$name: dropped counter" "$(($(pf_stat dropped) - d0))" 0
}

# exact_kprobes: with kprobes disabled (debugfs kprobes/enabled = 0) the
# gate's kprobe cannot fire: nothing may be claimed or announced. Arming
# is refused then; a filter armed before is disarmed, saying why; with
# kprobes enabled again a packet is traced.
exact_kprobes() {
	name="kprobes disabled"
	K=/sys/kernel/debug/kprobes/enabled
	if [ ! -w $K ]; then fail "$name: $K"; return; fi
	jtrace_start
	echo 0 > $K
	if out=$(pktfilt set --at rx --proto udp --daddr 10.10.3.2 --dport 9000 --count 2 2>&1); then
		fail "$name: pktfilt set refused" "accepted"
		jsend a udp 4 10.10.3.1 10.10.3.2 9000 1
		sleep 0.5
	else
		case $out in
		*kprobe*) ok "$name: pktfilt set refused: $out" ;;
		*) fail "$name: pktfilt set refused, naming kprobes" "$out" ;;
		esac
	fi
	echo 1 > $K
	pktfilt clear
	jtrace_stop
	expect_eq "$name: no packet announced" "$(trace_events | wc -l)" 0

	name="kprobes disabled while armed"
	jtrace_start
	jset "$name" --at rx --proto udp --daddr 10.10.3.2 --dport 9000 --count 2 ||
		{ trace_stop; return; }
	echo 0 > $K
	jsend a udp 4 10.10.3.1 10.10.3.2 9000 1
	sleep 0.5
	st=$(pktfilt show 2>&1)
	echo 1 > $K
	pktfilt clear
	jtrace_stop
	expect_eq "$name: no packet announced" "$(trace_events | wc -l)" 0
	case $st in
	*"last disarm:"*kprobe*) ok "$name: disarmed, show says why" ;;
	*) fail "$name: disarmed, show says why" "$(echo "$st" | tr '\n' ';' | cut -c1-300)" ;;
	esac

	name="kprobes enabled again"
	jtrace_start
	jset "$name" --at rx --proto udp --daddr 10.10.3.2 --dport 9000 --count 1 ||
		{ trace_stop; return; }
	jsend a udp 4 10.10.3.1 10.10.3.2 9000 1
	sleep 0.5
	jtrace_stop
	g_expect_n "$name: one graph rooted at $(rx_root 4)" " root=$(rx_root 4) " 1
}

exact_cases() {
	exact_stream "--at tx,rx IPv6 TCP stream a -> b, an ACK" a fd10:3::2 tx,rx \
		'ip6 and tcp and src port 5201 and ip6[53] == 0x10'
	exact_stream "--at rx,l4 IPv6 TCP stream over ::1, an ACK" a ::1 rx,l4 \
		'ip6 and tcp and src port 5201 and ip6[53] == 0x10'
	exact_fate
	exact_kprobes
}

# --- unload under load, per stage -----------------------------------------------------

# What the module must leave as it found it.
jsnap() {
	{
		for fl in current_tracer set_ftrace_pid set_ftrace_notrace_pid set_graph_function \
			  set_ftrace_filter set_event_pid kprobe_events; do
			echo "== $fl"; cat $T/$fl
		done
		echo "== enabled_functions"; wc -l < $T/enabled_functions
		echo "== ptype"; cat /proc/net/ptype
		for ns in r b; do echo "== nft $ns"; ip netns exec $ns nft list ruleset | grep -v packets; done
	} > "$1" 2>&1
}

# unload_case STAGES: cycles of insmod, set --at STAGES --count 0-3, rmmod
# under matching floods on both vCPUs (a to b direct, through r, x to y);
# after: module gone, tracefs, ptype and nftables as before, traffic flows
# and r still drops.
unload_case() {
	stages=$1
	cycles=${JOURNEY_UNLOAD_CYCLES:-4}
	name="unload --at $stages"
	rmmod pktfilt 2>/dev/null
	jsnap $J/snap.before
	rm -f $J/flood.stop
	for cpu in $(cpus); do
		(
			while [ ! -e $J/flood.stop ]; do
				ip netns exec a taskset -c $cpu pfsend udp -q --src 10.10.3.1 \
					--dst 10.10.3.2 --sport 400$cpu --dport 9000 --count 100
				ip netns exec a taskset -c $cpu pfsend udp -q --src 10.10.1.1 \
					--dst 10.10.2.2 --sport 400$cpu --dport 9000 --count 50
				ip netns exec a taskset -c $cpu pfsend udp -q -6 --src fd10:3::1 \
					--dst fd10:3::2 --sport 400$cpu --dport 9000 --count 50
				[ "$HAVE_NICS" = 1 ] && ip netns exec x taskset -c $cpu pfsend udp -q \
					--src 10.11.0.1 --dst 10.11.0.2 --sport 400$cpu --dport 9000 --count 50
			done
		) > /dev/null 2>&1 &
	done
	i=1 badset=0 badrm=0 armed=0
	skb_events_hold 1
	while [ $i -le "$cycles" ]; do
		insmod $PKTFILT_KO || { badrm=$((badrm + 1)); break; }
		pktfilt set --at $stages --proto udp --dport 9000 --count $((i % 4)) ||
			badset=$((badset + 1))
		sleep 0.3
		[ "$(pf_stat matched)" -gt 0 ] && armed=$((armed + 1))
		rmmod pktfilt || { badrm=$((badrm + 1)); break; }
		i=$((i + 1))
	done
	touch $J/flood.stop
	wait
	skb_events_hold 0
	expect_eq "$name: $cycles cycles of insmod, set (--count 0-3), rmmod under floods on $(cpus | wc -l) vCPU(s)" \
		"$((i - 1)) set-failures=$badset rmmod-failures=$badrm" \
		"$cycles set-failures=0 rmmod-failures=0"
	echo "# $name: $armed of $cycles cycles matched packets while armed"
	if grep -q '^pktfilt ' /proc/modules; then fail "$name: module gone"; else ok "$name: module gone"; fi
	jsnap $J/snap.after
	if cmp -s $J/snap.before $J/snap.after; then
		ok "$name: tracefs, ptype and nftables as before"
	else
		fail "$name: tracefs, ptype and nftables as before" "$(diff $J/snap.before $J/snap.after | head -20 | tr '\n' ';')"
	fi
	udp_flows "$name: after: UDP from a to b direct" a 4 10.10.3.1 10.10.3.2 b
	[ "$HAVE_NICS" = 1 ] &&
		udp_flows "$name: after: UDP from x to y over virtio-net" x 4 10.11.0.1 10.11.0.2 y
	d0=$(nft_drops r)
	jsend a udp 4 10.10.1.1 10.10.2.2 7777 3
	expect_eq "$name: after: r's rule still drops" "$(($(nft_drops r) - d0))" 3
	insmod $PKTFILT_KO || fail "$name: insmod again"
}

unload_cases() {
	for st in rx tx; do
		unload_case $st
	done
	check_dmesg "unload: dmesg clean"
}

# --- smoke: make check's tier for the kernels whose full groups run in make soak

# smoke_cases: what a user depends on, in one short boot (TESTING.md,
# "Tiers"): a packet traced at each stage (rx over veth and over
# virtio-net's NAPI list, tx, l4), exact counts at l4 and across tx,rx,
# a clean rmmod under floods; the boot's check_dmesg after.
smoke_cases() {
	rx_case direct udp 4
	[ "$HAVE_NICS" = 1 ] && rx_case virtio tcp 6
	tx_case direct tcp 6
	count_case l4 3
	count_case tx,rx 3
	unload_case rx
	check_dmesg "smoke: dmesg clean"
}

# --- pktfilt trace --at ------------------------------------------------------------------

# jtool NAME ARGS...: pktfilt trace ARGS --raw $J/raw, out in $J/out.
jtool() {
	_name=$1
	shift
	rm -f $J/raw
	pktfilt trace --raw $J/raw --timeout 60 "$@" > $J/out 2> $J/err
	_rc=$?
	if [ $_rc = 0 ]; then ok "$_name: exit status 0"; else fail "$_name: exit status $_rc" "$(head -c 600 $J/err)"; fi
	cp $J/raw /tmp/trace.txt 2>/dev/null || : > /tmp/trace.txt
	expect_no_own_calls "$_name"
	jgraphs > $J/graphs
}

tool_cases() {
	# Each trace switches the tracer (nop, function_graph, back): the
	# fewer the better (selftests/vm/README.md, emulator faults).
	name="trace --at tx,rx ping a -> b"
	jtool "$name" --at tx,rx --proto icmp --daddr 10.10.3.2 --pcap $J/ping.pcapng \
		-- ip netns exec a ping -c1 -W5 10.10.3.2
	expect_eq "$name: one packet id" "$(g_ids | wc -l)" 1
	# Its graphs' bytes (--pcap), read by tshark on the host.
	pcap_emit ping $J/ping.pcapng $J/raw
	g_expect_n "$name: its tx graph in a" " stage=tx eroot=nf_hook_slow netns=$(netns_inode a) .* root=nf_hook_slow " 1
	if grep -q 'rx' $J/out; then ok "$name: the report names the rx stage"; else fail "$name: the report names the rx stage" "$(head -c 300 $J/out)"; fi

	name="trace --at rx firewall drop in r"
	jtool "$name" --at rx --proto udp --dport 7777 --netns /run/netns/r \
		-- ip netns exec a pfsend udp -q --src 10.10.1.1 --dst 10.10.2.2 --dport 7777
	id=$(g_ids | head -1)
	fr=$(first_free "${id:-none}")
	case $fr in
	"$(drop_reason NETFILTER_DROP) "*) ok "$name: the raw trace has pktfilt_free reason=$(drop_reason NETFILTER_DROP)" ;;
	*) fail "$name: pktfilt_free reason=$(drop_reason NETFILTER_DROP)" "'$fr'" ;;
	esac
	if grep -q "$(drop_reason NETFILTER_DROP)" $J/out; then ok "$name: the report names $(drop_reason NETFILTER_DROP)"; else fail "$name: the report names $(drop_reason NETFILTER_DROP)" "$(head -c 300 $J/out)"; fi
	# The rule that dropped it, its text from the ruleset (libnftables).
	h=$(nft_handle r inet jt fw 'udp dport 7777')
	want="# dropped: $(drop_reason NETFILTER_DROP) by inet jt fw handle $h: udp dport 7777 counter drop"
	if grep -q -x -F "$want" $J/out; then ok "$name: $want"; else fail "$name: $want" "$(grep '^#' $J/out | head -3 | tr '\n' ';')"; fi
	if grep -q -F "/* nft inet jt fw handle $h: drop [udp dport 7777 counter drop] */" $J/out; then
		ok "$name: the verdict with its rule in the graph"
	else
		fail "$name: the verdict with its rule in the graph" "$(grep -F '/* nft' $J/out | head -3 | tr '\n' ';')"
	fi
	compat_case
}

# compat_case: a version 1 tool (pfjoin --get 1 asks as one) is told, not
# misled, when the armed filter uses what it cannot show (a stage other
# than l4, an expression); a filter of its own kind it reads as before.
compat_case() {
	name="an older tool (netlink version 1)"
	jtrace_start
	for v in rx expr l4; do
		case $v in
		rx) pktfilt set --at rx --proto udp --dport 7777 --count 1 ;;
		expr) pktfilt set --at l4 --count 1 'udp dst port 7777' ;;
		l4) pktfilt set --at l4 --proto udp --dport 7777 --count 1 ;;
		esac || fail "$name: pktfilt set ($v)"
		out1=$(pfjoin --get 1 2>&1)
		out2=$(pfjoin --get 2 2>&1)
		expect_eq "$name: a version 2 GET of the $v filter replies" "$out2" "pfjoin: get: reply"
		case $v:$out1 in
		rx:*"error -95: the armed filter traces at stages other than l4 (--at), which this pktfilt (netlink version 1) cannot show"*|\
		expr:*"error -95: the armed filter has a filter expression, which this pktfilt (netlink version 1) cannot show"*|\
		l4:"pfjoin: get: reply")
			ok "$name: $v filter: $out1" ;;
		*) fail "$name: $v filter" "$out1" ;;
		esac
		pktfilt clear
	done
	trace_stop
}

# --- main ------------------------------------------------------------------------------

# JOURNEY_SOURCED=1: only the functions (to run a case by hand).
[ -n "${JOURNEY_SOURCED:-}" ] && return 0

echo "kernel $(uname -r)"
_jt0=$(cut -d. -f1 /proc/uptime)
journey_cleanup
if ! router_setup; then
	fail "topology: router_setup"
	summary
	exit 1
fi
ok "topology: a - r - b, a - b"
HAVE_NICS=0
nics_setup
case $? in
0) HAVE_NICS=1; ok "topology: virtio-net NICs in x and y" ;;
2) if [ "${*:-}" = tool ]; then
	echo "# no virtio-net NICs (not needed by tool)"
   else
	fail "topology: virtio-net NICs" "none (run selftests/vm/run with --nics 2)"
   fi ;;
*) fail "topology: virtio-net NICs in x and y" ;;
esac
check "nftables rules in r and b" nft_setup
[ "$(nproc)" -gt 1 ] && check "nftables' trace key held on (two vCPUs)" nft_key_hold
echo "# setup: $(($(cut -d. -f1 /proc/uptime) - _jt0)) s"

cases=${*:-topo rx pad core fwd nat nearmiss drop nosock tx txrx exact tstamp count unload}
MODULE=0
case " $cases " in
*" topo "*)
	_jt0=$(cut -d. -f1 /proc/uptime)
	topo_cases
	echo "# topo: $(($(cut -d. -f1 /proc/uptime) - _jt0)) s" ;;
esac
if [ "$cases" != topo ]; then
	_jt0=$(cut -d. -f1 /proc/uptime)
	if ! insmod $PKTFILT_KO; then
		fail "insmod"
	else
		jtrace_setup
		jtrace_start
		if out=$(pktfilt set --at rx --proto udp --dport 1 --count 1 2>&1); then
			MODULE=1
			if pktfilt show | grep -q '^rx: *from ip_rcv()'; then
				RX_FROM_IP=1
				echo "# $(pktfilt show | grep '^rx:')"
			fi
			pktfilt clear
		else
			fail "pktfilt set --at rx accepted (module and tool with stages)" "$out; the stage cases are skipped"
		fi
		trace_stop
	fi
	echo "# insmod: $(($(cut -d. -f1 /proc/uptime) - _jt0)) s"
fi
if [ $MODULE = 1 ]; then
	for c in $cases; do
		case $c in
		topo) ;;
		rx|pad|core|fwd|nat|nearmiss|drop|nosock|tx|txrx|exact|tstamp|count|unload|tool|smoke|nftv|ecmp)
			_jt0=$(cut -d. -f1 /proc/uptime)
			"${c}_cases"
			echo "# $c: $(($(cut -d. -f1 /proc/uptime) - _jt0)) s" ;;
		*) fail "unknown case $c" ;;
		esac
	done
	rmmod pktfilt 2>/dev/null
fi
journey_cleanup
nft delete table inet pfkey 2>/dev/null
# No trace_teardown: the VM ends here, and every tracer switch is a chance
# of the emulator fault of selftests/vm/README.md.
check_dmesg
summary
