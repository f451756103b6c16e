#!/bin/bash
# Writes every machine listed in MANIFEST into OUT_DIR with the given synth
# binary:  regenerate.sh SYNTH OUT_DIR
# From the repository root: bazel build //cmd:synth &&
#   data/machines/regenerate.sh bazel-bin/cmd/synth data/machines
set -euo pipefail
synth=$1 out=$2
manifest=$(dirname "$0")/MANIFEST
while read -r name args; do
  case $name in '' | '#'*) continue ;; esac
  extra=()
  [[ " $args " == *" --order "* ]] && extra=(--planted "$out/$name.planted")
  # shellcheck disable=SC2086 # args is a list of flags
  "$synth" $args --costs "$out/$name.costs" --placement "$out/$name.placement" "${extra[@]}" >/dev/null
done <"$manifest"
