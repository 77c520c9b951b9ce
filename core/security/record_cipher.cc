#include "core/security/record_cipher.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include <climits>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/security/crypto_error.h"

namespace chorus {

namespace {
constexpr size_t kNonceBytes = 12;

// The record's 96-bit nonce: four zero bytes, then its number, big-endian.
std::array<uint8_t, kNonceBytes> nonceOf(uint64_t number) {
  std::array<uint8_t, kNonceBytes> nonce{};
  for (int i = 0; i < 8; ++i) nonce[kNonceBytes - 1 - i] = static_cast<uint8_t>(number >> (8 * i));
  return nonce;
}

int lengthOf(size_t bytes) {
  if (bytes > static_cast<size_t>(INT_MAX)) throwInternal("RecordCipher: a record over 2 GiB");
  return static_cast<int>(bytes);
}
}  // namespace

struct RecordCipher::Contexts {
  EVP_CIPHER_CTX* seal = nullptr;
  EVP_CIPHER_CTX* open = nullptr;
  ~Contexts() {
    EVP_CIPHER_CTX_free(seal);
    EVP_CIPHER_CTX_free(open);
  }
};

RecordCipher::RecordCipher(const Key& key) : contexts_(std::make_unique<Contexts>()) {
  contexts_->seal = EVP_CIPHER_CTX_new();
  contexts_->open = EVP_CIPHER_CTX_new();
  if (contexts_->seal == nullptr || contexts_->open == nullptr) throwCryptoError("AES-128-GCM", "EVP_CIPHER_CTX_new");
  // The key schedule is made once; each record only sets its nonce.
  if (EVP_EncryptInit_ex(contexts_->seal, EVP_aes_128_gcm(), nullptr, key.data(), nullptr) != 1 ||
      EVP_DecryptInit_ex(contexts_->open, EVP_aes_128_gcm(), nullptr, key.data(), nullptr) != 1) {
    throwCryptoError("AES-128-GCM", "EVP_EncryptInit_ex");
  }
}

RecordCipher::~RecordCipher() = default;

void RecordCipher::seal(uint64_t number, std::span<const uint8_t> header, std::span<const uint8_t> plain,
                        uint8_t* out) {
  EVP_CIPHER_CTX* c = contexts_->seal;
  const auto nonce = nonceOf(number);
  uint8_t scratch[16];  // GCM's final step writes nothing; it still wants somewhere to
  int n = 0;
  if (EVP_EncryptInit_ex(c, nullptr, nullptr, nullptr, nonce.data()) != 1 ||
      EVP_EncryptUpdate(c, nullptr, &n, header.data(), lengthOf(header.size())) != 1 ||
      (!plain.empty() && EVP_EncryptUpdate(c, out, &n, plain.data(), lengthOf(plain.size())) != 1) ||
      EVP_EncryptFinal_ex(c, scratch, &n) != 1 ||
      EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, static_cast<int>(kTagBytes), out + plain.size()) != 1) {
    throwCryptoError("AES-128-GCM seal", "EVP_Encrypt*");
  }
}

bool RecordCipher::open(uint64_t number, std::span<const uint8_t> header, std::span<const uint8_t> sealed,
                        uint8_t* out) {
  if (sealed.size() < kTagBytes) return false;
  EVP_CIPHER_CTX* c = contexts_->open;
  const size_t plainBytes = sealed.size() - kTagBytes;
  const auto nonce = nonceOf(number);
  int n = 0;
  if (EVP_DecryptInit_ex(c, nullptr, nullptr, nullptr, nonce.data()) != 1 ||
      EVP_DecryptUpdate(c, nullptr, &n, header.data(), lengthOf(header.size())) != 1 ||
      (plainBytes > 0 && EVP_DecryptUpdate(c, out, &n, sealed.data(), lengthOf(plainBytes)) != 1) ||
      EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, static_cast<int>(kTagBytes),
                          const_cast<uint8_t*>(sealed.data() + plainBytes)) != 1) {
    throwCryptoError("AES-128-GCM open", "EVP_Decrypt*");
  }
  // Final checks the tag; its failure is the record's, not libcrypto's: no error to report but "does not open".
  uint8_t scratch[16];  // GCM's final step writes nothing; it still wants somewhere to
  return EVP_DecryptFinal_ex(c, scratch, &n) == 1;
}

RecordCipher::Key deriveRecordKey(std::string_view secret, std::span<const uint8_t> salt, std::string_view label) {
  EVP_KDF* kdf = EVP_KDF_fetch(nullptr, "HKDF", nullptr);
  if (kdf == nullptr) throwCryptoError("HKDF-SHA256", "EVP_KDF_fetch");
  EVP_KDF_CTX* ctx = EVP_KDF_CTX_new(kdf);
  EVP_KDF_free(kdf);
  if (ctx == nullptr) throwCryptoError("HKDF-SHA256", "EVP_KDF_CTX_new");
  char digest[] = "SHA256";
  std::string key(secret), info(label);
  std::vector<uint8_t> saltCopy(salt.begin(), salt.end());
  const OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, key.data(), key.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, saltCopy.data(), saltCopy.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info.data(), info.size()),
      OSSL_PARAM_construct_end()};
  RecordCipher::Key out{};
  const int ok = EVP_KDF_derive(ctx, out.data(), out.size(), params);
  EVP_KDF_CTX_free(ctx);
  if (ok != 1) throwCryptoError("HKDF-SHA256", "EVP_KDF_derive");
  return out;
}

}  // namespace chorus
