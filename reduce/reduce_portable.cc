// The portable kernel table: the generic loops, vectorized by the compiler for the baseline instruction set.
#define CHORUS_REDUCE_ISA portable
#include "reduce/elementwise_loops.h"
#include "reduce/fp8.h"
#include "reduce/half.h"
#include "reduce/reduce_kernels.h"

namespace chorus {
namespace {

// A narrow float widened to float for the reduction and rounded back: float16 and bfloat16 through half.h, fp8
// through fp8.h's branch-free conversions (a table of the 256 values would need dynamic initialization, and the
// table here is constant-initialized).
template <class B, float (*kDecode)(B), B (*kEncode)(float)>
struct NarrowCodec {
  using Bits = B;
  static float decode(B b) { return kDecode(b); }
  static B encode(float f) { return kEncode(f); }
};
using Float16Codec = NarrowCodec<uint16_t, halfToFloat, floatToHalf>;
using Bfloat16Codec = NarrowCodec<uint16_t, bfloat16ToFloat, floatToBfloat16>;
using Float8e4m3Codec = NarrowCodec<uint8_t, fp8e4m3ToFloat, floatToFp8e4m3>;
using Float8e5m2Codec = NarrowCodec<uint8_t, fp8e5m2ToFloat, floatToFp8e5m2>;

constexpr ReduceKernelTable makePortableTable() {
  ReduceKernelTable table{};
  table.name = "portable";
  portable::fillNativeTypes(table);
  portable::fillWidenedType<Float16Codec>(table, chorusFloat16);
  portable::fillWidenedType<Bfloat16Codec>(table, chorusBfloat16);
  portable::fillWidenedType<Float8e4m3Codec>(table, chorusFloat8e4m3);
  portable::fillWidenedType<Float8e5m2Codec>(table, chorusFloat8e5m2);
  return table;
}

// Constant-initialized: usable from any static initializer, no guard on the hot path.
constexpr ReduceKernelTable kPortableTable = makePortableTable();

}  // namespace

const ReduceKernelTable& portableReduceKernels() { return kPortableTable; }

}  // namespace chorus
