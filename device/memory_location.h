// Where a buffer lives, as far as choosing a reducer and a copy engine is concerned.
#pragma once

namespace chorus {

enum class MemoryLocation {
  kHost,    // ordinary or CUDA-registered (pinned) host memory: the CPU reads and writes it directly
  kDevice,  // device memory, or managed memory (which the GPU kernels handle, wherever its pages are)
};

// Where `p` lives: kHost for NULL, for any host memory (registered or not), and whenever CUDA is unavailable;
// kDevice for cudaMalloc'd or managed memory. When `device` is not null and the answer is kDevice, *device is
// the ordinal of the GPU the memory belongs to (for managed memory: the one current when it was allocated).
// Throws chorusUnhandledCudaError if the runtime fails on a pointer it should know.
MemoryLocation locateBuffer(const void* p, int* device = nullptr);

// "host" or "device", for messages.
const char* memoryLocationName(MemoryLocation location);

}  // namespace chorus
