// Window buffers for the window tests: std::vector storage from chorusMemAlloc (memory the host's other processes
// map: puts into it are the sender's copy) when windowMemAlloc() is on, else from the heap. Switch it only while no
// such vector is alive.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <vector>

#include "chorus/chorus.h"

namespace chorus::test {

inline bool& windowMemAlloc() {
  static bool on = false;
  return on;
}

template <class T>
struct WindowAllocator {
  using value_type = T;
  WindowAllocator() = default;
  template <class U>
  WindowAllocator(const WindowAllocator<U>&) {}
  T* allocate(size_t n) {
    if (!windowMemAlloc()) return std::allocator<T>().allocate(n);
    void* p = nullptr;
    if (chorusMemAlloc(&p, n * sizeof(T) + (n == 0)) != chorusSuccess) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    if (!windowMemAlloc()) return std::allocator<T>().deallocate(p, n);
    chorusMemFree(p);
  }
  bool operator==(const WindowAllocator&) const { return true; }
};

template <class T>
using WindowVector = std::vector<T, WindowAllocator<T>>;

}  // namespace chorus::test
