#include "torch_types.h"

#include <c10/util/Exception.h>
#include <torch/version.h>

namespace chorus_torch {

chorusDataType_t chorusTypeOf(const at::Tensor& t, const char* call) {
  switch (t.scalar_type()) {
    case at::kFloat: return chorusFloat32;
    case at::kDouble: return chorusFloat64;
    case at::kHalf: return chorusFloat16;
    case at::kBFloat16: return chorusBfloat16;
    case at::kChar: return chorusInt8;
    case at::kByte: return chorusUint8;
    case at::kBool: return chorusUint8;
    case at::kInt: return chorusInt32;
    case at::kLong: return chorusInt64;
// torch has float8 tensors from 2.1 on (the e4m3 one is "fn": no infinity, NaN S.1111.111, which is chorus's e4m3).
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
    case at::kFloat8_e4m3fn:
      return chorusFloat8e4m3;
    case at::kFloat8_e5m2:
      return chorusFloat8e5m2;
#endif
    default: break;
  }
  TORCH_CHECK(false, "ProcessGroupChorus: ", call, ": tensors of dtype ", t.scalar_type(),
              " are not supported (Chorus has float32/64, float16, bfloat16, float8_e4m3fn/e5m2 from torch 2.1, int8, "
              "uint8, int32, int64 and bool)");
}

chorusRedOp_t chorusOpOf(const c10d::ReduceOp& op, const at::Tensor& t, const char* call) {
  const bool boolean = t.scalar_type() == at::kBool;
  switch (static_cast<c10d::ReduceOp::RedOpType>(op)) {
    case c10d::ReduceOp::SUM: return boolean ? chorusMax : chorusSum;
    case c10d::ReduceOp::PRODUCT: return boolean ? chorusMin : chorusProd;
    case c10d::ReduceOp::MIN: return chorusMin;
    case c10d::ReduceOp::MAX: return chorusMax;
    case c10d::ReduceOp::AVG:
      TORCH_CHECK(!boolean, "ProcessGroupChorus: ", call, ": AVG of bool tensors is not defined");
      return chorusAvg;
    case c10d::ReduceOp::BAND: return chorusBand;
    case c10d::ReduceOp::BOR: return chorusBor;
    case c10d::ReduceOp::BXOR: return chorusBxor;
    default: break;
  }
  TORCH_CHECK(false, "ProcessGroupChorus: ", call, ": reduce op ", static_cast<int>(static_cast<c10d::ReduceOp::RedOpType>(op)),
              " is not supported (PREMUL_SUM is NCCL's)");
}

}  // namespace chorus_torch
