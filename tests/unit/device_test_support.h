// What the device connection tests (staged, CUDA IPC, their setup) share: an emulated device that counts what it is
// asked and can hold copies in flight, device buffers filled through the copy engine, two ranks' host connections
// to each other in this process, loops that drive two ends with a deadline, and the fixture whose scenarios both
// kinds of device connection must pass.
#pragma once

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "core/deadline.h"
#include "core/error.h"
#include "device/device_api.h"
#include "emulation/device/emulated_device_api.h"
#include "transports/connection.h"
#include "transports/shm/shm_transport.h"
#include "transports/tcp/tcp_connection.h"
#include "tests/harness/error_capture.h"
#include "tests/unit/shm_pair.h"

namespace chorus::test {

using Clock = std::chrono::steady_clock;

// The emulated device under the name "gated emulated", counting device allocations, pinned allocations and copies;
// copies can be held behind a gate (a flag each stream waits on before every copy) to keep them in flight for as
// long as a test needs.
class GatedDeviceApi final : public DeviceApi {
 public:
  GatedDeviceApi() : gate_(static_cast<uint32_t*>(inner_.pinnedAlloc(sizeof(uint32_t)))) { *gate_ = 1; }
  ~GatedDeviceApi() override {
    openGate();
    inner_.pinnedFree(gate_);
  }
  const char* name() const override { return "gated emulated"; }
  bool available() override { return true; }
  MemoryLocation locate(const void* p, int* device) override { return inner_.locate(p, device); }
  int currentDevice() override { return inner_.currentDevice(); }
  void setDevice(int device) override { inner_.setDevice(device); }
  void* deviceAlloc(size_t bytes) override {
    ++deviceAllocs;
    return inner_.deviceAlloc(bytes);
  }
  void deviceFree(void* p) override { inner_.deviceFree(p); }
  void* pinnedAlloc(size_t bytes) override {
    ++pinnedAllocs;
    return inner_.pinnedAlloc(bytes);
  }
  void pinnedFree(void* p) override { inner_.pinnedFree(p); }
  DeviceStream createStream() override { return inner_.createStream(); }
  void destroyStream(DeviceStream s) override { inner_.destroyStream(s); }
  void copyAsync(void* dst, const void* src, size_t bytes, DeviceStream s) override {
    ++copies;
    if (gated_) inner_.streamWaitFlag(s, gate_, 1);
    inner_.copyAsync(dst, src, bytes, s);
  }
  void synchronize(DeviceStream s) override { inner_.synchronize(s); }
  DeviceEvent createEvent() override { return inner_.createEvent(); }
  void destroyEvent(DeviceEvent e) override { inner_.destroyEvent(e); }
  void recordEvent(DeviceEvent e, DeviceStream s) override { inner_.recordEvent(e, s); }
  bool eventDone(DeviceEvent e) override { return inner_.eventDone(e); }
  void streamWaitEvent(DeviceStream s, DeviceEvent e) override { inner_.streamWaitEvent(s, e); }
  void streamWaitFlag(DeviceStream s, const uint32_t* flag, uint32_t value) override {
    inner_.streamWaitFlag(s, flag, value);
  }
  void ipcExport(void* p, DeviceIpcHandle* handle) override { inner_.ipcExport(p, handle); }
  bool exportDmabuf(const void* p, size_t bytes, int* fd, uint64_t* offset) override {
    return inner_.exportDmabuf(p, bytes, fd, offset);
  }
  uint64_t allocationId(const void* p) override { return inner_.allocationId(p); }
  void* ipcOpen(const DeviceIpcHandle& handle) override { return inner_.ipcOpen(handle); }
  void ipcClose(void* p) override { inner_.ipcClose(p); }
  Reducer& reducer(DeviceStream s) override { return inner_.reducer(s); }

  // From now on copies wait until openGate().
  void closeGate() {
    __atomic_store_n(gate_, 0, __ATOMIC_RELEASE);
    gated_ = true;
  }
  // Lets the copies held so far run, and later ones run at once.
  void openGate() {
    gated_ = false;
    __atomic_store_n(gate_, 1, __ATOMIC_RELEASE);
  }

  std::atomic<int> deviceAllocs{0}, pinnedAllocs{0}, copies{0};

