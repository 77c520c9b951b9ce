#include "src/comm/comm_family.h"

#include <algorithm>
#include <charconv>

#include "core/error.h"
#include "core/params.h"

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

int rankAmong(const std::vector<int>& members, int rank) {
  return static_cast<int>(std::find(members.begin(), members.end(), rank) - members.begin());
}

}  // namespace

CommFamily::CommFamily(const LaunchSpec& spec) : spec_(spec), identity_(spec.jobId + "/" + spec.keyPrefix) {
  spec_.serveStore = false;
}

LaunchSpec CommFamily::splitChild(const std::vector<int>& members, int color, uint64_t split) const {
  LaunchSpec child = spec_;
  child.nranks = static_cast<int>(members.size());
  child.rank = rankAmong(members, spec_.rank);
  child.keyPrefix = spec_.keyPrefix + "split" + std::to_string(split) + ".color" + std::to_string(color) + "/";
  child.source = spec_.source + ", split";
  return child;
}

ShrinkRequest CommFamily::shrinkRequest(const std::vector<int>* excluded, const std::string& who) {
  ShrinkRequest request;
  request.commPrefix = spec_.keyPrefix;
  request.shrinkPrefix = spec_.keyPrefix + "shrink" + std::to_string(shrinks_++) + "/";
  request.rank = spec_.rank;
  request.size = spec_.nranks;
  request.explicitExclusion = excluded != nullptr;
  if (excluded) request.excluded = *excluded;
  request.who = who;
  return request;
}

LaunchSpec CommFamily::shrunkChild(const ShrinkRequest& request, const std::vector<int>& members) const {
  LaunchSpec child = spec_;
  child.nranks = static_cast<int>(members.size());
  child.rank = rankAmong(members, spec_.rank);
  child.keyPrefix = request.shrinkPrefix + "comm/";
  child.source = spec_.source + ", shrink";
  return child;
}

chorusUniqueId CommFamily::growId() const {
  // The id carries the secret where the ranks' own came with their id; one from CHORUS_SECRET every process has.
  const std::string carried = spec_.secret == params::secret() ? std::string() : spec_.secret;
  return encodeUniqueId(spec_.storeHost, spec_.storePort, spec_.jobId,
                        kGrowTag + randomHex(6) + "-" + std::to_string(spec_.nranks), carried);
}

LaunchSpec CommFamily::grown(const chorusUniqueId& agreed, int newRanks, const std::string& commName) const {
  const int size = spec_.nranks;
  LaunchSpec spec = decodeUniqueId(agreed, spec_.rank, size + newRanks);
  if (grownFromSize(spec) != size) {
    throwInvalidArgument(withCommName(commName, errorContext(spec_.rank, "chorusCommGrow") +
                                                    ": rank 0's id was made for a communicator of " +
                                                    std::to_string(grownFromSize(spec)) + " ranks, not this one of " +
                                                    std::to_string(size)));
  }
  spec.source = spec_.source + ", grow";
  return spec;
}

LaunchSpec CommFamily::joiner(const chorusUniqueId& id, int newRanks, int rank) {
  LaunchSpec probe = decodeUniqueId(id, 0, 1);
  const int oldSize = grownFromSize(probe);
  if (rank < oldSize || rank >= oldSize + newRanks) {
    throwInvalidArgument("chorusCommGrow: a new rank's number must be in [" + std::to_string(oldSize) + ", " +
                         std::to_string(oldSize + newRanks) + "), not " + std::to_string(rank));
  }
  LaunchSpec spec = decodeUniqueId(id, rank, oldSize + newRanks);
  spec.source = "grow id";
  return spec;
}

bool CommFamily::canShareConnections(const CommConfig& p, const CommConfig& c) {
  return p.splitShare && c.splitShare && c.transports == p.transports && c.socketsPerPeer == p.socketsPerPeer &&
         c.shmBufferBytes == p.shmBufferBytes && c.shmCma == p.shmCma && c.socketIfname == p.socketIfname &&
         c.socketFamily == p.socketFamily && c.ibEmulation == p.ibEmulation && c.ibHca == p.ibHca &&
         c.ibGidIndex == p.ibGidIndex && c.ibTimeout == p.ibTimeout && c.ibRetryCnt == p.ibRetryCnt &&
         c.ibDisable == p.ibDisable && c.ibQpsPerPeer == p.ibQpsPerPeer && c.encrypt == p.encrypt;
}

}  // namespace chorus
