// The flight recorder's ring (wrap-around, no recording at capacity 0, consistent copies while a writer runs), its
// JSON, and chorus-inspect's verdicts on made-up readings.
#include "src/flight/flight_recorder.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "core/collective.h"
#include "perf/chorus_inspect/flight_view.h"
#include "perf/chorus_inspect/verdict.h"
#include "src/flight/flight_json.h"

namespace chorus {
namespace {

CallArgs allreduce(uint64_t seq) {
  CallArgs op;
  op.collective = Collective::kAllReduce;
  op.count = 1;
  op.type = chorusFloat64;
  op.seq = seq;
  return op;
}

TEST(FlightRecorderTest, KeepsTheNewestCallsWhenTheRingWraps) {
  FlightRecorder recorder(4, {"", "job/comm", 0, 2});
  for (uint64_t seq = 0; seq < 10; ++seq) {
    const uint64_t record = recorder.begin(allreduce(seq));
    recorder.running(record, "ring");
    if (seq != 9) recorder.end(record, seq != 8);
  }
  const std::vector<FlightCall> calls = recorder.snapshot();
  ASSERT_EQ(calls.size(), 4u);
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].ordinal, 7 + i);
    EXPECT_EQ(calls[i].seq, 6 + i);
    EXPECT_EQ(calls[i].bytes, 8u);
  }
  EXPECT_EQ(calls[1].state, FlightState::kDone);
  EXPECT_EQ(calls[2].state, FlightState::kFailed);
  EXPECT_EQ(calls[3].state, FlightState::kRunning);
  EXPECT_STREQ(calls[3].algorithm, "ring");
  EXPECT_EQ(recorder.snapshot(2).size(), 2u);
  EXPECT_EQ(recorder.snapshot(2).front().ordinal, 9u);
  EXPECT_EQ(recorder.recorded(), 10u);
}

TEST(FlightRecorderTest, RecordsAWaitAndLeavesAnEndedCallAlone) {
  FlightRecorder recorder(8, {"", "id", 1, 4});
  const uint64_t record = recorder.begin(allreduce(3));
  recorder.waiting(record, 3, 2);
  FlightCall c = recorder.snapshot().back();
  EXPECT_EQ(c.state, FlightState::kWaiting);
  EXPECT_EQ(c.waitingOn, 3);
  EXPECT_EQ(c.waitingCount, 2);
  EXPECT_GT(c.waitingMs, 0u);
  recorder.end(record, false);
  recorder.end(record, true);  // already failed: stays failed
  c = recorder.snapshot().back();
  EXPECT_EQ(c.state, FlightState::kFailed);
  EXPECT_EQ(c.waitingOn, -1);
}

TEST(FlightRecorderTest, CapacityZeroRecordsNothing) {
  FlightRecorder recorder(0, {"", "id", 0, 1});
  EXPECT_EQ(recorder.begin(allreduce(0)), 0u);
  recorder.running(0, "ring");
  recorder.end(0, true);
  EXPECT_TRUE(recorder.snapshot().empty());
  EXPECT_EQ(recorder.oldestPendingAgeMs(), 0u);
}

// A reader beside a writer that laps the ring many times sees only whole records: seq is always ordinal - 1.
TEST(FlightRecorderTest, AReaderBesideTheWriterSeesWholeRecords) {
  FlightRecorder recorder(16, {"", "id", 0, 2});
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (uint64_t seq = 0; !stop.load(); ++seq) {
      const uint64_t record = recorder.begin(allreduce(seq));
      recorder.running(record, "ring");
      recorder.end(record, true);
    }
  });
  // Until it has checked enough records (the writer may start late on a loaded machine), within a deadline.
  size_t seen = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (seen < 20000 && std::chrono::steady_clock::now() < deadline) {
    for (const FlightCall& c : recorder.snapshot()) {
      ASSERT_EQ(c.seq + 1, c.ordinal);
      ++seen;
    }
  }
  stop = true;
  writer.join();
  EXPECT_GT(seen, 0u);
}

