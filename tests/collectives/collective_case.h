// One collective call of the correctness suite: what to call, and how to lay out its buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "chorus/chorus.h"

namespace chorus::test {

// kSendRecv: in one group, each rank sends to rank + 1 and receives from rank - 1 (a world of one sends to itself).
enum class CollectiveKind {
  kAllReduce,
  kBroadcast,
  kReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kAllToAllv,
  kGather,
  kScatter,
  kSendRecv,
};

// Whether the kind reduces with an op, and whether it has a root.
bool kindReduces(CollectiveKind kind);
bool kindHasRoot(CollectiveKind kind);

struct CollectiveCase {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  chorusDataType_t type = chorusFloat32;
  chorusRedOp_t op = chorusSum;  // ignored by broadcast and allgather
  size_t count = 0;              // elements per rank (per block) as the C API counts them; alltoallv: the most
  int root = 0;                  // broadcast and reduce only
  bool inPlace = false;
  uint32_t salt = 0;  // varies the inputs from one call to the next
  // Pass NULL for the buffers the call must not touch on this rank (non-root recv for reduce, non-root send for
  // broadcast, every buffer when count is 0); otherwise pass guarded buffers and check they stay untouched.
  bool nullUnused = false;
  size_t misalign = 0;  // bytes added to every buffer's address (0: 64-byte aligned)
};

// "allreduce(float16, sum, count 1000, out-of-place, salt 3)".
std::string describeCase(const CollectiveCase& c);

// "allreduce", "broadcast", ...
const char* kindName(CollectiveKind kind);

struct CaseOutcome {
  bool callFailed = false;  // the call itself returned an error: the communicator is no longer usable
  std::string problem;      // "" when the call succeeded and every checked byte was right
};

// Makes the call on this rank (every rank of comm must run the same case), then checks every output element
// against the scalar reference, that inputs of out-of-place calls are unchanged, and that no byte outside the
// written range (guard bytes, unused buffers) changed.
CaseOutcome runCase(chorusComm_t comm, int rank, int nranks, const CollectiveCase& c);

}  // namespace chorus::test
