// A Connection over RDMA: reliable-connected queue pairs to one peer (CHORUS_IB_QPS_PER_PEER lanes; large messages
// are striped across them as TCP stripes across sockets), and a TCP connection beside them for what verbs do not
// say: a goodbye, an abandon note, a process that vanished while this side only waits to receive.
//
// Data path (docs/ib.md): each lane's receiver owns a registered byte ring of kRingBytes; the sender copies a
// chunk (16-byte header + up to kChunkBytes) into the same offset of its own registered staging ring and RDMA-writes
// it there, with an immediate that names the offset (inline when it fits the QP's inline size). The immediate's
// completion tells the receiver a chunk is in; it copies the chunk out and returns the bytes as credits (a
// zero-byte write with immediate), so a sender never overruns. The ring is the eager room (as a socket buffer is
// for TCP, the shared ring for shm): sends complete while the receiver has not posted, up to kRingBytes or
// kRingBytes / kMinStride chunks. Every lane keeps twice that many receives posted: receiver-not-ready never happens.
//
// Window puts (WindowRdmaWrites, ib_window_writes.cc) are RDMA writes from the caller's buffer straight into the
// peer's exposed window, on lane 0 behind the messages posted before them; a put's last write carries an immediate
// with kWindowFlag, which takes kMinStride of the ring's credits like a chunk (nothing is written there): the
// receiver hands it on once the chunks before it are consumed, which keeps it in order with the messages and
// bounds the receives it takes.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "transports/connection.h"
#include "transports/ib/ib_device.h"
#include "transports/window_rdma.h"

