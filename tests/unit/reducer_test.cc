// Host reduction kernels: every datatype x op against a scalar reference, for each kernel table this CPU can run
// and through hostReducer(); odd counts, misaligned and aliased buffers, guard bytes around every output.
#include "algorithms/reduce/reducer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "algorithms/reduce/half.h"
#include "algorithms/reduce/reduce_kernels.h"
#include "src/core/datatype.h"
#include "src/core/error.h"

namespace chorus {
namespace {

constexpr chorusDataType_t kAllTypes[] = {chorusInt8,   chorusUint8,   chorusInt32,    chorusUint32,  chorusInt64,
                                          chorusUint64, chorusFloat16, chorusBfloat16, chorusFloat32, chorusFloat64};
constexpr chorusRedOp_t kAllOps[] = {chorusSum, chorusProd, chorusMax, chorusMin, chorusAvg};
constexpr size_t kCounts[] = {0, 1, 7, 31, 33, 1000, 4097};
// Offsets in elements of dst, a, b from a 64-byte boundary: aligned, all misaligned, mixed.
constexpr std::array<size_t, 3> kElementOffsets[] = {{0, 0, 0}, {1, 1, 1}, {1, 0, 1}, {0, 1, 0}};

// ---- The scalar reference, written independently of the kernels -------------------------------------------

// Integers: exact arithmetic in 128 bits, then wrapped to the type.
template <typename T>
T referenceInteger(T a, T b, chorusRedOp_t op) {
  using Wide = std::conditional_t<std::is_signed_v<T>, __int128, unsigned __int128>;
  const Wide x = a, y = b;
  const Wide r = op == chorusProd ? x * y : op == chorusMax ? std::max(x, y) : op == chorusMin ? std::min(x, y) : x + y;
  return static_cast<T>(static_cast<std::make_unsigned_t<T>>(static_cast<unsigned __int128>(r)));
}

// IEEE fmax/fmin (NaN is missing data), ties (+0 vs -0 included) give b: the documented choice.
template <typename F>
F referenceMaxMin(F a, F b, bool isMax) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  if (a == b) return b;
  return (a > b) == isMax ? a : b;
}

// Floats in double, rounded once: for + and * that is exactly the correctly rounded float result. Doubles natively.
template <typename F>
F referenceFloat(F a, F b, chorusRedOp_t op) {
  if (op == chorusMax || op == chorusMin) return referenceMaxMin(a, b, op == chorusMax);
  const double x = a, y = b;
  return static_cast<F>(op == chorusProd ? x * y : x + y);
}

// One datatype, type-erased for the table-driven tests below.
struct TypeCase {
  size_t size;
  // Fills n elements with a mix of ordinary values and edge cases (for floats: NaN, infinities, +-0, subnormals).
  std::function<void(void* p, size_t n, std::mt19937_64& rng)> fill;
  std::function<void(void* dst, const void* a, const void* b, size_t n, chorusRedOp_t op)> reduce;
  std::function<void(void* data, size_t n, int nranks)> average;
  bool isFloat;
  int nanCompareBits;  // element width whose all-ones exponent means NaN, for comparing NaNs loosely
};

template <typename T>
T loadAt(const void* p, size_t i) {
  T v;
  std::memcpy(&v, static_cast<const char*>(p) + i * sizeof(T), sizeof(T));
  return v;
}

template <typename T>
void storeAt(void* p, size_t i, T v) {
  std::memcpy(static_cast<char*>(p) + i * sizeof(T), &v, sizeof(T));
}

template <typename T>
TypeCase integerCase() {
  TypeCase c;
  c.size = sizeof(T);
  c.fill = [](void* p, size_t n, std::mt19937_64& rng) {
    for (size_t i = 0; i < n; ++i) {
      // Mostly full-range bits (wrap-around everywhere); some small values so that max/min see ties and signs.
      const uint64_t bits = rng();
      storeAt<T>(p, i, static_cast<T>(i % 5 == 0 ? static_cast<T>(static_cast<int64_t>(bits % 7) - 3) : bits));
    }
  };
  c.reduce = [](void* dst, const void* a, const void* b, size_t n, chorusRedOp_t op) {
    for (size_t i = 0; i < n; ++i) storeAt<T>(dst, i, referenceInteger(loadAt<T>(a, i), loadAt<T>(b, i), op));
  };
  c.average = [](void* data, size_t n, int nranks) {
    // C++ division truncates toward zero; done in 128 bits so that no value or rank count can overflow it.
    for (size_t i = 0; i < n; ++i) {
      const __int128 x = loadAt<T>(data, i);
      storeAt<T>(data, i, static_cast<T>(x / nranks));
    }
  };
  c.isFloat = false;
  c.nanCompareBits = 0;
  return c;
}

template <typename F>
F randomFloat(std::mt19937_64& rng, size_t i) {
  using Bits = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
  const uint64_t r = rng();
  switch (i % 16) {
    case 0:
      return static_cast<F>(-0.0);
    case 1:
      return static_cast<F>(0.0);
    case 2:
      return std::numeric_limits<F>::quiet_NaN();
    case 3:
      return (r & 1) ? std::numeric_limits<F>::infinity() : -std::numeric_limits<F>::infinity();
    case 4:
      return std::numeric_limits<F>::denorm_min() * static_cast<F>(r % 1000);
    case 5: {  // any bit pattern: huge, tiny, signalling NaNs
      Bits bits = static_cast<Bits>(r);
      F f;
      std::memcpy(&f, &bits, sizeof(f));
      return f;
    }
    default:
      return static_cast<F>(std::ldexp(static_cast<double>(r % 2000000) - 1e6, static_cast<int>(r >> 58) - 40));
  }
}

template <typename F>
TypeCase floatCase() {
  TypeCase c;
  c.size = sizeof(F);
  c.fill = [](void* p, size_t n, std::mt19937_64& rng) {
    for (size_t i = 0; i < n; ++i) storeAt<F>(p, i, randomFloat<F>(rng, rng() % 64));
  };
  c.reduce = [](void* dst, const void* a, const void* b, size_t n, chorusRedOp_t op) {
    for (size_t i = 0; i < n; ++i) {
      const F x = loadAt<F>(a, i), y = loadAt<F>(b, i);
      storeAt<F>(dst, i, referenceFloat(x, y, op));
    }
  };
  c.average = [](void* data, size_t n, int nranks) {
    for (size_t i = 0; i < n; ++i) storeAt<F>(data, i, loadAt<F>(data, i) / static_cast<F>(nranks));
  };
  c.isFloat = true;
  c.nanCompareBits = sizeof(F) * 8;
  return c;
}

// float16 / bfloat16: widen exactly, reduce as float, round back once to nearest even.
TypeCase narrowCase(float (*decode)(uint16_t), uint16_t (*encode)(float)) {
  TypeCase c;
  c.size = 2;
  c.fill = [encode](void* p, size_t n, std::mt19937_64& rng) {
    for (size_t i = 0; i < n; ++i) {
      // Half the elements are arbitrary bit patterns (NaNs, infinities, subnormals), half ordinary values.
      const uint64_t r = rng();
      storeAt<uint16_t>(p, i, (r & 1) ? static_cast<uint16_t>(r >> 8) : encode(randomFloat<float>(rng, 6 + r % 10)));
    }
  };
  c.reduce = [decode, encode](void* dst, const void* a, const void* b, size_t n, chorusRedOp_t op) {
    for (size_t i = 0; i < n; ++i) {
      storeAt<uint16_t>(
          dst, i, encode(referenceFloat<float>(decode(loadAt<uint16_t>(a, i)), decode(loadAt<uint16_t>(b, i)), op)));
    }
  };
  c.average = [decode, encode](void* data, size_t n, int nranks) {
    for (size_t i = 0; i < n; ++i) {
      storeAt<uint16_t>(data, i,
                        encode(static_cast<float>(static_cast<double>(decode(loadAt<uint16_t>(data, i))) / nranks)));
    }
  };
  c.isFloat = true;
  c.nanCompareBits = 16;
  return c;
}

const TypeCase& typeCase(chorusDataType_t type) {
  static const std::vector<TypeCase> cases = {integerCase<int8_t>(),
                                              integerCase<uint8_t>(),
                                              integerCase<int32_t>(),
                                              integerCase<uint32_t>(),
                                              integerCase<int64_t>(),
                                              integerCase<uint64_t>(),
                                              narrowCase(halfToFloat, floatToHalf),
                                              narrowCase(bfloat16ToFloat, floatToBfloat16),
                                              floatCase<float>(),
                                              floatCase<double>()};
  return cases[type];
}

// Whether element i of expected and actual are the same: equal bits, or NaN in both (a NaN's payload depends
// on operand order, which the compiler may pick differently per instruction set).
bool sameElement(const TypeCase& c, chorusDataType_t type, const void* expected, const void* actual, size_t i) {
  const char* e = static_cast<const char*>(expected) + i * c.size;
  const char* a = static_cast<const char*>(actual) + i * c.size;
  if (std::memcmp(e, a, c.size) == 0) return true;
  if (!c.isFloat) return false;
  auto isNan = [&](const char* p) {
    switch (type) {
      case chorusFloat16:
        return std::isnan(halfToFloat(loadAt<uint16_t>(p, 0)));
      case chorusBfloat16:
        return std::isnan(bfloat16ToFloat(loadAt<uint16_t>(p, 0)));
      case chorusFloat32:
        return std::isnan(loadAt<float>(p, 0));
      default:
        return std::isnan(loadAt<double>(p, 0));
    }
  };
  return isNan(e) && isNan(a);
}

std::string hexElement(const void* p, size_t i, size_t size) {
  static const char* digits = "0123456789abcdef";
  std::string s = "0x";
  for (size_t k = size; k-- > 0;) {
    const auto byte = static_cast<unsigned char>(static_cast<const char*>(p)[i * size + k]);
    s += digits[byte >> 4];
    s += digits[byte & 15];
  }
  return s;
}

// Index of the first element that differs, or n.
size_t firstMismatch(chorusDataType_t type, const void* expected, const void* actual, size_t n) {
  const TypeCase& c = typeCase(type);
  for (size_t i = 0; i < n; ++i) {
    if (!sameElement(c, type, expected, actual, i)) return i;
  }
  return n;
}

// ---- Buffers with guard bytes, at a chosen byte offset from a 64-byte boundary ------------------------------

class GuardedBuffer {
 public:
  GuardedBuffer(size_t bytes, size_t offset) : bytes_(bytes), storage_(bytes + offset + 2 * kGuard + 64, kPattern) {
    const auto base = reinterpret_cast<uintptr_t>(storage_.data());
    const size_t lead = (64 - base % 64) % 64;
    data_ = storage_.data() + lead + kGuard + offset;
  }
  char* data() { return data_; }
  // The bytes around [data, data + bytes) are as they were filled.
  bool guardsIntact() const {
    for (const char* p = storage_.data(); p < data_; ++p) {
      if (*p != kPattern) return false;
    }
    for (const char* p = data_ + bytes_; p < storage_.data() + storage_.size(); ++p) {
      if (*p != kPattern) return false;
    }
    return true;
  }

