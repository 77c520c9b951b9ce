#include "transports/cuda_ipc/ipc_connection.h"

#include <algorithm>
#include <cstdint>

#include "core/error.h"
#include "transports/connection_errors.h"

namespace chorus {

namespace {
std::string kiB(size_t bytes) { return std::to_string(bytes >> 10) + " KiB"; }

// The bytes of a ring of `slots` pieces of `slotBytes` held in `region`; throws when the shape is empty, does not
// fit the region or has pieces too large for a control message.
size_t ringBytes(int rank, int peer, const char* which, size_t slots, size_t slotBytes, const DeviceRegion& region) {
  if (slots == 0 || slotBytes == 0 || slotBytes > UINT32_MAX || region.data() == nullptr ||
      slotBytes > region.bytes() / slots) {
    throw Error(chorusInvalidUsage, errorContext(rank, peer, "cuda ipc connection") + ": " + which + " ring of " +
                                        std::to_string(slots) + " x " + std::to_string(slotBytes) +
                                        " bytes cannot be used (its region holds " + std::to_string(region.bytes()) +
                                        " bytes; a piece must be under 4 GiB)");
  }
  return slots * slotBytes;
}
}  // namespace

// The description reads "<pieces> x <piece size> ring": the ring's size, and the largest piece it is cut into.
IpcConnection::IpcConnection(int rank, Connection& host, DeviceApi& api, IpcRings rings)
    : LayeredDeviceConnection(rank, host, api,
                              "cuda ipc " + std::to_string(rings.localSlots) + " x " + kiB(rings.localSlotBytes) +
                                  " ring (" + api.name() + ") over " + host.describe()),
      rings_(std::move(rings)),
      localBytes_(ringBytes(rank, host.peer(), "its own", rings_.localSlots, rings_.localSlotBytes, rings_.local)),
      remoteBytes_(
          ringBytes(rank, host.peer(), "the peer's", rings_.remoteSlots, rings_.remoteSlotBytes, rings_.remote)) {
  try {
    sendStream_ = api_.createStream();
    recvStream_ = api_.createStream();
    sendBatches_.create(api_, kIpcCopyBatches);
    recvBatches_.create(api_, kIpcCopyBatches);
  } catch (const Error& e) {
    releaseDeviceObjects();
    rethrowWithContext(e, "cuda ipc setup");
  }
}

IpcConnection::~IpcConnection() { releaseDeviceObjects(); }

void IpcConnection::releaseDeviceObjects() noexcept {
  // Copies still in flight read or write the rings: let them finish before anything is released.
  drainStream(sendStream_);
  drainStream(recvStream_);
  sendBatches_.release(api_);
  recvBatches_.release(api_);
  try {
    if (sendStream_ != nullptr) api_.destroyStream(sendStream_);
    if (recvStream_ != nullptr) api_.destroyStream(recvStream_);
  } catch (...) {
    // Teardown: nothing can be done about a runtime that refuses to release.
  }
  sendStream_ = recvStream_ = nullptr;
}

void IpcConnection::queue(std::deque<Piece>& pieces, char* buf, size_t bytes, uint32_t tag, size_t pieceBytes) {
  const size_t n = pieceCount(bytes, pieceBytes);
  for (size_t i = 0; i < n; ++i) {
    const size_t begin = i * pieceBytes;
    pieces.push_back(
        Piece{buf == nullptr ? nullptr : buf + begin, std::min(bytes - begin, pieceBytes), bytes, tag, i + 1 == n});
  }
}

uint64_t IpcConnection::isend(const void* buf, size_t bytes, uint32_t tag) {
  queue(sendPieces_, const_cast<char*>(static_cast<const char*>(buf)), bytes, tag, rings_.remoteSlotBytes);
  return sendsPosted_++;
}

uint64_t IpcConnection::irecv(void* buf, size_t bytes, uint32_t tag) {
  const size_t before = recvPieces_.size();
  queue(recvPieces_, static_cast<char*>(buf), bytes, tag, rings_.localSlotBytes);
  piecesExpected_ += recvPieces_.size() - before;
  return recvsPosted_++;
}

uint64_t IpcConnection::sendControl(const IpcControl& message) {
  outControl_.push_back(PostedControl{message, 0});
  PostedControl& posted = outControl_.back();
  posted.hostId = host_.isend(&posted.message, sizeof(posted.message), kIpcControlTag);
  return posted.hostId;
}

void IpcConnection::copyIntoRing(char* ring, size_t ringBytes, uint64_t position, const char* from, size_t len) {
  const size_t offset = static_cast<size_t>(position % ringBytes);
  const size_t first = std::min(len, ringBytes - offset);
  api_.copyAsync(ring + offset, from, first, sendStream_);
  if (first < len) api_.copyAsync(ring, from + first, len - first, sendStream_);
}

void IpcConnection::copyOutOfRing(char* to, const char* ring, size_t ringBytes, uint64_t position, size_t len) {
  const size_t offset = static_cast<size_t>(position % ringBytes);
  const size_t first = std::min(len, ringBytes - offset);
  api_.copyAsync(to, ring + offset, first, recvStream_);
  if (first < len) api_.copyAsync(to + first, ring, len - first, recvStream_);
}

void IpcConnection::recordBatch(CopyBatches& batches, DeviceStream s, const char* operation) {
  try {
    batches.record(api_, s);
  } catch (const Error& e) {
    rethrowWithContext(e, operation);
  }
  ++copiesInFlight_;
}

bool IpcConnection::batchDone(CopyBatches& batches, uint64_t n, const char* operation) {
  const size_t before = batches.inFlight();
  bool done = false;
  try {
    done = batches.reached(api_, n);
  } catch (const Error& e) {
    rethrowWithContext(e, operation);
  }
  copiesInFlight_ -= static_cast<int>(before - batches.inFlight());
  return done;
}

void IpcConnection::corrupt(const IpcControl& m, const std::string& why) const {
  throw Error(chorusRemoteError,
              context("cuda ipc control message") + ": corrupt: " + why + " (kind " + std::to_string(m.kind) +
                  ", position " + std::to_string(m.position) + ", " + std::to_string(m.pieceBytes) + " bytes)",
              Failure::kCorrupt);
}

bool IpcConnection::pumpSends() {
  static constexpr const char* kCopyIn = "cuda ipc send (copy into the peer's ring)";
  bool moved = false, started = false;
  // Start pieces in order, each packed after the last into the peer's ring once its free bytes hold it whole. The
  // pieces started here share one copy batch.
  while (sendNextStart_ < sendPieces_.size()) {
    Piece& p = sendPieces_[sendNextStart_];
    if (p.len > 0) {
      if (p.len > remoteBytes_ - (written_ - credited_)) break;  // waits for credits
      if (!started && !sendBatches_.canRecord()) break;          // waits for a batch to finish
      try {
        copyIntoRing(rings_.remote.data(), remoteBytes_, written_, p.user, p.len);
      } catch (const Error& e) {
        rethrowWithContext(e, kCopyIn);
      }
      p.position = written_;
      written_ += p.len;
      p.batch = sendBatches_.nextNumber();
      p.state = PieceState::kCopying;
      started = true;
    } else {
      p.position = written_;  // empty: announced where the next byte will go
      p.state = PieceState::kReady;
    }
    ++sendNextStart_;
    moved = true;
  }
  if (started) recordBatch(sendBatches_, sendStream_, kCopyIn);
  // Announce pieces in order once their bytes are in the peer's ring (one stream: batches finish in order).
  while (sendNextAnnounce_ < sendNextStart_) {
    Piece& p = sendPieces_[sendNextAnnounce_];
    if (p.state == PieceState::kCopying) {
      if (!batchDone(sendBatches_, p.batch, kCopyIn)) break;
      p.state = PieceState::kReady;
    }
    p.hostId = sendControl(
        IpcControl{kIpcControlMagic, kIpcReady, p.tag, static_cast<uint32_t>(p.len), p.position, p.messageBytes});
    if (p.len > 0) {
      ++creditsOwed_;
      announced_ = p.position + p.len;
    }
    p.state = PieceState::kSent;
    ++sendNextAnnounce_;
    moved = true;
  }
  // A send is complete once its last announcement has left: the peer needs nothing more from this side.
  while (sendNextAnnounce_ > 0 && host_.sendsDone() > sendPieces_.front().hostId) {
    if (sendPieces_.front().last) ++sendsDone_;
    sendPieces_.pop_front();
    --sendNextStart_;
    --sendNextAnnounce_;
    moved = true;
  }
  return moved;
}

void IpcConnection::match(Piece& p, const IpcControl& ready) {
  if (ready.tag != p.tag || ready.messageBytes != p.messageBytes || ready.pieceBytes != p.len) {
    connection_errors::mismatchedMessage(rank_, host_.peer(), ready.messageBytes, ready.tag, p.messageBytes, p.tag,
                                         description_);
  }
  if (ready.position != expectedPosition_) corrupt(ready, "expected position " + std::to_string(expectedPosition_));
  if (p.len == 0) {
    p.state = PieceState::kDone;
    return;
  }
  if (expectedPosition_ + p.len - recvCredited_ > localBytes_) {
    corrupt(ready, "the ring holds " + std::to_string(localBytes_) + " bytes, of which " +
                       std::to_string(expectedPosition_ - recvCredited_) + " were not handed back yet");
  }
  p.position = ready.position;
  expectedPosition_ += p.len;
  p.state = PieceState::kAnnounced;
}

void IpcConnection::takeCredit(const IpcControl& m) {
  if (creditsOwed_ == 0) corrupt(m, "a credit nobody owed");
  if (m.position != credited_) corrupt(m, "expected the credit at position " + std::to_string(credited_));
  if (m.pieceBytes == 0 || m.pieceBytes > announced_ - credited_) {
    corrupt(m, "hands back bytes never announced (" + std::to_string(announced_ - credited_) + " announced)");
  }
  credited_ += m.pieceBytes;
  --creditsOwed_;
}

bool IpcConnection::takeControl() {
  bool moved = false;
  while (!inControl_.empty() && host_.recvsDone() > inControl_.front().hostId) {
    const IpcControl m = inControl_.front().message;
    inControl_.pop_front();
    moved = true;
    if (m.magic != kIpcControlMagic) corrupt(m, "bad magic");
    if (m.kind == kIpcCredit) {
      takeCredit(m);
    } else if (m.kind == kIpcReady) {
      ++readiesReceived_;
      if (recvNextMatch_ < recvPieces_.size()) {
        match(recvPieces_[recvNextMatch_++], m);
      } else {
        earlyReadies_.push_back(m);  // a receive the caller has not posted yet
      }
    } else {
      corrupt(m, "unknown kind");
    }
  }
  return moved;
}

bool IpcConnection::pumpRecvs() {
  static constexpr const char* kCopyOut = "cuda ipc receive (copy out of the ring)";
  bool moved = false, started = false;
  while (!earlyReadies_.empty() && recvNextMatch_ < recvPieces_.size()) {
    match(recvPieces_[recvNextMatch_++], earlyReadies_.front());
    earlyReadies_.pop_front();
    moved = true;
  }
  // Start copies out of the ring for announced pieces, in order; those started here share one copy batch.
  while (recvNextStart_ < recvNextMatch_) {
    Piece& p = recvPieces_[recvNextStart_];
    if (p.state == PieceState::kAnnounced) {
      if (!started && !recvBatches_.canRecord()) break;  // waits for a batch to finish
      try {
        copyOutOfRing(p.user, rings_.local.data(), localBytes_, p.position, p.len);
      } catch (const Error& e) {
        rethrowWithContext(e, kCopyOut);
      }
      p.batch = recvBatches_.nextNumber();
      p.state = PieceState::kCopying;
      started = true;
    }
    ++recvNextStart_;
    moved = true;
  }
  if (started) recordBatch(recvBatches_, recvStream_, kCopyOut);
  // Hand bytes back in order as their copies out finish (one stream: in order).
  while (recvNextCredit_ < recvNextStart_) {
    Piece& p = recvPieces_[recvNextCredit_];
    if (p.state == PieceState::kCopying) {
      if (!batchDone(recvBatches_, p.batch, kCopyOut)) break;
      p.hostId = sendControl(IpcControl{kIpcControlMagic, kIpcCredit, 0, static_cast<uint32_t>(p.len), p.position, 0});
      recvCredited_ = p.position + p.len;
      p.state = PieceState::kCrediting;
    }
    ++recvNextCredit_;
    moved = true;
  }
  // A receive is complete once its bytes are in place and its last credit has left (so the sender gets it
  // without this side's help).
  while (recvNextCredit_ > 0) {
    Piece& p = recvPieces_.front();
    if (p.state == PieceState::kCrediting && host_.sendsDone() > p.hostId) p.state = PieceState::kDone;
    if (p.state != PieceState::kDone) break;
    if (p.last) ++recvsDone_;
    recvPieces_.pop_front();
    --recvNextMatch_;
    --recvNextStart_;
    --recvNextCredit_;
    moved = true;
  }
  return moved;
}

void IpcConnection::postControlReceives() {
  // Only what will arrive: announcements for posted receives not yet announced, and credits owed to us.
  const uint64_t announcements = piecesExpected_ > readiesReceived_ ? piecesExpected_ - readiesReceived_ : 0;
  const uint64_t want = std::min<uint64_t>(announcements + creditsOwed_, kIpcControlWindow);
  while (inControl_.size() < want) {
    inControl_.push_back(PostedControl{IpcControl{}, 0});
    PostedControl& posted = inControl_.back();
    posted.hostId = host_.irecv(&posted.message, sizeof(posted.message), kIpcControlTag);
  }
}

bool IpcConnection::progress() {
  return drainingOnError([this] { return progressRounds(); });
}

bool IpcConnection::progressRounds() {
  bool moved = false;
  for (int round = 0; round < 2; ++round) {
    moved |= takeControl();
    moved |= pumpSends();
    moved |= pumpRecvs();
    postControlReceives();
    while (!outControl_.empty() && host_.sendsDone() > outControl_.front().hostId) outControl_.pop_front();
    // The second round reacts at once to what the host connection moved (credits, announcements, sent credits).
    if (round == 0 && host_.busy()) moved |= host_.progress();
  }
  return moved;
}

}  // namespace chorus
