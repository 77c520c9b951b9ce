// A 3-rank job with a secret runs collectives while a stranger knocks on its store and on two ranks' TCP ports,
// first with garbage, then with a well-formed request under a wrong secret. The job must complete with correct
// results, and every refusal must be logged: by the store (this process serves it) and by the ranks.
//
// The ranks are this test binary run again with --gtest_filter=StrangerWorker.*: rank 1 reports the store's
// address and job through a pipe, and rank 0 waits on another pipe before joining, so that ranks 1 and 2 sit in
// their TCP accept loops while the stranger knocks (no sleeps; every wait has a deadline).
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <future>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "chorus/chorus.h"
#include "core/bootstrap/launch_spec.h"
#include "core/bootstrap/store.h"
#include "core/error.h"
#include "core/security/channel_auth.h"
#include "tests/harness/process_world.h"
#include "tests/harness/raw_socket.h"
#include "tests/harness/scoped_env.h"
#include "core/bootstrap/peer_card.h"
#include "transports/tcp/tcp_hello.h"
#include "core/host_port.h"
#include "transports/tcp/tcp_transport.h"

namespace chorus::test {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr char kWorkerVariable[] = "CHORUS_STRANGER_WORKER";  // "<report fd>,<go fd>" in the ranks
constexpr int kRounds = 60;

// --- The ranks ---

// Waits until fd is readable; false at the deadline.
bool waitReadable(int fd, Clock::time_point until) {
  for (;;) {
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count());
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    int rc = ::poll(&p, 1, left);
    if (rc > 0) return true;
    if (rc < 0 && errno != EINTR) return false;
  }
}

void check(chorusResult_t r, chorusComm_t comm, const char* what) {
  ASSERT_EQ(r, chorusSuccess) << what << ": " << chorusGetLastError(comm);
}

// Every collective a few times over int32 values whose sums are exact; each result is checked.
void runCollectives(chorusComm_t comm, int rank, int n) {
  for (int round = 0; round < kRounds; ++round) {
    const size_t count = 1 + static_cast<size_t>(round * 997) % 20000;
    std::vector<int32_t> send(count), recv(count, -1);
    for (size_t i = 0; i < count; ++i) send[i] = static_cast<int32_t>((rank + 1) * 1000 + i % 1000 + round);
    check(chorusAllReduce(send.data(), recv.data(), count, chorusInt32, chorusSum, comm, nullptr), comm, "allreduce");
    for (size_t i = 0; i < count; ++i) {
      const int32_t expected = 1000 * n * (n + 1) / 2 + n * static_cast<int32_t>(i % 1000 + round);
      ASSERT_EQ(recv[i], expected) << "allreduce round " << round << " element " << i;
    }
    const int root = round % n;
    std::vector<int32_t> bcast(count, rank == root ? round : -1);
    check(chorusBroadcast(bcast.data(), bcast.data(), count, chorusInt32, root, comm, nullptr), comm, "broadcast");
    ASSERT_EQ(std::count(bcast.begin(), bcast.end(), round), static_cast<long>(count)) << "broadcast " << round;
    std::vector<int32_t> gathered(count * n, -1);
    check(chorusAllGather(send.data(), gathered.data(), count, chorusInt32, comm, nullptr), comm, "allgather");
    for (int r = 0; r < n; ++r) {
      ASSERT_EQ(gathered[r * count], (r + 1) * 1000 + round) << "allgather " << round << " block " << r;
    }
    std::vector<int32_t> scattered(count, -1), all(count * n, rank + 1);
    check(chorusReduceScatter(all.data(), scattered.data(), count, chorusInt32, chorusSum, comm, nullptr), comm,
          "reducescatter");
    ASSERT_EQ(std::count(scattered.begin(), scattered.end(), n * (n + 1) / 2), static_cast<long>(count));
    std::vector<int32_t> reduced(count, -1);
    check(chorusReduce(send.data(), reduced.data(), count, chorusInt32, chorusMax, root, comm, nullptr), comm,
          "reduce");
    if (rank == root) {
      ASSERT_EQ(reduced[0], n * 1000 + round) << "reduce " << round;
    }
  }
}

