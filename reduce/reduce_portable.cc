// The portable kernel table: the generic loops, vectorized by the compiler for the baseline instruction set.
#define CHORUS_REDUCE_ISA portable
#include "reduce/elementwise_loops.h"
#include "reduce/half.h"
#include "reduce/reduce_kernels.h"

namespace chorus {
namespace {

struct Float16Codec {
  static float decode(uint16_t h) { return halfToFloat(h); }
  static uint16_t encode(float f) { return floatToHalf(f); }
};

struct Bfloat16Codec {
  static float decode(uint16_t h) { return bfloat16ToFloat(h); }
  static uint16_t encode(float f) { return floatToBfloat16(f); }
};

constexpr ReduceKernelTable makePortableTable() {
  ReduceKernelTable table{};
  table.name = "portable";
  portable::fillNativeTypes(table);
  portable::fillWidenedType<Float16Codec>(table, chorusFloat16);
  portable::fillWidenedType<Bfloat16Codec>(table, chorusBfloat16);
  return table;
}

// Constant-initialized: usable from any static initializer, no guard on the hot path.
constexpr ReduceKernelTable kPortableTable = makePortableTable();

}  // namespace

const ReduceKernelTable& portableReduceKernels() { return kPortableTable; }

}  // namespace chorus
