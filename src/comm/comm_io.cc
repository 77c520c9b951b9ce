#include "src/comm/comm_io.h"

#include <string>

#include "core/error.h"

namespace chorus {

CommIO::CommIO(int rank, int size, std::vector<std::unique_ptr<Connection>>& conns, StagingMemory& staging,
               Reducer& reducer, WaitPolicy wait, const std::atomic<bool>& aborted, int wakeFd)
    : rank_(rank),
      size_(size),
      conns_(conns),
      staging_(staging),
      sliceBytes_(staging.sliceBytes()),
      reducer_(reducer),
      driver_(rank, conns, call_, tracer_, wait, aborted, wakeFd) {}

void CommIO::begin(const CallTags& tags, LazyDeadline deadline, const CallArgs* op) {
  call_.start(&tags, 0, deadline, op);
  compressor_.begin(op, size_, deviceCopies_.onHost());
  tracer_.callBegins();
}

void CommIO::beginUntracked(uint32_t tag, LazyDeadline deadline) {
  call_.start(nullptr, tag, deadline, nullptr);
  compressor_.begin(nullptr, size_, true);
  tracer_.callBegins();
}

void CommIO::badPeer(int peer) const {
  throwInternal(errorContext(rank_, call_.name()) + ": addressed rank " + std::to_string(peer));
}

ActiveConnection& CommIO::activate(int peer) {
  if (peer < 0 || peer >= size_ || !conns_[peer]) badPeer(peer);
  Connection* c = conns_[peer].get();
  for (ActiveConnection& a : call_.active) {
    if (a.conn == c) return a;
  }
  return call_.active.emplace_back(ActiveConnection{c, c->capabilities()});
}

Connection* CommIO::sendingTo(int peer, size_t bytes) {
  const ActiveConnection& a = activate(peer);
  if (a.caps.singleCopy != nullptr) a.caps.singleCopy->setSingleCopyHint(call_.singleCopyHint);
  if (a.caps.striping != nullptr) a.caps.striping->setStripeWidth(call_.stripeWidth);
  tracer_.posted(bytes);
  return a.conn;
}

Request CommIO::sendCompressed(Connection* c, int peer, const char* packed, size_t compressedSize, size_t bytes) {
  const uint64_t id = c->isend(packed, compressedSize, call_.sendTag(peer));
  compressor_.sent(c, id);
  return Request{c, true, id, bytes};
}

Request CommIO::isend(int peer, const void* buf, size_t bytes) {
  Connection* c = sendingTo(peer, bytes);
  if (compressor_.compresses(peer, bytes)) {
    size_t compressedSize = 0;
    const char* packed = compressor_.encodeSend(buf, bytes, &compressedSize);
    return sendCompressed(c, peer, packed, compressedSize, bytes);
  }
  return Request{c, true, c->isend(buf, bytes, call_.sendTag(peer)), bytes};
}

Request CommIO::irecv(int peer, void* buf, size_t bytes) {
  const ActiveConnection& a = activate(peer);
  Connection* c = a.conn;
  if (a.caps.striping != nullptr) a.caps.striping->setStripeWidth(call_.stripeWidth);
  tracer_.posted(bytes);
  if (compressor_.compresses(peer, bytes)) {
    size_t compressedSize = 0;
    char* packed = compressor_.receiveBuffer(buf, bytes, &compressedSize);
    const uint64_t id = c->irecv(packed, compressedSize, call_.recvTag(peer));
    compressor_.received(c, id);
    return Request{c, false, id, bytes};
  }
  return Request{c, false, c->irecv(buf, bytes, call_.recvTag(peer)), bytes};
}

void CommIO::copy(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  const double start = tracer_.clockIfOn();
  deviceCopies_.copy(dst, src, bytes);
  tracer_.movedSince(start);
}

bool CommIO::done(const Request& r) {
  return r.isSend ? r.conn->sendsDone() > r.id : r.conn->recvsDone() > r.id;
}

int CommIO::waitForAnySender(const CallTags& tags, chorusDataType_t type) {
  for (int p = 0; p < size_; ++p) {
    if (p == rank_ || activate(p).caps.peeking != nullptr) continue;
    throw Error(chorusInvalidUsage, errorContext(rank_, p, call_.name()) + ": the connection (" +
                                        connectionTo(p)->describe() +
                                        ") cannot receive from any peer; name the source");
  }
  PollBackoff backoff;
  for (unsigned round = 1;; ++round) {
    for (int i = 0; i < size_; ++i) {
      const int p = (nextAnySender_ + i) % size_;
      uint32_t tag = 0;
      if (p == rank_) continue;
      if (!activate(p).caps.peeking->peekIncomingTag(&tag) || tag != tags.nextRecvTag(p, type)) continue;
      nextAnySender_ = (p + 1) % size_;
      return p;
    }
    driver_.throwIfAborted();
    if ((round & 15) == 0) driver_.throwIfLostOrLate();
    backoff.pause();  // yields, then sleeps growing to a millisecond: a receive from any peer is rare and patient
  }
}

void CommIO::waitUndecoded(const Request& r) {
  if (!tracer_.on()) {
    driver_.driveUntil([&] { return done(r); });
    return;
  }
  tracer_.step(r.isSend ? "send" : "recv", r.conn->peer(), r.bytes,
               [&] { driver_.driveUntil([&] { return done(r); }); });
  tracer_.waitedFor(r.bytes);
}

void CommIO::wait(const Request& r) {
  waitUndecoded(r);
  if (!r.isSend && compressor_.active()) compressor_.expand(r.conn, r.id);
}

void CommIO::waitAndReduce(const Request& r, const void* landing, void* out, const void* with, size_t count,
                           chorusDataType_t type, chorusRedOp_t op) {
  waitUndecoded(r);
  reduceArrived(r, landing, out, with, count, type, op);
}

Request CommIO::waitReduceAndSend(const Request& r, const void* landing, void* out, const void* with, size_t count,
                                  chorusDataType_t type, chorusRedOp_t op, int peer) {
  waitUndecoded(r);
  const size_t bytes = count * typeSize(type);
  if (!r.isSend && compressibleSum(type, op) && compressor_.compresses(peer, bytes)) {
    const double start = tracer_.clockIfOn();
    size_t compressedSize = 0;
    if (const char* packed = compressor_.expandAddingEncoded(r.conn, r.id, with, out, &compressedSize)) {
      tracer_.reducedSince(start);  // the encoding counts as reducing
      return sendCompressed(sendingTo(peer, bytes), peer, packed, compressedSize, bytes);
    }
  }
  reduceArrived(r, landing, out, with, count, type, op);
  return isend(peer, out, bytes);
}

void CommIO::reduceArrived(const Request& r, const void* landing, void* out, const void* with, size_t count,
                           chorusDataType_t type, chorusRedOp_t op) {
  if (!r.isSend && compressor_.active()) {
    if (compressibleSum(type, op)) {
      const double start = tracer_.clockIfOn();
      if (compressor_.expandAdding(r.conn, r.id, with, out)) {
        tracer_.reducedSince(start);
        return;
      }
    }
    compressor_.expand(r.conn, r.id);
  }
  reducer().reduce(out, landing, with, count, type, op);
}

void CommIO::exchange(int peer, const void* send, void* recv, size_t bytes) {
  if (compressor_.compresses(peer, bytes)) {  // encoded and decoded around the plain posts
    PeerIO::exchange(peer, send, recv, bytes);
    return;
  }
  Connection* c = connectionTo(peer);
  traced("exchange", peer, 2 * bytes, [&] {
    uint64_t sendId = 0, recvId = 0;
    if (c->exchange(send, recv, bytes, call_.sendTag(peer), call_.recvTag(peer), &sendId, &recvId)) return;
    driver_.driveUntil([&] { return done(Request{c, false, recvId}); });
    driver_.driveUntil([&] { return done(Request{c, true, sendId}); });
  });
}

void CommIO::waitAll() {
  auto all = [&] {
    driver_.driveUntil([&] {
      for (const ActiveConnection& a : call_.active) {
        if (a.conn->busy()) return false;
      }
      return true;
    });
  };
  if (!tracer_.on() || tracer_.unwaitedBytes() == 0) {  // nothing left unwaited: no step worth an event
    all();
  } else {
    tracer_.step("wait_all", -1, tracer_.unwaitedBytes(), all);
    tracer_.allWaited();
  }
  if (compressor_.active()) compressor_.expandAll();
}

}  // namespace chorus
