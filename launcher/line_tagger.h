// Splits one rank's output stream into lines and writes each whole line, prefixed "[rank] ", to an fd.
#pragma once

#include <cstddef>
#include <string>

namespace chorus::launcher {

class LineTagger {
 public:
  LineTagger(int rank, int outFd);

  // Buffers data and writes every line it completes, each with one write() so that ranks' lines never mix.
  void append(const char* data, size_t bytes);
  // Writes a held partial line (ending it with a newline); call at end of stream.
  void finish();

 private:
  void emit(const char* data, size_t bytes, bool endsLine);

  std::string prefix_;
  int outFd_;
  std::string pending_;   // the unfinished line
  bool midLine_ = false;  // part of the current line was already written (it was too long to hold)
  std::string scratch_;
};

// Writes all of data to fd, retrying on EINTR/EAGAIN; drops it silently if the reader is gone (EPIPE).
void writeFully(int fd, const char* data, size_t bytes);

}  // namespace chorus::launcher
