// One call as the flight recorder saw it: a plain copy that readers (chorus-inspect's listener, the dumps, the
// metrics) take out of the recorder's ring without stopping the job.
#pragma once

#include <cstdint>

namespace chorus {

enum class FlightState : uint8_t { kQueued, kRunning, kWaiting, kDone, kFailed };
const char* flightStateName(FlightState s);  // "queued", "running", "waiting", "done", "failed"
inline bool flightPending(FlightState s) { return s != FlightState::kDone && s != FlightState::kFailed; }

// Times are milliseconds on the recorder's coarse monotonic clock since the recorder started (0: not yet); the
// coarse clock (a few ms of resolution) costs a few ns where a precise one costs ~20 on a VM, a fifth of a small
// call's own work (core/deadline.h).
struct FlightCall {
  uint64_t ordinal = 0;        // 1 for the first call recorded, and so on: which record this is
  uint64_t seq = 0;            // the call's number on its communicator, as error messages write it ("#12")
  uint64_t bytes = 0;          // one rank's block, or a point-to-point message
  const char* algorithm = "";  // a static name; "" before the plan, for point-to-point calls and batches
  FlightState state = FlightState::kQueued;
  uint8_t collective = 0;    // Collective
  uint8_t type = 0;          // chorusDataType_t
  uint8_t reduction = 0;     // chorusRedOp_t
  int32_t rootOrPeer = -1;   // a rooted collective's root, a send's or receive's peer; -1 none
  int32_t waitingOn = -1;    // the first rank a waiting call waits on (-1 none)
  int32_t waitingCount = 0;  // how many ranks it waits on
  uint32_t queuedMs = 0;     // when the call was numbered
  uint32_t waitingMs = 0;    // when it first slept waiting for peers
  uint32_t endMs = 0;        // when it was done or failed
};

}  // namespace chorus
