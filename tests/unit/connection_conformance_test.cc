// What every connection must do, whatever carries its bytes: the same tests over shared memory, TCP, staged device
// connections and CUDA IPC (emulated devices), each over both host transports. A new transport gets them by adding
// one line to kKinds.
#include <gtest/gtest.h>
#include <poll.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "tests/harness/error_capture.h"
#include "tests/unit/device_test_support.h"
#include "tests/unit/ib_pair.h"
#include "tests/unit/ipc_test_ends.h"
#include "transports/device/staged_connection.h"
#include "transports/family_connection.h"

namespace chorus::test {
namespace {

// Two connected ends, rank 0's (a) and rank 1's (b), with the memory their messages live in (host memory for the
// host transports, each rank's emulated device memory for the device connections).
class Ends {
 public:
  virtual ~Ends() = default;
  virtual Connection& a() = 0;
  virtual Connection& b() = 0;
  // A buffer of `bytes` on rank 0's side (onA) or rank 1's, holding `content` (its size when non-empty).
  virtual void* buffer(bool onA, size_t bytes) = 0;
  virtual void write(bool onA, void* p, const std::vector<char>& content) = 0;
  virtual std::vector<char> read(bool onA, const void* p, size_t bytes) = 0;
  // Makes rank 0's end vanish as a dead process's would: no goodbye, no abandon note.
  virtual void vanishA() = 0;
};

// Host transports: buffers in this process's memory.
class HostConnectionEnds : public Ends {
 public:
  explicit HostConnectionEnds(std::pair<std::unique_ptr<Connection>, std::unique_ptr<Connection>> ends)
      : a_(std::move(ends.first)), b_(std::move(ends.second)) {}
  Connection& a() override { return *a_; }
  Connection& b() override { return *b_; }
  void* buffer(bool, size_t bytes) override {
    buffers_.push_back(std::make_unique<std::vector<char>>(bytes == 0 ? 1 : bytes));
    return buffers_.back()->data();
  }
  void write(bool, void* p, const std::vector<char>& content) override {
    std::copy(content.begin(), content.end(), static_cast<char*>(p));
  }
  std::vector<char> read(bool, const void* p, size_t bytes) override {
    const char* c = static_cast<const char*>(p);
    return std::vector<char>(c, c + bytes);
  }
  void vanishA() override { a_.reset(); }

 private:
  std::unique_ptr<Connection> a_, b_;
  std::vector<std::unique_ptr<std::vector<char>>> buffers_;
};

// Device connections: buffers in each rank's emulated device memory, the connections layered over host ends.
template <typename DeviceEnds>
class DeviceConnectionEnds : public Ends {
 public:
  explicit DeviceConnectionEnds(std::unique_ptr<DeviceEnds> e) : e_(std::move(e)) {}
  ~DeviceConnectionEnds() override { buffers_.clear(); }
  Connection& a() override { return *e_->a; }
  Connection& b() override { return *e_->b; }
  void* buffer(bool onA, size_t bytes) override {
    buffers_.push_back(std::make_unique<DeviceBuffer>(onA ? e_->apiA : e_->apiB, bytes));
    return buffers_.back()->get();
  }
  void write(bool onA, void* p, const std::vector<char>& content) override { find(p).write(content); }
  std::vector<char> read(bool onA, const void* p, size_t bytes) override { return find(p).read(); }
  void vanishA() override {
    e_->a.reset();
    e_->hostA.reset();  // no goodbye: as if its process had died
  }

