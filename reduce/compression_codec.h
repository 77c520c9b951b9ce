// float32 data carried at 16 bits on the wire (CHORUS_COMPRESSION): bfloat16, or float16 scaled by a power of two
// per message so that its largest finite value cannot overflow. Round to nearest even; infinities and NaNs survive.
//
// A message of `count` floats takes compressedBytes(format, count) bytes: bfloat16, 2 per value; float16, a 4-byte
// little-endian scale exponent e, then 2 per value (value = float16 * 2^e). compressFloats can also write back, in
// place, the float each value decodes to, so that a sender keeps exactly what its peer receives (the ranks of an
// allreduce then agree bit for bit). Vectorized with AVX2/F16C where the CPU has them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace chorus {

enum class CompressionFormat : uint8_t { kNone = 0, kBf16 = 1, kFp16 = 2 };

// "none", "bf16", "fp16".
const char* compressionFormatName(CompressionFormat format);
size_t compressedBytes(CompressionFormat format, size_t count);
// Writes `count` floats from `values` (any alignment) to `packed`; `roundedOut` (may equal values, or be null) gets
// what the receiver will decode.
void compressFloats(CompressionFormat format, const void* values, size_t count, void* packed, void* roundedOut);
// Reads what compressFloats wrote for `count` floats into `out`.
void expandFloats(CompressionFormat format, const void* packed, size_t count, void* out);
// out[i] = decoded[i] + with[i], in float32: expandFloats and a float32 sum in one pass, bit for bit the same (the
// decoded value is exact). `out` may alias `with`.
void expandAdd(CompressionFormat format, const void* packed, size_t count, const void* with, void* out);
// expandAdd, then compressFloats of `out` into `compressedOut` with `out` rounded in place to what it decodes to:
// in one pass for bfloat16 (float16's scale needs the sums' largest first: two passes).
void expandAddCompress(CompressionFormat format, const void* packed, size_t count, const void* with, void* out,
                       void* compressedOut);
// Rounds each finite value's significand, in place, to the format's (7 bits for bfloat16, 10 for float16), ties to
// even, ignoring float16's exponent range: idempotent, and a no-op on every value a message decoded to (save
// float16 subnormals, which it leaves alone too). Ranks that hold either x or x's compressed rounding agree after it.
void roundSignificands(CompressionFormat format, void* values, size_t count);

}  // namespace chorus
