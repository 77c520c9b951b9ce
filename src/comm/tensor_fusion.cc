#include "src/comm/tensor_fusion.h"

#include <algorithm>
#include <cstring>

#include "core/datatype.h"

namespace chorus {

std::vector<std::vector<size_t>> planFusion(std::span<const CallArgs> ops, size_t threshold) {
  std::vector<std::vector<size_t>> plan;
  std::vector<bool> placed(ops.size(), false);
  for (size_t i = 0; i < ops.size(); ++i) {
    const CallArgs& o = ops[i];
    if (placed[i] || isPointToPoint(o.collective)) continue;
    placed[i] = true;
    plan.push_back({i});
    const bool fusable = o.collective == Collective::kAllReduce && countBytes(o) > 0 && countBytes(o) <= threshold;
    if (!fusable) continue;
    size_t total = countBytes(o);
    for (size_t j = i + 1; j < ops.size(); ++j) {
      const CallArgs& p = ops[j];
      if (placed[j] || p.collective != Collective::kAllReduce || p.type != o.type || p.reduction != o.reduction)
        continue;
      if (countBytes(p) == 0 || total + countBytes(p) > threshold) continue;
      placed[j] = true;
      total += countBytes(p);
      plan.back().push_back(j);
    }
  }
  return plan;
}

bool contiguous(std::span<const CallArgs> ops, const std::vector<size_t>& members) {
  const char* send = static_cast<const char*>(ops[members.front()].send);
  const char* recv = static_cast<const char*>(ops[members.front()].recv);
  const char* firstSend = send;
  const char* firstRecv = recv;
  for (size_t m : members) {
    if (ops[m].send != send || ops[m].recv != recv) return false;
    send += countBytes(ops[m]);
    recv += countBytes(ops[m]);
  }
  // One call's buffers must be the same or apart, as the C API demands of every call.
  return firstSend == firstRecv || send <= firstRecv || recv <= firstSend;
}

CallArgs contiguousAllReduce(std::span<const CallArgs> ops, const std::vector<size_t>& members) {
  CallArgs fused = fusedAllReduce(ops, members, nullptr);
  fused.send = ops[members.front()].send;
  fused.recv = ops[members.front()].recv;
  return fused;
}

void packFused(std::span<const CallArgs> ops, const std::vector<size_t>& members, char* buffer) {
  for (size_t m : members) {
    std::memcpy(buffer, ops[m].send, countBytes(ops[m]));
    buffer += countBytes(ops[m]);
  }
}

void unpackFused(std::span<const CallArgs> ops, const std::vector<size_t>& members, const char* buffer) {
  for (size_t m : members) {
    std::memcpy(ops[m].recv, buffer, countBytes(ops[m]));
    buffer += countBytes(ops[m]);
  }
}

CallArgs fusedAllReduce(std::span<const CallArgs> ops, const std::vector<size_t>& members, char* buffer) {
  const CallArgs& first = ops[members.front()];
  size_t count = 0;
  for (size_t m : members) count += ops[m].count;
  return CallArgs{.collective = Collective::kAllReduce,
                  .send = buffer,
                  .recv = buffer,
                  .count = count,
                  .type = first.type,
                  .reduction = first.reduction};
}

const CallArgs& FusionBuffer::fuse(std::span<const CallArgs> ops, const std::vector<size_t>& members) {
  packed_ = !contiguous(ops, members);
  if (!packed_) {
    fused_ = contiguousAllReduce(ops, members);
  } else {
    size_t bytes = 0;
    for (size_t m : members) bytes += ops[m].count * typeSize(ops[m].type);
    if (buffer_.size() < bytes) buffer_.resize(std::max(bytes, 2 * buffer_.size()));
    fused_ = fusedAllReduce(ops, members, buffer_.data());
    packFused(ops, members, buffer_.data());
  }
  fused_.seq = ops[members.front()].seq;
  return fused_;
}

void FusionBuffer::unpack(std::span<const CallArgs> ops, const std::vector<size_t>& members) const {
  if (packed_) unpackFused(ops, members, buffer_.data());
}

}  // namespace chorus
