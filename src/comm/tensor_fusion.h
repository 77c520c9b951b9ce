// Tensor fusion (Horovod's): a group's small allreduces of one datatype and op are packed into one buffer, reduced
// by one call, and unpacked, so that a thousand gradients cost one collective's latency instead of a thousand.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "core/collective.h"

namespace chorus {

// The order a batch's collectives run in: each entry lists indices into `ops`. An entry of several allreduces (one
// datatype and op, each at most `threshold` bytes, together at most `threshold`) runs fused, where its first member
// stood; every other collective is an entry of its own, in call order. Point-to-point calls are left out (they run
// first, together). threshold 0: no fusion. Every rank plans the same batch alike.
std::vector<std::vector<size_t>> planFusion(std::span<const CallArgs> ops, size_t threshold);

// True when the members' buffers already lie back to back in entry order (send after send, receive after receive,
// as the views of one flattened bucket do): then one call over them needs no packing (contiguousAllReduce).
bool contiguous(std::span<const CallArgs> ops, const std::vector<size_t>& members);
CallArgs contiguousAllReduce(std::span<const CallArgs> ops, const std::vector<size_t>& members);

// Packs the members' inputs into `buffer` (at least their total bytes), in entry order.
void packFused(std::span<const CallArgs> ops, const std::vector<size_t>& members, char* buffer);
// Copies each member's part of the reduced `buffer` to its recvbuff.
void unpackFused(std::span<const CallArgs> ops, const std::vector<size_t>& members, const char* buffer);
// The allreduce that stands for the members: over `buffer`, in place, their total count.
CallArgs fusedAllReduce(std::span<const CallArgs> ops, const std::vector<size_t>& members, char* buffer);

// A batch's fused allreduce and the buffer its members are packed into, kept from batch to batch (grows, never
// shrinks) so that a group's fusion costs no allocation once warm.
class FusionBuffer {
 public:
  // The allreduce that stands for `members` (numbered as the first of them): over their own buffers where they lie
  // back to back, else over this buffer with their inputs packed into it. Valid until the next fuse().
  const CallArgs& fuse(std::span<const CallArgs> ops, const std::vector<size_t>& members);
  // Whether the last fuse() packed (then unpack() after the call copies each member's result out).
  bool packed() const { return packed_; }
  void unpack(std::span<const CallArgs> ops, const std::vector<size_t>& members) const;

 private:
  std::vector<char> buffer_;
  CallArgs fused_;
  bool packed_ = false;
};

}  // namespace chorus
