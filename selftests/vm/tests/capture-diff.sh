# SPDX-License-Identifier: GPL-2.0
# Capture the real traces that the unit tests of "pktfilt diff" and of
# --format chrome read (selftests/unit/fixtures/diff/). Run in the guest
# by the host script selftests/unit/fixtures/capture:
#
#   selftests/unit/fixtures/capture --diff 6.12
#
# which runs
#
#   selftests/vm/run --kernel 6.12 -- sh selftests/vm/tests/capture-diff.sh
#
# Each trace is "pktfilt trace --at rx --raw" of two UDP datagrams from
# namespace a (10.9.0.1:4000) into b (10.9.0.2), the second sent 0.3 s
# after the first:
#
#   nosock   to port 9000, where a socket listens (delivered, CONSUMED),
#            then to port 9001, where none does (NO_SOCKET)
#   nft      to port 9000 (accepted, delivered), then to port 7778, which
#            an nftables rule in b's input chain drops (NETFILTER_DROP)
#   twice    the same flow twice: two datagrams to port 9000, both read
#   abstime  the old recipe (pktfilt set, --at l4) with funcgraph-abstime
#            on: one datagram to port 9000, each line with its timestamp
#
# printed between the marker lines of capture-fixtures.sh. Ends with
# "vmtest: N passed, M failed". POSIX sh.

. /pktfilt/selftests/vm/lib.sh
. /pktfilt/selftests/vm/tests/common.sh

OUT=/tmp/trace.txt
SEND="pfsend udp --src 10.9.0.1 --dst 10.9.0.2 --sport 4000 --count 1 -q"

emit() {
	echo "@@pktfilt-fixture begin $1@@"
	cat "$OUT"
	echo "@@pktfilt-fixture end $1 lines=$(wc -l <"$OUT" | tr -d ' ')" \
	     "md5=$(md5sum <"$OUT" | cut -d' ' -f1)@@"
}

# listen PORT COUNT: a UDP socket in b reading COUNT datagrams on PORT.
listen() {
	rm -f /tmp/ready
	ip netns exec b pfsend udp-listen --port "$1" --count "$2" --timeout 20 \
		--ready /tmp/ready >/tmp/listen.out 2>&1 &
	LISTENER=$!
	wait_for_file /tmp/ready
}

# two NAME PORT1 PORT2: trace the datagrams to PORT1 and PORT2, in order.
two() {
	_name=$1
	rm -f "$OUT"
	if pktfilt trace -q --at rx --proto udp --saddr 10.9.0.1 --daddr 10.9.0.2 \
		--netns /run/netns/b --count 2 --timeout 30 --raw "$OUT" \
		-o /tmp/report.txt -- \
		sh -c "ip netns exec a $SEND --dport $2; sleep 0.3; ip netns exec a $SEND --dport $3"
	then
		ok "$_name: pktfilt trace"
	else
		fail "$_name: pktfilt trace" "$(head -c 2000 /tmp/report.txt)"
	fi
	expect_eq "$_name: two events" "$(trace_events | wc -l | tr -d ' ')" 2
	grep '^#' /tmp/report.txt
}

echo "kernel $(uname -r)"
topo_setup
insmod $PKTFILT_KO

listen 9000 1
two nosock 9000 9001
wait $LISTENER
grep -q 'reason=CONSUMED' "$OUT" && grep -q "reason=$(drop_reason NO_SOCKET)" "$OUT"
check "nosock: CONSUMED and NO_SOCKET" test $? = 0
emit nosock

ip netns exec b nft -f - <<-EOF
	table inet pfdiff {
		chain in {
			type filter hook input priority 0; policy accept;
			udp dport 7778 counter drop
		}
	}
EOF
listen 9000 1
two nft 9000 7778
wait $LISTENER
grep -q 'reason=CONSUMED' "$OUT" && grep -q "reason=$(drop_reason NETFILTER_DROP)" "$OUT"
check "nft: CONSUMED and NETFILTER_DROP" test $? = 0
emit nft
ip netns exec b nft delete table inet pfdiff

listen 9000 2
two twice 9000 9000
wait $LISTENER
expect_eq "twice: both CONSUMED" "$(grep -c 'reason=CONSUMED' "$OUT")" 2
emit twice

# funcgraph-abstime: the recipe by hand (pktfilt trace sets it off).
listen 9000 1
trace_start
echo 1 >$T/options/funcgraph-abstime
pktfilt set --proto udp --saddr 10.9.0.1 --daddr 10.9.0.2 --dport 9000 --count 1
ip netns exec a $SEND --dport 9000
wait $LISTENER
sleep 1
trace_stop
echo 0 >$T/options/funcgraph-abstime
expect_eq "abstime: one event" "$(trace_events | wc -l | tr -d ' ')" 1
emit abstime
trace_teardown

rmmod pktfilt
check_dmesg
summary
