// AES-128-GCM records for links that carry data encrypted (CHORUS_ENCRYPT), through OpenSSL's libcrypto: one key
// per direction of a socket, derived by HKDF-SHA256 from the job's secret and that socket's handshake nonces; a
// 96-bit nonce made from the record's number, which both ends count and nobody sends, so that a replayed, dropped
// or reordered record fails to open; the record's plaintext header as additional authenticated data; a 16-byte
// tag after the ciphertext.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

namespace chorus {

class RecordCipher {
 public:
  static constexpr size_t kKeyBytes = 16;  // AES-128, as TLS 1.3's mandatory suite: 1.2-1.35x AES-256's speed here
  static constexpr size_t kTagBytes = 16;
  using Key = std::array<uint8_t, kKeyBytes>;

  // Throws chorusSystemError when libcrypto refuses the key.
  explicit RecordCipher(const Key& key);
  ~RecordCipher();
  RecordCipher(const RecordCipher&) = delete;
  RecordCipher& operator=(const RecordCipher&) = delete;

  // Encrypts `plain` as record `number` into `out`, which holds plain.size() + kTagBytes bytes (ciphertext, then
  // tag). plain may be empty (the tag still authenticates the header).
  void seal(uint64_t number, std::span<const uint8_t> header, std::span<const uint8_t> plain, uint8_t* out);
  // Decrypts record `number` (`sealed`: ciphertext then tag) into `out` (sealed.size() - kTagBytes bytes); false
  // when it does not authenticate, in which case out holds nothing to trust.
  bool open(uint64_t number, std::span<const uint8_t> header, std::span<const uint8_t> sealed, uint8_t* out);

 private:
  struct Contexts;
  std::unique_ptr<Contexts> contexts_;
};

// HKDF-SHA256 (RFC 5869): a record key from the secret, a salt (the handshake's two nonces) and a label that
// names the direction and purpose.
RecordCipher::Key deriveRecordKey(std::string_view secret, std::span<const uint8_t> salt, std::string_view label);

}  // namespace chorus
