#include "core/security/random_bytes.h"

#include <sys/random.h>

#include <cerrno>

#include "core/error.h"

namespace chorus {

void fillRandom(std::span<uint8_t> out) {
  size_t got = 0;
  while (got < out.size()) {
    ssize_t r = getrandom(out.data() + got, out.size() - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throwSystemError("drawing random bytes", "getrandom", errno);
    got += static_cast<size_t>(r);
  }
}

}  // namespace chorus
