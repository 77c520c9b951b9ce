// The C ABI's one-sided calls (chorus.h's windows): argument checks, then the engine's window calls
// (src/comm/comm_engine_windows.cc), which move the puts and count the signals.
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "chorus/chorus.h"
#include "src/api/api_errors.h"
#include "src/api/argument_checks.h"
#include "src/api/comm_handle.h"
#include "src/api/group.h"
#include "src/api/host_stream.h"

using chorus::api::fail;
using chorus::api::guarded;
using chorus::api::checks::whereOf;

// A window handle is the engine's Window itself (owned by the communicator, freed with it if never deregistered).
chorus::Window* windowOf(chorusWindow_t win) { return reinterpret_cast<chorus::Window*>(win); }

namespace {

// "" when comm is usable.
std::string checkComm(const char* call, chorusComm_t comm) {
  if (!comm || !comm->impl) return std::string(call) + ": comm is NULL";
  return "";
}

std::string checkWindow(const char* call, chorusComm_t comm, chorusWindow_t win) {
  if (!win || windowOf(win)->owner != comm) return whereOf(comm, call) + "win is NULL or not comm's";
  return "";
}

std::string checkPeer(const char* call, chorusComm_t comm, int peer, int sigIdx, int ctx) {
  if (peer < 0 || peer >= comm->impl->size()) {
    return whereOf(comm, call) + "peer " + std::to_string(peer) + " is outside [0, " +
           std::to_string(comm->impl->size()) + ")";
  }
  if (sigIdx < 0 || ctx < 0) return whereOf(comm, call) + "sigIdx and ctx must be >= 0";
  return "";
}

// Registration is collective and blocking: not inside a group.
chorusResult_t refuseInGroup(const char* call, chorusComm_t comm) {
  if (chorus::api::inGroup()) {
    return fail(comm, chorusInvalidUsage, whereOf(comm, call) + "inside a group (registration runs at once)");
  }
  return chorusSuccess;
}

// True when `stream` is a CUDA stream (neither NULL nor a host stream). A destroyed host stream counts as a host
// stream: the host path reports it.
bool isDeviceStream(chorusStream_t stream, const char* call) {
  if (!stream) return false;
  try {
    return !chorus::api::hostStreamOf(stream, call);
  } catch (const chorus::Error&) {
    return false;
  }
}

// Enqueues a put, signal or wait of device windows on CUDA stream `stream` (device_windows.h); not in groups.
chorusResult_t submitDeviceWindow(const char* call, chorusComm_t comm, chorus::WindowOp op, chorusStream_t stream) {
  return guarded(comm, call, [&] {
    if (chorus::api::inGroup()) {
      throw chorus::Error(chorusInvalidUsage, whereOf(comm, call) +
                                                  "inside a group on a CUDA stream: device windows' calls are "
                                                  "enqueued at once; call them outside groups");
    }
    comm->impl->runDeviceWindowOps(std::span(&op, 1), static_cast<chorus::DeviceStream>(stream));
  });
}

// Runs a put, signal or wait now (NULL stream), queues it on a host stream, or records it in the group; on a CUDA
// stream, enqueues it there (device windows).
chorusResult_t submitWindow(const char* call, chorusComm_t comm, chorus::WindowOp op, chorusStream_t stream) {
  if (op.kind == chorus::WindowOp::Kind::kPut && op.win->device) {
    if (!isDeviceStream(stream, call)) {
      return fail(comm, chorusInvalidUsage,
                  whereOf(comm, call) + "window " + std::to_string(op.win->id) +
                      " is device memory: its puts are CUDA stream calls, as NCCL's; pass a CUDA stream "
                      "(NULL and host streams are for host windows)");
    }
    return submitDeviceWindow(call, comm, std::move(op), stream);
  }
  if (op.kind != chorus::WindowOp::Kind::kPut && isDeviceStream(stream, call)) {
    return submitDeviceWindow(call, comm, std::move(op), stream);
  }
  return guarded(comm, call, [&] {
    std::shared_ptr<chorus::api::HostStream> host = chorus::api::hostStreamOf(stream, call);
    if (stream && !host) {
      throw chorus::Error(chorusInvalidUsage, whereOf(comm, call) +
                                                  "a CUDA stream with a window of host memory: pass NULL or a host "
                                                  "stream (CUDA streams are for device windows)");
    }
    if (chorus::api::inGroup()) {
      chorus::api::recordWindowInGroup(comm, std::move(op), stream);
    } else if (host) {
      const chorus::api::StreamStatus queued = host->enqueueWindow(*comm->impl, std::span(&op, 1));
      if (queued.code != chorusSuccess) throw chorus::Error(queued.code, queued.message);
    } else {
      comm->impl->runWindowOps(std::span(&op, 1));
    }
  });
}

}  // namespace

chorusResult_t chorusCommWindowRegister(chorusComm_t comm, void* buff, size_t size, chorusWindow_t* win, int flags) {
  const char* call = "chorusCommWindowRegister";
  std::string bad = checkComm(call, comm);
  if (bad.empty() && !win) bad = whereOf(comm, call) + "win is NULL";
  if (bad.empty() && size > 0 && !buff) bad = whereOf(comm, call) + "buff is NULL with size " + std::to_string(size);
  if (bad.empty() && flags != CHORUS_WIN_DEFAULT) {
    bad = whereOf(comm, call) + "flags " + std::to_string(flags) + " (only CHORUS_WIN_DEFAULT)";
  }
  if (!bad.empty()) return fail(comm, chorusInvalidArgument, bad);
  if (chorusResult_t r = refuseInGroup(call, comm); r != chorusSuccess) return r;
  return guarded(comm, call, [&] {
    chorus::DeviceApi& api = comm->impl->deviceApi();
    const bool onDevice = buff && api.available() && api.locate(buff, nullptr) == chorus::MemoryLocation::kDevice;
    *win = reinterpret_cast<chorusWindow_t>(comm->impl->registerWindow(buff, size, comm, onDevice));
  });
}

