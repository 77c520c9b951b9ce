// chorus-perf --device gpu: the send and receive buffers in device memory, each the image of a host GuardedBuffer
// (guard bands included) so that inputs, sentinels and checks are prepared and read on the host and copied over,
// and the stream the calls are enqueued on.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "perf/chorus_perf/guarded_buffer.h"

namespace chorus::perf {

class DeviceMirror {
 public:
  // The process's device API with a new stream; nullptr with *why set when there is none (no CUDA build, no GPU,
  // or a chorus-perf linked against the shared library, whose device API is internal).
  static std::unique_ptr<DeviceMirror> open(std::string* why);
  ~DeviceMirror();
  DeviceMirror(const DeviceMirror&) = delete;
  DeviceMirror& operator=(const DeviceMirror&) = delete;

  // Device images of the two host buffers (same capacities, same guard bands); false when memory is short.
  bool allocate(const GuardedBuffer& hostSend, const GuardedBuffer& hostRecv, std::string* why);
  // The first usable byte of each image (GuardedBuffer::kGuardBytes past its start), a device pointer.
  std::byte* send() const { return send_ + GuardedBuffer::kGuardBytes; }
  std::byte* recv() const { return recv_ + GuardedBuffer::kGuardBytes; }
  // Copies both host buffers, guards included, to their images, and waits.
  void upload(const GuardedBuffer& hostSend, const GuardedBuffer& hostRecv);
  // Copies both images back into the host buffers, and waits.
  void download(GuardedBuffer& hostSend, GuardedBuffer& hostRecv);
  // The stream the collectives go on (a cudaStream_t).
  void* stream() const { return stream_; }
  // Waits until everything enqueued on the stream has run.
  void synchronize();
  // "cuda" or "emulated".
  const char* apiName() const;

 private:
  DeviceMirror() = default;
  std::byte* send_ = nullptr;
  std::byte* recv_ = nullptr;
  size_t sendBytes_ = 0, recvBytes_ = 0;  // whole images, guards included
  void* stream_ = nullptr;
};

}  // namespace chorus::perf