 private:
  DeviceBuffer& find(const void* p) {
    for (auto& b : buffers_) {
      if (b->get() == p) return *b;
    }
    throw std::logic_error("not a buffer of these ends");
  }
  std::unique_ptr<DeviceEnds> e_;
  std::vector<std::unique_ptr<DeviceBuffer>> buffers_;
};

struct ConformanceStagedEnds : HostEnds {
  explicit ConformanceStagedEnds(HostKind kind) : HostEnds(kind, "conformance-staged-") { layer(); }
  explicit ConformanceStagedEnds(std::pair<std::unique_ptr<Connection>, std::unique_ptr<Connection>> ends)
      : HostEnds(std::move(ends)) {
    layer();
  }
  void layer() {
    a = std::make_unique<StagedConnection>(0, *hostA, apiA);
    b = std::make_unique<StagedConnection>(1, *hostB, apiB);
  }
  std::unique_ptr<StagedConnection> a, b;
};

struct Kind {
  const char* name;
  std::function<std::unique_ptr<Ends>()> make;
};

// Every connection Chorus has, each over every host transport it layers on.
const std::vector<Kind> kKinds = {
    {"Shm", [] { return std::make_unique<HostConnectionEnds>(shmPair("conformance-shm-")); }},
    {"Tcp", [] { return std::make_unique<HostConnectionEnds>(tcpPair()); }},
    {"TcpSealed", [] { return std::make_unique<HostConnectionEnds>(sealedTcpPair()); }},
    {"TcpSealedThreeSockets", [] { return std::make_unique<HostConnectionEnds>(sealedTcpPair(3)); }},
#ifdef CHORUS_HAVE_VERBS
    {"IbSoft", [] { return std::make_unique<HostConnectionEnds>(ibPair()); }},
    {"IbSoftThreeLanes", [] { return std::make_unique<HostConnectionEnds>(ibPair(3)); }},
#endif
    {"StagedOverShm",
     [] {
       return std::make_unique<DeviceConnectionEnds<ConformanceStagedEnds>>(
           std::make_unique<ConformanceStagedEnds>(HostKind::kShm));
     }},
#ifdef CHORUS_HAVE_VERBS
    // Device sends straight from (emulated) device memory through dma-buf regions; receives staged.
    {"DirectSendsOverIbSoft",
     [] {
       return std::make_unique<DeviceConnectionEnds<ConformanceStagedEnds>>(
           std::make_unique<ConformanceStagedEnds>(ibPair()));
     }},
#endif
    {"StagedOverTcp",
     [] {
       return std::make_unique<DeviceConnectionEnds<ConformanceStagedEnds>>(
           std::make_unique<ConformanceStagedEnds>(HostKind::kTcp));
     }},
    {"CudaIpcOverShm",
     [] {
       return std::make_unique<DeviceConnectionEnds<IpcEnds>>(
           std::make_unique<IpcEnds>(HostKind::kShm, "conformance-ipc-"));
     }},
    {"CudaIpcOverTcp",
     [] {
       return std::make_unique<DeviceConnectionEnds<IpcEnds>>(
           std::make_unique<IpcEnds>(HostKind::kTcp, "conformance-ipc-"));
     }},
};

class ConnectionConformanceTest : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override { e_ = GetParam().make(); }
  void TearDown() override { e_.reset(); }