// Runs only as a rank of StrangerTest's world (otherwise skipped).
TEST(StrangerWorker, Rank) {
  const char* fds = std::getenv(kWorkerVariable);
  if (!fds) GTEST_SKIP() << "runs only as a rank of StrangerTest";
  int reportFd = -1, goFd = -1;
  ASSERT_EQ(std::sscanf(fds, "%d,%d", &reportFd, &goFd), 2);
  const int rank = std::atoi(std::getenv("CHORUS_RANK"));
  if (rank == 1) {
    std::string line = std::string(std::getenv("CHORUS_STORE")) + " " + std::getenv("CHORUS_JOB_ID") + "\n";
    ASSERT_EQ(::write(reportFd, line.data(), line.size()), static_cast<ssize_t>(line.size()));
  }
  if (rank == 0) {
    ASSERT_TRUE(waitReadable(goFd, Clock::now() + 60s)) << "the test never said go";
  }
  ::close(reportFd);
  ::close(goFd);
  chorusComm_t comm = nullptr;
  ASSERT_EQ(chorusCommInitFromEnv(&comm), chorusSuccess) << chorusGetLastError(nullptr);
  int n = 0;
  ASSERT_EQ(chorusCommCount(comm, &n), chorusSuccess);
  runCollectives(comm, rank, n);
  EXPECT_EQ(chorusCommDestroy(comm), chorusSuccess);
}

// --- The stranger ---

using test::closedByPeer;
using test::connectTo;

void sendGarbage(const std::string& host, uint16_t port) {
  int fd = connectTo(host, port);
  std::vector<uint8_t> junk(TcpHello::kBytes, 0x6b);
  EXPECT_EQ(::send(fd, junk.data(), junk.size(), MSG_NOSIGNAL), static_cast<ssize_t>(junk.size()));
  EXPECT_TRUE(closedByPeer(fd)) << "garbage to " << host << ":" << port << " was not answered by a close";
  ::close(fd);
}

void knockOnTheStoreWithAWrongSecret(const std::string& host, uint16_t port, const std::string& job) {
  try {
    StoreClient stranger(host, port, job, "not the secret", 99, Deadline::after(20));
    ADD_FAILURE() << "the store served a client with a wrong secret";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("wrong secret"), std::string::npos) << e.what();
  }
}

// A stranger at a rank's TCP port: connects and sends everything at once, so that the rank (which may still be
// waiting for its peers' cards; the connection waits in the backlog until then) refuses it in the same pass in
// which it reads it, before its own peers can complete its setup. Returns the socket, to watch for the close.
//   garbage: 64 bytes that are not a hello.
//   wrong secret: a hello good enough to pass every check but the secret, the handshake's challenge, and a proof
//   made with a wrong secret (over a guessed nonce: the rank's own is not known in advance).
int knockOnATcpPort(const std::string& address, int to, const std::string& jobKey, bool garbage) {
  std::string host;
  uint16_t port = 0;
  splitHostPort(address, "tcp.addr", &host, &port);
  int fd = connectTo(host, port);
  std::vector<uint8_t> bytes(TcpHello::kBytes, 0x6b);
  if (!garbage) {
    TcpHello hello;
    hello.from = 0;
    hello.to = to;
    hello.flags = TcpHello::kFlagAuthenticate;
    hello.jobKeyHash = sha256(jobKey);
    auto helloBytes = hello.encode();
    bytes.assign(helloBytes.begin(), helloBytes.end());
    const std::string context = tcpAuthContext(helloBytes);
    ChannelHandshake stranger("not the secret", context, ChannelRole::kInitiator);
    ChannelHandshake guessedRank("not the secret", context, ChannelRole::kAcceptor);
    std::vector<uint8_t> challenge = stranger.start(), proof;
    stranger.feed(guessedRank.start(), &proof);
    bytes.insert(bytes.end(), challenge.begin(), challenge.end());
    bytes.insert(bytes.end(), proof.begin(), proof.end());
  }
  EXPECT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
  return fd;
}

// Pipes whose child ends survive execve (the parent's ends do not).
struct Pipe {
  Pipe() { EXPECT_EQ(::pipe2(fd, O_CLOEXEC), 0); }
  ~Pipe() {
    for (int f : fd) ::close(f);
  }
  void inheritEnd(int i) { EXPECT_EQ(::fcntl(fd[i], F_SETFD, 0), 0); }
  int fd[2] = {-1, -1};
};

std::string readLine(int fd, Clock::time_point until) {
  std::string line;
  char c;
  while (waitReadable(fd, until) && ::read(fd, &c, 1) == 1) {
    if (c == '\n') return line;
    line += c;
  }
  return line;
}

