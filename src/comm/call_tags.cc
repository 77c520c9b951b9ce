#include "src/comm/call_tags.h"

#include "core/error.h"
#include "transports/reserved_tags.h"

namespace chorus {
namespace {

// The call's defining values packed into one word and mixed by one multiply (Fibonacci hashing; the top bits are
// the best mixed): any root, any future collective gets its own signature, for a few cycles per call. Not the
// peer: the two ends of a point-to-point call name each other, and the connection already says who they are.
uint32_t hashCall(const CallArgs& op) {
  const uint64_t key = static_cast<uint64_t>(op.collective) | (static_cast<uint64_t>(op.type) << 8) |
                       (static_cast<uint64_t>(op.reduction) << 16) |
                       (static_cast<uint64_t>(static_cast<uint32_t>(op.root)) << 32);
  return static_cast<uint32_t>((key * 0x9e3779b97f4a7c15ull) >> 32);
}

}  // namespace

CallTags::CallTags(int nranks, bool checking, uint64_t salt)
    : checking_(checking),
      salt_(salt),
      sends_(static_cast<size_t>(nranks), 0),
      recvs_(static_cast<size_t>(nranks), 0) {}

void CallTags::begin(const CallArgs& op) {
  if (op.peer >= 0) throwInternal("CallTags::begin takes collectives; point-to-point calls use beginPointToPoint");
  ++collectives_;
  signature_ = (hashCall(op) ^ static_cast<uint32_t>(salt_ ^ (salt_ >> 32))) >> (32 - kSignatureBits);
}

void CallTags::beginPointToPoint(const CallArgs& op, bool sends, bool receives) {
  const auto peer = static_cast<size_t>(op.peer);
  if (op.peer < 0 || peer >= sends_.size()) throwInternal("CallTags::beginPointToPoint without a valid peer");
  if (sends) ++sends_[peer];
  if (receives) ++recvs_[peer];
  signature_ = pointToPointSignature(op.type);
}

uint32_t CallTags::pointToPointSignature(chorusDataType_t type) const {
  // One kind for both ends (0xff, beside the collectives' numbers) and the datatype.
  return (static_cast<uint32_t>(((0xffull | (static_cast<uint64_t>(type) << 8)) * 0x9e3779b97f4a7c15ull) >> 32) ^
          static_cast<uint32_t>(salt_ ^ (salt_ >> 32))) >>
         (32 - kSignatureBits);
}

uint32_t CallTags::fold(uint32_t tag) {
  return tag >= reserved_tags::kFirstReservedTag ? tag & 0x7fffffffu : tag;
}

}  // namespace chorus
