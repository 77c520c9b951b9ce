// Fuzzes the TCP data path's frame parsing: a TcpConnection with a few receives posted reads the input from a
// socketpair (as if a peer sent it, then closed). It must complete the receives or throw a chorus::Error; it must
// never write past a receive buffer (ASan) or report more than was posted.
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <vector>

#include "core/error.h"
#include "transports/tcp/tcp_connection.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Layout: u8 count (1..4 receives), per receive u16 bytes and u8 tag, then the stream the peer sent.
  if (size < 1) return 0;
  std::span<const uint8_t> in(data, size);
  const size_t count = 1 + in[0] % 4;
  in = in.subspan(1);
  if (in.size() < 3 * count) return 0;
  struct Receive {
    std::vector<char> buffer;
    uint32_t tag;
  };
  std::vector<Receive> receives;
  for (size_t i = 0; i < count; ++i) {
    size_t bytes = in[0] | (size_t{in[1]} << 8);
    receives.push_back({std::vector<char>(bytes), in[2]});
    in = in.subspan(3);
  }
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return 0;
  int sndbuf = 1 << 20;
  ::setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
  if (!in.empty() &&
      ::send(sv[1], in.data(), in.size(), MSG_NOSIGNAL | MSG_DONTWAIT) != static_cast<ssize_t>(in.size())) {
    ::close(sv[0]);
    ::close(sv[1]);
    return 0;
  }
  ::shutdown(sv[1], SHUT_WR);
  {
    chorus::TcpConnection conn(0, 1, "fuzz", {sv[0]});  // owns sv[0]
    for (Receive& r : receives) conn.irecv(r.buffer.data(), r.buffer.size(), r.tag);
    try {
      // The whole input is queued and the stream then ends: each round moves bytes or throws.
      for (int round = 0; round < 64 && conn.busy(); ++round) conn.progress();
      if (conn.recvsDone() > receives.size()) std::abort();
      conn.checkAlive();
    } catch (const chorus::Error&) {
    }
    if (conn.recvsDone() > receives.size()) std::abort();
  }
  ::close(sv[1]);
  return 0;
}
