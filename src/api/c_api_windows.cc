// The C ABI's one-sided calls (chorus.h's windows). Each put or signal is a WindowFrame on the pair's ordered
// two-sided stream, followed by the put's bytes; the receiver's chorusWaitSignal reads the frames in order, lands the
// bytes straight in its window (a receive into base + offset, no staging) and counts the signal. The pair's order is
// what makes a signal follow the puts before it. The direct paths (shared-memory stores, RDMA write with immediate,
// CUDA IPC) replace the frames per transport; the table and the semantics stay.
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "chorus/chorus.h"
#include "src/api/api_errors.h"
#include "src/api/argument_checks.h"
#include "src/api/comm_handle.h"
#include "src/api/group.h"

using chorus::api::fail;
using chorus::api::WindowFrame;
using chorus::api::checks::whereOf;

namespace {

// "" when the call may run: a communicator, a NULL stream, outside a group.
std::string checkOneSided(const char* call, chorusComm_t comm, chorusStream_t stream) {
  if (!comm || !comm->impl) return std::string(call) + ": comm is NULL";
  return "";
}

chorusResult_t refuseUsage(const char* call, chorusComm_t comm, chorusStream_t stream) {
  if (stream) {
    return fail(comm, chorusInvalidUsage,
                whereOf(comm, call) + "a stream is not supported yet for one-sided calls (pass NULL: the call blocks)");
  }
  if (chorus::api::inGroup()) {
    return fail(comm, chorusInvalidUsage,
                whereOf(comm, call) +
                    "inside a group (not supported yet: a wait reads each frame before it knows the next receive)");
  }
  return chorusSuccess;
}

std::string windowText(const chorusWindow* win) { return "window " + std::to_string(win->id); }

// Sends one frame, then the put's bytes (none for a bare signal), to `peer`.
chorusResult_t sendFrame(const char* call, chorusComm_t comm, int peer, const WindowFrame& frame, const void* bytes) {
  chorusResult_t r = chorusSend(&frame, sizeof(frame), chorusUint8, peer, comm, nullptr);
  if (r == chorusSuccess && frame.bytes > 0) r = chorusSend(bytes, frame.bytes, chorusUint8, peer, comm, nullptr);
  return r;
}

// Reads the next frame from `peer` and lands it: the bytes into this rank's window, then the signal.
chorusResult_t landFrame(const char* call, chorusComm_t comm, int peer) {
  WindowFrame frame;
  chorusResult_t r = chorusRecv(&frame, sizeof(frame), chorusUint8, peer, comm, nullptr);
  if (r != chorusSuccess) return r;
  if (frame.magic != chorus::api::kWindowFrameMagic) {
    return fail(comm, chorusInvalidUsage,
                whereOf(comm, call) + "peer " + std::to_string(peer) +
                    ": the next message from it is not a put or a signal (a send meant for a chorusRecv?)");
  }
  if (frame.windowId != chorus::api::kNoWindow) {
    chorusWindow* win = comm->windows.find(frame.windowId);
    const uint64_t size = win ? win->sizes[comm->impl->rank()] : 0;
    if (!win || frame.offset > size || frame.bytes > size - frame.offset) {
      return fail(comm, chorusInvalidUsage,
                  whereOf(comm, call) + "peer " + std::to_string(peer) + " put " + std::to_string(frame.bytes) +
                      " bytes at offset " + std::to_string(frame.offset) + " of window " +
                      std::to_string(frame.windowId) +
                      (win ? " (" + std::to_string(size) + " bytes here)" : " (not registered here)"));
    }
    if (frame.bytes > 0) {
      r = chorusRecv(static_cast<char*>(win->base) + frame.offset, frame.bytes, chorusUint8, peer, comm, nullptr);
      if (r != chorusSuccess) return r;
    }
  }
  comm->windows.raise(peer, frame.sigIdx, frame.ctx);
  return chorusSuccess;
}

}  // namespace

