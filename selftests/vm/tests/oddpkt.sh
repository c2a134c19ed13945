# SPDX-License-Identifier: GPL-2.0
# VM tests with odd packets: matching follows the predicates, and the key is
# never read beyond the packet, for
#   - IP fragments (IPv4, IPv6): the handler sees the reassembled datagram,
#     once, whatever the fragments' order or size; lone fragments never;
#   - IPv4 options and IPv6 extension headers (hop-by-hop, destination
#     options, atomic fragment header): the ports are those of the transport
#     header after them;
#   - packets shorter than their headers claim. module/key.c reads the 4
#     bytes of sport+dport with skb_header_pointer() at the transport
#     offset: with fewer (0-3 bytes of UDP or TCP) the key has no ports, a
#     port predicate does not match, an address-only one does (ports 0 in
#     the event); with 4 or more the ports are read and matched even though
#     the header is incomplete (4 of UDP's 8 bytes, 10 of TCP's 20, a UDP
#     length beyond the packet), and the handler then drops the packet in
#     the traced graph. The bytes after each short packet, beyond its IP
#     length (trimmed by the IP layer), hold the rest of a matching header,
#     so a read past the end would show as a match. An IP length beyond the
#     frame never reaches a handler;
#   - TCP GSO skbs (veth passes the sender's TSO super-packets) and
#     GRO-merged skbs (GRO on the receiving veth, TSO off on the sender):
#     one graph and one event per skb, fewer than the wire segments, the
#     event's tuple that of the flow; the control (no TSO, no GRO) gives one
#     per segment;
#   - a non-init netns other than b (c -> d);
#   - a packet held at l4 by a lazy filter and replayed after READY, whose
#     UDP handler names a non-final protocol next (fou): the IP layer's
#     fate for it, as unarmed (replay6).
# The odd packets are built by "pfsend raw" (AF_PACKET on veth-a/veth-c, to
# the peer's MAC), offloads set by "pfsend offload" (SIOCETHTOOL).
#
# Sourced by all.sh (after lib.sh, common.sh and core.sh, with topo_setup
# done, ODDPKT_SOURCED=1), which calls oddpkt_cases; also runnable alone:
#
#	selftests/vm/run --kernel 6.12 -- sh selftests/vm/tests/oddpkt.sh [CASE...]
#
# CASE: frag4 frag6 ext6 replay6 short4 short6 gso netns (default: all).

# odd_raw NS ARGS...: pfsend raw from NS (a: veth-a to veth-b, c: veth-c to
# veth-d).
odd_raw() {
	_ons=$1
	shift
	case $_ons in
	a) ip netns exec a pfsend raw -q --dev veth-a --dst-mac "$ODD_MAC_B" "$@" ;;
	c) ip netns exec c pfsend raw -q --dev veth-c --dst-mac "$ODD_MAC_D" "$@" ;;
	esac || fail "pfsend raw $*"
}
odd_raw4() { odd_raw a --src 10.9.0.1 --dst 10.9.0.2 "$@"; }
odd_raw6() { odd_raw a -6 --src fd00::1 --dst fd00::2 "$@"; }

# odd_begin NAME PKTFILT-SET-ARGS...: module in, tracing on, filter armed.
# Returns 1 (after cleaning up) if the filter could not be armed.
odd_begin() {
	_oname=$1
	shift
	insmod $PKTFILT_KO || { fail "$_oname: insmod"; return 1; }
	trace_start
	if ! pktfilt set "$@"; then
		fail "$_oname: pktfilt set $*"
		trace_stop
		rmmod pktfilt
		return 1
	fi
}

# odd_stats: the counters, as "seen matched traced not_ready".
odd_stats() {
	_show=$(pktfilt show)
	for _k in seen matched traced 'not ready'; do
		printf '%s\n' "$_show" | sed -n "s/^ *$_k:* *\([0-9][0-9]*\).*/\1/p" | head -1
	done | tr '\n' ' ' | sed 's/ $//'
}

# odd_expect_stats NAME "SEEN MATCHED TRACED NOT_READY" (a field "-" is
# not compared).
odd_expect_stats() {
	_got=$(odd_stats)
	set -- "$1" "$2" $_got
	_oname=$1 _want=$2
	shift 2
	_ok=1
	_i=0
	for _w in $_want; do
		_i=$((_i + 1))
		eval "_g=\${$_i:-?}"
		[ "$_w" = - ] || [ "$_w" = "$_g" ] || _ok=0
	done
	if [ $_ok = 1 ]; then
		ok "$_oname: seen/matched/traced/not-ready $_want"
	else
		fail "$_oname: seen/matched/traced/not-ready" "got '$_got', want '$_want'"
	fi
}

