#include "transports/tcp/socket_buffers.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

namespace chorus {
namespace {

long readLong(const std::string& path) {
  std::ifstream f(path);
  long v = -1;
  if (!(f >> v)) return -1;
  return v;
}

int setBoth(int fd, int sndOpt, int rcvOpt) {
  const int bytes = kSocketBufferBytes;
  if (setsockopt(fd, SOL_SOCKET, sndOpt, &bytes, sizeof(bytes)) != 0) return errno;
  if (setsockopt(fd, SOL_SOCKET, rcvOpt, &bytes, sizeof(bytes)) != 0) return errno;
  return 0;
}

// Whether this process may size buffers past the maxima: tried on a throwaway socket (CAP_NET_ADMIN in the
// socket's network namespace is what the kernel checks, which no capability query of the process answers as simply).
bool mayForceBuffers() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const bool ok = setBoth(fd, SO_SNDBUFFORCE, SO_RCVBUFFORCE) == 0;
  close(fd);
  return ok;
}

}  // namespace

SocketBufferPlan planSocketBuffers(const std::string& procSysNetCore, bool mayForce) {
  SocketBufferPlan plan;
  plan.rmemMax = readLong(procSysNetCore + "/rmem_max");
  plan.wmemMax = readLong(procSysNetCore + "/wmem_max");
  auto enough = [](long v) { return v < 0 || v >= kSocketBufferBytes; };
  if (enough(plan.rmemMax) && enough(plan.wmemMax)) {
    plan.mode = SocketBufferMode::kFixed;
  } else {
    plan.mode = mayForce ? SocketBufferMode::kForced : SocketBufferMode::kAutotuned;
  }
  return plan;
}

const SocketBufferPlan& socketBufferPlan() {
  static const SocketBufferPlan plan = [] {
    SocketBufferPlan p = planSocketBuffers("/proc/sys/net/core", false);
    if (p.mode == SocketBufferMode::kAutotuned && mayForceBuffers()) p.mode = SocketBufferMode::kForced;
    return p;
  }();
  return plan;
}

int applySocketBuffers(int fd) {
  switch (socketBufferPlan().mode) {
    case SocketBufferMode::kFixed:
      return setBoth(fd, SO_SNDBUF, SO_RCVBUF);
    case SocketBufferMode::kForced:
      return setBoth(fd, SO_SNDBUFFORCE, SO_RCVBUFFORCE);
    case SocketBufferMode::kAutotuned:
      return 0;
  }
  return 0;
}

std::string describeSocketBuffers(const SocketBufferPlan& plan) {
  const std::string maxima =
      "net.core.rmem_max " + std::to_string(plan.rmemMax) + ", wmem_max " + std::to_string(plan.wmemMax);
  switch (plan.mode) {
    case SocketBufferMode::kFixed:
      return "socket buffers fixed at 4 MiB (" + maxima + ")";
    case SocketBufferMode::kForced:
      return "socket buffers forced to 4 MiB past " + maxima + " (CAP_NET_ADMIN)";
    case SocketBufferMode::kAutotuned:
      return "socket buffers left to the kernel's autotuning: " + maxima +
             " would cap fixed ones below 4 MiB (sysctl -w net.core.rmem_max=4194304 net.core.wmem_max=4194304 "
             "lets them be fixed)";
  }
  return "";
}

}  // namespace chorus
