# SPDX-License-Identifier: GPL-2.0
# The module DKMS built from the pktfilt-dkms package (selftests/host/
# deb-test boots it with PKTFILT_VM_KO=/lib/modules/K/updates/dkms/...):
# it loads, and pktfilt trace graphs exactly one UDP datagram with it.
#   PKTFILT_VM_KO=PATH selftests/vm/run --kernel 6.12 -- sh selftests/vm/tests/dkms.sh VERSION
. /pktfilt/selftests/vm/lib.sh
. /pktfilt/selftests/vm/tests/common.sh

want=${1:-}
echo "kernel $(uname -r)"
topo_setup
v=$(modinfo -F version $PKTFILT_KO 2>/dev/null)
m=$(modinfo -F vermagic $PKTFILT_KO 2>/dev/null)
if [ -n "$want" ] && [ "$v" = "$want" ] && [ "${m%% *}" = "$(uname -r)" ]; then
	ok "the DKMS-built module: version $v, vermagic ${m%% *}"
else
	fail "the DKMS-built module: version ${want:-?}, vermagic $(uname -r)" "version '$v', vermagic '$m'"
fi
check "insmod of the DKMS-built module" insmod $PKTFILT_KO
out=/tmp/dkms.json err=/tmp/dkms.err
pktfilt trace --at rx --proto udp --daddr 10.9.0.2 --dport 9000 --count 1 \
	--functions 'ip_*,__udp4_lib_*,udp_*' --format json --timeout 120 -- \
	ip netns exec a pfsend udp --dst 10.9.0.2 --dport 9000 --count 3 -q > $out 2> $err
rc=$?
if [ "$rc" = 0 ] && [ "$(grep -c '"complete":true' $out)" = 1 ] &&
   grep -q '"graph":{"func":"netif_receive_skb_core"' $out; then
	ok "pktfilt trace --count 1 with it: one whole graph rooted at netif_receive_skb_core"
else
	fail "pktfilt trace --count 1 with it: one whole graph rooted at netif_receive_skb_core" \
		"exit $rc: $(head -c 400 $err) $(head -c 400 $out)"
fi
check "rmmod" rmmod pktfilt
check_dmesg
summary
