// SHA-256 (FIPS 180-4) through OpenSSL's libcrypto, in the shape authentication and the TCP hello use.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

namespace chorus {

using Sha256Digest = std::array<uint8_t, 32>;

// Incremental SHA-256: update() any number of times, then finish() once.
class Sha256 {
 public:
  static constexpr size_t kBlockBytes = 64;
  static constexpr size_t kDigestBytes = 32;

  // Throws chorusSystemError when libcrypto cannot make a digest context.
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;
  // Appends bytes to the message.
  void update(std::span<const uint8_t> bytes);
  // Appends the characters of text to the message.
  void update(std::string_view text);
  // Returns the digest of everything appended; the object must not be used afterwards.
  Sha256Digest finish();

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

// The digest of bytes in one call.
Sha256Digest sha256(std::span<const uint8_t> bytes);
// The digest of text in one call.
Sha256Digest sha256(std::string_view text);

}  // namespace chorus
