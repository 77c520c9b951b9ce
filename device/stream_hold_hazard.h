// Whether a stream held until a device call ends can hold Chorus's own device work behind it.
//
// A device call in stream order makes the caller's stream wait (cuStreamWaitValue32) until the progress thread has
// finished the call, and that thread's copies and reductions run on streams of their own. The GPU runs a
// process's streams on a few hardware queues (CUDA_DEVICE_MAX_CONNECTIONS, 8 by default), in order within each:
// where the held stream shares a queue with one of Chorus's, that stream's work waits behind the hold, and the
// call never ends. On an H100, with CUDA_DEVICE_MAX_CONNECTIONS=1 or 2, and under MPS, a 2-rank 8-byte device
// allreduce hangs; with the default 8, and under MPS with 32, none does (perf/results/gpu.md, "Device calls that
// hung").
// Where the hazard exists, device calls block their caller instead (CHORUS_DEVICE_CALLS, docs/device_calls.md).
#pragma once

#include <string>

namespace chorus {

// CUDA's default number of hardware queues per process and device; fewer, set by the user, is a hazard.
inline constexpr int kDefaultDeviceConnections = 8;
// Under MPS: the fewest queues asked for with which no hold was seen to block (32 measured; 8 hung).
inline constexpr int kMpsSafeConnections = 32;

// CUDA_DEVICE_MAX_CONNECTIONS as the runtime reads it: its value when set to a positive integer, else 0.
int deviceMaxConnectionsFromEnv();

// Why holding a stream is unsafe here ("" when it is safe): fewer hardware queues than CUDA's default, or MPS
// (mpsEnabled: the device's CU_DEVICE_ATTRIBUTE_MPS_ENABLED), whose clients get fewer.
std::string streamHoldHazard(bool mpsEnabled);

}  // namespace chorus
