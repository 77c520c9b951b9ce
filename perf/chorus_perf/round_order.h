// The order in which chorus-perf --algos times its columns in each round: a Williams design, the crossover trials'
// answer to carry-over. Each row is a permutation; over n rows (n even) or 2n (n odd, each row and its mirror),
// every column runs first equally often and follows every other column equally often.
//
// Why it matters: a run of calls leaves the machine in a state (scheduler, sockets, the token bucket of a lab link)
// that the next column's run starts in. With a plain rotation (round r: r, r+1, ..., mod n) each column always
// follows the same one: in the topology lab's 2x2, 8-512 B broadcasts, a column that followed the chain ran 9-10 us
// and the same algorithm after the hierarchical one 11-12, so two columns of one algorithm came out 1.1-1.2x apart
// and the default/best ratio measured the order, not the default.
#pragma once

#include <cstddef>
#include <vector>

namespace chorus::perf {

// Round `round`'s order of n columns (the design's rows cycle when there are more rounds than rows).
inline std::vector<size_t> roundOrder(size_t n, int round) {
  if (n == 0) return {};
  // Row 0: 0, 1, n-1, 2, n-2, ...; row i adds i mod n. For odd n, rows n..2n-1 are rows 0..n-1 reversed.
  std::vector<size_t> first{0};
  for (size_t lo = 1, hi = n - 1; first.size() < n;) {
    first.push_back(lo++);
    if (first.size() < n) first.push_back(hi--);
  }
  const size_t rows = n % 2 == 0 ? n : 2 * n;
  const size_t row = static_cast<size_t>(round) % rows;
  std::vector<size_t> order(n);
  for (size_t j = 0; j < n; ++j) order[j] = (first[j] + row) % n;
  if (row >= n) return std::vector<size_t>(order.rbegin(), order.rend());
  return order;
}

}  // namespace chorus::perf
