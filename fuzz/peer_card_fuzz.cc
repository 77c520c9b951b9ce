// Fuzzes the peer card decoder (cards come from the store, written by other ranks): it must refuse with a
// chorus::Error or return a card that encodes back to a card that decodes to the same thing.
#include <cstdint>
#include <cstdlib>

#include "core/error.h"
#include "core/bootstrap/peer_card.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  chorus::Bytes bytes(data, data + size);
  chorus::PeerCard card;
  try {
    card = chorus::PeerCard::decode(bytes, 3);
  } catch (const chorus::Error&) {
    return 0;
  }
  chorus::PeerCard again = chorus::PeerCard::decode(card.encode(), 3);
  if (again.rank != card.rank || again.pid != card.pid || again.hostId != card.hostId ||
      again.entries != card.entries) {
    std::abort();
  }
  return 0;
}
