// Fixed-width integers in wire formats, little-endian whatever the host's order.
#pragma once

#include <cstdint>

namespace chorus {

// Writes the low `bytes` bytes of value to out, least significant first.
inline void putLe(uint8_t* out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out[i] = static_cast<uint8_t>(value >> (8 * i));
}

// Reads `bytes` bytes from in, least significant first.
inline uint64_t getLe(const uint8_t* in, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= static_cast<uint64_t>(in[i]) << (8 * i);
  return value;
}

// The 32-bit cases, which most headers use.
inline void putU32(uint8_t* out, uint32_t value) { putLe(out, value, 4); }
inline uint32_t getU32(const uint8_t* in) { return static_cast<uint32_t>(getLe(in, 4)); }

}  // namespace chorus
