// Runs a scope on a chosen CUDA device and gives the thread its previous device back afterwards, so that a
// collective launched from a user's thread (or a progress thread) uses the buffers' GPU without leaving a changed
// current device behind.
#pragma once

#include <string>

namespace chorus {

class ScopedCudaDevice {
 public:
  // Makes `device` current on this thread until destruction; a negative device changes nothing. Throws
  // chorusUnhandledCudaError, naming `context`, when CUDA refuses (no driver, no such device, no CUDA build).
  ScopedCudaDevice(int device, const std::string& context);
  // Restores the device that was current before (errors ignored: a destructor cannot report them).
  ~ScopedCudaDevice();
  ScopedCudaDevice(const ScopedCudaDevice&) = delete;
  ScopedCudaDevice& operator=(const ScopedCudaDevice&) = delete;

 private:
  int previous_ = -1;  // -1: nothing to restore
};

}  // namespace chorus
