#include "launcher/line_tagger.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace chorus::launcher {

namespace {

// A line longer than this is written in pieces rather than held without bound.
constexpr size_t kMaxHeldLine = 64 * 1024;

}  // namespace

LineTagger::LineTagger(int rank, int outFd) : outFd_(outFd) {
  // Built piecewise: g++ 12 -O3 raises a false -Wrestrict on `"[" + std::string` (GCC bug 105329).
  prefix_.push_back('[');
  prefix_.append(std::to_string(rank));
  prefix_.append("] ");
}

void LineTagger::append(const char* data, size_t bytes) {
  while (bytes > 0) {
    const char* newline = static_cast<const char*>(std::memchr(data, '\n', bytes));
    if (newline == nullptr) {
      pending_.append(data, bytes);
      if (pending_.size() >= kMaxHeldLine) {
        emit(pending_.data(), pending_.size(), false);
        pending_.clear();
      }
      return;
    }
    size_t lineBytes = static_cast<size_t>(newline - data) + 1;
    if (pending_.empty()) {
      emit(data, lineBytes, true);
    } else {
      pending_.append(data, lineBytes);
      emit(pending_.data(), pending_.size(), true);
      pending_.clear();
    }
    data += lineBytes;
    bytes -= lineBytes;
  }
}

void LineTagger::finish() {
  if (!pending_.empty()) {
    pending_.push_back('\n');
    emit(pending_.data(), pending_.size(), true);
    pending_.clear();
  } else if (midLine_) {
    emit("\n", 1, true);
  }
}

void LineTagger::emit(const char* data, size_t bytes, bool endsLine) {
  scratch_.clear();
  if (!midLine_) scratch_.append(prefix_);
  scratch_.append(data, bytes);
  writeFully(outFd_, scratch_.data(), scratch_.size());
  midLine_ = !endsLine;
}

void writeFully(int fd, const char* data, size_t bytes) {
  while (bytes > 0) {
    ssize_t n = ::write(fd, data, bytes);
    if (n > 0) {
      data += n;
      bytes -= static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, 1000);
    } else {
      return;  // EPIPE or a closed fd: nobody reads this output any more
    }
  }
}

}  // namespace chorus::launcher
