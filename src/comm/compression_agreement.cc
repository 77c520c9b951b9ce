#include "src/comm/compression_agreement.h"

#include <algorithm>
#include <cstring>

#include "core/logging.h"
#include "src/comm/message_compression.h"

namespace chorus {

void CompressionAgreement::configure(const std::string& compression, const std::vector<TransportId>& peerTransports,
                                     CommIO& io) {
  const std::string& text = compression;
  format_ = text.rfind("bf16", 0) == 0   ? CompressionFormat::kBf16
            : text.rfind("fp16", 0) == 0 ? CompressionFormat::kFp16
                                         : CompressionFormat::kNone;
  const bool allLinks = text.size() > 4 && text.substr(4) == ":all";
  std::vector<bool> peers(static_cast<size_t>(size_), false);
  for (int p = 0; p < size_; ++p) {
    if (p == rank_ || format_ == CompressionFormat::kNone) continue;
    peers[p] = allLinks || transportRecord(peerTransports[p]).medium == TransportMedium::kNetwork;
  }
  // Where every link is compressed and the world a power of two, every algorithm leaves each value either
  // computed alike on the ranks that hold it or sent on (and so rounded in place by its sender): the ranks agree
  // without the final pass. Otherwise (a full-precision link somewhere; a non-power-of-two world, whose folded
  // ranks get a value that its other holders never send on) the pass makes them agree.
  const auto compressed = std::count(peers.begin(), peers.end(), true);
  finalPass_ = format_ != CompressionFormat::kNone && (compressed != size_ - 1 || (size_ & (size_ - 1)) != 0);
  if (format_ != CompressionFormat::kNone) {
    CHORUS_INFO(rank_, "compression: float32 at " << compressionFormatName(format_) << " to " << compressed << " of "
                                                  << size_ - 1 << " peers");
  }
  io.setCompression(format_, std::move(peers));
}

const CallArgs& CompressionAgreement::inPlace(const CallArgs& o, bool deviceCall) {
  if (format_ == CompressionFormat::kNone || deviceCall || !compressibleCall(o)) return o;
  const size_t bytes = o.count * 4;
  char* recv = static_cast<char*>(o.recv);
  switch (o.collective) {
    // (An allreduce needs none: no algorithm sends a final or kept value from its input; the input is only read.)
    case Collective::kBroadcast: {
      if (o.send == o.recv) return o;
      inPlace_ = o;
      if (o.root == rank_) std::memmove(recv, o.send, bytes);
      inPlace_.send = recv;
      return inPlace_;
    }
    case Collective::kAllGather: {
      char* mine = recv + static_cast<size_t>(rank_) * bytes;
      if (o.send == mine) return o;
      inPlace_ = o;
      std::memmove(mine, o.send, bytes);
      inPlace_.send = mine;
      return inPlace_;
    }
    default:
      return o;
  }
}

void CompressionAgreement::roundResults(const CallArgs& o) const {
  if (!finalPass_) return;
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
  roundSignificands(format_, o.recv, count);
}

}  // namespace chorus
