#include "algorithms/selection/autotune_table.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <sstream>

#include "algorithms/algorithm_registry.h"
#include "core/error.h"

namespace chorus {
namespace {

constexpr int kCollectiveSlots = 16;  // Collective's values, point-to-point included, with room
constexpr int kWidths = 4;            // elements of 1, 2, 4 and 8 bytes
constexpr int kSizeBuckets = 65;      // bit_width(bytes): 0 for 0 bytes, k for [2^(k-1), 2^k)
// A variant must beat the algorithm as it is by 3% on two or more calls each, by 12% on one: the best of four
// variants' single calls beats an equal algorithm's by chance more often than not where calls vary by 12-15%. The
// algorithm as it is scores by its best call of every stage so far (its own run in the variants' stage is two calls,
// one counted), so that one delayed call of its own does not hand the win to a variant. Figures:
// perf/results/selection.md, "What the tuner's trials are made of".
constexpr double kVariantMargin = 0.97, kVariantMarginOnOneCall = 0.88;

int widthIndex(int elementBytes) {
  switch (elementBytes) {
    case 1: return 0;
    case 2: return 1;
    case 4: return 2;
    case 8: return 3;
    default: return -1;
  }
}

size_t bucketLo(int k) { return k == 0 ? 0 : size_t{1} << (k - 1); }
size_t bucketHi(int k) { return k == 0 ? 1 : k == kSizeBuckets - 1 ? SIZE_MAX : size_t{1} << k; }

// Candidate indices, fastest first (ties: the prior's order).
std::vector<size_t> ranked(const std::vector<double>& score) {
  std::vector<size_t> order(score.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return score[a] < score[b]; });
  return order;
}

}  // namespace

struct AutotuneTable::Bucket {
  enum class Phase { kNew, kAlgorithms, kFinalists, kVariants, kSettled, kUntuned };
  Collective collective = Collective::kAllReduce;
  int elementBytes = 0;
  int size = 0;  // its size bucket
  Phase phase = Phase::kNew;
  std::vector<TuneCandidate> candidates;  // this stage's
  TrialStage stage;
  TuneCandidate best;
  // Each algorithm's counted calls (as it is: default slice and sockets) in the stages before the variants.
  std::vector<std::pair<AlgorithmId, std::vector<double>>> earlier;
};

AutotuneTable::AutotuneTable(const CostInputs& inputs, AlgoRules forced, size_t chunkBytes, int sockets,
                             int defaultSockets)
    : inputs_(inputs),
      forced_(std::move(forced)),
      chunkBytes_(chunkBytes),
      sockets_(std::max(1, sockets)),
      defaultSockets_(std::clamp(defaultSockets, 1, std::max(1, sockets))) {
  buckets_.resize(static_cast<size_t>(kCollectiveSlots) * kWidths * kSizeBuckets);
}

AutotuneTable::~AutotuneTable() = default;

AutotuneTable::Bucket* AutotuneTable::bucketFor(Collective c, int elementBytes, size_t bytes) {
  const int ci = static_cast<int>(c), wi = widthIndex(elementBytes);
  // Alltoallv's size is 0 whatever each rank sends: one bucket for every call would tune on noise.
  if (ci < 0 || ci >= kCollectiveSlots || wi < 0 || isPointToPoint(c) || c == Collective::kAllToAllv) return nullptr;
  const int k = static_cast<int>(std::bit_width(bytes));
  std::unique_ptr<Bucket>& slot = buckets_[(static_cast<size_t>(ci) * kWidths + wi) * kSizeBuckets + k];
  if (!slot) {
    slot = std::make_unique<Bucket>();
    slot->collective = c;
    slot->elementBytes = elementBytes;
    slot->size = k;
  }
  return slot.get();
}

std::vector<TuneCandidate> AutotuneTable::variantsOf(const Bucket& b, AlgorithmId a) const {
  std::vector<TuneCandidate> v = {{a, 0, 0}};
  if (bucketLo(b.size) >= chunkBytes_) {
    for (size_t s : {chunkBytes_ / 4, chunkBytes_ * 4}) {
      if (s >= kMinSliceBytes && s <= kMaxSliceBytes) v.push_back({a, s, 0});
    }
  }
  if (bucketLo(b.size) >= kStripedFromBytes) {
    for (int n : {1, 2, 4}) {
      if (n <= sockets_ && n != defaultSockets_) v.push_back({a, 0, n});
    }
  }
  return v;
}

int AutotuneTable::variantRounds(size_t variants) { return variants > 3 ? kVariantRoundsForMore : kVariantRounds; }

