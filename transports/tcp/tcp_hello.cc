#include "transports/tcp/tcp_hello.h"

#include <algorithm>

#include "core/little_endian.h"

namespace chorus {

namespace {

constexpr uint32_t kHelloMagic = 0x4c484843;  // "CHHL" as little-endian bytes
constexpr uint32_t kHelloVersion = 2;

}  // namespace

std::array<uint8_t, TcpHello::kBytes> TcpHello::encode() const {
  std::array<uint8_t, kBytes> out{};
  putU32(out.data(), kHelloMagic);
  putU32(out.data() + 4, kHelloVersion);
  putU32(out.data() + 8, static_cast<uint32_t>(from));
  putU32(out.data() + 12, static_cast<uint32_t>(to));
  putU32(out.data() + 16, index);
  putU32(out.data() + 20, nsocks);
  putU32(out.data() + 24, flags);
  putU32(out.data() + 28, 0);
  std::copy(jobKeyHash.begin(), jobKeyHash.end(), out.begin() + 32);
  return out;
}

bool TcpHello::decode(std::span<const uint8_t> bytes, TcpHello* hello, std::string* problem) {
  if (bytes.size() != kBytes) {
    *problem = "hello is " + std::to_string(bytes.size()) + " bytes, not " + std::to_string(kBytes);
    return false;
  }
  const uint8_t* in = bytes.data();
  if (getU32(in) != kHelloMagic) {
    *problem = "not a Chorus hello (bad magic)";
    return false;
  }
  if (getU32(in + 4) != kHelloVersion) {
    *problem = "hello version " + std::to_string(getU32(in + 4)) + ", not " + std::to_string(kHelloVersion) +
               " (another Chorus version?)";
    return false;
  }
  TcpHello h;
  h.from = static_cast<int32_t>(getU32(in + 8));
  h.to = static_cast<int32_t>(getU32(in + 12));
  h.index = getU32(in + 16);
  h.nsocks = getU32(in + 20);
  h.flags = getU32(in + 24);
  if (getU32(in + 28) != 0) {
    *problem = "hello has a non-zero reserved field";
    return false;
  }
  if (h.from < 0 || h.to < 0) {
    *problem = "hello names a negative rank";
    return false;
  }
  if (h.nsocks < 1 || h.nsocks > kMaxSockets || h.index >= h.nsocks) {
    *problem = "hello has stripe " + std::to_string(h.index) + " of " + std::to_string(h.nsocks);
    return false;
  }
  if ((h.flags & ~(kFlagAuthenticate | kFlagEncrypt)) != 0) {
    *problem = "hello has unknown flags " + std::to_string(h.flags);
    return false;
  }
  std::copy(in + 32, in + 64, h.jobKeyHash.begin());
  *hello = h;
  return true;
}

std::string incomingHelloProblem(const TcpHello& hello, int selfRank, const Sha256Digest& jobKeyHash,
                                 bool selfHasSecret, const std::map<int, std::vector<bool>>& stripesTaken,
                                 bool selfEncrypts) {
  if (hello.jobKeyHash != jobKeyHash) return "hello for another job or communicator";
  const bool wantsAuth = (hello.flags & TcpHello::kFlagAuthenticate) != 0;
  if (wantsAuth && !selfHasSecret) return "the peer has a secret and this rank has none (is CHORUS_SECRET set alike?)";
  if (!wantsAuth && selfHasSecret) return "the peer presented no secret";
  const bool seals = (hello.flags & TcpHello::kFlagEncrypt) != 0;
  if (seals != selfEncrypts) {
    return seals ? "the peer encrypts its frames and this rank does not (is CHORUS_ENCRYPT set alike?)"
                 : "the peer does not encrypt its frames and this rank does (is CHORUS_ENCRYPT set alike?)";
  }
  auto it = stripesTaken.find(hello.from);
  if (hello.to != selfRank || it == stripesTaken.end() || hello.from >= selfRank || hello.nsocks != it->second.size() ||
      hello.index >= hello.nsocks || it->second[hello.index]) {
    return "unexpected hello (from rank " + std::to_string(hello.from) + " to rank " + std::to_string(hello.to) +
           ", stripe " + std::to_string(hello.index) + " of " + std::to_string(hello.nsocks) + ")";
  }
  return {};
}

std::string tcpAuthContext(const std::array<uint8_t, TcpHello::kBytes>& helloBytes) {
  return "chorus tcp v2 hello " + std::string(helloBytes.begin(), helloBytes.end());
}

}  // namespace chorus
