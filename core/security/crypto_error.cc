#include "core/security/crypto_error.h"

#include <openssl/err.h>

#include <string>

#include "core/error.h"

namespace chorus {

void throwCryptoError(const char* what, const char* call) {
  std::string reasons;
  char text[256];
  while (const unsigned long code = ERR_get_error()) {
    ERR_error_string_n(code, text, sizeof(text));
    reasons += (reasons.empty() ? "" : "; ") + std::string(text);
  }
  throw Error(chorusSystemError, std::string(what) + ": " + call + " failed: " +
                                     (reasons.empty() ? "no reason given" : reasons));
}

}  // namespace chorus
