# What the benchmark tools' tests share (sourced): $dir, $python, fail and
# check_bad. Needs $launcher, $run_mpi and, for check_bad, $tool (the
# program under test).
dir=$TEST_TMPDIR
python=/usr/bin/python3
[ -x "$python" ] || python=python3
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# check_bad WHAT EXPECTED ARGS...: $tool at 2 ranks with ARGS must fail
# with a message holding EXPECTED.
check_bad() {
  local what=$1 expected=$2
  shift 2
  if "$run_mpi" "$launcher" 2 "$tool" "$@" >"$dir/bad.log" 2>&1; then
    fail "$what: accepted"
  elif ! grep -q -- "$expected" "$dir/bad.log"; then
    fail "$what: no message '$expected'"
    cat "$dir/bad.log" >&2
  else
    echo "ok: $what"
  fi
}
