// Traces (CHORUS_TRACE): what a communicator writes and when, the file names, the clock offset between machines.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "chorus/chorus.h"
#include "src/comm/call_trace.h"
#include "src/comm/clock_offset.h"
#include "tests/unit/mailbox_peer_io.h"

namespace chorus {
namespace {

namespace fs = std::filesystem;

// A fresh directory under the temporary directory, removed with its files at the end of the test.
class TraceDir {
 public:
  TraceDir() : path_(fs::temp_directory_path() / ("chorus-trace-test-" + std::to_string(getpid()) + "-" +
                                                   std::to_string(counter_++))) {
    fs::remove_all(path_);
  }
  ~TraceDir() { fs::remove_all(path_); }
  std::string str() const { return path_.string(); }
  nlohmann::json read(const std::string& name) const {
    std::ifstream f(path_ / name);
    EXPECT_TRUE(f) << (path_ / name) << " was not written";
    return nlohmann::json::parse(f);
  }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

std::vector<nlohmann::json> callsOf(const nlohmann::json& trace) {
  std::vector<nlohmann::json> calls;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("cat", "") == "call") calls.push_back(e);
  }
  return calls;
}

chorusComm_t traced(const std::string& dir, int level) {
  chorusUniqueId id;
  EXPECT_EQ(chorusGetUniqueId(&id), chorusSuccess) << chorusGetLastError(nullptr);
  chorusConfig_t config = CHORUS_CONFIG_INITIALIZER;
  config.traceDir = dir.c_str();
  config.traceLevel = level;
  chorusComm_t comm = nullptr;
  EXPECT_EQ(chorusCommInitRankConfig(&comm, 1, id, 0, &config), chorusSuccess) << chorusGetLastError(nullptr);
  return comm;
}

TEST(CallTraceTest, ACommunicatorWritesOneEventPerCallWhenDestroyed) {
  TraceDir dir;
  chorusComm_t comm = traced(dir.str(), 1);
  ASSERT_NE(comm, nullptr);
  std::vector<float> data(1000, 1.0f);
  ASSERT_EQ(chorusAllReduce(data.data(), data.data(), data.size(), chorusFloat32, chorusMax, comm, nullptr),
            chorusSuccess);
  ASSERT_EQ(chorusBroadcast(data.data(), data.data(), 10, chorusInt32, 0, comm, nullptr), chorusSuccess);
  EXPECT_FALSE(fs::exists(dir.str() + "/chorus-trace-0.json")) << "written before the communicator is destroyed";
  ASSERT_EQ(chorusCommDestroy(comm), chorusSuccess);

  const nlohmann::json trace = dir.read("chorus-trace-0.json");
  const std::vector<nlohmann::json> calls = callsOf(trace);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0]["name"], "allreduce");
  EXPECT_EQ(calls[0]["ph"], "X");
  EXPECT_EQ(calls[0]["pid"], 0);
  EXPECT_EQ(calls[0]["args"]["bytes"], 4000);
  EXPECT_EQ(calls[0]["args"]["datatype"], "float32");
  EXPECT_EQ(calls[0]["args"]["op"], "max");
  EXPECT_TRUE(calls[0]["args"].contains("algorithm"));
  EXPECT_TRUE(calls[0]["args"].contains("chunk"));
  EXPECT_TRUE(calls[0]["args"].contains("wait_us")) << "level 1 splits each call's time";
  EXPECT_EQ(calls[1]["name"], "broadcast");
  EXPECT_EQ(calls[1]["args"]["root"], 0);
  EXPECT_FALSE(calls[1]["args"].contains("op")) << "a broadcast reduces nothing";
  EXPECT_LE(calls[0]["ts"].get<double>() + calls[0]["dur"].get<double>(), calls[1]["ts"].get<double>() + 0.001);
  EXPECT_EQ(trace["otherData"]["chorus"]["level"], "transfer");
}

TEST(CallTraceTest, AnAbortedCommunicatorWritesItsTraceToo) {
  TraceDir dir;
  chorusComm_t comm = traced(dir.str(), 0);
  ASSERT_NE(comm, nullptr);
  int64_t x = 5;
  ASSERT_EQ(chorusAllReduce(&x, &x, 1, chorusInt64, chorusSum, comm, nullptr), chorusSuccess);
  ASSERT_EQ(chorusCommAbort(comm), chorusSuccess);
  const std::vector<nlohmann::json> calls = callsOf(dir.read("chorus-trace-0.json"));
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_FALSE(calls[0]["args"].contains("wait_us")) << "level 0: calls only";
}

