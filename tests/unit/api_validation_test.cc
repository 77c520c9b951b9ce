// Every C entry point refuses bad arguments with chorusInvalidArgument and a last error that says what was wrong,
// without harming the communicator; valid edge cases (count 0 with NULL buffers) are accepted.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "chorus/chorus.h"
#include "core/bootstrap/launch_spec.h"

namespace chorus {
namespace {

// Whether text contains part, saying both when it does not.
::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

const chorusDataType_t kBadTypes[] = {static_cast<chorusDataType_t>(-1), chorusNumTypes,
                                      static_cast<chorusDataType_t>(1000)};
const chorusRedOp_t kBadOps[] = {static_cast<chorusRedOp_t>(-1), chorusNumOps, static_cast<chorusRedOp_t>(77)};

// Sets one environment variable for a scope.
class EnvVar {
 public:
  EnvVar(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~EnvVar() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A communicator of one rank, made the way applications make one.
class ApiValidationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    chorusUniqueId id;
    ASSERT_EQ(chorusGetUniqueId(&id), chorusSuccess) << chorusGetLastError(nullptr);
    ASSERT_EQ(chorusCommInitRank(&comm_, 1, id, 0), chorusSuccess) << chorusGetLastError(nullptr);
  }
  void TearDown() override { EXPECT_EQ(chorusCommDestroy(comm_), chorusSuccess); }

  // result must be chorusInvalidArgument, and both the comm's and this thread's last error must contain `what`.
  void expectRefused(chorusResult_t result, const std::string& what, const std::string& call) {
    EXPECT_EQ(result, chorusInvalidArgument) << call << ": " << chorusGetErrorString(result);
    EXPECT_TRUE(Contains(std::string(chorusGetLastError(nullptr)), what)) << call;
    EXPECT_TRUE(Contains(std::string(chorusGetLastError(comm_)), what)) << call;
  }

  // The communicator still works after the refusals: an allreduce gives the right answer, no async error.
  void expectStillUsable() {
    double x[3] = {1.5, -2, 4};
    ASSERT_EQ(chorusAllReduce(x, x, 3, chorusFloat64, chorusSum, comm_, nullptr), chorusSuccess)
        << chorusGetLastError(comm_);
    EXPECT_EQ(x[0], 1.5);
    EXPECT_EQ(x[1], -2);
    EXPECT_EQ(x[2], 4);
    int32_t in[2] = {7, 9}, out[2] = {0, 0};
    ASSERT_EQ(chorusAllReduce(in, out, 2, chorusInt32, chorusMax, comm_, nullptr), chorusSuccess);
    EXPECT_EQ(out[0], 7);
    EXPECT_EQ(out[1], 9);
    chorusResult_t async = chorusInternalError;
    EXPECT_EQ(chorusCommGetAsyncError(comm_, &async), chorusSuccess);
    EXPECT_EQ(async, chorusSuccess);
  }

