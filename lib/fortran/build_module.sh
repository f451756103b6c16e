#!/bin/bash
# build_module.sh MPIF90 SOURCE LIBRANKSHAPE OUTDIR: compiles the module
# into OUTDIR/rankshape.mod and OUTDIR/librankshape_fortran.so (see BUILD).
set -euo pipefail
fc=$1 source=$2 lib=$3 out=$4
command -v "$fc" >/dev/null || { echo "build_module.sh: no $fc (tools/install-deps)" >&2; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# Linked by SONAME, as the install tree has it.
ln -s "$(realpath "$lib")" "$scratch/librankshape.so.0"
ln -s librankshape.so.0 "$scratch/librankshape.so"
"$fc" -std=f2008 -Wall -Wextra -Werror -fPIC -O2 -J "$scratch" -c "$source" -o "$scratch/rankshape.o"
"$fc" -shared -Wl,-soname,librankshape_fortran.so.0 -Wl,-rpath,'$ORIGIN' -o "$out/librankshape_fortran.so" \
  "$scratch/rankshape.o" -L"$scratch" -lrankshape
cp "$scratch/rankshape.mod" "$out/rankshape.mod"
