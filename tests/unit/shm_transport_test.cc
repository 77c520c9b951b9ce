// The shared-memory transport's setup: which pairs may use it (symmetric, from the cards alone), the probe order
// with tcp, strangers on the abstract socket, bounded setup, and nothing left behind in /dev/shm.
#include "transports/shm/shm_transport.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <future>
#include <string>
#include <vector>

#include "core/comm_config.h"
#include "core/error.h"
#include "transports/shm/shm_handshake.h"
#include "transports/shm/shm_segment.h"
#include "transports/transport_registry.h"

namespace chorus {
namespace {

using Clock = std::chrono::steady_clock;

PeerCard card(int rank, ShmTransport& t) {
  PeerCard c;
  c.rank = rank;
  c.pid = static_cast<int>(getpid());
  c.hostId = "this-host";
  t.describeSelf(c);
  return c;
}

// Entries of /dev/shm made by this process (segment names start with "chorus-<pid>-").
std::vector<std::string> ourDevShmEntries() {
  std::vector<std::string> found;
  const std::string prefix = "chorus-" + std::to_string(getpid()) + "-";
  DIR* d = ::opendir("/dev/shm");
  if (!d) return found;
  while (dirent* e = ::readdir(d)) {
    if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0) found.push_back(e->d_name);
  }
  ::closedir(d);
  return found;
}

// A raw client of an abstract unix socket (what a stranger on this host can do).
int connectAbstract(const std::string& name) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), len), 0) << std::strerror(errno);
  return fd;
}

TEST(ShmTransportTest, CardsSayWhoCanPairAndBothEndsAgree) {
  ShmTransport t0(0, "job", 64 << 10, ShmCma::kAlways), t1(1, "job", 64 << 10, ShmCma::kAlways);
  PeerCard a = card(0, t0), b = card(1, t1);
  ASSERT_EQ(a.entries.at("shm.ok"), "1");
  EXPECT_FALSE(a.entries.at("shm.ns").empty());
  EXPECT_TRUE(a.entries.count("shm.cma"));
  EXPECT_TRUE(t0.canConnect(a, b));
  EXPECT_TRUE(t1.canConnect(b, a));
  auto both = [&](const PeerCard& x, const PeerCard& y) {
    bool one = t0.canConnect(x, y), other = t1.canConnect(y, x);
    EXPECT_EQ(one, other) << "canConnect must be symmetric";
    return one && other;
  };
  PeerCard elsewhere = b;
  elsewhere.hostId = "other-host";
  EXPECT_FALSE(both(a, elsewhere));
  PeerCard otherNetns = b;
  otherNetns.entries["shm.ns"] = "ipc:[1] net:[2]";
  EXPECT_FALSE(both(a, otherNetns));
  PeerCard otherUser = b;
  otherUser.entries["shm.uid"] = "4242";
  EXPECT_FALSE(both(a, otherUser));
  PeerCard unusable = b;
  unusable.entries = {{"shm.ok", "0"}};
  EXPECT_FALSE(both(a, unusable));
  PeerCard noShmAtAll = b;
  noShmAtAll.entries.clear();
  EXPECT_FALSE(both(a, noShmAtAll));
}

TEST(ShmTransportTest, ProbeOrderIsShmIbTcpAndTheRestrictionIsObeyed) {
  auto names = [](const std::string& restriction) {
    std::string out;
    CommConfig config;
    config.transports = restriction;
    for (auto& t : makeTransports(0, config, "job", "")) out += std::string(t.record->name) + " ";
    return out;
  };
#ifdef CHORUS_HAVE_VERBS
  EXPECT_EQ(names(""), "shm ib tcp ");
  EXPECT_EQ(names("ib,tcp"), "ib tcp ");
#else
  EXPECT_EQ(names(""), "shm tcp ");
#endif
  EXPECT_EQ(names("tcp"), "tcp ");
  EXPECT_EQ(names("shm"), "shm ");
  EXPECT_THROW(names("shmem"), Error);
}

TEST(ShmTransportTest, TooLittleDevShmIsReportedWithWhatWasFoundAndNeeded) {
  std::string why;
  EXPECT_TRUE(devShmUsable(1 << 20, &why)) << why;
  EXPECT_FALSE(devShmUsable(size_t{1} << 60, &why));
  EXPECT_NE(why.find("/dev/shm has "), std::string::npos) << why;
  EXPECT_NE(why.find("free, less than the"), std::string::npos) << why;
}

