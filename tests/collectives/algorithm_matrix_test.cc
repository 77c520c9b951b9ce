// Every collective of the tree and halving-doubling algorithms, forced with CHORUS_ALGO, on every world size from 1
// to 9 and on 13 and 16: counts none, one, odd and many slices (4 KiB slices), roots first, middle and last, in place
// and out of place, for a few datatype x op pairs (sum, max, and avg in the half-precision types).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "tests/collectives/case_matrix.h"
#include "tests/collectives/case_runner.h"
#include "tests/collectives/suite_knobs.h"

namespace chorus::test {
namespace {

struct TypeOp {
  chorusDataType_t type;
  chorusRedOp_t op;
};

const std::vector<TypeOp> kPairs = {
    {chorusFloat32, chorusSum}, {chorusInt32, chorusMax}, {chorusFloat16, chorusAvg}, {chorusBfloat16, chorusAvg}};
// The pairs that also run with the large count (kept few: the large calls dominate the runtime).
const std::vector<TypeOp> kLargePairs = {{chorusFloat32, chorusSum}, {chorusBfloat16, chorusAvg}};

// Elements per rank that span many 4 KiB slices (hundreds in small worlds); smaller in large worlds, which run
// as threads on few cores.
size_t largeCount(int nranks) {
  if (nranks <= 4) return 300001;
  if (nranks <= 9) return 60001;
  return 20001;
}

std::vector<CollectiveKind> collectivesOf(const std::string& algo) {
  if (algo == "tree") return {CollectiveKind::kAllReduce, CollectiveKind::kBroadcast, CollectiveKind::kReduce};
  return {CollectiveKind::kAllReduce, CollectiveKind::kBroadcast, CollectiveKind::kReduce, CollectiveKind::kAllGather,
          CollectiveKind::kReduceScatter};
}

std::vector<int> rootsOf(int nranks) {
  std::vector<int> roots = {0, nranks / 2, nranks - 1};
  std::sort(roots.begin(), roots.end());
  roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
  return roots;
}

std::vector<CollectiveCase> casesFor(const std::string& algo, int nranks) {
  std::vector<CollectiveCase> cases;
  auto add = [&](CollectiveKind kind, const std::vector<TypeOp>& pairs, std::vector<size_t> counts) {
    const bool blocked = kind == CollectiveKind::kAllGather || kind == CollectiveKind::kReduceScatter;
    const bool reduces = kind != CollectiveKind::kBroadcast && kind != CollectiveKind::kAllGather;
    for (const TypeOp& pair : pairs) {
      // Broadcast and allgather ignore the op: one type of each width class is enough for them.
      if (!reduces && pair.type != chorusFloat32 && pair.type != chorusFloat16) continue;
      CaseGrid grid;
      grid.kind = kind;
      grid.types = {pair.type};
      grid.ops = {pair.op};
      grid.counts = counts;
      if (blocked) {
        // Counts are per rank there: the whole buffer is nranks times larger.
        for (size_t& c : grid.counts) c = c > 1031 ? c / nranks + 1 : c;
      }
      grid.roots = rootsOf(nranks);
      std::vector<CollectiveCase> some = casesOf(grid, static_cast<uint32_t>(cases.size() + 1));
      cases.insert(cases.end(), some.begin(), some.end());
    }
  };
  for (CollectiveKind kind : collectivesOf(algo)) {
    add(kind, kPairs, {0, 1, 1031});
    add(kind, kLargePairs, {largeCount(nranks)});
  }
  return cases;
}

class AlgorithmMatrixTest : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(AlgorithmMatrixTest, EveryCollectiveCountRootPlacement) {
  const auto& [algo, nranks] = GetParam();
  Config config = suiteConfig();
  config.algo = algo;
  runCasesOnNewWorld(nranks, casesFor(algo, nranks), kCaseDeadline, config);
}

INSTANTIATE_TEST_SUITE_P(Worlds, AlgorithmMatrixTest,
                         ::testing::Combine(::testing::Values("tree", "halving_doubling"),
                                            ::testing::Values(1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" + std::to_string(std::get<1>(info.param)) + "ranks";
                         });

}  // namespace
}  // namespace chorus::test
