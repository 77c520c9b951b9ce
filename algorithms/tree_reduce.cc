#include "algorithms/algorithms.h"
#include "algorithms/tree_pipeline.h"
#include "core/datatype.h"

namespace chorus {

void treeReduce(PeerIO& io, const CallArgs& op) {
  const int n = io.size();
  const size_t es = typeSize(op.type);
  if (n == 1 || op.count == 0) {
    copyIfOutOfPlace(io, op.send, op.recv, op.count * es);
    return;
  }
  TreePipelineSpec spec;
  spec.trees = DoubleBinaryTree::rootedAt(io.rank(), n, op.root);
  spec.type = op.type;
  spec.reduction = op.reduction;
  spec.count = op.count;
  spec.send = static_cast<const char*>(op.send);
  spec.recv = static_cast<char*>(op.recv);  // written on the root only (NULL elsewhere is fine)
  spec.up = true;
  runTreePipeline(io, spec);
}

}  // namespace chorus