# odd_expect_events NAME PATTERN N: exactly N pktfilt events contain PATTERN.
odd_expect_events() {
	_n=$(trace_events | grep -c -- "$2")
	if [ "$_n" -eq "$3" ]; then
		ok "$1: $3 event(s) with '$2'"
	else
		fail "$1: events with '$2'" "$_n, want $3"
		trace_events | head -10
	fi
}

# odd_expect_roots NAME "ROOT..." : the graphs' roots are exactly these (in
# any order), each with its event.
odd_expect_roots() {
	_got=$(trace_roots | sort | tr '\n' ' ')
	_want=$(printf '%s\n' $2 | sort | tr '\n' ' ')
	_ev=$(trace_events | wc -l)
	_n=$(printf '%s\n' $2 | wc -l)
	if [ "$_got" = "$_want" ] && [ "$_ev" -eq "$_n" ]; then
		ok "$1: graphs rooted at $2, one event each"
	else
		fail "$1: roots" "got '$_got' ($_ev events), want '$_want'"
	fi
}

# odd_listen FAMILY N: "pfsend udp-listen" on b port 9000 in the background.
odd_listen() {
	_six=
	[ "$1" = 6 ] && _six=-6
	rm -f /tmp/odd.ready /tmp/odd.listen
	ip netns exec b pfsend udp-listen $_six --port 9000 --count "$2" --timeout 30 \
		--ready /tmp/odd.ready > /tmp/odd.listen &
	ODD_LP=$!
	wait_for_file /tmp/odd.ready || fail "udp-listen did not start"
}

# odd_listened NAME N: the listener got N datagrams (the kernel accepted and
# reassembled what pfsend built).
odd_listened() {
	wait $ODD_LP
	if grep -qx "received $2" /tmp/odd.listen; then
		ok "$1: the receiver got all $2 datagrams"
	else
		fail "$1: the receiver got all $2 datagrams" "$(cat /tmp/odd.listen)"
	fi
}

odd_end() {
	trace_stop
	rmmod pktfilt || fail "$1: rmmod"
}

# --- fragments ---------------------------------------------------------------

# odd_frag_case FAMILY: fragmented UDP datagrams to b:9000 match once each, as
# the reassembled datagram; to b:9001 not; a lone non-first fragment never
# reaches the handler.
odd_frag_case() {
	f=$1
	if [ "$f" = 4 ]; then
		S=10.9.0.1 D=10.9.0.2 raw=odd_raw4 six= root=udp_rcv
	else
		S=fd00::1 D=fd00::2 raw=odd_raw6 six=-6 root=udpv6_rcv
	fi
	name="fragments/ipv$f"
	odd_begin "$name" --proto udp --saddr $S --daddr $D --dport 9000 --count 0 \
		--dev veth-b --netns /run/netns/b || return
	odd_listen "$f" 5
	# Near miss: the destination port. Then the middle and last fragments
	# of a matching datagram, without the first: never reassembled.
	$raw --sport 4000 --dport 9001 --size 3000 --frag 1232
	$raw --sport 4000 --dport 9000 --size 3000 --frag 1232 --drop-first
	sleep 0.5
	odd_expect_stats "$name: near miss and lone fragments" "1 0 0 0"
	# In order; last first; first fragment = the bare UDP header (8-byte
	# fragments); fragmented by the sender's kernel.
	if [ "$f" = 4 ]; then
		$raw --sport 4001 --dport 9000 --size 3000 --frag 1232
		$raw --sport 4002 --dport 9000 --size 3000 --frag 1232 --reverse
		# With IP options in every fragment.
		$raw --sport 4005 --dport 9000 --size 2000 --frag 1000 --ip-opts
	else
		$raw --sport 4001 --dport 9000 --size 3000 --frag 1232
		# Hop-by-hop before the fragment header, destination options
		# after it (fragmented with the datagram).
		$raw --sport 4002 --dport 9000 --size 3000 --frag 1232 --reverse --ext hbh,frag,dst
		$raw --sport 4005 --dport 9000 --size 2000 --frag 1000 --ext hbh,dst
	fi
	$raw --sport 4003 --dport 9000 --size 40 --frag 8
	ip netns exec a pfsend udp $six -q --src $S --dst $D --sport 4004 --dport 9000 --size 4000 ||
		fail "$name: pfsend udp --size 4000"
	odd_listened "$name" 5
	sleep 1
	odd_expect_stats "$name" "6 5 5 0"
	trace_stop
	expect_graphs "$name" $root 5
	for sp in 4001 4002 4003 4004 4005; do
		odd_expect_events "$name" "proto=udp saddr=$S daddr=$D sport=$sp dport=9000 ifindex=$(ifindex b veth-b) netns=$(netns_inode b)" 1
	done
	rmmod pktfilt || fail "$name: rmmod"
}

