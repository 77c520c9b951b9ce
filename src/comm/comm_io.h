// The communicator's side of PeerIO: posts an algorithm's messages to the connections (compressed where agreed)
// and waits for them. Its parts: the call under way (call_under_way.h), waiting (ProgressDriver, with PeerLiveness),
// transfer tracing (TransferTracer), compression (MessageCompressor) and device copies (DeviceCopies).
#pragma once

#include <algorithm>
#include <atomic>
#include <memory>
#include <vector>

#include "algorithms/peer_io.h"
#include "core/collective.h"
#include "core/deadline.h"
#include "device/device_api.h"
#include "src/comm/call_tags.h"
#include "src/comm/call_trace.h"
#include "src/comm/call_under_way.h"
#include "src/comm/device_copies.h"
#include "src/comm/message_compression.h"
#include "src/comm/progress_driver.h"
#include "src/comm/staging_memory.h"
#include "src/comm/transfer_tracer.h"
#include "src/comm/wait_policy.h"
#include "transports/connection.h"

namespace chorus {

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
  void setTrace(CallTrace* trace, std::vector<const char*> transportNames) {
    tracer_.set(trace, std::move(transportNames));
  }
  const TransferTimes& times() const { return tracer_.times(); }
  // Starts traffic outside any call (the link probe at init): every frame carries `tag`.
  void beginUntracked(uint32_t tag, LazyDeadline deadline);
  // The flight record the waits that follow go to (ordinal 0: none), until the next call sets its own.
  void recordWaitsIn(FlightRecorder* recorder, uint64_t ordinal) {
    call_.flight = recorder;
    call_.flightRecord = ordinal;
  }

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
  void postingTogether() override { call_.singleCopyHint = true; }
  // A receive of `type` from any peer (begun with begin()): waits until some peer's next message is the one such a
  // receive from it would expect, and returns that peer (peers looked at in turn from where the last one left off,
  // so that no sender starves). Throws for a connection that cannot look ahead, the deadline, an abort, a lost peer.
  int waitForAnySender(const CallTags& tags, chorusDataType_t type);
  Reducer& reducer() override { return tracer_.on() ? tracer_.timedReducer() : reducer_; }
  // memmove for host memory; for device calls (setDeviceCopies) an async copy on the call's stream, waited for.
  void copy(void* dst, const void* src, size_t bytes) override;
  // Makes copy() go through `api` on `stream`: for the CommIO of device calls, whose buffers the CPU cannot touch.
  void setDeviceCopies(DeviceApi* api, DeviceStream stream) { deviceCopies_ = DeviceCopies{api, stream}; }
  char* slot(SlotPool pool, int index) override { return staging_.slot(pool, index); }
  int slots() const override { return staging_.slots(); }
  char* workspace(size_t bytes) override { return staging_.workspace(bytes); }
  char* scratch(size_t bytes) override { return staging_.scratch(bytes); }
  const Hierarchy* hierarchy() const override { return hierarchy_; }
  // The host grouping two-level algorithms use (owned by the communicator).
  void setHierarchy(const Hierarchy* h) { hierarchy_ = h; }
  // Work progressed beside every call's own (the communicator's windows): progress_driver.h.
  void setSideProgress(SideProgress* side) { driver_.setSideProgress(side); }
  // The slice size of the calls that follow (CHORUS_CHUNK_SIZE, or what a rule or the tuner chose for the call), at
  // most a staging slot (the communicator sizes its slots for the largest it may choose).
  void setSliceBytes(size_t bytes) { sliceBytes_ = std::min(bytes, staging_.sliceBytes()); }
  // The sockets per rail this call's TCP messages stripe over (0, as every call begins: each pair's default).
  void setStripeWidth(int sockets) { call_.stripeWidth = static_cast<size_t>(std::max(0, sockets)); }
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
  ActiveConnection& activate(int peer);
  Connection* connectionTo(int peer) { return activate(peer).conn; }
  [[noreturn, gnu::cold, gnu::noinline]] void badPeer(int peer) const;
  // Runs `drive` (a wait) as one traced transfer step named `what` when tracing, else just runs it.
  template <class Drive>
  void traced(const char* what, int peer, size_t bytes, Drive drive) {
    if (tracer_.on()) {
      tracer_.step(what, peer, bytes, drive);
    } else {
      drive();
    }
  }

  int rank_, size_;
  int nextAnySender_ = 0;  // where waitForAnySender starts looking
  std::vector<std::unique_ptr<Connection>>& conns_;
  StagingMemory& staging_;
  size_t sliceBytes_;  // setSliceBytes
  Reducer& reducer_;
  const Hierarchy* hierarchy_ = nullptr;
  CallUnderWay call_;
  DeviceCopies deviceCopies_;
  TransferTracer tracer_{reducer_};
  MessageCompressor compressor_;  // CHORUS_COMPRESSION
  ProgressDriver driver_;
};

}  // namespace chorus
