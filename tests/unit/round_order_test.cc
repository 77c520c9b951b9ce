// chorus-perf --algos's order of columns per round (perf/chorus_perf/round_order.h): a Williams design.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "perf/chorus_perf/round_order.h"

namespace chorus::perf {
namespace {

TEST(RoundOrder, EveryColumnFirstAndAfterEveryOtherEquallyOften) {
  for (size_t n = 1; n <= 9; ++n) {
    const int rows = n % 2 == 0 ? static_cast<int>(n) : 2 * static_cast<int>(n);
    std::map<size_t, int> firsts;
    std::map<std::pair<size_t, size_t>, int> follows;
    for (int r = 0; r < rows; ++r) {
      std::vector<size_t> order = roundOrder(n, r);
      std::vector<size_t> sorted = order;
      std::sort(sorted.begin(), sorted.end());
      for (size_t k = 0; k < n; ++k) ASSERT_EQ(sorted[k], k) << n << " columns, round " << r << ": not a permutation";
      ++firsts[order[0]];
      for (size_t k = 1; k < n; ++k) ++follows[{order[k - 1], order[k]}];
      EXPECT_EQ(roundOrder(n, r + rows), order) << "the design cycles";
    }
    for (size_t c = 0; c < n; ++c) EXPECT_EQ(firsts[c], rows / static_cast<int>(n)) << n << " columns";
    if (n < 2) continue;
    EXPECT_EQ(follows.size(), n * (n - 1)) << n << " columns: some column never follows another";
    for (const auto& [pair, count] : follows) EXPECT_EQ(count, rows / static_cast<int>(n)) << n << " columns";
  }
}

}  // namespace
}  // namespace chorus::perf
