// Device buffers between processes of one machine through CUDA IPC: a byte ring in each receiver's device memory,
// control on the host connection to the same peer. The protocol: docs/protocols.md, "CUDA IPC byte ring".
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>

#include "transports/cuda_ipc/copy_batches.h"
#include "transports/cuda_ipc/device_region.h"
#include "transports/device/layered_device_connection.h"
#include "transports/reserved_tags.h"

namespace chorus {

// A ring is kIpcSlots pieces of its largest piece (the setup offer, transports/device/device_connections.cc, sends
// the ring's shape; there are no slots as such). The communicator makes a piece one device slice
// (CHORUS_DEVICE_CHUNK_SIZE, 8 MiB by default): what a piece costs besides its bytes (a copy launch, an event
// poll, two control messages through the progress thread) is 15-20 us on an H200, where 1 MiB copies in a few
// us, so small pieces hold an allreduce to a fraction of what pieces of a whole slice reach (perf/results/gpu.md,
// "Device slices and IPC pieces").
// Four in flight still overlap the copy in, the control round trip and the copy out, and hold four times what a
// default shared-memory pair does (CHORUS_SHM_BUFFER, 1 MiB), so every algorithm that posts sends ahead of its
// receives on shared memory can do so here. kIpcSlotBytes is the piece of callers that name none (tests).
inline constexpr size_t kIpcSlots = 4;
inline constexpr size_t kIpcSlotBytes = size_t{1} << 20;
// Copy batches in flight per direction (each holds an event): a step's batch is usually done by the next step, so
// a few suffice to keep the stream busy while the host catches up.
inline constexpr size_t kIpcCopyBatches = 8;
// Control receives posted ahead at most: enough that one progress step takes a burst of small messages' control
// in one go, without a deque that grows with the messages in flight (thousands, when they are small).
inline constexpr size_t kIpcControlWindow = 64;
inline constexpr uint32_t kIpcControlTag = reserved_tags::kIpcControl;

// A control message, as sent over the host connection: 32 bytes, so that it rides inside one record of a
// shared-memory host connection.
struct IpcControl {
  uint32_t magic;
  uint32_t kind;          // kIpcReady or kIpcCredit
  uint32_t tag;           // ready: the message's tag
  uint32_t pieceBytes;    // ready: bytes of the piece in the ring; credit: bytes handed back (pieces fit 32 bits)
  uint64_t position;      // the piece's first byte in the ring's byte stream (its place is this modulo the ring size)
  uint64_t messageBytes;  // ready: the whole message's size (so mismatches are reported in the user's terms)
};
static_assert(sizeof(IpcControl) == 32);
inline constexpr uint32_t kIpcControlMagic = 0x32504943;  // "CIP2": the byte ring's protocol
inline constexpr uint32_t kIpcReady = 1;
inline constexpr uint32_t kIpcCredit = 2;

// The two rings of one connection, as setup left them: each is slots x slotBytes bytes, in pieces of at most
// slotBytes.
struct IpcRings {
  DeviceRegion local;  // this rank's ring, exported: the peer writes into it
  size_t localSlots = 0, localSlotBytes = 0;
  DeviceRegion remote;  // the peer's ring, mapped: this rank writes into it
  size_t remoteSlots = 0, remoteSlotBytes = 0;
};

class IpcConnection final : public LayeredDeviceConnection {
 public:
  // host must outlive this connection and carry nothing else while it is busy. Creates its streams and events;
  // throws chorusInvalidUsage for a ring shape that is empty, does not fit its region or has pieces over 4 GiB.
  IpcConnection(int rank, Connection& host, DeviceApi& api, IpcRings rings);
  // Waits for its copies in flight, then releases streams, events and both rings.
  ~IpcConnection() override;

  uint64_t isend(const void* buf, size_t bytes, uint32_t tag) override;
  uint64_t irecv(void* buf, size_t bytes, uint32_t tag) override;
  bool progress() override;
  uint64_t sendsDone() const override { return sendsDone_; }
  uint64_t recvsDone() const override { return recvsDone_; }
  // Also true while credits are owed or control messages are unsent: until then the host connection is not quiet.
  bool busy() const override {
    return sendsDone_ != sendsPosted_ || recvsDone_ != recvsPosted_ || creditsOwed_ > 0 || !outControl_.empty();
  }

