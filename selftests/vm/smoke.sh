#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Smoke test of the VM harness itself (not of pktfilt):
#	selftests/vm/run --kernel all -- sh selftests/vm/smoke.sh
# Checks the VM's tools, veth between two netns over IPv4 and IPv6, every
# pfsend mode, tracefs, and that pktfilt.ko loads and unloads if it was built.

. /pktfilt/selftests/vm/lib.sh

echo "# kernel $(uname -r)"

check "iproute2 ip" sh -c 'ip -V | grep -q iproute2'
check "pfsend present" test -x /usr/bin/pfsend
check "/run/netns" test -d /run/netns
check "tracefs mounted" test -f "$TRACEFS/trace"

# Every dynamically linked program must find its libraries.
for p in /sbin/ip /sbin/tc /usr/bin/pktfilt; do
	[ -e "$p" ] || continue
	if /lib64/ld-linux-x86-64.so.2 --list "$p" | grep -q 'not found'; then
		fail "libraries of $p" "$(/lib64/ld-linux-x86-64.so.2 --list "$p" | grep 'not found')"
	else
		ok "libraries of $p"
	fi
done

check "ns_setup" ns_setup
check "ping a -> b" ip netns exec a ping -c1 -W5 10.9.0.2
check "ping6 a -> b" ip netns exec a ping6 -c1 -W5 fd00::2

# Echo requests netns b received; /proc/net/snmp{,6} are per netns.
# shellcheck disable=SC2016 # awk programs
icmp_in_echos() {
	ip netns exec b awk '$1 == "Icmp:" {
		if (!n++) { for (i = 2; i <= NF; i++) if ($i == "InEchos") col = i }
		else print $col
	}' /proc/net/snmp
}
# shellcheck disable=SC2016
icmp6_in_echos() {
	ip netns exec b awk '$1 == "Icmp6InEchos" { print $2 }' /proc/net/snmp6
}

# pfsend udp / udp-listen, both families.
for fam in 4 6; do
	if [ $fam = 4 ]; then dst=10.9.0.2 opt=; else dst=fd00::2 opt=-6; fi
	rm -f /tmp/ready /tmp/recv
	# shellcheck disable=SC2086 # $opt is empty or -6
	ip netns exec b pfsend udp-listen $opt --port 5000 --count 3 --timeout 10 \
		--ready /tmp/ready >/tmp/recv &
	listener=$!
	if wait_for_file /tmp/ready; then
		# shellcheck disable=SC2086
		check "pfsend udp v$fam" ip netns exec a pfsend udp $opt --dst $dst \
			--src "${dst%2}1" --sport 4000 --dport 5000 --count 3 --mark 7
	else
		fail "pfsend udp-listen v$fam" "not ready"
	fi
	wait $listener
	rc=$?
	if [ $rc -eq 0 ] && grep -qx 'received 3' /tmp/recv; then
		ok "pfsend udp-listen v$fam"
	else
		fail "pfsend udp-listen v$fam" "exit $rc, $(cat /tmp/recv)"
	fi
done

# pfsend tcp to a closed port: refused every time, same source port reused.
out=$(ip netns exec a pfsend tcp --dst 10.9.0.2 --src 10.9.0.1 --sport 40000 --dport 81 --count 3)
case $? in
0) case $out in *"3 refused"*) ok "pfsend tcp refused" ;; *) fail "pfsend tcp refused" "$out" ;; esac ;;
*) fail "pfsend tcp refused" "exit $?: $out" ;;
esac
check "pfsend tcp -6 refused" ip netns exec a pfsend tcp -6 --dst fd00::2 --dport 81 --count 2
# 10.9.0.3 is on veth-a's subnet but nobody answers ARP: a timeout, an error.
if ip netns exec a pfsend tcp --dst 10.9.0.3 --dport 81 2>/dev/null; then
	fail "pfsend tcp timeout is an error"
else
	ok "pfsend tcp timeout is an error"
fi

# pfsend icmp: b's InEchos counters go up by the count.
before=$(icmp_in_echos)
check "pfsend icmp" ip netns exec a pfsend icmp --dst 10.9.0.2 --count 4 --id 77 --interval-us 1000
sleep 0.2
after=$(icmp_in_echos)
check "b got 4 echo requests" test "$((after - before))" -eq 4
before=$(icmp6_in_echos)
check "pfsend icmp -6" ip netns exec a pfsend icmp -6 --dst fd00::2 --count 2
sleep 0.2
after=$(icmp6_in_echos)
check "b got 2 echo6 requests" test "$((after - before))" -eq 2

ns_cleanup
check "ns_cleanup" sh -c '! ip netns list | grep -q .'

check "tracefs_prepare" tracefs_prepare
check "function_graph on" grep -qx function_graph "$TRACEFS/current_tracer"
check "tracefs_reset" tracefs_reset
check "nop again" grep -qx nop "$TRACEFS/current_tracer"

if [ -e /pktfilt/pktfilt.ko ]; then
	check "insmod pktfilt.ko" insmod /pktfilt/pktfilt.ko
	check "rmmod pktfilt" rmmod pktfilt
else
	echo "# no /pktfilt/pktfilt.ko in this VM; module load not checked"
fi

check_dmesg
summary
