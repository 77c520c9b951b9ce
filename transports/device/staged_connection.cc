#include "transports/device/staged_connection.h"

#include <algorithm>

namespace chorus {

StagedConnection::StagedConnection(int rank, Connection& host, DeviceApi& api)
    : LayeredDeviceConnection(rank, host, api,
                              "staged " + std::to_string(kStagedSlots) + " x " +
                                  std::to_string(kStagedChunkBytes >> 10) + " KiB pinned over " + host.describe()),
      hostDeviceSends_(host.capabilities().deviceMemory) {}

StagedConnection::~StagedConnection() {
  release(sendStaging_);
  release(recvStaging_);
}

void StagedConnection::queue(std::deque<Chunk>& chunks, char* buf, size_t bytes, uint32_t tag, bool device) {
  const size_t n = chunkCount(bytes);
  for (size_t i = 0; i < n; ++i) {
    const size_t begin = i * kStagedChunkBytes;
    const size_t len = std::min(bytes - begin, kStagedChunkBytes);
    chunks.push_back(Chunk{buf == nullptr ? nullptr : buf + begin, len, tag, device, i + 1 == n});
  }
}

uint64_t StagedConnection::isend(const void* buf, size_t bytes, uint32_t tag) {
  bool device = false;
  try {
    device = bytes > 0 && api_.locate(buf, nullptr) == MemoryLocation::kDevice;
  } catch (const Error& e) {
    rethrowWithContext(e, "staged send");
  }
  queue(sendChunks_, const_cast<char*>(static_cast<const char*>(buf)), bytes, tag, device);
  return sendsPosted_++;
}

uint64_t StagedConnection::irecv(void* buf, size_t bytes, uint32_t tag) {
  bool device = false;
  try {
    device = bytes > 0 && api_.locate(buf, nullptr) == MemoryLocation::kDevice;
  } catch (const Error& e) {
    rethrowWithContext(e, "staged receive");
  }
  queue(recvChunks_, static_cast<char*>(buf), bytes, tag, device);
  return recvsPosted_++;
}

void StagedConnection::prepare(Staging& s, const char* direction) {
  if (s.pinned != nullptr) return;
  try {
    s.stream = api_.createStream();
    for (size_t i = 0; i < kStagedSlots; ++i) s.events.push_back(api_.createEvent());
    s.pinned = static_cast<char*>(api_.pinnedAlloc(kStagedSlots * kStagedChunkBytes));
  } catch (const Error& e) {
    rethrowWithContext(e, direction);
  }
  for (size_t i = kStagedSlots; i > 0; --i) s.freeSlots.push_back(static_cast<int>(i - 1));
}

void StagedConnection::release(Staging& s) noexcept {
  drainStream(s.stream);
  try {
    for (DeviceEvent e : s.events) api_.destroyEvent(e);
    if (s.stream != nullptr) api_.destroyStream(s.stream);
    if (s.pinned != nullptr) api_.pinnedFree(s.pinned);
  } catch (...) {
    // Teardown: nothing can be done about a runtime that refuses to release.
  }
  s = Staging{};
}

bool StagedConnection::copyDone(Staging& s, Chunk& c, const char* operation) {
  try {
    if (!api_.eventDone(s.events[static_cast<size_t>(c.slot)])) return false;
  } catch (const Error& e) {
    rethrowWithContext(e, operation);
  }
  --copiesInFlight_;
  return true;
}

bool StagedConnection::pumpSends() {
  bool moved = false;
  Staging& s = sendStaging_;
  // Start chunks in order: device chunks copy into a free pinned slot (unless the host connection's adapter reads
  // device memory itself); host chunks are ready as they are.
  const bool direct = hostDeviceSends_ != nullptr && hostDeviceSends_->sendsDeviceMemory(api_);
  while (sendNextStart_ < sendChunks_.size()) {
    Chunk& c = sendChunks_[sendNextStart_];
    if (c.device && !direct) {
      prepare(s, "staged send");
      if (s.freeSlots.empty()) break;
      c.slot = s.freeSlots.back();
      char* pinned = s.pinned + static_cast<size_t>(c.slot) * kStagedChunkBytes;
      try {
        api_.copyAsync(pinned, c.user, c.len, s.stream);
        api_.recordEvent(s.events[static_cast<size_t>(c.slot)], s.stream);
      } catch (const Error& e) {
        rethrowWithContext(e, "staged send (device to pinned copy)");
      }
      s.freeSlots.pop_back();
      ++copiesInFlight_;
      c.state = ChunkState::kCopying;
    } else {
      c.state = ChunkState::kReady;
    }
    ++sendNextStart_;
    moved = true;
  }
  // Hand chunks to the host connection in order, each once its bytes are in place.
  while (sendNextPost_ < sendNextStart_) {
    Chunk& c = sendChunks_[sendNextPost_];
    if (c.state == ChunkState::kCopying) {
      if (!copyDone(s, c, "staged send (device to pinned copy)")) break;
      c.state = ChunkState::kReady;
    }
    if (c.device && c.slot < 0) {
      c.hostId = hostDeviceSends_->isendDevice(c.user, c.len, c.tag);  // straight from device memory
    } else {
      const char* from = c.device ? s.pinned + static_cast<size_t>(c.slot) * kStagedChunkBytes : c.user;
      c.hostId = host_.isend(from, c.len, c.tag);
    }
    c.state = ChunkState::kOnHost;
    ++sendNextPost_;
    moved = true;
  }
  // Retire chunks the host connection has sent: their slots take the next chunks; a message ends with its last.
  while (sendNextPost_ > 0 && host_.sendsDone() > sendChunks_.front().hostId) {
    const Chunk& c = sendChunks_.front();
    if (c.slot >= 0) s.freeSlots.push_back(c.slot);
    if (c.last) ++sendsDone_;
    sendChunks_.pop_front();
    --sendNextStart_;
    --sendNextPost_;
    moved = true;
  }
  return moved;
}

bool StagedConnection::pumpRecvs() {
  bool moved = false;
  Staging& s = recvStaging_;
  // Post host receives in order: into a free pinned slot for device chunks, straight into host memory otherwise.
  while (recvNextPost_ < recvChunks_.size()) {
    Chunk& c = recvChunks_[recvNextPost_];
    char* into = c.user;
    if (c.device) {
      prepare(s, "staged receive");
      if (s.freeSlots.empty()) break;
      c.slot = s.freeSlots.back();
      s.freeSlots.pop_back();
      into = s.pinned + static_cast<size_t>(c.slot) * kStagedChunkBytes;
    }
    c.hostId = host_.irecv(into, c.len, c.tag);
    c.state = ChunkState::kOnHost;
    ++recvNextPost_;
    moved = true;
  }
  // Chunks that have landed (the host connection completes receives in order) copy on to the device.
  while (recvNextLanded_ < recvNextPost_) {
    Chunk& c = recvChunks_[recvNextLanded_];
    if (host_.recvsDone() <= c.hostId) break;
    if (c.device) {
      try {
        api_.copyAsync(c.user, s.pinned + static_cast<size_t>(c.slot) * kStagedChunkBytes, c.len, s.stream);
        api_.recordEvent(s.events[static_cast<size_t>(c.slot)], s.stream);
      } catch (const Error& e) {
        rethrowWithContext(e, "staged receive (pinned to device copy)");
      }
      ++copiesInFlight_;
      c.state = ChunkState::kCopying;
    } else {
      c.state = ChunkState::kDone;
    }
    ++recvNextLanded_;
    moved = true;
  }
  // Retire chunks whose bytes are in the user's buffer (one stream, so copies finish in order).
  while (recvNextLanded_ > 0) {
    Chunk& c = recvChunks_.front();
    if (c.state == ChunkState::kCopying) {
      if (!copyDone(s, c, "staged receive (pinned to device copy)")) break;
      c.state = ChunkState::kDone;
    }
    if (c.slot >= 0) s.freeSlots.push_back(c.slot);
    if (c.last) ++recvsDone_;
    recvChunks_.pop_front();
    --recvNextPost_;
    --recvNextLanded_;
    moved = true;
  }
  return moved;
}

bool StagedConnection::progress() {
  return drainingOnError([this] { return progressRound(); });
}

bool StagedConnection::progressRound() {
  bool moved = pumpSends();
  moved |= pumpRecvs();
  if (host_.busy()) moved |= host_.progress();
  // React at once to what the host connection moved: free slots take the next copies, landed chunks copy on.
  moved |= pumpSends();
  moved |= pumpRecvs();
  return moved;
}

}  // namespace chorus
