#include "src/api/argument_checks.h"

#include <algorithm>
#include <cstdint>

#include "core/datatype.h"
#include "core/error.h"
#include "src/api/comm_handle.h"

namespace chorus::api::checks {

// "[comm NAME: ]rank R, call: ", the start of every message about a call on a communicator (built only when there is
// one).
std::string whereOf(chorusComm_t comm, const char* call) {
  return comm->impl->named(errorContext(comm->impl->rank(), call) + ": ");
}

bool overlaps(const void* a, size_t an, const void* b, size_t bn) {
  auto pa = reinterpret_cast<uintptr_t>(a), pb = reinterpret_cast<uintptr_t>(b);
  return an > 0 && bn > 0 && pa < pb + bn && pb < pa + an;
}

// The checks every collective shares; returns "" when all is well, else what is wrong.
std::string checkCommon(const char* call, chorusComm_t comm, chorusDataType_t type, int op, bool hasOp) {
  if (!comm || !comm->impl) return std::string(call) + ": comm is NULL";
  if (!chorus::validType(type)) return whereOf(comm, call) + "datatype " + std::to_string(type) + " is out of range";
  if (hasOp && !chorus::validOp(op)) return whereOf(comm, call) + "op " + std::to_string(op) + " is out of range";
  if (hasOp && !chorus::opSupportsType(op, type)) {
    return whereOf(comm, call) + "op " + chorus::opName(static_cast<chorusRedOp_t>(op)) + " takes integer types only, not " +
           chorus::typeName(type);
  }
  return {};
}

// count * size * factor without overflow.
bool bytesFor(size_t count, chorusDataType_t type, size_t factor, size_t* out) {
  // Multiplied, not divided: a division costs a small call tens of cycles.
  size_t elements = 0, bytes = 0;
  if (__builtin_mul_overflow(count, factor, &elements) ||
      __builtin_mul_overflow(elements, chorus::typeSize(type), &bytes)) {
    return false;
  }
  *out = bytes;
  return true;
}

// Broadcast and reduce: root in range, no overflow, the buffers each rank needs present, and on the root send and
// recv either equal or disjoint. Broadcast needs sendbuff only on the root; reduce needs recvbuff only there.
std::string checkRooted(const char* call, chorusComm_t comm, int root, size_t count, chorusDataType_t type,
                        const void* sendbuff, const void* recvbuff, bool sendOnlyOnRoot) {
  const int n = comm->impl->size();
  if (root < 0 || root >= n) {
    return whereOf(comm, call) + "root " + std::to_string(root) + " is outside [0, " + std::to_string(n) + ")";
  }
  size_t bytes = 0;
  if (!bytesFor(count, type, 1, &bytes)) return whereOf(comm, call) + "count overflows";
  const bool isRoot = comm->impl->rank() == root;
  const void* everywhere = sendOnlyOnRoot ? recvbuff : sendbuff;
  const void* onRoot = sendOnlyOnRoot ? sendbuff : recvbuff;
  if (count > 0 && (!everywhere || (isRoot && !onRoot))) {
    std::string which = !everywhere ? (sendOnlyOnRoot ? "recvbuff" : "sendbuff")
                                    : (sendOnlyOnRoot ? "sendbuff (on the root)" : "recvbuff (on the root)");
    return whereOf(comm, call) + which + " is NULL with count " + std::to_string(count);
  }
  if (isRoot && sendbuff != recvbuff && overlaps(sendbuff, bytes, recvbuff, bytes)) {
    return whereOf(comm, call) + "sendbuff and recvbuff overlap without being equal";
  }
  return "";
}

// Allgather and reduce-scatter: one buffer holds nranks blocks of `count` elements (allgather's recvbuff,
// reduce-scatter's sendbuff), the other one block. In place only at NCCL's layout: the block at rank * count.
std::string checkBlocks(const char* call, chorusComm_t comm, size_t count, const char* countName,
                        chorusDataType_t type, const void* sendbuff, const void* recvbuff, bool gather) {
  size_t block = 0, total = 0;
  if (!bytesFor(count, type, 1, &block) || !bytesFor(count, type, static_cast<size_t>(comm->impl->size()), &total)) {
    return whereOf(comm, call) + countName + " overflows";
  }
  if (count > 0 && (!sendbuff || !recvbuff)) {
    return whereOf(comm, call) + (!sendbuff ? "sendbuff" : "recvbuff") + " is NULL with " + countName + " " +
           std::to_string(count);
  }
  const void* one = gather ? sendbuff : recvbuff;
  const void* all = gather ? recvbuff : sendbuff;
  const char* own = static_cast<const char*>(all) + static_cast<size_t>(comm->impl->rank()) * block;
  if (one != own && overlaps(one, block, all, total)) {
    return whereOf(comm, call) + (gather ? "sendbuff overlaps recvbuff but is not recvbuff + rank * sendcount"
                                         : "recvbuff overlaps sendbuff but is not sendbuff + rank * recvcount");
  }
  return "";
}

// Gather and scatter: root in range, no overflow, each rank's block present, the root's whole buffer present, and
// on the root in place only at MPI's layout (the block at root * count). `gather`: the whole buffer is recvbuff.
std::string checkRootedBlocks(const char* call, chorusComm_t comm, int root, size_t count, chorusDataType_t type,
                              const void* sendbuff, const void* recvbuff, bool gather) {
  const int n = comm->impl->size();
  if (root < 0 || root >= n) {
    return whereOf(comm, call) + "root " + std::to_string(root) + " is outside [0, " + std::to_string(n) + ")";
  }
  size_t block = 0, total = 0;
  if (!bytesFor(count, type, 1, &block) || !bytesFor(count, type, static_cast<size_t>(n), &total)) {
    return whereOf(comm, call) + "count overflows";
  }
  const bool isRoot = comm->impl->rank() == root;
  const void* one = gather ? sendbuff : recvbuff;
  const void* all = gather ? recvbuff : sendbuff;
  if (count > 0 && !one) return whereOf(comm, call) + (gather ? "sendbuff" : "recvbuff") + " is NULL with count " + std::to_string(count);
  if (count > 0 && isRoot && !all) {
    return whereOf(comm, call) + (gather ? "recvbuff" : "sendbuff") + " is NULL on the root with count " +
           std::to_string(count);
  }
  // (Only the root has `all` for certain: an offset from a null pointer is undefined.)
  if (isRoot && one != static_cast<const char*>(all) + static_cast<size_t>(root) * block &&
      overlaps(one, block, all, total)) {
    return whereOf(comm, call) + (gather ? "sendbuff overlaps recvbuff but is not recvbuff + root * count"
                                         : "recvbuff overlaps sendbuff but is not sendbuff + root * count");
  }
  return "";
}

// Alltoallv's counts and displacements on one side: no element's byte offset overflows; *extent gets the bytes
// from the buffer's start to the end of its last non-empty block.
std::string checkVectors(const char* call, chorusComm_t comm, chorusDataType_t type, const size_t counts[],
                         const size_t displs[], const char* side, size_t* extent) {
  const size_t es = chorus::typeSize(type);
  *extent = 0;
  for (int p = 0; p < comm->impl->size(); ++p) {
    if (counts[p] == 0) continue;
    if (displs[p] > SIZE_MAX / es - counts[p]) {
      return whereOf(comm, call) + side + "counts[" + std::to_string(p) + "] + " + side[0] + "displs[" +
             std::to_string(p) + "] overflows";
    }
    *extent = std::max(*extent, (displs[p] + counts[p]) * es);
  }
  return "";
}

}  // namespace chorus::api::checks
