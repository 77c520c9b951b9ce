#include "core/security/hmac_sha256.h"

namespace chorus {

HmacSha256::HmacSha256(std::span<const uint8_t> key) {
  std::array<uint8_t, Sha256::kBlockBytes> block{};
  if (key.size() > block.size()) {
    Sha256Digest hashed = sha256(key);
    std::copy(hashed.begin(), hashed.end(), block.begin());
  } else {
    std::copy(key.begin(), key.end(), block.begin());
  }
  std::array<uint8_t, Sha256::kBlockBytes> innerKeyPad;
  for (size_t i = 0; i < block.size(); ++i) {
    innerKeyPad[i] = block[i] ^ 0x36;
    outerKeyPad_[i] = block[i] ^ 0x5c;
  }
  inner_.update(innerKeyPad);
}

HmacSha256::HmacSha256(std::string_view key)
    : HmacSha256(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(key.data()), key.size())) {}

void HmacSha256::update(std::span<const uint8_t> bytes) { inner_.update(bytes); }

void HmacSha256::update(std::string_view text) { inner_.update(text); }

Sha256Digest HmacSha256::finish() {
  Sha256Digest innerDigest = inner_.finish();
  Sha256 outer;
  outer.update(outerKeyPad_);
  outer.update(innerDigest);
  return outer.finish();
}

Sha256Digest hmacSha256(std::string_view key, std::span<const uint8_t> message) {
  HmacSha256 mac(key);
  mac.update(message);
  return mac.finish();
}

bool constantTimeEqual(std::span<const uint8_t> a, std::span<const uint8_t> b) {
  if (a.size() != b.size()) return false;
  // Accumulate every difference; volatile keeps the compiler from turning this into an early-exit memcmp.
  volatile uint8_t difference = 0;
  for (size_t i = 0; i < a.size(); ++i) difference = difference | (a[i] ^ b[i]);
  return difference == 0;
}

}  // namespace chorus
