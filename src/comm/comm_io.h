// The communicator's side of PeerIO: posts to connections and waits on them, bounded by the call's deadline
// and by abort. Waiting spins briefly, then sleeps in poll() so that oversubscribed ranks leave the CPU.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "core/collective.h"
#include "algorithms/peer_io.h"
#include "src/comm/call_tags.h"
#include "src/comm/call_trace.h"
#include "src/comm/staging_memory.h"
#include "src/comm/message_compression.h"
#include "core/deadline.h"
#include "device/device_api.h"
#include "device/poll_backoff.h"
#include "transports/connection.h"

namespace chorus {

// How a communicator's CommIOs (host and device alike) wait while nothing moves: progress rounds spun, then rounds
// yielded, then asleep in poll.
struct WaitPolicy {
  int spinRounds = 200;
  int yieldRounds = 200;
  // For `localRanks` ranks on this machine (this one included): more than the cores means no spinning.
  static WaitPolicy forRanksOnMachine(int localRanks);
};

class CommIO final : public PeerIO {
 public:
  // conns[p] is the connection to rank p (null for self). Idle, it waits as `wait` says.
  CommIO(int rank, int size, std::vector<std::unique_ptr<Connection>>& conns, StagingMemory& staging,
         Reducer& reducer, WaitPolicy wait, const std::atomic<bool>& aborted, int wakeFd);

  // Starts a call: the tags its frames carry (per peer; `tags` must outlive the call), deadline, and the op (named
  // in messages; must outlive the call).
  void begin(const CallTags& tags, LazyDeadline deadline, const CallArgs* op);
  // CHORUS_COMPRESSION: the float32 messages of compressible calls to and from peers[p] travel at 16 bits.
  void setCompression(CompressionFormat format, std::vector<bool> peers) {
    compressor_.configure(format, std::move(peers));
  }
  const MessageCompressor& compressor() const { return compressor_; }
  // Traces every wait as a transfer step of `trace` (TraceLevel::kTransfer) and adds up where each call's time
  // went (times(), cleared by begin()); transportNames[p] names the link to rank p. Null: off (the default).
  void setTrace(CallTrace* trace, std::vector<const char*> transportNames);
  const TransferTimes& times() const { return times_; }
  // Starts traffic outside any call (the link probe at init): every frame carries `tag`.
  void beginUntracked(uint32_t tag, LazyDeadline deadline);

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Request isend(int peer, const void* buf, size_t bytes) override;
  Request irecv(int peer, void* buf, size_t bytes) override;
  void wait(const Request& r) override;
  // A compressed float32 sum reduces straight from the compressed buffer (decode and add in one pass).
  void waitAndReduce(const Request& r, const void* landing, void* out, const void* with, size_t count,
                     chorusDataType_t type, chorusRedOp_t op) override;
  // ... and encodes the sum for a compressed send in the same pass.
  Request waitReduceAndSend(const Request& r, const void* landing, void* out, const void* with, size_t count,
                            chorusDataType_t type, chorusRedOp_t op, int peer) override;
  void exchange(int peer, const void* send, void* recv, size_t bytes) override;
  void waitAll() override;
  void postingTogether() override { singleCopyHint_ = true; }
  // A receive of `type` from any peer (begun with begin()): waits until some peer's next message is the one such a
  // receive from it would expect, and returns that peer (peers looked at in turn from where the last one left off,
  // so that no sender starves). Throws for a connection that cannot look ahead, the deadline, an abort, a lost peer.
  int waitForAnySender(const CallTags& tags, chorusDataType_t type);
  Reducer& reducer() override { return trace_ != nullptr ? timedReducer_ : reducer_; }
  // memmove for host memory; for device calls (setDeviceCopies) an async copy on the call's stream, waited for.
  void copy(void* dst, const void* src, size_t bytes) override;
  // Makes copy() go through `api` on `stream`: for the CommIO of device calls, whose buffers the CPU cannot touch.
  void setDeviceCopies(DeviceApi* api, DeviceStream stream) {
    deviceApi_ = api;
    deviceStream_ = stream;
  }
  char* slot(SlotPool pool, int index) override { return staging_.slot(pool, index); }
  int slots() const override { return staging_.slots(); }
  char* workspace(size_t bytes) override { return staging_.workspace(bytes); }
  char* scratch(size_t bytes) override { return staging_.scratch(bytes); }
  const Hierarchy* hierarchy() const override { return hierarchy_; }
  // The host grouping two-level algorithms use (owned by the communicator).
  void setHierarchy(const Hierarchy* h) { hierarchy_ = h; }
  // The slice size of the calls that follow (CHORUS_CHUNK_SIZE, or what a rule or the tuner chose for the call), at
  // most a staging slot (the communicator sizes its slots for the largest it may choose).
  void setSliceBytes(size_t bytes) { sliceBytes_ = std::min(bytes, staging_.sliceBytes()); }
  // The sockets per rail this call's TCP messages stripe over (0, as every call begins: each pair's default).
  void setStripeWidth(int sockets) { stripeWidth_ = static_cast<size_t>(std::max(0, sockets)); }
  size_t sliceBytes() const override { return sliceBytes_; }

