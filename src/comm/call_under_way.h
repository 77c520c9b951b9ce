// What a CommIO knows of the call it serves, set by begin(): the tags its frames carry, its deadline, how it is named
// in messages, its posting hints, and the connections it has used so far.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/collective.h"
#include "core/deadline.h"
#include "src/comm/call_tags.h"
#include "src/flight/flight_recorder.h"
#include "transports/connection.h"

namespace chorus {

// A connection the call uses, with what it supports beyond the core, looked up at its first use in the call so that
// posting a message pays no lookup.
struct ActiveConnection {
  Connection* conn;
  ConnectionCapabilities caps;
};

struct CallUnderWay {
  const CallTags* tags = nullptr;  // null: untracked traffic, every frame carries untrackedTag
  uint32_t untrackedTag = 0;
  LazyDeadline deadline;
  const CallArgs* op = nullptr;  // null: traffic outside any call
  bool singleCopyHint = false;   // PeerIO::postingTogether() in this call
  size_t stripeWidth = 0;        // CommIO::setStripeWidth (0: each pair's default)
  std::vector<ActiveConnection> active;
  // Where a wait is recorded (null: nowhere): set by the call runner for each call, kept across begin() (a call's
  // point-to-point part begins its own traffic).
  FlightRecorder* flight = nullptr;
  uint64_t flightRecord = 0;

  // A new call (tags null: untracked traffic with `untracked` on every frame): hints and connections start over.
  void start(const CallTags* callTags, uint32_t untracked, LazyDeadline callDeadline, const CallArgs* call) {
    tags = callTags;
    untrackedTag = untracked;
    deadline = callDeadline;
    op = call;
    singleCopyHint = false;
    stripeWidth = 0;
    active.clear();
  }
  uint32_t sendTag(int peer) const { return tags != nullptr ? tags->sendTag(peer) : untrackedTag; }
  uint32_t recvTag(int peer) const { return tags != nullptr ? tags->recvTag(peer) : untrackedTag; }
  // "allreduce #12 (count 1000, float32, sum)", or "a call": built only for messages.
  std::string name() const;
};

}  // namespace chorus
