#include "src/comm/comm_metrics.h"

#include <cstdio>
#include <cstring>

namespace chorus {
namespace {

const char* failureName(Failure f) {
  switch (f) {
    case Failure::kUnspecified:
      return "other";
    case Failure::kPeerLost:
      return "peer_lost";
    case Failure::kRemoteError:
      return "remote_error";
    case Failure::kTimeout:
      return "timeout";
    case Failure::kMismatch:
      return "mismatch";
    case Failure::kAborted:
      return "aborted";
    case Failure::kCorrupt:
      return "corrupt";
    case Failure::kLinkDown:
      return "link_down";
  }
  return "other";
}

}  // namespace

CommMetrics::CommMetrics(Identity identity, int port, int localIndex)
    : rank_(identity.rank),
      size_(identity.size),
      comm_(shortId(identity.identity)),
      transport_(identity.transport.empty() ? "none" : identity.transport) {
  metrics::ProcessMetrics::instance().add(this, port + localIndex, rank_);
}

CommMetrics::~CommMetrics() { metrics::ProcessMetrics::instance().remove(this); }

void CommMetrics::ran(Collective collective, size_t algorithm, size_t bytes, int calls) {
  const uint64_t now = nowNs();
  const uint64_t took = now - mark_;
  mark_ = now;
  Cell& cell = cells_[static_cast<size_t>(collective)][algorithm < kAlgorithms ? algorithm : kNoAlgorithm];
  cell.calls.fetch_add(static_cast<uint64_t>(calls), std::memory_order_relaxed);
  cell.bytes.fetch_add(bytes, std::memory_order_relaxed);
  cell.duration.observe(took);
}

void CommMetrics::failed(const Error& e, bool breaks) {
  errors_[static_cast<size_t>(e.failure())].fetch_add(1, std::memory_order_relaxed);
  if (breaks && e.lostPeer() != kNoRank) lostPeers_.fetch_add(1, std::memory_order_relaxed);
}

bool CommMetrics::sawFailure() const {
  if (aborts_.load(std::memory_order_relaxed) != 0) return true;
  for (const auto& e : errors_) {
    if (e.load(std::memory_order_relaxed) != 0) return true;
  }
  return false;
}

std::string CommMetrics::shortId(const std::string& identity) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (unsigned char c : identity) h = (h ^ c) * 16777619u;
  char buf[9];
  std::snprintf(buf, sizeof(buf), "%08x", h);
  return buf;
}

void CommMetrics::collect(metrics::MetricText& out) const {
  const metrics::Labels base = {
      {"rank", std::to_string(rank_)}, {"world_size", std::to_string(size_)}, {"comm", comm_}};
  for (size_t c = 0; c < kCollectives; ++c) {
    for (size_t a = 0; a < kAlgorithms; ++a) {
      const Cell& cell = cells_[c][a];
      const uint64_t calls = cell.calls.load(std::memory_order_relaxed);
      if (calls == 0) continue;  // series appear with their first call
      metrics::Labels labels = base;
      labels.push_back({"collective", collectiveName(static_cast<Collective>(c))});
      labels.push_back({"algorithm", a != kNoAlgorithm ? algorithmName(static_cast<AlgorithmId>(a)) : "none"});
      labels.push_back({"transport", transport_});
      out.counter("chorus_calls_total", "Calls completed, by collective, algorithm and transport.", labels,
                  static_cast<double>(calls));
      out.counter("chorus_bytes_total",
                  "Bytes of the calls completed (count times the datatype's size, as the caller gave them).", labels,
                  static_cast<double>(cell.bytes.load(std::memory_order_relaxed)));
      const auto counts = cell.duration.counts();
      out.histogram("chorus_call_duration_seconds",
                    "Time of each call completed, from its start on this rank to its end (a fused group's "
                    "allreduces: one observation).",
                    labels, metrics::DurationHistogram::boundsSeconds(), counts, cell.duration.sumSeconds());
    }
  }
  for (size_t f = 0; f < kFailures; ++f) {
    metrics::Labels labels = base;
    labels.push_back({"kind", failureName(static_cast<Failure>(f))});
    out.counter("chorus_errors_total", "Calls failed, by the kind of failure.", labels,
                static_cast<double>(errors_[f].load(std::memory_order_relaxed)));
  }
  out.counter("chorus_aborts_total", "chorusCommAbort calls on the communicator.", base,
              static_cast<double>(aborts_.load(std::memory_order_relaxed)));
  out.counter("chorus_lost_peers_total", "Failures that broke the communicator because a peer's process was gone.",
              base, static_cast<double>(lostPeers_.load(std::memory_order_relaxed)));
  const uint64_t since = pendingSinceNs_.load(std::memory_order_relaxed);
  const uint64_t now = nowNs();
  out.gauge("chorus_oldest_pending_call_age_seconds",
            "Seconds since the call under way on this rank started; 0 when no call is under way.", base,
            since == 0 || now < since ? 0.0 : static_cast<double>(now - since) / 1e9);
}

}  // namespace chorus
