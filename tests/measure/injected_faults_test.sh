#!/bin/bash
# A slow rank and a noisy link do not change what measurement recovers
# (see injected_faults.cc). Simulated time makes the clean measurement
# exact, so this runs under --config=smpi on the 3-level planted cluster,
# without simulated computation (time advances only in MPI calls and the
# injected waits), so that every run gives the same numbers.
#   injected_faults_test.sh LAUNCHER INJECTED_FAULTS PLATFORM HOSTFILE
set -euo pipefail
launcher=$1 binary=$2 platform=$3 hostfile=$4
if [ "$launcher" != smpi ]; then
  echo "SKIP: fault injection is checked against exact simulated times (--config=smpi)"
  exit 0
fi
timeout 300 smpirun -np 32 -platform "$platform" -hostfile "$hostfile" \
  --cfg=smpi/host-speed:1Gf --cfg=smpi/coll-selector:mpich --cfg=smpi/simulate-computation:no \
  --log=root.thresh:warning \
  "$binary"
