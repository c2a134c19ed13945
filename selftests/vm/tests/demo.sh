# SPDX-License-Identifier: GPL-2.0
# make demo: in the VM, background traffic between two network namespaces,
# one TCP SYN to port 9000, and `pktfilt trace` showing that SYN's graph,
# then writing its flame graph (printed between markers for the host).
. /pktfilt/selftests/vm/lib.sh
. /pktfilt/selftests/vm/tests/common.sh
topo_setup
insmod $PKTFILT_KO
# Background: UDP to the same port, TCP to other ports, from both namespaces.
(
	ip netns exec a pfsend udp --src 10.9.0.1 --dst 10.9.0.2 --sport 4000 --dport 9000 --count 200 --interval-us 2000
) >/dev/null 2>&1 &
(
	ip netns exec a pfsend tcp --src 10.9.0.3 --dst 10.9.0.2 --sport 4100 --dport 9000 --count 50
) >/dev/null 2>&1 &
sleep 1
echo '$ pktfilt trace --proto tcp --saddr 10.9.0.1 --daddr 10.9.0.2 --dport 9000 --svg /tmp/syn.svg -- ip netns exec a pfsend tcp --src 10.9.0.1 --dst 10.9.0.2 --sport 4000 --dport 9000'
pktfilt trace --proto tcp --saddr 10.9.0.1 --daddr 10.9.0.2 --dport 9000 \
	--format text --svg /tmp/syn.svg -- \
	ip netns exec a pfsend tcp --src 10.9.0.1 --dst 10.9.0.2 --sport 4000 --dport 9000
rc=$?
wait
echo '$ pktfilt show'
pktfilt show
if [ -s /tmp/syn.svg ]; then
	echo "=== PKTFILT SVG BEGIN"
	cat /tmp/syn.svg
	echo "=== PKTFILT SVG END"
fi
rmmod pktfilt
exit $rc