 private:
  EmulatedDeviceApi inner_;
  uint32_t* gate_;
  bool gated_ = false;
};

// Device memory of one emulated device (none for 0 bytes), filled and read back through its copy engine (as on a
// real GPU).
class DeviceBuffer {
 public:
  DeviceBuffer(DeviceApi& api, size_t bytes) : api_(api), bytes_(bytes), p_(bytes ? api.deviceAlloc(bytes) : nullptr) {}
  ~DeviceBuffer() { api_.deviceFree(p_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  // The device pointer (nullptr for 0 bytes).
  void* get() const { return p_; }
  // Copies v (exactly the buffer's size, else std::logic_error) into the buffer and waits for the copy.
  void write(const std::vector<char>& v) {
    if (v.size() != bytes_) throw std::logic_error("DeviceBuffer::write: size");
    if (bytes_ == 0) return;
    DeviceStream s = api_.createStream();
    api_.copyAsync(p_, v.data(), bytes_, s);
    api_.synchronize(s);
    api_.destroyStream(s);
  }
  // The buffer's bytes, once a copy out of it is done.
  std::vector<char> read() const {
    std::vector<char> v(bytes_);
    if (bytes_ == 0) return v;
    DeviceStream s = api_.createStream();
    api_.copyAsync(v.data(), p_, bytes_, s);
    api_.synchronize(s);
    api_.destroyStream(s);
    return v;
  }

 private:
  DeviceApi& api_;
  size_t bytes_;
  void* p_;
};

// n bytes that differ from seed to seed and do not repeat with the chunk or slot size.
inline std::vector<char> pattern(size_t n, int seed) {
  std::vector<char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<char>((i * 131 + static_cast<size_t>(seed) * 7 + i / 4099) & 0xff);
  return v;
}

// Two connected TCP ends over a socketpair: rank 0's and rank 1's.
inline std::pair<std::unique_ptr<Connection>, std::unique_ptr<Connection>> tcpPair() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) throw std::runtime_error("socketpair");
  return {std::make_unique<TcpConnection>(0, 1, "socketpair", std::vector<int>{fds[0]}),
          std::make_unique<TcpConnection>(1, 0, "socketpair", std::vector<int>{fds[1]})};
}

// Two connected TCP ends over `nsocks` socketpairs that seal their frames (CHORUS_ENCRYPT's records) under fixed
// keys, one per direction: rank 0's and rank 1's.
inline std::pair<std::unique_ptr<Connection>, std::unique_ptr<Connection>> sealedTcpPair(size_t nsocks = 1) {
  std::vector<int> a, b;
  std::vector<TcpLinkKeys> keysA, keysB;
  for (size_t i = 0; i < nsocks; ++i) {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) throw std::runtime_error("socketpair");
    a.push_back(fds[0]);
    b.push_back(fds[1]);
    RecordCipher::Key up{}, down{};
    up.fill(static_cast<uint8_t>(0x10 + i));
    down.fill(static_cast<uint8_t>(0x80 + i));
    keysA.push_back(TcpLinkKeys{up, down});
    keysB.push_back(TcpLinkKeys{down, up});
  }
  return {std::make_unique<TcpConnection>(0, 1, "sealed socketpair", a, keysA),
          std::make_unique<TcpConnection>(1, 0, "sealed socketpair", b, keysB)};
}

// Two connected shared-memory ends through the real handshake, under a job key unique to this process and caller:
// rank 0's and rank 1's.
inline std::pair<std::unique_ptr<Connection>, std::unique_ptr<Connection>> shmPair(const std::string& jobPrefix) {
  return connectShmPair(jobPrefix, 256 << 10);
}

// The host connections a device connection suite runs over.
enum class HostKind { kTcp, kShm };

// "Tcp" or "Shm": the name suffix of a suite instantiated over HostKind.
inline std::string hostKindName(const ::testing::TestParamInfo<HostKind>& info) {
  return info.param == HostKind::kTcp ? "Tcp" : "Shm";
}

