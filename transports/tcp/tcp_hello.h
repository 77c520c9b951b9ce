// The first bytes on every TCP data socket: who is calling, for which job and communicator, which stripe, and
// whether the channel handshake (core/security/channel_handshake.h) follows. Fixed size, little-endian:
//   u32 magic "CHHL" | u32 version 2 | i32 from | i32 to | u32 stripe index | u32 nsocks | u32 flags | u32 0 |
//   32-byte SHA-256 of the job key
// The job key is hashed, not copied: it has no length limit and two keys never share a truncated prefix.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/security/sha256.h"

namespace chorus {

struct TcpHello {
  static constexpr size_t kBytes = 64;
  static constexpr uint32_t kFlagAuthenticate = 1;  // the dialer has a secret: the handshake follows the hello
  static constexpr uint32_t kFlagEncrypt = 2;       // the dialer seals its frames (CHORUS_ENCRYPT; needs the secret)
  static constexpr uint32_t kMaxSockets = 16;

  int32_t from = -1;
  int32_t to = -1;
  uint32_t index = 0;
  uint32_t nsocks = 1;
  uint32_t flags = 0;
  Sha256Digest jobKeyHash{};

  // The kBytes wire form.
  std::array<uint8_t, kBytes> encode() const;
  // Parses exactly kBytes (anything else is a problem); on failure returns false with *problem saying why.
  // Checks the fields' own ranges (ranks >= 0, 1 <= nsocks <= kMaxSockets, index < nsocks, known flags), not
  // whether this rank expects them.
  static bool decode(std::span<const uint8_t> bytes, TcpHello* hello, std::string* problem);
};

// Why a rank refuses an incoming hello; empty when it accepts it. stripesTaken holds, for every peer of this
// transport, one flag per stripe of the pair, true once connected (a higher rank's are all true: it is dialled,
// never dials us). A hello asking for authentication is refused by a rank without a secret, and vice versa; one
// that seals its frames by a rank that does not (selfEncrypts), and vice versa.
std::string incomingHelloProblem(const TcpHello& hello, int selfRank, const Sha256Digest& jobKeyHash,
                                 bool selfHasSecret, const std::map<int, std::vector<bool>>& stripesTaken,
                                 bool selfEncrypts = false);

// The context string both ends of a data socket bind the channel handshake to: the hello as sent.
std::string tcpAuthContext(const std::array<uint8_t, TcpHello::kBytes>& helloBytes);

}  // namespace chorus
