# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# The topology of issue 13's tests (journey.sh); sourced after ../lib.sh.
#
#   ns a  veth-ar 10.10.1.1 fd10:1::1  --- veth-ra 10.10.1.254 fd10:1::fe  ns r
#   ns r  veth-rb 10.10.2.254 fd10:2::fe --- veth-br 10.10.2.2 fd10:2::2   ns b
#   ns a  veth-ab 10.10.3.1 fd10:3::1  --- veth-ba 10.10.3.2 fd10:3::2     ns b
#   ns x  v1 10.11.0.1 fd11::1  ~~ QEMU hub ~~  v2 10.11.0.2 fd11::2        ns y
#
# r forwards (IPv4 and IPv6); a and b route 10.10.0.0/16 and fd10::/16
# through it (a's and b's own direct link, veth-ab/veth-ba, is on-link).
# v1 and v2 are the VM's two virtio-net NICs (selftests/vm/run --nics 2),
# GRO on: what y receives comes up through NAPI and netif_receive_skb_list().
# Every neighbour is static: no ARP or ND of its own during a test.
# rp_filter off, no router solicitations.

# mac NS DEV (ip -n: no ip netns exec, whose mount namespace and /sys
# remount cost a process more each time under TCG)
jt_mac() { ip -n "$1" -o link show "$2" | sed -n 's/.* link\/ether \([0-9a-f:]*\) .*/\1/p'; }

# jt_sysctls NS: rp_filter off, no router solicitations, in one process.
jt_sysctls() {
	# shellcheck disable=SC2016 # sh -c's program
	ip netns exec "$1" sh -c 'for f in ipv4/conf/all/rp_filter ipv4/conf/default/rp_filter \
		ipv6/conf/all/router_solicitations ipv6/conf/default/router_solicitations; do
		echo 0 > /proc/sys/net/$f || exit 1; done'
}

# jt_neigh NS DEV PEER_NS PEER_DEV ADDR...: ADDRs at PEER_DEV's MAC.
jt_neigh() {
	_ns=$1 _dev=$2 _m=$(jt_mac "$3" "$4")
	shift 4
	for _a in "$@"; do
		ip -n "$_ns" neigh replace "$_a" lladdr "$_m" dev "$_dev" nud permanent || return 1
	done
}

# jt_wait_up NS DEV: up to 5 s for the carrier.
jt_wait_up() {
	_i=0
	while [ $_i -lt 50 ]; do
		ip -n "$1" link show "$2" | grep -q LOWER_UP && return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	echo "journey-topo: $1/$2 did not come up" >&2
	return 1
}

# jt_addrs NS DEV V4/LEN V6/LEN
jt_addrs() {
	ip -n "$1" addr add "$3" dev "$2" &&
	ip -n "$1" addr add "$4" dev "$2" nodad &&
	ip -n "$1" link set "$2" up
}

# jt_veth NS1 DEV1 NS2 DEV2
jt_veth() { ip link add "$2" netns "$1" type veth peer name "$4" netns "$3"; }

# router_setup: namespaces a, r, b and their veths (above).
router_setup() {
	for _ns in a r b; do
		ip netns add $_ns || return 1
		ip -n $_ns link set lo up
		jt_sysctls $_ns
	done
	ip netns exec r sysctl -qw net.ipv4.ip_forward=1 &&
	ip netns exec r sysctl -qw net.ipv6.conf.all.forwarding=1 || return 1
	jt_veth a veth-ar r veth-ra &&
	jt_veth r veth-rb b veth-br &&
	jt_veth a veth-ab b veth-ba || return 1
	jt_addrs a veth-ar 10.10.1.1/24 fd10:1::1/64 &&
	jt_addrs r veth-ra 10.10.1.254/24 fd10:1::fe/64 &&
	jt_addrs r veth-rb 10.10.2.254/24 fd10:2::fe/64 &&
	jt_addrs b veth-br 10.10.2.2/24 fd10:2::2/64 &&
	jt_addrs a veth-ab 10.10.3.1/24 fd10:3::1/64 &&
	jt_addrs b veth-ba 10.10.3.2/24 fd10:3::2/64 || return 1
	for _l in "a veth-ar" "r veth-ra" "r veth-rb" "b veth-br" "a veth-ab" "b veth-ba"; do
		# shellcheck disable=SC2086 # NS DEV
		jt_wait_up $_l || return 1
	done
	ip -n a route add 10.10.0.0/16 via 10.10.1.254 dev veth-ar &&
	ip -n a -6 route add fd10::/16 via fd10:1::fe dev veth-ar &&
	ip -n b route add 10.10.0.0/16 via 10.10.2.254 dev veth-br &&
	ip -n b -6 route add fd10::/16 via fd10:2::fe dev veth-br || return 1
	jt_neigh a veth-ar r veth-ra 10.10.1.254 fd10:1::fe &&
	jt_neigh r veth-ra a veth-ar 10.10.1.1 fd10:1::1 &&
	jt_neigh r veth-rb b veth-br 10.10.2.2 fd10:2::2 &&
	jt_neigh b veth-br r veth-rb 10.10.2.254 fd10:2::fe &&
	jt_neigh a veth-ab b veth-ba 10.10.3.2 fd10:3::2 &&
	jt_neigh b veth-ba a veth-ab 10.10.3.1 fd10:3::1
}

