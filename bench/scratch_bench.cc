// What a collective's scratch buffer costs on this machine, against the
// message it serves: a fresh zeroed std::vector (what a scratch of a block
// per rank was) of 4 and 32 MiB, against a copy of that many bytes. glibc
// maps every allocation of 32 MiB or more afresh (M_MMAP_THRESHOLD's cap),
// so each one pays its page faults; smaller ones come back from the heap.
// docs/collectives.md quotes it for lays_out_as_packed (lib/coll).
//   bazel run -c opt //bench:scratch_bench
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

void BM_FreshZeroedVector(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0)) << 20;
  for (auto _ : state) {
    std::vector<char> scratch(bytes);
    benchmark::DoNotOptimize(scratch.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}
BENCHMARK(BM_FreshZeroedVector)->Arg(4)->Arg(32)->Unit(benchmark::kMillisecond);

void BM_Copy(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0)) << 20;
  std::vector<char> from(bytes, 1), to(bytes, 0);
  for (auto _ : state) {
    std::memcpy(to.data(), from.data(), bytes);
    benchmark::DoNotOptimize(to.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}
BENCHMARK(BM_Copy)->Arg(4)->Arg(32)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
