#include "core/security/hmac_sha256.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "core/security/crypto_error.h"

namespace chorus {

struct HmacSha256::Context {
  EVP_MAC* mac = nullptr;
  EVP_MAC_CTX* ctx = nullptr;
  ~Context() {
    EVP_MAC_CTX_free(ctx);
    EVP_MAC_free(mac);
  }
};

HmacSha256::HmacSha256(std::span<const uint8_t> key) : context_(std::make_unique<Context>()) {
  context_->mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  if (context_->mac == nullptr) throwCryptoError("HMAC-SHA256", "EVP_MAC_fetch");
  context_->ctx = EVP_MAC_CTX_new(context_->mac);
  if (context_->ctx == nullptr) throwCryptoError("HMAC-SHA256", "EVP_MAC_CTX_new");
  char digest[] = "SHA256";
  const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                               OSSL_PARAM_construct_end()};
  // A non-null key pointer even for an empty key: libcrypto reads a null one as "no key given".
  static const uint8_t kNoKey = 0;
  if (EVP_MAC_init(context_->ctx, key.empty() ? &kNoKey : key.data(), key.size(), params) != 1) {
    throwCryptoError("HMAC-SHA256", "EVP_MAC_init");
  }
}

HmacSha256::HmacSha256(std::string_view key)
    : HmacSha256(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(key.data()), key.size())) {}

HmacSha256::~HmacSha256() = default;

void HmacSha256::update(std::span<const uint8_t> bytes) {
  if (!bytes.empty() && EVP_MAC_update(context_->ctx, bytes.data(), bytes.size()) != 1) {
    throwCryptoError("HMAC-SHA256", "EVP_MAC_update");
  }
}

void HmacSha256::update(std::string_view text) {
  update(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

Sha256Digest HmacSha256::finish() {
  Sha256Digest out{};
  size_t length = 0;
  if (EVP_MAC_final(context_->ctx, out.data(), &length, out.size()) != 1 || length != out.size()) {
    throwCryptoError("HMAC-SHA256", "EVP_MAC_final");
  }
  return out;
}

Sha256Digest hmacSha256(std::string_view key, std::span<const uint8_t> message) {
  HmacSha256 mac(key);
  mac.update(message);
  return mac.finish();
}

bool constantTimeEqual(std::span<const uint8_t> a, std::span<const uint8_t> b) {
  if (a.size() != b.size()) return false;
  return a.empty() || CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace chorus
