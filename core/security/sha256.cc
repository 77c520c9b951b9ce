#include "core/security/sha256.h"

#include <openssl/err.h>
#include <openssl/evp.h>

#include "core/security/crypto_error.h"

namespace chorus {

struct Sha256::Context {
  EVP_MD_CTX* md = nullptr;
  ~Context() { EVP_MD_CTX_free(md); }
};

Sha256::Sha256() : context_(std::make_unique<Context>()) {
  context_->md = EVP_MD_CTX_new();
  if (context_->md == nullptr || EVP_DigestInit_ex(context_->md, EVP_sha256(), nullptr) != 1) {
    throwCryptoError("SHA-256", "EVP_DigestInit_ex");
  }
}

Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(std::span<const uint8_t> bytes) {
  if (!bytes.empty() && EVP_DigestUpdate(context_->md, bytes.data(), bytes.size()) != 1) {
    throwCryptoError("SHA-256", "EVP_DigestUpdate");
  }
}

void Sha256::update(std::string_view text) {
  update(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

Sha256Digest Sha256::finish() {
  Sha256Digest digest{};
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(context_->md, digest.data(), &length) != 1 || length != digest.size()) {
    throwCryptoError("SHA-256", "EVP_DigestFinal_ex");
  }
  return digest;
}

Sha256Digest sha256(std::span<const uint8_t> bytes) {
  Sha256 h;
  h.update(bytes);
  return h.finish();
}

Sha256Digest sha256(std::string_view text) {
  Sha256 h;
  h.update(text);
  return h.finish();
}

}  // namespace chorus
