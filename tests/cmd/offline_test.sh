#!/bin/bash
# The offline path end to end: measure (ranks bound to cores) -> relabel
# --placement --rankfile -> the launcher starts an application with that
# file, and every application rank runs on the host and core the labelling
# gives it (new rank i where old rank perm[i] was measured). Both for a
# grid (--grid 2x2) and for traffic: the unmodified application is first
# profiled (librankshape_profile.so preloaded), relabelled by its traffic
# (--traffic), then started again from the file.
#   offline_test.sh LAUNCHER MEASURE RELABEL WHEREAMI PROFILER
set -u
# The sanitizers' settings for the ranks, under --config=sanitize.
source tools/sanitizer_env.sh
launcher=$1 measure=$2 relabel=$3 whereami=$4 profiler=$(realpath "$5")
np=4
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
case $launcher in
  openmpi)
    # As tools/run_mpi.sh, but bound: one rank per core in turn.
    run=(mpirun --allow-run-as-root --oversubscribe --mca btl self,vader
         --mca btl_vader_single_copy_mechanism none)
    bind=(--map-by core --bind-to core:overload-allowed)
    ;;
  mpich)
    run=(mpiexec.mpich)
    bind=(-bind-to core)
    ;;
  *)
    echo "SKIP: simulated ranks are not bound to cores (--config=smpi)"
    exit 0
    ;;
esac
dir=$TEST_TMPDIR
timeout 120 "${run[@]}" "${bind[@]}" -n $np "$measure" --out "$dir/m" --sizes 8,1024 --reps 2 --retries 1 \
  >"$dir/measure.log" 2>&1 || { cat "$dir/measure.log"; fail "measure"; exit 1; }

# Where new rank i must run: the placement line of old rank perm[i].
expected() {  # PERM
  awk 'NR == FNR { if ($0 !~ /^#/) { host[$1] = $2; core[$1] = $3 } next }
       !/^#/ { printf "rank %d host %s cpu %s\n", i, host[$1], core[$1]; ++i }' \
    "$dir/m/placement.txt" "$1"
}

check() {  # NAME FORMAT RELABEL ARGS...
  local name=$1 format=$2
  shift 2
  "$relabel" --costs "$dir/m/costs.txt" --placement "$dir/m/placement.txt" \
    --perm "$dir/$name.perm" --rankfile "$dir/$name.launch" --launcher "$format" "$@" \
    >"$dir/$name.out" || { fail "$name: relabel"; return; }
  local command
  command=$(sed -n 's/^  start the application with: //p' "$dir/$name.out")
  local start=()
  case $format in
    openmpi) start=("${run[@]}" --mca rmaps_rank_file_physical 1 --rankfile "$dir/$name.launch") ;;
    mpich)
      # The binding list is the one relabel prints for this file.
      start=("${run[@]}" -f "$dir/$name.launch" $(echo "$command" | grep -o -- '-bind-to user:[0-9,]*'))
      ;;
  esac
  timeout 60 "${start[@]}" -n $np "$whereami" >"$dir/$name.where" 2>"$dir/$name.err" ||
    { cat "$dir/$name.err"; fail "$name: the application did not start from the file"; return; }
  if diff <(expected "$dir/$name.perm") "$dir/$name.where" >"$dir/$name.diff"; then
    echo "ok: $name: every rank where the labelling says ($command)"
  else
    cat "$dir/$name.diff"
    fail "$name: ranks are not where the labelling says"
  fi
}

# A random labelling moves ranks between cores for sure; auto is the default.
check "$launcher-random" "$launcher" --grid 2x2 --algorithm random --seed 5
check "$launcher-auto" "$launcher" --grid 2x2

# Profile once, relabel by the traffic, start again from the rankfile.
case $launcher in
  openmpi) profile_env=(-x LD_PRELOAD="$profiler" -x RANKSHAPE_PROFILE_OUT="$dir/app.traffic") ;;
  mpich) profile_env=(-genv LD_PRELOAD "$profiler" -genv RANKSHAPE_PROFILE_OUT "$dir/app.traffic") ;;
esac
if timeout 60 "${run[@]}" "${bind[@]}" "${profile_env[@]}" -n $np "$whereami" \
  >"$dir/profiled.out" 2>&1 && grep -q "^ranks $np$" "$dir/app.traffic"; then
  check "$launcher-traffic-random" "$launcher" --traffic "$dir/app.traffic" --algorithm random \
    --seed 5
  check "$launcher-traffic-auto" "$launcher" --traffic "$dir/app.traffic"
else
  cat "$dir/profiled.out"
  fail "profiling the application"
fi
# The check above tells perm from its inverse only if they differ.
if ! awk '!/^#/ { perm[n++] = $1 } END { for (i = 0; i < n; ++i) if (perm[perm[i]] != i) exit 0; exit 1 }' \
  "$dir/$launcher-random.perm"; then
  fail "the random labelling is its own inverse: choose another seed"
fi

# Slurm's form: one host per rank, nothing else (no srun here to run it).
"$relabel" --costs "$dir/m/costs.txt" --placement "$dir/m/placement.txt" --grid 2x2 \
  --perm "$dir/s.perm" --rankfile "$dir/s.hosts" --launcher slurm --quiet || fail "slurm form"
diff <(expected "$dir/s.perm" | awk '{print $4}') "$dir/s.hosts" >/dev/null ||
  fail "slurm hostfile lines differ from the labelling's hosts"
# Bad format: refused, nothing written.
if "$relabel" --costs "$dir/m/costs.txt" --placement "$dir/m/placement.txt" --grid 2x2 \
  --perm "$dir/bad.perm" --rankfile "$dir/bad.launch" --launcher pbs 2>"$dir/bad.err"; then
  fail "--launcher pbs accepted"
fi
[ -e "$dir/bad.launch" ] && fail "a refused run left a launcher file"
[ "$failures" -eq 0 ] || exit 1
echo "ok: offline path under $launcher"
