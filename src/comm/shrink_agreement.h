// Who goes on after chorusCommShrink: the ranks that call it agree, through the store, on one member list.
//
// Every rank's card stays in the store while its process lives (set with SET_OWNED at init: the store drops it when
// the rank's store connection closes, which the kernel does when the process dies). A shrink is then ULFM's
// agreement made simple by a store that outlives the ranks (chorusrun's, or any process that is not a rank):
//  1. each caller sets `<shrink>/joined/<rank>`;
//  2. it watches, in one atomic CHECK_EACH, every rank's joined key and card;
//  3. once every rank has joined or is gone, it proposes "the ranks that joined" with COMPARE_SET on
//     `<shrink>/decision`: the first proposal stored is the decision, and every caller reads that one.
// So two survivors that saw a death at different times never split the job: a rank that joins after the decision
// finds itself left out and says so. A rank's own failure detection (a hang-up) is not needed: the store's view is
// the same for everyone. With an explicit exclusion list the members are known; the callers check that they all
// passed the same list, and that no member is gone.
#pragma once

#include <string>
#include <vector>

#include "core/bootstrap/store.h"
#include "core/deadline.h"

namespace chorus {

// The key under which rank `rank` of the communicator with key prefix `prefix` publishes its card (and which stays
// while its process lives).
std::string cardKey(const std::string& prefix, int rank);

struct ShrinkRequest {
  std::string commPrefix;    // the parent communicator's key prefix (where its cards are)
  std::string shrinkPrefix;  // this shrink's keys (the parent's prefix + the shrink's number)
  int rank = 0;              // this rank in the parent
  int size = 0;              // the parent's size
  bool explicitExclusion = false;
  std::vector<int> excluded;  // sorted, without repeats (explicitExclusion only)
  std::string who;            // "comm NAME: rank R" for messages
};

// The parent ranks that form the new communicator, in parent order (this rank among them). Throws chorus::Error:
// chorusInvalidUsage when this rank is excluded or the callers' lists disagree, chorusRemoteError (kPeerLost) when
// a member that was not excluded is gone or this rank was left out by the others, chorusTimeout when live ranks do
// not call within the deadline (naming them).
std::vector<int> agreeOnSurvivors(StoreClient& store, const ShrinkRequest& request, Deadline deadline);

// "0,2,3" and back (the decision's value); decode throws chorusRemoteError on a malformed list.
std::string encodeRankList(const std::vector<int>& ranks);
std::vector<int> decodeRankList(const std::string& text, int size);

}  // namespace chorus