// Two ranks in this process: their host connections to each other (of the kind asked for; shared memory under
// jobPrefix) and each one's device. A suite derives its ends from it, adding the device connections over them,
// which are then destroyed before the hosts and devices they use.
struct HostEnds {
  HostEnds(HostKind kind, const std::string& jobPrefix) {
    std::tie(hostA, hostB) = kind == HostKind::kTcp ? tcpPair() : shmPair(jobPrefix);
  }
  // Over host connections made elsewhere (ib's, tests/unit/ib_pair.h).
  explicit HostEnds(std::pair<std::unique_ptr<Connection>, std::unique_ptr<Connection>> ends)
      : hostA(std::move(ends.first)), hostB(std::move(ends.second)) {}
  std::unique_ptr<Connection> hostA, hostB;  // rank 0's end, rank 1's end
  GatedDeviceApi apiA, apiB;
};

// Progresses both ends in turn until done() holds; false after 20 s.
template <typename Done>
bool drive(Connection& a, Connection& b, Done done) {
  const auto until = Clock::now() + std::chrono::seconds(20);
  while (!done()) {
    if (Clock::now() > until) return false;
    a.progress();
    b.progress();
  }
  return true;
}

// Messages from end a to end b: a device buffer on each side of each, the bytes each carries, and the ids that
// posting gave them.
struct MessageBatch {
  std::vector<std::unique_ptr<DeviceBuffer>> out, in;
  std::vector<std::vector<char>> sent;
  std::vector<uint64_t> sendIds, recvIds;
};

// The ids that posting gave the two messages of one exchange in both directions.
struct ExchangeIds {
  uint64_t sendA, sendB, recvB, recvA;
};

// The fixture of a device connection suite run over each HostKind: e_ holds Ends (a HostEnds built from the kind,
// with device ends a and b), made afresh for every test. Its methods are the scenarios both kinds of device
// connection must pass; a suite adds what is its own through the callbacks and the checks after them.
template <typename Ends>
class DeviceEndsTest : public ::testing::TestWithParam<HostKind> {
 protected:
  void SetUp() override { e_ = std::make_unique<Ends>(GetParam()); }

  // Expects both device ends idle and both host connections too: nothing of the device connections' is left there.
  void expectHostsQuiet() {
    EXPECT_FALSE(e_->a->busy());
    EXPECT_FALSE(e_->b->busy());
    EXPECT_FALSE(e_->hostA->busy());
    EXPECT_FALSE(e_->hostB->busy());
  }
  // What the communicator does after an error: both ends give up, which waits for their copies in flight (that
  // may read or write the test's buffers, about to be freed).
  void abandonBoth() {
    e_->a->abandon();
    e_->b->abandon();
  }
  // Drives both device ends until neither is busy; false after 20 s.
  bool driveUntilIdle() {
    return drive(*e_->a, *e_->b, [&] { return !e_->a->busy() && !e_->b->busy(); });
  }

  // Expects a to name rank 1 as its peer and b rank 0, a's description to start with prefix and to name its host
  // connection, and a to be idle.
  void expectDescribedOverTheHost(const std::string& prefix) {
    EXPECT_EQ(e_->a->peer(), 1);
    EXPECT_EQ(e_->b->peer(), 0);
    const std::string d = e_->a->describe();
    EXPECT_EQ(d.find(prefix), 0u) << d;
    EXPECT_NE(d.find(e_->hostA->describe()), std::string::npos) << d;
    EXPECT_FALSE(e_->a->busy());
  }

  // For each size n, device to device with tag 3: pattern(n, 1) from a to b and pattern(n, 2) from b to a at once.
  // Expects the ids of each message's send and receive to match, both ends to finish, a's send to be counted, the
  // bytes in place and the hosts quiet; expectCounts(ids) adds the suite's own checks. Stops at a size that sticks.
  template <typename ExpectCounts>
  void exchangeEachSizeBothWays(const std::vector<size_t>& sizes, ExpectCounts expectCounts) {
    for (size_t n : sizes) {
      SCOPED_TRACE("bytes " + std::to_string(n));
      DeviceBuffer outA(e_->apiA, n), inA(e_->apiA, n), outB(e_->apiB, n), inB(e_->apiB, n);
      const auto ab = pattern(n, 1), ba = pattern(n, 2);
      outA.write(ab);
      outB.write(ba);
      ExchangeIds ids;
      ids.sendA = e_->a->isend(outA.get(), n, 3);
      ids.sendB = e_->b->isend(outB.get(), n, 3);
      ids.recvB = e_->b->irecv(inB.get(), n, 3);
      ids.recvA = e_->a->irecv(inA.get(), n, 3);
      EXPECT_EQ(ids.sendA, ids.recvA);
      EXPECT_EQ(ids.sendB, ids.recvB);
      EXPECT_TRUE(e_->a->busy());
      ASSERT_TRUE(driveUntilIdle());
      EXPECT_EQ(e_->a->sendsDone(), ids.sendA + 1);
      expectCounts(ids);
      EXPECT_TRUE(inB.read() == ab);
      EXPECT_TRUE(inA.read() == ba);
      expectHostsQuiet();
    }
  }

