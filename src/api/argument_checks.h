// The argument checks the C ABI's entry points share: each returns "" when all is well, else what is wrong, in a
// message that starts with where (communicator name, rank, call).
#pragma once

#include <cstddef>
#include <string>

#include "chorus/chorus.h"

namespace chorus::api::checks {

// "[comm NAME: ]rank R, call: ", the start of every message about a call on a communicator (built only when there is
// one).
std::string whereOf(chorusComm_t comm, const char* call);

// Whether two byte ranges share a byte (empty ones never do).
bool overlaps(const void* a, size_t an, const void* b, size_t bn);

// The checks every collective shares; returns "" when all is well, else what is wrong.
std::string checkCommon(const char* call, chorusComm_t comm, chorusDataType_t type, int op, bool hasOp);

// count * size * factor without overflow.
bool bytesFor(size_t count, chorusDataType_t type, size_t factor, size_t* out);

// Broadcast and reduce: root in range, no overflow, the buffers each rank needs present, and on the root send and
// recv either equal or disjoint. Broadcast needs sendbuff only on the root; reduce needs recvbuff only there.
std::string checkRooted(const char* call, chorusComm_t comm, int root, size_t count, chorusDataType_t type,
                        const void* sendbuff, const void* recvbuff, bool sendOnlyOnRoot);

// Allgather and reduce-scatter: one buffer holds nranks blocks of `count` elements (allgather's recvbuff,
// reduce-scatter's sendbuff), the other one block. In place only at NCCL's layout: the block at rank * count.
std::string checkBlocks(const char* call, chorusComm_t comm, size_t count, const char* countName,
                        chorusDataType_t type, const void* sendbuff, const void* recvbuff, bool gather);

// Gather and scatter: root in range, no overflow, each rank's block present, the root's whole buffer present, and
// on the root in place only at MPI's layout (the block at root * count). `gather`: the whole buffer is recvbuff.
std::string checkRootedBlocks(const char* call, chorusComm_t comm, int root, size_t count, chorusDataType_t type,
                              const void* sendbuff, const void* recvbuff, bool gather);

// Alltoallv's counts and displacements on one side: no element's byte offset overflows; *extent gets the bytes
// from the buffer's start to the end of its last non-empty block.
std::string checkVectors(const char* call, chorusComm_t comm, chorusDataType_t type, const size_t counts[],
                         const size_t displs[], const char* side, size_t* extent);

}  // namespace chorus::api::checks
