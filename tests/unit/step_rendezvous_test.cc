// Halving-doubling's and recursive doubling's rendezvous before a large two-way step (algorithms/
// halving_doubling_exchange.h): which steps have one, and that it comes before the step's bulk.
#include <gtest/gtest.h>

#include <vector>

#include "algorithms/halving_doubling_exchange.h"

namespace chorus {
namespace {

struct Post {
  bool isSend;
  int peer;
  size_t bytes;
  bool operator==(const Post&) const = default;
};

// A PeerIO that only records what is posted; every wait returns at once.
class RecordingIO : public PeerIO {
 public:
  explicit RecordingIO(int size) : size_(size) {}
  int rank() const override { return 0; }
  int size() const override { return size_; }
  Request isend(int peer, const void*, size_t bytes) override {
    posts.push_back({true, peer, bytes});
    return Request{nullptr, true, posts.size(), bytes};
  }
  Request irecv(int peer, void*, size_t bytes) override {
    posts.push_back({false, peer, bytes});
    return Request{nullptr, false, posts.size(), bytes};
  }
  void wait(const Request&) override {}
  void waitAll() override {}
  Reducer& reducer() override { return hostReducer(); }
  char* slot(SlotPool, int) override { return nullptr; }
  int slots() const override { return 0; }
  char* workspace(size_t) override { return nullptr; }
  size_t sliceBytes() const override { return 1 << 30; }
  char* scratch(size_t) override { return nullptr; }
  std::vector<Post> posts;

 private:
  int size_;
};

TEST(StepRendezvousTest, OnlyLargeTwoWayStepsAmongMoreThanTwoRanksHaveOne) {
  const size_t large = kRendezvousBytes, small = kRendezvousBytes - 1;
  RecordingIO four(4);
  rendezvousForStep(four, 2, large, small);
  EXPECT_EQ(four.posts, (std::vector<Post>{{true, 2, 1}, {false, 2, 1}}));
  for (auto [sendBytes, recvBytes] : {std::pair{large, size_t{0}}, {size_t{0}, large}, {small, small}}) {
    RecordingIO io(4);
    rendezvousForStep(io, 1, sendBytes, recvBytes);
    EXPECT_TRUE(io.posts.empty()) << sendBytes << " " << recvBytes;
  }
  RecordingIO two(2);  // no third rank to crowd the partner's link
  rendezvousForStep(two, 1, large, large);
  EXPECT_TRUE(two.posts.empty());
}

TEST(StepRendezvousTest, ComesBeforeTheStepsBulk) {
  std::vector<char> buffer(2 * kRendezvousBytes);
  RecordingIO swap(8);
  exchangeWithPeer(swap, 4, buffer.data(), kRendezvousBytes, buffer.data() + kRendezvousBytes, kRendezvousBytes);
  EXPECT_EQ(swap.posts, (std::vector<Post>{{true, 4, 1}, {false, 4, 1}, {false, 4, kRendezvousBytes},
                                           {true, 4, kRendezvousBytes}}));
  RecordingIO reduce(8);
  const size_t elems = kRendezvousBytes / sizeof(float);
  std::vector<char> landing(kRendezvousBytes), mine(kRendezvousBytes);
  exchangeAndReduce(reduce, 5, buffer.data(), elems, landing.data(), mine.data(), mine.data(), elems, chorusFloat32,
                    chorusSum);
  EXPECT_EQ(reduce.posts, (std::vector<Post>{{true, 5, 1}, {false, 5, 1}, {false, 5, kRendezvousBytes},
                                             {true, 5, kRendezvousBytes}}));
}

}  // namespace
}  // namespace chorus
