#include "core/metrics/process_metrics.h"

#include <algorithm>
#include <cstdlib>

#include "core/error.h"
#include "core/logging.h"

namespace chorus::metrics {

ProcessMetrics& ProcessMetrics::instance() {
  static ProcessMetrics* metrics = new ProcessMetrics();
  return *metrics;
}

void ProcessMetrics::add(MetricSource* source, int port, int rank) {
  std::lock_guard<std::mutex> lock(mutex_);
  sources_.push_back(source);
  if (server_) {
    if (port != requestedPort_) {
      CHORUS_WARN(rank, "metrics: a communicator asks for port " << port << ", but this process already serves "
                                                                 << "its metrics on port " << server_->port()
                                                                 << "; its metrics are served there");
    }
    return;
  }
  try {
    // The server's thread renders under mutex_: it never runs while this holds it.
    server_ = std::make_unique<MetricsHttpServer>(port, [this] { return render(); });
    requestedPort_ = port;
    CHORUS_INFO(rank, "metrics: serving Prometheus metrics at http://0.0.0.0:" << server_->port() << "/metrics");
    if (!stopRegistered_) {
      stopRegistered_ = true;
      std::atexit(stopAtExit);
    }
  } catch (const Error& e) {
    CHORUS_WARN(rank, "metrics: not served (the job goes on without them): " << e.what());
  }
}

void ProcessMetrics::remove(MetricSource* source) {
  std::unique_ptr<MetricsHttpServer> stopping;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    sources_.erase(std::remove(sources_.begin(), sources_.end(), source), sources_.end());
    if (sources_.empty()) stopping = std::move(server_);
  }
  // Joined without the lock: its thread may be waiting for it to render a scrape.
  stopping.reset();
}

void ProcessMetrics::keep(std::unique_ptr<MetricSource> source) {
  std::unique_ptr<MetricSource> dropped;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    kept_.push_back(std::move(source));
    if (kept_.size() > kKept) {
      dropped = std::move(kept_.front());
      kept_.pop_front();
    }
  }
  // Destroyed without the lock: its destructor removes it.
  dropped.reset();
}

std::string ProcessMetrics::render() const {
  MetricText out;
  std::lock_guard<std::mutex> lock(mutex_);
  for (const MetricSource* s : sources_) s->collect(out);
  return out.text();
}

int ProcessMetrics::servingPort() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return server_ ? server_->port() : 0;
}

void ProcessMetrics::stopAtExit() {
  ProcessMetrics& self = instance();
  std::unique_ptr<MetricsHttpServer> stopping;
  {
    std::lock_guard<std::mutex> lock(self.mutex_);
    stopping = std::move(self.server_);
  }
}

}  // namespace chorus::metrics
