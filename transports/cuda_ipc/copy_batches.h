// Device copies on one stream, grouped into batches: the copies a progress step enqueues share one event recorded
// after them, so that a burst of small pieces costs one event record and one poll, not one each. A fixed pool of
// events bounds the batches in flight; one stream runs them in order, so they finish in order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "core/error.h"
#include "device/device_api.h"

namespace chorus {

class CopyBatches {
 public:
  // Makes the pool of `events` events; throws what createEvent throws (those made so far are kept for release()).
  void create(DeviceApi& api, size_t events) {
    for (size_t i = 0; i < events; ++i) {
      free_.push_back(api.createEvent());
      all_.push_back(free_.back());
    }
  }
  // Destroys every event, swallowing failures (teardown). The stream must have been drained first.
  void release(DeviceApi& api) noexcept {
    for (DeviceEvent e : all_) {
      try {
        api.destroyEvent(e);
      } catch (...) {
        // Teardown: nothing can be done about a runtime that refuses to release.
      }
    }
    all_.clear();
    free_.clear();
    inFlight_.clear();
  }

  // True when an event is free for the next batch.
  bool canRecord() const { return !free_.empty(); }
  // The number the next recorded batch gets (batches are numbered from 0 in recording order).
  uint64_t nextNumber() const { return recorded_; }
  // Batches recorded whose end has not been seen.
  size_t inFlight() const { return inFlight_.size(); }
  // Records batch nextNumber()'s event on s, after the copies just enqueued there. Requires canRecord().
  void record(DeviceApi& api, DeviceStream s) {
    if (free_.empty()) throwInternal("CopyBatches::record without a free event");
    api.recordEvent(free_.back(), s);
    inFlight_.push_back(free_.back());
    free_.pop_back();
    ++recorded_;
  }
  // True once batch n has run: polls the oldest batches in order, freeing their events. Throws what eventDone
  // throws (a failed copy).
  bool reached(DeviceApi& api, uint64_t n) {
    while (completed_ <= n) {
      if (inFlight_.empty()) throwInternal("CopyBatches::reached on a batch never recorded");
      if (!api.eventDone(inFlight_.front())) return false;
      free_.push_back(inFlight_.front());
      inFlight_.pop_front();
      ++completed_;
    }
    return true;
  }

 private:
  std::vector<DeviceEvent> all_, free_;
  std::deque<DeviceEvent> inFlight_;  // oldest first
  uint64_t recorded_ = 0, completed_ = 0;
};

}  // namespace chorus