  // How many pieces a message of `bytes` travels as, in pieces of at most `pieceBytes`.
  static size_t pieceCount(size_t bytes, size_t pieceBytes) {
    return bytes == 0 ? 1 : (bytes + pieceBytes - 1) / pieceBytes;
  }

 private:
  enum class PieceState {
    kQueued,     // send: waiting for ring bytes; receive: waiting for the peer's announcement
    kAnnounced,  // receive: announced, its copy out not started yet (no free batch)
    kCopying,    // its device copy (into the peer's ring, or out of ours) is in flight
    kReady,      // send: its bytes are in the peer's ring (or it has none): it may be announced
    kSent,       // send: its announcement is posted on the host connection
    kCrediting,  // receive: its bytes are in place and its credit is posted on the host connection
    kDone,       // receive: complete (an empty piece, once announced)
  };
  struct Piece {
    char* user;
    size_t len;
    uint64_t messageBytes;
    uint32_t tag;
    bool last;  // ends its message
    PieceState state = PieceState::kQueued;
    uint64_t position = 0;  // its first byte's position in the ring's byte stream
    uint64_t batch = 0;     // kCopying: the copy batch it belongs to
    uint64_t hostId = 0;    // send: the announcement's host send; receive: the credit's
  };
  struct PostedControl {
    IpcControl message;
    uint64_t hostId;
  };

  void drainCopies() noexcept override {
    drainStream(sendStream_);
    drainStream(recvStream_);
  }
  bool progressRounds();
  void queue(std::deque<Piece>& pieces, char* buf, size_t bytes, uint32_t tag, size_t pieceBytes);
  uint64_t sendControl(const IpcControl& message);
  // Enqueues the copy of len bytes between user memory and the ring at `position`, in two parts where it wraps.
  void copyIntoRing(char* ring, size_t ringBytes, uint64_t position, const char* from, size_t len);
  void copyOutOfRing(char* to, const char* ring, size_t ringBytes, uint64_t position, size_t len);
  void recordBatch(CopyBatches& batches, DeviceStream s, const char* operation);
  bool batchDone(CopyBatches& batches, uint64_t n, const char* operation);
  bool pumpSends();
  bool takeControl();
  void takeCredit(const IpcControl& m);
  void match(Piece& p, const IpcControl& ready);
  bool pumpRecvs();
  void postControlReceives();
  void releaseDeviceObjects() noexcept;
  [[noreturn]] void corrupt(const IpcControl& m, const std::string& why) const;

  IpcRings rings_;
  size_t localBytes_, remoteBytes_;  // the rings' sizes
  DeviceStream sendStream_ = nullptr, recvStream_ = nullptr;
  CopyBatches sendBatches_, recvBatches_;

  // Send side. Positions count bytes in the peer's ring's byte stream since the start: written_ - credited_ of
  // its bytes are taken.
  std::deque<Piece> sendPieces_;                         // oldest first; popped once announced and sent
  size_t sendNextStart_ = 0, sendNextAnnounce_ = 0;      // positions in sendPieces_
  uint64_t written_ = 0, announced_ = 0, credited_ = 0;  // bytes copied in (or being), announced, handed back
  uint64_t creditsOwed_ = 0;                             // announced non-empty pieces whose credit has not come

  // Receive side. Positions count bytes in this rank's ring's byte stream since the start.
  std::deque<Piece> recvPieces_;  // oldest first; popped once in place and credited
  size_t recvNextMatch_ = 0, recvNextStart_ = 0, recvNextCredit_ = 0;  // positions in recvPieces_
  uint64_t expectedPosition_ = 0, recvCredited_ = 0;   // where the next announced piece must start; bytes credited
  uint64_t piecesExpected_ = 0, readiesReceived_ = 0;  // since the start: announcements we know of and got
  std::deque<IpcControl> earlyReadies_;                // announcements for receives not posted yet

  // Control messages on the host connection; deques keep the addresses of posted messages stable.
  std::deque<PostedControl> outControl_, inControl_;

  uint64_t sendsPosted_ = 0, sendsDone_ = 0, recvsPosted_ = 0, recvsDone_ = 0;
};

}  // namespace chorus
