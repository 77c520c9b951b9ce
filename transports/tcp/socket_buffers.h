// How a data socket's send and receive buffers are sized, decided once per process from what the machine allows.
//
// Fixed 4 MiB buffers keep loopback and LAN runs steady (the kernel's autotuning starts at 16 KiB and settles
// differently per connection: perf/results/tcp.md, "Socket buffers and options"). But the kernel silently caps
// SO_SNDBUF/SO_RCVBUF at net.core.wmem_max/rmem_max, and a buffer set by hand is never autotuned again: where those
// maxima are the long-standing default of 212992, a "fixed" buffer holds 416 KiB, less than one 512 KiB slice, and
// a 1 MiB allreduce ran at 0.4x Open MPI's (perf/results/tcp.md, "Capped socket buffers"). So:
//   - maxima of 4 MiB or more: fixed buffers (SO_SNDBUF, SO_RCVBUF);
//   - lower maxima, with CAP_NET_ADMIN: fixed buffers past them (SO_SNDBUFFORCE, SO_RCVBUFFORCE);
//   - otherwise: the kernel's autotuning (up to net.ipv4.tcp_[rw]mem's maximum), never a capped fixed size.
#pragma once

#include <string>

namespace chorus {

inline constexpr int kSocketBufferBytes = 4 << 20;

enum class SocketBufferMode { kFixed, kForced, kAutotuned };

struct SocketBufferPlan {
  SocketBufferMode mode = SocketBufferMode::kFixed;
  long rmemMax = -1, wmemMax = -1;  // net.core.[rw]mem_max as read (-1: unreadable, taken as large enough)
};

// The plan for net.core.[rw]mem_max as read from `procSysNetCore` (a directory holding rmem_max and wmem_max), and
// whether this process may force sizes past them.
SocketBufferPlan planSocketBuffers(const std::string& procSysNetCore, bool mayForce);

// The process's plan, made at first use (the maxima read, and forcing tried on a throwaway socket if they are low).
const SocketBufferPlan& socketBufferPlan();

// Sizes fd's buffers by the process's plan. Returns 0 or the errno of a failed setsockopt.
int applySocketBuffers(int fd);

// One line for the log: the mode and the maxima it was chosen from.
std::string describeSocketBuffers(const SocketBufferPlan& plan);

}  // namespace chorus
