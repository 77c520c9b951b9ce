#include "tests/collectives/typed_values.h"

#include <cstring>
#include <iomanip>
#include <sstream>

#include "reduce/fp8.h"
#include "reduce/half.h"

namespace chorus::test {

namespace {

bool isUnsigned(chorusDataType_t type) { return type == chorusUint8 || type == chorusUint32 || type == chorusUint64; }

// A scale that keeps 8 ranks' sums exact in the type while using bits a narrower type would lose.
int64_t scaleOf(chorusDataType_t type) {
  switch (type) {
    case chorusInt32:
    case chorusUint32:
    case chorusFloat32: return int64_t{1} << 20;
    case chorusInt64:
    case chorusUint64:
    case chorusFloat64: return int64_t{1} << 40;
    default: return 1;
  }
}

uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

template <typename T>
void store(T value, void* dst) {
  std::memcpy(dst, &value, sizeof(T));
}

template <typename T>
T load(const void* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

}  // namespace

int64_t inputValue(chorusDataType_t type, chorusRedOp_t op, int rank, size_t index, uint32_t salt) {
  uint64_t h = mix((static_cast<uint64_t>(salt) << 40) ^ (static_cast<uint64_t>(rank) << 32) ^ index ^
                   (static_cast<uint64_t>(op) << 56) ^ (static_cast<uint64_t>(type) << 60));
  if (op == chorusProd) {
    if (h % 13 == 0) return 2;
    if (!isUnsigned(type) && h % 17 == 1) return -1;
    return 1;
  }
  // fp8 holds every integer only to 16 (e4m3) or 8 (e5m2): 8 ranks' partial sums stay exact in [-2, 2] and [-1, 1].
  if (type == chorusFloat8e4m3) return static_cast<int64_t>(h % 5) - 2;
  if (type == chorusFloat8e5m2) return static_cast<int64_t>(h % 3) - 1;
  int64_t small = isUnsigned(type) ? static_cast<int64_t>(h % 9) : static_cast<int64_t>(h % 9) - 4;
  return small * scaleOf(type);
}

int64_t combineExact(chorusRedOp_t op, int64_t a, int64_t b) {
  switch (op) {
    case chorusProd: return a * b;
    case chorusMax: return a > b ? a : b;
    case chorusMin: return a < b ? a : b;
    case chorusBand: return a & b;
    case chorusBor: return a | b;
    case chorusBxor: return a ^ b;
    default: return a + b;  // sum, and avg's sum
  }
}

void encodeValue(chorusDataType_t type, int64_t v, void* dst) {
  switch (type) {
    case chorusInt8: store(static_cast<int8_t>(v), dst); break;
    case chorusUint8: store(static_cast<uint8_t>(v), dst); break;
    case chorusInt32: store(static_cast<int32_t>(v), dst); break;
    case chorusUint32: store(static_cast<uint32_t>(v), dst); break;
    case chorusInt64: store(v, dst); break;
    case chorusUint64: store(static_cast<uint64_t>(v), dst); break;
    case chorusFloat16: store(floatToHalf(static_cast<float>(v)), dst); break;
    case chorusBfloat16: store(floatToBfloat16(static_cast<float>(v)), dst); break;
    case chorusFloat32: store(static_cast<float>(v), dst); break;
    case chorusFloat64: store(static_cast<double>(v), dst); break;
    case chorusFloat8e4m3:
      store(floatToFp8e4m3(static_cast<float>(v)), dst);
      break;
    case chorusFloat8e5m2:
      store(floatToFp8e5m2(static_cast<float>(v)), dst);
      break;
    default: break;
  }
}

void encodeAverage(chorusDataType_t type, int64_t sum, int nranks, void* dst) {
  const float nf = static_cast<float>(nranks);
  switch (type) {
    case chorusFloat16: store(floatToHalf(static_cast<float>(sum) / nf), dst); break;
    case chorusBfloat16: store(floatToBfloat16(static_cast<float>(sum) / nf), dst); break;
    case chorusFloat32: store(static_cast<float>(sum) / nf, dst); break;
    case chorusFloat64: store(static_cast<double>(sum) / static_cast<double>(nranks), dst); break;
    case chorusFloat8e4m3:
      store(floatToFp8e4m3(static_cast<float>(sum) / nf), dst);
      break;
    case chorusFloat8e5m2:
      store(floatToFp8e5m2(static_cast<float>(sum) / nf), dst);
      break;
    default: encodeValue(type, sum / nranks, dst); break;  // C++ integer division truncates toward zero
  }
}

void encodeReduced(chorusDataType_t type, chorusRedOp_t op, int64_t exact, int nranks, void* dst) {
  if (op == chorusAvg) {
    encodeAverage(type, exact, nranks, dst);
  } else {
    encodeValue(type, exact, dst);
  }
}

std::string formatElement(chorusDataType_t type, const void* p) {
  std::ostringstream out;
  uint64_t bits = 0;
  size_t size = chorusTypeSize(type);
  std::memcpy(&bits, p, size);  // little-endian: the element's bits land in the low bytes
  switch (type) {
    case chorusInt8: out << static_cast<int>(load<int8_t>(p)); break;
    case chorusUint8: out << static_cast<unsigned>(load<uint8_t>(p)); break;
    case chorusInt32: out << load<int32_t>(p); break;
    case chorusUint32: out << load<uint32_t>(p); break;
    case chorusInt64: out << load<int64_t>(p); break;
    case chorusUint64: out << load<uint64_t>(p); break;
    case chorusFloat16: out << halfToFloat(load<uint16_t>(p)); break;
    case chorusBfloat16: out << bfloat16ToFloat(load<uint16_t>(p)); break;
    case chorusFloat32: out << std::setprecision(9) << load<float>(p); break;
    case chorusFloat64: out << std::setprecision(17) << load<double>(p); break;
    case chorusFloat8e4m3:
      out << fp8e4m3ToFloat(load<uint8_t>(p));
      break;
    case chorusFloat8e5m2:
      out << fp8e5m2ToFloat(load<uint8_t>(p));
      break;
    default: out << "?"; break;
  }
  out << " (0x" << std::hex << std::setw(static_cast<int>(2 * size)) << std::setfill('0') << bits << ")";
  return out.str();
}

}  // namespace chorus::test
