#include "transports/ib/ib_connection.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "transports/connection_errors.h"
#include "transports/ib/ib_wire.h"
#include "transports/tcp/stripe_cuts.h"
#include "transports/tcp/tcp_connection.h"

// The data path of IbConnection: posting, chunks into the peer's ring, arrivals out of this side's, credits, and
// the completions that drive them (setup, teardown and failures: ib_connection.cc).
namespace chorus {

using namespace ib_wire;

void IbConnection::post(bool isSend, char* buf, size_t bytes, uint32_t tag, uint64_t msg, bool device) {
  uint32_t slices = 0;
  for (size_t i = 0; i < lanes_.size(); ++i) {
    size_t b, e;
    StripeCuts::evenCut(bytes, lanes_.size(), i, &b, &e);
    if (e == b && i > 0) continue;  // an empty message travels on lane 0 alone
    Slice s{buf + b, e - b, 0, tag, bytes, msg, false, device};
    (isSend ? lanes_[i].sends : lanes_[i].recvs).push_back(s);
    ++slices;
  }
  (isSend ? sendPending_ : recvPending_).push_back(slices);
}

uint64_t IbConnection::isend(const void* buf, size_t bytes, uint32_t tag) {
  uint64_t id = sendsPosted_++;
  post(true, static_cast<char*>(const_cast<void*>(buf)), bytes, tag, id);
  return id;
}

uint64_t IbConnection::isendDevice(const void* buf, size_t bytes, uint32_t tag) {
  if (!device_->directDeviceApi()) throwInternal("ib: isendDevice without dma-buf registration");
  uint64_t id = sendsPosted_++;
  post(true, static_cast<char*>(const_cast<void*>(buf)), bytes, tag, id, true);
  return id;
}

uint64_t IbConnection::irecv(void* buf, size_t bytes, uint32_t tag) {
  uint64_t id = recvsPosted_++;
  post(false, static_cast<char*>(buf), bytes, tag, id);
  return id;
}

bool IbConnection::pushSends(Lane& lane, uint32_t laneIndex) {
  bool moved = false;
  while (!lane.sends.empty()) {
    // A few send slots stay free for credits: a receiver that cannot return them would stall its peer.
    if (lane.sendsOutstanding + 4 >= maxSendWr_) break;
    if (lane.sends.front().window) {
      if (!pushWindowWrite(lane, laneIndex)) break;
      moved = true;
      continue;
    }
    Slice& s = lane.sends.front();
    const size_t n = std::min(kChunkBytes, s.len - s.done);
    const uint64_t stride = strideOf(n);
    uint64_t pos = lane.writePos;
    if (pos % kRing + stride > kRing) pos += kRing - pos % kRing;  // no room before the end: start over at 0
    if (pos + stride - lane.freedPos > kRing) break;                // the peer has not freed that much yet
    const uint64_t offset = pos % kRing;
    char* st = lane.stage + offset;
    ChunkHeader h{s.tag, static_cast<uint32_t>(n), s.msgBytes};
    std::memcpy(st, &h, sizeof(h));
    // Large chunks go straight from the caller's buffer where its registration is cached; else through staging.
    RegistrationCache::Handle region;
    if (s.device && n > 0) {
      region = device_->deviceRegions().acquire(s.data + s.done, n);
      if (!region.mr) verbFailed("ibv_reg_dmabuf_mr (device buffer)", errno);
    } else if (n >= kZeroCopyMinBytes) {
      RegistrationCache& regions = device_->userRegions();
      region = device_->pagesOnDemand() ? regions.acquire(s.data + s.done, n) : regions.lookup(s.data + s.done, n);
    }
    ibv_sge sge[2];
    sge[0] = ibv_sge{reinterpret_cast<uint64_t>(st), static_cast<uint32_t>(sizeof(h)), mr_->lkey};
    if (region.mr) {
      sge[1] = ibv_sge{reinterpret_cast<uint64_t>(s.data + s.done), static_cast<uint32_t>(n), region.mr->lkey};
    } else {
      if (n > 0) std::memcpy(st + sizeof(h), s.data + s.done, n);  // an empty message may have no buffer
      sge[0].length += static_cast<uint32_t>(n);
    }
    const int nsge = region.mr ? 2 : 1;
    ibv_send_wr wr{};
    wr.wr_id = workId(kDataSend, laneIndex);
    wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr.sg_list = sge;
    wr.num_sge = nsge;
    wr.send_flags = IBV_SEND_SIGNALED | (nsge == 1 && sge[0].length <= maxInline_ ? IBV_SEND_INLINE : 0);
    wr.imm_data = htonl(static_cast<uint32_t>(offset / kUnit));
    wr.wr.rdma.remote_addr = lane.remoteRing + offset;
    wr.wr.rdma.rkey = lane.remoteRkey;
    ibv_send_wr* bad = nullptr;
    int err = device_->api().postSend(lane.qp, &wr, &bad);
    if (err) {
      if (region.mr) (s.device ? device_->deviceRegions() : device_->userRegions()).release(region);
      verbFailed("ibv_post_send", err);
    }
    lane.writePos = pos + stride;
    ++lane.sendsOutstanding;
    s.done += n;
    moved = true;
    // A copied chunk frees the caller's buffer at once; a zero-copy one when its write completes.
    lane.posted.push_back(PostedChunk{region, s.msg, s.device});
    if (region.mr) ++lane.zeroCopy[s.msg].inFlight;
    if (s.done == s.len) {
      const uint64_t msg = s.msg;
      lane.sends.pop_front();
      auto z = lane.zeroCopy.find(msg);
      if (z != lane.zeroCopy.end() && z->second.inFlight > 0) {
        z->second.allPosted = true;  // the last zero-copy write's completion completes it
      } else {
        if (z != lane.zeroCopy.end()) lane.zeroCopy.erase(z);  // its writes completed while later chunks waited
        TcpConnection::sliceDone(sendPending_, sendsDone_, msg);
      }
    }
  }
  return moved;
}

bool IbConnection::drainArrivals(Lane& lane) {
  bool moved = false;
  while (!lane.arrived.empty()) {
    const Arrival a = lane.arrived.front();
    if (a.window) {
      // Every chunk before it is consumed: the window channel raises its signal once it has landed those messages.
      windowImmediates_.push_back(WindowImmediate{a.immediate, lane0SlicesDone_});
      lane.arrived.pop_front();
      lane.consumedPos = a.end;
      moved = true;
      continue;
    }
    if (lane.recvs.empty()) break;
    const char* chunk = lane.ring + a.begin % kRing;
    ChunkHeader h;
    std::memcpy(&h, chunk, sizeof(h));
    Slice& s = lane.recvs.front();
    if (h.tag != s.tag || h.msgBytes != s.msgBytes) {
      connection_errors::mismatchedMessage(rank_, peer_, h.msgBytes, h.tag, s.msgBytes, s.tag, description_);
    }
    if (h.bytes > s.len - s.done) {
      connection_errors::corrupt(rank_, peer_, description_,
                                 "a chunk of " + std::to_string(h.bytes) + " bytes overruns its message");
    }
    if (h.bytes > 0) std::memcpy(s.data + s.done, chunk + sizeof(h), h.bytes);
    s.done += h.bytes;
    lane.arrived.pop_front();
    lane.consumedPos = a.end;
    moved = true;
    if (s.done == s.len) {
      const uint64_t msg = s.msg;
      lane.recvs.pop_front();
      if (&lane == &lanes_[0]) ++lane0SlicesDone_;
      TcpConnection::sliceDone(recvPending_, recvsDone_, msg);
    }
  }
  return moved;
}

void IbConnection::returnCredits(Lane& lane, uint32_t laneIndex) {
  const uint64_t owed = lane.consumedPos - lane.creditedPos;
  // One credit note in flight at a time, unless a quarter of the ring waits: batches under load, prompt when idle.
  if (owed == 0 || lane.sendsOutstanding >= maxSendWr_) return;
  if (lane.creditSendsOutstanding > 0 && owed < kRing / 4) return;
  ibv_send_wr wr{};
  wr.wr_id = workId(kCreditSend, laneIndex);
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.num_sge = 0;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.imm_data = htonl(kCreditFlag | static_cast<uint32_t>(owed / kUnit));
  wr.wr.rdma.remote_addr = lane.remoteRing;
  wr.wr.rdma.rkey = lane.remoteRkey;
  ibv_send_wr* bad = nullptr;
  int err = device_->api().postSend(lane.qp, &wr, &bad);
  if (err) verbFailed("ibv_post_send", err);
  ++lane.sendsOutstanding;
  ++lane.creditSendsOutstanding;
  lane.creditedPos = lane.consumedPos;
}

void IbConnection::handle(const ibv_wc& wc) {
  const uint32_t laneIndex = laneOf(wc.wr_id);
  if (laneIndex >= lanes_.size()) connection_errors::corrupt(rank_, peer_, description_, "a completion of no lane");
  Lane& lane = lanes_[laneIndex];
  if (wc.status != IBV_WC_SUCCESS) {
    // A credit note, or a receive flushed after one failed, loses nothing by itself: a peer that closed after its
    // last send completed has taken its queue pairs down while this side was still returning credits. It is an
    // error only if traffic with the peer is still expected (progress checks).
    const bool quiet = kindOf(wc.wr_id) == kCreditSend ||
                       (kindOf(wc.wr_id) == kReceive && wc.status == IBV_WC_WR_FLUSH_ERR && brokenBy_);
    if (!quiet) failed(wc);
    if (!brokenBy_) broken_ = wc;
    brokenBy_ = true;
    if (kindOf(wc.wr_id) == kCreditSend) {
      --lane.sendsOutstanding;
      --lane.creditSendsOutstanding;
    }
    return;
  }
  switch (kindOf(wc.wr_id)) {
    case kDataSend: {
      --lane.sendsOutstanding;
      const PostedChunk c = lane.posted.front();
      lane.posted.pop_front();
      if (c.region.mr) {
        if (!c.borrowed) (c.device ? device_->deviceRegions() : device_->userRegions()).release(c.region);
        auto z = lane.zeroCopy.find(c.msg);
        if (--z->second.inFlight == 0 && z->second.allPosted) {
          lane.zeroCopy.erase(z);
          TcpConnection::sliceDone(sendPending_, sendsDone_, c.msg);
        }
      }
      break;
    }
    case kCreditSend:
      --lane.sendsOutstanding;
      --lane.creditSendsOutstanding;
      break;
    case kReceive: {
      const uint32_t imm = ntohl(wc.imm_data);
      if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM || !(wc.wc_flags & IBV_WC_WITH_IMM)) {
        connection_errors::corrupt(rank_, peer_, description_, "a receive without an immediate");
      }
      if (imm & kCreditFlag) {
        const uint64_t freed = static_cast<uint64_t>(imm & ~kCreditFlag) * kUnit;
        if (freed == 0 || lane.freedPos + freed > lane.writePos) {
          connection_errors::corrupt(rank_, peer_, description_, "credits for ring bytes never written");
        }
        lane.freedPos += freed;
      } else if (imm & kWindowFlag) {
        // A window put's last write: its bytes are in the window; it takes ring credits as the sender reserved them.
        if (laneIndex != 0) connection_errors::corrupt(rank_, peer_, description_, "a window write off lane 0");
        uint64_t begin = lane.arrivalPos;
        if (begin % kRing + kMinStride > kRing) begin += kRing - begin % kRing;
        lane.arrived.push_back(Arrival{begin, begin + kMinStride, true, imm & ~kWindowFlag});
        lane.arrivalPos = begin + kMinStride;
      } else {
        uint64_t begin = lane.arrivalPos;
        const uint64_t offset = static_cast<uint64_t>(imm) * kUnit;
        if (offset != begin % kRing && offset == 0) begin += kRing - begin % kRing;  // the sender started over
        if (offset != begin % kRing || offset + kMinStride > kRing) {
          connection_errors::corrupt(rank_, peer_, description_,
                                     "a chunk at ring offset " + std::to_string(offset) + " where " +
                                         std::to_string(begin % kRing) + " was next");
        }
        ChunkHeader h;
        std::memcpy(&h, lane.ring + offset, sizeof(h));
        if (h.bytes > kChunkBytes || offset + strideOf(h.bytes) > kRing) {
          connection_errors::corrupt(rank_, peer_, description_, "a chunk that overruns the ring");
        }
        lane.arrived.push_back(Arrival{begin, begin + strideOf(h.bytes)});
        lane.arrivalPos = begin + strideOf(h.bytes);
      }
      postReceive(lane, laneIndex);
      break;
    }
    default:
      connection_errors::corrupt(rank_, peer_, description_, "a completion of unknown work");
  }
}