# --- IPv6 extension headers ---------------------------------------------------

odd_ext6_case() {
	name="extension headers/ipv6/udp"
	odd_begin "$name" --proto udp --saddr fd00::1 --daddr fd00::2 --dport 9000 --count 0 \
		--netns /run/netns/b || return
	odd_listen 6 5
	odd_raw6 --sport 4005 --dport 9001 --ext hbh,dst	# near miss: port
	odd_raw6 --sport 4000 --dport 9000 --ext hbh
	odd_raw6 --sport 4001 --dport 9000 --ext dst
	odd_raw6 --sport 4002 --dport 9000 --ext hbh,dst
	odd_raw6 --sport 4003 --dport 9000 --ext hbh,dst,frag	# atomic fragment
	odd_raw6 --sport 4004 --dport 9000 --ext frag,dst --size 100
	odd_listened "$name" 5
	sleep 1
	odd_expect_stats "$name" "6 5 5 0"
	trace_stop
	expect_graphs "$name" udpv6_rcv 5
	for sp in 4000 4001 4002 4003 4004; do
		odd_expect_events "$name" "proto=udp saddr=fd00::1 daddr=fd00::2 sport=$sp dport=9000 " 1
	done
	rmmod pktfilt || fail "$name: rmmod"

	name="extension headers/ipv6/tcp"
	odd_begin "$name" --proto tcp --saddr fd00::1 --daddr fd00::2 --dport 9000 --count 0 \
		--netns /run/netns/b || return
	odd_raw6 --proto tcp --sport 4001 --dport 9001 --ext hbh,dst	# near miss: port
	odd_raw6 --proto tcp --sport 4000 --dport 9000 --ext hbh,dst
	sleep 1
	# seen: the two SYNs, and b's two RSTs into a.
	odd_expect_stats "$name" "4 1 1 0"
	trace_stop
	expect_graphs "$name" tcp_v6_rcv 1
	odd_expect_events "$name" "proto=tcp saddr=fd00::1 daddr=fd00::2 sport=4000 dport=9000 " 1
	rmmod pktfilt || fail "$name: rmmod"

	name="extension headers/ipv6/icmpv6"
	odd_begin "$name" --proto icmpv6 --saddr fd00::1 --daddr fd00::2 --count 0 \
		--netns /run/netns/b || return
	odd_raw6 --proto icmp --ext hbh,dst
	odd_raw6 --proto icmp --ext hbh,frag
	sleep 1
	odd_end "$name"
	expect_graphs "$name" icmpv6_rcv 2
	odd_expect_events "$name" "proto=icmpv6 saddr=fd00::1 daddr=fd00::2 sport=0 dport=0 " 2
}

# --- a held packet's replay: a non-final protocol after UDP ---------------------
# A lazy filter at l4 holds the packet in the UDP handler's wrapper; after
# READY the replay calls the handler, then does with its answer what
# ip6_protocol_deliver_rcu() does. Here b's UDP port 5555 is a fou
# receiver whose payload protocol is 60, destination options: udpv6_rcv()
# answers 60, and the IP layer, a final protocol seen already, discards
# the packet (Ip6InDiscards) without calling that non-final protocol's
# handler. The replay did call it (ipv6_destopt_rcv() then read pfsend's
# text as an option header too long for the packet: Ip6InHdrErrors), and
# the hold itself counted Ip6InDelivers. The fate of one such packet, as
# b's counters "InDelivers InDiscards InHdrErrors" move, must be the same
# unarmed and held, replayed and traced.

# odd_ip6_counts: b's Ip6InDelivers Ip6InDiscards Ip6InHdrErrors.
odd_ip6_counts() {
	ip netns exec b awk '$1 == "Ip6InDelivers" { d = $2 } $1 == "Ip6InDiscards" { x = $2 }
		$1 == "Ip6InHdrErrors" { h = $2 } END { print d, x, h }' /proc/net/snmp6
}

