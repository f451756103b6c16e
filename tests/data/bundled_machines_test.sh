#!/bin/bash
# Every bundled machine is exactly what its MANIFEST line generates.
#   bundled_machines_test.sh SYNTH REGENERATE FILE...
set -euo pipefail
synth=$1 regenerate=$2
shift 2
"$regenerate" "$synth" "$TEST_TMPDIR"
status=0
count=0
for committed in "$@"; do
  fresh=$TEST_TMPDIR/$(basename "$committed")
  count=$((count + 1))
  if ! cmp -s "$committed" "$fresh"; then
    echo "FAIL: $committed differs from what MANIFEST generates; run data/machines/regenerate.sh" >&2
    status=1
  fi
done
generated=$(find "$TEST_TMPDIR" -maxdepth 1 \( -name '*.costs' -o -name '*.placement' -o -name '*.planted' \) | wc -l)
if [ "$generated" -ne "$count" ]; then
  echo "FAIL: MANIFEST generates $generated files, $count are committed" >&2
  status=1
fi
echo "checked $count bundled files"
exit $status
