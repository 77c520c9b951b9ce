// One call as the algorithms see it (CallArgs): which collective, on which buffers, how much, reduced how.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "chorus/chorus.h"
#include "core/datatype.h"

namespace chorus {

// What a call does. The collectives (every kind before kSend) involve every rank and run an algorithm of the
// registry; send and receive involve one pair and run no algorithm.
enum class Collective {
  kAllReduce,
  kBroadcast,
  kReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kAllToAllv,
  kGather,
  kScatter,
  kBarrier,
  kSend,
  kRecv,
};
// Every collective (the kinds with algorithms), in the order above.
inline constexpr Collective kAllCollectives[] = {
    Collective::kAllReduce, Collective::kBroadcast, Collective::kReduce,  Collective::kAllGather,
    Collective::kReduceScatter, Collective::kAllToAll, Collective::kAllToAllv, Collective::kGather,
    Collective::kScatter,   Collective::kBarrier};

inline bool isPointToPoint(Collective c) { return c == Collective::kSend || c == Collective::kRecv; }
// Whether the call combines values with a reduction op (the others ignore CallArgs::reduction).
inline bool reducesValues(Collective c) {
  return c == Collective::kAllReduce || c == Collective::kReduce || c == Collective::kReduceScatter;
}

// "allreduce", "broadcast", ... (the names chorus-perf and CHORUS_ALGO use).
const char* collectiveName(Collective c);

// CallArgs::peer of a receive from whichever peer's message comes first (MPI_ANY_SOURCE).
inline constexpr int kAnyPeer = -2;

// Built with designated initializers (CallArgs{.collective = ..., .count = ...}); a field left out takes its default.
struct CallArgs {
  Collective collective = Collective::kAllReduce;
  const void* send = nullptr;
  void* recv = nullptr;
  // Elements per rank as the C API counts them: allgather's sendcount, reduce-scatter's recvcount, alltoall's
  // elements per block, gather's and scatter's elements per rank.
  size_t count = 0;
  chorusDataType_t type = chorusFloat32;
  chorusRedOp_t reduction = chorusSum;  // reductions only
  int root = -1;                 // -1 when the collective has none
  int peer = -1;                 // point-to-point calls: the other rank (kAnyPeer: a receive from any); -1 otherwise
  int* source = nullptr;         // a receive from any peer: where the sender's rank is written when it is known
  // Alltoallv only: size() element counts and displacements (in elements) per peer, as MPI_Alltoallv's.
  const size_t* sendCounts = nullptr;
  const size_t* sendDispls = nullptr;
  const size_t* recvCounts = nullptr;
  const size_t* recvDispls = nullptr;
  // Owns what the pointers above point at when the call outlives its caller's arrays (a group's calls, device
  // calls): a copy made at the call. Null otherwise.
  std::shared_ptr<const void> keepAlive = nullptr;
  uint64_t seq = 0;              // this call's sequence number on its communicator (set when it runs)
};

// count elements of the call's type, in bytes: one rank's block, or a point-to-point message.
inline size_t countBytes(const CallArgs& op) { return op.count * typeSize(op.type); }

}  // namespace chorus
