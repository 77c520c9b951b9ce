#include "algorithms/algorithms.h"
#include "algorithms/tree_pipeline.h"
#include "core/datatype.h"

namespace chorus {

void treeAllReduce(PeerIO& io, const CallArgs& op) {
  const int n = io.size();
  const size_t es = typeSize(op.type);
  if (n == 1 || op.count == 0) {
    copyIfOutOfPlace(io, op.send, op.recv, op.count * es);
    return;  // an average over one rank is the value itself
  }
  TreePipelineSpec spec;
  spec.trees = DoubleBinaryTree::unrooted(io.rank(), n);
  spec.type = op.type;
  spec.reduction = op.reduction;
  spec.count = op.count;
  spec.send = static_cast<const char*>(op.send);
  spec.recv = static_cast<char*>(op.recv);
  spec.up = true;
  spec.down = true;
  spec.partialsInRecv = true;  // every rank's recv is overwritten by the result anyway
  runTreePipeline(io, spec);
}

}  // namespace chorus
