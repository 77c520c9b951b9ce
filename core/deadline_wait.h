// The pieces every poll-until-deadline loop needs: the deadline check that throws chorusTimeout, the wait (poll on
// descriptors, a plain sleep, or a backoff where nothing can be polled), and the rank list timeouts name.
#pragma once

#include <poll.h>

#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "core/deadline.h"
#include "core/error.h"

namespace chorus {

// Throws Error(chorusTimeout, message()) once `deadline` has passed. The message is built only then: a loop checks
// every round, and most rounds end well before the deadline.
template <typename Message>
void throwIfExpired(const Deadline& deadline, Message&& message) {
  if (deadline.expired()) [[unlikely]] throw Error(chorusTimeout, std::forward<Message>(message)());
}

// Sleeps in poll(2) until one of `fds` is ready, or for capMs (>= 1), or until the deadline, whichever comes first;
// at least 1 ms, so that a loop sleeps through the deadline's last fraction of a millisecond rather than spin.
// Returns how many fds have revents (0: none, also when a signal cut the sleep short). Any other poll failure
// throws chorusSystemError "<context>: poll failed: <the system's text>".
int pollWithin(std::span<pollfd> fds, const Deadline& deadline, int capMs, std::string_view context);

// Sleeps capMs or until the deadline, whichever comes first: the pause between retries of a refused connect.
void sleepWithin(const Deadline& deadline, int capMs);

// For a wait with no descriptor to sleep on: throws as throwIfExpired does, otherwise lets `backoff` pause (any
// type with pause(): device/poll_backoff.h's PollBackoff, a store poller's growing period).
template <typename Backoff, typename Message>
void pauseWithin(const Deadline& deadline, Backoff& backoff, Message&& message) {
  throwIfExpired(deadline, std::forward<Message>(message));
  backoff.pause();
}

// Ranks as messages list them: "1, 2, 5" ("" for none).
std::string formatRankList(std::span<const int> ranks);

}  // namespace chorus
