// chorusMemAlloc / chorusMemFree (NCCL's ncclMemAlloc / ncclMemFree): host memory that windows can map into the
// other processes of the host (src/comm/shared_allocations.h).
#include <string>

#include "chorus/chorus.h"
#include "src/api/api_errors.h"
#include "src/comm/shared_allocations.h"

using chorus::api::fail;
using chorus::api::guarded;

chorusResult_t chorusMemAlloc(void** ptr, size_t size) {
  if (!ptr) return fail(nullptr, chorusInvalidArgument, "chorusMemAlloc: ptr is NULL");
  *ptr = nullptr;
  if (size == 0) return fail(nullptr, chorusInvalidArgument, "chorusMemAlloc: size is 0");
  return guarded(nullptr, "chorusMemAlloc", [&] { *ptr = chorus::allocateShared(size); });
}

chorusResult_t chorusMemFree(void* ptr) {
  if (!ptr) return chorusSuccess;
  if (!chorus::freeShared(ptr)) {
    return fail(nullptr, chorusInvalidArgument,
                "chorusMemFree: " + std::to_string(reinterpret_cast<uintptr_t>(ptr)) +
                    " is not an address chorusMemAlloc returned (or it was freed already)");
  }
  return chorusSuccess;
}
