// How fast the objective is: a full evaluation against one incremental swap
// or 3-cycle, on the 65,536-rank structured machine the relabelling engine
// must handle (16 racks x 64 nodes x 2 x 32 cores, scrambled) and on a
// 1,024-rank dense matrix. Local search lives on the incremental numbers.
//   bazel run -c opt //bench:objective_bench
#include <benchmark/benchmark.h>

#include "lib/model/objective.h"
#include "lib/synth/machine.h"
#include "lib/util/random.h"

namespace rankshape {
namespace {

const SyntheticMachine& large_machine() {
  static const SyntheticMachine m =
      generate_machine(machine_shape(16, 64, 2, 32, RankOrder::kRandom));
  return m;
}

const DenseCosts& dense_1024() {
  static const DenseCosts d = [] {
    MachineSpec s = machine_shape(2, 16, 2, 16, RankOrder::kRandom);
    s.noise = 0.1;
    return to_dense(generate_machine(s).costs);
  }();
  return d;
}

const Costs& costs_for(int which) {
  return which == 0 ? static_cast<const Costs&>(large_machine().costs) : dense_1024();
}
Grid grid_for(int which) { return which == 0 ? Grid({64, 32, 32}) : Grid({16, 8, 8}); }

void BM_FullEvaluation(benchmark::State& state) {
  const Costs& c = costs_for(static_cast<int>(state.range(0)));
  const Grid g = grid_for(static_cast<int>(state.range(0)));
  const Labelling l = Labelling::identity(g.size());
  for (auto _ : state) benchmark::DoNotOptimize(evaluate(c, g, l, ObjectiveSpec{}));
  state.SetLabel(g.to_string());
}

void BM_SwapValue(benchmark::State& state) {
  const Costs& c = costs_for(static_cast<int>(state.range(0)));
  const Grid g = grid_for(static_cast<int>(state.range(0)));
  const IncrementalObjective inc(c, g, Labelling::identity(g.size()), ObjectiveSpec{});
  SplitMix64 rng(1);
  for (auto _ : state) {
    const NewRank a(static_cast<int>(rng.below(g.size())));
    const NewRank b(static_cast<int>(rng.below(g.size())));
    benchmark::DoNotOptimize(inc.value_after_swap(a, b));
  }
  state.SetLabel(g.to_string());
}

void BM_CycleValue(benchmark::State& state) {
  const Costs& c = costs_for(static_cast<int>(state.range(0)));
  const Grid g = grid_for(static_cast<int>(state.range(0)));
  const IncrementalObjective inc(c, g, Labelling::identity(g.size()), ObjectiveSpec{});
  SplitMix64 rng(2);
  for (auto _ : state) {
    const int a = static_cast<int>(rng.below(g.size()));
    const int b = (a + 1 + static_cast<int>(rng.below(g.size() - 1))) % g.size();
    int d = static_cast<int>(rng.below(g.size()));
    while (d == a || d == b) d = (d + 1) % g.size();
    benchmark::DoNotOptimize(inc.value_after_cycle(NewRank(a), NewRank(b), NewRank(d)));
  }
  state.SetLabel(g.to_string());
}

// Argument 0: structured 65,536 ranks; 1: dense 1,024 ranks.
BENCHMARK(BM_FullEvaluation)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SwapValue)->Arg(0)->Arg(1);
BENCHMARK(BM_CycleValue)->Arg(0)->Arg(1);

}  // namespace
}  // namespace rankshape

BENCHMARK_MAIN();
