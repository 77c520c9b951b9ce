#include "transports/shm/shm_connection.h"

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/byte_text.h"
#include "core/error.h"
#include "transports/connection_errors.h"

namespace chorus {

namespace {
using shm::Record;
using shm::RecordKind;
using shm::SideState;

constexpr uint64_t kSlotMask = shm::kRecordSlots - 1;
// A record's len is 32 bits; an address-published piece is capped well below.
constexpr size_t kCmaPieceMax = size_t{1} << 30;

}  // namespace

ShmConnection::ShmConnection(ShmPairSetup setup)
    : rank_(setup.rank),
      peer_(setup.peer),
      fd_(setup.socketFd),
      in_(std::move(setup.inbound)),
      out_(std::move(setup.outbound)),
      peerPid_(setup.peerPid),
      cmaSend_(setup.cmaSend),
      peerInThisProcess_(setup.peerInThisProcess),
      cmaWrites_(setup.cmaWrites),
      tuning_(setup.tuning) {
  in_.closeFd();
  out_.closeFd();
  outCtl_ = shm::controlOf(out_.base());
  outRecords_ = shm::recordsOf(out_.base());
  outRing_ = shm::ringOf(out_.base());
  outRingBytes_ = out_.ringBytes();
  inCtl_ = shm::controlOf(in_.base());
  inRecords_ = shm::recordsOf(in_.base());
  inRing_ = shm::ringOf(in_.base());
  inRingBytes_ = in_.ringBytes();
  // Our outbound records and ring are ours alone to write and nothing is published yet: touch them now.
  ShmSegment::touchPages(outRecords_, shm::kRecordSlots * sizeof(Record) + outRingBytes_);
  // Several pieces in flight, however small the ring: the copy in of one overlaps the copy out of another.
  tuning_.ringPieceMax = std::max<size_t>(4096, std::min(tuning_.ringPieceMax, outRingBytes_ / 4));
  tuning_.ringPieceMin = std::min(tuning_.ringPieceMin, tuning_.ringPieceMax);
  description_ = "shm ring " + formatBytes(outRingBytes_) + (cmaSend_ ? " + cma" : "");
}

ShmConnection::~ShmConnection() {
  if (fd_ >= 0) ::close(fd_);
}

uint64_t ShmConnection::isend(const void* buf, size_t bytes, uint32_t tag) {
  sends_.push_back(SendOp{static_cast<const char*>(buf), bytes, 0, tag, 0, singleCopyHint_});
  return sendsPosted_++;
}

uint64_t ShmConnection::irecv(void* buf, size_t bytes, uint32_t tag) {
  recvs_.push_back(RecvOp{static_cast<char*>(buf), bytes, 0, tag});
  return recvsPosted_++;
}

// ---- errors ----

void ShmConnection::lost(const std::string& what) const {
  connection_errors::peerLost(rank_, peer_, description_, what);
}

void ShmConnection::peerGaveUp() const {
  // Stored before the state this was called for (release), so seen with it.
  const uint32_t lost = inCtl_->producer.lostPeer.load(std::memory_order_relaxed);
  connection_errors::peerGaveUp(rank_, peer_, connection_errors::lostPeerOfNote(lost));
}

void ShmConnection::corrupt(const std::string& what) const {
  connection_errors::corrupt(rank_, peer_, description_, "record: " + what);
}

void ShmConnection::checkRecord(const Record& r, const RecvOp& op) const {
  if (r.tag != op.tag || r.messageBytes != op.len) {
    connection_errors::mismatchedMessage(rank_, peer_, r.messageBytes, r.tag, op.len, op.tag, "");
  }
  if (r.len > op.len - op.done) corrupt("a piece of " + std::to_string(r.len) + " bytes overruns its message");
  if (r.kind == static_cast<uint32_t>(RecordKind::kInline)) {
    if (r.len > shm::kInlineMaxBytes) corrupt("inline piece of " + std::to_string(r.len) + " bytes");
    if ((consumed_ & kSlotMask) + shm::continuationsFor(r.len) >= shm::kRecordSlots) {
      corrupt("inline piece of " + std::to_string(r.len) + " bytes runs past the last record slot");
    }
  } else if (r.kind == static_cast<uint32_t>(RecordKind::kRing)) {
    if (r.len == 0 || consumedOffset_ + r.len > inRingBytes_) corrupt("ring piece outside the ring");
  } else if (r.kind == static_cast<uint32_t>(RecordKind::kCma)) {
    if (peerPid_ <= 0) corrupt("an address-published piece, but this rank cannot read the peer's memory");
  } else {
    corrupt("unknown kind " + std::to_string(r.kind));
  }
}

// ---- the peer's word on its communicator ----

SideState ShmConnection::peerState() const {
  return static_cast<SideState>(inCtl_->producer.state.load(std::memory_order_acquire));
}

// Called when nothing moved although something is posted: a peer that closed (on purpose or not) will never move
// it, so say why now rather than at the timeout. Records it published before closing are taken first.
void ShmConnection::throwIfPeerClosed() {
  SideState st = peerState();
  if (st == SideState::kOpen) return;
  // The state was stored after the peer's last records: having seen it, one more look finds them all.
  if ((!recvs_.empty() && pullRecords()) || (!sends_.empty() && pushSends())) return;
  if (st == SideState::kAbandoned) peerGaveUp();
  connection_errors::peerClosedEarly(rank_, peer_,
                                     !recvs_.empty() ? "still expected data from it" : "still had data for it");
}

// ---- producer ----

// Bytes of the next ring piece, 0 to wait: never past the ring's end, never a sliver unless it ends the message.
size_t ShmConnection::ringRoom(size_t remaining) {
  const size_t want = std::min({remaining, outRingBytes_ - producedOffset_, tuning_.ringPieceMax});
  size_t free = outRingBytes_ - (producedBytes_ - seenConsumedBytes_);
  if (free < want) {
    seenConsumedBytes_ = outCtl_->consumer.bytesConsumed.load(std::memory_order_acquire);
    free = outRingBytes_ - (producedBytes_ - seenConsumedBytes_);
  }
  const size_t n = std::min(want, free);
  if (n < want && n < tuning_.ringPieceMin) return 0;
  return n;
}

bool ShmConnection::recordSlotsFree(size_t slots) {
  if (produced_ + slots - seenConsumed_ > shm::kRecordSlots) {
    seenConsumed_ = outCtl_->consumer.recordsConsumed.load(std::memory_order_acquire);
    if (produced_ + slots - seenConsumed_ > shm::kRecordSlots) return false;
  }
  return true;
}

bool ShmConnection::inlineFits(size_t len) {
  const size_t extra = shm::continuationsFor(len);
  if (extra == 0) return true;                                             // the head slot is known free
  if ((produced_ & kSlotMask) + extra >= shm::kRecordSlots) return false;  // it would wrap: the byte ring takes it
  return recordSlotsFree(1 + extra);
}

size_t ShmConnection::writeInline(Record& head, const char* from, size_t len) {
  const size_t first = std::min(len, shm::kInlineBytes);
  if (first) shm::copyShare<shm::kInlineBytes>(head.payload, from, first);
  const size_t extra = shm::continuationsFor(len);
  for (size_t j = 1; j <= extra; ++j) {
    Record& c = outRecords_[(produced_ + j) & kSlotMask];
    c.seq.store(0, std::memory_order_relaxed);
    const size_t at = shm::continuationOffset(j);
    shm::copyShare<shm::kContinuationBytes>(shm::continuationBytes(c), from + at,
                                            std::min(shm::kContinuationBytes, len - at));
  }
  return 1 + extra;
}

ShmConnection::Publish ShmConnection::publishPiece(SendOp& s) {
  if (!recordSlotsFree(1)) return Publish::kNoSlot;
  Record& r = outRecords_[produced_ & kSlotMask];
  const size_t remaining = s.len - s.published;
  const char* from = s.buf + s.published;
  size_t n;
  size_t slots = 1;
  RecordKind kind;
  if (remaining <= shm::kInlineMaxBytes && inlineFits(remaining)) {
    kind = RecordKind::kInline;
    n = remaining;
    slots = writeInline(r, from, n);
  } else if (cmaSend_ && s.len >= (s.singleCopy || recvs_.empty() ? tuning_.cmaMinBytesOneWay : tuning_.cmaMinBytes)) {
    kind = RecordKind::kCma;
    n = std::min(remaining, kCmaPieceMax);
    const uint64_t address = reinterpret_cast<uintptr_t>(from);
    std::memcpy(r.payload, &address, sizeof(address));
    s.ackRecord = produced_ + 1;
  } else {
    kind = RecordKind::kRing;
    n = ringRoom(remaining);
    if (n == 0) return Publish::kNoRing;
    std::memcpy(outRing_ + producedOffset_, from, n);
    producedBytes_ += n;
    producedOffset_ += n;
    if (producedOffset_ == outRingBytes_) producedOffset_ = 0;
  }
  r.messageBytes = s.len;
  r.tag = s.tag;
  r.len = static_cast<uint32_t>(n);
  r.kind = static_cast<uint32_t>(kind);
  r.seq.store(produced_ + 1, std::memory_order_release);
  produced_ += slots;
  s.published += n;
  return Publish::kDone;
}

bool ShmConnection::pushSends() {
  bool moved = false;
  bool published = false;
  Publish blockedOn = Publish::kDone;
  while (firstUnpublished_ < sends_.size()) {
    SendOp& s = sends_[firstUnpublished_];
    Publish p = publishPiece(s);
    if (p != Publish::kDone) {
      blockedOn = p;
      break;
    }
    published = true;
    if (s.published == s.len) ++firstUnpublished_;
  }
  // Sends complete in posting order; one published by address waits until the receiver has read it.
  bool awaitingAck = false;
  while (firstUnpublished_ > 0) {
    const SendOp& s = sends_.front();
    if (s.ackRecord > seenConsumed_) {
      seenConsumed_ = outCtl_->consumer.recordsConsumed.load(std::memory_order_acquire);
      if (s.ackRecord > seenConsumed_) {
        awaitingAck = true;
        break;
      }
    }
    sends_.pop_front();
    --firstUnpublished_;
    ++sendsDone_;
    moved = true;
  }
  // What a sleeping sender must be woken for; the counter it names was loaded just now.
  waitForRecords_ = blockedOn == Publish::kNoSlot || awaitingAck;
  waitForRingBytes_ = blockedOn == Publish::kNoRing;
  if (published) wakePeerIfSleeping(outCtl_->consumerSleep.sleeping);
  return moved || published;
}

// ---- consumer ----

// seq_cst: in addPollFds this load must not pass the store of our sleeping flag (the sleep protocol's other half).
bool ShmConnection::peekIncomingTag(uint32_t* tag) {
  if (!recvs_.empty() || !recordReady()) return false;
  *tag = inRecords_[consumed_ & kSlotMask].tag;
  return true;
}

bool ShmConnection::recordReady() const {
  return inRecords_[consumed_ & kSlotMask].seq.load(std::memory_order_seq_cst) == consumed_ + 1;
}

void ShmConnection::readFromPeer(char* dst, uint64_t address, size_t len) {
  size_t done = 0;
  while (done < len) {
    iovec local{dst + done, len - done};
    iovec remote{reinterpret_cast<void*>(address + done), len - done};
    ssize_t r = ::process_vm_readv(peerPid_, &local, 1, &remote, 1, 0);
    if (r > 0) {
      done += static_cast<size_t>(r);
      continue;
    }
    int err = r < 0 ? errno : EFAULT;
    if (err == EINTR) continue;
    if (peerState() == SideState::kAbandoned) peerGaveUp();
    if (err == ESRCH) lost("its process is gone (process_vm_readv: " + std::string(std::strerror(err)) + ")");
    char where[32];
    std::snprintf(where, sizeof(where), "0x%llx", static_cast<unsigned long long>(address));
    corrupt("process_vm_readv of " + std::to_string(len) + " bytes at its address " + where +
            " failed: " + std::strerror(err));
  }
  // A peer that gave up may have handed that memory back to its caller mid-read: then the bytes mean nothing.
  if (peerState() == SideState::kAbandoned) peerGaveUp();
}

int ShmConnection::writePeerMemory(uint64_t address, const void* src, size_t bytes) {
  // A peer in this process (ranks as threads): a copy; the caller's release store publishes it.
  if (peerInThisProcess_) {
    if (bytes) std::memcpy(reinterpret_cast<void*>(address), src, bytes);
    return 0;
  }
  size_t done = 0;
  while (done < bytes) {
    iovec local{const_cast<char*>(static_cast<const char*>(src)) + done, bytes - done};
    iovec remote{reinterpret_cast<void*>(address + done), bytes - done};
    ssize_t r = ::process_vm_writev(peerPid_, &local, 1, &remote, 1, 0);
    if (r > 0) {
      done += static_cast<size_t>(r);
      continue;
    }
    const int err = r < 0 ? errno : EFAULT;
    if (err != EINTR) return err;
  }
  return 0;
}

bool ShmConnection::pullRecords() {
  bool moved = false;
  while (!recvs_.empty()) {
    const Record& r = inRecords_[consumed_ & kSlotMask];
    if (r.seq.load(std::memory_order_acquire) != consumed_ + 1) break;
    RecvOp& op = recvs_.front();
    checkRecord(r, op);
    char* dst = op.buf + op.done;
    if (r.kind == static_cast<uint32_t>(RecordKind::kInline)) {
      const size_t first = std::min<size_t>(r.len, shm::kInlineBytes);
      if (first) shm::copyShare<shm::kInlineBytes>(dst, r.payload, first);
      const size_t extra = shm::continuationsFor(r.len);
      for (size_t j = 1; j <= extra; ++j) {
        const size_t at = shm::continuationOffset(j);
        shm::copyShare<shm::kContinuationBytes>(dst + at,
                                                shm::continuationBytes(inRecords_[(consumed_ + j) & kSlotMask]),
                                                std::min<size_t>(shm::kContinuationBytes, r.len - at));
      }
      consumed_ += extra;  // the continuation slots are free with the record
    } else if (r.kind == static_cast<uint32_t>(RecordKind::kRing)) {
      std::memcpy(dst, inRing_ + consumedOffset_, r.len);
      consumedBytes_ += r.len;
      consumedOffset_ += r.len;
      if (consumedOffset_ == inRingBytes_) consumedOffset_ = 0;
      inCtl_->consumer.bytesConsumed.store(consumedBytes_, std::memory_order_release);
    } else {
      uint64_t address;
      std::memcpy(&address, r.payload, sizeof(address));
      readFromPeer(dst, address, r.len);
    }
    op.done += r.len;
    ++consumed_;
    // Frees the slot, and for an address-published piece is the acknowledgement that completes the send.
    inCtl_->consumer.recordsConsumed.store(consumed_, std::memory_order_release);
    moved = true;
    if (op.done == op.len) {
      recvs_.pop_front();
      ++recvsDone_;
    }
  }
  if (moved) wakePeerIfSleeping(inCtl_->producer.sleeping);
  return moved;
}

// ---- progress, sleeping, doorbells ----

// A tiny exchange on an otherwise idle pair (a 2-rank allreduce of a few bytes is one): publish at once and watch
// for the peer's record a little while, here rather than through the caller's progress loop (a 2-rank 8-byte
// allreduce takes about 0.2 us, of which a line's trip between cores is 0.08). What has not arrived by then the
// caller's loop waits for.
bool ShmConnection::exchange(const void* sendBuf, void* recvBuf, size_t bytes, uint32_t sendTag, uint32_t recvTag,
                             uint64_t* sendId, uint64_t* recvId) {
  constexpr int kExchangeSpinRounds = 64;  // about a microsecond; the caller's loop spins, yields and sleeps after
  *sendId = isend(sendBuf, bytes, sendTag);
  *recvId = irecv(recvBuf, bytes, recvTag);
  if (bytes > shm::kInlineMaxBytes || sends_.size() != 1 || recvs_.size() != 1) return false;
  // The continuation lines of the piece we wait for are asked for in every round too: they then cross with its
  // record's line rather than after it (2 ranks, 256 B: 0.31 -> 0.28 us; 128 B: 0.27 -> 0.25).
  const size_t extra = shm::continuationsFor(bytes);
  for (int round = 0; round < kExchangeSpinRounds && busy(); ++round) {
    progress();
    if (recvs_.empty()) continue;
    for (size_t j = 1; j <= extra; ++j)
      (void)inRecords_[(consumed_ + j) & kSlotMask].seq.load(std::memory_order_relaxed);
  }
  return !busy();
}

bool ShmConnection::progress() {
  if (armed_) disarm();
  bool moved = false;
  // Publish first: the peer is waiting for these records, and looking for its records may miss in the cache.
  if (!sends_.empty()) moved |= pushSends();
  if (!recvs_.empty()) moved |= pullRecords();
  if (!moved && (!recvs_.empty() || !sends_.empty())) throwIfPeerClosed();
  return moved;
}

void ShmConnection::ringDoorbell() {
  const char bell = 1;
  // Best effort: a full socket already holds a wakeup, a closed one has nobody to wake.
  ssize_t ignored = ::send(fd_, &bell, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
  (void)ignored;
}

// The waker's half of the sleep protocol: our records or counters are stored; a full fence, then the peer's flag.
// The sleeper stores its flag and then re-checks ours (seq_cst), so at least one of the two sees the other.
void ShmConnection::wakePeerIfSleeping(std::atomic<uint32_t>& flag) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (flag.load(std::memory_order_relaxed) != 0 && flag.exchange(0) != 0) ringDoorbell();
}

// Only the counters the sender is blocked on count: a stale copy of the other one must not keep it awake.
bool ShmConnection::consumerMovedSinceSeen() const {
  return (waitForRecords_ && outCtl_->consumer.recordsConsumed.load(std::memory_order_seq_cst) != seenConsumed_) ||
         (waitForRingBytes_ && outCtl_->consumer.bytesConsumed.load(std::memory_order_seq_cst) != seenConsumedBytes_);
}

void ShmConnection::addPollFds(std::vector<pollfd>& fds) const {
  // Raise the flags first, then look once more: what arrived in between must end the sleep at once.
  bool ready = false;
  if (!recvs_.empty()) {
    inCtl_->consumerSleep.sleeping.store(1, std::memory_order_seq_cst);
    ready |= recordReady();
  }
  if (!sends_.empty()) {
    outCtl_->producer.sleeping.store(1, std::memory_order_seq_cst);
    ready |= consumerMovedSinceSeen();
  }
  ready |= peerState() != SideState::kOpen;
  armed_ = true;
  // The socket is always writable, so POLLOUT makes the poll return at once.
  fds.push_back(pollfd{fd_, static_cast<short>(ready ? POLLIN | POLLOUT : POLLIN), 0});
}

void ShmConnection::disarm() {
  armed_ = false;
  inCtl_->consumerSleep.sleeping.store(0, std::memory_order_relaxed);
  outCtl_->producer.sleeping.store(0, std::memory_order_relaxed);
  char drain[64];
  for (;;) {
    ssize_t r = ::recv(fd_, drain, sizeof(drain), MSG_DONTWAIT);
    if (r > 0) continue;
    if (r < 0 && errno == EINTR) continue;
    break;  // drained, or closed: a closed socket is for checkAlive to judge
  }
}

// ---- goodbye, abandon, hang-ups ----

void ShmConnection::closeGracefully() {
  // Only when idle: a goodbye behind unsent data would be a lie about what the peer will receive.
  if (busy() || abandoned_) return;
  outCtl_->producer.state.store(static_cast<uint32_t>(SideState::kGoodbye), std::memory_order_release);
}

void ShmConnection::abandon(int lostPeer) {
  if (abandoned_) return;
  abandoned_ = true;
  sends_.clear();
  firstUnpublished_ = 0;
  outCtl_->producer.lostPeer.store(static_cast<uint32_t>(connection_errors::lostPeerNote(lostPeer)),
                                   std::memory_order_relaxed);
  outCtl_->producer.state.store(static_cast<uint32_t>(SideState::kAbandoned), std::memory_order_release);
  // Wake a sleeping peer and show it a hang-up: either way it looks at our state and fails at once.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  ringDoorbell();
  ::shutdown(fd_, SHUT_WR);
}

void ShmConnection::addHangupFds(std::vector<pollfd>& fds) const {
  if (peerSaidGoodbye_) return;
  fds.push_back(pollfd{fd_, POLLRDHUP, 0});
}

void ShmConnection::checkAlive() {
  if (peerSaidGoodbye_) return;
  SideState st = peerState();
  if (st == SideState::kAbandoned) peerGaveUp();
  if (st == SideState::kGoodbye) {
    peerSaidGoodbye_ = true;
    return;
  }
  // Records the peer published before it went stay readable: let a waiting receive take them first.
  if (!recvs_.empty() && recordReady()) return;
  lost("it vanished without a goodbye (process exited or killed)");
}

}  // namespace chorus