# odd_fou_one: one UDP datagram from a to b's fou port; prints how b's
# counters moved (odd_ip6_counts' order), measured after WAIT (default
# 0.5 s) or, with a command given, after that command ran.
odd_fou_one() {
	_c0=$(odd_ip6_counts)
	ip netns exec a pfsend udp -6 -q --src fd00::1 --dst fd00::2 --sport 4000 --dport 5555 ||
		fail "replay/ipv6 fou: pfsend udp"
	sleep 0.5
	[ $# -gt 0 ] && "$@" > /dev/null 2>&1
	sleep 0.5
	_c1=$(odd_ip6_counts)
	set -- $_c0 $_c1
	echo "$(($4 - $1)) $(($5 - $2)) $(($6 - $3))"
}

odd_replay6_case() {
	name="replay/ipv6 fou, a non-final protocol after UDP"
	if ! modprobe fou 2>/dev/null || ! ip -n b fou add port 5555 ipproto 60 -6; then
		fail "$name: fou receiver on b:5555 (modprobe fou; ip fou add)"
		return
	fi
	unarmed=$(odd_fou_one)
	expect_eq "$name: unarmed, the IP layer discards it" "$unarmed" "0 1 0"
	odd_begin "$name" --lazy --hold 30 --at l4 --proto udp --saddr fd00::1 \
		--daddr fd00::2 --dport 5555 --count 1 || { ip -n b fou del port 5555 -6; return; }
	held=$(odd_fou_one sh -c 'pktfilt show | grep -q "^lazy: *holding" &&
		pktfilt ready')
	expect_eq "$name: held, replayed: the same fate as unarmed" "$held" "$unarmed"
	odd_end "$name"
	expect_graphs "$name" udpv6_rcv 1
	odd_expect_events "$name" "proto=udp saddr=fd00::1 daddr=fd00::2 sport=4000 dport=5555 " 1
	ip -n b fou del port 5555 -6
}

# --- short packets -------------------------------------------------------------

# odd_short_case FAMILY
odd_short_case() {
	f=$1
	if [ "$f" = 4 ]; then
		S=10.9.0.1 D=10.9.0.2 raw=odd_raw4 ext= tcp=tcp_v4_rcv udp=udp_rcv icmp=icmp_rcv
	else
		S=fd00::1 D=fd00::2 raw=odd_raw6 ext="--ext hbh,dst" tcp=tcp_v6_rcv udp=udpv6_rcv icmp=icmpv6_rcv
	fi

	# A port predicate: no match without the 4 bytes of ports. Every
	# packet is followed, beyond its IP length, by the rest of its full
	# UDP header (dport 9000): a read past the end would match it.
	name="short/ipv$f/udp, --dport"
	odd_begin "$name" --proto udp --saddr $S --daddr $D --dport 9000 --count 0 \
		--netns /run/netns/b || return
	$raw --sport 4000 --dport 9000 --trunc 0 --trailer 16
	$raw --sport 4000 --dport 9000 --trunc 2 --trailer 16
	$raw --sport 4000 --dport 9000 --trunc 3 --trailer 16
	[ "$f" = 6 ] && $raw --sport 4000 --dport 9000 --trunc 3 --trailer 16 $ext
	# IP length beyond the frame: dropped by the IP layer, not seen.
	$raw --sport 4000 --dport 9000 --ip-len 200
	sleep 0.5
	want=3
	[ "$f" = 6 ] && want=4
	odd_expect_stats "$name: no ports, no match (nothing read past the end)" "$want 0 0 0"
	# The ports, but not the whole header (4 of 8 bytes); a length field
	# claiming 100 bytes of 21: key.c reads the ports, matches; udp_rcv
	# drops them.
	$raw --sport 4001 --dport 9000 --trunc 4 --trailer 16
	$raw --sport 4002 --dport 9000 --size 13 --udp-len 100
	[ "$f" = 6 ] && $raw --sport 4003 --dport 9000 --trunc 4 $ext
	sleep 1
	if [ "$f" = 4 ]; then want="5 2 2 0" n=2; else want="7 3 3 0" n=3; fi
	odd_expect_stats "$name" "$want"
	trace_stop
	expect_graphs "$name: 4 bytes (ports only), or a UDP length beyond the packet" $udp $n
	odd_expect_events "$name" "sport=4001 dport=9000 " 1
	odd_expect_events "$name" "sport=4002 dport=9000 " 1
	[ "$f" = 6 ] && odd_expect_events "$name" "sport=4003 dport=9000 " 1
	rmmod pktfilt || fail "$name: rmmod"

	name="short/ipv$f/tcp, --dport"
	odd_begin "$name" --proto tcp --saddr $S --daddr $D --dport 9000 --count 0 \
		--netns /run/netns/b || return
	$raw --proto tcp --sport 4000 --dport 9000 --trunc 3 --trailer 32
	$raw --proto tcp --sport 4001 --dport 9000 --trunc 10	# 10 of 20 bytes
	sleep 1
	# tcp_v*_rcv drops both: no RST comes back into a.
	odd_expect_stats "$name" "2 1 1 0"
	trace_stop
	expect_graphs "$name: 10 bytes (ports readable)" $tcp 1
	odd_expect_events "$name" "proto=tcp saddr=$S daddr=$D sport=4001 dport=9000 " 1
	rmmod pktfilt || fail "$name: rmmod"

	# Addresses only, any protocol: the short packets match, with no
	# ports (0 in the event); the handlers drop them.
	name="short/ipv$f, addresses only"
	odd_begin "$name" --saddr $S --daddr $D --count 0 --netns /run/netns/b || return
	$raw --proto udp --sport 4000 --dport 9000 --trunc 3 --trailer 16 $ext
	$raw --proto tcp --sport 4000 --dport 9000 --trunc 3 --trailer 32
	$raw --proto icmp --trunc 2 --trailer 16
	sleep 1
	odd_expect_stats "$name" "- 3 3 0"
	odd_end "$name"
	odd_expect_roots "$name" "$udp $tcp $icmp"
	odd_expect_events "$name" "saddr=$S daddr=$D sport=0 dport=0 " 3
}

# --- GSO / GRO -------------------------------------------------------------------

# odd_snmp NS TABLE FIELD: a counter of /proc/net/snmp in NS.
odd_snmp() {
	ip netns exec "$1" cat /proc/net/snmp | awk -v t="$2:" -v f="$3" '
		$1 == t && !h { for (i = 2; i <= NF; i++) c[$i] = i; h = 1; next }
		$1 == t && h { print $c[f]; exit }'
}

# odd_stream_case FAMILY MODE SPORT: a 16 KiB TCP stream a -> b:9000, every skb
# into the handler in b traced.
#   gso:  default veth: a's TSO super-packets reach b whole (no GRO)
#   none: TSO off on veth-a, GRO off on veth-b: one skb per wire segment
#   gro:  TSO off on veth-a, GRO (and so NAPI) on veth-b: merged
odd_stream_case() {
	f=$1 mode=$2 sp=$3
	if [ "$f" = 4 ]; then S=10.9.0.1 D=10.9.0.2 six= root=tcp_v4_rcv
	else S=fd00::1 D=fd00::2 six=-6 root=tcp_v6_rcv; fi
	name="tcp stream/ipv$f/$mode"
	case $mode in
	gso) tso=on gro=off ;;
	none) tso=off gro=off ;;
	gro) tso=off gro=on ;;
	esac
	ip netns exec a pfsend offload --dev veth-a --tso $tso > /dev/null &&
	ip netns exec b pfsend offload --dev veth-b --gro $gro > /dev/null ||
		fail "$name: offloads tso $tso gro $gro"
	odd_begin "$name" --proto tcp --saddr $S --daddr $D --dport 9000 --count 0 \
		--dev veth-b --netns /run/netns/b || return
	rm -f /tmp/odd.ready
	ip netns exec b pfsend tcp-sink $six --port 9000 --timeout 60 --ready /tmp/odd.ready > /tmp/odd.sink &
	sink=$!
	wait_for_file /tmp/odd.ready || fail "$name: tcp-sink did not start"
	# Segments a put on the wire: OutSegs leaves out retransmissions.
	segs0=$(($(odd_snmp a Tcp OutSegs) + $(odd_snmp a Tcp RetransSegs)))
	ip netns exec a pfsend tcp-stream $six -q --src $S --dst $D --sport $sp --dport 9000 --size 16384 ||
		fail "$name: tcp-stream"
	wait $sink
	segs=$(($(odd_snmp a Tcp OutSegs) + $(odd_snmp a Tcp RetransSegs) - segs0))
	sleep 1
	st=$(odd_stats)
	matched=$(echo "$st" | cut -d' ' -f2)
	odd_expect_stats "$name" "- $matched $matched 0"
	odd_end "$name"
	if grep -qx "received 16384 bytes" /tmp/odd.sink; then
		ok "$name: the stream arrived"
	else
		fail "$name: the stream arrived" "$(cat /tmp/odd.sink)"
	fi
	expect_graphs "$name" $root "$matched"
	odd_expect_events "$name" "proto=tcp saddr=$S daddr=$D sport=$sp dport=9000 ifindex=$(ifindex b veth-b) netns=$(netns_inode b)" "$matched"
	# Before 5.13 (5.10) a veth does GRO only with an XDP program on it
	# (its NAPI): nothing merges.
	case $mode:$(uname -r) in
	gro:5.[0-9].*|gro:5.1[0-2].*)
		expect_eq "$name: one skb per wire segment ($segs; no veth GRO without XDP before 5.13)" "$matched" "$segs" ;;
	none:*)
		expect_eq "$name: one skb per wire segment ($segs)" "$matched" "$segs" ;;
	*)
		if [ "$matched" -gt 0 ] && [ "$matched" -lt "$segs" ]; then
			ok "$name: $matched skbs for $segs wire segments (merged)"
		else
			fail "$name: merged skbs" "$matched skbs for $segs wire segments"
		fi ;;
	esac
}

