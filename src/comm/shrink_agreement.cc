#include "src/comm/shrink_agreement.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <thread>

#include "core/deadline_wait.h"
#include "core/error.h"

namespace chorus {
namespace {


// Where rank r says it called this shrink.
std::string joinedKey(const ShrinkRequest& req, int r) {
  return req.shrinkPrefix + "joined/" + std::to_string(r);
}

// Polls the store: each look is a round trip to the server, so the period grows from 0.2 ms to 5 ms (a death is
// seen within milliseconds either way; a slow caller costs the store a few hundred requests a second at most).
class StorePolling {
 public:
  void pause() {
    std::this_thread::sleep_for(period_);
    period_ = std::min(period_ * 2, std::chrono::microseconds(5000));
  }
  // Pauses, or throws naming the ranks still `waiting` once the deadline has passed.
  void pauseWithin(const Deadline& deadline, const ShrinkRequest& req, const std::vector<int>& waiting) {
    chorus::pauseWithin(deadline, *this, [&] {
      return req.who + ": chorusCommShrink: ranks " + formatRankList(waiting) +
             " are alive but did not call chorusCommShrink within the timeout";
    });
  }

 private:
  std::chrono::microseconds period_{200};
};

// Explicit exclusion: the members are known; every member must call with the same list, and none may be gone.
std::vector<int> agreeOnList(StoreClient& store, const ShrinkRequest& req, Deadline deadline) {
  std::vector<int> members;
  for (int r = 0; r < req.size; ++r) {
    if (!std::binary_search(req.excluded.begin(), req.excluded.end(), r)) members.push_back(r);
  }
  const std::string mine = "x:" + encodeRankList(req.excluded);
  store.set(joinedKey(req, req.rank), bytesOf(mine), deadline);
  std::vector<std::string> keys;
  for (int r : members) keys.push_back(joinedKey(req, r));
  for (int r : members) keys.push_back(cardKey(req.commPrefix, r));
  StorePolling polling;
  for (;;) {
    const std::vector<bool> exists = store.checkEach(keys, deadline);
    std::vector<int> waiting;
    for (size_t i = 0; i < members.size(); ++i) {
      if (exists[i]) continue;
      if (!exists[members.size() + i]) {
        throw Error(chorusRemoteError,
                    req.who + ": chorusCommShrink: rank " + std::to_string(members[i]) +
                        " is gone (its process ended) but is not in excludeRanks; shrink again with it excluded, "
                        "or with excludeRanks NULL and CHORUS_SHRINK_ABORT to leave out every lost rank",
                    Failure::kPeerLost, members[i]);
      }
      waiting.push_back(members[i]);
    }
    if (waiting.empty()) break;
    polling.pauseWithin(deadline, req, waiting);
  }
  for (int r : members) {
    const std::string theirs = textOf(store.get(joinedKey(req, r), deadline));
    if (theirs != mine) {
      throw Error(chorusInvalidUsage, req.who + ": chorusCommShrink: rank " + std::to_string(r) + " excludes ranks {" +
                                          theirs.substr(std::min<size_t>(2, theirs.size())) + "}, this rank {" +
                                          mine.substr(2) + "}: every caller must pass the same list");
    }
  }
  return members;
}

// No list: the ranks that joined before everyone else was gone, as the first proposal stored says.
std::vector<int> agreeOnLost(StoreClient& store, const ShrinkRequest& req, Deadline deadline) {
  store.set(joinedKey(req, req.rank), bytesOf("a"), deadline);
  const std::string decisionKey = req.shrinkPrefix + "decision";
  // One atomic look at every rank's joined key and card, and at the decision.
  std::vector<std::string> keys;
  for (int r = 0; r < req.size; ++r) keys.push_back(joinedKey(req, r));
  for (int r = 0; r < req.size; ++r) keys.push_back(cardKey(req.commPrefix, r));
  keys.push_back(decisionKey);
  StorePolling polling;
  std::string decision;
  for (;;) {
    const std::vector<bool> exists = store.checkEach(keys, deadline);
    if (exists.back()) {
      decision = textOf(store.get(decisionKey, deadline));
      break;
    }
    std::vector<int> joined, waiting;
    for (int r = 0; r < req.size; ++r) {
      if (exists[static_cast<size_t>(r)]) {
        joined.push_back(r);
      } else if (exists[static_cast<size_t>(req.size + r)]) {
        waiting.push_back(r);
      }
    }
    if (waiting.empty()) {
      decision = textOf(store.compareSet(decisionKey, {}, bytesOf(encodeRankList(joined)), deadline));
      break;
    }
    polling.pauseWithin(deadline, req, waiting);
  }
  std::vector<int> members = decodeRankList(decision, req.size);
  if (!std::binary_search(members.begin(), members.end(), req.rank)) {
    throw Error(chorusRemoteError,
                req.who + ": chorusCommShrink: the other ranks had agreed on the survivors {" + decision +
                    "} before this rank called; it is not one of them (it called after its peers found it gone)",
                Failure::kPeerLost, req.rank);
  }
  return members;
}

}  // namespace

std::string cardKey(const std::string& prefix, int rank) { return prefix + "card/" + std::to_string(rank); }

std::string encodeRankList(const std::vector<int>& ranks) {
  std::string out;
  for (int r : ranks) {
    if (!out.empty()) out += ',';
    out += std::to_string(r);
  }
  return out;
}

std::vector<int> decodeRankList(const std::string& text, int size) {
  std::vector<int> ranks;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    int r = -1;
    auto [next, ec] = std::from_chars(p, end, r);
    const bool last = next == end;
    if (ec != std::errc() || r < 0 || r >= size || (!ranks.empty() && r <= ranks.back()) ||
        (!last && (*next != ',' || next + 1 == end))) {
      throw Error(chorusRemoteError, "chorusCommShrink: malformed survivor list '" + text + "' in the store");
    }
    ranks.push_back(r);
    p = last ? end : next + 1;
  }
  return ranks;
}

std::vector<int> agreeOnSurvivors(StoreClient& store, const ShrinkRequest& request, Deadline deadline) {
  if (request.explicitExclusion) {
    if (std::binary_search(request.excluded.begin(), request.excluded.end(), request.rank)) {
      throw Error(chorusInvalidUsage, request.who +
                                          ": chorusCommShrink: this rank is in excludeRanks (excluded "
                                          "ranks do not call chorusCommShrink)");
    }
    return agreeOnList(store, request, deadline);
  }
  return agreeOnLost(store, request, deadline);
}

}  // namespace chorus
