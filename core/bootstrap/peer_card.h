// What each rank tells every other at init: who it is, where it runs, how to reach it.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/bootstrap/store.h"

namespace chorus {

struct PeerCard {
  int rank = -1;
  int pid = 0;
  std::string hostId;                           // hostname + boot id (CHORUS_HOST_ID later overrides)
  std::map<std::string, std::string> entries;   // per-transport facts, e.g. "tcp.addr" -> "10.0.0.2:4312"

  Bytes encode() const;
  // Parses and bounds-checks; throws chorusRemoteError naming `from` on malformed bytes.
  static PeerCard decode(const Bytes& bytes, int from);
};

}  // namespace chorus
