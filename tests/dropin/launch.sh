# What the drop-in tests share (sourced; needs $launcher).
#
# launch NP OUT [VAR=VALUE...] -- PROGRAM [ARGS...]: the flags of
# tools/run_mpi.sh, with VAR=VALUE set for the ranks only (not for the
# launcher itself): -x for Open MPI, -genv for MPICH, the simulator's
# environment for SMPI. Output in OUT, OUT.err, the command in OUT.cmd.
# Set by the sourcing script if needed: launch_timeout (seconds, default
# 120), smpi_args (smpirun's flags: the platform and settings; required
# for SMPI). SimGrid may exit 0 after killing a deadlocked simulation:
# that counts as a failure, with DEADLOCK added to OUT.err.
launch() {
  local np=$1 out=$2
  shift 2
  local vars=()
  while [ "$1" != -- ]; do
    vars+=("$1")
    shift
  done
  shift
  local cmd v status
  case $launcher in
    openmpi)
      cmd=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$np"
           --mca btl self,vader --mca btl_vader_single_copy_mechanism none)
      for v in "${vars[@]}"; do cmd+=(-x "$v"); done
      ;;
    mpich)
      cmd=(mpiexec.mpich)
      for v in "${vars[@]}"; do cmd+=(-genv "${v%%=*}" "${v#*=}"); done
      cmd+=(-n "$np")
      ;;
    smpi)
      if [ -z "${smpi_args+set}" ]; then
        echo "$0: launch under SMPI needs smpi_args (the platform)" >&2
        exit 2
      fi
      cmd=(env "${vars[@]}" smpirun -np "$np" "${smpi_args[@]}")
      ;;
    *)
      echo "$0: unknown launcher '$launcher'" >&2
      exit 2
      ;;
  esac
  echo "+ ${vars[*]} ${cmd[*]} $*" >"$out.cmd"
  timeout --kill-after=5 "${launch_timeout:-120}" "${cmd[@]}" "$@" >"$out" 2>"$out.err"
  status=$?
  if [ "$launcher" = smpi ] && grep -q "Deadlock detected" "$out.err"; then
    echo "DEADLOCK" >>"$out.err"
    [ "$status" -eq 0 ] && status=1
  fi
  return "$status"
}

show() {  # the command and output of a run, for a failure
  cat "$1.cmd" "$1" "$1.err" >&2
}

json_number() {  # json_number FILE KEY
  grep -o "\"$2\": [-0-9][0-9.eE+-]*" "$1" | head -1 | awk '{print $2}'
}

json_string() {  # json_string FILE KEY
  grep -o "\"$2\": \"[^\"]*\"" "$1" | head -1 | sed 's/.*: "//; s/"$//'
}

json_perm() {  # one entry per line
  tr -d ' \n' <"$1" | grep -o '"perm":\[[^]]*\]' | sed 's/.*\[//; s/\]//' | tr ',' '\n'
}

