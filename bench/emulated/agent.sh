#!/bin/bash
# Open MPI's remote-shell agent for the emulated cluster: "agent.sh HOST CMD..."
# runs CMD inside node HOST's network namespace with its own hostname (own
# UTS namespace: otherwise shared-memory segments of different "nodes"
# collide).
host=$1
shift
# Open MPI may pass ssh-style options first; skip them.
while [ "${1:-}" != "" ] && [ "${1#-}" != "$1" ]; do shift; done
exec ip netns exec "$host" unshare --uts sh -c "hostname $host; $*"
