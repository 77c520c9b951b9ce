// How one message is cut across a connection's sockets: socket i carries the bytes [begin, end), in proportion to
// its weight, on 4 KiB boundaries so that each stripe copies whole pages. Messages under kStripeMin go whole on
// socket 0: striping them would only add headers and syscalls. Both ends of a connection must hold the same cuts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace chorus {

class StripeCuts {
 public:
  static constexpr size_t kStripeMin = 256 * 1024;

  // One weight per socket (> 0 in all; a socket of weight 0 carries nothing of a striped message).
  explicit StripeCuts(const std::vector<uint32_t>& weights);
  // Every socket alike.
  static StripeCuts even(size_t sockets) { return StripeCuts(std::vector<uint32_t>(sockets, 1)); }

  size_t sockets() const { return cumulative_.size() - 1; }
  void cut(size_t bytes, size_t i, size_t* begin, size_t* end) const;
  // The same for `sockets` alike, without a StripeCuts.
  static void evenCut(size_t bytes, size_t sockets, size_t i, size_t* begin, size_t* end);

 private:
  std::vector<uint64_t> cumulative_;  // cumulative_[i]: the weight of the sockets before i; back(): the total
};

}  // namespace chorus
