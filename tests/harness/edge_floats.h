// Floating-point inputs that stress reductions, for the CPU and the GPU reducer tests alike.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>

namespace chorus::test {

// A float or double of the kind `kind` picks (mod 16): -0, +0, NaN, an infinity, a denormal, any bit pattern
// (huge, tiny, signalling NaNs), or for the ten other kinds an ordinary value over a wide range of exponents.
template <typename F>
F edgeOrOrdinaryFloat(uint64_t kind, std::mt19937_64& rng) {
  using Bits = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
  const uint64_t r = rng();
  switch (kind % 16) {
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
    case 5: {
      const auto bits = static_cast<Bits>(r);
      F f;
      std::memcpy(&f, &bits, sizeof(f));
      return f;
    }
    default:
      return static_cast<F>(std::ldexp(static_cast<double>(r % 2000000) - 1e6, static_cast<int>(r >> 58) - 40));
  }
}

}  // namespace chorus::test