  // Queues a send on a for each size, of pattern(size, firstSeed + i) from a device buffer of a's, with a receive
  // buffer of b's beside it; batch records the bytes and the send ids.
  void queueSends(MessageBatch& batch, const std::vector<size_t>& sizes, int firstSeed, uint32_t tag) {
    for (size_t i = 0; i < sizes.size(); ++i) {
      batch.sent.push_back(pattern(sizes[i], firstSeed + static_cast<int>(i)));
      batch.out.push_back(std::make_unique<DeviceBuffer>(e_->apiA, sizes[i]));
      batch.in.push_back(std::make_unique<DeviceBuffer>(e_->apiB, sizes[i]));
      batch.out.back()->write(batch.sent.back());
      batch.sendIds.push_back(e_->a->isend(batch.out.back()->get(), sizes[i], tag));
    }
  }
  // Posts b's receive for every message of batch, in order; batch records the ids.
  void postReceives(MessageBatch& batch, uint32_t tag) {
    for (size_t i = 0; i < batch.in.size(); ++i) {
      batch.recvIds.push_back(e_->b->irecv(batch.in[i]->get(), batch.sent[i].size(), tag));
    }
  }
  // Drives both ends until every message of batch is sent and received (eachRound() runs before each look), then
  // expects every message's bytes in place.
  template <typename EachRound>
  void awaitBatch(const MessageBatch& batch, EachRound eachRound) {
    const uint64_t n = batch.sent.size();
    ASSERT_TRUE(drive(*e_->a, *e_->b, [&] {
      eachRound();
      return e_->b->recvsDone() == n && e_->a->sendsDone() == n;
    }));
    for (size_t i = 0; i < n; ++i) ASSERT_TRUE(batch.in[i]->read() == batch.sent[i]) << "message " << i;
  }

  // Queues a message of each size on a (message i carries pattern(size, i), tag 7), then all their receives on b;
  // expects both sides' ids to count up from 0 and every message to arrive intact (eachRound() runs every round).
  template <typename EachRound>
  void sendQueuedMessagesInOrder(const std::vector<size_t>& sizes, EachRound eachRound) {
    MessageBatch batch;
    queueSends(batch, sizes, 0, 7);
    postReceives(batch, 7);
    for (size_t i = 0; i < sizes.size(); ++i) {
      EXPECT_EQ(batch.sendIds[i], static_cast<uint64_t>(i));
      EXPECT_EQ(batch.recvIds[i], static_cast<uint64_t>(i));
    }
    awaitBatch(batch, eachRound);
  }

  // Queues `count` messages of `size` bytes on a (message i carries pattern(size, 10 + i), tag 5) while b has posted
  // no receive, progresses a alone for 300 ms and calls whileAbsent(the copies a made meanwhile); then b receives
  // them all, and every message is expected intact.
  template <typename WhileAbsent>
  void sendToALateReceiver(int count, size_t size, WhileAbsent whileAbsent) {
    MessageBatch batch;
    queueSends(batch, std::vector<size_t>(count, size), 10, 5);
    const int copiesBefore = e_->apiA.copies;
    const auto until = Clock::now() + std::chrono::milliseconds(300);
    while (Clock::now() < until) {
      e_->a->progress();
      std::this_thread::yield();  // the emulated copies run on threads of their own
    }
    whileAbsent(e_->apiA.copies - copiesBefore);
    postReceives(batch, 5);
    awaitBatch(batch, [] {});
  }

