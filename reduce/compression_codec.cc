#include "reduce/compression_codec.h"

#include <cmath>
#include <cstring>

#include "reduce/half.h"
#include "reduce/reduce_kernels.h"
#include "reduce/compression_codec_kernels.h"

namespace chorus {
namespace {

using half_detail::bitsFloat;
using half_detail::floatBits;

const compression_avx2::Kernels* fast() {
  static const compression_avx2::Kernels* chosen = cpuHasAvx2Kernels() ? compression_avx2::kernels() : nullptr;
  return chosen;
}

float load(const char* p, size_t i) {
  float v;
  std::memcpy(&v, p + 4 * i, sizeof(v));
  return v;
}

void store(char* p, size_t i, float v) { std::memcpy(p + 4 * i, &v, sizeof(v)); }

// float16's scale for a message whose largest finite magnitude is `m`: 2^e with m / 2^e below 2^15, so that
// rounding can never reach float16's largest finite value (65504) and small values keep as many bits as they can.
int fp16Exponent(float m) {
  if (!(m > 0) || !std::isfinite(m)) return 0;
  int e = 0;
  std::frexp(m, &e);  // m = f * 2^e, f in [0.5, 1)
  e -= 15;
  return e < -127 ? -127 : (e > 127 ? 127 : e);  // both 2^e and 2^-e stay finite floats
}

float maxAbsOf(const char* in, size_t n) {
  size_t i = 0;
  float m = 0;
  if (const auto* k = fast()) m = k->maxAbs(in, n, &i);
  for (; i < n; ++i) {
    const float a = std::fabs(load(in, i));
    if (std::isfinite(a) && a > m) m = a;
  }
  return m;
}

}  // namespace

const char* compressionFormatName(CompressionFormat format) {
  switch (format) {
    case CompressionFormat::kBf16:
      return "bf16";
    case CompressionFormat::kFp16:
      return "fp16";
    case CompressionFormat::kNone:
      break;
  }
  return "none";
}

size_t compressedBytes(CompressionFormat format, size_t count) {
  return (format == CompressionFormat::kFp16 ? 4 : 0) + 2 * count;
}

void compressFloats(CompressionFormat format, const void* values, size_t count, void* packed, void* roundedOut) {
  const char* in = static_cast<const char*>(values);
  char* back = static_cast<char*>(roundedOut);
  char* w = static_cast<char*>(packed);
  const auto* k = fast();
  if (format == CompressionFormat::kBf16) {
    auto* out = reinterpret_cast<uint16_t*>(w);  // compressed buffers are the transport's own, 16-byte aligned at least
    size_t i = k ? k->bf16Encode(in, count, out, back) : 0;
    for (; i < count; ++i) {
      out[i] = floatToBfloat16(load(in, i));
      if (back) store(back, i, bfloat16ToFloat(out[i]));
    }
    return;
  }
  const int e = fp16Exponent(maxAbsOf(in, count));
  const int32_t header = e;
  std::memcpy(w, &header, sizeof(header));  // little-endian hosts only (x86, arm64)
  auto* out = reinterpret_cast<uint16_t*>(w + 4);
  const float scale = std::ldexp(1.0f, -e), unscale = std::ldexp(1.0f, e);
  size_t i = k ? k->fp16Encode(in, count, scale, unscale, out, back) : 0;
  for (; i < count; ++i) {
    out[i] = floatToHalf(load(in, i) * scale);
    if (back) store(back, i, halfToFloat(out[i]) * unscale);
  }
}

void expandFloats(CompressionFormat format, const void* packed, size_t count, void* out) {
  const char* w = static_cast<const char*>(packed);
  char* dst = static_cast<char*>(out);
  const auto* k = fast();
  if (format == CompressionFormat::kBf16) {
    const auto* in = reinterpret_cast<const uint16_t*>(w);
    size_t i = k ? k->bf16Decode(in, count, dst) : 0;
    for (; i < count; ++i) store(dst, i, bfloat16ToFloat(in[i]));
    return;
  }
  int32_t e = 0;
  std::memcpy(&e, w, sizeof(e));
  const float unscale = std::ldexp(1.0f, e);
  const auto* in = reinterpret_cast<const uint16_t*>(w + 4);
  size_t i = k ? k->fp16Decode(in, count, unscale, dst) : 0;
  for (; i < count; ++i) store(dst, i, halfToFloat(in[i]) * unscale);
}

void expandAdd(CompressionFormat format, const void* packed, size_t count, const void* with, void* out) {
  const char* w = static_cast<const char*>(packed);
  const char* other = static_cast<const char*>(with);
  char* dst = static_cast<char*>(out);
  const auto* k = fast();
  if (format == CompressionFormat::kBf16) {
    const auto* in = reinterpret_cast<const uint16_t*>(w);
    size_t i = k ? k->bf16DecodeAdd(in, count, with, out) : 0;
    for (; i < count; ++i) store(dst, i, bfloat16ToFloat(in[i]) + load(other, i));
    return;
  }
  int32_t e = 0;
  std::memcpy(&e, w, sizeof(e));
  const float unscale = std::ldexp(1.0f, e);
  const auto* in = reinterpret_cast<const uint16_t*>(w + 4);
  size_t i = k ? k->fp16DecodeAdd(in, count, unscale, with, out) : 0;
  for (; i < count; ++i) {
    const float decoded = halfToFloat(in[i]) * unscale;  // exact: a power of two
    store(dst, i, decoded + load(other, i));
  }
}

void expandAddCompress(CompressionFormat format, const void* packed, size_t count, const void* with, void* out,
                       void* compressedOut) {
  if (format != CompressionFormat::kBf16) {
    expandAdd(format, packed, count, with, out);
    compressFloats(format, out, count, compressedOut, out);
    return;
  }
  const auto* in = static_cast<const uint16_t*>(packed);
  const char* other = static_cast<const char*>(with);
  char* dst = static_cast<char*>(out);
  auto* w = static_cast<uint16_t*>(compressedOut);
  const auto* k = fast();
  size_t i = k ? k->bf16DecodeAddEncode(in, count, with, out, w) : 0;
  for (; i < count; ++i) {
    w[i] = floatToBfloat16(bfloat16ToFloat(in[i]) + load(other, i));
    store(dst, i, bfloat16ToFloat(w[i]));
  }
}

void roundSignificands(CompressionFormat format, void* values, size_t count) {
  if (format == CompressionFormat::kNone) return;
  const int dropped = format == CompressionFormat::kBf16 ? 16 : 13;  // float32 has 23 significand bits
  const uint32_t half = (1u << (dropped - 1)) - 1, keep = ~((1u << dropped) - 1);
  char* p = static_cast<char*>(values);
  size_t i = 0;
  if (const auto* k = fast()) i = k->roundSignificands(values, count, dropped);
  for (; i < count; ++i) {
    const uint32_t x = floatBits(load(p, i));
    if ((x & 0x7f800000u) == 0x7f800000u) continue;  // infinities and NaNs stay
    const uint32_t rounded = (x + half + ((x >> dropped) & 1u)) & keep;
    store(p, i, bitsFloat(rounded));
  }
}

}  // namespace chorus
