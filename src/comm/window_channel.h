// The connections a communicator's windows travel on (chorus.h's put and signal), apart from its two-sided ones so
// that a put never sits in front of a receive: each put or signal is a WindowFrame, followed by the put's bytes
// unless they fit in the frame or the connection stored them in the peer's window itself (PeerMemoryWrites: shared
// memory). A header
// receive is always posted on each of them; whenever this rank progresses the channel (its own calls, and every
// progress round of the communicator's other calls: SideProgress) a frame that arrived lands: its bytes are received
// straight into the window at the offset, then its signal is counted. Over ib a put is RDMA writes into the peer's
// window instead, the last carrying the signal as its immediate (window_channel_rdma.cc).
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/deadline.h"
#include "src/comm/peer_connections.h"
#include "src/comm/shm_window_path.h"
#include "src/comm/side_progress.h"
#include "src/comm/wait_policy.h"
#include "src/comm/window_op.h"
#include "src/comm/window_table.h"
#include "transports/window_rdma.h"

namespace chorus {

// What travels ahead of each put or signal: the receiver learns from it where the bytes go and which signal to
// raise once they are in.
struct WindowFrame {
  uint32_t magic = 0;
  uint32_t sigIdx = 0;
  uint32_t ctx = 0;
  uint32_t flags = 0;     // kStoredDirectly, kInlined
  uint64_t windowId = 0;  // kNoWindow: a bare signal
  uint64_t offset = 0;
  uint64_t bytes = 0;
  // A small put's bytes travel in the frame: one message instead of two (88 bytes fill the frame to 128).
  static constexpr size_t kInlineBytes = 88;
  unsigned char inlined[kInlineBytes] = {};
};
static_assert(sizeof(WindowFrame) == 128);
inline constexpr uint32_t kWindowFrameMagic = 0x57494e44u;  // "WIND"
inline constexpr uint32_t kStoredDirectly = 1;              // the sender already wrote the bytes into the window
inline constexpr uint32_t kInlined = 2;                     // the bytes are in the frame's `inlined`
inline constexpr uint32_t kWakeOnly = 4;  // no put, no signal: wakes a target asleep in a wait (shm_window_path.h)
inline constexpr uint64_t kNoWindow = ~uint64_t{0};

// How a blocking window call waits: its deadline, the communicator's abort flag, its name for errors, and how long
// it spins and yields before it sleeps (the communicator's, from the ranks sharing the machine's cores).
struct WindowWaiting {
  Deadline deadline;
  const std::atomic<bool>* aborted;
  const char* call;
  WaitPolicy policy;
};

class WindowChannel final : public SideProgress {
 public:
  explicit WindowChannel(int rank) : rank_(rank) {}
  ~WindowChannel();

  bool isOpen() const { return open_; }
  // Takes the window connections (made collectively, at the first registration).
  void open(PeerConnections peers);
  WindowTable& table() { return table_; }
  // Registration over shared memory (shm_window_path.h): this rank's words for the registration's allgather, then
  // every rank's words for the window just added. forget() ends a window: its mappings, its adapter registrations
  // (expose below) and its table entry.
  std::vector<uint64_t> shmAnnounce(const void* base, size_t bytes, int nranks);
  void shmAttach(const Window& win, std::span<const uint64_t> all);
  void forget(Window* win);

  // Writes `bytes` from src into peer's part of `win` at `offset`, then raises (sigIdx, ctx) there; returns once
  // src may be reused. To this rank itself: a copy and the signal.
  void put(const Window& win, int peer, const void* src, uint64_t bytes, uint64_t offset, uint32_t sigIdx, uint32_t ctx,
           const WindowWaiting& waiting);
  void signal(int peer, uint32_t sigIdx, uint32_t ctx, const WindowWaiting& waiting);
  // Returns once every wait's signals have arrived, and consumes them.
  void waitSignals(std::span<const SignalWait> waits, const WindowWaiting& waiting);
  // One op of the kinds above.
  void run(const WindowOp& op, const WindowWaiting& waiting);
  // Frames this rank has sent to each peer (index: rank).
  std::vector<uint64_t> sentCounts() const;
  // Lands frames until as many from each peer as `expected` says have landed (deregistration: no put is still on
  // its way into a window about to go).
  void drain(const std::vector<uint64_t>& expected, const WindowWaiting& waiting);
  // Which transports carry the puts ("shm direct", "tcp messages", "ib rdma write"), for the log and the benchmark.
  std::string describe() const;
  // Registers [base, base + bytes) with every window connection that lets its peer write into it (ib): the key each
  // peer needs (index: rank; 0 where none), and in *tokens what unexpose takes.
  std::vector<uint64_t> expose(void* base, size_t bytes, std::vector<void*>* tokens);
  void unexpose(std::vector<void*>& tokens);
  // Returns once every put this rank made (on any window) is complete at its target.
  void flush(const WindowWaiting& waiting);

  bool progressSide() override;
  void addSidePollFds(std::vector<pollfd>& fds) override;

 private:
  struct Peer {
    Connection* conn = nullptr;
    PeerMemoryWrites* writes = nullptr;  // null: every put's bytes travel as a message
    WindowRdmaWrites* rdma = nullptr;    // puts go as RDMA writes into the peer's window (ib)
    WindowFrame in;                      // the frame being received
    bool inPayload = false;              // its bytes are being received
    bool parked = false;                 // in: for a window this rank has not registered yet
    uint64_t recvId = 0;                 // the receive that completes the current stage
    uint64_t landed = 0, sent = 0;       // frames landed from it, sent to it
    std::exception_ptr failed;           // its connection failed while no call of it was waiting
  };

  bool progressAll();
  bool advance(int peer);
  void land(int peer);
  void armHeader(Peer& p);
  bool putByRdma(const Window& win, int peer, const void* src, uint64_t bytes, uint64_t offset, uint32_t sigIdx,
                 uint32_t ctx, const WindowWaiting& waiting);
  bool signalByRdma(int peer, uint32_t sigIdx, uint32_t ctx, const WindowWaiting& waiting);
  bool raiseWritten(int peer);
  Peer& peerFor(int peer, const WindowWaiting& waiting);
  void sendFrame(int peer, const WindowFrame& frame, const void* bytes, const WindowWaiting& waiting);
  // The signal of a put whose bytes are in the peer's window already (or a bare one): a counter when the shared
  // path takes it, else a frame.
  void raiseAfterStore(int peer, WindowFrame frame, const WindowWaiting& waiting);
  void countLanded(int peer);
  template <class Pred>
  void driveUntil(Pred done, int peer, const WindowWaiting& waiting);
  // driveUntil for the channel's other files (window_channel_rdma.cc).
  void waitFor(const std::function<bool()>& done, int peer, const WindowWaiting& waiting);
  [[noreturn]] void invalid(int peer, const std::string& what) const;

  const int rank_;
  bool open_ = false;
  unsigned sideRounds_ = 0;
  bool sideWoken_ = false;  // a call slept on the window connections: visit them at its next round
  PeerConnections peers_;
  std::vector<Peer> state_;
  WindowTable table_;
  std::unique_ptr<ShmWindowPath> shm_;  // counters and mapped windows for shm peers (null: none yet)
  std::vector<bool> shmPeers_;          // [p]: the window connection to p is shared memory
};

}  // namespace chorus