TEST(StrangerTest, TheJobCompletesWhileStrangersKnockAndEveryRefusalIsLogged) {
  const std::string secret = randomHex(16);
  ScopedEnv env({{"CHORUS_SECRET", secret}});
  Pipe report, go;
  report.inheritEnd(1);
  go.inheritEnd(0);
  ProcessWorldOptions options;
  options.nranks = 3;
  options.worker = "/proc/self/exe";
  options.args = {"--gtest_filter=StrangerWorker.*"};
  options.env = {{kWorkerVariable, std::to_string(report.fd[1]) + "," + std::to_string(go.fd[0])},
                 {"CHORUS_TRANSPORT", "tcp"},     // same-host ranks would otherwise pick shared memory
                 {"CHORUS_SOCKET_IFNAME", "lo"},  // the stranger stays on loopback
                 {"CHORUS_TIMEOUT", "60"}};
  options.deadline = 120s;
  testing::internal::CaptureStderr();  // the store serves in this process: its refusals are logged here
  auto world = std::async(std::launch::async, [&] { return runProcessWorld(options); });

  // Where the store is, from rank 1.
  std::istringstream where(readLine(report.fd[0], Clock::now() + 60s));
  std::string store, job;
  where >> store >> job;
  std::string storeHost;
  uint16_t storePort = 0;
  if (!store.empty()) splitHostPort(store, "store", &storeHost, &storePort);
  bool knocked = false;
  std::vector<int> tcpStrangers;
  if (storePort != 0 && !job.empty()) {
    // (a) garbage, (b) a wrong secret, at the store.
    sendGarbage(storeHost, storePort);
    knockOnTheStoreWithAWrongSecret(storeHost, storePort, job);
    // Ranks 1 and 2 are waiting for rank 0's card; theirs say where they listen (their backlogs are open).
    StoreClient insider(storeHost, storePort, job, secret, -1, Deadline::after(60));
    const std::string jobKey = job + "/e0/";
    for (int r : {1, 2}) {
      PeerCard card = PeerCard::decode(insider.get("e0/card/" + std::to_string(r), Deadline::after(60)), r);
      tcpStrangers.push_back(knockOnATcpPort(card.entries.at("tcp.addr"), r, jobKey, true));
      tcpStrangers.push_back(knockOnATcpPort(card.entries.at("tcp.addr"), r, jobKey, false));
    }
    knocked = true;
  }
  // Let rank 0 join; the collectives run while the stranger keeps knocking on the store.
  EXPECT_EQ(::write(go.fd[1], "g", 1), 1);
  // Each rank refuses (and closes) both strangers as soon as it starts accepting.
  for (int fd : tcpStrangers) {
    EXPECT_TRUE(closedByPeer(fd)) << "a stranger at a TCP port was not refused";
    ::close(fd);
  }
  int knocksDuringCollectives = 0;
  while (knocked && world.wait_for(0s) != std::future_status::ready && knocksDuringCollectives < 20) {
    sendGarbage(storeHost, storePort);
    knockOnTheStoreWithAWrongSecret(storeHost, storePort, job);
    ++knocksDuringCollectives;
  }
  ASSERT_EQ(world.wait_for(150s), std::future_status::ready);
  ProcessWorldResult result = world.get();
  std::string parentLog = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(knocked) << "rank 1 never reported the store\n" << result.describe();
  ASSERT_TRUE(result.allSucceeded()) << result.describe();
  for (int r : {1, 2}) {
    const std::string& out = result.ranks[r].output;
    EXPECT_NE(out.find("tcp: refused a connection from 127.0.0.1:"), std::string::npos) << "rank " << r << "\n" << out;
    EXPECT_NE(out.find("not a Chorus hello"), std::string::npos) << "rank " << r << "\n" << out;
    EXPECT_NE(out.find("authentication failed (wrong secret)"), std::string::npos) << "rank " << r << "\n" << out;
  }
  EXPECT_NE(parentLog.find("malformed header: bad magic"), std::string::npos) << parentLog.substr(0, 4000);
  EXPECT_NE(parentLog.find(": authentication failed (wrong secret)"), std::string::npos) << parentLog.substr(0, 4000);
  std::printf("stranger knocked on the store %d more times while the collectives ran\n", knocksDuringCollectives);
}

}  // namespace
}  // namespace chorus::test
