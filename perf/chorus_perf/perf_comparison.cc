// chorus-perf --algos: every listed algorithm's communicator timed in interleaved rounds, per size (PerfRunner's
// comparison mode; perf_runner.cc has the single-communicator sweep and what both share).
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

#include "perf/chorus_perf/engine_facts.h"
#include "perf/chorus_perf/perf_runner.h"
#include "perf/chorus_perf/round_order.h"

namespace chorus::perf {

// Interleaving is the point: the machine drifts (other load, frequency, page cache) over seconds, and separate
// runs per algorithm, minutes apart, measured the drift as much as the algorithms. The rounds' orders form a
// Williams design (round_order.h), so that no column always runs first or always follows the same one.
int PerfRunner::runComparison(const std::vector<size_t>& sizes) {
  if (rank_ == 0) {
    std::fputs(formatComparisonHeader(options_, nranks_).c_str(), stdout);
    std::fflush(stdout);
  }
  const size_t n = comms_.size();
  uint64_t totalWrong = 0;
  double worstRatio = 0;
  size_t worstBytes = 0;
  const int tuned = autotuneColumn(options_);
  double tunedWorstRatio = tuned >= 0 ? 0 : -1;  // -1: no autotune column
  size_t tunedWorstBytes = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const SizeLayout layout = computeSizeLayout(options_.collective, sizes[i], typeSize_, nranks_, rank_);
    planVectors(layout, i + 1);
    const CallBuffers buffers = buffersFor(layout, Mode::kOutOfPlace);
    uint64_t wrong = 0;
    std::vector<int> iters(n, options_.iters);
    for (size_t k = 0; k < n; ++k) {
      comm_ = comms_[k];
      for (int w = 0; w < options_.warmupIters; ++w) launch(buffers, layout.count);
      synchronizeHostStream();
      iters[k] = calibratedIters(buffers, layout.count);
      if (options_.check != 0) wrong += sumOverRanks(checkOnce(layout, Mode::kOutOfPlace, i * n + k + 1));
    }
    std::vector<std::vector<double>> samples(n);
    for (int round = 0; round < options_.rounds; ++round) {
      for (const size_t k : roundOrder(n, round)) {
        comm_ = comms_[k];
        samples[k].push_back(timeCalls(buffers, layout.count, iters[k]));
      }
    }
    comm_ = comms_[0];
    std::vector<double> medians(n);
    for (size_t k = 0; k < n; ++k) {
      std::vector<double>& v = samples[k];
      std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
      medians[k] = v[v.size() / 2];
    }
    const size_t best = bestForced(options_, medians);
    if (medians[0] / medians[best] > worstRatio) {
      worstRatio = medians[0] / medians[best];
      worstBytes = layout.bytes;
    }
    if (tuned >= 0 && medians[static_cast<size_t>(tuned)] / medians[best] > tunedWorstRatio) {
      tunedWorstRatio = medians[static_cast<size_t>(tuned)] / medians[best];
      tunedWorstBytes = layout.bytes;
    }
    totalWrong += wrong;
    if (rank_ == 0) {
      std::vector<std::string> ran;
      if (tuned >= 0) ran = {lastPlan(comms_[0]), lastPlan(comms_[static_cast<size_t>(tuned)])};
      std::fputs(formatComparisonRow(options_, layout.bytes, medians, best, wrong, ran).c_str(), stdout);
      std::fflush(stdout);
    }
  }
  if (rank_ == 0) {
    std::fputs(formatComparisonFooter(totalWrong, worstRatio, worstBytes, tunedWorstRatio, tunedWorstBytes).c_str(),
               stdout);
    std::fflush(stdout);
  }
  barrier();
  return totalWrong == 0 ? 0 : 1;
}

}  // namespace chorus::perf
