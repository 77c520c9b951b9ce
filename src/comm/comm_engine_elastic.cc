// The elastic side of a communicator: shrink (chorusCommShrink: agree on who goes on, then make their communicator)
// and grow (chorusCommGrow: add new processes, the old ranks first).
#include <algorithm>
#include <charconv>

#include "core/bootstrap/launch_spec.h"
#include "core/error.h"
#include "core/logging.h"
#include "core/params.h"
#include "src/comm/comm_engine.h"
#include "src/comm/shrink_agreement.h"

namespace chorus {
namespace {

// A grow id's comm part: "grow-<random>-<size of the communicator that grows>"; joiners read the size back.
constexpr char kGrowTag[] = "grow-";

int grownFromSize(const LaunchSpec& spec) {
  // decodeUniqueId made the key prefix "u" + comm part + "/".
  const std::string& p = spec.keyPrefix;
  const size_t dash = p.rfind('-');
  int size = 0;
  if (p.rfind(std::string("u") + kGrowTag, 0) != 0 || dash == std::string::npos ||
      std::from_chars(p.data() + dash + 1, p.data() + p.size() - 1, size).ec != std::errc() || size < 1) {
    throwInvalidArgument("chorusCommGrow: the id was not made by chorusCommGetUniqueId");
  }
  return size;
}

}  // namespace

std::unique_ptr<CommEngine> CommEngine::shrink(const std::vector<int>* excluded, bool abortFirst, CommConfig config) {
  CommLogScope logScope(config_.commName);
  const Deadline deadline = Deadline::after(config.timeoutSeconds);
  // Healthy: the calls queued before this one finish first. Failed (or said to be): they fail at once.
  if (abortFirst) requestAbort();
  waitIdle();
  const bool healthy = !abortFirst && failures_.healthy();
  ShrinkRequest request;
  request.commPrefix = spec_.keyPrefix;
  request.shrinkPrefix = spec_.keyPrefix + "shrink" + std::to_string(shrinks_++) + "/";
  request.rank = rank_;
  request.size = size_;
  request.explicitExclusion = excluded != nullptr;
  if (excluded) request.excluded = *excluded;
  request.who = named(errorContext(rank_));
  const std::vector<int> members = agreeOnSurvivors(*store_, request, deadline);
  LaunchSpec child = spec_;
  child.nranks = static_cast<int>(members.size());
  child.rank = static_cast<int>(std::find(members.begin(), members.end(), rank_) - members.begin());
  child.keyPrefix = request.shrinkPrefix + "comm/";
  child.source = spec_.source + ", shrink";
  CHORUS_INFO(rank_, "shrink: " << members.size() << " of " << size_ << " ranks go on (" << encodeRankList(members)
                                << "); this rank is " << child.rank << " of them");
  if (healthy && canShareWith(config)) {
    return std::unique_ptr<CommEngine>(new CommEngine(SharingParent{}, *this, members, child, std::move(config)));
  }
  // After a failure the parent's connections are out of step (a call was cut short on them): the survivors
  // connect anew, through the same store.
  return std::make_unique<CommEngine>(child, std::move(config), storeServer_);
}

chorusUniqueId CommEngine::growId() const {
  // The id carries the secret where the ranks' own came with their id; one from CHORUS_SECRET every process has.
  const std::string carried = spec_.secret == params::secret() ? std::string() : spec_.secret;
  return encodeUniqueId(spec_.storeHost, spec_.storePort, spec_.jobId,
                        kGrowTag + randomHex(6) + "-" + std::to_string(size_), carried);
}

std::unique_ptr<CommEngine> CommEngine::grow(const chorusUniqueId* id, int newRanks, CommConfig config) {
  chorusUniqueId agreed{};
  if (rank_ == 0) agreed = *id;
  run(Op{.collective = Collective::kBroadcast,
         .send = &agreed,
         .recv = &agreed,
         .count = sizeof(agreed),
         .type = chorusUint8,
         .root = 0});
  LaunchSpec spec = decodeUniqueId(agreed, rank_, size_ + newRanks);
  if (grownFromSize(spec) != size_) {
    throwInvalidArgument(named(errorContext(rank_, "chorusCommGrow") +
                               ": rank 0's id was made for a "
                               "communicator of " +
                               std::to_string(grownFromSize(spec)) + " ranks, not this one of " +
                               std::to_string(size_)));
  }
  spec.source = spec_.source + ", grow";
  CHORUS_INFO(rank_, "grow: " << size_ << " ranks and " << newRanks << " new ones");
  return std::make_unique<CommEngine>(spec, std::move(config), storeServer_);
}

std::unique_ptr<CommEngine> CommEngine::joinGrown(const chorusUniqueId& id, int newRanks, int rank, CommConfig config) {
  LaunchSpec probe = decodeUniqueId(id, 0, 1);
  const int oldSize = grownFromSize(probe);
  if (rank < oldSize || rank >= oldSize + newRanks) {
    throwInvalidArgument("chorusCommGrow: a new rank's number must be in [" + std::to_string(oldSize) + ", " +
                         std::to_string(oldSize + newRanks) + "), not " + std::to_string(rank));
  }
  LaunchSpec spec = decodeUniqueId(id, rank, oldSize + newRanks);
  spec.source = "grow id";
  return std::make_unique<CommEngine>(spec, std::move(config));
}

}  // namespace chorus