 private:
  static bool done(const Request& r);
  void waitUndecoded(const Request& r);  // wait() without a compressed receive's decode
  // The connection a send of `bytes` to `peer` goes on, set for this call (hints, stripe width, traced bytes).
  Connection* sendingTo(int peer, size_t bytes);
  // Posts a compressed send's buffer on c (which sendingTo gave).
  Request sendCompressed(Connection* c, int peer, const char* packed, size_t compressedSize, size_t bytes);
  // waitAndReduce once the receive is complete.
  void reduceArrived(const Request& r, const void* landing, void* out, const void* with, size_t count,
                     chorusDataType_t type, chorusRedOp_t op);
  static bool compressibleSum(chorusDataType_t type, chorusRedOp_t op) {
    return type == chorusFloat32 && (op == chorusSum || op == chorusAvg);
  }
  // A connection this call uses, with what it supports beyond the core, looked up at its first use in the call
  // so that posting a message pays no lookup.
  struct ActiveConnection {
    Connection* conn;
    ConnectionCapabilities caps;
  };
  ActiveConnection& activate(int peer);
  Connection* connectionTo(int peer) { return activate(peer).conn; }
  [[noreturn, gnu::cold, gnu::noinline]] void badPeer(int peer) const;
  template <class Pred>
  void driveUntil(Pred finished);
  template <class Pred>
  void driveLoop(Pred finished);
  // The ranks, other than `except`, whose connections have hung up without a goodbye, in rank order.
  std::vector<int> otherLostPeers(int except);
  void sleepUntilSomethingMoves();
  // Polls every connection for a hang-up without waiting; throws chorusRemoteError naming a lost peer.
  void checkPeersAlive();
  // Adds every connection's hang-up descriptors after pollFds_[from]; then reports the ones that fired.
  size_t addHangupWatch();
  void reportHangups(size_t from);
  [[noreturn]] void timedOut();
  [[noreturn]] void abortedNow();  // chorusCommAbort was called: the call fails, naming itself
  // "allreduce #12 (count 1000, float32, sum)": built only for messages.
  std::string callName() const;
  // Runs `drive` (a wait) as one traced transfer step named `what`.
  template <class Drive>
  void traced(const char* what, int peer, size_t bytes, Drive drive);
  // Times the reducer into times_.reduceUs.
  class TimedReducer final : public Reducer {
   public:
    TimedReducer(Reducer& inner, TransferTimes& times) : inner_(inner), times_(times) {}
    void reduce(void* dst, const void* a, const void* b, size_t count, chorusDataType_t type,
                chorusRedOp_t op) override;
    void finishAverage(void* data, size_t count, chorusDataType_t type, int nranks) override;

   private:
    Reducer& inner_;
    TransferTimes& times_;
  };

  int rank_, size_;
  int nextAnySender_ = 0;  // where waitForAnySender starts looking
  std::vector<std::unique_ptr<Connection>>& conns_;
  StagingMemory& staging_;
  size_t sliceBytes_;  // setSliceBytes
  size_t stripeWidth_ = 0;  // setStripeWidth
  Reducer& reducer_;
  const WaitPolicy wait_;
  // A receive waiting for this many bytes stops the spinning (and from kNoYieldBytes the yielding too): see driveLoop.
  static constexpr size_t kNoSpinBytes = 64 << 10, kNoYieldBytes = 256 << 10;
  const std::atomic<bool>& aborted_;
  int wakeFd_;
  const CallTags* tags_ = nullptr;  // null: untracked traffic, every frame carries untrackedTag_
  uint32_t untrackedTag_ = 0;
  uint32_t sendTag(int peer) const { return tags_ != nullptr ? tags_->sendTag(peer) : untrackedTag_; }
  uint32_t recvTag(int peer) const { return tags_ != nullptr ? tags_->recvTag(peer) : untrackedTag_; }
  LazyDeadline deadline_;
  const CallArgs* op_ = nullptr;
  bool singleCopyHint_ = false;  // postingTogether() in this call
  std::vector<ActiveConnection> active_;  // connections this call has used
  std::vector<pollfd> pollFds_;
  std::vector<Connection*> hangupOwner_;  // the connection behind each hang-up descriptor in pollFds_
  Deadline::Clock::time_point lastLivenessCheck_{};
  const Hierarchy* hierarchy_ = nullptr;
  DeviceApi* deviceApi_ = nullptr;  // null: host memory
  DeviceStream deviceStream_ = nullptr;
  PollBackoff deviceBackoff_;  // how long to sleep while only a device copy can move things on
  CallTrace* trace_ = nullptr;  // null: no transfer tracing
  std::vector<const char*> transportNames_;
  TransferTimes times_;
  TimedReducer timedReducer_{reducer_, times_};
  bool timing_ = false;       // inside a traced wait: driveLoop splits its time into waiting and moving
  TransferStep step_{};  // the traced step under way
  MessageCompressor compressor_;  // CHORUS_COMPRESSION
  size_t postedBytes_ = 0;    // posted and not yet waited for alone (a traced waitAll's bytes)
};

}  // namespace chorus
