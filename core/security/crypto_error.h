// Failures of OpenSSL's libcrypto, worded once: which operation, which call, and libcrypto's own error text.
#pragma once

namespace chorus {

// Throws chorusSystemError "<what>: <call> failed: <libcrypto's queued error, or 'no reason given'>", emptying
// libcrypto's error queue of this thread.
[[noreturn]] void throwCryptoError(const char* what, const char* call);

}  // namespace chorus
