# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# One packet across machines: the guest side of selftests/vm/multi, which
# boots two or three guests, each its own kernel, joined by QEMU socket
# networks (run --nic-socket), runs this script in each with its role, and
# merges the trace files they print (pktfilt merge, checked on the host):
#
#	sh selftests/vm/tests/multi.sh two a|b
#	sh selftests/vm/tests/multi.sh three a|r|b
#
# two: A (10.77.0.1) --- B (10.77.0.2), one link. B DNATs the ping, UDP
# port 7001 and TCP port 7002 to a namespace behind it (srv, 10.78.0.2,
# through a veth), and drops UDP port 7003 by an nftables rule in its
# input chain (table inet mtf). A sends a ping, a UDP datagram, a TCP
# connection (100 bytes, closed) and the datagram to be dropped.
#
# three: A (10.80.1.1) --- R (10.80.1.254, 10.80.2.254) --- B (10.80.2.2),
# two links, R forwarding; B routes to srv behind it (10.80.3.2, no NAT).
# A pings srv and sends it a UDP datagram.
#
# Why srv: a packet the kernel sends from inside a traced packet's graph
# (an echo reply, a SYN-ACK or an ACK sent while receiving) is part of
# that graph, not a packet of its own (module/tx.c: the tx hook does
# nothing while a graph is open), so it has no graph, no event and no
# bytes on the machine that sent it. srv's answers are sent so inside
# srv's receive, and become B's packets when B's root namespace receives
# them from the veth and forwards them: B's side of each journey. A's own
# ACKs sent while it receives (the handshake's, the last one) are such
# packets: journeys of B alone (selftests/vm/multi-check allows those).
#
# Each machine traces --at rx,tx (R: rx, the graph of a forwarded packet
# holds its output), --count 0, around its traffic, with pktfilt trace's
# lazy arming (the first packet held while the scope is patched). The
# receivers arm first and then say so to A over the link, UDP datagrams
# to A's port 7999 (B) and 7997 (R) every half second (outside the traced
# filter), until A's "done" reaches their port 7998; A waits for each
# before it sends. A trace's raw file comes out on the console, gzip'd
# and in base64, between "@@pktfilt-multi begin NAME@@" and
# "@@pktfilt-multi end NAME MD5@@" (MD5 of the gzip'd bytes): the host
# checks the sum, so a console line mangled on the way fails the test.
#
# The NICs: MACs 52:54:00:12:M:N, M 0a for A, 0b for B, 0c for R, N the
# NIC (the host gives them so); each peer's address has a static
# neighbour entry: no ARP in the traces or the way.
. /pktfilt/selftests/vm/lib.sh
. /pktfilt/selftests/vm/tests/common.sh

CASE=${1:-} ROLE=${2:-}
W=/tmp/multi
mkdir -p $W
TRACE_TIMEOUT=${MULTI_TIMEOUT:-240}

mac_of() {
	case $1 in
	a) echo "52:54:00:12:0a:0$2" ;;
	b) echo "52:54:00:12:0b:0$2" ;;
	r) echo "52:54:00:12:0c:0$2" ;;
	esac
}

# nic MAC: the name of the NIC with that MAC (the driver loaded first).
nic() {
	_i=0
	while [ $_i -lt 50 ]; do
		for _d in /sys/class/net/*; do
			[ "$(cat "$_d/address" 2>/dev/null)" = "$1" ] && { echo "${_d##*/}"; return 0; }
		done
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