  // Sends `bytes` from a device buffer of a's with sendTag while b expects `expected` bytes with recvTag, drives
  // both until one throws, hands the error to expectError, then gives both ends up.
  template <typename ExpectError>
  void failMismatched(size_t bytes, size_t expected, uint32_t sendTag, uint32_t recvTag, ExpectError expectError) {
    DeviceBuffer out(e_->apiA, bytes), in(e_->apiB, bytes);
    e_->a->isend(out.get(), bytes, sendTag);
    e_->b->irecv(in.get(), expected, recvTag);
    Error err = errorFrom([&] { drive(*e_->a, *e_->b, [] { return false; }); });
    expectError(err);
    abandonBoth();
  }

  // Starts an n-byte device message from a to b, lets part of it through, then a gives up (twice: it is
  // idempotent); expects b to fail within 10 s, hands its error to expectError, then gives both ends up.
  template <typename ExpectError>
  void abandonMidTransfer(size_t n, ExpectError expectError) {
    DeviceBuffer out(e_->apiA, n), in(e_->apiB, n);
    out.write(pattern(n, 6));
    e_->a->isend(out.get(), n, 1);
    e_->b->irecv(in.get(), n, 1);
    // Let part of it through, then the sender gives up.
    ASSERT_TRUE(drive(*e_->a, *e_->b, [&] { return e_->apiB.copies >= 2; }));
    EXPECT_EQ(e_->b->recvsDone(), 0u);
    e_->a->abandon();
    e_->a->abandon();  // idempotent
    const auto start = Clock::now();
    Error err = errorFrom([&] {
      const auto until = Clock::now() + std::chrono::seconds(20);
      while (Clock::now() < until) e_->b->progress();
    });
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));
    expectError(err);
    abandonBoth();
  }

  // Holds the copy that starts an n-byte device message from a behind the gate: expects a to make no progress and
  // to say a copy is in flight, and calls whileHeld(). Then expects a caller that sleeps in poll whenever nothing
  // moves (briefly while a copy is in flight, as CommIO does) to finish promptly once the gate opens, bytes in place.
  template <typename WhileHeld>
  void holdACopyInFlight(size_t n, WhileHeld whileHeld) {
    DeviceBuffer out(e_->apiA, n), in(e_->apiB, n);
    const auto data = pattern(n, 8);
    out.write(data);
    e_->apiA.closeGate();
    e_->a->isend(out.get(), n, 1);
    EXPECT_TRUE(e_->a->progress());  // the copy starts (to pinned memory, or into the peer's ring)
    for (int i = 0; i < 50; ++i) EXPECT_FALSE(e_->a->progress()) << "nothing can move behind the gate";
    EXPECT_EQ(e_->a->capabilities().descriptorless, static_cast<DescriptorlessProgress*>(e_->a.get()));
    EXPECT_TRUE(e_->a->movesWithoutDescriptor());
    EXPECT_EQ(e_->a->pendingReceiveBytes(), 0u);
    whileHeld();

    // A caller that sleeps in poll whenever nothing moves still finishes promptly once the copy may run.
    e_->b->irecv(in.get(), n, 1);
    e_->apiA.openGate();
    const auto until = Clock::now() + std::chrono::seconds(10);
    while ((e_->a->busy() || e_->b->busy()) && Clock::now() < until) {
      bool moved = e_->a->progress();
      moved |= e_->b->progress();
      if (moved) continue;
      std::vector<pollfd> fds;
      e_->a->addPollFds(fds);
      e_->b->addPollFds(fds);
      ::poll(fds.data(), fds.size(), e_->a->movesWithoutDescriptor() || e_->b->movesWithoutDescriptor() ? 1 : 20);
    }
    ASSERT_FALSE(e_->a->busy() || e_->b->busy());
    EXPECT_TRUE(in.read() == data);
    EXPECT_FALSE(e_->a->movesWithoutDescriptor());
    EXPECT_FALSE(e_->b->movesWithoutDescriptor());
  }

  // Sends a value from hostA to hostB directly and expects it to arrive: the host connection carries host messages.
  void expectHostsCarryAMessage() {
    uint64_t value = 0x0123456789abcdefull, got = 0;
    e_->hostA->isend(&value, sizeof(value), 77);
    e_->hostB->irecv(&got, sizeof(got), 77);
    ASSERT_TRUE(drive(*e_->hostA, *e_->hostB, [&] { return !e_->hostA->busy() && !e_->hostB->busy(); }));
    EXPECT_EQ(got, value);
  }

  std::unique_ptr<Ends> e_;
};

}  // namespace chorus::test
