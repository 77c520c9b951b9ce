// chorus-split-bench [RANKS] [REPEATS]: how long splitting a communicator in two takes against initializing one from
// scratch, with RANKS ranks as threads of this process (each with its own communicator, as in the test harness).
// Prints, as medians over REPEATS rounds of the slowest rank: the init of RANKS ranks, the first split right after
// it, later splits of the same parent (children destroyed in between), and the ratio split/init. Honors
// CHORUS_SPLIT_SHARE (and every other CHORUS_* variable) like any communicator.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "chorus/chorus.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 8;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 7;
  constexpr int kLaterSplits = 20;
  if (n < 2 || repeats < 1) {
    std::fprintf(stderr, "usage: chorus-split-bench [RANKS >= 2] [REPEATS >= 1]\n");
    return 2;
  }
  std::vector<double> inits, firsts, laters;
  bool failed = false;
  for (int round = 0; round < repeats && !failed; ++round) {
    chorusUniqueId id;
    if (chorusGetUniqueId(&id) != chorusSuccess) {
      std::fprintf(stderr, "chorusGetUniqueId: %s\n", chorusGetLastError(nullptr));
      return 1;
    }
    std::vector<double> init(n), first(n), later(n);
    std::vector<std::thread> ranks;
    for (int r = 0; r < n; ++r) {
      ranks.emplace_back([&, r] {
        chorusComm_t comm = nullptr, child = nullptr;
        const auto a = Clock::now();
        if (chorusCommInitRank(&comm, n, id, r) != chorusSuccess) {
          std::fprintf(stderr, "rank %d: init: %s\n", r, chorusGetLastError(nullptr));
          failed = true;
          return;
        }
        const auto b = Clock::now();
        if (chorusCommSplit(comm, r % 2, r, &child, nullptr) != chorusSuccess) {
          std::fprintf(stderr, "rank %d: split: %s\n", r, chorusGetLastError(comm));
          failed = true;
          chorusCommAbort(comm);
          return;
        }
        const auto c = Clock::now();
        chorusCommDestroy(child);
        double total = 0;
        for (int k = 0; k < kLaterSplits; ++k) {
          const auto s = Clock::now();
          chorusCommSplit(comm, r % 2, r, &child, nullptr);
          total += ms(s, Clock::now());
          chorusCommDestroy(child);
        }
        init[r] = ms(a, b);
        first[r] = ms(b, c);
        later[r] = total / kLaterSplits;
        chorusCommDestroy(comm);
      });
    }
    for (auto& t : ranks) t.join();
    inits.push_back(*std::max_element(init.begin(), init.end()));
    firsts.push_back(*std::max_element(first.begin(), first.end()));
    laters.push_back(*std::max_element(later.begin(), later.end()));
  }
  if (failed) return 1;
  const double i = median(inits), f = median(firsts), l = median(laters);
  std::printf("ranks %d, medians of %d rounds (slowest rank): init %.2f ms, first split %.2f ms (%.3f of init), "
              "later splits %.3f ms (%.4f of init)\n",
              n, repeats, i, f, f / i, l, l / i);
  return 0;
}