  chorusComm_t comm_ = nullptr;
  float a_[64] = {};
  float b_[64] = {};
};

TEST(ApiValidationNoCommTest, VersionAndIdRefuseNullPointers) {
  EXPECT_EQ(chorusGetVersion(nullptr), chorusInvalidArgument);
  EXPECT_TRUE(Contains(std::string(chorusGetLastError(nullptr)), "version is NULL"));
  int version = 0;
  EXPECT_EQ(chorusGetVersion(&version), chorusSuccess);
  EXPECT_EQ(version, CHORUS_VERSION_CODE);
  EXPECT_EQ(chorusGetUniqueId(nullptr), chorusInvalidArgument);
  EXPECT_TRUE(Contains(std::string(chorusGetLastError(nullptr)), "uniqueId is NULL"));
}

TEST(ApiValidationNoCommTest, InitRefusesBadRanksAndPointers) {
  chorusUniqueId id;
  ASSERT_EQ(chorusGetUniqueId(&id), chorusSuccess);
  chorusComm_t comm = reinterpret_cast<chorusComm_t>(0x1);
  EXPECT_EQ(chorusCommInitRank(nullptr, 1, id, 0), chorusInvalidArgument);
  EXPECT_TRUE(Contains(std::string(chorusGetLastError(nullptr)), "comm is NULL"));
  for (int nranks : {0, -1}) {
    EXPECT_EQ(chorusCommInitRank(&comm, nranks, id, 0), chorusInvalidArgument) << nranks;
    EXPECT_TRUE(Contains(std::string(chorusGetLastError(nullptr)), "nranks " + std::to_string(nranks)));
    EXPECT_EQ(comm, nullptr) << "a refused init must leave *comm NULL";
  }
  for (int rank : {-1, 2, 3}) {
    EXPECT_EQ(chorusCommInitRank(&comm, 2, id, rank), chorusInvalidArgument) << rank;
    EXPECT_TRUE(Contains(std::string(chorusGetLastError(nullptr)), "rank " + std::to_string(rank)));
    EXPECT_TRUE(Contains(std::string(chorusGetLastError(nullptr)), "[0, 2)"));
  }
  chorusUniqueId garbage;
  std::memset(&garbage, 'x', sizeof(garbage));
  EXPECT_EQ(chorusCommInitRank(&comm, 1, garbage, 0), chorusInvalidArgument);
  EXPECT_TRUE(Contains(std::string(chorusGetLastError(nullptr)), "unique id"));
  EXPECT_EQ(chorusCommInitFromEnv(nullptr), chorusInvalidArgument);
  EXPECT_TRUE(Contains(std::string(chorusGetLastError(nullptr)), "comm is NULL"));
}

TEST(ApiValidationNoCommTest, NullCommIsRefusedByEveryCall) {
  int value = 0;
  chorusResult_t async;
  float x[4] = {};
  EXPECT_EQ(chorusCommDestroy(nullptr), chorusSuccess);
  EXPECT_EQ(chorusCommAbort(nullptr), chorusSuccess);
  auto expectRefused = [](chorusResult_t result, const std::string& call) {
    EXPECT_EQ(result, chorusInvalidArgument) << call;
    EXPECT_TRUE(Contains(chorusGetLastError(nullptr), call + ": comm is NULL"));
  };
  expectRefused(chorusCommCount(nullptr, &value), "chorusCommCount");
  expectRefused(chorusCommUserRank(nullptr, &value), "chorusCommUserRank");
  expectRefused(chorusCommGetAsyncError(nullptr, &async), "chorusCommGetAsyncError");
  expectRefused(chorusAllReduce(x, x, 4, chorusFloat32, chorusSum, nullptr, nullptr), "chorusAllReduce");
  expectRefused(chorusBroadcast(x, x, 4, chorusFloat32, 0, nullptr, nullptr), "chorusBroadcast");
  expectRefused(chorusReduce(x, x, 4, chorusFloat32, chorusSum, 0, nullptr, nullptr), "chorusReduce");
  expectRefused(chorusAllGather(x, x, 4, chorusFloat32, nullptr, nullptr), "chorusAllGather");
  expectRefused(chorusReduceScatter(x, x, 4, chorusFloat32, chorusSum, nullptr, nullptr), "chorusReduceScatter");
  expectRefused(chorusSend(x, 4, chorusFloat32, 0, nullptr, nullptr), "chorusSend");
  expectRefused(chorusRecv(x, 4, chorusFloat32, 0, nullptr, nullptr), "chorusRecv");
  expectRefused(chorusAllToAll(x, x, 1, chorusFloat32, nullptr, nullptr), "chorusAllToAll");
  size_t counts[1] = {1}, displs[1] = {0};
  expectRefused(chorusAllToAllv(x, counts, displs, x, counts, displs, chorusFloat32, nullptr, nullptr),
                "chorusAllToAllv");
  expectRefused(chorusGather(x, x, 4, chorusFloat32, 0, nullptr, nullptr), "chorusGather");
  expectRefused(chorusScatter(x, x, 4, chorusFloat32, 0, nullptr, nullptr), "chorusScatter");
  expectRefused(chorusBarrier(nullptr, nullptr), "chorusBarrier");
  void* handle = nullptr;
  expectRefused(chorusCommRegister(nullptr, x, sizeof(x), &handle), "chorusCommRegister");
  expectRefused(chorusCommDeregister(nullptr, x), "chorusCommDeregister");
  chorusComm_t child = nullptr;
  expectRefused(chorusCommSplit(nullptr, 0, 0, &child, nullptr), "chorusCommSplit");
}

TEST(ApiValidationNoCommTest, NamesOfCodesTypesAndOps) {
  for (int r = 0; r < chorusNumResults; ++r) {
    EXPECT_STRNE(chorusGetErrorString(static_cast<chorusResult_t>(r)), "unknown result code") << r;
  }
  EXPECT_STREQ(chorusGetErrorString(chorusNumResults), "unknown result code");
  EXPECT_STREQ(chorusGetErrorString(static_cast<chorusResult_t>(-1)), "unknown result code");
  for (chorusDataType_t t : kBadTypes) {
    EXPECT_EQ(chorusTypeSize(t), 0u);
    EXPECT_STREQ(chorusTypeName(t), "unknown");
  }
  for (chorusRedOp_t o : kBadOps) EXPECT_STREQ(chorusOpName(o), "unknown");
  EXPECT_EQ(chorusTypeSize(chorusBfloat16), 2u);
  EXPECT_STREQ(chorusTypeName(chorusFloat16), "float16");
  EXPECT_STREQ(chorusOpName(chorusAvg), "avg");
}

TEST_F(ApiValidationTest, QueriesRefuseNullOutPointers) {
  expectRefused(chorusCommCount(comm_, nullptr), "count is NULL", "chorusCommCount");
  expectRefused(chorusCommUserRank(comm_, nullptr), "rank is NULL", "chorusCommUserRank");
  expectRefused(chorusCommGetAsyncError(comm_, nullptr), "asyncError is NULL", "chorusCommGetAsyncError");
  int value = -1;
  EXPECT_EQ(chorusCommCount(comm_, &value), chorusSuccess);
  EXPECT_EQ(value, 1);
  EXPECT_EQ(chorusCommUserRank(comm_, &value), chorusSuccess);
  EXPECT_EQ(value, 0);
  expectStillUsable();
}

TEST_F(ApiValidationTest, RegisterRefusesEmptyRangesAndNullHandles) {
  float x[16] = {};
  void* handle = nullptr;
  EXPECT_EQ(chorusCommRegister(comm_, nullptr, 64, &handle), chorusInvalidArgument);
  EXPECT_EQ(chorusCommRegister(comm_, x, 0, &handle), chorusInvalidArgument);
  EXPECT_EQ(chorusCommRegister(comm_, x, sizeof(x), nullptr), chorusInvalidArgument);
  EXPECT_EQ(chorusCommDeregister(comm_, nullptr), chorusInvalidArgument);
  // A world of one has no connection that keeps regions: the handle still works both ways.
  ASSERT_EQ(chorusCommRegister(comm_, x, sizeof(x), &handle), chorusSuccess) << chorusGetLastError(comm_);
  EXPECT_NE(handle, nullptr);
  EXPECT_EQ(chorusAllReduce(x, x, 16, chorusFloat32, chorusSum, comm_, nullptr), chorusSuccess);
  EXPECT_EQ(chorusCommDeregister(comm_, handle), chorusSuccess);
}

TEST_F(ApiValidationTest, DatatypeOutOfRange) {
  for (chorusDataType_t t : kBadTypes) {
    std::string what = "datatype " + std::to_string(static_cast<int>(t)) + " is out of range";
    expectRefused(chorusAllReduce(a_, b_, 4, t, chorusSum, comm_, nullptr), what, "chorusAllReduce");
    expectRefused(chorusBroadcast(a_, b_, 4, t, 0, comm_, nullptr), what, "chorusBroadcast");
    expectRefused(chorusReduce(a_, b_, 4, t, chorusSum, 0, comm_, nullptr), what, "chorusReduce");
    expectRefused(chorusAllGather(a_, b_, 4, t, comm_, nullptr), what, "chorusAllGather");
    expectRefused(chorusReduceScatter(a_, b_, 4, t, chorusSum, comm_, nullptr), what, "chorusReduceScatter");
    expectRefused(chorusSend(a_, 4, t, 0, comm_, nullptr), what, "chorusSend");
    expectRefused(chorusRecv(b_, 4, t, 0, comm_, nullptr), what, "chorusRecv");
    expectRefused(chorusAllToAll(a_, b_, 4, t, comm_, nullptr), what, "chorusAllToAll");
    expectRefused(chorusGather(a_, b_, 4, t, 0, comm_, nullptr), what, "chorusGather");
    expectRefused(chorusScatter(a_, b_, 4, t, 0, comm_, nullptr), what, "chorusScatter");
  }
  expectStillUsable();
}

// The bitwise ops take integer types only.
TEST_F(ApiValidationTest, BitwiseOpsTakeIntegersOnly) {
  for (chorusRedOp_t o : {chorusBand, chorusBor, chorusBxor}) {
    expectRefused(chorusAllReduce(a_, b_, 4, chorusFloat32, o, comm_, nullptr), "integer types only",
                  "chorusAllReduce");
    expectRefused(chorusReduce(a_, b_, 4, chorusBfloat16, o, 0, comm_, nullptr), "integer types only", "chorusReduce");
  }
  int32_t v[2] = {6, 3};
  ASSERT_EQ(chorusAllReduce(v, v, 2, chorusInt32, chorusBxor, comm_, nullptr), chorusSuccess);
  EXPECT_EQ(v[0], 6);
  expectStillUsable();
}

// Peers and roots outside the world, overflowing counts and bad alltoallv vectors.
TEST_F(ApiValidationTest, FrameworkCallArguments) {
  for (int peer : {-1, 1, 7}) {
    const std::string what = "peer " + std::to_string(peer) + " is outside [0, 1)";
    expectRefused(chorusSend(a_, 4, chorusFloat32, peer, comm_, nullptr), what, "chorusSend");
    expectRefused(chorusRecv(b_, 4, chorusFloat32, peer, comm_, nullptr), what, "chorusRecv");
  }
  for (int root : {-1, 1}) {
    const std::string what = "root " + std::to_string(root) + " is outside [0, 1)";
    expectRefused(chorusGather(a_, b_, 4, chorusFloat32, root, comm_, nullptr), what, "chorusGather");
    expectRefused(chorusScatter(a_, b_, 4, chorusFloat32, root, comm_, nullptr), what, "chorusScatter");
  }
  expectRefused(chorusSend(a_, SIZE_MAX / 2, chorusFloat32, 0, comm_, nullptr), "overflows", "chorusSend");
  expectRefused(chorusAllToAll(a_, b_, SIZE_MAX / 2, chorusFloat32, comm_, nullptr), "overflows", "chorusAllToAll");
  expectRefused(chorusGather(a_, b_, SIZE_MAX / 2, chorusFloat32, 0, comm_, nullptr), "overflows", "chorusGather");
  expectRefused(chorusSend(nullptr, 4, chorusFloat32, 0, comm_, nullptr), "sendbuff is NULL", "chorusSend");
  expectRefused(chorusRecv(nullptr, 4, chorusFloat32, 0, comm_, nullptr), "recvbuff is NULL", "chorusRecv");
  expectRefused(chorusAllToAll(a_, a_ + 1, 4, chorusFloat32, comm_, nullptr), "overlap", "chorusAllToAll");
  size_t counts[1] = {4}, displs[1] = {0}, huge[1] = {SIZE_MAX / 2};
  expectRefused(chorusAllToAllv(a_, nullptr, displs, b_, counts, displs, chorusFloat32, comm_, nullptr),
                "sendcounts is NULL", "chorusAllToAllv");
  expectRefused(chorusAllToAllv(a_, counts, huge, b_, counts, displs, chorusFloat32, comm_, nullptr), "overflows",
                "chorusAllToAllv");
  expectRefused(chorusAllToAllv(nullptr, counts, displs, b_, counts, displs, chorusFloat32, comm_, nullptr),
                "sendbuff is NULL", "chorusAllToAllv");
  expectRefused(chorusAllToAllv(a_, counts, displs, a_ + 2, counts, displs, chorusFloat32, comm_, nullptr), "overlap",
                "chorusAllToAllv");
  chorusComm_t child = nullptr;
  expectRefused(chorusCommSplit(comm_, -7, 0, &child, nullptr), "color -7", "chorusCommSplit");
  expectRefused(chorusCommSplit(comm_, 0, 0, nullptr, nullptr), "newcomm is NULL", "chorusCommSplit");
  // A world of one: every call with itself works (a send to itself needs a group).
  for (int i = 0; i < 4; ++i) a_[i] = static_cast<float>(i + 1);
  EXPECT_EQ(chorusAllToAll(a_, b_, 4, chorusFloat32, comm_, nullptr), chorusSuccess) << chorusGetLastError(comm_);
  EXPECT_EQ(b_[3], 4.0f);
  EXPECT_EQ(chorusGather(a_, b_, 4, chorusFloat32, 0, comm_, nullptr), chorusSuccess);
  EXPECT_EQ(chorusScatter(a_, b_, 4, chorusFloat32, 0, comm_, nullptr), chorusSuccess);
  EXPECT_EQ(chorusBarrier(comm_, nullptr), chorusSuccess);
  EXPECT_EQ(chorusSend(a_, 4, chorusFloat32, 0, comm_, nullptr), chorusInvalidUsage);
  ASSERT_EQ(chorusGroupStart(), chorusSuccess);
  EXPECT_EQ(chorusSend(a_, 4, chorusFloat32, 0, comm_, nullptr), chorusSuccess);
  EXPECT_EQ(chorusRecv(b_ + 8, 4, chorusFloat32, 0, comm_, nullptr), chorusSuccess);
  EXPECT_EQ(chorusGroupEnd(), chorusSuccess) << chorusGetLastError(comm_);
  EXPECT_EQ(b_[11], 4.0f);
  ASSERT_EQ(chorusCommSplit(comm_, 3, 0, &child, nullptr), chorusSuccess);
  EXPECT_EQ(chorusCommDestroy(child), chorusSuccess);
  expectStillUsable();
}

TEST_F(ApiValidationTest, OpOutOfRange) {
  for (chorusRedOp_t o : kBadOps) {
    std::string what = "op " + std::to_string(static_cast<int>(o)) + " is out of range";
    expectRefused(chorusAllReduce(a_, b_, 4, chorusFloat32, o, comm_, nullptr), what, "chorusAllReduce");
    expectRefused(chorusReduce(a_, b_, 4, chorusFloat32, o, 0, comm_, nullptr), what, "chorusReduce");
    expectRefused(chorusReduceScatter(a_, b_, 4, chorusFloat32, o, comm_, nullptr), what, "chorusReduceScatter");
  }
  expectStillUsable();
}

TEST_F(ApiValidationTest, NullBufferWithNonZeroCount) {
  expectRefused(chorusAllReduce(nullptr, b_, 4, chorusFloat32, chorusSum, comm_, nullptr), "sendbuff is NULL",
                "chorusAllReduce");
  expectRefused(chorusAllReduce(a_, nullptr, 4, chorusFloat32, chorusSum, comm_, nullptr), "recvbuff is NULL",
                "chorusAllReduce");
  // Rank 0 is the root of a world of one: both of its buffers are needed.
  expectRefused(chorusBroadcast(nullptr, b_, 4, chorusFloat32, 0, comm_, nullptr), "sendbuff (on the root) is NULL",
                "chorusBroadcast");
  expectRefused(chorusBroadcast(a_, nullptr, 4, chorusFloat32, 0, comm_, nullptr), "recvbuff is NULL",
                "chorusBroadcast");
  expectRefused(chorusReduce(nullptr, b_, 4, chorusFloat32, chorusSum, 0, comm_, nullptr), "sendbuff is NULL",
                "chorusReduce");
  expectRefused(chorusReduce(a_, nullptr, 4, chorusFloat32, chorusSum, 0, comm_, nullptr),
                "recvbuff (on the root) is NULL", "chorusReduce");
  expectRefused(chorusAllGather(nullptr, b_, 4, chorusFloat32, comm_, nullptr), "sendbuff is NULL", "chorusAllGather");
  expectRefused(chorusAllGather(a_, nullptr, 4, chorusFloat32, comm_, nullptr), "recvbuff is NULL", "chorusAllGather");
  expectRefused(chorusReduceScatter(nullptr, b_, 4, chorusFloat32, chorusSum, comm_, nullptr), "sendbuff is NULL",
                "chorusReduceScatter");
  expectRefused(chorusReduceScatter(a_, nullptr, 4, chorusFloat32, chorusSum, comm_, nullptr), "recvbuff is NULL",
                "chorusReduceScatter");
  expectStillUsable();
}

TEST_F(ApiValidationTest, RootOutsideTheWorld) {
  for (int root : {-1, 1, 5}) {
    std::string what = "root " + std::to_string(root) + " is outside [0, 1)";
    expectRefused(chorusBroadcast(a_, b_, 4, chorusFloat32, root, comm_, nullptr), what, "chorusBroadcast");
    expectRefused(chorusReduce(a_, b_, 4, chorusFloat32, chorusSum, root, comm_, nullptr), what, "chorusReduce");
  }
  expectStillUsable();
}

TEST_F(ApiValidationTest, PartiallyOverlappingBuffers) {
  expectRefused(chorusAllReduce(a_, a_ + 1, 8, chorusFloat32, chorusSum, comm_, nullptr), "overlap", "chorusAllReduce");
  expectRefused(chorusAllReduce(a_ + 3, a_, 8, chorusFloat32, chorusSum, comm_, nullptr), "overlap", "chorusAllReduce");
  expectRefused(chorusBroadcast(a_, a_ + 2, 8, chorusFloat32, 0, comm_, nullptr), "overlap", "chorusBroadcast");
  expectRefused(chorusReduce(a_ + 2, a_, 8, chorusFloat32, chorusSum, 0, comm_, nullptr), "overlap", "chorusReduce");
  // In place is recvbuff + rank * count for allgather and sendbuff + rank * count for reduce-scatter; a world of
  // one has rank 0, so anything else that overlaps is wrong.
  expectRefused(chorusAllGather(a_ + 1, a_, 8, chorusFloat32, comm_, nullptr), "overlap", "chorusAllGather");
  expectRefused(chorusReduceScatter(a_, a_ + 1, 8, chorusFloat32, chorusSum, comm_, nullptr), "overlap",
                "chorusReduceScatter");
  // Adjacent but disjoint buffers are fine.
  for (int i = 0; i < 8; ++i) a_[i] = static_cast<float>(i);
  EXPECT_EQ(chorusAllReduce(a_, a_ + 8, 8, chorusFloat32, chorusSum, comm_, nullptr), chorusSuccess)
      << chorusGetLastError(comm_);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(a_[8 + i], static_cast<float>(i));
  expectStillUsable();
}

TEST_F(ApiValidationTest, NonNullStreamWithoutDeviceSupport) {
  int fakeStream = 0;
  expectRefused(chorusAllReduce(a_, b_, 4, chorusFloat32, chorusSum, comm_, &fakeStream), "stream", "chorusAllReduce");
  expectStillUsable();
}

TEST_F(ApiValidationTest, CountZeroWithNullBuffersIsValid) {
  EXPECT_EQ(chorusAllReduce(nullptr, nullptr, 0, chorusFloat32, chorusSum, comm_, nullptr), chorusSuccess)
      << chorusGetLastError(comm_);
  EXPECT_EQ(chorusBroadcast(nullptr, nullptr, 0, chorusInt8, 0, comm_, nullptr), chorusSuccess)
      << chorusGetLastError(comm_);
  EXPECT_EQ(chorusReduce(nullptr, nullptr, 0, chorusFloat16, chorusAvg, 0, comm_, nullptr), chorusSuccess)
      << chorusGetLastError(comm_);
  EXPECT_EQ(chorusAllGather(nullptr, nullptr, 0, chorusUint64, comm_, nullptr), chorusSuccess)
      << chorusGetLastError(comm_);
  EXPECT_EQ(chorusReduceScatter(nullptr, nullptr, 0, chorusBfloat16, chorusMin, comm_, nullptr), chorusSuccess)
      << chorusGetLastError(comm_);
  EXPECT_EQ(chorusAllToAll(nullptr, nullptr, 0, chorusInt8, comm_, nullptr), chorusSuccess)
      << chorusGetLastError(comm_);
  size_t zero[1] = {0};
  EXPECT_EQ(chorusAllToAllv(nullptr, zero, zero, nullptr, zero, zero, chorusInt8, comm_, nullptr), chorusSuccess)
      << chorusGetLastError(comm_);
  EXPECT_EQ(chorusGather(nullptr, nullptr, 0, chorusInt8, 0, comm_, nullptr), chorusSuccess);
  EXPECT_EQ(chorusScatter(nullptr, nullptr, 0, chorusInt8, 0, comm_, nullptr), chorusSuccess);
  expectStillUsable();
}

// A port on 127.0.0.1 that nothing listens on (bound, read, closed).
uint16_t closedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  EXPECT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  ::close(fd);
  return ntohs(addr.sin_port);
}

TEST(ApiValidationNoCommTest, UnreachableStoreFailsInitWithinTheTimeout) {
  EnvVar timeout("CHORUS_TIMEOUT", "1");
  const uint16_t port = closedPort();
  chorusUniqueId id = encodeUniqueId("127.0.0.1", port, "0123456789abcdef", "feedfacefeedface");
  chorusComm_t comm = nullptr;
  const auto start = std::chrono::steady_clock::now();
  chorusResult_t r = chorusCommInitRank(&comm, 2, id, 1);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(r == chorusTimeout || r == chorusSystemError) << chorusGetErrorString(r);
  EXPECT_EQ(comm, nullptr);
  EXPECT_GE(seconds, 0.5) << "gave up before CHORUS_TIMEOUT=1 (should retry while the store may still start)";
  EXPECT_LE(seconds, 4.0) << "CHORUS_TIMEOUT=1 was not honoured";
  EXPECT_TRUE(Contains(std::string(chorusGetLastError(nullptr)), "127.0.0.1:" + std::to_string(port)));
}

}  // namespace
}  // namespace chorus