# link_up DEV ADDR/LEN PEER_ADDR PEER_MAC: the NIC up with its address,
# the peer's address a static neighbour, GRO off (TCP segment by
# segment: merge matches segments, not what GRO made of them; a socket
# netdev offers no TSO, so there is none to turn off).
link_up() {
	ip link set "$1" up &&
	ip addr add "$2" dev "$1" &&
	ip neigh replace "$3" lladdr "$4" dev "$1" nud permanent &&
	pfsend offload --dev "$1" --gro off >/dev/null || return 1
	_i=0
	while [ $_i -lt 50 ]; do
		ip link show "$1" | grep -q LOWER_UP && return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

sysctls() {
	for _f in ipv4/conf/all/rp_filter ipv4/conf/default/rp_filter \
		ipv6/conf/all/router_solicitations ipv6/conf/default/router_solicitations; do
		echo 0 > /proc/sys/net/$_f
	done
}

# trace_run NAME ARGS...: pktfilt trace ARGS (--at, the expression),
# every matching packet (--count 0) until its command, $W/cmd.sh, which
# it runs once armed, exits; its raw trace in $W/NAME.trace, its report
# in $W/NAME.txt.
trace_run() {
	_tn=$1
	shift
	pktfilt trace -q --count 0 --timeout "$TRACE_TIMEOUT" --hold 30 \
		--raw "$W/$_tn.trace" -o "$W/$_tn.txt" "$@" -- sh $W/cmd.sh \
		> $W/trace.out 2> $W/trace.err
	_rc=$?
	# What the command checked (its ok lines went to trace's stdout).
	cat $W/trace.out
	if [ $_rc = 0 ]; then
		ok "$ROLE: pktfilt trace exit 0"
	else
		fail "$ROLE: pktfilt trace exit $_rc" "$(tail -c 600 $W/trace.err | tr '\n' ';')"
	fi
	_g=$(grep -c 'pktfilt_packet:' "$W/$_tn.trace" 2>/dev/null)
	if [ "${_g:-0}" -gt 0 ]; then
		ok "$ROLE: $_g graph(s) traced"
	else
		fail "$ROLE: graphs traced" "none in $W/$_tn.trace"
	fi
}

# emit NAME: the raw trace NAME on the console for the host.
emit() {
	[ -s "$W/$1.trace" ] || return 0
	gzip -c "$W/$1.trace" > "$W/$1.gz"
	echo "@@pktfilt-multi begin $1@@"
	base64 "$W/$1.gz"
	echo "@@pktfilt-multi end $1 $(md5sum < "$W/$1.gz" | cut -d' ' -f1)@@"
}

# The command each trace runs once armed: written to $W/cmd.sh.
# beacon_cmd DST PORT: the receivers' (B's, R's): say "ready" to DST:PORT
# every half second until A's done arrives on port 7998, then 1 s for the
# last packets to be traced.
beacon_cmd() {
	cat > $W/cmd.sh <<-EOF
	(while :; do pfsend udp -q --dst $1 --dport $2 --sport $2 --count 1; sleep 0.5; done) &
	bpid=\$!
	pfsend udp-listen --port 7998 --count 1 --timeout $((TRACE_TIMEOUT - 20)) > $W/done.out
	kill \$bpid
	sleep 1
	EOF
}

# wait_ready PORT: A waits for a receiver's beacon.
wait_ready() {
	pfsend udp-listen --port "$1" --count 1 --timeout $((TRACE_TIMEOUT - 30)) > "$W/ready$1.out"
	case $(cat "$W/ready$1.out") in
	"received 1") ok "$ROLE: ready from the peer (port $1)"; return 0 ;;
	*) fail "$ROLE: ready from the peer (port $1)" "$(cat "$W/ready$1.out")"; return 1 ;;
	esac
}

# done_to ADDR...: A's done to each, three times (UDP).
done_to() {
	for _d in "$@"; do
		for _n in 1 2 3; do pfsend udp -q --dst "$_d" --dport 7998 --sport 7998 --count 1; done
	done
}

# --- two machines -----------------------------------------------------------------

# Echo requests and replies, not ICMP errors (a beacon that comes after
# its listener ended is answered by a port unreachable).
ECHO='icmp[icmptype] == icmp-echo or icmp[icmptype] == icmp-echoreply'
FILTER2="($ECHO or port 7001 or port 7002 or port 7003)"

# srv_setup NET: B's namespace srv behind a veth, NET.1 on B's side,
# NET.2 srv's (NET: three octets), its default route through B; B
# forwards.
srv_setup() {
	echo 1 > /proc/sys/net/ipv4/ip_forward
	ip netns add srv &&
	ip link add veth-s type veth peer name veth-v netns srv &&
	ip addr add "$1.1/24" dev veth-s &&
	ip link set veth-s up &&
	ip -n srv link set lo up &&
	ip -n srv addr add "$1.2/24" dev veth-v &&
	ip -n srv link set veth-v up &&
	ip -n srv route add default via "$1.1" &&
	ip netns exec srv sh -c 'echo 0 > /proc/sys/net/ipv4/conf/all/rp_filter'
}

