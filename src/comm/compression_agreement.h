// CHORUS_COMPRESSION on a communicator: which peers' links carry float32 at 16 bits, and the two steps around a
// compressed call that keep the ranks' results equal bit for bit (the compressed format: reduce/compression_codec.h;
// per message: src/comm/message_compression.h).
#pragma once

#include <string>
#include <vector>

#include "core/collective.h"
#include "reduce/compression_codec.h"
#include "src/comm/comm_io.h"
#include "transports/transport_registry.h"

namespace chorus {

class CompressionAgreement {
 public:
  CompressionAgreement(int rank, int size) : rank_(rank), size_(size) {}

  // `compression` (config compression): which links carry float32 at 16 bits (network ones, or all with ":all");
  // peerTransports[p] carries the link to rank p. Sets `io` to compress them.
  void configure(const std::string& compression, const std::vector<TransportId>& peerTransports, CommIO& io);
  // With compression on for `o`: an allgather or broadcast made in place (the input copied into the output), so
  // that every final value a rank sends is one it may round to what its peers receive; otherwise `o`. The copy
  // lives here until the next call. Device calls never compress (their buffers are not the CPU's to encode).
  const CallArgs& inPlace(const CallArgs& o, bool deviceCall);
  // After a compressed allreduce, allgather or broadcast: the results' significands rounded as the wire rounds
  // them, so that the ranks agree bit for bit. A sender already keeps what it sends (it rounds in place), but a
  // value may reach one rank over a compressed link and stay unrounded on another: the rank that computed it last
  // (a ring's owner of a block, a non-power-of-two world's folded ranks), or one behind a full-precision link.
  // Values already rounded are read, not written. Only where it is needed: see configure.
  void roundResults(const CallArgs& o) const;

 private:
  int rank_, size_;
  CompressionFormat format_ = CompressionFormat::kNone;  // what configure set the host CommIO to
  bool finalPass_ = false;                 // roundResults rounds (configure says when)
  CallArgs inPlace_;                       // inPlace's call (under the call lock)
};

}  // namespace chorus
