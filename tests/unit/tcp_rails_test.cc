// TCP over several interfaces, piece by piece: which interfaces are rails, how two ranks pair them, how a message
// is cut by the rails' weights, the probe that measures them, and a connection striping by those weights. The lab
// check (tests/lab/multirail_check.py) runs the whole over two shaped NICs per host, and takes one down mid-run.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <numeric>
#include <thread>
#include <vector>

#include "core/error.h"
#include "tests/unit/device_test_support.h"
#include "topology/network_interfaces.h"
#include "transports/tcp/socket_exact.h"
#include "transports/tcp/stripe_cuts.h"
#include "transports/tcp/tcp_connection.h"
#include "transports/tcp/tcp_rail_probe.h"
#include "transports/tcp/tcp_rails.h"

namespace chorus::test {
namespace {

std::vector<NetworkInterface> host() {
  return {{"lo", "127.0.0.1", true},     {"eth0", "10.0.0.1", false}, {"docker0", "172.17.0.1", false},
          {"eth1", "10.1.0.1", false},   {"wlan0", "192.168.1.5", false}, {"eth0", "fd00::1", false},
          {"eth2", "fd00:2::1", false}};
}

std::vector<std::string> names(const std::vector<NetworkInterface>& rails) {
  std::vector<std::string> out;
  for (const auto& r : rails) out.push_back(r.name + " " + r.address);
  return out;
}

// n non-blocking socketpairs: one end of each in *mine, the other in *theirs.
void socketPairs(int n, std::vector<int>* mine, std::vector<int>* theirs) {
  for (int i = 0; i < n; ++i) {
    int sp[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sp), 0);
    mine->push_back(sp[0]);
    theirs->push_back(sp[1]);
  }
}

TEST(TcpRails, ByDefaultEveryUpInterfaceOfTheFirstOnesKindAndFamily) {
  EXPECT_EQ(names(chooseRails(host(), "", 4)), (std::vector<std::string>{"eth0 10.0.0.1", "eth1 10.1.0.1"}));
  EXPECT_EQ(names(chooseRails(host(), "", 1)), (std::vector<std::string>{"eth0 10.0.0.1"}));
  EXPECT_EQ(names(chooseRails({{"lo", "127.0.0.1", true}}, "", 4)), (std::vector<std::string>{"lo 127.0.0.1"}));
}

TEST(TcpRails, ANamedListIsEveryInterfaceItNamesOnceInTheHostsOrder) {
  EXPECT_EQ(names(chooseRails(host(), "=eth1,eth0", 4)),
            (std::vector<std::string>{"eth0 10.0.0.1", "eth1 10.1.0.1"}));
  EXPECT_EQ(names(chooseRails(host(), "eth", 4)),
            (std::vector<std::string>{"eth0 10.0.0.1", "eth1 10.1.0.1", "eth2 fd00:2::1"}));
  EXPECT_EQ(names(chooseRails(host(), "^eth,docker,lo", 4)), (std::vector<std::string>{"wlan0 192.168.1.5"}));
  EXPECT_THROW(chooseRails(host(), "=ib0", 4), Error);
}

TEST(TcpRails, RanksPairRailsByNameElseByPosition) {
  using Pairs = std::vector<std::pair<size_t, size_t>>;
  EXPECT_EQ(pairRails({"eth0", "eth1"}, {"eth1", "eth0"}), (Pairs{{0, 1}, {1, 0}}));
  EXPECT_EQ(pairRails({"eth0", "eth1"}, {"eth1"}), (Pairs{{1, 0}}));  // the peer's eth0 is down: eth1 alone
  EXPECT_EQ(pairRails({"eth0", "eth1"}, {"ens3", "ens4", "ens5"}), (Pairs{{0, 0}, {1, 1}}));
  EXPECT_EQ(pairRails({""}, {"eth0", "eth1"}), (Pairs{{0, 0}}));
}

TEST(TcpRails, CardsListEachRailAndRefuseMalformedLists) {
  PeerCard card;
  card.rank = 3;
  card.entries["tcp.addr"] = "10.0.0.1:5000";
  const auto one = cardRails(card, "tcp", 0);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].ifname, "");
  EXPECT_EQ(one[0].address, "10.0.0.1:5000");
  card.entries["tcp.rails"] = encodeRails({{"eth0", "10.0.0.1:5000"}, {"eth1", "[fd00::1]:5001"}});
  const auto two = cardRails(card, "tcp", 0);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[1].ifname, "eth1");
  EXPECT_EQ(two[1].address, "[fd00::1]:5001");
  for (const char* bad : {"", "eth0", "=10.0.0.1:5000", "eth0="}) {
    card.entries["tcp.rails"] = bad;
    EXPECT_THROW(cardRails(card, "tcp", 0), Error) << bad;
  }
}

