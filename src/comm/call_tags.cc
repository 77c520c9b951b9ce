#include "src/comm/call_tags.h"

#include "transports/reserved_tags.h"

namespace chorus {
namespace {

// FNV-1a over the call's defining values (any root, any future collective gets its own signature). Not the peer:
// the two ends of a point-to-point call name each other, and the connection already says who they are.
uint32_t hashCall(const Op& op) {
  uint32_t h = 2166136261u;
  auto mix = [&h](uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= static_cast<uint32_t>(v >> (8 * i)) & 0xffu;
      h *= 16777619u;
    }
  };
  mix(static_cast<uint64_t>(op.collective));
  mix(static_cast<uint64_t>(op.type));
  mix(static_cast<uint64_t>(op.op));
  mix(static_cast<uint64_t>(static_cast<int64_t>(op.root)));
  return h;
}

}  // namespace

CallTags::CallTags(int nranks, bool checking) : checking_(checking), pairCalls_(static_cast<size_t>(nranks), 0) {}

void CallTags::begin(const Op& op) {
  if (op.peer < 0) {
    ++collectives_;
  } else {
    ++pairCalls_[static_cast<size_t>(op.peer)];
  }
  signature_ = hashCall(op) & ((uint32_t{1} << kSignatureBits) - 1);
}

uint32_t CallTags::fold(uint32_t tag) {
  return tag >= reserved_tags::kFirstReservedTag ? tag & 0x7fffffffu : tag;
}

}  // namespace chorus