  // Sends each size from a to b in posting order (tag 5), the receives posted `late` (after the sends have been
  // driven a while) or at once; expects every message intact and in order. Returns the sends a completed before
  // any receive was posted.
  uint64_t sendInOrder(const std::vector<size_t>& sizes, bool late) {
    std::vector<void*> out, in;
    std::vector<std::vector<char>> sent;
    for (size_t i = 0; i < sizes.size(); ++i) {
      out.push_back(e_->buffer(true, sizes[i]));
      in.push_back(e_->buffer(false, sizes[i]));
      sent.push_back(pattern(sizes[i], static_cast<int>(i) + 1));
      e_->write(true, out.back(), sent.back());
    }
    for (size_t i = 0; i < sizes.size(); ++i) EXPECT_EQ(e_->a().isend(out[i], sizes[i], 5), i);
    uint64_t doneEarly = 0;
    if (late) {
      for (int round = 0; round < 2000; ++round) {
        e_->a().progress();
        e_->b().progress();
      }
      doneEarly = e_->a().sendsDone();
    }
    for (size_t i = 0; i < sizes.size(); ++i) EXPECT_EQ(e_->b().irecv(in[i], sizes[i], 5), i);
    uint64_t lastDone = 0;
    const bool finished = drive(e_->a(), e_->b(), [&] {
      const uint64_t done = e_->b().recvsDone();
      EXPECT_GE(done, lastDone);  // completions only move forward
      lastDone = done;
      return done == sizes.size() && e_->a().sendsDone() == sizes.size();
    });
    EXPECT_TRUE(finished) << "sends done " << e_->a().sendsDone() << ", receives done " << e_->b().recvsDone();
    if (!finished) return doneEarly;
    for (size_t i = 0; i < sizes.size(); ++i) {
      EXPECT_EQ(e_->read(false, in[i], sizes[i]), sent[i]) << "message " << i << " of " << sizes[i] << " bytes";
    }
    // Then both go quiet (a device connection's last credits may still be on their way).
    EXPECT_TRUE(drive(e_->a(), e_->b(), [&] { return !e_->a().busy() && !e_->b().busy(); }));
    return doneEarly;
  }

  // Drives b (with hang-up checks, as the communicator does) until it throws; fails the test after 20 s.
  Error errorOnB() {
    return errorFrom([&] {
      const auto until = Clock::now() + std::chrono::seconds(20);
      while (Clock::now() < until) {
        e_->b().progress();
        std::vector<pollfd> fds;
        e_->b().addHangupFds(fds);
        if (!fds.empty() && ::poll(fds.data(), fds.size(), 1) > 0) e_->b().checkAlive();
      }
    });
  }

