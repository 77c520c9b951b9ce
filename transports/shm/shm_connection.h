// A Connection over shared memory to a peer on this host: records and a byte ring per direction, a unix socket for
// doorbells and hang-ups. Which message takes which path, and how a side sleeps: docs/protocols.md.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "core/ring_queue.h"
#include "transports/connection.h"
#include "transports/shm/shm_layout.h"
#include "transports/shm/shm_segment.h"

namespace chorus {

// Where the message paths switch (how these were measured: docs/protocols.md).
struct ShmTuning {
  // Messages this large go by process_vm_readv when the pair uses it: from cmaMinBytes while the peer is sending to
  // us too within a pipelined collective (both copy into the ring at once, and below it the sender's wait for the
  // reader costs the next step more than the copy saved), from cmaMinBytesOneWay otherwise: one-way traffic (a
  // ping-pong, whose two ring copies would run one after the other) and batches posted and waited for together
  // (SingleCopyHint::setSingleCopyHint). Measured here: docs/protocols.md.
  size_t cmaMinBytes = 256 * 1024;
  size_t cmaMinBytesOneWay = 8 * 1024;
  size_t ringPieceMax = 64 * 1024;  // largest piece copied through the byte ring at once (at most a quarter ring)
  size_t ringPieceMin = 8 * 1024;   // a piece smaller than this waits for more free ring (unless it ends a message)
};

// Everything a connection is made of; the transport's handshake fills it.
struct ShmPairSetup {
  int rank = -1, peer = -1;
  int socketFd = -1;     // connected unix stream socket (owned): doorbells, hang-up detection
  ShmSegment inbound;    // peer -> this rank (this rank consumes)
  ShmSegment outbound;   // this rank -> peer (this rank produces)
  pid_t peerPid = 0;     // for process_vm_readv when the peer publishes addresses
  bool cmaSend = false;  // the peer can read this process's memory: large sends may publish addresses
  bool peerInThisProcess = false;  // ranks as threads: the peer's memory is this process's
  // Window puts may be stored by process_vm_writev (CHORUS_SHM_CMA=2 only: where measured, it copied at a third of
  // the ring's speed even where process_vm_readv kept up; perf/results/windows.md).
  bool cmaWrites = false;
  ShmTuning tuning;
};

class ShmConnection final : public Connection, public SingleCopyHint, public TagPeeking, public PeerMemoryWrites {
 public:
  explicit ShmConnection(ShmPairSetup setup);
  ~ShmConnection() override;

  uint64_t isend(const void* buf, size_t bytes, uint32_t tag) override;
  uint64_t irecv(void* buf, size_t bytes, uint32_t tag) override;
  bool exchange(const void* sendBuf, void* recvBuf, size_t bytes, uint32_t sendTag, uint32_t recvTag, uint64_t* sendId,
                uint64_t* recvId) override;
  bool progress() override;
  uint64_t sendsDone() const override { return sendsDone_; }
  uint64_t recvsDone() const override { return recvsDone_; }
  bool busy() const override { return sendsDone_ != sendsPosted_ || recvsDone_ != recvsPosted_; }
  // Never: the receiver copies out of shared memory itself, so spinning on it is as cheap as sleeping.
  size_t pendingReceiveBytes() const override { return 0; }
  void addPollFds(std::vector<pollfd>& fds) const override;
  void closeGracefully() override;
  void abandon(int lostPeer = kNoRank) override;
  bool peekIncomingTag(uint32_t* tag) override;
  void setSingleCopyHint(bool on) override { singleCopyHint_ = on; }
  int writePeerMemory(uint64_t address, const void* src, size_t bytes) override;
  // A copy within this process pays from a byte; process_vm_writev from where a single copy pays for two-sided
  // messages too (ShmTuning::cmaMinBytesOneWay).
  size_t peerWriteMinBytes() const override { return peerInThisProcess_ ? 0 : tuning_.cmaMinBytesOneWay; }
  void addHangupFds(std::vector<pollfd>& fds) const override;
  void checkAlive() override;
  int peer() const override { return peer_; }
  const char* describe() const override { return description_.c_str(); }
  ConnectionCapabilities capabilities() override {
    // Writes into the peer need the same permission as reads: only where this side may read it (peerPid_) and
    // CHORUS_SHM_CMA=2 asks for them, or where the peer is this process.
    const bool writes = (peerPid_ != 0 && cmaWrites_) || peerInThisProcess_;
    return ConnectionCapabilities{
        .singleCopy = this, .peeking = this, .peerWrites = writes ? static_cast<PeerMemoryWrites*>(this) : nullptr};
  }

