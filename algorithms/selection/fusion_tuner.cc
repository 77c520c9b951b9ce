#include "algorithms/selection/fusion_tuner.h"

#include <bit>

#include "core/error.h"

namespace chorus {

FusionTuner::Pick FusionTuner::pick(size_t allreduces, size_t bytes) {
  if (threshold_ == 0 || allreduces < 2) return {threshold_, false};  // nothing to fuse, or fusion off
  Shape& s = shapes_[{allreduces, static_cast<int>(std::bit_width(bytes))}];
  if (s.candidates.empty() && !s.settled) {
    s.candidates.push_back(threshold_);
    for (size_t t : {threshold_ / 8, threshold_ / 64}) {
      if (t > 0 && t < bytes) s.candidates.push_back(t);
    }
    s.candidates.push_back(0);  // no fusion
    if (s.candidates.size() == 1) {
      s.settled = true;
      s.best = threshold_;
    } else {
      s.stage.start(s.candidates.size(), kRounds);
    }
  }
  if (s.settled) return {s.best, false};
  pending_ = &s;
  return {s.candidates[s.stage.next()], true};
}

bool FusionTuner::record(double seconds) {
  if (!pending_) throwInternal("fusion tuner: a time recorded without a trial");
  return pending_->stage.record(seconds);
}

std::vector<double>& FusionTuner::stageTimes() {
  if (!pending_) throwInternal("fusion tuner: no stage under way");
  return pending_->stage.times;
}

void FusionTuner::finishStage() {
  Shape* s = pending_;
  if (!s || !s->stage.complete()) throwInternal("fusion tuner: a stage finished early");
  pending_ = nullptr;
  const std::vector<double> score = s->stage.scores(s->candidates.size());
  size_t best = 0;
  for (size_t i = 1; i < score.size(); ++i) {
    if (score[i] < kMargin * score[0] && score[i] < score[best]) best = i;
  }
  s->best = s->candidates[best];
  s->settled = true;
  s->candidates.clear();
  s->stage.clear();
  ++settled_;
  lastSettled_ = s->best;
}

}  // namespace chorus
