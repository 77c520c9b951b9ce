// Chrome traces of a communicator's calls (config traceDir, CHORUS_TRACE=DIR): one complete event per call, and at
// TraceLevel::kTransfer one per transfer step, kept in memory and written as the JSON that Perfetto and
// chrome://tracing open when the communicator is destroyed or aborted. Off (no CallTrace), a call pays one null
// check. docs/tracing.md has the format and what each field means.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/collective.h"

namespace chorus {

enum class TraceLevel { kCall = 0, kTransfer = 1 };

// Where a call's time went, at TraceLevel::kTransfer (CommIO adds to it while the call runs).
struct TransferTimes {
  double waitUs = 0;    // inside waits while nothing moved: the peer was not there yet
  double moveUs = 0;    // inside waits while bytes moved, and local copies
  double reduceUs = 0;  // inside the reducer
  void clear() { *this = TransferTimes{}; }
};

// One transfer step (a wait of an algorithm), as CommIO saw it.
struct TransferStep {
  const char* what;       // a static name: "send", "recv", "exchange", "wait_all"
  int peer;               // -1: several
  size_t bytes;           // posted (an exchange counts both ways)
  const char* transport;  // the link's transport ("" for several peers)
  double startUs, endUs;
  double waitUs, moveUs;  // the step's time: nothing moving, and bytes moving
  uint32_t rounds;        // progress rounds (each a send and a receive attempt per busy connection)
  uint32_t movingRounds;  // of which moved bytes
  uint32_t sleeps;        // times the waiter slept in poll
};

class CallTrace {
 public:
  // Writes to `path` at flush(); `rank` is the process row, `commName` labels it.
  CallTrace(std::string path, TraceLevel level, int rank, int size, std::string commName);

  // Microseconds on the steady clock (CLOCK_MONOTONIC: one clock for every process of a machine).
  static double nowUs();
  TraceLevel level() const { return level_; }
  // Added to every timestamp written: this machine's clock's offset to rank 0's (clock_offset.h).
  void setClockOffsetUs(double offsetUs) { offsetUs_ = offsetUs; }
  double clockOffsetUs() const { return offsetUs_; }

  // One call (or a batch's point-to-point part, or a fused allreduce standing for `fused` calls). `algorithm` is a
  // static name or null (point-to-point); `times` null below kTransfer.
  void recordCall(const CallArgs& op, const char* algorithm, size_t chunkBytes, double startUs, double endUs,
                  const TransferTimes* times, int fused = 1);
  void recordTransfer(const TransferStep& step);
  // Writes every event so far to the file (replacing it, through a temporary and a rename); throws a system error
  // naming the file when it cannot. Later events are kept too: a second flush writes them all.
  void flush() const;
  size_t events() const { return count_; }

  // At most this many events are kept (the rest are counted as dropped, and the file says how many).
  static constexpr size_t kMaxEvents = size_t{1} << 20;

 private:
  struct Event {
    double startUs, endUs;
    const char* name;       // collective or transfer step
    const char* algorithm;  // calls: the algorithm (null: none); transfers: the transport
    uint64_t seq;
    size_t bytes, count, chunk;
    double waitUs, moveUs, reduceUs;
    int peer, root, fused;
    uint32_t rounds, movingRounds, sleeps;  // transfers
    chorusDataType_t type;
    chorusRedOp_t reduction;
    bool transfer, timed, reduces;
  };
  // Room for one more event (null when kMaxEvents are kept: then it is counted as dropped).
  Event* next();
  // Events live in blocks that are never moved: a growing vector would copy every event so far into fresh memory,
  // and fresh memory is slow to touch (a call paid 1.2 us on average that way at 44000 events here).
  static constexpr size_t kBlockEvents = 8192;

  std::string path_;
  TraceLevel level_;
  int rank_, size_;
  std::string commName_;
  double offsetUs_ = 0;
  std::vector<std::vector<Event>> blocks_;
  size_t count_ = 0;
  size_t dropped_ = 0;
};

// The file a communicator's trace goes to in `dir`: chorus-trace-<rank>.json for a communicator made by an init
// call, chorus-trace-<rank>.<name>.json for one split from it (its key prefix, made file-safe).
std::string traceFilePath(const std::string& dir, int rank, const std::string& keyPrefix);

}  // namespace chorus
