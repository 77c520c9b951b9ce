// Host reduction kernels: every datatype x op against a scalar reference, for each kernel table this CPU can run
// and through hostReducer(); odd counts, misaligned and aliased buffers, guard bytes around every output.
#include "algorithms/reduce/reducer.h"

#include <gtest/gtest.h>

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
  Wide r;
  switch (op) {
    case chorusSum:
    case chorusAvg:
      r = static_cast<Wide>(a) + static_cast<Wide>(b);
      break;
    case chorusProd:
      r = static_cast<Wide>(a) * static_cast<Wide>(b);
      break;
    case chorusMax:
      r = a > b ? a : b;
      break;
    default:
      r = a < b ? a : b;
      break;
  }
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

// float: computed in double and rounded once, which for + and * is exactly the correctly rounded float result.
float referenceFloat(float a, float b, chorusRedOp_t op) {
  switch (op) {
    case chorusSum:
    case chorusAvg:
      return static_cast<float>(static_cast<double>(a) + static_cast<double>(b));
    case chorusProd:
      return static_cast<float>(static_cast<double>(a) * static_cast<double>(b));
    default:
      return referenceMaxMin(a, b, op == chorusMax);
  }
}

double referenceDouble(double a, double b, chorusRedOp_t op) {
  switch (op) {
    case chorusSum:
    case chorusAvg:
      return a + b;
    case chorusProd:
      return a * b;
    default:
      return referenceMaxMin(a, b, op == chorusMax);
  }
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
      if constexpr (sizeof(F) == 4) {
        storeAt<F>(dst, i, referenceFloat(x, y, op));
      } else {
        storeAt<F>(dst, i, referenceDouble(x, y, op));
      }
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
      storeAt<uint16_t>(dst, i,
                        encode(referenceFloat(decode(loadAt<uint16_t>(a, i)), decode(loadAt<uint16_t>(b, i)), op)));
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

enum class Alias { kNone, kDstIsA, kDstIsB };

TEST_P(ReducerKernelTest, EveryTypeAndOpMatchesReference) {
  std::mt19937_64 rng(42);
  for (chorusDataType_t type : kAllTypes) {
    const TypeCase& c = typeCase(type);
    for (chorusRedOp_t op : kAllOps) {
      for (size_t count : kCounts) {
        for (Alias alias : {Alias::kNone, Alias::kDstIsA, Alias::kDstIsB}) {
          for (const auto& offsets : kElementOffsets) {
            const size_t bytes = count * c.size;
            GuardedBuffer a(bytes, offsets[1] * c.size), b(bytes, offsets[2] * c.size);
            GuardedBuffer separate(bytes, offsets[0] * c.size);
            c.fill(a.data(), count, rng);
            c.fill(b.data(), count, rng);
            std::vector<char> expected(bytes + 1);
            c.reduce(expected.data(), a.data(), b.data(), count, op);
            char* dst = alias == Alias::kDstIsA ? a.data() : alias == Alias::kDstIsB ? b.data() : separate.data();
            kernels_.reduce(dst, a.data(), b.data(), count, type, op);
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

// dst = a op b over vectors of T (long enough to go through the vector loops and the tail).
template <typename T>
std::vector<T> reduceWith(const KernelSet& k, chorusDataType_t type, chorusRedOp_t op, std::vector<T> a,
                          const std::vector<T>& b) {
  k.reduce(a.data(), a.data(), b.data(), a.size(), type, op);
  return a;
}

// Repeats pairs (a, b) so that every pair lands both in vector blocks and in the scalar tail.
template <typename T>
std::pair<std::vector<T>, std::vector<T>> repeated(const std::vector<std::pair<T, T>>& pairs, size_t times = 301) {
  std::vector<T> a, b;
  for (size_t t = 0; t < times; ++t) {
    for (const auto& [x, y] : pairs) {
      a.push_back(x);
      b.push_back(y);
    }
  }
  return {a, b};
}

TEST(ReducerCases, IntegersWrapAround) {
  for (const KernelSet& k : usableKernelSets()) {
    {
      auto [a, b] = repeated<int8_t>({{127, 1}, {-128, -1}, {-128, 1}});
      auto sum = reduceWith(k, chorusInt8, chorusSum, a, b);
      auto prod = reduceWith(k, chorusInt8, chorusProd, a, b);
      for (size_t i = 0; i < a.size(); i += 3) {
        EXPECT_EQ(sum[i], -128) << k.name;
        EXPECT_EQ(sum[i + 1], 127) << k.name;
        EXPECT_EQ(prod[i + 1], -128) << k.name;  // -128 * -1 wraps back to -128
        EXPECT_EQ(prod[i], 127) << k.name;
      }
    }
    {
      auto [a, b] = repeated<uint8_t>({{255, 1}, {16, 16}, {200, 100}});
      auto sum = reduceWith(k, chorusUint8, chorusSum, a, b);
      auto prod = reduceWith(k, chorusUint8, chorusProd, a, b);
      auto mx = reduceWith(k, chorusUint8, chorusMax, a, b);
      EXPECT_EQ(sum[0], 0) << k.name;
      EXPECT_EQ(prod[1], 0) << k.name;
      EXPECT_EQ(sum[2], 44) << k.name;
      EXPECT_EQ(mx[0], 255) << k.name;  // unsigned compare, not signed
    }
    {
      const int32_t mx = std::numeric_limits<int32_t>::max(), mn = std::numeric_limits<int32_t>::min();
      auto [a, b] = repeated<int32_t>({{mx, 1}, {mn, -1}, {65536, 65536}, {mn, mx}});
      auto sum = reduceWith(k, chorusInt32, chorusSum, a, b);
      auto prod = reduceWith(k, chorusInt32, chorusProd, a, b);
      auto max = reduceWith(k, chorusInt32, chorusMax, a, b);
      EXPECT_EQ(sum[0], mn) << k.name;
      EXPECT_EQ(sum[1], mx) << k.name;
      EXPECT_EQ(prod[2], 0) << k.name;
      EXPECT_EQ(max[3], mx) << k.name;
    }
    {
      auto [a, b] = repeated<uint32_t>({{0xffffffffu, 2}, {0x80000000u, 1}});
      auto sum = reduceWith(k, chorusUint32, chorusSum, a, b);
      auto min = reduceWith(k, chorusUint32, chorusMin, a, b);
      EXPECT_EQ(sum[0], 1u) << k.name;
      EXPECT_EQ(min[1], 1u) << k.name;
    }
    {
      const int64_t mx = std::numeric_limits<int64_t>::max(), mn = std::numeric_limits<int64_t>::min();
      auto [a, b] = repeated<int64_t>({{mx, 1}, {mn, -1}, {int64_t{1} << 32, int64_t{1} << 32}, {mn, mx}});
      auto sum = reduceWith(k, chorusInt64, chorusSum, a, b);
      auto prod = reduceWith(k, chorusInt64, chorusProd, a, b);
      auto min = reduceWith(k, chorusInt64, chorusMin, a, b);
      EXPECT_EQ(sum[0], mn) << k.name;
      EXPECT_EQ(prod[1], mn) << k.name;  // mn * -1 wraps to mn
      EXPECT_EQ(prod[2], 0) << k.name;
      EXPECT_EQ(min[3], mn) << k.name;
    }
    {
      const uint64_t mx = std::numeric_limits<uint64_t>::max();
      auto [a, b] = repeated<uint64_t>({{mx, mx}, {mx, 1}, {uint64_t{1} << 63, 2}});
      auto sum = reduceWith(k, chorusUint64, chorusSum, a, b);
      auto prod = reduceWith(k, chorusUint64, chorusProd, a, b);
      auto max = reduceWith(k, chorusUint64, chorusMax, a, b);
      EXPECT_EQ(prod[0], 1u) << k.name;
      EXPECT_EQ(sum[1], 0u) << k.name;
      EXPECT_EQ(prod[2], 0u) << k.name;
      EXPECT_EQ(max[2], uint64_t{1} << 63) << k.name;
    }
  }
}

// max/min are IEEE fmax/fmin: a NaN operand is ignored, NaN only when both are NaN.
template <typename F>
void expectMaxMinIgnoreNan(const KernelSet& k, chorusDataType_t type) {
  const F nan = std::numeric_limits<F>::quiet_NaN(), inf = std::numeric_limits<F>::infinity();
  auto [a, b] = repeated<F>({{nan, 1}, {1, nan}, {nan, nan}, {-inf, 2}, {-3, inf}, {-1, -2}});
  for (chorusRedOp_t op : {chorusMax, chorusMin}) {
    const auto r = reduceWith(k, type, op, a, b);
    const bool isMax = op == chorusMax;
    for (size_t i = 0; i < r.size(); i += 6) {
      EXPECT_EQ(r[i], F(1)) << k.name << " " << opName(op);
      EXPECT_EQ(r[i + 1], F(1)) << k.name << " " << opName(op);
      EXPECT_TRUE(std::isnan(r[i + 2])) << k.name << " " << opName(op);
      EXPECT_EQ(r[i + 3], isMax ? F(2) : -inf) << k.name;
      EXPECT_EQ(r[i + 4], isMax ? inf : F(-3)) << k.name;
      EXPECT_EQ(r[i + 5], isMax ? F(-1) : F(-2)) << k.name;
    }
  }
}

// The same on 16-bit types, through their bits.
void expectNarrowMaxMinIgnoreNan(const KernelSet& k, chorusDataType_t type, uint16_t (*encode)(float),
                                 float (*decode)(uint16_t)) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const uint16_t one = encode(1), two = encode(2), n = encode(nan),
                 signalling = type == chorusFloat16 ? 0x7d00 : 0x7f81;
  auto [a, b] = repeated<uint16_t>({{n, one}, {one, n}, {n, n}, {signalling, two}, {two, signalling}});
  for (chorusRedOp_t op : {chorusMax, chorusMin}) {
    const auto r = reduceWith(k, type, op, a, b);
    for (size_t i = 0; i < r.size(); i += 5) {
      EXPECT_EQ(r[i], one) << k.name << " " << typeName(type) << " " << opName(op);
      EXPECT_EQ(r[i + 1], one) << k.name << " " << typeName(type) << " " << opName(op);
      EXPECT_TRUE(std::isnan(decode(r[i + 2]))) << k.name << " " << typeName(type);
      EXPECT_EQ(r[i + 3], two) << k.name << " " << typeName(type);
      EXPECT_EQ(r[i + 4], two) << k.name << " " << typeName(type);
    }
  }
}

TEST(ReducerCases, FloatMaxMinIgnoreNan) {
  for (const KernelSet& k : usableKernelSets()) {
    expectMaxMinIgnoreNan<float>(k, chorusFloat32);
    expectMaxMinIgnoreNan<double>(k, chorusFloat64);
    expectNarrowMaxMinIgnoreNan(k, chorusFloat16, floatToHalf, halfToFloat);
    expectNarrowMaxMinIgnoreNan(k, chorusBfloat16, floatToBfloat16, bfloat16ToFloat);
  }
}

TEST(ReducerCases, Float16SumRoundsToNearestEven) {
  for (const KernelSet& k : usableKernelSets()) {
    // 1 + 2^-11 ties down to 1; (1 + 2^-10) + 2^-11 ties up to 1 + 2^-9; 65504 + 16 = 65520 ties to infinity;
    // 65504 + 8 rounds back to 65504; subnormals add exactly; infinities and NaN propagate through sums.
    auto [a, b] = repeated<uint16_t>({{0x3c00, 0x1000},
                                      {0x3c01, 0x1000},
                                      {0x7bff, 0x4c00},
                                      {0x7bff, 0x4800},
                                      {0x0001, 0x0001},
                                      {0x03ff, 0x0001},
                                      {0x7c00, 0x3c00},
                                      {0x7c00, 0xfc00},
                                      {0x7e00, 0x3c00}});
    const auto r = reduceWith(k, chorusFloat16, chorusSum, a, b);
    const uint16_t expected[] = {0x3c00, 0x3c02, 0x7c00, 0x7bff, 0x0002, 0x0400, 0x7c00};
    for (size_t i = 0; i < r.size(); i += 9) {
      for (size_t j = 0; j < 7; ++j) EXPECT_EQ(r[i + j], expected[j]) << k.name << " case " << j;
      EXPECT_TRUE(std::isnan(halfToFloat(r[i + 7]))) << k.name << " inf + -inf";
      EXPECT_TRUE(std::isnan(halfToFloat(r[i + 8]))) << k.name << " NaN + 1";
    }
  }
}

TEST(ReducerCases, Bfloat16SumRoundsToNearestEven) {
  for (const KernelSet& k : usableKernelSets()) {
    // 1 + 2^-8 ties down to 1; (1 + 2^-7) + 2^-8 ties up to 1 + 2^-6; the largest finite doubled overflows.
    auto [a, b] = repeated<uint16_t>({{0x3f80, 0x3b80}, {0x3f81, 0x3b80}, {0x7f7f, 0x7f7f}, {0x0001, 0x0001}});
    const auto r = reduceWith(k, chorusBfloat16, chorusSum, a, b);
    for (size_t i = 0; i < r.size(); i += 4) {
      EXPECT_EQ(r[i], 0x3f80) << k.name;
      EXPECT_EQ(r[i + 1], 0x3f82) << k.name;
      EXPECT_EQ(r[i + 2], 0x7f80) << k.name;
      EXPECT_EQ(r[i + 3], 0x0002) << k.name;
    }
  }
}

TEST(ReducerCases, AverageTruncatesIntegersTowardZero) {
  for (const KernelSet& k : usableKernelSets()) {
    std::vector<int8_t> i8 = {-7, 7, -128, 127, -1, 1};
    k.average(i8.data(), i8.size(), chorusInt8, 2);
    EXPECT_EQ(i8, (std::vector<int8_t>{-3, 3, -64, 63, 0, 0})) << k.name;
    std::vector<int32_t> i32(600, -7);
    i32[1] = std::numeric_limits<int32_t>::min();
    k.average(i32.data(), i32.size(), chorusInt32, 3);
    EXPECT_EQ(i32[0], -2) << k.name;
    EXPECT_EQ(i32[1], -715827882) << k.name;
    EXPECT_EQ(i32[599], -2) << k.name;
    std::vector<int64_t> i64(300, -9);
    i64[0] = std::numeric_limits<int64_t>::min();
    k.average(i64.data(), i64.size(), chorusInt64, 4);
    EXPECT_EQ(i64[0], std::numeric_limits<int64_t>::min() / 4) << k.name;
    EXPECT_EQ(i64[299], -2) << k.name;
    std::vector<uint32_t> u32(100, 0xffffffffu);
    k.average(u32.data(), u32.size(), chorusUint32, 2);
    EXPECT_EQ(u32[99], 0x7fffffffu) << k.name;
    std::vector<uint64_t> u64(100, std::numeric_limits<uint64_t>::max());
    k.average(u64.data(), u64.size(), chorusUint64, 3);
    EXPECT_EQ(u64[99], std::numeric_limits<uint64_t>::max() / 3) << k.name;
    std::vector<uint16_t> f16(100, 0x3c00);  // 1 / 3 in float, rounded to float16 once
    k.average(f16.data(), f16.size(), chorusFloat16, 3);
    EXPECT_EQ(f16[99], floatToHalf(1.0f / 3.0f)) << k.name;
    std::vector<float> f32(100, 1.0f);
    k.average(f32.data(), f32.size(), chorusFloat32, 3);
    EXPECT_EQ(f32[99], 1.0f / 3.0f) << k.name;
  }
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
  EXPECT_THROW(r.reduce(&x, &x, &x, 1, chorusFloat32, static_cast<chorusRedOp_t>(-1)), Error);
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
