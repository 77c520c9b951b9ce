// How data sockets' buffers are sized from net.core.[rw]mem_max (transports/tcp/socket_buffers.h): fixed where the
// maxima allow 4 MiB, forced past low maxima with privilege, else the kernel's autotuning, never a capped size.
#include "transports/tcp/socket_buffers.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace chorus::test {
namespace {

class SocketBuffersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/chorus_sockbuf_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(long rmem, long wmem) {
    std::ofstream(dir_ + "/rmem_max") << rmem << "\n";
    std::ofstream(dir_ + "/wmem_max") << wmem << "\n";
  }
  std::string dir_;
};

TEST_F(SocketBuffersTest, LargeMaximaFixTheBuffers) {
  write(4194304, 8388608);
  SocketBufferPlan p = planSocketBuffers(dir_, false);
  EXPECT_EQ(p.mode, SocketBufferMode::kFixed);
  EXPECT_EQ(p.rmemMax, 4194304);
  EXPECT_EQ(p.wmemMax, 8388608);
}

TEST_F(SocketBuffersTest, LowMaximaAreNeverACappedFixedSize) {
  write(212992, 212992);
  EXPECT_EQ(planSocketBuffers(dir_, false).mode, SocketBufferMode::kAutotuned);
  EXPECT_EQ(planSocketBuffers(dir_, true).mode, SocketBufferMode::kForced);
  write(4194304, 212992);  // one low maximum is enough to cap
  EXPECT_EQ(planSocketBuffers(dir_, false).mode, SocketBufferMode::kAutotuned);
  EXPECT_NE(describeSocketBuffers(planSocketBuffers(dir_, false)).find("net.core.rmem_max 4194304, wmem_max 212992"),
            std::string::npos);
}

TEST_F(SocketBuffersTest, UnreadableMaximaKeepFixedBuffers) {
  SocketBufferPlan p = planSocketBuffers(dir_ + "/missing", false);
  EXPECT_EQ(p.mode, SocketBufferMode::kFixed);
  EXPECT_EQ(p.rmemMax, -1);
}

// The process's plan applied to a real socket: a fixed or forced plan gives at least 4 MiB (the kernel reports
// twice what was set), autotuning leaves the kernel's default.
TEST(SocketBuffers, AppliedToASocket) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) fd = socket(AF_INET6, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(applySocketBuffers(fd), 0);
  int rcv = 0;
  socklen_t len = sizeof(rcv);
  ASSERT_EQ(getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, &len), 0);
  if (socketBufferPlan().mode != SocketBufferMode::kAutotuned) {
    EXPECT_GE(rcv, kSocketBufferBytes) << describeSocketBuffers(socketBufferPlan());
  }
  close(fd);
}

}  // namespace
}  // namespace chorus::test
