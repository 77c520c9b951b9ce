// A communicator's metrics (config metricsPort): calls, bytes and time per collective and algorithm, errors by kind,
// aborts, lost peers and the age of the call under way, served by the process's metrics server
// (core/metrics/process_metrics.h) under the labels rank, world_size, comm (a short id alike on every rank) and
// transport. The hot path is a call's start and end: two clock reads and a few relaxed atomic adds into cells made
// at init, no lock and no allocation.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "algorithms/algorithm_id.h"
#include "core/collective.h"
#include "core/error.h"
#include "core/metrics/duration_histogram.h"
#include "core/metrics/process_metrics.h"

namespace chorus {

class CommMetrics final : public metrics::MetricSource {
 public:
  struct Identity {
    int rank, size;
    std::string identity;   // CommEngine::identity(): hashed into the comm label
    std::string transport;  // the transports in use ("shm", "shm,tcp"; "none" for a world of one)
  };
  // Starts being served at once: on port + localIndex (the rank's index among the communicator's ranks on its
  // machine) by the process's server, which the first communicator starts.
  CommMetrics(Identity identity, int port, int localIndex);
  ~CommMetrics() override;  // no scrape reads it after this
  CommMetrics(const CommMetrics&) = delete;
  CommMetrics& operator=(const CommMetrics&) = delete;

  // The call runner's hooks, under the call lock. A call starts (its age counts from now) ...
  void callStarted() {
    const uint64_t now = nowNs();
    mark_ = now;
    pendingSinceNs_.store(now, std::memory_order_relaxed);
  }
  // ... runs `calls` of the application's calls as one (a fused group's allreduces: several) of `bytes`, timed from
  // the call's start or the previous run of the same call, whichever is later ...
  // `algorithm`: algorithmSlot(the plan's algorithm), or kNoAlgorithm for sends and receives.
  void ran(Collective collective, size_t algorithm, size_t bytes, int calls);
  static constexpr size_t algorithmSlot(AlgorithmId id) { return static_cast<size_t>(id); }
  // ... and ends, done or failed.
  void callEnded() { pendingSinceNs_.store(0, std::memory_order_relaxed); }
  // A failed call, by its kind (`breaks`: the communicator's first failure, which counts a lost peer).
  void failed(const Error& e, bool breaks);
  void aborted() { aborts_.fetch_add(1, std::memory_order_relaxed); }
  // Whether a call failed or the communicator was aborted: then its figures outlive it (ProcessMetrics::keep).
  bool sawFailure() const;

  void collect(metrics::MetricText& out) const override;

  // The comm label: 8 hex digits of a hash of the identity.
  static std::string shortId(const std::string& identity);

  // Calls and start/end together (RAII): the age of the call under way is cleared however the call ends.
  class UnderWay {
   public:
    explicit UnderWay(CommMetrics* m) : m_(m) {
      if (m_ != nullptr) m_->callStarted();
    }
    ~UnderWay() {
      if (m_ != nullptr) m_->callEnded();
    }
    UnderWay(const UnderWay&) = delete;
    UnderWay& operator=(const UnderWay&) = delete;

   private:
    CommMetrics* m_;
  };

 private:
  static uint64_t nowNs() {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
  }
  static constexpr size_t kCollectives = static_cast<size_t>(Collective::kRecv) + 1;

 public:
  static constexpr size_t kAlgorithms = std::size(kAllAlgorithms) + 1;  // the last: none (sends and receives)
  static constexpr size_t kNoAlgorithm = kAlgorithms - 1;

 private:
  static constexpr size_t kFailures = static_cast<size_t>(Failure::kLinkDown) + 1;
  struct Cell {
    std::atomic<uint64_t> calls{0}, bytes{0};
    metrics::DurationHistogram duration;
  };

  const int rank_, size_;
  const std::string comm_, transport_;
  uint64_t mark_ = 0;  // the call's start or its last run's end (under the call lock)
  std::atomic<uint64_t> pendingSinceNs_{0};
  std::array<std::array<Cell, kAlgorithms>, kCollectives> cells_;
  std::array<std::atomic<uint64_t>, kFailures> errors_{};
  std::atomic<uint64_t> aborts_{0}, lostPeers_{0};
};

}  // namespace chorus