bool IbConnection::progress() {
  const VerbsApi& v = device_->api();
  bool moved = false;
  // Completion-channel events only wake a sleeper; consume them so the channel's descriptor quiets down. Only a
  // queue armed before a sleep raises one: a spinning caller pays no read of the channel per round.
  if (armed_) {
    armed_ = false;  // an event raised later keeps the descriptor readable: the next sleep wakes and drains it
    ibv_cq* evCq;
    void* evCtx;
    while (v.getCqEvent(channel_, &evCq, &evCtx) == 0) {
      if (++eventsUnacked_ >= 64) {
        v.ackCqEvents(cq_, eventsUnacked_);
        eventsUnacked_ = 0;
      }
    }
  }
  if (!stash_.empty()) {
    std::vector<ibv_wc> stashed;
    stashed.swap(stash_);
    for (const ibv_wc& wc : stashed) handle(wc);
    moved = true;
  }
  for (;;) {
    ibv_wc wcs[16];
    int n = v.pollCq(cq_, 16, wcs);
    if (n < 0) verbFailed("ibv_poll_cq", EIO);
    for (int i = 0; i < n; ++i) handle(wcs[i]);
    moved |= n > 0;
    if (n < 16) break;
  }
  for (uint32_t i = 0; i < lanes_.size(); ++i) {
    moved |= drainArrivals(lanes_[i]);
    if (brokenBy_) continue;
    moved |= pushSends(lanes_[i], i);
    returnCredits(lanes_[i], i);
  }
  if (brokenBy_) {
    for (const Lane& lane : lanes_) {
      if (!lane.sends.empty() || (!lane.recvs.empty() && lane.arrived.empty())) failed(broken_);
    }
  }
  return moved;
}

void IbConnection::addPollFds(std::vector<pollfd>& fds) const {
  // Arm the queue, then look once more: a completion that came before arming raises no event.
  const VerbsApi& v = device_->api();
  v.reqNotifyCq(cq_, 0);
  armed_ = true;
  ibv_wc wcs[16];
  int n = v.pollCq(cq_, 16, wcs);
  if (n > 0) stash_.insert(stash_.end(), wcs, wcs + n);
  if (!stash_.empty() || n < 0) fds.push_back(pollfd{readyFd_, POLLIN, 0});
  fds.push_back(pollfd{channel_->fd, POLLIN, 0});
}

bool IbConnection::peekIncomingTag(uint32_t* tag) {
  Lane& lane = lanes_[0];
  // Messages start on lane 0: with no receive posted there, its next full slot begins the next message.
  if (lane.arrived.empty() || !lane.recvs.empty() || lane.arrived.front().window) return false;
  ChunkHeader h;
  std::memcpy(&h, lane.ring + lane.arrived.front().begin % kRing, sizeof(h));
  *tag = h.tag;
  return true;
}

}  // namespace chorus
