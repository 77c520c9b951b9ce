// CommEngine's part of CHORUS_COMPRESSION (the wire format itself: reduce/wire_codec.h; per message:
// src/comm/wire_compression.h).
#include <algorithm>
#include <cstring>

#include "core/logging.h"
#include "reduce/wire_codec.h"
#include "src/comm/comm_engine.h"
#include "src/comm/wire_compression.h"
#include "transports/transport_registry.h"

namespace chorus {

void CommEngine::configureWireCompression() {
  const std::string& text = config_.compression;
  const WireFormat format = text.rfind("bf16", 0) == 0   ? WireFormat::kBf16
                            : text.rfind("fp16", 0) == 0 ? WireFormat::kFp16
                                                         : WireFormat::kNone;
  const bool allLinks = text.size() > 4 && text.substr(4) == ":all";
  std::vector<bool> peers(static_cast<size_t>(size_), false);
  for (int p = 0; p < size_; ++p) {
    if (p == rank_ || format == WireFormat::kNone) continue;
    peers[p] = allLinks || transportRecord(peerTransports_[p]).medium == TransportMedium::kNetwork;
  }
  // Where every link is compressed and the world a power of two, every algorithm leaves each value either
  // computed alike on the ranks that hold it or sent on (and so rounded in place by its sender): the ranks agree
  // without the final pass. Otherwise (a full-precision link somewhere; a non-power-of-two world, whose folded
  // ranks get a value that its other holders never send on) the pass makes them agree.
  const auto compressed = std::count(peers.begin(), peers.end(), true);
  wireAgreementPass_ = format != WireFormat::kNone && (compressed != size_ - 1 || (size_ & (size_ - 1)) != 0);
  if (format != WireFormat::kNone) {
    CHORUS_INFO(rank_, "compression: float32 at " << wireFormatName(format) << " to "
                                                  << std::count(peers.begin(), peers.end(), true) << " of " << size_ - 1
                                                  << " peers");
  }
  io_->setWireCompression(format, std::move(peers));
}

const Op& CommEngine::wireInPlace(const Op& o) {
  const WireCompressor& wire = io_->wire();
  if (wire.format() == WireFormat::kNone || !compressibleCall(o)) return o;
  const size_t bytes = o.count * 4;
  char* recv = static_cast<char*>(o.recv);
  switch (o.collective) {
    // (An allreduce needs none: no algorithm sends a final or kept value from its input; the input is only read.)
    case Collective::kBroadcast: {
      if (o.send == o.recv) return o;
      wireOp_ = o;
      if (o.root == rank_) std::memmove(recv, o.send, bytes);
      wireOp_.send = recv;
      return wireOp_;
    }
    case Collective::kAllGather: {
      char* mine = recv + static_cast<size_t>(rank_) * bytes;
      if (o.send == mine) return o;
      wireOp_ = o;
      std::memmove(mine, o.send, bytes);
      wireOp_.send = mine;
      return wireOp_;
    }
    default:
      return o;
  }
}

void CommEngine::agreeAfterWire(const Op& o) {
  const WireCompressor& wire = io_->wire();
  if (!wireAgreementPass_) return;
  size_t count = o.count;
  switch (o.collective) {
    case Collective::kAllGather:
      count *= static_cast<size_t>(size_);
      break;
    case Collective::kAllReduce:
    case Collective::kBroadcast:
      break;
    default:
      return;  // reduce, reduce-scatter: one rank holds each result, there is nothing to agree on
  }
  roundSignificands(wire.format(), o.recv, count);
}

}  // namespace chorus
