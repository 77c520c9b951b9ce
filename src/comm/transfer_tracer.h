// A CommIO's transfer tracing (TraceLevel::kTransfer): every wait becomes a step of the call's trace, its time split
// into waiting (nothing moved) and moving, and where each call's time went is added up (times()). Off unless a
// trace at that level is set; off, each hook is one test of a flag.
#pragma once

#include <algorithm>
#include <vector>

#include "reduce/reducer.h"
#include "src/comm/call_trace.h"

namespace chorus {

class TransferTracer {
 public:
  explicit TransferTracer(Reducer& plain) : timedReducer_(plain, times_) {}
  TransferTracer(const TransferTracer&) = delete;
  TransferTracer& operator=(const TransferTracer&) = delete;

  // `trace` (null: off) traces only at TraceLevel::kTransfer; transportNames[p] names the link to rank p.
  void set(CallTrace* trace, std::vector<const char*> transportNames);
  bool on() const { return trace_ != nullptr; }
  // A call begins: its times start from zero.
  void callBegins() {
    times_.clear();
    postedBytes_ = 0;
  }
  const TransferTimes& times() const { return times_; }
  // The reducer that adds its time to times().reduceUs.
  Reducer& timedReducer() { return timedReducer_; }

  // Bytes posted, and bytes then waited for alone: a waitAll's step counts what is left.
  void posted(size_t bytes) { postedBytes_ += bytes; }
  void waitedFor(size_t bytes) { postedBytes_ -= std::min(postedBytes_, bytes); }
  size_t unwaitedBytes() const { return postedBytes_; }
  void allWaited() { postedBytes_ = 0; }

  // Runs `drive` (a wait) as one traced step named `what` (a static name).
  template <class Drive>
  void step(const char* what, int peer, size_t bytes, Drive drive) {
    const double start = CallTrace::nowUs();
    step_ = TransferStep{};
    timing_ = true;
    struct Off {
      bool& timing;
      ~Off() { timing = false; }
    } off{timing_};
    drive();
    recordStep(what, peer, bytes, start, CallTrace::nowUs());
  }

  // The progress loop's hooks: inside step() they split its rounds into waiting and moving.
  void loopStarts() {
    if (timing_) markUs_ = CallTrace::nowUs();
  }
  void roundStarts() {
    if (!timing_) return;
    roundStartUs_ = CallTrace::nowUs();
    step_.waitUs += roundStartUs_ - markUs_;  // spinning, yielding or asleep since the last round: waiting
  }
  void roundEnds(bool moved) {
    if (!timing_) return;
    markUs_ = CallTrace::nowUs();
    if (!moved) step_.waitUs += markUs_ - roundStartUs_;  // a round that moved nothing waited too
    ++step_.rounds;
    if (moved) ++step_.movingRounds;
  }
  void sleeps() {
    if (timing_) ++step_.sleeps;
  }

  // Outside the loop: a local copy's time counts as moving, a decode-and-add's (or encode's) as reducing.
  double clockIfOn() const { return on() ? CallTrace::nowUs() : 0; }
  void movedSince(double startUs) {
    if (on()) times_.moveUs += CallTrace::nowUs() - startUs;
  }
  void reducedSince(double startUs) {
    if (on()) times_.reduceUs += CallTrace::nowUs() - startUs;
  }

 private:
  void recordStep(const char* what, int peer, size_t bytes, double startUs, double endUs);

  class TimedReducer final : public Reducer {
   public:
    TimedReducer(Reducer& inner, TransferTimes& times) : inner_(inner), times_(times) {}
    void reduce(void* dst, const void* a, const void* b, size_t count, chorusDataType_t type,
                chorusRedOp_t op) override;
    void finishAverage(void* data, size_t count, chorusDataType_t type, int nranks) override;

   private:
    Reducer& inner_;
    TransferTimes& times_;
  };

  CallTrace* trace_ = nullptr;
  std::vector<const char*> transportNames_;
  TransferTimes times_;
  TimedReducer timedReducer_;
  size_t postedBytes_ = 0;  // posted and not yet waited for alone
  bool timing_ = false;     // inside step()
  TransferStep step_{};     // the step under way
  double markUs_ = 0;       // the end of the last progress round
  double roundStartUs_ = 0;
};

}  // namespace chorus