TEST(CallTraceTest, EventsAreWrittenAsChromeCompleteEvents) {
  TraceDir dir;
  fs::create_directories(dir.str());
  CallTrace trace(dir.str() + "/t.json", TraceLevel::kTransfer, 3, 4, "my \"comm\"");
  trace.setClockOffsetUs(1000);
  const CallArgs op{
      .collective = Collective::kReduceScatter, .count = 256, .type = chorusBfloat16, .reduction = chorusAvg};
  TransferTimes times{.waitUs = 1, .moveUs = 2, .reduceUs = 3};
  trace.recordCall(op, "ring", 65536, 10, 20, &times, 3);
  trace.recordTransfer(TransferStep{.what = "exchange",
                                    .peer = 2,
                                    .bytes = 512,
                                    .transport = "tcp",
                                    .startUs = 11,
                                    .endUs = 19,
                                    .waitUs = 5,
                                    .moveUs = 3,
                                    .rounds = 7,
                                    .movingRounds = 4,
                                    .sleeps = 1});
  trace.flush();
  const nlohmann::json j = dir.read("t.json");
  int calls = 0, transfers = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M") {
      if (e["name"] == "process_name") {
        EXPECT_EQ(e["args"]["name"], "rank 3 (my \"comm\")");
      }
      continue;
    }
    EXPECT_EQ(e["pid"], 3);
    if (e["cat"] == "call") {
      ++calls;
      EXPECT_EQ(e["tid"], 0);
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 1010);  // the clock offset added
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 10);
      EXPECT_EQ(e["args"]["bytes"], 512);
      EXPECT_EQ(e["args"]["datatype"], "bfloat16");
      EXPECT_EQ(e["args"]["op"], "avg");
      EXPECT_EQ(e["args"]["fused"], 3);
      EXPECT_DOUBLE_EQ(e["args"]["reduce_us"].get<double>(), 3);
    } else {
      ++transfers;
      EXPECT_EQ(e["cat"], "transfer");
      EXPECT_EQ(e["tid"], 1);
      EXPECT_EQ(e["args"]["peer"], 2);
      EXPECT_EQ(e["args"]["transport"], "tcp");
      EXPECT_DOUBLE_EQ(e["args"]["wait_us"].get<double>(), 5);
      EXPECT_EQ(e["args"]["rounds"], 7);
      EXPECT_EQ(e["args"]["moving_rounds"], 4);
      EXPECT_EQ(e["args"]["sleeps"], 1);
    }
  }
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(transfers, 1);
  EXPECT_DOUBLE_EQ(j["otherData"]["chorus"]["clock_offset_us"].get<double>(), 1000);
}

TEST(CallTraceTest, FileNamesSayTheRankAndTheSplit) {
  EXPECT_EQ(traceFilePath("/tmp/t", 3, "u1234/"), "/tmp/t/chorus-trace-3.json");
  EXPECT_EQ(traceFilePath("/tmp/t/", 0, "e0/"), "/tmp/t/chorus-trace-0.json");
  EXPECT_EQ(traceFilePath("d", 1, "u1234/split0.color2/split1.color0/"),
            "d/chorus-trace-1.split0.color2-split1.color0.json");
}

// The offset of a clock `skewUs` ahead of rank 0's, measured over links with `delayUs` each way.
void expectOffsetFound(double skewUs, int delayUs) {
  test::Mailboxes boxes([&](int, int, size_t) { return std::chrono::microseconds(delayUs); });
  const int n = 3;
  std::vector<double> offsets(n, -1);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      test::MailboxPeerIO io(boxes, r, n);
      // Rank 1 is on another machine, its clock skewUs ahead; rank 2 shares rank 0's and is not measured.
      auto clock = [&, r] { return CallTrace::nowUs() + (r == 1 ? skewUs : 0); };
      offsets[r] = measureClockOffsetUs(io, {1}, clock);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(offsets[0], 0);
  EXPECT_EQ(offsets[2], 0);
  // Symmetric delays: the estimate is off by the asymmetry of the best round trip only (scheduling here).
  EXPECT_NEAR(offsets[1], -skewUs, 500) << "delay " << delayUs << " us each way";
}

TEST(ClockOffsetTest, FindsAnotherMachinesSkewWithinHalfARoundTrip) {
  expectOffsetFound(250000, 0);
  expectOffsetFound(-40000, 2000);
}

}  // namespace
}  // namespace chorus