void AutotuneTable::startStage(Bucket& b, std::vector<TuneCandidate> candidates, int rounds, int passes) {
  b.candidates = std::move(candidates);
  b.stage.start(b.candidates.size(), rounds, passes);
}

AutotuneTable::Pick AutotuneTable::pick(Collective c, int elementBytes, size_t bytes) {
  if (!forced_.empty() && forced_.lookup(c, bytes, elementBytes)) return {};
  Bucket* b = bucketFor(c, elementBytes, bytes);
  if (!b) return {};
  if (b->phase == Bucket::Phase::kNew) {
    // The prior: the model's order for the bucket's smallest size.
    std::vector<std::pair<double, AlgorithmId>> predicted;
    for (const AlgorithmRecord& r : algorithmRegistry()) {
      if (r.collective != c) continue;
      const double us = r.cost(c, bucketLo(b->size), inputs_);
      if (std::isfinite(us)) predicted.emplace_back(us, r.id);
    }
    std::stable_sort(predicted.begin(), predicted.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    if (predicted.size() > static_cast<size_t>(kPriorCandidates)) predicted.resize(kPriorCandidates);
    std::vector<TuneCandidate> candidates;
    for (const auto& p : predicted) candidates.push_back({p.second, 0});
    if (candidates.empty()) {
      b->phase = Bucket::Phase::kUntuned;
    } else {
      b->phase = Bucket::Phase::kAlgorithms;
      const int passes = candidates.size() > static_cast<size_t>(kTwoPassCandidates) ? 1 : kFirstPasses;
      startStage(*b, std::move(candidates), kFirstRunCalls, passes);
    }
  }
  if (b->phase == Bucket::Phase::kUntuned) return {};
  if (b->phase == Bucket::Phase::kSettled) return {true, false, b->best};
  pending_ = b;
  return {true, true, b->candidates[b->stage.next()]};
}

bool AutotuneTable::record(double seconds) {
  if (!pending_) throwInternal("autotune: a time recorded without a trial");
  ++trials_;
  return pending_->stage.record(seconds);
}

std::vector<double>& AutotuneTable::stageTimes() {
  if (!pending_) throwInternal("autotune: no stage under way");
  return pending_->stage.times;
}

void AutotuneTable::finishStage() {
  Bucket* b = pending_;
  if (!b || !b->stage.complete()) throwInternal("autotune: a stage finished before its last call");
  pending_ = nullptr;
  std::vector<double> score = b->stage.scores(b->candidates.size());
  const std::vector<size_t> order = ranked(score);
  if (b->phase == Bucket::Phase::kAlgorithms || b->phase == Bucket::Phase::kFinalists) {
    const std::vector<std::vector<double>> counted = b->stage.counted(b->candidates.size());
    for (size_t c = 0; c < counted.size(); ++c) b->earlier.emplace_back(b->candidates[c].algorithm, counted[c]);
  }
  auto settle = [&](TuneCandidate c) {
    b->best = c;
    b->phase = Bucket::Phase::kSettled;
    b->candidates.clear();
    b->stage.clear();
    b->earlier.clear();
    ++settled_;
  };
  // The algorithm found: its variants next (slice sizes where a message spans a slice, sockets where it stripes).
  auto variants = [&](AlgorithmId a) {
    std::vector<TuneCandidate> v = variantsOf(*b, a);
    if (v.size() == 1) return settle(v[0]);
    b->phase = Bucket::Phase::kVariants;
    const int rounds = variantRounds(v.size());  // before v is moved: arguments are evaluated in no set order
    startStage(*b, std::move(v), rounds);
  };
  switch (b->phase) {
    case Bucket::Phase::kAlgorithms: {
      if (b->candidates.size() == 1) return variants(b->candidates[0].algorithm);
      std::vector<TuneCandidate> finalists = {b->candidates[order[0]], b->candidates[order[1]]};
      // The calls the variants will not take go to the two fastest, back to back, where there are enough of them for
      // three each: sizes with no variants (under 256 KiB) decide between two algorithms on 5 calls each, where a call
      // is short and one scheduler delay on a 2-core machine weighs most (64 KiB on the loopback 2x2: 45-70 us calls,
      // and 150-500 us ones among them). Otherwise the first stage's winner goes on to its variants.
      const size_t variantCount = variantsOf(*b, finalists[0].algorithm).size();
      const int variantCalls = variantCount == 1 ? 0 : static_cast<int>(variantCount) * variantRounds(variantCount);
      const int spare = kMaxCallsPerBucket - 1 - static_cast<int>(b->stage.schedule.size()) - variantCalls;
      if (spare < 2 * kFinalRounds) return variants(finalists[0].algorithm);
      b->phase = Bucket::Phase::kFinalists;
      return startStage(*b, std::move(finalists), spare / 2);
    }
    case Bucket::Phase::kFinalists: return variants(b->candidates[order[0]].algorithm);
    case Bucket::Phase::kVariants: {
      // Candidate 0 is the algorithm as it is, scored by its best call in every stage.
      for (const auto& [algorithm, times] : b->earlier) {
        if (algorithm != b->candidates[0].algorithm) continue;
        for (double t : times) score[0] = std::min(score[0], t);
      }
      const size_t winner = ranked(score)[0];
      const double margin =
          b->stage.counted(b->candidates.size())[winner].size() >= 2 ? kVariantMargin : kVariantMarginOnOneCall;
      return settle(winner != 0 && score[winner] < margin * score[0] ? b->candidates[winner] : b->candidates[0]);
    }
    default: throwInternal("autotune: a stage finished in a bucket not under trial");
  }
}

std::string AutotuneTable::describeStage() const {
  if (!pending_) return "";
  const Bucket& b = *pending_;
  std::ostringstream out;
  out << collectiveName(b.collective) << '.' << b.elementBytes * 8 << ' ' << formatSize(bucketLo(b.size)) << ':';
  for (size_t c = 0; c < b.candidates.size(); ++c) {
    const TuneCandidate& t = b.candidates[c];
    out << (c == 0 ? " " : " | ") << algorithmName(t.algorithm);
    if (t.sliceBytes) out << '@' << formatSize(t.sliceBytes);
    if (t.sockets) out << '/' << t.sockets;
    for (size_t i = 0; i < b.stage.times.size(); ++i) {
      if (static_cast<size_t>(b.stage.schedule[i]) == c) out << ' ' << std::lround(b.stage.times[i] * 1e6);
    }
  }
  return out.str();
}

void AutotuneTable::load(const AlgoRules& tuned) {
  for (const AlgoRule& rule : tuned.rules()) {
    for (Collective c : kAllCollectives) {
      const AlgorithmId algorithm = algorithmFor(c, rule.algorithm);  // a catch-all "ring": the chain where no ring
      if ((rule.collective && *rule.collective != c) || !findAlgorithm(c, algorithm)) continue;
      for (int width : {1, 2, 4, 8}) {
        if (rule.elementBytes != 0 && rule.elementBytes != width) continue;
        for (int k = 0; k < kSizeBuckets; ++k) {
          if (bucketLo(k) < rule.lo || bucketHi(k) > rule.hi) continue;  // only buckets the rule covers whole
          Bucket* b = bucketFor(c, width, bucketLo(k));
          if (!b) continue;
          b->phase = Bucket::Phase::kSettled;
          b->best = {algorithm, rule.sliceBytes == chunkBytes_ ? 0 : rule.sliceBytes,
                     rule.sockets == defaultSockets_ ? 0 : rule.sockets};
        }
      }
    }
  }
}

std::string AutotuneTable::asRules() const {
  std::string out;
  for (size_t group = 0; group < buckets_.size(); group += kSizeBuckets) {
    std::string entry;
    const Bucket* open = nullptr;  // the first bucket of the range being written
    const Bucket* last = nullptr;
    auto flush = [&] {
      if (!open) return;
      if (!entry.empty()) entry += ',';
      entry += formatSize(bucketLo(open->size));
      entry += '-';
      entry += formatSize(bucketHi(last->size));
      entry += '=';
      entry += algorithmName(open->best.algorithm);
      if (open->best.sliceBytes) {
        entry += '@';
        entry += formatSize(open->best.sliceBytes);
      }
      if (open->best.sockets) {
        entry += '/';
        entry += std::to_string(open->best.sockets);
      }
      open = nullptr;
    };
    for (size_t k = 0; k < static_cast<size_t>(kSizeBuckets); ++k) {
      const Bucket* b = buckets_[group + k].get();
      if (!b || b->phase != Bucket::Phase::kSettled) {
        flush();
        continue;
      }
      if (open && !(open->best == b->best)) flush();
      if (!open) open = b;
      last = b;
    }
    flush();
    if (entry.empty()) continue;
    const Bucket* any = nullptr;
    for (size_t k = 0; k < static_cast<size_t>(kSizeBuckets) && !any; ++k) any = buckets_[group + k].get();
    if (!out.empty()) out += ';';
    out += collectiveName(any->collective);
    out += '.';
    out += std::to_string(any->elementBytes * 8);
    out += ':';
    out += entry;
  }
  return out;
}

}  // namespace chorus
