// SHA-256 (FIPS 180-4), written here so that authentication needs no crypto library.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace chorus {

using Sha256Digest = std::array<uint8_t, 32>;

// Incremental SHA-256: update() any number of times, then finish() once.
class Sha256 {
 public:
  static constexpr size_t kBlockBytes = 64;
  static constexpr size_t kDigestBytes = 32;

  Sha256();
  // Appends bytes to the message.
  void update(std::span<const uint8_t> bytes);
  // Appends the characters of text to the message.
  void update(std::string_view text);
  // Pads, returns the digest of everything appended; the object must not be used afterwards.
  Sha256Digest finish();

 private:
  void compress(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, kBlockBytes> buffer_{};
  size_t buffered_ = 0;
  uint64_t totalBytes_ = 0;
};

// The digest of bytes in one call.
Sha256Digest sha256(std::span<const uint8_t> bytes);
// The digest of text in one call.
Sha256Digest sha256(std::string_view text);

}  // namespace chorus
