// Internal: the AVX2/F16C bulk loops of compression_codec.cc. Each converts the longest prefix it can (a multiple of
// its vector width) and returns how many values it did; compression_codec.cc does the rest. Null where this build
// has none.
#pragma once

#include <cstddef>
#include <cstdint>

namespace chorus::compression_avx2 {

struct Kernels {
  size_t (*bf16Encode)(const void* in, size_t n, uint16_t* out, void* rounded);
  size_t (*bf16Decode)(const uint16_t* in, size_t n, void* out);
  // Largest finite |value| of the prefix it did (0 when none); *done = that prefix's length.
  float (*maxAbs)(const void* in, size_t n, size_t* done);
  // out = float16(in * scale); rounded = float(out) * unscale.
  size_t (*fp16Encode)(const void* in, size_t n, float scale, float unscale, uint16_t* out, void* rounded);
  size_t (*fp16Decode)(const uint16_t* in, size_t n, float unscale, void* out);
  // out = decoded in + with (expandAdd).
  size_t (*bf16DecodeAdd)(const uint16_t* in, size_t n, const void* with, void* out);
  size_t (*fp16DecodeAdd)(const uint16_t* in, size_t n, float unscale, const void* with, void* out);
  // out = the bfloat16 rounding of (decoded in + with); compressedOut = its bfloat16 bits.
  size_t (*bf16DecodeAddEncode)(const uint16_t* in, size_t n, const void* with, void* out, uint16_t* compressedOut);
  // roundSignificands: drop `dropped` low significand bits, ties to even, skipping infinities and NaNs; a vector
  // whose values do not change is not stored.
  size_t (*roundSignificands)(void* values, size_t n, int dropped);
};

// Null when this build has no AVX2 code (not x86); call only once the CPU has AVX2 and F16C.
const Kernels* kernels();

}  // namespace chorus::compression_avx2