namespace chorus {

// The queue pair settings of a connection.
struct IbQpSettings {
  int lanes = 1;       // CHORUS_IB_QPS_PER_PEER
  int timeout = 20;    // CHORUS_IB_TIMEOUT
  int retryCnt = 7;    // CHORUS_IB_RETRY_CNT
};

class IbConnection final : public Connection,
                           public TagPeeking,
                           public DeviceMemorySends,
                           public MemoryRegistration,
                           public WindowRdmaWrites {
 public:
  static constexpr size_t kRingBytes = 1 << 20;
  static constexpr size_t kChunkBytes = 128 << 10;
  static constexpr size_t kMinStride = 4096;  // ring bytes a chunk takes at least (bounds the chunks in flight)
  static constexpr uint32_t kMaxChunksInFlight = kRingBytes / kMinStride;
  // Chunks of at least this many bytes are sent from the caller's buffer where the device caches its registration
  // (IbDevice::userRegions); smaller ones, and all where it does not, are copied into staging.
  static constexpr size_t kZeroCopyMinBytes = 32 << 10;

  // Creates the queue pairs (in INIT, receives posted) and the rings; oob: the TCP connection to the same peer.
  IbConnection(int rank, int peer, std::shared_ptr<IbDevice> device, const IbQpSettings& settings,
               std::unique_ptr<Connection> oob);
  ~IbConnection() override;

  // What the peer needs to reach this side's queue pairs and rings (connectAll trades these over the oob channel).
  std::vector<char> localInfo() const;
  // Moves every queue pair to RTR with the peer's info; throws for info that does not fit.
  void readyToReceive(const std::vector<char>& peerInfo);
  // Then to RTS (after the peer is RTR too).
  void readyToSend();
  Connection& oob() { return *oob_; }
  IbDevice& deviceForTests() { return *device_; }

  uint64_t isend(const void* buf, size_t bytes, uint32_t tag) override;
  uint64_t irecv(void* buf, size_t bytes, uint32_t tag) override;
  bool sendsDeviceMemory(DeviceApi& device) override { return device_->directDeviceMemory(device); }
  uint64_t isendDevice(const void* buf, size_t bytes, uint32_t tag) override;
  bool progress() override;
  uint64_t sendsDone() const override { return sendsDone_; }
  uint64_t recvsDone() const override { return recvsDone_; }
  bool busy() const override { return sendsDone_ != sendsPosted_ || recvsDone_ != recvsPosted_; }
  size_t pendingReceiveBytes() const override { return 0; }
  void addPollFds(std::vector<pollfd>& fds) const override;
  void closeGracefully() override;
  void abandon(int lostPeer = kNoRank) override;
  bool peekIncomingTag(uint32_t* tag) override;
  void addHangupFds(std::vector<pollfd>& fds) const override { oob_->addHangupFds(fds); }
  void checkAlive() override { oob_->checkAlive(); }
  void* registerMemory(const void* p, size_t bytes) override;
  void deregisterMemory(void* token) override;
  void* exposeMemory(void* base, size_t bytes, uint32_t* key) override;
  void unexposeMemory(void* token) override;
  uint64_t iwrite(const void* src, size_t bytes, uint64_t address, uint32_t key, const uint32_t* immediate) override;
  bool peekImmediate(uint32_t* immediate, uint64_t* messagesBefore) const override;
  void popImmediate() override { windowImmediates_.pop_front(); }
  bool writesInFlight() const override;
  int peer() const override { return peer_; }
  const char* describe() const override { return description_.c_str(); }
  ConnectionCapabilities capabilities() override {
    return ConnectionCapabilities{.peeking = this, .deviceMemory = this, .registration = this, .windowRdma = this};
  }

 private:
  struct Slice {
    char* data;
    size_t len;
    size_t done;
    uint32_t tag;
    uint64_t msgBytes;
    uint64_t msg;
    bool posted;  // a zero-byte slice's one chunk went out
    bool device;  // device memory: every chunk from its dma-buf region, never read by the CPU
    // A window put (iwrite): RDMA writes to remoteAddress, the last with `immediate` when withImmediate.
    bool window = false;
    bool withImmediate = false;
    uint32_t remoteKey = 0, immediate = 0;
    uint64_t remoteAddress = 0;
  };
  // A data write in flight, in posting order (completions come in that order on a queue pair).
  struct PostedChunk {
    RegistrationCache::Handle region;  // the caller's buffer's region (zero-copy), else none
    uint64_t msg;
    bool device;  // region is from the device cache
    bool borrowed = false;  // region is an exposed window's: never released by the write
  };
  // A slice with zero-copy writes in flight: done when all are complete and the slice is all posted.
  struct ZeroCopySlice {
    int inFlight = 0;
    bool allPosted = false;
  };
  struct Arrival {
    uint64_t begin, end;  // ring positions (monotonic; offset = position % kRingBytes)
    bool window = false;  // a window put's immediate: nothing in the ring
    uint32_t immediate = 0;
  };
  struct WindowImmediate {
    uint32_t immediate;
    uint64_t messagesBefore;
  };
  struct Lane {
    ibv_qp* qp = nullptr;
    char* ring = nullptr;   // the peer writes here
    char* stage = nullptr;  // chunks are built here, at the offset they take in the peer's ring
    uint64_t remoteRing = 0;
    uint32_t remoteRkey = 0;
    // Sender: the next chunk's position, and how far the peer has freed its ring (credits received).
    uint64_t writePos = 0, freedPos = 0;
    uint32_t sendsOutstanding = 0, creditSendsOutstanding = 0;
    // Receiver: where the next chunk begins, what is consumed, and what the sender has been told.
    uint64_t arrivalPos = 0, consumedPos = 0, creditedPos = 0;
    std::deque<Arrival> arrived;  // chunks in the ring not yet copied out, in order
    std::deque<PostedChunk> posted;
    std::map<uint64_t, ZeroCopySlice> zeroCopy;  // by message
    std::deque<Slice> sends, recvs;
  };
  void release();  // the verbs objects and memory, in reverse order of making
  void post(bool isSend, char* buf, size_t bytes, uint32_t tag, uint64_t msg, bool device = false);
  bool pushSends(Lane& lane, uint32_t laneIndex);
  bool pushWindowWrite(Lane& lane, uint32_t laneIndex);
  RegistrationCache::Handle windowSource(const char* p, size_t n, bool* borrowed);
  bool drainArrivals(Lane& lane);
  void returnCredits(Lane& lane, uint32_t laneIndex);
  void handle(const ibv_wc& wc);
  void postReceive(Lane& lane, uint32_t laneIndex);
  [[noreturn]] void failed(const ibv_wc& wc);
  [[noreturn]] void verbFailed(const char* verb, int err) const;

  int rank_, peer_;
  std::shared_ptr<IbDevice> device_;
  IbQpSettings settings_;
  std::unique_ptr<Connection> oob_;
  std::string description_;
  ibv_comp_channel* channel_ = nullptr;
  ibv_cq* cq_ = nullptr;
  unsigned eventsUnacked_ = 0;
  int readyFd_ = -1;  // always readable: handed to poll when completions wait in stash_
  mutable std::vector<ibv_wc> stash_;  // polled while arming the CQ before a sleep
  mutable bool armed_ = false;         // the CQ was armed (addPollFds) and its channel not drained since
  uint32_t maxSendWr_ = 0, maxInline_ = 0, psn_ = 0;
  std::vector<Lane> lanes_;
  char* memory_ = nullptr;  // every lane's ring and staging slots, one registration
  size_t memoryBytes_ = 0;
  ibv_mr* mr_ = nullptr;
  std::deque<uint32_t> sendPending_, recvPending_;
  uint64_t sendsPosted_ = 0, sendsDone_ = 0, recvsPosted_ = 0, recvsDone_ = 0;
  std::deque<WindowImmediate> windowImmediates_;
  uint64_t lane0SlicesDone_ = 0;         // messages whose lane-0 part has arrived (every message has one)
  std::vector<ibv_mr*> exposedWindows_;  // exposeMemory's regions, deregistered at unexposeMemory or release
  bool abandoned_ = false;
  bool brokenBy_ = false;  // a credit note failed (broken_): the peer's queue pairs are gone
  ibv_wc broken_{};
};

}  // namespace chorus
