// makeDeviceConnections, the setup that picks a device connection per peer and builds it over the host
// connections. Ranks that are threads of this process: they stage (CUDA IPC opens nothing in the exporting
// process), also when the sides disagree about sharing a machine; an absent or vanished peer fails naming it.
// Ranks across a fork: each process maps the other's ring through (emulated) CUDA IPC, and a peer process that
// dies mid-transfer is reported lost.
#include "transports/device/device_connections.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "emulation/device/emulated_device_api.h"
#include "tests/unit/device_test_support.h"
#include "transports/cuda_ipc/ipc_connection.h"
#include "transports/device/staged_connection.h"
#include "transports/tcp/tcp_connection.h"

namespace chorus::test {
namespace {

using namespace std::chrono_literals;

constexpr size_t kChunk = kStagedChunkBytes;
constexpr size_t kSlot = kIpcSlotBytes;

// Each rank's host and device connections after setUpInThreads.
struct SetupResult {
  std::vector<std::unique_ptr<Connection>> hosts0, hosts1, dev0, dev1;
};
// makeDeviceConnections for two ranks that are threads of this process, over a TCP pair.
void setUpInThreads(SetupResult& r, DeviceApi& api0, DeviceApi& api1, std::vector<bool> same0,
                    std::vector<bool> same1) {
  auto hosts = tcpPair();
  r.hosts0.resize(2);
  r.hosts1.resize(2);
  r.hosts0[1] = std::move(hosts.first);
  r.hosts1[0] = std::move(hosts.second);
  auto other = std::async(std::launch::async,
                          [&] { return makeDeviceConnections(1, r.hosts1, same1, api1, Deadline::after(20)); });
  r.dev0 = makeDeviceConnections(0, r.hosts0, same0, api0, Deadline::after(20));
  r.dev1 = other.get();
}

// CUDA IPC opens nothing in the exporting process: ranks that are threads of one process stage, without a warning.
TEST(DeviceConnectionsTest, RanksInOneProcessStage) {
  GatedDeviceApi api0, api1;
  SetupResult r;
  setUpInThreads(r, api0, api1, {false, true}, {true, false});
  ASSERT_EQ(r.dev0.size(), 2u);
  EXPECT_EQ(r.dev0[0], nullptr);
  EXPECT_EQ(r.dev1[1], nullptr);
  EXPECT_EQ(std::string(r.dev0[1]->describe()).find("staged"), 0u) << r.dev0[1]->describe();
  EXPECT_EQ(std::string(r.dev1[0]->describe()).find("staged"), 0u) << r.dev1[0]->describe();
  EXPECT_FALSE(r.hosts0[1]->busy());
  EXPECT_FALSE(r.hosts1[0]->busy());
  r.dev0.clear();
  r.dev1.clear();
}

// The sides agree even when they disagree about sharing a machine.
TEST(DeviceConnectionsTest, OneSidedSameMachineStagesOnBothSides) {
  GatedDeviceApi api0, api1;
  SetupResult r;
  setUpInThreads(r, api0, api1, {false, true}, {false, false});
  EXPECT_EQ(std::string(r.dev0[1]->describe()).find("staged"), 0u) << r.dev0[1]->describe();
  EXPECT_EQ(std::string(r.dev1[0]->describe()).find("staged"), 0u) << r.dev1[0]->describe();
  // And they carry data.
  const size_t n = kChunk + 5;
  DeviceBuffer out(api0, n), in(api1, n);
  out.write(pattern(n, 3));
  r.dev0[1]->isend(out.get(), n, 1);
  r.dev1[0]->irecv(in.get(), n, 1);
  ASSERT_TRUE(drive(*r.dev0[1], *r.dev1[0], [&] { return !r.dev0[1]->busy() && !r.dev1[0]->busy(); }));
  EXPECT_TRUE(in.read() == pattern(n, 3));
  r.dev0.clear();
  r.dev1.clear();
}

TEST(DeviceConnectionsTest, SetupWithAnAbsentPeerTimesOutNamingIt) {
  GatedDeviceApi api;
  auto hosts = tcpPair();
  std::vector<std::unique_ptr<Connection>> hosts0(2);
  hosts0[1] = std::move(hosts.first);
  const auto start = Clock::now();
  Error err = errorFrom([&] { makeDeviceConnections(0, hosts0, {false, true}, api, Deadline::after(0.3)); });
  const double took = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_EQ(err.code(), chorusTimeout) << err.what();
  EXPECT_NE(std::string(err.what())
                .find("rank 0, device connection setup (offers): timed out (CHORUS_TIMEOUT) "
                      "waiting on rank(s) 1"),
            std::string::npos)
      << err.what();
  EXPECT_GE(took, 0.25);
  EXPECT_LT(took, 5.0);
}

TEST(DeviceConnectionsTest, SetupWithAVanishedPeerFailsNamingIt) {
  GatedDeviceApi api;
  auto hosts = tcpPair();
  std::vector<std::unique_ptr<Connection>> hosts0(2);
  hosts0[1] = std::move(hosts.first);
  hosts.second.reset();  // rank 1 is gone
  Error err = errorFrom([&] { makeDeviceConnections(0, hosts0, {false, true}, api, Deadline::after(20)); });
  EXPECT_EQ(err.code(), chorusRemoteError) << err.what();
  EXPECT_NE(std::string(err.what()).find("rank 0, peer 1, device connection setup failed (offers)"), std::string::npos)
      << err.what();
}

// ---- Across a fork: each process maps the other's ring through (emulated) CUDA IPC.

// Waits for the child up to `seconds`, killing it past that; its exit status, or -1 if it had to be killed.
int reap(pid_t child, double seconds) {
  const auto until = Clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  while (Clock::now() < until) {
    pid_t r = ::waitpid(child, &status, WNOHANG);
    if (r == child) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(5ms);  // polling a child's exit, not synchronizing with it
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, &status, 0);
  return -1;
}

// One rank of a two-process world over a socketpair end: its device connection to the other rank.
struct ForkedRank {
  ForkedRank(int rank, int fd, DeviceApi& api) : hosts(2) {
    hosts[1 - rank] = std::make_unique<TcpConnection>(rank, 1 - rank, "socketpair", std::vector<int>{fd});
    dev = makeDeviceConnections(rank, hosts, {true, true}, api, Deadline::after(20));
  }
  ~ForkedRank() { dev.clear(); }
  Connection& peer(int rank) { return *dev[1 - rank]; }
  std::vector<std::unique_ptr<Connection>> hosts, dev;
};

// Drives one end alone until done() holds; false after 20 s.
template <typename Done>
bool driveOne(Connection& c, Done done) {
  const auto until = Clock::now() + 20s;
  while (!done()) {
    if (Clock::now() > until) return false;
    if (!c.progress()) std::this_thread::yield();
  }
  return true;
}

const std::vector<size_t> kForkSizes = {0, 1, kSlot - 1, kSlot + 1, 9 * kSlot + 12345};

// Both ranks send every size to each other and check what they got; 0 when all of it held, else a failure code.
int exchangeEverySize(int rank, Connection& c, DeviceApi& api) {
  std::vector<std::unique_ptr<DeviceBuffer>> out, in;
  for (size_t n : kForkSizes) {
    out.push_back(std::make_unique<DeviceBuffer>(api, n));
    in.push_back(std::make_unique<DeviceBuffer>(api, n));
    out.back()->write(pattern(n, rank * 100 + static_cast<int>(n % 97)));
    c.isend(out.back()->get(), n, 4);
    c.irecv(in.back()->get(), n, 4);
  }
  if (!driveOne(c, [&] { return !c.busy(); })) return 2;
  for (size_t i = 0; i < kForkSizes.size(); ++i) {
    const size_t n = kForkSizes[i];
    if (in[i]->read() != pattern(n, (1 - rank) * 100 + static_cast<int>(n % 97))) return 3;
  }
  return 0;
}

TEST(IpcConnectionForkTest, TwoProcessesMapEachOthersRings) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::alarm(60);  // never outlive a stuck parent
    ::close(fds[0]);
    int code = 0;
    try {
      EmulatedDeviceApi api;
      ForkedRank me(1, fds[1], api);
      if (std::string(me.peer(1).describe()).find("cuda ipc 4 x 1024 KiB ring (emulated)") != 0) code = 1;
      if (code == 0) code = exchangeEverySize(1, me.peer(1), api);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child: %s\n", e.what());
      code = 10;
    }
    ::_exit(code);
  }
  ::close(fds[1]);
  {
    EmulatedDeviceApi api;
    ForkedRank me(0, fds[0], api);
    EXPECT_EQ(std::string(me.peer(0).describe()).find("cuda ipc 4 x 1024 KiB ring (emulated) over tcp socketpair"), 0u)
        << me.peer(0).describe();
    EXPECT_EQ(exchangeEverySize(0, me.peer(0), api), 0);
  }
  EXPECT_EQ(reap(child, 30), 0) << "the child's checks failed (1: not IPC, 2: stuck, 3: wrong bytes, 10: threw)";
}

