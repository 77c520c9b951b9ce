// A device allocation this process made (freed when dropped), mapped from another process through CUDA IPC (closed
// when dropped), or lent by an owner that outlives the holder (left alone): the staging rings of the IPC
// connection, owned without leaks on every error path.
#pragma once

#include <cstddef>
#include <utility>

#include "device/device_api.h"

namespace chorus {

class DeviceRegion {
 public:
  enum class Ownership {
    kAllocated,  // deviceAlloc'd here: deviceFree
    kMapped,     // ipcOpen'd here: ipcClose
    kBorrowed,   // lent by an owner that outlives this holder (tests pairing two ends in one process): left alone
  };

  DeviceRegion() = default;
  // Takes p as `ownership` says.
  DeviceRegion(DeviceApi& api, void* p, size_t bytes, Ownership ownership)
      : api_(&api), p_(p), bytes_(bytes), ownership_(ownership) {}
  ~DeviceRegion() { reset(); }
  DeviceRegion(DeviceRegion&& o) noexcept { *this = std::move(o); }
  DeviceRegion& operator=(DeviceRegion&& o) noexcept {
    if (this != &o) {
      reset();
      api_ = std::exchange(o.api_, nullptr);
      p_ = std::exchange(o.p_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
      ownership_ = o.ownership_;
    }
    return *this;
  }

  // The region's first byte (nullptr when empty), its size, and how it is held.
  char* data() const { return static_cast<char*>(p_); }
  size_t bytes() const { return bytes_; }
  Ownership ownership() const { return ownership_; }
  // Releases the region now; later calls do nothing. Failures are swallowed: it runs on teardown paths.
  void reset() noexcept {
    if (p_ == nullptr) return;
    try {
      if (ownership_ == Ownership::kMapped) {
        api_->ipcClose(p_);
      } else if (ownership_ == Ownership::kAllocated) {
        api_->deviceFree(p_);
      }
    } catch (...) {
      // Nothing better to do with a runtime that refuses to release during teardown.
    }
    p_ = nullptr;
    bytes_ = 0;
  }

 private:
  DeviceApi* api_ = nullptr;
  void* p_ = nullptr;
  size_t bytes_ = 0;
  Ownership ownership_ = Ownership::kAllocated;
};

}  // namespace chorus
