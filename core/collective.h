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

// Built with designated initializers (Op{.collective = ..., .count = ...}); a field left out takes its default.
struct Op {
  Collective collective = Collective::kAllReduce;
  const void* send = nullptr;
  void* recv = nullptr;
  // Elements per rank as the C API counts them: allgather's sendcount, reduce-scatter's recvcount.
  size_t count = 0;
  chorusDataType_t type = chorusFloat32;
  chorusRedOp_t op = chorusSum;  // reductions only
  int root = -1;                 // -1 when the collective has none
  int peer = -1;                 // point-to-point calls: the other rank; -1 otherwise
  uint64_t seq = 0;              // this call's sequence number on its communicator (set when it runs)
};

}  // namespace chorus