  std::unique_ptr<Ends> e_;
};

// A wrapper answers with the capabilities of the connection it wraps: neither none nor all of them.
TEST(ConnectionCapabilitiesTest, AFamilyConnectionAnswersWithTheSharedOnes) {
  auto ends = tcpPair();
  const ConnectionCapabilities inner = ends.first->capabilities();
  ASSERT_NE(inner.striping, nullptr);
  ASSERT_NE(inner.peeking, nullptr);
  const std::shared_ptr<Connection> shared = FamilyConnection::share(ends.first);
  const ConnectionCapabilities outer = ends.first->capabilities();
  EXPECT_EQ(outer.striping, inner.striping);
  EXPECT_EQ(outer.peeking, inner.peeking);
  EXPECT_EQ(outer.singleCopy, nullptr);
  EXPECT_EQ(outer.registration, nullptr);
}

TEST_P(ConnectionConformanceTest, MessagesOfEverySizeArriveIntactAndInOrder) {
  sendInOrder({1, 31, 32, 33, 4096, 65537, 7, 300000, 2}, false);
}

TEST_P(ConnectionConformanceTest, ZeroLengthAndLargeMessages) {
  sendInOrder({0, (size_t{9} << 20) + 3, 0, 0, 17}, false);
}

// A sender far ahead of its receiver is held back (nothing is dropped or buffered without bound), then completes
// once the receives are posted.
TEST_P(ConnectionConformanceTest, ALateReceiverHoldsTheSenderBack) {
  const uint64_t doneEarly = sendInOrder(std::vector<size_t>(8, size_t{3} << 20), true);
  EXPECT_LT(doneEarly, 8u) << "24 MiB was taken with no receive posted";
}

TEST_P(ConnectionConformanceTest, BothDirectionsAtOnce) {
  const size_t n = (size_t{2} << 20) + 11;
  void* outA = e_->buffer(true, n);
  void* inA = e_->buffer(true, n);
  void* outB = e_->buffer(false, n);
  void* inB = e_->buffer(false, n);
  e_->write(true, outA, pattern(n, 1));
  e_->write(false, outB, pattern(n, 2));
  e_->a().isend(outA, n, 8);
  e_->b().isend(outB, n, 8);
  e_->a().irecv(inA, n, 8);
  e_->b().irecv(inB, n, 8);
  ASSERT_TRUE(drive(e_->a(), e_->b(), [&] { return !e_->a().busy() && !e_->b().busy(); }));
  EXPECT_EQ(e_->read(true, inA, n), pattern(n, 2));
  EXPECT_EQ(e_->read(false, inB, n), pattern(n, 1));
}

TEST_P(ConnectionConformanceTest, ASizeMismatchIsAMismatchOnTheReceiver) {
  void* out = e_->buffer(true, 5000);
  void* in = e_->buffer(false, 4000);
  e_->write(true, out, pattern(5000, 3));
  e_->a().isend(out, 5000, 4);
  e_->b().irecv(in, 4000, 4);
  const Error err = errorFrom([&] { drive(e_->a(), e_->b(), [] { return false; }); });
  EXPECT_EQ(err.failure(), Failure::kMismatch) << err.what();
  EXPECT_NE(std::string(err.what()).find("rank 1, peer 0: the peer sent 5000 bytes"), std::string::npos) << err.what();
  e_->a().abandon();
  e_->b().abandon();
}

// A peer whose process dies in the middle of a message: the receiver fails with the peer named, never hangs.
TEST_P(ConnectionConformanceTest, APeerThatVanishesMidMessageFailsTheReceiver) {
  const size_t n = size_t{64} << 20;
  void* out = e_->buffer(true, n);
  void* in = e_->buffer(false, n);
  e_->write(true, out, pattern(n, 4));
  e_->a().isend(out, n, 6);
  e_->b().irecv(in, n, 6);
  for (int round = 0; round < 5; ++round) {
    e_->a().progress();
    e_->b().progress();
  }
  ASSERT_LT(e_->b().recvsDone(), 1u) << "the message finished before its sender could vanish";
  e_->vanishA();
  const Error err = errorOnB();
  EXPECT_EQ(err.code(), chorusRemoteError) << err.what();
  EXPECT_TRUE(err.failure() == Failure::kPeerLost || err.failure() == Failure::kRemoteError) << err.what();
  EXPECT_NE(std::string(err.what()).find("peer 0"), std::string::npos) << err.what();
  e_->b().abandon();
}

// A peer that gives up (an error or an abort of its own) fails the rank waiting on it at once.
TEST_P(ConnectionConformanceTest, APeerThatAbandonsFailsTheWaiterAtOnce) {
  void* in = e_->buffer(false, 1000);
  e_->b().irecv(in, 1000, 7);
  e_->b().progress();
  e_->a().abandon();
  const Error err = errorOnB();
  EXPECT_EQ(err.code(), chorusRemoteError) << err.what();
  EXPECT_TRUE(err.failure() == Failure::kRemoteError || err.failure() == Failure::kPeerLost) << err.what();
  e_->b().abandon();
}

// A peer that gives up because a third rank vanished says so: the waiter's error names that rank, typed.
TEST_P(ConnectionConformanceTest, APeerThatAbandonsPassesOnTheRankItLost) {
  void* in = e_->buffer(false, 1000);
  e_->b().irecv(in, 1000, 7);
  e_->b().progress();
  e_->a().abandon(/*lostPeer=*/6);
  const Error err = errorOnB();
  EXPECT_EQ(err.code(), chorusRemoteError) << err.what();
  EXPECT_EQ(err.failure(), Failure::kPeerLost) << err.what();
  EXPECT_EQ(err.lostPeer(), 6) << err.what();
  EXPECT_NE(std::string(err.what()).find("because rank 6 vanished"), std::string::npos) << err.what();
  e_->b().abandon();
}

INSTANTIATE_TEST_SUITE_P(Transports, ConnectionConformanceTest, ::testing::ValuesIn(kKinds),
                         [](const ::testing::TestParamInfo<Kind>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace chorus::test
