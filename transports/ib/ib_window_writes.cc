// IbConnection's window puts (WindowRdmaWrites): the window's registration for the peer to write into, and the
// RDMA writes of a put from the caller's buffer straight into the peer's window (ib_connection.h says how their
// immediates stay in order with the messages). The rest of the data path: ib_data_path.cc.
#include <arpa/inet.h>

#include <algorithm>
#include <cerrno>

#include "core/error.h"
#include "transports/ib/ib_connection.h"
#include "transports/ib/ib_wire.h"
#include "transports/tcp/tcp_connection.h"

namespace chorus {

using namespace ib_wire;

void* IbConnection::exposeMemory(void* base, size_t bytes, uint32_t* key) {
  ibv_mr* mr = device_->api().regMr(device_->pd(), base, bytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  if (!mr) verbFailed("ibv_reg_mr (window)", errno);
  exposedWindows_.push_back(mr);
  *key = mr->rkey;
  return mr;
}

void IbConnection::unexposeMemory(void* token) {
  auto it = std::find(exposedWindows_.begin(), exposedWindows_.end(), static_cast<ibv_mr*>(token));
  if (it == exposedWindows_.end()) return;
  exposedWindows_.erase(it);
  const int err = device_->api().deregMr(static_cast<ibv_mr*>(token));
  if (err) verbFailed("ibv_dereg_mr (window)", err);
}

uint64_t IbConnection::iwrite(const void* src, size_t bytes, uint64_t address, uint32_t key,
                              const uint32_t* immediate) {
  if (immediate && *immediate > kMaxImmediate) throwInternal("ib: a window immediate beyond 30 bits");
  const uint64_t id = sendsPosted_++;
  Slice s{static_cast<char*>(const_cast<void*>(src)), bytes, 0, 0, bytes, id, false, false};
  s.window = true;
  s.withImmediate = immediate != nullptr;
  s.immediate = immediate ? *immediate : 0;
  s.remoteKey = key;
  s.remoteAddress = address;
  lanes_[0].sends.push_back(s);
  sendPending_.push_back(1);
  return id;
}

bool IbConnection::peekImmediate(uint32_t* immediate, uint64_t* messagesBefore) const {
  if (windowImmediates_.empty()) return false;
  *immediate = windowImmediates_.front().immediate;
  *messagesBefore = windowImmediates_.front().messagesBefore;
  return true;
}

bool IbConnection::writesInFlight() const {
  for (const Lane& lane : lanes_) {
    if (!lane.posted.empty() || !lane.sends.empty()) return true;
  }
  return false;
}

// The region a put's source lies in: a window this connection exposed (kept until unexposeMemory, which comes
// after the puts from it completed), a cached one (chorusCommRegister's ranges; any buffer with on-demand paging),
// else one registered for this write alone (deregistered at its completion).
RegistrationCache::Handle IbConnection::windowSource(const char* p, size_t n, bool* borrowed) {
  *borrowed = false;
  const auto a = reinterpret_cast<uintptr_t>(p);
  for (ibv_mr* mr : exposedWindows_) {
    const auto begin = reinterpret_cast<uintptr_t>(mr->addr);
    if (begin <= a && a + n <= begin + mr->length) {
      *borrowed = true;
      return RegistrationCache::Handle{mr, 0};
    }
  }
  RegistrationCache& regions = device_->userRegions();
  RegistrationCache::Handle h = device_->pagesOnDemand() ? regions.acquire(p, n) : regions.lookup(p, n);
  if (h.mr) return h;
  ibv_mr* mr = device_->api().regMr(device_->pd(), const_cast<char*>(p), n, IBV_ACCESS_LOCAL_WRITE);
  if (!mr) verbFailed("ibv_reg_mr (window put source)", errno);
  return RegistrationCache::Handle{mr, 0};  // a one-off: the cache's release deregisters it
}

// Posts the next write of the window put at the front of lane.sends: at most the port's largest message, the last
// one with the put's immediate (which first takes its ring credits). False when it has to wait (send queue or
// credits).
bool IbConnection::pushWindowWrite(Lane& lane, uint32_t laneIndex) {
  Slice& s = lane.sends.front();
  const size_t n = static_cast<size_t>(std::min<uint64_t>(device_->maxMessage(), s.len - s.done));
  const bool withImmediate = s.withImmediate && s.done + n == s.len;
  uint64_t pos = lane.writePos;
  if (withImmediate) {
    if (pos % kRing + kMinStride > kRing) pos += kRing - pos % kRing;
    if (pos + kMinStride - lane.freedPos > kRing) return false;
  }
  const bool inlined = n > 0 && n <= maxInline_;
  bool borrowed = false;
  RegistrationCache::Handle region;
  if (n > 0 && !inlined) region = windowSource(s.data + s.done, n, &borrowed);
  ibv_sge sge{reinterpret_cast<uint64_t>(s.data + s.done), static_cast<uint32_t>(n), region.mr ? region.mr->lkey : 0};
  ibv_send_wr wr{};
  wr.wr_id = workId(kDataSend, laneIndex);
  wr.opcode = withImmediate ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
  wr.sg_list = n > 0 ? &sge : nullptr;
  wr.num_sge = n > 0 ? 1 : 0;
  wr.send_flags = IBV_SEND_SIGNALED | (inlined ? IBV_SEND_INLINE : 0);
  wr.imm_data = htonl(kWindowFlag | s.immediate);
  // A zero-byte write (a bare signal) names the peer's ring, as a credit note does: its key is always valid.
  wr.wr.rdma.remote_addr = n > 0 ? s.remoteAddress + s.done : lane.remoteRing;
  wr.wr.rdma.rkey = n > 0 ? s.remoteKey : lane.remoteRkey;
  ibv_send_wr* bad = nullptr;
  const int err = device_->api().postSend(lane.qp, &wr, &bad);
  if (err) {
    if (region.mr && !borrowed) device_->userRegions().release(region);
    verbFailed("ibv_post_send (window write)", err);
  }
  if (withImmediate) lane.writePos = pos + kMinStride;
  ++lane.sendsOutstanding;
  s.done += n;
  // An inlined write frees the caller's buffer at posting; one from a region when it completes.
  PostedChunk c{region, s.msg, false};
  c.borrowed = borrowed;
  lane.posted.push_back(c);
  if (region.mr) ++lane.zeroCopy[s.msg].inFlight;
  if (s.done == s.len) {
    const uint64_t msg = s.msg;
    lane.sends.pop_front();
    auto z = lane.zeroCopy.find(msg);
    if (z != lane.zeroCopy.end() && z->second.inFlight > 0) {
      z->second.allPosted = true;
    } else {
      if (z != lane.zeroCopy.end()) lane.zeroCopy.erase(z);
      TcpConnection::sliceDone(sendPending_, sendsDone_, msg);
    }
  }
  return true;
}

}  // namespace chorus
