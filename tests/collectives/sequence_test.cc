// Many calls on one communicator: repeats, every collective interleaved, thousands of tiny calls, two worlds at once.
#include <gtest/gtest.h>

#include <thread>

#include "tests/collectives/case_matrix.h"
#include "tests/collectives/case_runner.h"
#include "tests/collectives/suite_knobs.h"

namespace chorus::test {
namespace {

// A deterministic mix of every collective, datatype, op, count, root and placement, one call after another.
std::vector<CollectiveCase> interleavedCases(int nranks, size_t calls, uint32_t firstSalt) {
  const CollectiveKind kinds[] = {CollectiveKind::kAllReduce, CollectiveKind::kBroadcast, CollectiveKind::kReduce,
                                  CollectiveKind::kAllGather, CollectiveKind::kReduceScatter};
  const size_t counts[] = {1, 7, 1000, 5000, 0, 3001};
  std::vector<CollectiveCase> out;
  for (size_t i = 0; i < calls; ++i) {
    CollectiveCase c;
    c.kind = kinds[i % 5];
    c.type = static_cast<chorusDataType_t>((i / 5) % chorusNumTypes);
    c.op = static_cast<chorusRedOp_t>((i / 3) % chorusNumOps);
    if (c.op >= chorusBand && c.type > chorusUint64) c.op = chorusSum;  // bitwise ops take integers only
    c.count = counts[(i / 7) % 6];
    c.root = static_cast<int>((i / 2) % static_cast<size_t>(nranks));
    c.inPlace = (i / 11) % 2 == 1;
    c.nullUnused = (i / 13) % 2 == 1;
    c.salt = firstSalt + static_cast<uint32_t>(i);
    out.push_back(c);
  }
  return out;
}

class SequenceTest : public ::testing::TestWithParam<int> {};

TEST_P(SequenceTest, InterleavedCollectivesOnOneCommunicator) {
  runCasesOnNewWorld(GetParam(), interleavedCases(GetParam(), 400, 1), kCaseDeadline);
}

TEST_P(SequenceTest, SameCallRepeated) {
  ThreadWorld world(GetParam(), kCaseDeadline, suiteConfig());
  if (!world.ready()) return;
  // The identical call (same inputs) ten times, then with fresh inputs each time: no state may leak between calls.
  for (CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter, CollectiveKind::kReduce}) {
    CollectiveCase c;
    c.kind = kind;
    c.type = chorusBfloat16;
    c.op = chorusAvg;
    c.count = 5000;
    c.root = GetParam() - 1;
    c.salt = 77;
    std::vector<CollectiveCase> cases(10, c);
    for (uint32_t i = 0; i < 10; ++i) {
      c.salt = 1000 + i;
      c.inPlace = i % 2 == 0;
      cases.push_back(c);
    }
    runCases(world, cases, kCaseDeadline);
  }
}

TEST_P(SequenceTest, ThousandsOfTinyCalls) {
  CollectiveCase c;
  c.kind = CollectiveKind::kAllReduce;
  c.type = chorusInt32;
  c.op = chorusSum;
  c.count = 1;
  std::vector<CollectiveCase> cases;
  for (uint32_t i = 0; i < 3000; ++i) {
    c.salt = i;
    c.inPlace = i % 2 == 0;
    cases.push_back(c);
  }
  runCasesOnNewWorld(GetParam(), cases, kCaseDeadline);
}

INSTANTIATE_TEST_SUITE_P(Worlds, SequenceTest, ::testing::Values(2, 3, 5),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

TEST(TwoWorldsTest, RunAtTheSameTimeWithoutMixing) {
  ThreadWorld first(3, kCaseDeadline, suiteConfig());
  ThreadWorld second(4, kCaseDeadline, suiteConfig());
  if (!first.ready() || !second.ready()) return;
  std::vector<CollectiveCase> a = interleavedCases(3, 150, 1);
  std::vector<CollectiveCase> b = interleavedCases(4, 150, 5000);
  std::thread other([&] { runCases(first, a, kCaseDeadline); });
  runCases(second, b, kCaseDeadline);
  other.join();
}

}  // namespace
}  // namespace chorus::test