chorusResult_t chorusCommWindowDeregister(chorusComm_t comm, chorusWindow_t win) {
  const char* call = "chorusCommWindowDeregister";
  std::string bad = checkComm(call, comm);
  if (bad.empty()) bad = checkWindow(call, comm, win);
  if (!bad.empty()) return fail(comm, chorusInvalidArgument, bad);
  if (chorusResult_t r = refuseInGroup(call, comm); r != chorusSuccess) return r;
  return guarded(comm, call, [&] { comm->impl->deregisterWindow(windowOf(win)); });
}

chorusResult_t chorusPutSignal(const void* localbuff, size_t count, chorusDataType_t datatype, int peer,
                               chorusWindow_t win, size_t peerWinOffset, int sigIdx, int ctx, unsigned int flags,
                               chorusComm_t comm, chorusStream_t stream) {
  const char* call = "chorusPutSignal";
  std::string bad = checkComm(call, comm);
  size_t bytes = 0;
  if (bad.empty()) bad = chorus::api::checks::checkCommon(call, comm, datatype, chorusSum, false);
  if (bad.empty()) bad = checkPeer(call, comm, peer, sigIdx, ctx);
  if (bad.empty()) bad = checkWindow(call, comm, win);
  if (bad.empty() && !chorus::api::checks::bytesFor(count, datatype, 1, &bytes))
    bad = whereOf(comm, call) + "count overflows";
  if (bad.empty() && bytes > 0 && !localbuff) bad = whereOf(comm, call) + "localbuff is NULL";
  if (bad.empty()) {
    const uint64_t size = windowOf(win)->sizes[static_cast<size_t>(peer)];
    if (peerWinOffset > size || bytes > size - peerWinOffset) {
      bad = whereOf(comm, call) + "peer " + std::to_string(peer) + ": " + std::to_string(bytes) + " bytes at offset " +
            std::to_string(peerWinOffset) + " run past the peer's window " + std::to_string(windowOf(win)->id) +
            " of " + std::to_string(size) + " bytes";
    }
  }
  if (!bad.empty()) return fail(comm, chorusInvalidArgument, bad);
  (void)flags;
  chorus::WindowOp op{.kind = chorus::WindowOp::Kind::kPut,
                      .win = windowOf(win),
                      .peer = peer,
                      .src = localbuff,
                      .bytes = bytes,
                      .offset = peerWinOffset,
                      .sigIdx = static_cast<uint32_t>(sigIdx),
                      .ctx = static_cast<uint32_t>(ctx),
                      .waits = {}};
  return submitWindow(call, comm, std::move(op), stream);
}

chorusResult_t chorusSignal(int peer, int sigIdx, int ctx, unsigned int flags, chorusComm_t comm,
                            chorusStream_t stream) {
  const char* call = "chorusSignal";
  std::string bad = checkComm(call, comm);
  if (bad.empty()) bad = checkPeer(call, comm, peer, sigIdx, ctx);
  if (!bad.empty()) return fail(comm, chorusInvalidArgument, bad);
  (void)flags;
  chorus::WindowOp op{.kind = chorus::WindowOp::Kind::kSignal,
                      .peer = peer,
                      .sigIdx = static_cast<uint32_t>(sigIdx),
                      .ctx = static_cast<uint32_t>(ctx),
                      .waits = {}};
  return submitWindow(call, comm, std::move(op), stream);
}

chorusResult_t chorusWaitSignal(int nDesc, const chorusWaitSignalDesc_t* signalDescs, chorusComm_t comm,
                                chorusStream_t stream) {
  const char* call = "chorusWaitSignal";
  std::string bad = checkComm(call, comm);
  if (bad.empty() && (nDesc < 0 || (nDesc > 0 && !signalDescs))) bad = whereOf(comm, call) + "bad nDesc or descs";
  std::vector<chorus::SignalWait> waits;
  for (int i = 0; bad.empty() && i < nDesc; ++i) {
    const chorusWaitSignalDesc_t& d = signalDescs[i];
    if (d.peer < 0 || d.peer >= comm->impl->size() || d.opCnt < 0 || d.sigIdx < 0 || d.ctx < 0) {
      bad = whereOf(comm, call) + "desc " + std::to_string(i) + ": peer " + std::to_string(d.peer) + " (size " +
            std::to_string(comm->impl->size()) + "), opCnt, sigIdx and ctx must be >= 0";
    }
    waits.push_back({d.opCnt, d.peer, static_cast<uint32_t>(d.sigIdx), static_cast<uint32_t>(d.ctx)});
  }
  if (!bad.empty()) return fail(comm, chorusInvalidArgument, bad);
  chorus::WindowOp op{.kind = chorus::WindowOp::Kind::kWait, .waits = std::move(waits)};
  return submitWindow(call, comm, std::move(op), stream);
}

chorusResult_t chorusWindowFlush(chorusComm_t comm, chorusWindow_t win) {
  const char* call = "chorusWindowFlush";
  std::string bad = checkComm(call, comm);
  if (bad.empty()) bad = checkWindow(call, comm, win);
  if (!bad.empty()) return fail(comm, chorusInvalidArgument, bad);
  // Puts return once their source may be reused; over ib a small put's write (inlined) may still be on its way:
  // the flush waits for every write's completion (the target's adapter has placed the bytes).
  return guarded(comm, call, [&] { comm->impl->flushWindows(); });
}
