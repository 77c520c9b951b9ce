#include "algorithms/selector.h"

#include "algorithms/algorithm_table.h"
#include "src/core/datatype.h"
#include "src/core/error.h"

namespace chorus {

const char* collectiveName(Collective c) {
  switch (c) {
    case Collective::kAllReduce: return "allreduce";
    case Collective::kBroadcast: return "broadcast";
    case Collective::kReduce: return "reduce";
    case Collective::kAllGather: return "allgather";
    case Collective::kReduceScatter: return "reducescatter";
  }
  return "unknown";
}

Selector::Selector(const std::string& forced, size_t smallThreshold)
    : forced_(forced == "chain" ? "ring" : forced), smallThreshold_(smallThreshold) {
  if (!forced_.empty() && !isAlgorithmName(forced_)) {
    throwInvalidArgument("CHORUS_ALGO=" + forced + " is not an algorithm name");
  }
}

AlgorithmChoice Selector::choose(const Op& op, int nranks) const {
  if (!forced_.empty()) {
    if (AlgorithmFn fn = findAlgorithm(op.collective, forced_)) return {forced_.c_str(), fn};
  }
  if (op.collective == Collective::kAllReduce && op.count * typeSize(op.type) <= smallThreshold_) {
    return {"recursive_doubling", findAlgorithm(op.collective, "recursive_doubling")};
  }
  return {"ring", findAlgorithm(op.collective, "ring")};
}

}  // namespace chorus