odd_gso_cases() {
	# Room for a few dozen graphs of TCP receive.
	buffer_resize 8192
	odd_stream_case 4 gso 4100
	odd_stream_case 4 none 4101
	odd_stream_case 4 gro 4102
	odd_stream_case 6 gro 4103
	ip netns exec a pfsend offload --dev veth-a --tso on > /dev/null
	ip netns exec b pfsend offload --dev veth-b --gro off > /dev/null
	buffer_restore
}

# --- another netns ---------------------------------------------------------------

# A fragmented datagram c -> d matches a --netns d filter (with d's
# ifindex and netns in the event); the same into b does not.
odd_netns_case() {
	name="fragments/netns d"
	odd_begin "$name" --proto udp --dport 9000 --count 0 --netns /run/netns/d || return
	odd_raw4 --sport 4000 --dport 9000 --size 3000 --frag 1232
	odd_raw c --src 10.9.0.1 --dst 10.9.0.2 --sport 4001 --dport 9000 --size 3000 --frag 1232
	odd_raw c -6 --src fd00::1 --dst fd00::2 --sport 4002 --dport 9000 --size 3000 --frag 1232 --ext hbh
	sleep 1
	odd_expect_stats "$name" "3 2 2 0"
	odd_end "$name"
	odd_expect_roots "$name" "udp_rcv udpv6_rcv"
	want="ifindex=$(ifindex d veth-d) netns=$(netns_inode d)"
	odd_expect_events "$name" "saddr=10.9.0.1 daddr=10.9.0.2 sport=4001 dport=9000 $want" 1
	odd_expect_events "$name" "saddr=fd00::1 daddr=fd00::2 sport=4002 dport=9000 $want" 1
}

