// Measures each rail of a peer pair once, when its sockets are connected, so that both ends cut striped messages in
// proportion to what each rail carries (a 1 Gbit/s NIC beside a 10 Gbit/s one takes a tenth). The higher rank of
// the pair receives: it sends a go byte on socket 0; the lower rank then sends kRailProbeBytes on the first socket
// of every rail at once; the receiver times each rail from the first byte that arrives on any of them to its own
// last byte, turns the rates into weights (kWeightScale in all) and sends them back on socket 0. Rails measured
// together share what they share (a CPU, a switch), as they will when striped.
//
// The probe runs before a sealed connection's records start and is not authenticated: a stranger who alters it can
// change the weights one end uses, which makes the pair's frames disagree in size (a clear mismatch error), never
// wrong data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/deadline.h"

namespace chorus {

inline constexpr size_t kRailProbeBytes = 4 << 20;  // per rail: 34 ms at 1 Gbit/s, well past tbf's burst
inline constexpr uint32_t kWeightScale = 1024;

// fds: the first socket of each rail (non-blocking, connected). Both return the weights, one per rail; throw
// chorusTimeout past the deadline and chorusSystemError/chorusRemoteError (naming `context`) on a failed socket.
std::vector<uint32_t> probeRailsAsSender(const std::vector<int>& fds, Deadline deadline, const std::string& context);
std::vector<uint32_t> probeRailsAsReceiver(const std::vector<int>& fds, Deadline deadline, const std::string& context);

// Weights (kWeightScale in all, each at least 1) in proportion to 1 / seconds: the time each rail took.
std::vector<uint32_t> railWeights(const std::vector<double>& seconds);

}  // namespace chorus
