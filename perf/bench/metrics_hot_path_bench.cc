// What CHORUS_METRICS_PORT adds to each call on its own, away from the scheduling noise of a 2-rank job: the call
// runner's hooks (CommMetrics::UnderWay around the call, CommMetrics::ran at its end) with metrics on and off.
#include <benchmark/benchmark.h>

#include "algorithms/algorithm_id.h"
#include "src/comm/comm_metrics.h"

namespace {

// As CallRunner::execute and runCollective do for one 8-byte allreduce; `metrics` null: the setting off.
void oneCall(chorus::CommMetrics* metrics) {
  const chorus::CommMetrics::UnderWay counted(metrics);
  if (metrics != nullptr) {
    metrics->ran(chorus::Collective::kAllReduce,
                 chorus::CommMetrics::algorithmSlot(chorus::AlgorithmId::kRecursiveDoubling), 8, 1);
  }
}

void BM_CallMetricsOff(benchmark::State& state) {
  chorus::CommMetrics* metrics = nullptr;
  for (auto _ : state) {
    benchmark::DoNotOptimize(metrics);
    oneCall(metrics);
  }
}
BENCHMARK(BM_CallMetricsOff);

void BM_CallMetricsOn(benchmark::State& state) {
  // Port 0: any free port; the server runs beside the loop as it does beside a job.
  chorus::CommMetrics metrics({0, 2, "bench", "shm"}, 0, 0);
  chorus::CommMetrics* m = &metrics;
  for (auto _ : state) {
    benchmark::DoNotOptimize(m);
    oneCall(m);
  }
}
BENCHMARK(BM_CallMetricsOn);

}  // namespace

BENCHMARK_MAIN();
