// The engine under the tree algorithms: data split in two halves, each half carried by one tree of a double binary
// tree, cut into slices that move up (reduce) and/or down (broadcast) so that while one slice is reduced or
// forwarded the next ones are already on the wire.
#pragma once

#include <cstddef>

#include "algorithms/patterns/double_binary_tree_pattern.h"
#include "algorithms/peer_io.h"

namespace chorus {

struct TreePipelineSpec {
  DoubleBinaryTree trees;
  chorusDataType_t type = chorusFloat32;
  chorusRedOp_t reduction = chorusSum;
  size_t count = 0;            // elements in all; tree t carries half t (splitEven(count, 2, t))
  const char* send = nullptr;  // this rank's contribution (up) or the root's data (down only)
  char* recv = nullptr;        // where the result lands: on every rank with `down`, on the roots otherwise
  bool up = false;             // reduce each half toward its tree's root (chorusAvg: the root divides)
  bool down = false;           // then (or only) pass each half from its tree's root down to every rank
  // Interior ranks may keep their partial sums in recv (allreduce: recv is theirs to overwrite); otherwise they
  // keep them in staging slots (reduce: a non-root's recv must stay untouched).
  bool partialsInRecv = false;
};

// Runs the spec to completion (every send and receive done). Requires io.size() >= 2 and count >= 1; every rank is
// interior in at most one tree (at most two children in all).
void runTreePipeline(PeerIO& io, const TreePipelineSpec& spec);

}  // namespace chorus
