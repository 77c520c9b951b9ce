// Driving a set of connections until a send and a receive posted on each complete: the setup steps that trade a
// message with every peer at once (so that no order of pairs can deadlock) share it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/deadline.h"
#include "transports/connection.h"

namespace chorus {

// One connection's share: the ids isend and irecv gave the send and the receive to wait for.
struct PostedTransfer {
  Connection* conn;
  uint64_t send;
  uint64_t recv;
};

// What completeTransfers says when it fails.
struct TransferMessages {
  // Where a failed poll happened: "rank 3, ib connection setup".
  std::string context;
  // The timeout's message, given the ranks still waited on ("1, 4").
  std::function<std::string(const std::string& waiting)> timedOut;
  // A connection's error with the step's context added; empty: rethrown as it is.
  std::function<Error(const Error& e, int peer)> failed;
};

// Progresses every connection until its send and receive completed, sleeping on the connections' descriptors
// while nothing moves. Their hang-up descriptors are watched too, so that a lost peer fails the step at once
// rather than at the deadline. Throws at the deadline naming the ranks still waited on, or the error of the
// connection that failed.
void completeTransfers(const std::vector<PostedTransfer>& posted, const Deadline& deadline,
                       const TransferMessages& say);

}  // namespace chorus
