#include "src/comm/transfer_tracer.h"

namespace chorus {

void TransferTracer::set(CallTrace* trace, std::vector<const char*> transportNames) {
  trace_ = trace != nullptr && trace->level() == TraceLevel::kTransfer ? trace : nullptr;
  transportNames_ = std::move(transportNames);
}

void TransferTracer::recordStep(const char* what, int peer, size_t bytes, double startUs, double endUs) {
  // What the progress loop did not see (the first check, the return) counts as moving: the step's parts add up.
  step_.what = what;
  step_.peer = peer;
  step_.bytes = bytes;
  step_.transport = peer >= 0 && static_cast<size_t>(peer) < transportNames_.size() ? transportNames_[peer] : "";
  step_.startUs = startUs;
  step_.endUs = endUs;
  step_.moveUs = std::max(0.0, endUs - startUs - step_.waitUs);
  times_.waitUs += step_.waitUs;
  times_.moveUs += step_.moveUs;
  trace_->recordTransfer(step_);
}

void TransferTracer::TimedReducer::reduce(void* dst, const void* a, const void* b, size_t count, chorusDataType_t type,
                                          chorusRedOp_t op) {
  const double start = CallTrace::nowUs();
  inner_.reduce(dst, a, b, count, type, op);
  times_.reduceUs += CallTrace::nowUs() - start;
}

void TransferTracer::TimedReducer::finishAverage(void* data, size_t count, chorusDataType_t type, int nranks) {
  const double start = CallTrace::nowUs();
  inner_.finishAverage(data, count, type, nranks);
  times_.reduceUs += CallTrace::nowUs() - start;
}

}  // namespace chorus
