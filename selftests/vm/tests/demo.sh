# SPDX-License-Identifier: GPL-2.0
# make demo: in the VM, background traffic between two network namespaces,
# one matching UDP packet, and its function_graph: the README's recipe.
. /pktfilt/selftests/vm/lib.sh
. /pktfilt/selftests/vm/tests/common.sh
topo_setup
insmod $PKTFILT_KO
trace_start
echo '$ pktfilt set --proto udp --saddr 10.9.0.1 --daddr 10.9.0.2 --dport 9000 --netns /run/netns/b --dev veth-b'
pktfilt set --proto udp --saddr 10.9.0.1 --daddr 10.9.0.2 --dport 9000 --netns /run/netns/b --dev veth-b
echo '# 300 background packets (other ports, TCP, another source), then one to port 9000'
ip netns exec a pfsend udp --src 10.9.0.1 --dst 10.9.0.2 --sport 4000 --dport 9001 --count 100 >/dev/null
ip netns exec a pfsend tcp --src 10.9.0.1 --dst 10.9.0.2 --sport 4000 --dport 9000 --count 100 >/dev/null
ip netns exec a pfsend udp --src 10.9.0.3 --dst 10.9.0.2 --sport 4000 --dport 9000 --count 100 >/dev/null
ip netns exec a pfsend udp --src 10.9.0.1 --dst 10.9.0.2 --sport 4000 --dport 9000 --count 1 >/dev/null
sleep 1
trace_stop
echo '$ pktfilt show'
pktfilt show
echo '$ cat /sys/kernel/tracing/trace'
cat /tmp/trace.txt
echo "# $(grep -c '' /tmp/trace.txt) lines: one packet's graph out of $(pktfilt show | sed -n 's/^ *seen: *//p') packets seen"
rmmod pktfilt