two_b() {
	_n=$(nic "$(mac_of b 1)") || { fail "b: the NIC"; return; }
	check "b: link up" link_up "$_n" 10.77.0.2/24 10.77.0.1 "$(mac_of a 1)"
	sysctls
	check "b: srv behind a veth" srv_setup 10.78.0
	modprobe nft_chain_nat 2>/dev/null
	modprobe nft_nat 2>/dev/null
	if nft -f - > $W/nft.err 2>&1 <<-EOF
	table ip mtnat {
		chain pre {
			type nat hook prerouting priority -100; policy accept;
			ip daddr 10.77.0.2 icmp type echo-request dnat to 10.78.0.2
			ip daddr 10.77.0.2 udp dport 7001 dnat to 10.78.0.2
			ip daddr 10.77.0.2 tcp dport 7002 dnat to 10.78.0.2
		}
	}
	table inet mtf {
		chain in {
			type filter hook input priority 0; policy accept;
			udp dport 7003 counter drop
		}
	}
	EOF
	then
		ok "b: DNAT to srv and the drop rule (nft)"
	else
		fail "b: DNAT to srv and the drop rule (nft)" "$(head -c 300 $W/nft.err)"
	fi
	# srv's listeners: the datagram and the connection are received.
	ip netns exec srv pfsend udp-listen --port 7001 --count 1 \
		--timeout "$TRACE_TIMEOUT" --ready $W/udp.ready > $W/udp.out &
	_up=$!
	ip netns exec srv pfsend tcp-sink --port 7002 --timeout "$TRACE_TIMEOUT" \
		--ready $W/tcp.ready > $W/tcp.out &
	_tp=$!
	wait_for_file $W/udp.ready 50
	wait_for_file $W/tcp.ready 50
	check "b: pktfilt.ko" insmod /pktfilt/pktfilt.ko
	beacon_cmd 10.77.0.1 7999
	trace_run b --at rx,tx "host 10.77.0.1 and $FILTER2"
	expect_eq "b: the A's 'done'" "$(cat $W/done.out)" "received 1"
	kill $_up $_tp 2>/dev/null
	wait
	expect_eq "b: srv received the datagram" "$(cat $W/udp.out)" "received 1"
	expect_eq "b: srv received the connection's bytes" "$(cat $W/tcp.out)" "received 100 bytes"
	_d=$(nft list chain inet mtf in | sed -n 's/.*udp dport 7003 counter packets \([0-9]*\) .*/\1/p')
	expect_eq "b: the rule dropped the datagram to port 7003" "$_d" 1
	emit b
}

two_a() {
	_n=$(nic "$(mac_of a 1)") || { fail "a: the NIC"; return; }
	check "a: link up" link_up "$_n" 10.77.0.1/24 10.77.0.2 "$(mac_of b 1)"
	sysctls
	check "a: pktfilt.ko" insmod /pktfilt/pktfilt.ko
	cat > $W/cmd.sh <<-EOF
	MULTI_LIB=1
	. /pktfilt/selftests/vm/tests/multi.sh
	ROLE=a VMTEST_PASSED=$VMTEST_PASSED VMTEST_FAILED=$VMTEST_FAILED
	wait_ready 7999 || exit 1
	if ping -c1 -W20 10.77.0.2 > $W/ping.out 2>&1; then ok "a: ping B, answered"; else fail "a: ping B" "\$(tail -2 $W/ping.out | tr '\n' ';')"; fi
	check "a: UDP to B port 7001" pfsend udp -q --dst 10.77.0.2 --dport 7001 --sport 5001
	_s=\$(pfsend tcp-stream --dst 10.77.0.2 --dport 7002 --sport 5002 --size 100 2>&1)
	expect_eq "a: TCP connection to B port 7002" "\$_s" "pfsend: tcp-stream: sent 100 bytes"
	check "a: UDP to B port 7003 (dropped there)" pfsend udp -q --dst 10.77.0.2 --dport 7003 --sport 5003
	sleep 1
	done_to 10.77.0.2
	echo "\$VMTEST_PASSED \$VMTEST_FAILED" > $W/cmd.counts
	EOF
	trace_run a --at rx,tx "host 10.77.0.2 and $FILTER2"
	cmd_counts
	emit a
}

# cmd_counts: the counts after what $W/cmd.sh checked (it went on from
# this shell's, and its ok lines are out already).
cmd_counts() {
	if [ -s $W/cmd.counts ]; then
		read -r VMTEST_PASSED VMTEST_FAILED < $W/cmd.counts
	else
		fail "$ROLE: the traffic's script ran to its end" "$(cat $W/trace.err | tail -3 | tr '\n' ';')"
	fi
}

