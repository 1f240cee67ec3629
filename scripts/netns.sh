# SPDX-License-Identifier: MIT
# Sourced by the benchmark scripts that need two hosts on one machine:
#   netns_pair NET   two namespaces $NS_A and $NS_B joined by a veth pair
#                    ($VETH_A, $VETH_B) with NET.1 and NET.2 (NET like
#                    10.232.0), removed with every process in $pids and
#                    the scratch $dir at exit.
# The caller sets pids=() and dir before calling.
netns_cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	ip netns del "$NS_A" 2>/dev/null || true
	ip netns del "$NS_B" 2>/dev/null || true
	[ -z "${dir:-}" ] || rm -rf "$dir"
}

netns_pair() {
	NS_A=dndb-a-$$ NS_B=dndb-b-$$ VETH_A=dba$$ VETH_B=dbb$$
	trap netns_cleanup EXIT
	ip netns add "$NS_A"
	ip netns add "$NS_B"
	ip link add "$VETH_A" netns "$NS_A" type veth peer name "$VETH_B" \
		netns "$NS_B"
	ip -n "$NS_A" addr add "$1.1/24" dev "$VETH_A"
	ip -n "$NS_B" addr add "$1.2/24" dev "$VETH_B"
	ip -n "$NS_A" link set lo up
	ip -n "$NS_B" link set lo up
	ip -n "$NS_A" link set "$VETH_A" up
	ip -n "$NS_B" link set "$VETH_B" up
}
