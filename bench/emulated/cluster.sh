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

case ${1:-} in
  up) up "${2:?N}" ;;
  down) down ;;
  hostfile)
    for ns in $(nodes); do echo "$ns slots=${2:?SLOTS}"; done
    ;;
  agent) echo "$here/agent.sh" ;;
  subnet) echo "$SUBNET.0/24" ;;
  *)
    echo "usage: cluster.sh up N | down | hostfile SLOTS | agent | subnet" >&2
    exit 2
    ;;
esac
