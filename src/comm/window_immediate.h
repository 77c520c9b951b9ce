// The immediate a window put's RDMA write carries (ib: WindowRdmaWrites): the signal the target raises once the
// bytes are in, as (sigIdx, ctx) in 30 bits. Signals that do not fit travel as a frame behind the writes instead.
#pragma once

#include <cstdint>
#include <utility>

namespace chorus::window_immediate {

inline constexpr uint32_t kSigIdxBits = 20;  // sigIdx below 2^20
inline constexpr uint32_t kCtxBits = 10;     // ctx below 2^10
static_assert(kSigIdxBits + kCtxBits == 30);

inline bool fits(uint32_t sigIdx, uint32_t ctx) { return (sigIdx >> kSigIdxBits) == 0 && (ctx >> kCtxBits) == 0; }
// Only for a (sigIdx, ctx) that fits.
inline uint32_t encode(uint32_t sigIdx, uint32_t ctx) { return (ctx << kSigIdxBits) | sigIdx; }
// (sigIdx, ctx) of an immediate.
inline std::pair<uint32_t, uint32_t> decode(uint32_t immediate) {
  return {immediate & ((1u << kSigIdxBits) - 1), (immediate >> kSigIdxBits) & ((1u << kCtxBits) - 1)};
}

}  // namespace chorus::window_immediate
