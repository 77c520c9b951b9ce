// float32 data carried at 16 bits on the wire (CHORUS_COMPRESSION): bfloat16, or float16 scaled by a power of two
// per message so that its largest finite value cannot overflow. Round to nearest even; infinities and NaNs survive.
//
// A message of `count` floats takes wireBytes(format, count) bytes: bfloat16, 2 per value; float16, a 4-byte
// little-endian scale exponent e, then 2 per value (value = float16 * 2^e). encodeWire can also write back, in place,
// the float each value decodes to, so that a sender keeps exactly what its peer receives (the ranks of an
// allreduce then agree bit for bit). Vectorized with AVX2/F16C where the CPU has them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace chorus {

enum class WireFormat : uint8_t { kNone = 0, kBf16 = 1, kFp16 = 2 };

// "none", "bf16", "fp16".
const char* wireFormatName(WireFormat format);
size_t wireBytes(WireFormat format, size_t count);
// Writes `count` floats from `values` (any alignment) to `wire`; `roundedOut` (may equal values, or be null) gets
// what the receiver will decode.
void encodeWire(WireFormat format, const void* values, size_t count, void* wire, void* roundedOut);
// Reads what encodeWire wrote for `count` floats into `out`.
void decodeWire(WireFormat format, const void* wire, size_t count, void* out);
// out[i] = decoded[i] + with[i], in float32: decodeWire and a float32 sum in one pass, bit for bit the same (the
// decoded value is exact). `out` may alias `with`.
void decodeWireAdd(WireFormat format, const void* wire, size_t count, const void* with, void* out);
// decodeWireAdd, then encodeWire of `out` into `wireOut` with `out` rounded in place to what it decodes to: in one
// pass for bfloat16 (float16's scale needs the sums' largest first: two passes).
void decodeWireAddEncode(WireFormat format, const void* wire, size_t count, const void* with, void* out,
                         void* wireOut);
// Rounds each finite value's significand, in place, to the format's (7 bits for bfloat16, 10 for float16), ties to
// even, ignoring float16's exponent range: idempotent, and a no-op on every value a message decoded to (save
// float16 subnormals, which it leaves alone too). Ranks that hold either x or x's wire rounding agree after it.
void roundSignificands(WireFormat format, void* values, size_t count);

}  // namespace chorus