chorusResult_t chorusCommWindowRegister(chorusComm_t comm, void* buff, size_t size, chorusWindow_t* win, int flags) {
  const char* call = "chorusCommWindowRegister";
  std::string bad = checkOneSided(call, comm, nullptr);
  if (bad.empty() && !win) bad = whereOf(comm, call) + "win is NULL";
  if (bad.empty() && size > 0 && !buff) bad = whereOf(comm, call) + "buff is NULL with size " + std::to_string(size);
  if (bad.empty() && flags != CHORUS_WIN_DEFAULT) {
    bad = whereOf(comm, call) + "flags " + std::to_string(flags) + " (only CHORUS_WIN_DEFAULT)";
  }
  if (!bad.empty()) return fail(comm, chorusInvalidArgument, bad);
  if (chorusResult_t r = refuseUsage(call, comm, nullptr); r != chorusSuccess) return r;
  const int n = comm->impl->size();
  std::vector<uint64_t> sizes(static_cast<size_t>(n));
  const uint64_t mine = size;
  if (chorusResult_t r = chorusAllGather(&mine, sizes.data(), 1, chorusUint64, comm, nullptr); r != chorusSuccess) {
    return r;
  }
  std::lock_guard<std::mutex> lock(comm->windows.mutex());
  auto* w = new chorusWindow;
  w->id = comm->windows.nextId();
  w->base = buff;
  w->sizes = std::move(sizes);
  w->comm = comm;
  comm->windows.add(w);
  *win = w;
  return chorusSuccess;
}

chorusResult_t chorusCommWindowDeregister(chorusComm_t comm, chorusWindow_t win) {
  const char* call = "chorusCommWindowDeregister";
  std::string bad = checkOneSided(call, comm, nullptr);
  if (bad.empty() && (!win || win->comm != comm)) bad = whereOf(comm, call) + "win is NULL or not comm's";
  if (!bad.empty()) return fail(comm, chorusInvalidArgument, bad);
  if (chorusResult_t r = refuseUsage(call, comm, nullptr); r != chorusSuccess) return r;
  // Collective: no peer may still put into this rank's part once it returns.
  if (chorusResult_t r = chorusBarrier(comm, nullptr); r != chorusSuccess) return r;
  std::lock_guard<std::mutex> lock(comm->windows.mutex());
  comm->windows.remove(win);
  delete win;
  return chorusSuccess;
}

chorusResult_t chorusPutSignal(const void* localbuff, size_t count, chorusDataType_t datatype, int peer,
                               chorusWindow_t win, size_t peerWinOffset, int sigIdx, int ctx, unsigned int flags,
                               chorusComm_t comm, chorusStream_t stream) {
  const char* call = "chorusPutSignal";
  std::string bad = checkOneSided(call, comm, stream);
  size_t bytes = 0;
  if (bad.empty()) bad = chorus::api::checks::checkCommon(call, comm, datatype, chorusSum, false);
  if (bad.empty() && (peer < 0 || peer >= comm->impl->size())) {
    bad = whereOf(comm, call) + "peer " + std::to_string(peer) + " is outside [0, " +
          std::to_string(comm->impl->size()) + ")";
  }
  if (bad.empty() && (!win || win->comm != comm)) bad = whereOf(comm, call) + "win is NULL or not comm's";
  if (bad.empty() && (sigIdx < 0 || ctx < 0)) bad = whereOf(comm, call) + "sigIdx and ctx must be >= 0";
  if (bad.empty() && !chorus::api::checks::bytesFor(count, datatype, 1, &bytes))
    bad = whereOf(comm, call) + "count overflows";
  if (bad.empty() && bytes > 0 && !localbuff) bad = whereOf(comm, call) + "localbuff is NULL";
  if (bad.empty()) {
    const uint64_t size = win->sizes[static_cast<size_t>(peer)];
    if (peerWinOffset > size || bytes > size - peerWinOffset) {
      bad = whereOf(comm, call) + "peer " + std::to_string(peer) + ": " + std::to_string(bytes) + " bytes at offset " +
            std::to_string(peerWinOffset) + " run past the peer's " + windowText(win) + " of " + std::to_string(size) +
            " bytes";
    }
  }
  if (!bad.empty()) return fail(comm, chorusInvalidArgument, bad);
  if (chorusResult_t r = refuseUsage(call, comm, stream); r != chorusSuccess) return r;
  (void)flags;
  std::lock_guard<std::mutex> lock(comm->windows.mutex());
  if (peer == comm->impl->rank()) {
    if (bytes > 0) std::memmove(static_cast<char*>(win->base) + peerWinOffset, localbuff, bytes);
    comm->windows.raise(peer, static_cast<uint32_t>(sigIdx), static_cast<uint32_t>(ctx));
    return chorusSuccess;
  }
  WindowFrame frame{.magic = chorus::api::kWindowFrameMagic,
                    .sigIdx = static_cast<uint32_t>(sigIdx),
                    .ctx = static_cast<uint32_t>(ctx),
                    .windowId = win->id,
                    .offset = peerWinOffset,
                    .bytes = bytes};
  return sendFrame(call, comm, peer, frame, localbuff);
}

