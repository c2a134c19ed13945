# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
# Guest script for arm64-vm: --at rx on lo, where the rx device hook (an
# IPMODIFY ftrace_ops on __netif_receive_skb) sends the matching packet to
# netif_receive_skb_core(), or, where arm64 lacks the ftrace_regs accessors
# (6.1), ip_rcv() is the root. Then the same through pktfilt trace.
T=/sys/kernel/tracing
fails=0
check() { if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAIL: $1: got '$2', want '$3'"; fails=$((fails + 1)); fi; }
pf_stat() { pktfilt show | sed -n "s/^ *$1:* *\([0-9][0-9]*\).*/\1/p" | head -1; }
# 6.1 (no ftrace_regs accessors on arm64): the hook is off, ip_rcv() is the root.
case $(uname -r) in
6.1.*) want_root=ip_rcv ;;
*) want_root=netif_receive_skb_core ;;
esac

insmod /pktfilt.ko || { echo "FAIL: insmod"; exit 1; }
echo 0 > $T/tracing_on
cat /proc/sys/kernel/pid_max > $T/set_ftrace_pid
echo 0 > $T/options/funcgraph-irqs
echo "netif_receive_skb_core ip_rcv" > $T/set_graph_function
echo function_graph > $T/current_tracer
echo > $T/trace
echo 1 > $T/events/pktfilt/enable
echo 1 > $T/tracing_on
pktfilt set --at rx --proto udp --daddr 127.0.0.1 --sport 4000 --dport 9000 ||
	{ echo "FAIL: pktfilt set --at rx"; exit 1; }
pfsend udp --src 127.0.0.1 --dst 127.0.0.1 --sport 4000 --dport 9001 --count 50
check "near misses traced nothing" "$(pf_stat traced)" 0
pfsend udp --src 127.0.0.1 --dst 127.0.0.1 --sport 4000 --dport 9000 --count 1
pfsend udp --src 127.0.0.1 --dst 127.0.0.1 --sport 4000 --dport 9001 --count 20
sleep 1
echo 0 > $T/tracing_on
cat $T/trace > /tmp/trace.txt
echo 0 > $T/events/pktfilt/enable
roots=$(grep -E '^ *[0-9]+\) +[^|]*\|  [a-z_]+\(\) \{' /tmp/trace.txt | sed 's/.*|  //;s/() {//' | tr '\n' ' ')
echo "roots: $roots"
check "one graph rooted at $want_root" "$roots" "$want_root "
check "traced counter" "$(pf_stat traced)" 1
grep -q 'udp_rcv() {' /tmp/trace.txt && echo "ok: udp_rcv inside the graph" ||
	{ echo "FAIL: udp_rcv inside the graph"; fails=$((fails + 1)); }
grep -n 'pktfilt_packet' /tmp/trace.txt
head -40 /tmp/trace.txt
rmmod pktfilt || { echo "FAIL: rmmod"; fails=$((fails + 1)); }
echo > $T/set_graph_function
echo nop > $T/current_tracer
echo > $T/set_ftrace_pid

insmod /pktfilt.ko || { echo "FAIL: insmod (2)"; exit 1; }
pktfilt trace --at rx --proto udp --daddr 127.0.0.1 --dport 9000 --count 1 \
	--functions 'ip_*,__udp4_lib_*,udp_*' --format json --timeout 120 -- \
	pfsend udp --dst 127.0.0.1 --dport 9000 --count 3 -q > /tmp/t.json 2> /tmp/t.err
rc=$?
if [ "$rc" = 0 ] && [ "$(grep -c '"complete":true' /tmp/t.json)" = 1 ] &&
   grep -q "\"graph\":{\"func\":\"$want_root\"" /tmp/t.json; then
	echo "ok: pktfilt trace: one whole graph rooted at $want_root"
else
	echo "FAIL: pktfilt trace: exit $rc: $(head -c 600 /tmp/t.err) $(head -c 600 /tmp/t.json)"
	fails=$((fails + 1))
fi
rmmod pktfilt || { echo "FAIL: rmmod (2)"; fails=$((fails + 1)); }
exit $fails
