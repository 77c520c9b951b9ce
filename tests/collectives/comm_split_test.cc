// chorusCommSplit: MPI_Comm_split's semantics (colors, key order, NOCOLOR), splits of splits, configs inherited or
// overridden, and parent and child destroyed in either order.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/collectives/suite_knobs.h"
#include "tests/harness/thread_world.h"

namespace chorus::test {
namespace {

constexpr std::chrono::seconds kSplitDeadline{120};

int rankOf(chorusComm_t c) {
  int r = -1;
  EXPECT_EQ(chorusCommUserRank(c, &r), chorusSuccess);
  return r;
}
int sizeOf(chorusComm_t c) {
  int n = -1;
  EXPECT_EQ(chorusCommCount(c, &n), chorusSuccess);
  return n;
}

// Sums `value` over the communicator.
int64_t sumOver(chorusComm_t c, int64_t value) {
  EXPECT_EQ(chorusAllReduce(&value, &value, 1, chorusInt64, chorusSum, c, nullptr), chorusSuccess)
      << chorusGetLastError(c);
  return value;
}

// Every test runs twice: children sharing the parent's connections, and children connecting anew.
class CommSplit : public ::testing::TestWithParam<bool> {
 protected:
  Config config() const {
    Config c = suiteConfig();
    c.splitShare = GetParam();
    return c;
  }
};

TEST_P(CommSplit, ColorsKeysAndNoColor) {
  const int n = 7;
  runThreadWorld(
      n,
      [](chorusComm_t comm, int rank) {
        // Colors 0, 1, 2 by rank % 3, except rank 6, which joins none; keys reverse the order.
        const int color = rank == 6 ? CHORUS_SPLIT_NOCOLOR : rank % 3;
        chorusComm_t child = nullptr;
        ASSERT_EQ(chorusCommSplit(comm, color, 100 - rank, &child, nullptr), chorusSuccess)
            << chorusGetLastError(comm);
        if (color == CHORUS_SPLIT_NOCOLOR) {
          EXPECT_EQ(child, nullptr);
          return;
        }
        ASSERT_NE(child, nullptr);
        std::vector<int> members;
        for (int r = 0; r < 6; ++r) {
          if (r % 3 == color) members.push_back(r);
        }
        const int expectedSize = static_cast<int>(members.size());
        EXPECT_EQ(sizeOf(child), expectedSize);
        // Higher parent ranks have lower keys: they come first.
        int position = 0;
        for (int r : members) position += r > rank ? 1 : 0;
        EXPECT_EQ(rankOf(child), position);
        // The child works: the sum of its members' parent ranks.
        int64_t want = 0;
        for (int r : members) want += r;
        EXPECT_EQ(sumOver(child, rank), want);
        EXPECT_EQ(chorusCommDestroy(child), chorusSuccess);
      },
      kSplitDeadline, config());
}

TEST_P(CommSplit, SplitsOfSplitsAndEitherDestroyOrder) {
  const int n = 8;
  runThreadWorld(
      n,
      [](chorusComm_t comm, int rank) {
        chorusComm_t half = nullptr, quarter = nullptr;
        ASSERT_EQ(chorusCommSplit(comm, rank / 4, rank, &half, nullptr), chorusSuccess) << chorusGetLastError(comm);
        ASSERT_EQ(chorusCommSplit(half, rankOf(half) / 2, 0, &quarter, nullptr), chorusSuccess)
            << chorusGetLastError(half);
        EXPECT_EQ(sizeOf(half), 4);
        EXPECT_EQ(sizeOf(quarter), 2);
        EXPECT_EQ(sumOver(quarter, 1), 2);
        EXPECT_EQ(sumOver(half, rank), rank < 4 ? 0 + 1 + 2 + 3 : 4 + 5 + 6 + 7);
        // The parent and the grandchild still work together, in any order of use.
        EXPECT_EQ(sumOver(comm, 1), 8);
        EXPECT_EQ(sumOver(quarter, rank), (rank / 2) * 4 + 1);
        // Send and receive on a grandchild, in a group.
        std::vector<float> out(3000, static_cast<float>(rank)), in(3000);
        const int partner = 1 - rankOf(quarter);
        ASSERT_EQ(chorusGroupStart(), chorusSuccess);
        ASSERT_EQ(chorusSend(out.data(), out.size(), chorusFloat32, partner, quarter, nullptr), chorusSuccess);
        ASSERT_EQ(chorusRecv(in.data(), in.size(), chorusFloat32, partner, quarter, nullptr), chorusSuccess);
        ASSERT_EQ(chorusGroupEnd(), chorusSuccess) << chorusGetLastError(quarter);
        EXPECT_EQ(in[0], static_cast<float>(rank ^ 1));
        // Destroy in different orders in different quarters: the middle generation first in odd quarters, which
        // then still use their own.
        if ((rank / 2) % 2) {
          EXPECT_EQ(chorusCommDestroy(half), chorusSuccess);
          EXPECT_EQ(sumOver(quarter, 1), 2);
          EXPECT_EQ(chorusCommDestroy(quarter), chorusSuccess);
        } else {
          EXPECT_EQ(chorusCommDestroy(quarter), chorusSuccess);
          EXPECT_EQ(chorusCommDestroy(half), chorusSuccess);
        }
      },
      kSplitDeadline, config());
}

TEST_P(CommSplit, ConfigInheritedOrOverridden) {
  Config parentConfig = config();
  parentConfig.commName = "parent";
  runThreadWorld(
      2,
      [](chorusComm_t comm, int rank) {
        chorusComm_t inherited = nullptr, renamed = nullptr;
        ASSERT_EQ(chorusCommSplit(comm, 0, rank, &inherited, nullptr), chorusSuccess);
        chorusConfig_t config = CHORUS_CONFIG_INITIALIZER;
        config.commName = "child";
        ASSERT_EQ(chorusCommSplit(comm, 0, rank, &renamed, &config), chorusSuccess);
        // Names show in argument errors.
        EXPECT_EQ(chorusBroadcast(nullptr, nullptr, 1, chorusFloat32, 9, inherited, nullptr), chorusInvalidArgument);
        EXPECT_NE(std::string(chorusGetLastError(inherited)).find("comm parent:"), std::string::npos)
            << chorusGetLastError(inherited);
        EXPECT_EQ(chorusBroadcast(nullptr, nullptr, 1, chorusFloat32, 9, renamed, nullptr), chorusInvalidArgument);
        EXPECT_NE(std::string(chorusGetLastError(renamed)).find("comm child:"), std::string::npos)
            << chorusGetLastError(renamed);
        config.chunkSize = 3;  // out of range: every rank fails alike, before any traffic
        chorusComm_t bad = nullptr;
        EXPECT_EQ(chorusCommSplit(comm, 0, rank, &bad, &config), chorusInvalidArgument);
        EXPECT_EQ(bad, nullptr);
        EXPECT_EQ(chorusCommSplit(comm, -5, rank, &bad, nullptr), chorusInvalidArgument);
        EXPECT_EQ(chorusCommSplit(comm, 0, rank, nullptr, nullptr), chorusInvalidArgument);
        EXPECT_EQ(sumOver(comm, 1), 2);  // the parent is still in step
        EXPECT_EQ(chorusCommDestroy(comm == nullptr ? nullptr : inherited), chorusSuccess);
        EXPECT_EQ(chorusCommDestroy(renamed), chorusSuccess);
      },
      kSplitDeadline, parentConfig);
}

INSTANTIATE_TEST_SUITE_P(Sharing, CommSplit, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "shared" : "connected_anew"; });

// Sharing connections, a family's calls must come in the same order per pair on every rank: when they do not, both
// ranks fail with an error (the frames of one communicator never pass for the other's), instead of mixing data.
TEST(CommSplitShared, CallsOutOfOrderAcrossTheFamilyFail) {
  Config c = suiteConfig();
  c.timeoutSeconds = 20;
  runThreadWorld(
      2,
      [](chorusComm_t comm, int rank) {
        chorusComm_t child = nullptr;
        ASSERT_EQ(chorusCommSplit(comm, 0, rank, &child, nullptr), chorusSuccess);
        int64_t a = 1, b = 1;
        chorusResult_t first, second;
        if (rank == 0) {
          first = chorusAllReduce(&a, &a, 1, chorusInt64, chorusSum, child, nullptr);
          second = chorusAllReduce(&b, &b, 1, chorusInt64, chorusSum, comm, nullptr);
        } else {
          first = chorusAllReduce(&b, &b, 1, chorusInt64, chorusSum, comm, nullptr);
          second = chorusAllReduce(&a, &a, 1, chorusInt64, chorusSum, child, nullptr);
        }
        EXPECT_NE(first, chorusSuccess);
        EXPECT_NE(second, chorusSuccess);
        chorusCommDestroy(child);
      },
      kSplitDeadline, c);
}

// Calls made on the family in the same order on every rank run in that order, whichever streams carry them: a
// child's call queued on a host stream, then a blocking call on the parent, many times over, never cross.
TEST(CommSplitShared, StreamCallsAndBlockingCallsRunInIssueOrderAcrossTheFamily) {
  runThreadWorld(
      3,
      [](chorusComm_t comm, int rank) {
        chorusComm_t child = nullptr;
        ASSERT_EQ(chorusCommSplit(comm, 0, rank, &child, nullptr), chorusSuccess);
        chorusStream_t stream = nullptr;
        ASSERT_EQ(chorusHostStreamCreate(&stream), chorusSuccess);
        std::vector<int64_t> queued(200), blocking(200);
        for (size_t i = 0; i < queued.size(); ++i) {
          queued[i] = static_cast<int64_t>(i) + rank;
          ASSERT_EQ(chorusAllReduce(&queued[i], &queued[i], 1, chorusInt64, chorusSum, child, stream), chorusSuccess)
              << chorusGetLastError(child);
          blocking[i] = 2 * static_cast<int64_t>(i) + rank;
          ASSERT_EQ(chorusAllReduce(&blocking[i], &blocking[i], 1, chorusInt64, chorusMax, comm, nullptr),
                    chorusSuccess)
              << chorusGetLastError(comm);
        }
        ASSERT_EQ(chorusStreamSynchronize(stream), chorusSuccess) << chorusGetLastError(nullptr);
        for (size_t i = 0; i < queued.size(); ++i) {
          EXPECT_EQ(queued[i], 3 * static_cast<int64_t>(i) + 3) << i;
          EXPECT_EQ(blocking[i], 2 * static_cast<int64_t>(i) + 2) << i;
        }
        chorusHostStreamDestroy(stream);
        chorusCommDestroy(child);
      },
      kSplitDeadline, suiteConfig());
}

// The C++ API: Communicator::split returns nothing for NOCOLOR, and a communicator otherwise.
TEST(CommSplitCpp, ReturnsNothingForNoColor) {
  const chorusUniqueId id = chorus::makeUniqueId();
  std::vector<std::thread> ranks;
  for (int r = 0; r < 3; ++r) {
    ranks.emplace_back([&id, r] {
      chorus::Communicator world(3, id, r, suiteConfig());
      std::optional<chorus::Communicator> child = world.split(r == 1 ? CHORUS_SPLIT_NOCOLOR : 0, -r);
      EXPECT_EQ(child.has_value(), r != 1);
      if (child) {
        EXPECT_EQ(child->size(), 2);
        EXPECT_EQ(child->rank(), r == 0 ? 1 : 0);
        std::vector<int32_t> v = {r};
        child->allReduce(std::span<int32_t>(v));
        EXPECT_EQ(v[0], 2);
      }
    });
  }
  for (auto& t : ranks) t.join();
}

}  // namespace
}  // namespace chorus::test
