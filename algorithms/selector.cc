#include "algorithms/selector.h"

#include "algorithms/algorithms.h"
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
    : forced_(forced), smallThreshold_(smallThreshold) {
  if (!forced_.empty() && forced_ != "ring" && forced_ != "recursive_doubling" && forced_ != "chain") {
    throwInvalidArgument("CHORUS_ALGO=" + forced_ + " is not one of ring, recursive_doubling, chain");
  }
}

AlgorithmChoice Selector::choose(const Op& op, int nranks) const {
  switch (op.collective) {
    case Collective::kAllReduce: {
      bool small = op.count * typeSize(op.type) <= smallThreshold_;
      if (forced_ == "recursive_doubling" || (forced_.empty() && small)) {
        return {"recursive_doubling", recursiveDoublingAllReduce};
      }
      return {"ring", ringAllReduce};
    }
    case Collective::kBroadcast: return {"chain", chainBroadcast};
    case Collective::kReduce: return {"chain", chainReduce};
    case Collective::kAllGather: return {"ring", ringAllGather};
    case Collective::kReduceScatter: return {"ring", ringReduceScatter};
  }
  throwInternal("unknown collective");
}

}  // namespace chorus