TEST(TcpRails, WeightedCutsCoverTheMessageInProportionOnPages) {
  const StripeCuts cuts({3, 3, 1, 1});  // two rails of two sockets, the first three times the second
  const size_t bytes = (64 << 20) + 123;
  size_t at = 0;
  std::vector<size_t> len;
  for (size_t i = 0; i < 4; ++i) {
    size_t b, e;
    cuts.cut(bytes, i, &b, &e);
    EXPECT_EQ(b, at);
    if (i < 3) {
      EXPECT_EQ(e % 4096, 0u);
    }
    len.push_back(e - b);
    at = e;
  }
  EXPECT_EQ(at, bytes);
  EXPECT_NEAR(static_cast<double>(len[0]) / len[2], 3.0, 0.001);
  size_t b, e;
  cuts.cut(StripeCuts::kStripeMin - 1, 0, &b, &e);  // small: whole on socket 0
  EXPECT_EQ(e - b, StripeCuts::kStripeMin - 1);
  cuts.cut(StripeCuts::kStripeMin - 1, 2, &b, &e);
  EXPECT_EQ(e, b);
  for (size_t i = 0; i < 3; ++i) {  // even cuts are the weighted ones with equal weights
    size_t b2, e2;
    StripeCuts::even(3).cut(bytes, i, &b, &e);
    StripeCuts::evenCut(bytes, 3, i, &b2, &e2);
    EXPECT_EQ(std::make_pair(b, e), std::make_pair(b2, e2));
  }
}

TEST(TcpRails, WeightsFollowTheRatesAndAddUp) {
  const auto w = railWeights({0.010, 0.100});  // the second rail took ten times as long
  EXPECT_NEAR(static_cast<double>(w[0]) / w[1], 10.0, 0.2);
  EXPECT_NEAR(w[0] + w[1], kWeightScale, 1);
  EXPECT_GE(railWeights({0.001, 1000.0})[1], 1u);  // never nothing
}

// Two rails as two socketpairs; both ends of the probe agree on the weights.
TEST(TcpRails, BothEndsOfTheProbeTakeTheSameWeights) {
  std::vector<int> mine, theirs;
  ASSERT_NO_FATAL_FAILURE(socketPairs(2, &mine, &theirs));
  std::vector<uint32_t> sent, received;
  std::thread receiver([&] { received = probeRailsAsReceiver(theirs, Deadline::after(20), "receiver"); });
  sent = probeRailsAsSender(mine, Deadline::after(20), "sender");
  receiver.join();
  EXPECT_EQ(sent, received);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_NEAR(sent[0] + sent[1], kWeightScale, 1);
  for (int fd : mine) ::close(fd);
  for (int fd : theirs) ::close(fd);
}

TEST(TcpRails, AProbeWhosePeerLeavesFailsNamingIt) {
  int a[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, a), 0);
  ::close(a[1]);
  try {
    probeRailsAsSender({a[0]}, Deadline::after(5), "rank 0: tcp rails to rank 1");
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0: tcp rails to rank 1"), std::string::npos) << e.what();
  }
  ::close(a[0]);
}

