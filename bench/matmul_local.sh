#!/bin/bash
# Distributed matrix multiplication on this machine (real Open MPI, real
# time): the local kernel's efficiency, then lib/matmul's 3D, SUMMA and
# HSUMMA against ScaLAPACK's pdgemm on the same ranks and sizes.
#   bench/matmul_local.sh [--sizes "1024 2048 4096"] [--ranks "1 2 4"]
#                         [--kernel-sizes "256 512 1024 2048"] [--reps 3]
#                         [--panel 64] [--placement identity]
#                         [--backends "openblas eigen"] [--out DIR]
# Steps (optimised build, -c opt; one BLAS thread per rank: OPENBLAS_NUM_THREADS=1):
#   1. gemm_kernel_bench: multiply_add on each local back-end the build has
#      (OpenBLAS, the default when found, and Eigen) against single-threaded
#      OpenBLAS dgemm, square n; goal: at least 80% of OpenBLAS;
#   2. matmul_bench at each rank count and size, once per back-end of
#      --backends (RANKSHAPE_LOCAL_GEMM): 3d, summa, hsumma (every grouping),
#      and with the first back-end pdgemm (Debian's ScaLAPACK for Open MPI,
#      on OpenBLAS), each checked against recomputed entries of C; goal: at
#      least 1.2x pdgemm's GFLOP/s for n >= 2048.
# More ranks than cores run oversubscribed (--oversubscribe, no binding);
# the CSV's oversubscribed column and the report say so. Ranks up to the
# core count are bound to cores.
# Writes DIR/matmul_local.csv (matmul_bench's columns after ranks, cores,
# oversubscribed, backend), DIR/matmul_local_kernel.csv and DIR/matmul_local.md
# (default bench/results); logs stay in DIR/matmul_local/.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes="1024 2048 4096"
ranks="1 2 4"
kernel_sizes="256 512 1024 2048"
reps=3
panel=64
placement=identity
backends="openblas eigen"
out=bench/results
while [ $# -gt 0 ]; do
  case $1 in
    --sizes) sizes=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --kernel-sizes) kernel_sizes=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --panel) panel=$2; shift 2 ;;
    --placement) placement=$2; shift 2 ;;
    --backends) backends=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "matmul_local.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
for tool in mpirun python3; do
  command -v "$tool" >/dev/null || { echo "matmul_local.sh: needs $tool (tools/install-deps)" >&2; exit 1; }
done
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
unique=
for b in $backends; do
  case $b in
    openblas | eigen) ;;
    *) echo "matmul_local.sh: unknown back-end '$b' in --backends (expected openblas or eigen)" >&2; exit 2 ;;
  esac
  case " $unique " in *" $b "*) ;; *) unique="${unique:+$unique }$b" ;; esac
done
backends=$unique
# The kernel step's "(default)" is the library's own default.
unset RANKSHAPE_LOCAL_GEMM
bazel build -c opt --noshow_progress //bench:matmul_bench //bench:gemm_kernel_bench
bin=$(bazel info -c opt bazel-bin 2>/dev/null)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Copies: a later build in this tree must not change them during the runs.
cp "$bin/bench/matmul_bench" "$bin/bench/gemm_kernel_bench" "$work/"
mkdir -p "$out" "$work/logs"
cores=$(getconf _NPROCESSORS_ONLN)
load=$(cut -d' ' -f1-3 /proc/loadavg)
start=$(date +%s)

comma() { echo "$1" | tr ' ' ','; }

echo "== gemm_kernel_bench (n = $kernel_sizes)"
"$work/gemm_kernel_bench" --out "$work/kernel.csv" --sizes "$(comma "$kernel_sizes")" |
  tee "$work/logs/kernel.log"

