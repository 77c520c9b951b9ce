// The TCP hello codec and the checks an accepting rank applies to it.
#include "transports/tcp/tcp_hello.h"

#include <gtest/gtest.h>

namespace chorus {
namespace {

TcpHello sample() {
  TcpHello h;
  h.from = 1;
  h.to = 3;
  h.index = 1;
  h.nsocks = 2;
  h.flags = TcpHello::kFlagAuthenticate;
  h.jobKeyHash = sha256("job/e0/");
  return h;
}

TEST(TcpHelloTest, RoundTripsAndRefusesMalformedBytes) {
  auto bytes = sample().encode();
  TcpHello back;
  std::string problem;
  ASSERT_TRUE(TcpHello::decode(bytes, &back, &problem)) << problem;
  EXPECT_EQ(back.from, 1);
  EXPECT_EQ(back.to, 3);
  EXPECT_EQ(back.index, 1u);
  EXPECT_EQ(back.nsocks, 2u);
  EXPECT_EQ(back.flags, TcpHello::kFlagAuthenticate);
  EXPECT_EQ(back.jobKeyHash, sha256("job/e0/"));

  EXPECT_FALSE(TcpHello::decode(std::span<const uint8_t>(bytes).first(63), &back, &problem));
  EXPECT_NE(problem.find("63 bytes"), std::string::npos) << problem;
  auto corrupt = [&](size_t at, uint8_t value, const char* expected) {
    auto b = bytes;
    b[at] = value;
    std::string why;
    EXPECT_FALSE(TcpHello::decode(b, &back, &why)) << at;
    EXPECT_NE(why.find(expected), std::string::npos) << at << ": " << why;
  };
  corrupt(0, 'X', "bad magic");
  corrupt(4, 1, "version 1");
  corrupt(11, 0x80, "negative rank");
  corrupt(16, 2, "stripe 2 of 2");    // index == nsocks
  corrupt(20, 17, "stripe 1 of 17");  // nsocks above the maximum
  corrupt(20, 0, "stripe 1 of 0");
  corrupt(24, 4, "unknown flags");
  corrupt(28, 1, "reserved");
}

TEST(TcpHelloTest, AnAcceptingRankRefusesWhatItDoesNotExpect) {
  const Sha256Digest job = sha256("job/e0/");
  std::map<int, std::vector<bool>> taken = {{1, {false, false}}, {4, {true}}};
  TcpHello h = sample();
  EXPECT_EQ(incomingHelloProblem(h, 3, job, true, taken), "");
  EXPECT_NE(incomingHelloProblem(h, 3, sha256("other"), true, taken).find("another job"), std::string::npos);
  EXPECT_NE(incomingHelloProblem(h, 3, job, false, taken).find("this rank has none"), std::string::npos);
  TcpHello plain = h;
  plain.flags = 0;
  EXPECT_NE(incomingHelloProblem(plain, 3, job, true, taken).find("presented no secret"), std::string::npos);
  EXPECT_EQ(incomingHelloProblem(plain, 3, job, false, taken), "");
  // Both ends encrypt, or neither does.
  TcpHello sealing = h;
  sealing.flags |= TcpHello::kFlagEncrypt;
  EXPECT_EQ(incomingHelloProblem(sealing, 3, job, true, taken, true), "");
  EXPECT_NE(
      incomingHelloProblem(sealing, 3, job, true, taken, false).find("encrypts its frames and this rank does not"),
      std::string::npos);
  EXPECT_NE(incomingHelloProblem(h, 3, job, true, taken, true).find("does not encrypt"), std::string::npos);
  TcpHello wrongTo = h;
  wrongTo.to = 2;
  EXPECT_NE(incomingHelloProblem(wrongTo, 3, job, true, taken).find("unexpected hello"), std::string::npos);
  TcpHello higher = h;
  higher.from = 4;
  higher.nsocks = 1;
  higher.index = 0;
  EXPECT_NE(incomingHelloProblem(higher, 3, job, true, taken).find("unexpected hello"), std::string::npos);
  TcpHello otherCount = h;
  otherCount.nsocks = 3;
  EXPECT_NE(incomingHelloProblem(otherCount, 3, job, true, taken).find("unexpected hello"), std::string::npos);
  taken[1][1] = true;
  EXPECT_NE(incomingHelloProblem(h, 3, job, true, taken).find("unexpected hello"), std::string::npos);
}

}  // namespace
}  // namespace chorus
