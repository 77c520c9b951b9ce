#include "algorithms/algorithms.h"
#include "algorithms/tree_pipeline.h"
#include "core/datatype.h"

namespace chorus {

void treeBroadcast(PeerIO& io, const CallArgs& op) {
  const int n = io.size();
  const size_t es = typeSize(op.type);
  if (n == 1 || op.count == 0) {
    copyIfOutOfPlace(io, op.send, op.recv, op.count * es);
    return;
  }
  TreePipelineSpec spec;
  spec.trees = DoubleBinaryTree::rootedAt(io.rank(), n, op.root);
  spec.type = op.type;
  spec.count = op.count;
  spec.send = static_cast<const char*>(op.send);  // read on the root only (NULL elsewhere is fine)
  spec.recv = static_cast<char*>(op.recv);
  spec.down = true;
  runTreePipeline(io, spec);
}

}  // namespace chorus
