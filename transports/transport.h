// A kind of link (NCCL's ncclTransport). Probed in order per peer pair (transport_registry.h); the first that can
// connect wins.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/deadline.h"
#include "transports/connection.h"
#include "core/bootstrap/peer_card.h"

namespace chorus {

class Transport {
 public:
  virtual ~Transport() = default;
  // Adds this transport's listening address (or other facts) to the card this rank publishes.
  virtual void describeSelf(PeerCard& card) = 0;
  // Symmetric and deterministic: both ranks of a pair reach the same answer from the same two cards.
  virtual bool canConnect(const PeerCard& self, const PeerCard& peer) const = 0;
  // Establishes connections to `peers` (all chosen for this transport), both directions, before the deadline.
  virtual std::vector<std::unique_ptr<Connection>> connectAll(const PeerCard& self, const std::vector<PeerCard>& peers,
                                                               Deadline deadline) = 0;
};

}  // namespace chorus
