#include "core/bootstrap/store.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>
#include <set>
#include <thread>

#include "core/bootstrap/store_protocol.h"
#include "core/error.h"
#include "tests/harness/error_capture.h"

namespace chorus {
namespace {

using test::errorFrom;

namespace wire = store_protocol;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

const std::string kJob = "00112233aabbccdd";

Deadline soon() { return Deadline::after(20); }

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// A blocking IPv4 socket connected to 127.0.0.1:port with a receive timeout, for speaking raw bytes to the server.
class RawConnection {
 public:
  explicit RawConnection(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    EXPECT_GE(fd_, 0);
    timeval timeout{10, 0};
    EXPECT_EQ(::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)), 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << std::strerror(errno);
  }
  ~RawConnection() { ::close(fd_); }

  void send(const Bytes& bytes) {
    ASSERT_EQ(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
  }
  void sendHello() {
    send(wire::encodeFrame(wire::Op::kHello, wire::Status::kOk, kJob, wire::encodeUint32(wire::kVersion)));
    uint8_t header[wire::kHeaderBytes];
    ASSERT_EQ(::recv(fd_, header, sizeof(header), MSG_WAITALL), static_cast<ssize_t>(sizeof(header)));
    EXPECT_EQ(wire::decodeHeader(header).status, wire::Status::kOk);
  }
  // True when the server closed the connection (EOF or reset) within the receive timeout; data is skipped.
  bool closedByPeer() {
    uint8_t buffer[256];
    for (;;) {
      ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
      if (n == 0) return true;
      if (n < 0) return errno == ECONNRESET;
    }
  }

 private:
  int fd_ = -1;
};

// A port that was free a moment ago (for the test where the client must start before the server).
uint16_t freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  ::close(fd);
  return ntohs(addr.sin_port);
}

TEST(StoreTest, SetGetAddCheckRoundTrip) {
  StoreServer server("127.0.0.1", 0, kJob);
  ASSERT_NE(server.port(), 0);
  StoreClient client("127.0.0.1", server.port(), kJob, 0, soon());
  EXPECT_EQ(client.address(), "127.0.0.1:" + std::to_string(server.port()));

  client.set("alpha", bytesOf("one"), soon());
  EXPECT_EQ(textOf(client.get("alpha", soon())), "one");
  client.set("alpha", bytesOf("two"), soon());
  EXPECT_EQ(textOf(client.get("alpha", soon())), "two");
  client.set("empty", {}, soon());
  EXPECT_TRUE(client.get("empty", soon()).empty());

  EXPECT_EQ(client.add("counter", 5, soon()), 5);
  EXPECT_EQ(client.add("counter", -7, soon()), -2);
  EXPECT_EQ(textOf(client.get("counter", soon())), "-2");

  EXPECT_TRUE(client.check({"alpha", "empty", "counter"}, soon()));
  EXPECT_FALSE(client.check({"alpha", "missing"}, soon()));
  EXPECT_TRUE(client.check({}, soon()));

  Bytes large(8 << 20);
  for (size_t i = 0; i < large.size(); ++i) large[i] = static_cast<uint8_t>(i * 131 + 7);
  client.set("large", large, soon());
  EXPECT_EQ(client.get("large", soon()), large);
}

TEST(StoreTest, ArgumentErrorsLeaveTheClientUsable) {
  StoreServer server("127.0.0.1", 0, kJob);
  StoreClient client("127.0.0.1", server.port(), kJob, 3, soon());
  Error tooLong = errorFrom([&] { client.set(std::string(wire::kMaxKeyBytes + 1, 'k'), {}, soon()); });
  EXPECT_EQ(tooLong.code(), chorusInvalidArgument);
  EXPECT_NE(std::string(tooLong.what()).find("rank 3"), std::string::npos) << tooLong.what();

  client.set("text", bytesOf("not a number"), soon());
  Error notCounter = errorFrom([&] { client.add("text", 1, soon()); });
  EXPECT_EQ(notCounter.code(), chorusInvalidUsage);
  EXPECT_NE(std::string(notCounter.what()).find("not a counter"), std::string::npos) << notCounter.what();

  EXPECT_EQ(client.add("ok", 1, soon()), 1);
  EXPECT_EQ(errorFrom([&] { client.barrier("b", 0, soon()); }).code(), chorusInvalidArgument);
}

TEST(StoreTest, GetWaitsForALaterSetFromAnotherClient) {
  StoreServer server("127.0.0.1", 0, kJob);
  std::promise<void> getStarted;
  auto getter = std::async(std::launch::async, [&] {
    StoreClient client("127.0.0.1", server.port(), kJob, 1, soon());
    getStarted.set_value();
    return textOf(client.get("late", soon()));
  });
  getStarted.get_future().wait();
  StoreClient setter("127.0.0.1", server.port(), kJob, 0, soon());
  setter.set("late", bytesOf("value"), soon());
  ASSERT_EQ(getter.wait_for(20s), std::future_status::ready);
  EXPECT_EQ(getter.get(), "value");
}

TEST(StoreTest, AddFromManyThreadsCountsEveryCall) {
  StoreServer server("127.0.0.1", 0, kJob);
  constexpr int kThreads = 8;
  constexpr int kAddsPerThread = 100;
  std::vector<std::future<std::vector<int64_t>>> results;
  for (int t = 0; t < kThreads; ++t) {
    results.push_back(std::async(std::launch::async, [&, t] {
      StoreClient client("127.0.0.1", server.port(), kJob, t, soon());
      std::vector<int64_t> seen;
      for (int i = 0; i < kAddsPerThread; ++i) seen.push_back(client.add("n", 1, soon()));
      return seen;
    }));
  }
  std::set<int64_t> all;
  for (auto& result : results) {
    for (int64_t value : result.get()) all.insert(value);
  }
  // Every ADD saw a distinct running total, and the totals are exactly 1..N.
  ASSERT_EQ(all.size(), static_cast<size_t>(kThreads * kAddsPerThread));
  EXPECT_EQ(*all.begin(), 1);
  EXPECT_EQ(*all.rbegin(), kThreads * kAddsPerThread);
}

TEST(StoreTest, BarrierReleasesOnlyWhenAllArriveAndCanBeReused) {
  StoreServer server("127.0.0.1", 0, kJob);
  constexpr int kClients = 6;
  constexpr int kRounds = 3;
  std::atomic<int> arrived[kRounds] = {};
  std::vector<std::future<bool>> results;
  for (int r = 0; r < kClients; ++r) {
    results.push_back(std::async(std::launch::async, [&, r] {
      StoreClient client("127.0.0.1", server.port(), kJob, r, soon());
      bool sawEveryone = true;
      for (int round = 0; round < kRounds; ++round) {
        arrived[round].fetch_add(1);
        client.barrier("step", kClients, soon());
        sawEveryone = sawEveryone && arrived[round].load() == kClients;
      }
      return sawEveryone;
    }));
  }
  for (auto& result : results) {
    ASSERT_EQ(result.wait_for(30s), std::future_status::ready);
    EXPECT_TRUE(result.get());
  }
}

TEST(StoreTest, BarrierTimeoutNamesTheBarrier) {
  StoreServer server("127.0.0.1", 0, kJob);
  StoreClient client("127.0.0.1", server.port(), kJob, 2, soon());
  Error e = errorFrom([&] { client.barrier("lonely", 2, Deadline::after(0.2)); });
  EXPECT_EQ(e.code(), chorusTimeout);
  EXPECT_NE(std::string(e.what()).find("barrier 'lonely'"), std::string::npos) << e.what();
}

TEST(StoreTest, ClientStartedBeforeTheServerConnectsOnceItIsUp) {
  uint16_t port = freePort();
  std::unique_ptr<StoreServer> server;
  std::promise<void> clientStarting;
  std::thread serverStarter([&] {
    clientStarting.get_future().wait();
    // Not synchronization: the delay makes the client's first connection attempts fail, which is the point.
    std::this_thread::sleep_for(200ms);
    server = std::make_unique<StoreServer>("127.0.0.1", port, kJob);
  });
  clientStarting.set_value();
  auto start = Clock::now();
  StoreClient client("127.0.0.1", port, kJob, 0, soon());
  EXPECT_GE(secondsSince(start), 0.15);
  serverStarter.join();
  client.set("k", bytesOf("v"), soon());
  EXPECT_EQ(textOf(client.get("k", soon())), "v");
}

TEST(StoreTest, ConnectToNobodyTimesOut) {
  uint16_t port = freePort();
  auto start = Clock::now();
  Error e = errorFrom([&] { StoreClient client("127.0.0.1", port, kJob, 4, Deadline::after(0.3)); });
  EXPECT_EQ(e.code(), chorusTimeout);
  EXPECT_LT(secondsSince(start), 1.5);
  EXPECT_NE(std::string(e.what()).find("rank 4, store 127.0.0.1:" + std::to_string(port)), std::string::npos)
      << e.what();
}

TEST(StoreTest, GetOfAMissingKeyTimesOutOnTimeAndBreaksTheClient) {
  StoreServer server("127.0.0.1", 0, kJob);
  StoreClient client("127.0.0.1", server.port(), kJob, 5, soon());
  const double timeout = 0.3;
  auto start = Clock::now();
  Error e = errorFrom([&] { client.get("missing", Deadline::after(timeout)); });
  double elapsed = secondsSince(start);
  EXPECT_EQ(e.code(), chorusTimeout);
  EXPECT_GE(elapsed, timeout - 0.01);
  EXPECT_LT(elapsed, timeout + 0.5);
  std::string expected = "rank 5, store 127.0.0.1:" + std::to_string(server.port()) + ": GET key 'missing' timed out";
  EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();

  EXPECT_NE(errorFrom([&] { client.set("x", {}, soon()); }).code(), chorusSuccess);

  // The server dropped the abandoned GET and still serves others.
  StoreClient other("127.0.0.1", server.port(), kJob, 6, soon());
  other.set("missing", bytesOf("now"), soon());
  EXPECT_EQ(textOf(other.get("missing", soon())), "now");
}

TEST(StoreTest, WrongJobIdIsRefused) {
  StoreServer server("127.0.0.1", 0, kJob);
  Error e = errorFrom([&] { StoreClient client("127.0.0.1", server.port(), "ffffffffffffffff", 1, soon()); });
  EXPECT_EQ(e.code(), chorusInvalidUsage);
  std::string expected = "store 127.0.0.1:" + std::to_string(server.port()) + ": the store belongs to another job";
  EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  StoreClient right("127.0.0.1", server.port(), kJob, 0, soon());
  EXPECT_EQ(right.add("still", 1, soon()), 1);
}

TEST(StoreTest, MalformedFramesCloseOnlyTheirConnection) {
  StoreServer server("127.0.0.1", 0, kJob);
  StoreClient good("127.0.0.1", server.port(), kJob, 0, soon());
  // A GET parked across all the abuse below must still be answered.
  std::promise<void> getStarted;
  auto parked = std::async(std::launch::async, [&] {
    StoreClient waiter("127.0.0.1", server.port(), kJob, 1, soon());
    getStarted.set_value();
    return textOf(waiter.get("after-abuse", soon()));
  });
  getStarted.get_future().wait();

  {
    RawConnection raw(server.port());
    raw.send(bytesOf("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    EXPECT_TRUE(raw.closedByPeer());
  }
  {
    RawConnection raw(server.port());
    uint8_t header[wire::kHeaderBytes];
    wire::FrameHeader h;
    h.op = wire::Op::kHello;
    h.keyBytes = 0xffffffffu;
    h.valueBytes = 4;
    wire::encodeHeader(h, header);
    raw.send(Bytes(header, header + sizeof(header)));
    EXPECT_TRUE(raw.closedByPeer());
  }
  {
    RawConnection raw(server.port());
    raw.sendHello();
    uint8_t header[wire::kHeaderBytes];
    wire::FrameHeader h;
    h.op = wire::Op::kSet;
    h.keyBytes = 1;
    h.valueBytes = wire::kMaxValueBytes + 1;
    wire::encodeHeader(h, header);
    raw.send(Bytes(header, header + sizeof(header)));
    EXPECT_TRUE(raw.closedByPeer());
  }
  {
    RawConnection raw(server.port());
    raw.sendHello();
    Bytes badList = wire::encodeUint32(1000000);  // claims a million keys in a 4-byte list
    raw.send(wire::encodeFrame(wire::Op::kCheck, wire::Status::kOk, {}, badList));
    EXPECT_TRUE(raw.closedByPeer());
  }
  {
    RawConnection raw(server.port());  // a request before HELLO is answered with an error, then closed
    raw.send(wire::encodeFrame(wire::Op::kSet, wire::Status::kOk, "k", bytesOf("v")));
    EXPECT_TRUE(raw.closedByPeer());
  }
  {
    RawConnection raw(server.port());  // half a header, then gone
    raw.send(Bytes{0x43, 0x48, 0x53});
  }
  EXPECT_FALSE(good.check({"k"}, soon()));  // the pre-HELLO SET above was not applied
  good.set("after-abuse", bytesOf("fine"), soon());
  ASSERT_EQ(parked.wait_for(20s), std::future_status::ready);
  EXPECT_EQ(parked.get(), "fine");
  EXPECT_EQ(textOf(good.get("after-abuse", soon())), "fine");
}

TEST(StoreTest, DestroyingTheServerWakesAParkedGet) {
  auto server = std::make_unique<StoreServer>("127.0.0.1", 0, kJob);
  StoreClient observer("127.0.0.1", server->port(), kJob, 0, soon());
  std::promise<void> getStarted;
  auto parked = std::async(std::launch::async, [&] {
    StoreClient waiter("127.0.0.1", server->port(), kJob, 1, soon());
    getStarted.set_value();
    return errorFrom([&] { waiter.get("never", Deadline::after(30)); });
  });
  getStarted.get_future().wait();
  // A round trip on another connection gives the server time to park the GET; the outcome must not depend on it.
  observer.set("unrelated", {}, soon());
  const std::string address = "store 127.0.0.1:" + std::to_string(server->port());
  auto start = Clock::now();
  server.reset();
  ASSERT_EQ(parked.wait_for(20s), std::future_status::ready);
  Error e = parked.get();
  EXPECT_EQ(e.code(), chorusRemoteError) << e.what();
  EXPECT_NE(std::string(e.what()).find("rank 1, " + address + ": GET key 'never'"), std::string::npos) << e.what();
  EXPECT_LT(secondsSince(start), 5.0);
  EXPECT_NE(errorFrom([&] { observer.get("unrelated", soon()); }).code(), chorusSuccess);
}

TEST(StoreTest, BindsHostnamesAndRefusesABusyPort) {
  StoreServer byName("localhost", 0, kJob);
  StoreClient client("localhost", byName.port(), kJob, 0, soon());
  EXPECT_EQ(client.add("x", 2, soon()), 2);

  StoreServer any("0.0.0.0", 0, kJob);
  Error busy = errorFrom([&] { StoreServer second("0.0.0.0", any.port(), kJob); });
  EXPECT_EQ(busy.code(), chorusSystemError);
  EXPECT_NE(std::string(busy.what()).find(std::to_string(any.port())), std::string::npos) << busy.what();
}

TEST(StoreTest, ServesIpv6WhenTheHostHasIt) {
  std::unique_ptr<StoreServer> server;
  try {
    server = std::make_unique<StoreServer>("::1", 0, kJob);
  } catch (const Error& e) {
    GTEST_SKIP() << "no IPv6 loopback: " << e.what();
  }
  StoreClient client("::1", server->port(), kJob, 0, soon());
  EXPECT_EQ(client.address(), "[::1]:" + std::to_string(server->port()));
  client.set("v6", bytesOf("yes"), soon());
  EXPECT_EQ(textOf(client.get("v6", soon())), "yes");
}

// --- Authentication (HMAC challenge-response after HELLO when the server has a secret) ---

TEST(StoreAuthTest, ClientsWithTheSecretAreServed) {
  StoreServer server("127.0.0.1", 0, kJob, "open sesame");
  StoreClient a("127.0.0.1", server.port(), kJob, "open sesame", 0, soon());
  StoreClient b("127.0.0.1", server.port(), kJob, "open sesame", 1, soon());
  a.set("k", bytesOf("v"), soon());
  EXPECT_EQ(textOf(b.get("k", soon())), "v");
  EXPECT_EQ(b.add("n", 5, soon()), 5);
}

TEST(StoreAuthTest, AWrongSecretIsRefusedAndLoggedAndTheServerServesOn) {
  StoreServer server("127.0.0.1", 0, kJob, "open sesame");
  StoreClient good("127.0.0.1", server.port(), kJob, "open sesame", 0, soon());
  testing::internal::CaptureStderr();
  Error e = errorFrom([&] { StoreClient bad("127.0.0.1", server.port(), kJob, "open barley", 7, soon()); });
  // Round trips on another connection after the refusal: the server has handled the bad client's proof by then.
  StoreClient later("127.0.0.1", server.port(), kJob, "open sesame", 1, soon());
  later.set("after", bytesOf("yes"), soon());
  EXPECT_EQ(textOf(good.get("after", soon())), "yes");
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(e.code(), chorusInvalidUsage) << e.what();
  EXPECT_NE(std::string(e.what()).find("rank 7"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("wrong secret"), std::string::npos) << e.what();
  EXPECT_NE(log.find("refused 127.0.0.1:"), std::string::npos) << log;
  EXPECT_NE(log.find("wrong secret"), std::string::npos) << log;
}

TEST(StoreAuthTest, AClientWithoutTheSecretIsRefusedAndLogged) {
  StoreServer server("127.0.0.1", 0, kJob, "open sesame");
  testing::internal::CaptureStderr();
  Error e = errorFrom([&] { StoreClient none("127.0.0.1", server.port(), kJob, "", 2, soon()); });
  StoreClient good("127.0.0.1", server.port(), kJob, "open sesame", 0, soon());
  good.set("x", {}, soon());
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(e.code(), chorusInvalidUsage) << e.what();
  EXPECT_NE(std::string(e.what()).find("requires a secret"), std::string::npos) << e.what();
  EXPECT_NE(log.find("authentication failed (closed)"), std::string::npos) << log;
}

TEST(StoreAuthTest, AClientWithASecretRefusesAServerWithout) {
  StoreServer server("127.0.0.1", 0, kJob, "");
  Error e = errorFrom([&] { StoreClient client("127.0.0.1", server.port(), kJob, "open sesame", 3, soon()); });
  EXPECT_EQ(e.code(), chorusInvalidUsage) << e.what();
  EXPECT_NE(std::string(e.what()).find("does not authenticate"), std::string::npos) << e.what();
}

TEST(StoreAuthTest, GarbageAndOversizedFramesBeforeHelloAreDropped) {
  StoreServer server("127.0.0.1", 0, kJob, "open sesame");
  {
    RawConnection raw(server.port());
    raw.send(Bytes(200, 0xee));
    EXPECT_TRUE(raw.closedByPeer());
  }
  {
    // A stranger may not make the server allocate a large value before HELLO.
    RawConnection raw(server.port());
    uint8_t header[wire::kHeaderBytes];
    wire::FrameHeader h;
    h.op = wire::Op::kHello;
    h.keyBytes = static_cast<uint32_t>(kJob.size());
    h.valueBytes = wire::kMaxHelloValueBytes + 1;
    wire::encodeHeader(h, header);
    raw.send(Bytes(header, header + sizeof(header)));
    EXPECT_TRUE(raw.closedByPeer());
  }
  StoreClient good("127.0.0.1", server.port(), kJob, "open sesame", 0, soon());
  EXPECT_EQ(good.add("n", 1, soon()), 1);
}

TEST(StoreAuthTest, SilentStrangersAreDroppedAndCannotExhaustTheServer) {
  StoreServer server("127.0.0.1", 0, kJob, "open sesame", 0.5);
  testing::internal::CaptureStderr();
  // As many silent connections as may be pending, and then some: accepting pauses until they time out.
  std::vector<std::unique_ptr<RawConnection>> strangers;
  for (int i = 0; i < StoreServer::kMaxPendingConnections + 4; ++i) {
    strangers.push_back(std::make_unique<RawConnection>(server.port()));
  }
  auto start = Clock::now();
  StoreClient good("127.0.0.1", server.port(), kJob, "open sesame", 0, soon());
  const double waited = secondsSince(start);
  EXPECT_EQ(good.add("n", 1, soon()), 1);
  EXPECT_TRUE(strangers.front()->closedByPeer());
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_GE(waited, 0.3) << "the client should have waited for the silent connections to time out";
  EXPECT_LT(waited, 10.0);
  EXPECT_NE(log.find("accepting paused"), std::string::npos) << log.substr(0, 2000);
  EXPECT_NE(log.find("no HELLO completed within 0.5s"), std::string::npos) << log.substr(0, 2000);
}

}  // namespace
}  // namespace chorus
