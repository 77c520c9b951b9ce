// The portable kernel table: the generic loops, vectorized by the compiler for the baseline instruction set.
#define CHORUS_REDUCE_ISA portable
#include "reduce/elementwise_loops.h"
#include "reduce/fp8.h"
#include "reduce/half.h"
#include "reduce/reduce_kernels.h"

namespace chorus {
namespace {

struct Float16Codec {
  using Bits = uint16_t;
  static float decode(uint16_t h) { return halfToFloat(h); }
  static uint16_t encode(float f) { return floatToHalf(f); }
};

struct Bfloat16Codec {
  using Bits = uint16_t;
  static float decode(uint16_t h) { return bfloat16ToFloat(h); }
  static uint16_t encode(float f) { return floatToBfloat16(f); }
};

// fp8 through fp8.h's branch-free conversions (a table of the 256 values would need dynamic initialization,
// and the table here is constant-initialized).
struct Float8e4m3Codec {
  using Bits = uint8_t;
  static float decode(uint8_t b) { return fp8e4m3ToFloat(b); }
  static uint8_t encode(float f) { return floatToFp8e4m3(f); }
};

struct Float8e5m2Codec {
  using Bits = uint8_t;
  static float decode(uint8_t b) { return fp8e5m2ToFloat(b); }
  static uint8_t encode(float f) { return floatToFp8e5m2(f); }
};

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
