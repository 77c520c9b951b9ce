// How torch's types map onto Chorus's: tensor dtypes onto chorusDataType_t, c10d's ReduceOp onto chorusRedOp_t.
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include "chorus/chorus.h"

namespace chorus_torch {

// The Chorus datatype of `t`'s elements; throws (naming `call`) for a dtype Chorus has no type for.
chorusDataType_t chorusTypeOf(const at::Tensor& t, const char* call);
// The Chorus op for `op` on elements of `type` (bool: SUM is OR, PRODUCT is AND, as Gloo does); throws for an op
// Chorus lacks (PREMUL_SUM) or one the type cannot take.
chorusRedOp_t chorusOpOf(const c10d::ReduceOp& op, const at::Tensor& t, const char* call);

}  // namespace chorus_torch
