// Host reduction kernel throughput: GB/s counting the bytes a reduction must move (two reads and one write per
// element), per datatype, for buffers from L1-sized to far beyond the last-level cache.
//
//   reduce_bench --benchmark_filter=float32      # one type
//   reduce_bench --benchmark_filter=64MiB        # only the memory-bound size
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "core/datatype.h"
#include "reduce/fp8.h"
#include "reduce/half.h"
#include "reduce/reduce_kernels.h"
#include "reduce/reducer.h"

namespace chorus {
namespace {

constexpr int64_t kSizes[] = {4 << 10, 256 << 10, 8 << 20, 64 << 20};  // bytes per buffer

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using AlignedBuffer = std::unique_ptr<char, FreeDeleter>;

// A 64-byte aligned buffer of `count` elements, every page touched (so no page faults in the timed loop), holding
// ordinary values: finite floats near 1 so that no operand is ever subnormal (which would be slow) or NaN.
AlignedBuffer makeBuffer(chorusDataType_t type, size_t count, int seed) {
  const size_t size = typeSize(type);
  AlignedBuffer buffer(static_cast<char*>(std::aligned_alloc(64, (count * size + 63) / 64 * 64)));
  if (!buffer) std::abort();
  char* p = buffer.get();
  for (size_t i = 0; i < count; ++i) {
    const float value = 1.0f + static_cast<float>((i * 7 + seed) % 64) / 64.0f;
    switch (type) {
      case chorusFloat16: {
        const uint16_t h = floatToHalf(value);
        std::memcpy(p + i * 2, &h, 2);
        break;
      }
      case chorusBfloat16: {
        const uint16_t h = floatToBfloat16(value);
        std::memcpy(p + i * 2, &h, 2);
        break;
      }
      case chorusFloat8e4m3:
        p[i] = static_cast<char>(floatToFp8e4m3(value));
        break;
      case chorusFloat8e5m2:
        p[i] = static_cast<char>(floatToFp8e5m2(value));
        break;
      case chorusFloat32:
        std::memcpy(p + i * 4, &value, 4);
        break;
      case chorusFloat64: {
        const double d = value;
        std::memcpy(p + i * 8, &d, 8);
        break;
      }
      default: {
        const uint64_t v = i * 2654435761u + seed;
        std::memcpy(p + i * size, &v, size);  // the low bytes, little-endian
      }
    }
  }
  return buffer;
}

enum class Placement { kSeparate, kInPlace };

// Times dst = a op b through `table`, where null means hostReducer() (the table chosen for this CPU).
void benchReduce(benchmark::State& state, size_t bytes, chorusDataType_t type, chorusRedOp_t op, Placement placement,
                 const ReduceKernelTable* table) {
  const size_t count = bytes / typeSize(type);
  AlignedBuffer a = makeBuffer(type, count, 1), b = makeBuffer(type, count, 2), d = makeBuffer(type, count, 3);
  char* dst = placement == Placement::kInPlace ? a.get() : d.get();
  Reducer& reducer = hostReducer();
  for (auto _ : state) {
    if (table != nullptr) {
      table->reduce[type][op](dst, a.get(), b.get(), count);
    } else {
      reducer.reduce(dst, a.get(), b.get(), count, type, op);
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(3 * bytes));
  state.SetLabel(table != nullptr ? table->name : activeReduceKernels().name);
}

// Times the average kernel (one read and one write per element). It divides by 1, which costs what any divisor
// costs but leaves the data as it was: repeated division by n would drive floats into slow subnormals.
// (hostReducer().finishAverage returns at once for one rank, so the kernel is called through the table.)
void benchAverage(benchmark::State& state, size_t bytes, chorusDataType_t type) {
  const size_t count = bytes / typeSize(type);
  AlignedBuffer data = makeBuffer(type, count, 1);
  const ReduceKernelTable& table = activeReduceKernels();
  for (auto _ : state) {
    table.average[type](data.get(), count, 1);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(2 * bytes));
  state.SetLabel(table.name);
}

// The yardstick: memcpy of the same size, also counting its read and its write.
void benchMemcpy(benchmark::State& state, size_t bytes) {
  AlignedBuffer src = makeBuffer(chorusUint8, bytes, 1), dst = makeBuffer(chorusUint8, bytes, 2);
  for (auto _ : state) {
    std::memcpy(dst.get(), src.get(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(2 * bytes));
}

std::string sizeName(int64_t bytes) {
  return bytes >= (1 << 20) ? std::to_string(bytes >> 20) + "MiB" : std::to_string(bytes >> 10) + "KiB";
}

// Registers "<name>/<size>" for every size, e.g. "sum/float32/64MiB", timed by the wall clock (memory-bound
// work: CPU time would hide stalls).
template <typename Function, typename... Args>
void addSizes(const std::string& name, Function function, Args... args) {
  for (int64_t bytes : kSizes) {
    benchmark::RegisterBenchmark((name + "/" + sizeName(bytes)).c_str(), function, static_cast<size_t>(bytes), args...)
        ->UseRealTime();
  }
}

void registerAll() {
  addSizes("memcpy", benchMemcpy);
  for (int t = 0; t < chorusNumTypes; ++t) {
    const auto type = static_cast<chorusDataType_t>(t);
    addSizes(std::string("sum/") + typeName(type), benchReduce, type, chorusSum, Placement::kSeparate, nullptr);
  }
  addSizes("max/float32", benchReduce, chorusFloat32, chorusMax, Placement::kSeparate, nullptr);
  addSizes("sum_in_place/float32", benchReduce, chorusFloat32, chorusSum, Placement::kInPlace, nullptr);
  // The baseline-ISA table, to show what the AVX2 dispatch buys (the same table when the CPU has no AVX2).
  for (chorusDataType_t type : {chorusFloat32, chorusFloat16, chorusBfloat16, chorusFloat8e4m3, chorusFloat8e5m2}) {
    addSizes(std::string("sum_portable/") + typeName(type), benchReduce, type, chorusSum, Placement::kSeparate,
             &portableReduceKernels());
  }
  addSizes("average/float32", benchAverage, chorusFloat32);
  addSizes("average/int32", benchAverage, chorusInt32);
  addSizes("average/float8e4m3", benchAverage, chorusFloat8e4m3);
}

}  // namespace
}  // namespace chorus

int main(int argc, char** argv) {
  chorus::registerAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
