#include "src/comm/point_to_point.h"

#include <string>

#include "core/datatype.h"
#include "core/error.h"
#include "src/comm/call_description.h"

namespace chorus {
namespace {

// Copies this rank's k-th send to itself into its k-th receive from itself.
void pairWithSelf(CommIO& io, const std::vector<const CallArgs*>& sends, const std::vector<const CallArgs*>& recvs) {
  if (sends.empty() && recvs.empty()) return;
  for (size_t k = 0; k < sends.size() || k < recvs.size(); ++k) {
    if (k >= sends.size() || k >= recvs.size()) {
      const CallArgs& lone = k < sends.size() ? *sends[k] : *recvs[k];
      throw Error(chorusInvalidUsage,
                  errorContext(io.rank(), describeCall(lone)) + ": has no matching " +
                      (k < sends.size() ? "receive" : "send") +
                      " in its group (a rank's sends to itself and receives from itself pair up in order)",
                  Failure::kMismatch);
    }
    const CallArgs& s = *sends[k];
    const CallArgs& r = *recvs[k];
    if (countBytes(s) != countBytes(r) || s.type != r.type) {
      throw Error(chorusInvalidUsage,
                  errorContext(io.rank(), describeCall(s)) + ": meets " + describeCall(r) +
                      ": different datatypes or sizes (" + std::to_string(countBytes(s)) + " bytes sent, " +
                      std::to_string(countBytes(r)) + " expected)",
                  Failure::kMismatch);
    }
    io.copy(r.recv, s.send, countBytes(s));
  }
}

}  // namespace

void runPointToPoint(CommIO& io, CallTags& tags, const std::vector<const CallArgs*>& ops, LazyDeadline deadline) {
  if (ops.empty()) return;
  const int self = io.rank();
  io.begin(tags, deadline, ops.front());
  io.postingTogether();
  std::vector<const CallArgs*> selfSends, selfRecvs;
  // Receives first: a transport that sees the peer sending to us too can pick the path that suits traffic both ways
  // (shared memory's ring, where both copies run at once). Each direction keeps its own call order.
  for (const bool sending : {false, true}) {
    for (const CallArgs* op : ops) {
      const bool sends = op->collective == Collective::kSend;
      if (sends != sending) continue;
      if (op->peer == self) {
        (sends ? selfSends : selfRecvs).push_back(op);
        continue;
      }
      // The tag counts this call among the pair's calls in its direction: post at once, before the next one counts.
      tags.beginPointToPoint(*op, sends, !sends);
      if (sends) {
        io.isend(op->peer, op->send, countBytes(*op));
      } else {
        io.irecv(op->peer, op->recv, countBytes(*op));
      }
    }
  }
  pairWithSelf(io, selfSends, selfRecvs);
  io.waitAll();
}

}  // namespace chorus
