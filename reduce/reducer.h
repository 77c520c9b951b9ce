// Element-wise reduction for every datatype x op; the algorithms call it without knowing where memory lives.
#pragma once

#include <cstddef>

#include "chorus/chorus.h"

namespace chorus {

class Reducer {
 public:
  virtual ~Reducer() = default;
  // dst[i] = a[i] op b[i] for i < count. dst may alias a or b. chorusAvg reduces as chorusSum (see finishAverage).
  virtual void reduce(void* dst, const void* a, const void* b, size_t count, chorusDataType_t type,
                      chorusRedOp_t op) = 0;
  // data[i] /= nranks (integers truncate toward zero; float16/bfloat16/fp8 divide in float, round to nearest even).
  virtual void finishAverage(void* data, size_t count, chorusDataType_t type, int nranks) = 0;
};

// The host-memory reducer: vectorized, with runtime dispatch to AVX2/F16C when the CPU has them.
Reducer& hostReducer();

}  // namespace chorus
