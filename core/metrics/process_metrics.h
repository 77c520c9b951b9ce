// The metrics of one process: the sources that report (a communicator each) and the one HTTP server they are
// scraped from, started with the first source and stopped with the last, or at exit. A source handed to keep() stays
// until the process ends: a failed or aborted communicator's counters outlive the communicator the application freed.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/metrics/metric_text.h"
#include "core/metrics/metrics_http_server.h"

namespace chorus::metrics {

// What reports metrics: called on the server's thread at each scrape, it must only read (relaxed atomics).
class MetricSource {
 public:
  virtual ~MetricSource() = default;
  virtual void collect(MetricText& out) const = 0;
};

class ProcessMetrics {
 public:
  static ProcessMetrics& instance();  // never destroyed: a source may leave after static destructors ran

  // Serves `source` from now on; the first source starts the server on `port`. A server that cannot listen is
  // logged as a warning (with `rank`) and the job goes on without metrics; a source asking for another port than
  // the one served is served there, with a warning.
  void add(MetricSource* source, int port, int rank);
  // Stops serving `source` (no scrape reads it after this returns); the last one stops the server.
  void remove(MetricSource* source);
  // Serves `source` (added before) until the process ends: the last figures of a communicator that failed or was
  // aborted, which chorusCommAbort or the application's destroy would otherwise take away before any scrape saw them.
  // Beyond kKept, the oldest kept goes.
  void keep(std::unique_ptr<MetricSource> source);
  static constexpr size_t kKept = 16;
  // What GET /metrics answers: every source's samples.
  std::string render() const;
  // The port served, or 0 when no server runs.
  int servingPort() const;

 private:
  ProcessMetrics() = default;
  static void stopAtExit();

  mutable std::mutex mutex_;
  std::vector<MetricSource*> sources_;
  std::deque<std::unique_ptr<MetricSource>> kept_;
  std::unique_ptr<MetricsHttpServer> server_;
  int requestedPort_ = 0;
  bool stopRegistered_ = false;
};

}  // namespace chorus::metrics