chorusResult_t chorusSignal(int peer, int sigIdx, int ctx, unsigned int flags, chorusComm_t comm,
                            chorusStream_t stream) {
  const char* call = "chorusSignal";
  std::string bad = checkOneSided(call, comm, stream);
  if (bad.empty() && (peer < 0 || peer >= comm->impl->size())) {
    bad = whereOf(comm, call) + "peer " + std::to_string(peer) + " is outside [0, " +
          std::to_string(comm->impl->size()) + ")";
  }
  if (bad.empty() && (sigIdx < 0 || ctx < 0)) bad = whereOf(comm, call) + "sigIdx and ctx must be >= 0";
  if (!bad.empty()) return fail(comm, chorusInvalidArgument, bad);
  if (chorusResult_t r = refuseUsage(call, comm, stream); r != chorusSuccess) return r;
  (void)flags;
  std::lock_guard<std::mutex> lock(comm->windows.mutex());
  if (peer == comm->impl->rank()) {
    comm->windows.raise(peer, static_cast<uint32_t>(sigIdx), static_cast<uint32_t>(ctx));
    return chorusSuccess;
  }
  WindowFrame frame{.magic = chorus::api::kWindowFrameMagic,
                    .sigIdx = static_cast<uint32_t>(sigIdx),
                    .ctx = static_cast<uint32_t>(ctx),
                    .windowId = chorus::api::kNoWindow};
  return sendFrame(call, comm, peer, frame, nullptr);
}

chorusResult_t chorusWaitSignal(int nDesc, const chorusWaitSignalDesc_t* signalDescs, chorusComm_t comm,
                                chorusStream_t stream) {
  const char* call = "chorusWaitSignal";
  std::string bad = checkOneSided(call, comm, stream);
  if (bad.empty() && (nDesc < 0 || (nDesc > 0 && !signalDescs))) bad = whereOf(comm, call) + "bad nDesc or descs";
  for (int i = 0; bad.empty() && i < nDesc; ++i) {
    const chorusWaitSignalDesc_t& d = signalDescs[i];
    if (d.peer < 0 || d.peer >= comm->impl->size() || d.opCnt < 0 || d.sigIdx < 0 || d.ctx < 0) {
      bad = whereOf(comm, call) + "desc " + std::to_string(i) + ": peer " + std::to_string(d.peer) + " (size " +
            std::to_string(comm->impl->size()) + "), opCnt, sigIdx and ctx must be >= 0";
    }
  }
  if (!bad.empty()) return fail(comm, chorusInvalidArgument, bad);
  if (chorusResult_t r = refuseUsage(call, comm, stream); r != chorusSuccess) return r;
  std::lock_guard<std::mutex> lock(comm->windows.mutex());
  const int self = comm->impl->rank();
  for (int i = 0; i < nDesc; ++i) {
    const chorusWaitSignalDesc_t& d = signalDescs[i];
    const auto sig = static_cast<uint32_t>(d.sigIdx), ctx = static_cast<uint32_t>(d.ctx);
    const auto want = static_cast<uint64_t>(d.opCnt);
    while (comm->windows.arrived(d.peer, sig, ctx) < want) {
      if (d.peer == self) {
        return fail(comm, chorusInvalidUsage,
                    whereOf(comm, call) + "waits for " + std::to_string(want) + " signals from itself on index " +
                        std::to_string(d.sigIdx) + " with " + std::to_string(comm->windows.arrived(d.peer, sig, ctx)) +
                        " raised: it would never return");
      }
      if (chorusResult_t r = landFrame(call, comm, d.peer); r != chorusSuccess) return r;
    }
    comm->windows.consume(d.peer, sig, ctx, want);
  }
  return chorusSuccess;
}

chorusResult_t chorusWindowFlush(chorusComm_t comm, chorusWindow_t win) {
  const char* call = "chorusWindowFlush";
  std::string bad = checkOneSided(call, comm, nullptr);
  if (bad.empty() && (!win || win->comm != comm)) bad = whereOf(comm, call) + "win is NULL or not comm's";
  if (!bad.empty()) return fail(comm, chorusInvalidArgument, bad);
  // Every put returns complete locally (it blocks until the transport has taken its bytes): nothing is pending.
  return chorusSuccess;
}