// A peer process that dies mid-transfer, its ring still mapped here: the sender fails naming it instead of hanging.
TEST(IpcConnectionForkTest, PeerThatDiesMidTransferIsReportedLost) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::alarm(60);
    ::close(fds[0]);
    EmulatedDeviceApi api;
    ForkedRank me(1, fds[1], api);
    // Receive part of a large message, then vanish without a goodbye. One move (two progress rounds) takes at most
    // two ring-fulls of 4 slots, so at least 4 of the 16 slots stay unsent however the two processes are scheduled
    // (six moves let a slow TSan run complete the whole message).
    DeviceBuffer in(api, 16 * kSlot);
    me.peer(1).irecv(in.get(), 16 * kSlot, 1);
    const auto until = Clock::now() + 20s;
    int moves = 0;
    while (moves < 1 && Clock::now() < until) moves += me.peer(1).progress() ? 1 : 0;
    ::_exit(0);
  }
  ::close(fds[1]);
  {
    EmulatedDeviceApi api;
    ForkedRank me(0, fds[0], api);
    Connection& c = me.peer(0);
    DeviceBuffer out(api, 16 * kSlot);
    out.write(pattern(16 * kSlot, 1));
    c.isend(out.get(), 16 * kSlot, 1);
    const auto start = Clock::now();
    Error err = errorFrom([&] { driveOne(c, [&] { return false; }); });
    EXPECT_LT(Clock::now() - start, 15s);
    EXPECT_EQ(err.code(), chorusRemoteError) << err.what();
    EXPECT_NE(std::string(err.what()).find("rank 0, peer 1: lost connection"), std::string::npos) << err.what();
    EXPECT_EQ(c.sendsDone(), 0u);
  }
  EXPECT_EQ(reap(child, 30), 0);
}

}  // namespace
}  // namespace chorus::test
