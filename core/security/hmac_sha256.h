// HMAC-SHA256 (RFC 2104; test vectors in RFC 4231) through OpenSSL's libcrypto, and the constant-time comparison
// its checks need.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "core/security/sha256.h"

namespace chorus {

// Incremental HMAC-SHA256 under one key: update() the message in pieces, then finish() once.
class HmacSha256 {
 public:
  // Throws chorusSystemError when libcrypto refuses (it hashes keys longer than a block first, as RFC 2104 says).
  explicit HmacSha256(std::span<const uint8_t> key);
  explicit HmacSha256(std::string_view key);
  ~HmacSha256();
  // Appends bytes to the message.
  void update(std::span<const uint8_t> bytes);
  // Appends the characters of text to the message.
  void update(std::string_view text);
  // The MAC of everything appended; the object must not be used afterwards.
  Sha256Digest finish();

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

// The MAC of message under key in one call.
Sha256Digest hmacSha256(std::string_view key, std::span<const uint8_t> message);

// True when a and b hold the same bytes; the time taken depends only on the lengths, never on where they differ.
bool constantTimeEqual(std::span<const uint8_t> a, std::span<const uint8_t> b);

}  // namespace chorus
