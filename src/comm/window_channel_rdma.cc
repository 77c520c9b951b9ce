// The window channel's RDMA path (ib, WindowRdmaWrites): a window is exposed to each peer at registration and its
// key travels with the sizes; a put is RDMA writes from the caller's buffer straight into the peer's window, the
// last carrying (sigIdx, ctx) as its immediate (window_immediate.h), and the target counts the signal when its
// progress takes the immediate, in order with the frames on the same queue pair. A signal that does not fit the
// immediate goes as a frame behind the writes (the queue pair keeps them in order).
#include "core/error.h"
#include "src/comm/window_channel.h"
#include "src/comm/window_immediate.h"

namespace chorus {

namespace {
constexpr uint64_t kHasKey = uint64_t{1} << 32;
}  // namespace

std::vector<uint64_t> WindowChannel::expose(void* base, size_t bytes, std::vector<void*>* tokens) {
  std::vector<uint64_t> keys(state_.size(), 0);
  tokens->assign(state_.size(), nullptr);
  if (bytes == 0) return keys;  // nothing to write into: puts of 0 bytes need no key
  try {
    for (size_t q = 0; q < state_.size(); ++q) {
      if (!state_[q].rdma) continue;
      uint32_t key = 0;
      (*tokens)[q] = state_[q].rdma->exposeMemory(base, bytes, &key);
      keys[q] = kHasKey | key;
    }
  } catch (...) {
    unexpose(*tokens);
    throw;
  }
  return keys;
}

void WindowChannel::unexpose(std::vector<void*>& tokens) {
  for (size_t q = 0; q < tokens.size() && q < state_.size(); ++q) {
    if (tokens[q] && state_[q].rdma) state_[q].rdma->unexposeMemory(tokens[q]);
    tokens[q] = nullptr;
  }
}

bool WindowChannel::putByRdma(const Window& win, int peer, const void* src, uint64_t bytes, uint64_t offset,
                              uint32_t sigIdx, uint32_t ctx, const WindowWaiting& waiting) {
  Peer& p = state_[static_cast<size_t>(peer)];
  const uint64_t key = win.keys.empty() ? 0 : win.keys[static_cast<size_t>(peer)];
  if (bytes > 0 && !(key & kHasKey)) return false;  // the peer exposed none: frames and messages
  const bool fits = window_immediate::fits(sigIdx, ctx);
  const uint32_t immediate = fits ? window_immediate::encode(sigIdx, ctx) : 0;
  if (!fits) {
    // The writes, then the signal as a frame behind them.
    if (bytes > 0) {
      const uint64_t id = p.rdma->iwrite(src, bytes, win.bases[static_cast<size_t>(peer)] + offset,
                                         static_cast<uint32_t>(key), nullptr);
      waitFor([&] { return p.conn->sendsDone() > id; }, peer, waiting);
    }
    WindowFrame frame{.magic = kWindowFrameMagic,
                      .sigIdx = sigIdx,
                      .ctx = ctx,
                      .flags = kStoredDirectly,
                      .windowId = win.id,
                      .offset = offset,
                      .bytes = bytes};
    sendFrame(peer, frame, nullptr, waiting);
    return true;
  }
  const uint64_t id =
      p.rdma->iwrite(src, bytes, win.bases[static_cast<size_t>(peer)] + offset, static_cast<uint32_t>(key), &immediate);
  ++p.sent;
  // src may be reused: an inlined write at posting, else at its completion (the bytes are in the peer's window).
  waitFor([&] { return p.conn->sendsDone() > id; }, peer, waiting);
  return true;
}

bool WindowChannel::signalByRdma(int peer, uint32_t sigIdx, uint32_t ctx, const WindowWaiting& waiting) {
  Peer& p = peerFor(peer, waiting);
  if (!p.rdma || !window_immediate::fits(sigIdx, ctx)) return false;
  const uint32_t immediate = window_immediate::encode(sigIdx, ctx);
  const uint64_t id = p.rdma->iwrite(nullptr, 0, 0, 0, &immediate);
  ++p.sent;
  waitFor([&] { return p.conn->sendsDone() > id; }, peer, waiting);
  return true;
}

// Raises the signals of the immediates that arrived from peer whose earlier frames have all landed here.
bool WindowChannel::raiseWritten(int peer) {
  Peer& p = state_[static_cast<size_t>(peer)];
  if (!p.rdma) return false;
  bool raised = false;
  uint32_t immediate = 0;
  uint64_t messagesBefore = 0;
  while (p.rdma->peekImmediate(&immediate, &messagesBefore) && messagesBefore <= p.recvId) {
    p.rdma->popImmediate();
    const auto [sigIdx, ctx] = window_immediate::decode(immediate);
    table_.raise(peer, sigIdx, ctx);
    ++p.landed;
    raised = true;
  }
  return raised;
}

void WindowChannel::flush(const WindowWaiting& waiting) {
  for (size_t q = 0; q < state_.size(); ++q) {
    Peer& p = state_[q];
    if (!p.rdma || p.failed) continue;
    waitFor([&] { return !p.rdma->writesInFlight(); }, static_cast<int>(q), waiting);
  }
}

}  // namespace chorus