 private:
  struct SendOp {
    const char* buf;
    size_t len;
    size_t published;  // bytes handed to the ring (or published by address)
    uint32_t tag;
    uint64_t ackRecord;  // nonzero: complete only once the consumer has handled this many records (kCma)
    bool singleCopy;     // posted under setSingleCopyHint(true)
  };
  struct RecvOp {
    char* buf;
    size_t len;
    size_t done;
    uint32_t tag;
  };

  enum class Publish { kDone, kNoSlot, kNoRing };
  bool pushSends();
  Publish publishPiece(SendOp& s);
  // Whether `slots` more records fit before the consumer's position (reloading it only when they seem not to).
  bool recordSlotsFree(size_t slots);
  // Whether an inline piece of len bytes has its continuation slots free and unwrapped (shm_layout.h).
  bool inlineFits(size_t len);
  // Writes an inline piece into `head` and its continuation slots; returns the slots it takes.
  size_t writeInline(shm::Record& head, const char* from, size_t len);
  size_t ringRoom(size_t remaining);
  bool pullRecords();
  void readFromPeer(char* dst, uint64_t address, size_t len);
  void checkRecord(const shm::Record& r, const RecvOp& op) const;
  bool recordReady() const;
  bool consumerMovedSinceSeen() const;
  shm::SideState peerState() const;
  void throwIfPeerClosed();
  void disarm();
  void wakePeerIfSleeping(std::atomic<uint32_t>& flag);
  void ringDoorbell();
  [[noreturn]] void lost(const std::string& what) const;
  [[noreturn]] void peerGaveUp() const;
  [[noreturn]] void corrupt(const std::string& what) const;

  int rank_, peer_;
  int fd_;
  ShmSegment in_, out_;
  pid_t peerPid_;
  bool cmaSend_;
  bool peerInThisProcess_;
  bool cmaWrites_;
  bool singleCopyHint_ = false;
  ShmTuning tuning_;
  std::string description_;

  // Producer side (outbound).
  shm::RingControl* outCtl_;
  shm::Record* outRecords_;
  char* outRing_;
  size_t outRingBytes_;
  uint64_t produced_ = 0;       // records published
  uint64_t producedBytes_ = 0;  // byte-ring bytes written
  size_t producedOffset_ = 0;   // producedBytes_ modulo the ring size
  uint64_t seenConsumed_ = 0;   // the consumer's counters as last read
  uint64_t seenConsumedBytes_ = 0;
  RingQueue<SendOp> sends_;
  size_t firstUnpublished_ = 0;    // index in sends_ of the first send not wholly published
  bool waitForRecords_ = false;    // blocked on a free record slot or on an acknowledgement
  bool waitForRingBytes_ = false;  // blocked on free byte-ring space

  // Consumer side (inbound).
  shm::RingControl* inCtl_;
  shm::Record* inRecords_;
  char* inRing_;
  size_t inRingBytes_;
  uint64_t consumed_ = 0;
  uint64_t consumedBytes_ = 0;
  size_t consumedOffset_ = 0;
  RingQueue<RecvOp> recvs_;

  uint64_t sendsPosted_ = 0, sendsDone_ = 0, recvsPosted_ = 0, recvsDone_ = 0;
  mutable bool armed_ = false;  // addPollFds raised our sleeping flags; progress() lowers them and drains the socket
  bool peerSaidGoodbye_ = false;
  bool abandoned_ = false;
};

}  // namespace chorus
