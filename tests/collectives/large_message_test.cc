// Messages over 256 KiB with CHORUS_NSOCKS=2, so that every collective's frames are striped across two sockets;
// the same over sealed links (CHORUS_ENCRYPT).
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "tests/collectives/case_matrix.h"
#include "tests/collectives/case_runner.h"
#include "tests/collectives/suite_knobs.h"

namespace chorus::test {
namespace {

// 1.2 MB of float32 per rank: with 1 MiB slices every ring step still moves more than the 256 KiB striping floor.
constexpr size_t kLargeCount = 300001;

class StripedLargeMessageTest : public ::testing::TestWithParam<std::tuple<int, std::string>> {};

// The cases of `grid` (types, ops, counts, roots) for each of the five collectives, salted apart from firstSalt.
std::vector<CollectiveCase> everyCollective(CaseGrid grid, uint32_t firstSalt = 1) {
  std::vector<CollectiveCase> cases;
  uint32_t salt = firstSalt;
  for (CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kBroadcast, CollectiveKind::kReduce,
                              CollectiveKind::kAllGather, CollectiveKind::kReduceScatter}) {
    grid.kind = kind;
    std::vector<CollectiveCase> some = casesOf(grid, salt);
    salt += static_cast<uint32_t>(some.size());
    cases.insert(cases.end(), some.begin(), some.end());
  }
  return cases;
}

TEST_P(StripedLargeMessageTest, EveryCollective) {
  const auto& [nranks, algo] = GetParam();
  Config config = suiteConfig();
  config.socketsPerPeer = 2;
  config.chunkSize = 1 << 20;
  config.algo = algo;
  CaseGrid grid;
  grid.types = {chorusFloat32, chorusFloat16, chorusInt64};
  grid.ops = {chorusSum, chorusMax, chorusAvg};
  grid.counts = {kLargeCount};
  grid.roots = {0, nranks - 1};
  runCasesOnNewWorld(nranks, everyCollective(grid), kCaseDeadline, config);
}

INSTANTIATE_TEST_SUITE_P(Worlds, StripedLargeMessageTest,
                         ::testing::Combine(::testing::Values(2, 3), ::testing::Values("ring", "recursive_doubling")),
                         [](const auto& info) {
                           return std::to_string(std::get<0>(info.param)) + "ranks_" + std::get<1>(info.param);
                         });

// The tree and halving-doubling algorithms at a world that needs halving-doubling's fold (and trees of unequal
// depth).
INSTANTIATE_TEST_SUITE_P(TreeAndHalvingDoubling, StripedLargeMessageTest,
                         ::testing::Combine(::testing::Values(3), ::testing::Values("tree", "halving_doubling")),
                         [](const auto& info) {
                           return std::to_string(std::get<0>(info.param)) + "ranks_" + std::get<1>(info.param);
                         });

// Halving-doubling and recursive doubling among more than two ranks, with steps over kRendezvousBytes: each such
// step starts with a rendezvous (algorithms/halving_doubling_exchange.h); 5 ranks add the fold steps around it.
class RendezvousStepTest : public ::testing::TestWithParam<std::tuple<int, std::string>> {};

TEST_P(RendezvousStepTest, EveryCollective) {
  const auto& [nranks, algo] = GetParam();
  Config config = suiteConfig();
  config.algo = algo;
  config.chunkSize = 1 << 20;
  CaseGrid grid;
  grid.types = {chorusFloat32};
  grid.ops = {chorusSum};
  grid.counts = {600001};  // 2.4 MB: a 4-rank halving step gives away half, over 1 MiB
  grid.roots = {nranks - 1};
  grid.inPlace = {false};
  runCasesOnNewWorld(nranks, everyCollective(grid), kCaseDeadline, config);
}

INSTANTIATE_TEST_SUITE_P(Worlds, RendezvousStepTest,
                         ::testing::Combine(::testing::Values(4, 5),
                                            ::testing::Values("halving_doubling", "recursive_doubling")),
                         [](const auto& info) {
                           return std::to_string(std::get<0>(info.param)) + "ranks_" + std::get<1>(info.param);
                         });

// Allreduces over TCP run in pieces (call_planner.h, segmentBytesFor): with 4 KiB slices a piece is a few KiB, so
// these counts make hundreds of pieces and a last one cut short; averages divide each piece.
class SegmentedAllReduceTest : public ::testing::TestWithParam<std::tuple<int, std::string>> {};

TEST_P(SegmentedAllReduceTest, EveryTypeAndOp) {
  const auto& [nranks, algo] = GetParam();
  Config config = suiteConfig();
  config.transports = "tcp";
  config.algo = algo;
  CaseGrid grid;
  grid.types = {chorusFloat32, chorusFloat16, chorusInt64};
  grid.ops = {chorusSum, chorusAvg};
  grid.counts = {1023, 300001};
  runCasesOnNewWorld(nranks, casesOf(grid, 1), kCaseDeadline, config);
}

INSTANTIATE_TEST_SUITE_P(Worlds, SegmentedAllReduceTest,
                         ::testing::Combine(::testing::Values(2, 3, 4),
                                            ::testing::Values("ring", "halving_doubling", "recursive_doubling")),
                         [](const auto& info) {
                           return std::to_string(std::get<0>(info.param)) + "ranks_" + std::get<1>(info.param);
                         });

// CHORUS_ENCRYPT: every collective over sealed TCP links, striped across two sockets (several records per stripe
// in 4 MiB slices of 6.4 MB) and in messages under one record, checked against the references.
TEST(EncryptedTcpTest, EveryCollectiveOverSealedStripedLinks) {
  Config config = suiteConfig();
  config.transports = "tcp";
  config.encrypt = true;
  config.socketsPerPeer = 2;
  config.chunkSize = 4 << 20;
  CaseGrid grid;
  grid.types = {chorusFloat32, chorusInt64};
  grid.ops = {chorusSum};
  grid.counts = {0, 1, 1000, kLargeCount};
  grid.roots = {2};
  std::vector<CollectiveCase> cases = everyCollective(grid);
  grid.types = {chorusFloat32};  // the records' framing does not depend on the type
  grid.counts = {1600001};
  for (const CollectiveCase& c : everyCollective(grid, static_cast<uint32_t>(cases.size() + 1))) cases.push_back(c);
  runCasesOnNewWorld(3, cases, kCaseDeadline, config);
}

}  // namespace
}  // namespace chorus::test
