// Host reduction kernels: every datatype x op against a scalar reference, for each kernel table this CPU can run
// and through hostReducer(); odd counts, misaligned and aliased buffers, guard bytes around every output.
#include "reduce/reducer.h"

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

#include "reduce/half.h"
#include "reduce/reduce_kernels.h"
#include "core/datatype.h"
#include "core/error.h"
#include "tests/harness/edge_floats.h"
#include "tests/unit/reducer_kernel_sets.h"

namespace chorus {
namespace {

using test::avx2Usable;
using test::KernelSet;
using test::Kernels;
using test::kernelSet;

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
TypeCase floatCase() {
  TypeCase c;
  c.size = sizeof(F);
  c.fill = [](void* p, size_t n, std::mt19937_64& rng) {
    for (size_t i = 0; i < n; ++i) storeAt<F>(p, i, test::edgeOrOrdinaryFloat<F>(rng() % 64, rng));
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
      const uint16_t value =
          (r & 1) ? static_cast<uint16_t>(r >> 8) : encode(test::edgeOrOrdinaryFloat<float>(6 + r % 10, rng));
      storeAt<uint16_t>(p, i, value);
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
        if (portable.reduce[type][op] == nullptr) continue;  // avg, and bitwise ops of floating-point types
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

}  // namespace
}  // namespace chorus