 private:
  static constexpr size_t kGuard = 64;
  static constexpr char kPattern = static_cast<char>(0xa5);
  size_t bytes_;
  std::vector<char> storage_;
  char* data_;
};

// ---- The kernel sets under test ---------------------------------------------------------------------------

struct KernelSet {
  std::string name;
  std::function<void(void*, const void*, const void*, size_t, chorusDataType_t, chorusRedOp_t)> reduce;
  std::function<void(void*, size_t, chorusDataType_t, int)> average;
};

KernelSet tableSet(const ReduceKernelTable& table) {
  return {table.name,
          [&table](void* d, const void* a, const void* b, size_t n, chorusDataType_t t, chorusRedOp_t op) {
            table.reduce[t][op == chorusAvg ? chorusSum : op](d, a, b, n);
          },
          [&table](void* d, size_t n, chorusDataType_t t, int nranks) { table.average[t](d, n, nranks); }};
}

bool avx2Usable() { return avx2ReduceKernels() != nullptr && cpuHasAvx2Kernels(); }

enum class Kernels { kPortable, kAvx2, kHostReducer };

KernelSet kernelSet(Kernels which) {
  switch (which) {
    case Kernels::kPortable:
      return tableSet(portableReduceKernels());
    case Kernels::kAvx2:
      return tableSet(*avx2ReduceKernels());
    default:
      return {"hostReducer",
              [](void* d, const void* a, const void* b, size_t n, chorusDataType_t t, chorusRedOp_t op) {
                hostReducer().reduce(d, a, b, n, t, op);
              },
              [](void* d, size_t n, chorusDataType_t t, int nranks) { hostReducer().finishAverage(d, n, t, nranks); }};
  }
}

class ReducerKernelTest : public ::testing::TestWithParam<Kernels> {
 protected:
  void SetUp() override {
    if (GetParam() == Kernels::kAvx2 && !avx2Usable()) GTEST_SKIP() << "no AVX2+F16C kernels on this build/CPU";
    kernels_ = kernelSet(GetParam());
  }
  KernelSet kernels_;
};

// How dst, a and b share buffers: all distinct, dst == a, dst == b, a == b (dst apart), dst == a == b.
enum class Alias { kNone, kDstIsA, kDstIsB, kSameInputs, kAllSame };

TEST_P(ReducerKernelTest, EveryTypeAndOpMatchesReference) {
  std::mt19937_64 rng(42);
  for (chorusDataType_t type : kAllTypes) {
    const TypeCase& c = typeCase(type);
    for (chorusRedOp_t op : kAllOps) {
      for (size_t count : kCounts) {
        for (Alias alias : {Alias::kNone, Alias::kDstIsA, Alias::kDstIsB, Alias::kSameInputs, Alias::kAllSame}) {
          for (const auto& offsets : kElementOffsets) {
            const size_t bytes = count * c.size;
            GuardedBuffer a(bytes, offsets[1] * c.size), b(bytes, offsets[2] * c.size);
            GuardedBuffer separate(bytes, offsets[0] * c.size);
            c.fill(a.data(), count, rng);
            c.fill(b.data(), count, rng);
            const bool sameInputs = alias == Alias::kSameInputs || alias == Alias::kAllSame;
            const char* second = sameInputs ? a.data() : b.data();
            std::vector<char> expected(bytes + 1);
            c.reduce(expected.data(), a.data(), second, count, op);
            char* dst = alias == Alias::kDstIsA || alias == Alias::kAllSame ? a.data()
                        : alias == Alias::kDstIsB                           ? b.data()
                                                                            : separate.data();
            kernels_.reduce(dst, a.data(), second, count, type, op);
            const size_t bad = firstMismatch(type, expected.data(), dst, count);
            ASSERT_EQ(bad, count) << kernels_.name << " " << typeName(type) << " " << opName(op) << " count " << count
                                  << " alias " << static_cast<int>(alias) << " offsets " << offsets[0] << offsets[1]
                                  << offsets[2] << ": element " << bad << " is " << hexElement(dst, bad, c.size)
                                  << ", expected " << hexElement(expected.data(), bad, c.size);
            ASSERT_TRUE(a.guardsIntact() && b.guardsIntact() && separate.guardsIntact())
                << kernels_.name << " " << typeName(type) << " " << opName(op) << " count " << count
                << ": wrote outside the buffer";
          }
        }
      }
    }
  }
}

// Buffers that are not even aligned to their element size (a byte offset) still work.
TEST_P(ReducerKernelTest, ByteMisalignedBuffers) {
  std::mt19937_64 rng(7);
  for (chorusDataType_t type :
       {chorusInt32, chorusInt64, chorusFloat16, chorusBfloat16, chorusFloat32, chorusFloat64}) {
    const TypeCase& c = typeCase(type);
    for (size_t count : {size_t{33}, size_t{1000}}) {
      GuardedBuffer a(count * c.size, 1), b(count * c.size, 3), d(count * c.size, 5);
      c.fill(a.data(), count, rng);
      c.fill(b.data(), count, rng);
      std::vector<char> expected(count * c.size);
      c.reduce(expected.data(), a.data(), b.data(), count, chorusSum);
      kernels_.reduce(d.data(), a.data(), b.data(), count, type, chorusSum);
      EXPECT_EQ(firstMismatch(type, expected.data(), d.data(), count), count) << typeName(type);
      kernels_.average(d.data(), count, type, 3);
      c.average(expected.data(), count, 3);
      EXPECT_EQ(firstMismatch(type, expected.data(), d.data(), count), count) << typeName(type);
      EXPECT_TRUE(a.guardsIntact() && b.guardsIntact() && d.guardsIntact()) << typeName(type);
    }
  }
}

TEST_P(ReducerKernelTest, FinishAverageMatchesReference) {
  std::mt19937_64 rng(3);
  for (chorusDataType_t type : kAllTypes) {
    const TypeCase& c = typeCase(type);
    for (int nranks : {1, 2, 3, 7, 1000}) {
      for (size_t count : kCounts) {
        for (size_t offset : {0, 1}) {
          GuardedBuffer data(count * c.size, offset * c.size);
          c.fill(data.data(), count, rng);
          std::vector<char> expected(data.data(), data.data() + count * c.size);
          c.average(expected.data(), count, nranks);
          kernels_.average(data.data(), count, type, nranks);
          const size_t bad = firstMismatch(type, expected.data(), data.data(), count);
          ASSERT_EQ(bad, count) << kernels_.name << " " << typeName(type) << " / " << nranks << " count " << count
                                << ": element " << bad << " is " << hexElement(data.data(), bad, c.size)
                                << ", expected " << hexElement(expected.data(), bad, c.size);
          ASSERT_TRUE(data.guardsIntact()) << typeName(type) << " count " << count;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Reducer, ReducerKernelTest,
                         ::testing::Values(Kernels::kPortable, Kernels::kAvx2, Kernels::kHostReducer),
                         [](const ::testing::TestParamInfo<Kernels>& info) {
                           switch (info.param) {
                             case Kernels::kPortable:
                               return std::string("Portable");
                             case Kernels::kAvx2:
                               return std::string("Avx2");
                             default:
                               return std::string("HostReducer");
                           }
                         });

// ---- Hand-picked cases, through every kernel set ----------------------------------------------------------

std::vector<KernelSet> usableKernelSets() {
  std::vector<KernelSet> sets = {kernelSet(Kernels::kPortable), kernelSet(Kernels::kHostReducer)};
  if (avx2Usable()) sets.push_back(kernelSet(Kernels::kAvx2));
  return sets;
}

// Whether v, an element of `type`, is a NaN.
template <typename T>
bool isNanElement(chorusDataType_t type, T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  if constexpr (sizeof(T) == 2) return std::isnan(type == chorusFloat16 ? halfToFloat(v) : bfloat16ToFloat(v));
  return false;
}

// Reduces 301 copies of (a, b) in place, so that the pair goes through vector blocks and the scalar tail, and
// checks every result: equal to `expected`, or NaN when expected is NaN.
template <typename T>
void expectEvery(chorusDataType_t type, chorusRedOp_t op, T a, T b, T expected) {
  auto isNan = [type](T v) { return isNanElement(type, v); };
  for (const KernelSet& k : usableKernelSets()) {
    std::vector<T> x(301, a), y(301, b);
    k.reduce(x.data(), x.data(), y.data(), x.size(), type, op);
    for (size_t i = 0; i < x.size(); ++i) {
      if (isNan(expected) ? isNan(x[i]) : std::memcmp(&x[i], &expected, sizeof(T)) == 0) continue;
      ADD_FAILURE() << k.name << " " << typeName(type) << " " << opName(op) << "(" << +a << ", " << +b
                    << ") = " << +x[i] << " at " << i << ", expected " << +expected;
      return;
    }
  }
}

TEST(ReducerCases, IntegersWrapAround) {
  expectEvery<int8_t>(chorusInt8, chorusSum, 127, 1, -128);
  expectEvery<int8_t>(chorusInt8, chorusSum, -128, -1, 127);
  expectEvery<int8_t>(chorusInt8, chorusProd, -128, -1, -128);
  expectEvery<int8_t>(chorusInt8, chorusProd, 16, 9, -112);
  expectEvery<uint8_t>(chorusUint8, chorusSum, 255, 1, 0);
  expectEvery<uint8_t>(chorusUint8, chorusProd, 16, 16, 0);
  expectEvery<uint8_t>(chorusUint8, chorusMax, 255, 1, 255);  // an unsigned compare
  const int32_t i32max = std::numeric_limits<int32_t>::max(), i32min = std::numeric_limits<int32_t>::min();
  expectEvery<int32_t>(chorusInt32, chorusSum, i32max, 1, i32min);
  expectEvery<int32_t>(chorusInt32, chorusSum, i32min, -1, i32max);
  expectEvery<int32_t>(chorusInt32, chorusProd, 65536, 65536, 0);
  expectEvery<int32_t>(chorusInt32, chorusMax, i32min, i32max, i32max);
  expectEvery<uint32_t>(chorusUint32, chorusSum, 0xffffffffu, 2, 1);
  expectEvery<uint32_t>(chorusUint32, chorusMin, 0x80000000u, 1, 1);
  const int64_t i64max = std::numeric_limits<int64_t>::max(), i64min = std::numeric_limits<int64_t>::min();
  expectEvery<int64_t>(chorusInt64, chorusSum, i64max, 1, i64min);
  expectEvery<int64_t>(chorusInt64, chorusProd, i64min, -1, i64min);
  expectEvery<int64_t>(chorusInt64, chorusProd, int64_t{1} << 32, int64_t{1} << 32, 0);
  expectEvery<int64_t>(chorusInt64, chorusMin, i64min, i64max, i64min);
  const uint64_t u64max = std::numeric_limits<uint64_t>::max();
  expectEvery<uint64_t>(chorusUint64, chorusProd, u64max, u64max, 1);
  expectEvery<uint64_t>(chorusUint64, chorusSum, u64max, 1, 0);
  expectEvery<uint64_t>(chorusUint64, chorusMax, uint64_t{1} << 63, 2, uint64_t{1} << 63);
  expectEvery<int32_t>(chorusInt32, chorusAvg, i32max, 1, i32min);  // avg reduces as sum
}

// max/min are IEEE fmax/fmin: a NaN operand is ignored, NaN only when both are NaN.
template <typename F>
void expectMaxMinIgnoreNan(chorusDataType_t type) {
  const F nan = std::numeric_limits<F>::quiet_NaN(), inf = std::numeric_limits<F>::infinity();
  for (chorusRedOp_t op : {chorusMax, chorusMin}) {
    expectEvery<F>(type, op, nan, 1, 1);
    expectEvery<F>(type, op, 1, nan, 1);
    expectEvery<F>(type, op, nan, nan, nan);
  }
  expectEvery<F>(type, chorusMax, -inf, 2, 2);
  expectEvery<F>(type, chorusMin, -3, inf, -3);
  expectEvery<F>(type, chorusMin, -1, -2, -2);
}

// The same on 16-bit types, through their bits, with signalling NaNs too.
void expectNarrowMaxMinIgnoreNan(chorusDataType_t type, uint16_t (*encode)(float)) {
  const uint16_t one = encode(1), two = encode(2), nan = encode(std::numeric_limits<float>::quiet_NaN());
  const uint16_t signalling = type == chorusFloat16 ? 0x7d00 : 0x7f81;
  for (chorusRedOp_t op : {chorusMax, chorusMin}) {
    expectEvery<uint16_t>(type, op, nan, one, one);
    expectEvery<uint16_t>(type, op, one, nan, one);
    expectEvery<uint16_t>(type, op, nan, nan, nan);
    expectEvery<uint16_t>(type, op, signalling, two, two);
    expectEvery<uint16_t>(type, op, two, signalling, two);
  }
}

TEST(ReducerCases, FloatMaxMinIgnoreNan) {
  expectMaxMinIgnoreNan<float>(chorusFloat32);
  expectMaxMinIgnoreNan<double>(chorusFloat64);
  expectNarrowMaxMinIgnoreNan(chorusFloat16, floatToHalf);
  expectNarrowMaxMinIgnoreNan(chorusBfloat16, floatToBfloat16);
}

TEST(ReducerCases, Float16SumRoundsToNearestEven) {
  expectEvery<uint16_t>(chorusFloat16, chorusSum, 0x3c00, 0x1000, 0x3c00);   // 1 + 2^-11: tie, down to even
  expectEvery<uint16_t>(chorusFloat16, chorusSum, 0x3c01, 0x1000, 0x3c02);   // (1 + 2^-10) + 2^-11: tie, up to even
  expectEvery<uint16_t>(chorusFloat16, chorusSum, 0x7bff, 0x4c00, 0x7c00);   // 65504 + 16 = 65520 ties to infinity
  expectEvery<uint16_t>(chorusFloat16, chorusSum, 0x7bff, 0x4800, 0x7bff);   // 65504 + 8 rounds back down
  expectEvery<uint16_t>(chorusFloat16, chorusSum, 0x0001, 0x0001, 0x0002);   // subnormals add exactly
  expectEvery<uint16_t>(chorusFloat16, chorusSum, 0x03ff, 0x0001, 0x0400);   // ... into the smallest normal
  expectEvery<uint16_t>(chorusFloat16, chorusProd, 0x5c00, 0x5c00, 0x7c00);  // 256^2 overflows
  expectEvery<uint16_t>(chorusFloat16, chorusProd, 0x0400, 0x3400, 0x0100);  // 2^-14 / 4 becomes subnormal
  expectEvery<uint16_t>(chorusFloat16, chorusSum, 0x7c00, 0x3c00, 0x7c00);   // infinity stays
  expectEvery<uint16_t>(chorusFloat16, chorusSum, 0x7c00, 0xfc00, 0x7e00);   // inf - inf is NaN
  expectEvery<uint16_t>(chorusFloat16, chorusSum, 0x7e00, 0x3c00, 0x7e00);   // NaN stays NaN
}

TEST(ReducerCases, Bfloat16SumRoundsToNearestEven) {
  expectEvery<uint16_t>(chorusBfloat16, chorusSum, 0x3f80, 0x3b80, 0x3f80);  // 1 + 2^-8: tie, down to even
  expectEvery<uint16_t>(chorusBfloat16, chorusSum, 0x3f81, 0x3b80, 0x3f82);  // tie, up to even
  expectEvery<uint16_t>(chorusBfloat16, chorusSum, 0x7f7f, 0x7f7f, 0x7f80);  // largest finite doubled: infinity
  expectEvery<uint16_t>(chorusBfloat16, chorusSum, 0x0001, 0x0001, 0x0002);  // subnormals add exactly
  expectEvery<uint16_t>(chorusBfloat16, chorusSum, 0xff80, 0x7f80, 0x7fc0);  // -inf + inf is NaN
}

// finishAverage over 300 copies of `value` (vector blocks and tail) gives `expected` everywhere.
template <typename T>
void expectAverage(chorusDataType_t type, T value, int nranks, T expected) {
  for (const KernelSet& k : usableKernelSets()) {
    std::vector<T> data(300, value);
    k.average(data.data(), data.size(), type, nranks);
    for (size_t i = 0; i < data.size(); ++i) {
      if (data[i] == expected) continue;
      ADD_FAILURE() << k.name << " " << typeName(type) << " " << +value << " / " << nranks << " = " << +data[i]
                    << " at " << i << ", expected " << +expected;
      return;
    }
  }
}

TEST(ReducerCases, AverageTruncatesIntegersTowardZero) {
  expectAverage<int8_t>(chorusInt8, -7, 2, -3);
  expectAverage<int8_t>(chorusInt8, -128, 2, -64);
  expectAverage<int8_t>(chorusInt8, 127, 2, 63);
  expectAverage<int8_t>(chorusInt8, -1, 2, 0);
  expectAverage<uint8_t>(chorusUint8, 255, 2, 127);
  expectAverage<int32_t>(chorusInt32, -7, 3, -2);
  expectAverage<int32_t>(chorusInt32, std::numeric_limits<int32_t>::min(), 3, -715827882);
  expectAverage<uint32_t>(chorusUint32, 0xffffffffu, 2, 0x7fffffffu);
  expectAverage<int64_t>(chorusInt64, -9, 4, -2);
  expectAverage<int64_t>(chorusInt64, std::numeric_limits<int64_t>::min(), 3, std::numeric_limits<int64_t>::min() / 3);
  expectAverage<uint64_t>(chorusUint64, ~uint64_t{0}, 3, ~uint64_t{0} / 3);
  expectAverage<uint16_t>(chorusFloat16, 0x3c00, 3, floatToHalf(1.0f / 3.0f));  // divided in float, rounded once
  expectAverage<uint16_t>(chorusBfloat16, 0xc000, 3, floatToBfloat16(-2.0f / 3.0f));
  expectAverage<float>(chorusFloat32, 1.0f, 3, 1.0f / 3.0f);
  expectAverage<double>(chorusFloat64, -1.0, 7, -1.0 / 7.0);
}

// The AVX2 table must give the same bits as the portable one on arbitrary inputs (NaN payloads aside).
TEST(ReducerAvx2, AgreesWithPortable) {
  if (!avx2Usable()) GTEST_SKIP() << "no AVX2+F16C kernels on this build/CPU";
  const ReduceKernelTable& portable = portableReduceKernels();
  const ReduceKernelTable& avx2 = *avx2ReduceKernels();
  std::mt19937_64 rng(99);
  for (chorusDataType_t type : kAllTypes) {
    const size_t size = typeSize(type);
    for (size_t count = 0; count < 300; count += 1 + count / 8) {
      std::vector<char> a(count * size), b(count * size), p(count * size), v(count * size);
      for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<char>(rng()), b[i] = static_cast<char>(rng());
      for (int op = 0; op < kReduceKernelOps; ++op) {
        portable.reduce[type][op](p.data(), a.data(), b.data(), count);
        avx2.reduce[type][op](v.data(), a.data(), b.data(), count);
        ASSERT_EQ(firstMismatch(type, p.data(), v.data(), count), count)
            << typeName(type) << " " << opName(static_cast<chorusRedOp_t>(op)) << " count " << count;
      }
      p = a;
      v = a;
      portable.average[type](p.data(), count, 5);
      avx2.average[type](v.data(), count, 5);
      ASSERT_EQ(firstMismatch(type, p.data(), v.data(), count), count) << typeName(type) << " average";
    }
  }
}

TEST(ReducerCases, ActiveTableIsTheBestAvailable) {
  EXPECT_STREQ(activeReduceKernels().name, avx2Usable() ? "avx2+f16c" : "portable");
}

TEST(ReducerCases, RejectsBadArguments) {
  float x = 1;
  Reducer& r = hostReducer();
  EXPECT_THROW(r.reduce(&x, &x, &x, 1, static_cast<chorusDataType_t>(chorusNumTypes), chorusSum), Error);
  EXPECT_THROW(r.reduce(&x, &x, &x, 1, chorusFloat32, static_cast<chorusRedOp_t>(chorusNumOps)), Error);
  EXPECT_THROW(r.reduce(nullptr, &x, &x, 1, chorusFloat32, chorusSum), Error);
  EXPECT_THROW(r.finishAverage(&x, 1, chorusFloat32, 0), Error);
  try {
    r.finishAverage(&x, 1, chorusFloat32, -2);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), chorusInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("-2"), std::string::npos) << e.what();
  }
  r.reduce(nullptr, nullptr, nullptr, 0, chorusFloat32, chorusSum);  // nothing to do, nothing touched
  r.finishAverage(nullptr, 0, chorusInt8, 4);
  EXPECT_EQ(x, 1.0f);
}

}  // namespace
}  // namespace chorus