oddpkt_cases() {
	ODD_MAC_B=$(mac b veth-b)
	ODD_MAC_D=$(mac d veth-d)
	for odd_c in ${*:-frag4 frag6 ext6 replay6 short4 short6 gso netns}; do
		case $odd_c in
		frag4) timed odd_frag_case 4 ;;
		frag6) timed odd_frag_case 6 ;;
		ext6) timed odd_ext6_case ;;
		replay6) timed odd_replay6_case ;;
		short4) timed odd_short_case 4 ;;
		short6) timed odd_short_case 6 ;;
		gso) timed odd_gso_cases ;;
		netns) timed odd_netns_case ;;
		*) fail "oddpkt: unknown case '$odd_c'" ;;
		esac
	done
	check_dmesg "oddpkt: dmesg clean"
}

if [ -z "${ODDPKT_SOURCED:-}" ]; then
	. /pktfilt/selftests/vm/lib.sh
	. /pktfilt/selftests/vm/tests/common.sh
	. /pktfilt/selftests/vm/tests/core.sh
	echo "kernel $(uname -r)"
	topo_setup
	oddpkt_cases "$@"
	# No trace_teardown: the VM ends here, and every tracer switch is a
	# chance of the emulator fault of selftests/vm/README.md.
	check_dmesg
	summary
fi
