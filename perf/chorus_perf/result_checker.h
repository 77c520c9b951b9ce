// chorus-perf's verification: deterministic inputs per (rank, index) and the exact expected results.
//
// Inputs are small integers (sum, avg, max, min: in [-A, A], or [0, 2A] for unsigned types, with A small enough
// that every partial sum is exact in the type; prod: mostly 1, now and then 2 or -1), so that a floating-point
// result is the same whatever order the library reduces in, and can be compared exactly (avg on floating types is
// compared to within a few ulps, in case the library multiplies by 1/n rather than divides). Integer results wrap
// as the type does. The pattern repeats with a prime period, so the expected values are computed once per period.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "chorus/chorus.h"
#include "perf/chorus_perf/fp8_float.h"
#include "perf/chorus_perf/half_float.h"

namespace chorus::perf {

// Positions of the input pattern; prime, so that chunk offsets (powers of two, multiples of nranks) rarely alias.
inline constexpr size_t kPatternPeriod = 65521;
// The byte written around and into buffers that a call must (or must not) overwrite.
inline constexpr unsigned char kSentinelByte = 0xA5;

// How inputs are drawn for one (type, op, nranks).
struct PatternShape {
  bool product = false;     // prod: mostly 1, at most a few 2s and one -1 per index
  bool isUnsigned = false;  // never negative
  int amplitude = 4;        // values in [-amplitude, amplitude], or [0, 2 * amplitude] when unsigned
  int nranks = 1;
};

// splitmix64's finalizer: a cheap, well-mixed hash.
inline uint64_t mixBits(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The small integer that `rank` contributes at pattern position `position` (an index modulo kPatternPeriod).
inline int64_t patternValue(const PatternShape& shape, uint64_t seed, int rank, size_t position) {
  const uint64_t salted = seed * 0x9e3779b97f4a7c15ull + position;
  if (shape.product) {
    // One draw per position, shared by all ranks, picks which ranks contribute a factor other than 1; the product
    // stays in {±1, ±2, ±4}, exact in every type.
    const uint64_t h = mixBits(salted);
    const uint64_t n = static_cast<uint64_t>(shape.nranks);
    int64_t value = 1;
    if (static_cast<uint64_t>(rank) == h % (2 * n)) value *= 2;
    if (static_cast<uint64_t>(rank) == (h >> 21) % (4 * n)) value *= 2;
    if (!shape.isUnsigned && static_cast<uint64_t>(rank) == (h >> 42) % (2 * n)) value = -value;
    return value;
  }
  const uint64_t h = mixBits(salted ^ mixBits(static_cast<uint64_t>(rank) + 1));
  const int64_t span = 2 * static_cast<int64_t>(shape.amplitude) + 1;
  const int64_t drawn = static_cast<int64_t>(h % static_cast<uint64_t>(span));
  return shape.isUnsigned ? drawn : drawn - shape.amplitude;
}

// The input shape for datatype x op on nranks ranks; `reduces` false (broadcast, allgather) ignores op.
inline PatternShape patternShapeFor(chorusDataType_t type, chorusRedOp_t op, int nranks, bool reduces) {
  PatternShape shape;
  shape.nranks = nranks;
  shape.isUnsigned = type == chorusUint8 || type == chorusUint32 || type == chorusUint64;
  shape.product = reduces && op == chorusProd;
  if (reduces && (op == chorusSum || op == chorusAvg)) {
    // Keep every partial sum an exactly representable integer: float16 holds them to 2048, bfloat16 to 256, e4m3
    // to 16, e5m2 to 8.
    const int exactLimit = type == chorusFloat16      ? 2048
                           : type == chorusBfloat16   ? 256
                           : type == chorusFloat8e4m3 ? 16
                           : type == chorusFloat8e5m2 ? 8
                                                      : 1 << 20;
    shape.amplitude = std::clamp(exactLimit / std::max(nranks, 1), 1, 4);
  }
  return shape;
}

// Verifies a call's output against the pattern of one seed. Made by makeResultChecker for a datatype.
class ResultChecker {
 public:
  virtual ~ResultChecker() = default;
  // Starts a fresh pattern (each size and mode gets its own, so stale data never passes).
  virtual void setSeed(uint64_t seed) = 0;
  // buf[k] = rank's input at index firstIndex + k, for k < count.
  virtual void fillInput(void* buf, size_t count, int rank, size_t firstIndex = 0) = 0;
  // Elements of buf[0, count) that differ from rank's input at firstIndex + k.
  virtual size_t countInputMismatches(const void* buf, size_t count, int rank, size_t firstIndex = 0) = 0;
  // Elements of buf[0, count) that differ from the reduction over all ranks at index firstIndex + k.
  virtual size_t countReducedMismatches(const void* buf, size_t count, size_t firstIndex = 0) = 0;
};

namespace detail {

template <typename T>
struct IntegerCodec {
  using Storage = T;
  static constexpr bool kFloating = false;
  static Storage fromInteger(int64_t v) { return static_cast<T>(v); }
  static double toDouble(Storage v) { return static_cast<double>(v); }
  // The library's avg on integers: the wrapped sum divided by nranks, truncated toward zero.
  static Storage average(Storage sum, int nranks) {
    if constexpr (std::is_signed_v<T>) {
      return static_cast<T>(static_cast<int64_t>(sum) / nranks);
    } else {
      return static_cast<T>(static_cast<uint64_t>(sum) / static_cast<uint64_t>(nranks));
    }
  }
};

template <typename T>
struct NativeFloatCodec {
  using Storage = T;
  static constexpr bool kFloating = true;
  static constexpr double kEpsilon = std::is_same_v<T, float> ? 0x1p-23 : 0x1p-52;
  static Storage fromDouble(double v) { return static_cast<T>(v); }
  static double toDouble(Storage v) { return static_cast<double>(v); }
  static Storage average(Storage sum, int nranks) { return sum / static_cast<T>(nranks); }
};

// 16-bit and 8-bit floats: stored as their bits, averaged in float and rounded once (fp8 saturating), as the
// library's reducer does.
template <class Bits, Bits (*kFromFloat)(float), float (*kToFloat)(Bits), int kMantissaBits>
struct NarrowFloatCodec {
  using Storage = Bits;
  static constexpr bool kFloating = true;
  static constexpr double kEpsilon = 1.0 / static_cast<double>(1 << kMantissaBits);
  static Storage fromDouble(double v) { return kFromFloat(static_cast<float>(v)); }
  static double toDouble(Storage v) { return kToFloat(v); }
  static Storage average(Storage sum, int nranks) { return kFromFloat(kToFloat(sum) / static_cast<float>(nranks)); }
};

using Float8e4m3Codec = NarrowFloatCodec<uint8_t, floatToFp8e4m3Bits, fp8e4m3BitsToFloat, 3>;
using Float8e5m2Codec = NarrowFloatCodec<uint8_t, floatToFp8e5m2Bits, fp8e5m2BitsToFloat, 2>;
using Float16Codec = NarrowFloatCodec<uint16_t, floatToHalfBits, halfBitsToFloat, 10>;
using Bfloat16Codec = NarrowFloatCodec<uint16_t, floatToBfloat16Bits, bfloat16BitsToFloat, 7>;

template <class Codec>
class TypedResultChecker final : public ResultChecker {
 public:
  using Storage = typename Codec::Storage;

  TypedResultChecker(PatternShape shape, chorusRedOp_t op)
      : shape_(shape), op_(op), inputs_(static_cast<size_t>(shape.nranks)) {}

  void setSeed(uint64_t seed) override {
    seed_ = seed;
    for (auto& table : inputs_) table.clear();
    reduced_.clear();
  }

  void fillInput(void* buf, size_t count, int rank, size_t firstIndex) override {
    const std::vector<Storage>& table = inputTable(rank, firstIndex + count);
    Storage* out = static_cast<Storage*>(buf);
    for (size_t done = 0, position = firstIndex % kPatternPeriod; done < count; position = 0) {
      const size_t n = std::min(count - done, table.size() - position);
      std::memcpy(out + done, table.data() + position, n * sizeof(Storage));
      done += n;
    }
  }

  size_t countInputMismatches(const void* buf, size_t count, int rank, size_t firstIndex) override {
    return countMismatches(static_cast<const Storage*>(buf), count, inputTable(rank, firstIndex + count), firstIndex,
                           false);
  }

  size_t countReducedMismatches(const void* buf, size_t count, size_t firstIndex) override {
    const bool tolerant = Codec::kFloating && op_ == chorusAvg;
    return countMismatches(static_cast<const Storage*>(buf), count, reducedTable(firstIndex + count), firstIndex,
                           tolerant);
  }

 private:
  // The first min(endIndex, period) positions of rank's input, extended on demand.
  const std::vector<Storage>& inputTable(int rank, size_t endIndex) {
    std::vector<Storage>& table = inputs_[static_cast<size_t>(rank)];
    const size_t needed = std::min(endIndex, kPatternPeriod);
    table.reserve(needed);
    for (size_t j = table.size(); j < needed; ++j) table.push_back(encode(patternValue(shape_, seed_, rank, j)));
    return table;
  }

  // The first min(endIndex, period) positions of the expected reduction, extended on demand.
  const std::vector<Storage>& reducedTable(size_t endIndex) {
    const size_t needed = std::min(endIndex, kPatternPeriod);
    reduced_.reserve(needed);
    for (size_t j = reduced_.size(); j < needed; ++j) reduced_.push_back(reduceAt(j));
    return reduced_;
  }

  static Storage encode(int64_t v) {
    if constexpr (Codec::kFloating) {
      return Codec::fromDouble(static_cast<double>(v));
    } else {
      return Codec::fromInteger(v);
    }
  }

  // The reference reduction at one position: exact arithmetic (the inputs keep it exact), wrapped to the type.
  Storage reduceAt(size_t position) const {
    uint64_t wrapped = op_ == chorusProd ? 1 : 0;  // integer sum and prod, modulo 2^64 then the type's width
    double exact = op_ == chorusProd ? 1.0 : 0.0;  // floating sum and prod: small integers, exact in double
    int64_t extreme = 0;
    uint64_t bits = op_ == chorusBand ? ~uint64_t{0} : 0;  // bitwise ops (integer types only)
    for (int r = 0; r < shape_.nranks; ++r) {
      const int64_t v = patternValue(shape_, seed_, r, position);
      const uint64_t u = static_cast<uint64_t>(v);
      bits = op_ == chorusBand ? bits & u : op_ == chorusBor ? bits | u : bits ^ u;
      wrapped = op_ == chorusProd ? wrapped * static_cast<uint64_t>(v) : wrapped + static_cast<uint64_t>(v);
      exact = op_ == chorusProd ? exact * static_cast<double>(v) : exact + static_cast<double>(v);
      if (r == 0 || (op_ == chorusMax && v > extreme) || (op_ == chorusMin && v < extreme)) extreme = v;
    }
    if (op_ == chorusMax || op_ == chorusMin) return encode(extreme);
    if constexpr (!Codec::kFloating) {
      if (op_ == chorusBand || op_ == chorusBor || op_ == chorusBxor) return static_cast<Storage>(bits);
    }
    Storage combined;
    if constexpr (Codec::kFloating) {
      combined = Codec::fromDouble(exact);
    } else {
      combined = static_cast<Storage>(wrapped);
    }
    return op_ == chorusAvg ? Codec::average(combined, shape_.nranks) : combined;
  }

  static bool same(Storage got, Storage want, bool tolerant) {
    if constexpr (Codec::kFloating) {
      const double a = Codec::toDouble(got);
      const double b = Codec::toDouble(want);
      if (!tolerant) return a == b;
      return std::fabs(a - b) <= 4 * Codec::kEpsilon * std::max(1.0, std::fabs(b));
    } else {
      return got == want;
    }
  }

  static size_t countMismatches(const Storage* got, size_t count, const std::vector<Storage>& table, size_t firstIndex,
                                bool tolerant) {
    size_t wrong = 0;
    for (size_t done = 0, position = firstIndex % kPatternPeriod; done < count; position = 0) {
      const size_t n = std::min(count - done, table.size() - position);
      const Storage* want = table.data() + position;
      if (std::memcmp(got + done, want, n * sizeof(Storage)) != 0) {  // slow path only where something differs
        for (size_t k = 0; k < n; ++k) wrong += same(got[done + k], want[k], tolerant) ? 0 : 1;
      }
      done += n;
    }
    return wrong;
  }

  PatternShape shape_;
  chorusRedOp_t op_;
  uint64_t seed_ = 0;
  std::vector<std::vector<Storage>> inputs_;  // per rank
  std::vector<Storage> reduced_;
};

}  // namespace detail

// The checker for datatype x op on nranks ranks; `reduces` false (broadcast, allgather) ignores op.
inline std::unique_ptr<ResultChecker> makeResultChecker(chorusDataType_t type, chorusRedOp_t op, int nranks,
                                                        bool reduces) {
  const PatternShape shape = patternShapeFor(type, op, nranks, reduces);
  const chorusRedOp_t effectiveOp = reduces ? op : chorusSum;
  switch (type) {
    case chorusInt8:
      return std::make_unique<detail::TypedResultChecker<detail::IntegerCodec<int8_t>>>(shape, effectiveOp);
    case chorusUint8:
      return std::make_unique<detail::TypedResultChecker<detail::IntegerCodec<uint8_t>>>(shape, effectiveOp);
    case chorusInt32:
      return std::make_unique<detail::TypedResultChecker<detail::IntegerCodec<int32_t>>>(shape, effectiveOp);
    case chorusUint32:
      return std::make_unique<detail::TypedResultChecker<detail::IntegerCodec<uint32_t>>>(shape, effectiveOp);
    case chorusInt64:
      return std::make_unique<detail::TypedResultChecker<detail::IntegerCodec<int64_t>>>(shape, effectiveOp);
    case chorusUint64:
      return std::make_unique<detail::TypedResultChecker<detail::IntegerCodec<uint64_t>>>(shape, effectiveOp);
    case chorusFloat16:
      return std::make_unique<detail::TypedResultChecker<detail::Float16Codec>>(shape, effectiveOp);
    case chorusBfloat16:
      return std::make_unique<detail::TypedResultChecker<detail::Bfloat16Codec>>(shape, effectiveOp);
    case chorusFloat32:
      return std::make_unique<detail::TypedResultChecker<detail::NativeFloatCodec<float>>>(shape, effectiveOp);
    case chorusFloat64:
      return std::make_unique<detail::TypedResultChecker<detail::NativeFloatCodec<double>>>(shape, effectiveOp);
    case chorusFloat8e4m3:
      return std::make_unique<detail::TypedResultChecker<detail::Float8e4m3Codec>>(shape, effectiveOp);
    case chorusFloat8e5m2:
      return std::make_unique<detail::TypedResultChecker<detail::Float8e5m2Codec>>(shape, effectiveOp);
    default:
      return nullptr;
  }
}

// Writes the sentinel byte over bytes [0, bytes) of buf.
inline void fillSentinel(void* buf, size_t bytes) { std::memset(buf, kSentinelByte, bytes); }

// Units of `unitBytes` in buf[0, bytes) holding any byte other than the sentinel (a write where none belongs).
inline size_t countSentinelMismatches(const void* buf, size_t bytes, size_t unitBytes) {
  const unsigned char* p = static_cast<const unsigned char*>(buf);
  size_t wrong = 0;
  for (size_t unit = 0; unit < bytes; unit += unitBytes) {
    const size_t end = std::min(bytes, unit + unitBytes);
    for (size_t b = unit; b < end; ++b) {
      if (p[b] != kSentinelByte) {
        ++wrong;
        break;
      }
    }
  }
  return wrong;
}

}  // namespace chorus::perf