// Segments are unlinked the moment they are made: nothing of ours is in /dev/shm while connected or after.
TEST(ShmTransportTest, NoSegmentIsEverLeftInDevShm) {
  ASSERT_TRUE(ourDevShmEntries().empty());
  {
    ShmTransport t0(0, "job-leftovers", 64 << 10, ShmCma::kOff), t1(1, "job-leftovers", 64 << 10, ShmCma::kOff);
    PeerCard a = card(0, t0), b = card(1, t1);
    auto other = std::async(std::launch::async, [&] { return t1.connectAll(b, {a}, Deadline::after(20)); });
    auto mine = t0.connectAll(a, {b}, Deadline::after(20));
    auto theirs = other.get();
    ASSERT_EQ(mine.size(), 1u);
    EXPECT_TRUE(ourDevShmEntries().empty());
    ShmSegment s = ShmSegment::create(64 << 10, "test");
    EXPECT_TRUE(ourDevShmEntries().empty());
  }
  EXPECT_TRUE(ourDevShmEntries().empty());
}

// Whoever connects to a rank's abstract socket (silent, garbage, a plausible hello for another job, one with a
// descriptor that is no segment) is refused without disturbing the real pair.
TEST(ShmTransportTest, StrangersOnTheAbstractSocketAreRefused) {
  ShmTransport t0(0, "job-strangers", 64 << 10, ShmCma::kOff), t1(1, "job-strangers", 64 << 10, ShmCma::kOff);
  PeerCard a = card(0, t0), b = card(1, t1);
  const std::string name = b.entries.at("shm.sock");
  int silent = connectAbstract(name);
  int garbage = connectAbstract(name);
  std::string junk(200, 'x');
  EXPECT_EQ(::write(garbage, junk.data(), junk.size()), static_cast<ssize_t>(junk.size()));
  int wrongJob = connectAbstract(name);
  ShmHello h{kShmHelloMagic, kShmHelloVersion, shmJobHash("another-job"), 0, 1, 0, 0, 64 << 10};
  int devNull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  shmSendHello(wrongJob, h, devNull, Deadline::after(5), "test");
  int notASegment = connectAbstract(name);
  h.jobHash = shmJobHash("job-strangers");
  h.from = 0;
  shmSendHello(notASegment, h, devNull, Deadline::after(5), "test");
  ::close(devNull);
  // Now the real pair connects through the same socket.
  auto other = std::async(std::launch::async, [&] { return t1.connectAll(b, {a}, Deadline::after(20)); });
  auto mine = t0.connectAll(a, {b}, Deadline::after(20));
  auto theirs = other.get();
  ASSERT_EQ(mine.size(), 1u);
  ASSERT_EQ(theirs.size(), 1u);
  int x = 42, y = 0;
  mine[0]->isend(&x, sizeof(x), 1);
  theirs[0]->irecv(&y, sizeof(y), 1);
  for (int i = 0; i < 1000 && theirs[0]->busy(); ++i) {
    mine[0]->progress();
    theirs[0]->progress();
  }
  EXPECT_EQ(y, 42);
  for (int fd : {silent, garbage, wrongJob, notASegment}) ::close(fd);
}

TEST(ShmTransportTest, SetupIsBoundedByTheDeadlineAndNamesTheMissingRank) {
  ShmTransport t0(0, "job-missing", 64 << 10, ShmCma::kOff), t1(1, "job-missing", 64 << 10, ShmCma::kOff);
  PeerCard a = card(0, t0), b = card(1, t1);  // rank 1 never calls connectAll
  const auto start = Clock::now();
  try {
    t0.connectAll(a, {b}, Deadline::after(0.3));
    FAIL() << "connectAll without the peer succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), chorusTimeout) << e.what();
    EXPECT_NE(std::string(e.what()).find("rank 0, shm connection setup: timed out waiting for ranks 1"),
              std::string::npos)
        << e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 5.0);
  EXPECT_TRUE(ourDevShmEntries().empty());
}

}  // namespace
}  // namespace chorus
