// One collective call as the algorithms see it: what, on which buffers, how much.
#pragma once

#include <cstddef>
#include <cstdint>

#include "chorus/chorus.h"

namespace chorus {

enum class Collective { kAllReduce, kBroadcast, kReduce, kAllGather, kReduceScatter };
// Every collective, in the order above.
inline constexpr Collective kAllCollectives[] = {Collective::kAllReduce, Collective::kBroadcast, Collective::kReduce,
                                                Collective::kAllGather, Collective::kReduceScatter};

// "allreduce", "broadcast", ... (the names chorus-perf and CHORUS_ALGO use).
const char* collectiveName(Collective c);

struct Op {
  Collective collective;
  const void* send;
  void* recv;
  // Elements per rank as the C API counts them: allgather's sendcount, reduce-scatter's recvcount.
  size_t count;
  chorusDataType_t type;
  chorusRedOp_t op;
  int root;  // -1 when the collective has none
  uint64_t seq;  // this call's sequence number on its communicator
};

}  // namespace chorus
