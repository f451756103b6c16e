# What the topology drop-in tests share (sourced; needs $launcher).
#
# launch NP OUT [VAR=VALUE...] -- PROGRAM [ARGS...]: the flags of
# tools/run_mpi.sh, with VAR=VALUE set for the ranks only (not for the
# launcher itself): -x for Open MPI, -genv for MPICH. Output in OUT,
# OUT.err, the command in OUT.cmd.
launch() {
  local np=$1 out=$2
  shift 2
  local vars=()
  while [ "$1" != -- ]; do
    vars+=("$1")
    shift
  done
  shift
  local cmd v
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
    *)
      echo "$0: unknown launcher '$launcher'" >&2
      exit 2
      ;;
  esac
  echo "+ ${vars[*]} ${cmd[*]} $*" >"$out.cmd"
  timeout --kill-after=5 120 "${cmd[@]}" "$@" >"$out" 2>"$out.err"
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