TEST(FlightRecorderTest, ItsJsonReadsBackAsChorusInspectSeesIt) {
  FlightRecorder recorder(8, {"trainer", "job/comm", 2, 4});
  recorder.end(recorder.begin(allreduce(0)), true);
  recorder.waiting(recorder.begin(allreduce(1)), 3, 1);
  std::string text;
  {
    FlightJsonOut out(&text);
    writeFlightJson(recorder, out);
  }
  std::map<std::string, inspect::CommView> comms;
  inspect::addRecord(comms, text);
  const inspect::CommView& comm = comms.at("job/comm");
  EXPECT_EQ(comm.name, "trainer");
  EXPECT_EQ(comm.size, 4);
  const inspect::RankView& rank = comm.ranks.at(2);
  ASSERT_EQ(rank.calls.size(), 2u);
  EXPECT_EQ(rank.calls[1].op, "allreduce");
  EXPECT_EQ(rank.calls[1].state, "waiting");
  EXPECT_EQ(rank.calls[1].waitingOn, 3);
  EXPECT_EQ(rank.calls[0].reduction, "sum");
}

inspect::SeenCall seen(uint64_t seq, const char* op, const char* state, double queuedAgo, double endAgo = -1) {
  inspect::SeenCall c;
  c.seq = seq;
  c.op = op;
  c.type = "float64";
  c.bytes = 8;
  c.state = state;
  c.queuedAgo = queuedAgo;
  c.endAgo = endAgo;
  return c;
}

inspect::CommView fourRanks() {
  inspect::CommView comm;
  comm.identity = "job/comm";
  comm.size = 4;
  for (int r = 0; r < 4; ++r) {
    comm.ranks[r].rank = r;
    comm.ranks[r].answered = true;
  }
  return comm;
}

std::string verdictOf(const inspect::CommView& comm) {
  std::string all;
  for (const std::string& s : inspect::readComm(comm).verdict) all += s + "\n";
  return all;
}

TEST(ChorusInspectVerdictTest, NamesTheRankOutsideChorus) {
  inspect::CommView comm = fourRanks();
  for (int r = 0; r < 3; ++r) comm.ranks[r].calls = {seen(1042, "allreduce", "waiting", 12.4)};
  comm.ranks[3].calls = {seen(1041, "broadcast", "done", 12.6, 12.5)};
  const std::string v = verdictOf(comm);
  EXPECT_NE(v.find("ranks 0-2 have waited 12.4 s in allreduce #1042 for rank 3"), std::string::npos) << v;
  EXPECT_NE(v.find("rank 3's last call is broadcast #1041, done 12.5 s ago: rank 3 is outside Chorus"),
            std::string::npos)
      << v;
}

TEST(ChorusInspectVerdictTest, NamesARankThatDoesNotAnswer) {
  inspect::CommView comm = fourRanks();
  for (int r = 0; r < 3; ++r) comm.ranks[r].calls = {seen(7, "allreduce", "waiting", 3)};
  comm.ranks[3].answered = false;
  comm.ranks[3].problem = "connect: Connection refused";
  const std::string v = verdictOf(comm);
  EXPECT_NE(v.find("rank 3 does not answer (its process is gone, or hung in a system call)"), std::string::npos) << v;
  EXPECT_NE(v.find("ranks 0-2 have waited 3.0 s in allreduce #7 for rank 3"), std::string::npos) << v;
}

TEST(ChorusInspectVerdictTest, ListsRanksThatCalledDifferentThings) {
  inspect::CommView comm = fourRanks();
  for (int r = 0; r < 4; ++r) comm.ranks[r].calls = {seen(6, r == 1 ? "broadcast" : "allreduce", "waiting", 2)};
  const std::string v = verdictOf(comm);
  EXPECT_NE(v.find("called different things as call #6"), std::string::npos) << v;
  EXPECT_NE(v.find("rank 1 broadcast #6"), std::string::npos) << v;
  EXPECT_NE(v.find("ranks 0,2-3 allreduce #6"), std::string::npos) << v;
}

TEST(ChorusInspectVerdictTest, SaysWhenEveryRankIsInTheCallOrNoneIs) {
  inspect::CommView comm = fourRanks();
  for (int r = 0; r < 4; ++r) comm.ranks[r].calls = {seen(9, "allgather", "waiting", 5)};
  EXPECT_NE(verdictOf(comm).find("which every rank has reached"), std::string::npos);
  for (int r = 0; r < 4; ++r) comm.ranks[r].calls = {seen(9, "allgather", "done", 5, 4)};
  EXPECT_NE(verdictOf(comm).find("no rank is inside a Chorus call"), std::string::npos);
}

}  // namespace
}  // namespace chorus