root=()
[ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
echo "ranks,cores,oversubscribed,backend,$(echo algorithm,placement,p,grid,groups,m,n,k,panel,seconds,comm_seconds,compute_seconds,gflops,outer_panel,outer_comm_seconds,computed,max_rel_error)" \
  >"$work/matmul_local.csv"
for np in $ranks; do
  if [ "$np" -gt "$cores" ]; then
    over=1
    launch=(--oversubscribe --bind-to none)
  else
    over=0
    launch=(--bind-to core)
  fi
  algorithms=3d,summa,hsumma,pdgemm  # pdgemm once: it has its own BLAS
  for backend in $backends; do
    echo "== matmul_bench, $np ranks on $cores cores$([ "$over" -eq 1 ] && echo ', oversubscribed'), local product $backend"
    run=np$np-$backend
    RANKSHAPE_LOCAL_GEMM=$backend mpirun "${root[@]}" "${launch[@]}" -x OPENBLAS_NUM_THREADS \
      -x OMP_NUM_THREADS -x RANKSHAPE_LOCAL_GEMM -np "$np" \
      "$work/matmul_bench" --out "$work/$run.csv" --sizes "$(comma "$sizes")" \
      --algorithms "$algorithms" --placement "$placement" --groups auto \
      --panel "$panel" --reps "$reps" --warmup 1 2>&1 | tee "$work/logs/$run.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "matmul_local.sh: matmul_bench failed at $np ranks ($backend)" >&2; exit 1; }
    tail -n +2 "$work/$run.csv" | sed "s/^/$np,$cores,$over,$backend,/" >>"$work/matmul_local.csv"
    algorithms=3d,summa,hsumma
  done
done
elapsed=$(($(date +%s) - start))

python3 - "$work/kernel.csv" "$work/matmul_local.csv" "$work/matmul_local.md" <<EOF
import csv, sys
kernel = list(csv.DictReader(open(sys.argv[1])))
rows = list(csv.DictReader(open(sys.argv[2])))
md = open(sys.argv[3], "w")
w = lambda s="": md.write(s + "\n")
w("# Distributed matrix multiplication on this machine")
w()
w("\`bench/matmul_local.sh\` ($(date -u +%Y-%m-%d), $elapsed s in all): Open MPI on this $cores-core")
w("machine, shared with other jobs (load average $load at the start), optimised build")
w("(\`-c opt\`), one BLAS thread per rank (\`OPENBLAS_NUM_THREADS=1\`); local products:")
w("$backends (\`RANKSHAPE_LOCAL_GEMM\`; the library's default is OpenBLAS when the build found it).")
w("Times are the median of $reps repetitions (after one warmup) of the slowest rank;")
w("GFLOP/s = 2 m n k / time. Every product is checked against recomputed entries of C.")
w()
w("## Local kernel: multiply_add against single-threaded OpenBLAS dgemm")
w()
w("Goal: at least 80% of OpenBLAS. Every back-end the build has; (default) marks the one")
w("multiply_add runs on unless \`RANKSHAPE_LOCAL_GEMM\` or \`set_local_backend()\` says otherwise.")
w()
w("| n | multiply_add backend | multiply_add GFLOP/s | OpenBLAS GFLOP/s | ratio | goal >= 0.80 |")
w("|---:|---|---:|---:|---:|---|")
blas_by_n = {int(r["n"]): r for r in kernel if r["kernel"] == "openblas"}
for r in sorted((r for r in kernel if r["kernel"] == "multiply_add"),
                key=lambda r: (int(r["n"]), r["default"] != "1", r["backend"])):
    n, ratio = int(r["n"]), float(r["ratio_to_openblas"])
    name = r["backend"] + (" (default)" if r["default"] == "1" else "")
    w(f"| {n} | {name} | {float(r['gflops']):.2f} | {float(blas_by_n[n]['gflops']):.2f} | "
      f"{ratio:.2f} | {'met' if ratio >= 0.8 else 'not met'} |")
w()
w("## 3D, SUMMA, HSUMMA and pdgemm")
w()
w("GFLOP/s per algorithm (in parentheses: ratio to pdgemm; for HSUMMA, then its best")
w("grouping IxJ). Goal: the best of ours at least 1.2x pdgemm for n >= 2048. Grids: 3D balanced")
w("(\`MPI_Dims_create\`), the others 2D balanced; panel b = $panel (pdgemm: mb = nb = $panel);")
w("placements: $placement (relabelled: measured costs). Runs with more ranks than cores are")
w("oversubscribed (marked).")
w()
w("| ranks | placement | n (m x n x k) | local product | 3D | SUMMA | HSUMMA (best) | pdgemm | best ours / pdgemm | goal |")
w("|---:|---|---|---|---:|---:|---:|---:|---:|---|")
def best(rs, alg):
    c = [r for r in rs if r["algorithm"] == alg and r["gflops"]]
    return max(c, key=lambda r: float(r["gflops"])) if c else None

def cells_of(rs, pdg, size, ranks):
    cells, ours = [], []
    for alg in ("3d", "summa", "hsumma"):
        b = best(rs, alg)
        if not b:
            cells.append("-")
            continue
        g = float(b["gflops"])
        ours.append(g)
        text = f"{g:.2f}"
        if pdg:
            text += f" ({g / pdg:.2f}x)"
        if alg == "hsumma":
            text += f", {b['groups']}"
        cells.append(text)
    top = max(ours) if ours else None
    ratio = top / pdg if top and pdg else None
    if ratio is None:
        goal = "-"
    elif ranks == 1:
        goal = "n/a (1 rank: kernels only)"
    elif min(size) < 2048:
        goal = "n/a (n < 2048)"
    else:
        goal = "met" if ratio >= 1.2 else "not met"
    return cells + [f"{pdg:.2f}" if pdg else "-", f"{ratio:.2f}" if ratio else "-", goal]

groups = {}
for r in rows:
    key = (int(r["ranks"]), r["placement"], int(r["m"]), int(r["n"]), int(r["k"]))
    groups.setdefault(key, []).append(r)
for key in sorted(groups):
    np_, placement, m, n, k = key
    over = groups[key][0]["oversubscribed"] == "1"
    pd = best(groups[key], "pdgemm")  # run once, with the first back-end
    pdg = float(pd["gflops"]) if pd else None
    size = f"{m}" if m == n == k else f"{m} x {n} x {k}"
    for backend in "$backends".split():
        rs = [r for r in groups[key] if r["backend"] == backend]
        if rs:
            w(f"| {np_}{' (oversubscribed)' if over else ''} | {placement} | {size} | {backend} | "
              + " | ".join(cells_of(rs, pdg, (m, n, k), np_)) + " |")
w()
worst = max((float(r["max_rel_error"]) for r in rows if r["max_rel_error"]), default=0)
w(f"Largest relative error of any checked entry of C: {worst:.2g}.")
w()
w("All rows, with communication and computation times and every HSUMMA grouping:")
w("\`matmul_local.csv\`; kernel rows: \`matmul_local_kernel.csv\`.")
EOF
rm -rf "$out/matmul_local"
mkdir -p "$out/matmul_local"
cp "$work"/logs/*.log "$out/matmul_local/"
mv "$work/kernel.csv" "$out/matmul_local_kernel.csv"
mv "$work/matmul_local.csv" "$out/matmul_local.csv"
mv "$work/matmul_local.md" "$out/matmul_local.md"
echo "wrote $out/matmul_local.csv, $out/matmul_local_kernel.csv and $out/matmul_local.md ($elapsed s)"
