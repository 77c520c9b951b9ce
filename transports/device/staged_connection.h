// Device buffers over any host connection (TCP, shared memory, ib), staged through pinned host memory; sends go
// straight from device memory where the host connection's adapter reads it (ib with dma-buf registration).
//
// A message of N bytes travels as ceil(N / kStagedChunkBytes) host messages (one empty one when N is 0), cut the
// same way on both sides from N alone, so the receiver never needs to know where the sender's buffer lives.
// Device chunks are copied device-to-pinned on a stream and sent from the pinned slot once the copy's event is
// done; received into a pinned slot and copied pinned-to-device. Several slots per direction keep the copy of
// chunk k+1 running while chunk k is on the wire. Host-memory chunks go straight through the host connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "transports/device/layered_device_connection.h"

namespace chorus {

// One host message per chunk. 1 MiB: large enough that what each chunk costs besides its bytes (a frame, a copy
// launch, event polls) is noise next to its copy (~40 us over PCIe 4) and its transfer, small enough that a few
// chunks in flight overlap the copies with the transfer from messages of a few MiB on.
inline constexpr size_t kStagedChunkBytes = size_t{1} << 20;
// Pinned bounce slots per direction, of one chunk each: one being copied, one on the wire, and two to absorb the
// jitter between them. 4 MiB pinned per direction, allocated at the first device chunk and kept.
inline constexpr size_t kStagedSlots = 4;

class StagedConnection final : public LayeredDeviceConnection {
 public:
  // host must outlive this connection and carry nothing else while it is busy.
  StagedConnection(int rank, Connection& host, DeviceApi& api);
  // Waits for its copies in flight, then releases the pinned slots, events and streams.
  ~StagedConnection() override;

  uint64_t isend(const void* buf, size_t bytes, uint32_t tag) override;
  uint64_t irecv(void* buf, size_t bytes, uint32_t tag) override;
  bool progress() override;
  uint64_t sendsDone() const override { return sendsDone_; }
  uint64_t recvsDone() const override { return recvsDone_; }
  bool busy() const override { return sendsDone_ != sendsPosted_ || recvsDone_ != recvsPosted_; }

  // How many host messages a message of `bytes` travels as.
  static size_t chunkCount(size_t bytes) {
    return bytes == 0 ? 1 : (bytes + kStagedChunkBytes - 1) / kStagedChunkBytes;
  }

 private:
  enum class ChunkState {
    kQueued,   // not yet started
    kCopying,  // a device copy (out of the buffer before sending, into it after receiving) is in flight
    kReady,    // send side: its bytes may go (host memory, or the copy to pinned is done)
    kOnHost,   // its host message is posted
    kDone,     // receive side: its bytes are in the user's buffer
  };
  struct Chunk {
    char* user;  // where in the user's buffer
    size_t len;
    uint32_t tag;
    bool device;  // staged through a pinned slot
    bool last;    // ends its message
    ChunkState state = ChunkState::kQueued;
    int slot = -1;
    uint64_t hostId = 0;
  };
  // One direction's pinned slots, their events and their stream, made at its first device chunk.
  struct Staging {
    char* pinned = nullptr;
    DeviceStream stream = nullptr;
    std::vector<DeviceEvent> events;
    std::vector<int> freeSlots;
  };

  void drainCopies() noexcept override {
    drainStream(sendStaging_.stream);
    drainStream(recvStaging_.stream);
  }
  bool progressRound();
  void queue(std::deque<Chunk>& chunks, char* buf, size_t bytes, uint32_t tag, bool device);
  void prepare(Staging& s, const char* direction);
  void release(Staging& s) noexcept;
  bool copyDone(Staging& s, Chunk& c, const char* operation);
  bool pumpSends();
  bool pumpRecvs();

  DeviceMemorySends* const hostDeviceSends_;  // the host connection's, looked up once; null: it has none
  std::deque<Chunk> sendChunks_, recvChunks_;  // oldest first; popped when complete
  // Positions in the queues (counted from their fronts): the next chunk to start and the next to post.
  size_t sendNextStart_ = 0, sendNextPost_ = 0;
  size_t recvNextPost_ = 0, recvNextLanded_ = 0;
  Staging sendStaging_, recvStaging_;
  uint64_t sendsPosted_ = 0, sendsDone_ = 0, recvsPosted_ = 0, recvsDone_ = 0;
};

}  // namespace chorus