# --- three machines ---------------------------------------------------------------

FILTER3="($ECHO or port 7001)"

three_r() {
	_n1=$(nic "$(mac_of r 1)") || { fail "r: the NIC to A"; return; }
	_n2=$(nic "$(mac_of r 2)") || { fail "r: the NIC to B"; return; }
	check "r: link to A up" link_up "$_n1" 10.80.1.254/24 10.80.1.1 "$(mac_of a 1)"
	check "r: link to B up" link_up "$_n2" 10.80.2.254/24 10.80.2.2 "$(mac_of b 1)"
	check "r: route to srv through B" ip route add 10.80.3.0/24 via 10.80.2.2
	sysctls
	echo 1 > /proc/sys/net/ipv4/ip_forward
	check "r: pktfilt.ko" insmod /pktfilt/pktfilt.ko
	beacon_cmd 10.80.1.1 7997
	trace_run r --at rx "host 10.80.1.1 and host 10.80.3.2 and $FILTER3"
	expect_eq "r: the A's 'done'" "$(cat $W/done.out)" "received 1"
	emit r
}

three_b() {
	_n=$(nic "$(mac_of b 1)") || { fail "b: the NIC"; return; }
	check "b: link up" link_up "$_n" 10.80.2.2/24 10.80.2.254 "$(mac_of r 2)"
	check "b: route to A through R" ip route add 10.80.1.0/24 via 10.80.2.254
	sysctls
	check "b: srv behind a veth" srv_setup 10.80.3
	ip netns exec srv pfsend udp-listen --port 7001 --count 1 \
		--timeout "$TRACE_TIMEOUT" --ready $W/udp.ready > $W/udp.out &
	_up=$!
	wait_for_file $W/udp.ready 50
	check "b: pktfilt.ko" insmod /pktfilt/pktfilt.ko
	beacon_cmd 10.80.1.1 7999
	trace_run b --at rx,tx "host 10.80.1.1 and $FILTER3"
	expect_eq "b: the A's 'done'" "$(cat $W/done.out)" "received 1"
	kill $_up 2>/dev/null
	wait
	expect_eq "b: srv received the datagram" "$(cat $W/udp.out)" "received 1"
	emit b
}

three_a() {
	_n=$(nic "$(mac_of a 1)") || { fail "a: the NIC"; return; }
	check "a: link up" link_up "$_n" 10.80.1.1/24 10.80.1.254 "$(mac_of r 1)"
	check "a: route through R" ip route add 10.80.0.0/16 via 10.80.1.254
	sysctls
	check "a: pktfilt.ko" insmod /pktfilt/pktfilt.ko
	cat > $W/cmd.sh <<-EOF
	MULTI_LIB=1
	. /pktfilt/selftests/vm/tests/multi.sh
	ROLE=a VMTEST_PASSED=$VMTEST_PASSED VMTEST_FAILED=$VMTEST_FAILED
	wait_ready 7997 || exit 1
	wait_ready 7999 || exit 1
	if ping -c1 -W20 10.80.3.2 > $W/ping.out 2>&1; then ok "a: ping srv through R and B, answered"; else fail "a: ping srv through R and B" "\$(tail -2 $W/ping.out | tr '\n' ';')"; fi
	check "a: UDP to srv port 7001 through R and B" pfsend udp -q --dst 10.80.3.2 --dport 7001 --sport 5001
	sleep 1
	done_to 10.80.2.2 10.80.1.254
	echo "\$VMTEST_PASSED \$VMTEST_FAILED" > $W/cmd.counts
	EOF
	trace_run a --at rx,tx "host 10.80.3.2 and $FILTER3"
	cmd_counts
	emit a
}

# --- main ---------------------------------------------------------------------------

# MULTI_LIB=1: the functions only (for $W/cmd.sh).
[ -n "${MULTI_LIB:-}" ] && return 0

modprobe virtio_pci 2>/dev/null
if ! modprobe virtio_net; then
	fail "$ROLE: virtio_net"
	summary
	exit 1
fi
echo "# multi $CASE $ROLE: kernel $(uname -r)"
case $CASE-$ROLE in
two-a|two-b|three-a|three-r|three-b) "${CASE}_$ROLE" ;;
*) fail "usage: multi.sh two a|b, or three a|r|b (not '$CASE $ROLE')" ;;
esac
check_dmesg "$ROLE: dmesg clean"
summary
