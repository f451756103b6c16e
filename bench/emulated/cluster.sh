#!/bin/bash
# An emulated multi-node cluster on one machine: one network namespace per
# node (each with its own hostname through the launcher agent), a veth per
# node into a Linux bridge in the root namespace, addresses from a private
# /24 used only inside these namespaces. Real Open MPI then runs over TCP
# between nodes and shared memory inside them.
#   cluster.sh up N      create nodes rs-node0 .. rs-node(N-1) (idempotent)
#   cluster.sh down      remove them (idempotent)
#   cluster.sh hostfile SLOTS   print an Open MPI hostfile
#   cluster.sh agent     path of the launcher agent for --mca plm_rsh_agent
#   cluster.sh tiers RACK_NODES RATE   racks of RACK_NODES consecutive nodes:
#                        traffic between racks leaves each node through a
#                        token bucket (tbf) of RATE (tc syntax, e.g. 200mbit),
#                        traffic inside a rack is not limited
#   cluster.sh tiers off remove the limits
# Needs root. Every command is bounded in time.
set -euo pipefail
PREFIX=rs-node
BRIDGE=rs-br0
SUBNET=10.231.77
here=$(cd "$(dirname "$0")" && pwd)

nodes() { ip netns list 2>/dev/null | awk '{print $1}' | grep "^$PREFIX" | sort -V || true; }

up() {
  local n=$1
  [ "$n" -ge 1 ] && [ "$n" -le 200 ] || { echo "cluster.sh: N must be in 1..200" >&2; exit 2; }
  ip link show "$BRIDGE" >/dev/null 2>&1 || {
    ip link add "$BRIDGE" type bridge
    ip addr add "$SUBNET.254/24" dev "$BRIDGE"
    ip link set "$BRIDGE" up
  }
  for ((i = 0; i < n; i++)); do
    local ns=$PREFIX$i
    ip netns list | awk '{print $1}' | grep -qx "$ns" && continue
    ip netns add "$ns"
    ip link add "rsv$i" type veth peer name eth0 netns "$ns"
    ip link set "rsv$i" master "$BRIDGE" up
    ip -n "$ns" addr add "$SUBNET.$((i + 1))/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
  done
  echo "cluster.sh: $(nodes | wc -l) node(s) up on $SUBNET.0/24"
}

down() {
  for ns in $(nodes); do
    local i=${ns#"$PREFIX"}
    ip link del "rsv$i" 2>/dev/null || true
    ip netns del "$ns"
  done
  ip link del "$BRIDGE" 2>/dev/null || true
  echo "cluster.sh: down"
}

# An htb root per node: class 1:10 (default, inside the rack) unlimited,
# class 1:20 (to other racks, chosen by destination address) feeding a tbf.
tiers() {
  local rack_nodes=$1 rate=${2:-}
  local all
  all=$(nodes)
  for ns in $all; do
    tc -n "$ns" qdisc del dev eth0 root 2>/dev/null || true
  done
  [ "$rack_nodes" = off ] && { echo "cluster.sh: tiers off"; return; }
  [[ "$rack_nodes" =~ ^[1-9][0-9]*$ ]] || { echo "cluster.sh: RACK_NODES must be a positive integer" >&2; exit 2; }
  [ -n "$rate" ] || { echo "cluster.sh: tiers needs a RATE (e.g. 200mbit)" >&2; exit 2; }
  for ns in $all; do
    local i=${ns#"$PREFIX"}
    tc -n "$ns" qdisc add dev eth0 root handle 1: htb default 10
    tc -n "$ns" class add dev eth0 parent 1: classid 1:10 htb rate 100gbit
    tc -n "$ns" class add dev eth0 parent 1: classid 1:20 htb rate 100gbit
    tc -n "$ns" qdisc add dev eth0 parent 1:20 handle 20: tbf rate "$rate" burst 64kb latency 50ms
    for other in $all; do
      local j=${other#"$PREFIX"}
      [ $((i / rack_nodes)) -eq $((j / rack_nodes)) ] && continue
      tc -n "$ns" filter add dev eth0 parent 1: protocol ip prio 1 u32 \
        match ip dst "$SUBNET.$((j + 1))/32" flowid 1:20
    done
  done
  echo "cluster.sh: racks of $rack_nodes node(s), $rate between racks"
}

case ${1:-} in
  up) up "${2:?N}" ;;
  down) down ;;
  hostfile)
    for ns in $(nodes); do echo "$ns slots=${2:?SLOTS}"; done
    ;;
  agent) echo "$here/agent.sh" ;;
  tiers) tiers "${2:?RACK_NODES or off}" "${3:-}" ;;
  subnet) echo "$SUBNET.0/24" ;;
  *)
    echo "usage: cluster.sh up N | down | hostfile SLOTS | agent | tiers RACK_NODES RATE | tiers off | subnet" >&2
    exit 2
    ;;
esac
