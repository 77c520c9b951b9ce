#include "algorithms/selection/fusion_tuner.h"

#include <algorithm>
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
      for (int r = 0; r < kRounds; ++r) {
        for (size_t i = 0; i < s.candidates.size(); ++i) s.schedule.push_back(static_cast<int>(i));
      }
    }
  }
  if (s.settled) return {s.best, false};
  pending_ = &s;
  return {s.candidates[static_cast<size_t>(s.schedule[s.times.size()])], true};
}

bool FusionTuner::record(double seconds) {
  if (!pending_) throwInternal("fusion tuner: a time recorded without a trial");
  pending_->times.push_back(seconds);
  return pending_->times.size() == pending_->schedule.size();
}

std::vector<double>& FusionTuner::stageTimes() {
  if (!pending_) throwInternal("fusion tuner: no stage under way");
  return pending_->times;
}

void FusionTuner::finishStage() {
  Shape* s = pending_;
  if (!s || s->times.size() != s->schedule.size()) throwInternal("fusion tuner: a stage finished early");
  pending_ = nullptr;
  std::vector<std::vector<double>> per(s->candidates.size());
  for (size_t i = 0; i < s->times.size(); ++i) per[static_cast<size_t>(s->schedule[i])].push_back(s->times[i]);
  std::vector<double> median;
  for (auto& v : per) {
    std::sort(v.begin(), v.end());
    median.push_back(v[v.size() / 2]);
  }
  size_t best = 0;
  for (size_t i = 1; i < median.size(); ++i) {
    if (median[i] < kMargin * median[0] && median[i] < median[best]) best = i;
  }
  s->best = s->candidates[best];
  s->settled = true;
  s->candidates.clear();
  s->schedule.clear();
  s->times.clear();
  ++settled_;
  lastSettled_ = s->best;
}

}  // namespace chorus
