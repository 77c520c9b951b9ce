#include "src/comm/mismatch_report.h"

#include <cstdlib>
#include <map>
#include <optional>
#include <vector>

#include "core/error.h"
#include "core/logging.h"
#include "device/poll_backoff.h"

namespace chorus {

namespace {

constexpr const char* kSawMismatch = "saw a mismatch in";

// What a rank's first failure was, in the words of an error ("rank 0 timed out in allreduce #3 (...)"); empty for
// a rank that only heard that a peer gave up (that is not a cause).
std::string causeText(Failure failure) {
  switch (failure) {
    case Failure::kRemoteError:
      return "";
    case Failure::kMismatch:
      return kSawMismatch;
    case Failure::kTimeout:
      return "timed out in";
    case Failure::kAborted:
      return "was aborted (chorusCommAbort) during";
    case Failure::kPeerLost:
      return "lost a peer in";
    default:
      return "failed in";
  }
}

struct Record {
  uint64_t seq = 0;
  std::string cause;  // causeText of its failure
  std::string call;   // the description of the call it failed in
};

// "seq\ncause\ncall", as publish writes it.
std::optional<Record> parse(const Bytes& b) {
  const std::string s(b.begin(), b.end());
  const size_t first = s.find('\n');
  const size_t second = first == std::string::npos ? std::string::npos : s.find('\n', first + 1);
  if (second == std::string::npos) return std::nullopt;
  return Record{std::strtoull(s.c_str(), nullptr, 10), s.substr(first + 1, second - first - 1), s.substr(second + 1)};
}

std::string listOf(const std::vector<int>& ranks) {
  std::string s = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s;
}

}  // namespace

MismatchReport::MismatchReport(StoreClient& store, std::string keyPrefix, int rank, int size)
    : store_(store), prefix_(std::move(keyPrefix)), rank_(rank), size_(size) {}

std::string MismatchReport::key(int rank) const { return prefix_ + "failed/" + std::to_string(rank); }

void MismatchReport::publish(uint64_t seq, Failure failure, const std::string& description, const Deadline& deadline) {
  // One key per rank: a communicator fails once. A rank that completed its side of the call (a root that only
  // sends) fails in a later one, and says so under the same key, so that no one waits for it in vain.
  const std::string mine = std::to_string(seq) + "\n" + causeText(failure) + "\n" + description;
  store_.set(key(rank_), bytesOf(mine), deadline);
}

void MismatchReport::publish(uint64_t seq, Failure failure, const std::string& description, double waitSeconds) {
  try {
    publish(seq, failure, description, Deadline::after(waitSeconds));
  } catch (const Error& storeError) {
    CHORUS_INFO(rank_, "could not publish the failed call #" << seq << ": " << storeError.what());
  }
}

Error MismatchReport::explain(const Error& e, uint64_t seq, const std::string& description, double waitSeconds) {
  const std::string what = e.what();
  // A peer that gave up may have seen a mismatch; one that vanished was lost, and waiting for its description
  // would only delay the error by the whole wait.
  const bool looksMismatched = e.failure() == Failure::kMismatch || e.failure() == Failure::kRemoteError;
  try {
    Deadline deadline = Deadline::after(waitSeconds);
    publish(seq, e.failure(), description, deadline);
    if (!looksMismatched) return e;
    // Every other rank's record, as they come (a rank in no call never writes one: the wait ends it).
    std::vector<std::optional<Record>> records(size_);
    std::vector<std::string> keys(size_);
    for (int r = 0; r < size_; ++r) keys[r] = key(r);
    // A rank that only heard a peer give up stops at the first cause that is not a mismatch (a peer timed out or
    // was aborted): there is nothing to list, and the rank that never arrived would hold it for the whole wait.
    auto rootCause = [&]() -> std::optional<int> {
      if (e.failure() != Failure::kRemoteError) return std::nullopt;
      std::optional<int> found;
      for (int r = 0; r < size_; ++r) {
        if (!records[r]) continue;
        if (records[r]->cause == kSawMismatch) return std::nullopt;  // list it
        if (!records[r]->cause.empty() && !found) found = r;
      }
      return found;
    };
    PollBackoff backoff;
    for (;;) {
      std::vector<int> pending;
      for (int r = 0; r < size_; ++r) {
        if (r != rank_ && !records[r]) pending.push_back(r);
      }
      if (pending.empty()) break;
      std::vector<std::string> pendingKeys;
      for (int r : pending) pendingKeys.push_back(keys[r]);
      try {
        const std::vector<bool> present = store_.checkEach(pendingKeys, deadline);
        for (size_t i = 0; i < pending.size(); ++i) {
          if (present[i]) records[pending[i]] = parse(store_.get(keys[pending[i]], deadline));
        }
      } catch (const Error&) {
        break;  // the wait is over (or the store is gone): list what came
      }
      if (rootCause() || deadline.expired()) break;
      backoff.pause();
    }
    if (std::optional<int> r = rootCause()) {
      return e.withMessage(what + " (rank " + std::to_string(*r) + " " + records[*r]->cause + " " +
                           records[*r]->call + ")");
    }
    // Group the ranks by what they called, in rank order; those that failed in another call apart.
    std::map<std::string, std::vector<int>> callers, elsewhere;
    std::vector<int> silent;
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) {
        callers[description].push_back(r);
      } else if (!records[r]) {
        silent.push_back(r);  // dead, not in a call, or slower than the wait
      } else if (records[r]->seq == seq) {
        callers[records[r]->call].push_back(r);
      } else {
        elsewhere[std::string(records[r]->seq < seq ? "an earlier" : "a later") + " call, " + records[r]->call]
            .push_back(r);
      }
    }
    // Calls that all read the same can still disagree where a rank that saw the mismatch is listed and the rank
    // it saw is not (it died, or it served the store and left with it, before its record was read).
    std::vector<int> seers;  // the ranks that saw a mismatch
    for (int r = 0; r < size_; ++r) {
      const bool saw = r == rank_ ? e.failure() == Failure::kMismatch : records[r] && records[r]->cause == kSawMismatch;
      if (saw) seers.push_back(r);
    }
    const bool oneCall = callers.size() + elsewhere.size() < 2;
    if (oneCall && seers.empty()) return e;
    std::string msg = errorContext(rank_, "call #" + std::to_string(seq)) + ": does not match across ranks: ";
    bool first = true;
    for (const auto& [call, ranks] : callers) {
      msg += (first ? "" : "; ") + listOf(ranks) + " called " + call;
      first = false;
    }
    for (const auto& [call, ranks] : elsewhere) msg += "; " + listOf(ranks) + " failed in " + call;
    if (!silent.empty()) msg += "; " + listOf(silent) + " did not say";
    if (oneCall) {
      // Every rank that spoke called the same: the data that did not match was left by an earlier call that every
      // rank got through (a broadcast whose root differed, whose sends the kernel buffered), or by a rank that is gone.
      msg += "; " + listOf(seers) + (seers.size() == 1 ? " was" : " were") + " sent data of another call" +
             (silent.empty() ? " (an earlier call did not match: its root, count or type differed across ranks)" : "");
    }
    return Error(chorusInvalidUsage, msg + " (first sign here: " + what + ")", Failure::kMismatch);
  } catch (const Error& storeError) {
    CHORUS_INFO(rank_, "no mismatch listing for call #" << seq << ": " << storeError.what());
    return e;
  }
}

}  // namespace chorus