// The small control messages around the probe (and the hello's answer) move whole, or fail as what they are.
TEST(TcpRails, ExactMovesArriveWholeAndFailByKind) {
  std::vector<int> mine, theirs;
  ASSERT_NO_FATAL_FAILURE(socketPairs(1, &mine, &theirs));
  const std::vector<char> sent(300000, 'x');  // more than a socketpair buffers: the sender must wait for the reader
  std::thread reader([&] {
    std::vector<char> got(sent.size());
    recvExact(theirs[0], got.data(), got.size(), Deadline::after(10), "reader");
    EXPECT_EQ(got, sent);
  });
  sendExact(mine[0], sent.data(), sent.size(), Deadline::after(10), "writer");
  reader.join();
  char byte = 0;
  try {
    recvExact(theirs[0], &byte, 1, Deadline::after(0.05), "rank 1: waiting for a go byte");
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), chorusTimeout) << e.what();
    EXPECT_NE(std::string(e.what()).find("rank 1: waiting for a go byte: timed out receiving"), std::string::npos);
  }
  ::close(mine[0]);
  EXPECT_THROW(
      {
        try {
          recvExact(theirs[0], &byte, 1, Deadline::after(5), "rank 1");
        } catch (const Error& e) {
          EXPECT_EQ(e.code(), chorusRemoteError) << e.what();
          throw;
        }
      },
      Error);
  ::close(theirs[0]);
}

// A connection over two rails of two sockets each, the first rail weighted 3:1: data arrives whole, and the
// connection says which interfaces it stripes over.
TEST(TcpRails, AConnectionStripesByTheRailsWeights) {
  std::vector<int> mine, theirs;
  ASSERT_NO_FATAL_FAILURE(socketPairs(4, &mine, &theirs));
  RailPlan plan{{"lo", "lo"}, {768, 256}, 2};
  TcpConnection a(0, 1, "pair", mine, {}, plan), b(1, 0, "pair", theirs, {}, plan);
  EXPECT_NE(std::string(a.describe()).find("over lo (768/1024), lo (256/1024)"), std::string::npos) << a.describe();
  std::vector<char> out(3 << 20), in(out.size());
  std::iota(out.begin(), out.end(), 0);
  const uint64_t s = a.isend(out.data(), out.size(), 7);
  const uint64_t r = b.irecv(in.data(), in.size(), 7);
  ASSERT_TRUE(drive(a, b, [&] { return a.sendsDone() > s && b.recvsDone() > r; }));
  EXPECT_EQ(in, out);
}

// Four sockets, one rail: a call may stripe over fewer; both ends alike deliver, ends that disagree fail as a
// mismatch naming the sizes, never as wrong data.
TEST(TcpRails, AStripeWidthChosenPerMessage) {
  std::vector<int> mine, theirs;
  ASSERT_NO_FATAL_FAILURE(socketPairs(4, &mine, &theirs));
  RailPlan plan{{"lo"}, {}, 4, 1};  // four sockets, one used by default
  TcpConnection a(0, 1, "pair", mine, {}, plan), b(1, 0, "pair", theirs, {}, plan);
  EXPECT_EQ(a.capabilities().striping, static_cast<StripedSends*>(&a));
  EXPECT_EQ(a.maxStripeWidth(), 4u);
  std::vector<char> out(2 << 20), in(out.size());
  std::iota(out.begin(), out.end(), 0);
  for (size_t width : {0, 1, 2, 4, 9}) {
    a.setStripeWidth(width);
    b.setStripeWidth(width);
    std::fill(in.begin(), in.end(), 0);
    const uint64_t s = a.isend(out.data(), out.size(), 7);
    const uint64_t r = b.irecv(in.data(), in.size(), 7);
    ASSERT_TRUE(drive(a, b, [&] { return a.sendsDone() > s && b.recvsDone() > r; })) << width;
    EXPECT_EQ(in, out) << width;
  }
  a.setStripeWidth(1);
  b.setStripeWidth(4);
  a.isend(out.data(), out.size(), 7);
  b.irecv(in.data(), in.size(), 7);
  try {
    drive(a, b, [&] { return false; });
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.failure(), Failure::kMismatch) << e.what();
  }
}

}  // namespace
}  // namespace chorus::test
