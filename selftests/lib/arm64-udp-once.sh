# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
# Guest script for arm64-vm: core.sh's UDP/IPv4 case on lo, reduced. Near
# misses, then one matching packet: exactly one udp_rcv graph, the event's
# tuple, the counters.
T=/sys/kernel/tracing
fails=0
check() { if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAIL: $1: got '$2', want '$3'"; fails=$((fails + 1)); fi; }
pf_stat() { pktfilt show | sed -n "s/^ *$1:* *\([0-9][0-9]*\).*/\1/p" | head -1; }

insmod /pktfilt.ko || { echo "FAIL: insmod"; exit 1; }
echo 0 > $T/tracing_on
cat /proc/sys/kernel/pid_max > $T/set_ftrace_pid
echo 0 > $T/options/funcgraph-irqs
echo udp_rcv > $T/set_graph_function
echo function_graph > $T/current_tracer
echo > $T/trace
echo 1 > $T/events/pktfilt/enable
echo 1 > $T/tracing_on
pktfilt set --proto udp --saddr 127.0.0.1 --daddr 127.0.0.1 --sport 4000 --dport 9000 ||
	{ echo "FAIL: pktfilt set"; exit 1; }
pfsend udp --src 127.0.0.1 --dst 127.0.0.1 --sport 4000 --dport 9001 --count 50
pfsend udp --src 127.0.0.1 --dst 127.0.0.1 --sport 4001 --dport 9000 --count 50
pfsend tcp --src 127.0.0.1 --dst 127.0.0.1 --sport 4000 --dport 9000 --count 5
check "near misses traced nothing" "$(pf_stat traced)" 0
pfsend udp --src 127.0.0.1 --dst 127.0.0.1 --sport 4000 --dport 9000 --count 1
pfsend udp --src 127.0.0.1 --dst 127.0.0.1 --sport 4000 --dport 9001 --count 20
sleep 1
echo 0 > $T/tracing_on
cat $T/trace > /tmp/trace.txt
check "one udp_rcv graph" "$(grep -c 'udp_rcv() {' /tmp/trace.txt)" 1
check "graph has nested calls" "$(grep -c '__udp4_lib_lookup\|__udp4_lib_rcv' /tmp/trace.txt | sed 's/^0$/none/;s/^[1-9][0-9]*$/some/')" some
ev=$(grep 'pktfilt_' /tmp/trace.txt | head -3)
echo "events: $ev"
case "$ev" in *"proto=udp saddr=127.0.0.1 daddr=127.0.0.1 "*) echo "ok: event tuple" ;; *) echo "FAIL: event tuple"; fails=$((fails + 1)) ;; esac
check "matched counter" "$(pf_stat matched)" 1
check "traced counter" "$(pf_stat traced)" 1
pktfilt show
head -c 3000 /tmp/trace.txt
rmmod pktfilt || { echo "FAIL: rmmod"; fails=$((fails + 1)); }
exit $fails