# nics_setup: the VM's virtio-net NICs (MACs 52:54:00:12:34:01 and :02,
# from run --nics 2) into namespaces x (v1) and y (v2), GRO on. Returns 2
# when the VM has no such NICs.
nics_setup() {
	modprobe virtio_pci 2>/dev/null
	modprobe virtio_net || return 2
	_n1='' _n2='' _i=0
	while [ $_i -lt 50 ]; do
		for _d in /sys/class/net/*; do
			case $(cat "$_d/address" 2>/dev/null) in
			52:54:00:12:34:01) _n1=${_d##*/} ;;
			52:54:00:12:34:02) _n2=${_d##*/} ;;
			esac
		done
		[ -n "$_n1" ] && [ -n "$_n2" ] && break
		sleep 0.1
		_i=$((_i + 1))
	done
	[ -n "$_n1" ] && [ -n "$_n2" ] || return 2
	for _ns in x y; do
		ip netns add $_ns || return 1
		ip -n $_ns link set lo up
		jt_sysctls $_ns
	done
	ip link set "$_n1" netns x &&
	ip -n x link set "$_n1" name v1 &&
	ip link set "$_n2" netns y &&
	ip -n y link set "$_n2" name v2 || return 1
	jt_addrs x v1 10.11.0.1/24 fd11::1/64 &&
	jt_addrs y v2 10.11.0.2/24 fd11::2/64 &&
	jt_wait_up x v1 && jt_wait_up y v2 || return 1
	ip netns exec x pfsend offload --dev v1 --gro on >/dev/null &&
	ip netns exec y pfsend offload --dev v2 --gro on >/dev/null || return 1
	jt_neigh x v1 y v2 10.11.0.2 fd11::2 &&
	jt_neigh y v2 x v1 10.11.0.1 fd11::1
}

# ecmp_setup: the ECMP case's own namespaces (journey.sh ecmp_cases):
#
#   ns s  veth-se 10.12.0.1    --- veth-es 10.12.0.254  ns e
#   ns e  veth-e1 10.12.1.254  --- veth-1e 10.12.1.1    ns n1
#   ns e  veth-e2 10.12.2.254  --- veth-2e 10.12.2.1    ns n2
#
# e routes 10.12.9.0/24 over two next hops, n1 and n2, with
# fib_multipath_hash_policy=1 (the 5-tuple), and has a prerouting base
# chain (table ip ecmp). n1 and n2 each note the source port of every UDP
# datagram to ports 9998-9999 in their set ip ecmp seen, and drop it.
# Static neighbours, IPv4 only.
ecmp_setup() {
	for _ns in s e n1 n2; do
		ip netns add $_ns || return 1
		ip -n $_ns link set lo up
		jt_sysctls $_ns
	done
	# shellcheck disable=SC2016 # sh -c's program
	ip netns exec e sh -c 'echo 1 > /proc/sys/net/ipv4/ip_forward &&
		echo 1 > /proc/sys/net/ipv4/fib_multipath_hash_policy' || return 1
	jt_veth s veth-se e veth-es &&
	jt_veth e veth-e1 n1 veth-1e &&
	jt_veth e veth-e2 n2 veth-2e || return 1
	for _l in "s veth-se 10.12.0.1" "e veth-es 10.12.0.254" "e veth-e1 10.12.1.254" \
		"n1 veth-1e 10.12.1.1" "e veth-e2 10.12.2.254" "n2 veth-2e 10.12.2.1"; do
		# shellcheck disable=SC2086 # NS DEV ADDR
		set -- $_l
		ip -n "$1" addr add "$3/24" dev "$2" && ip -n "$1" link set "$2" up || return 1
	done
	for _l in "s veth-se" "e veth-es" "e veth-e1" "n1 veth-1e" "e veth-e2" "n2 veth-2e"; do
		# shellcheck disable=SC2086 # NS DEV
		jt_wait_up $_l || return 1
	done
	ip -n s route add 10.12.9.0/24 via 10.12.0.254 dev veth-se &&
	ip -n e route add 10.12.9.0/24 nexthop via 10.12.1.1 dev veth-e1 \
		nexthop via 10.12.2.1 dev veth-e2 || return 1
	jt_neigh s veth-se e veth-es 10.12.0.254 &&
	jt_neigh e veth-es s veth-se 10.12.0.1 &&
	jt_neigh e veth-e1 n1 veth-1e 10.12.1.1 &&
	jt_neigh e veth-e2 n2 veth-2e 10.12.2.1 || return 1
	ip netns exec e nft -f - <<-EOF || return 1
	table ip ecmp {
		chain pre {
			type filter hook prerouting priority 0; policy accept;
			udp dport 9998-9999 counter
		}
	}
	EOF
	for _ns in n1 n2; do
		ip netns exec $_ns nft -f - <<-EOF || return 1
		table ip ecmp {
			set seen {
				type inet_service
				flags dynamic
			}
			chain pre {
				type filter hook prerouting priority 0; policy accept;
				udp dport 9998-9999 add @seen { udp sport } drop
			}
		}
		EOF
	done
}

journey_cleanup() {
	for _ns in a r b x y s e n1 n2; do ip netns del $_ns 2>/dev/null; done
	return 0
}
