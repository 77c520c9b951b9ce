#include "transports/ib/ib_connection.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/error.h"
#include "transports/connection_errors.h"
#include "transports/tcp/tcp_connection.h"

namespace chorus {
namespace {

constexpr size_t kRing = IbConnection::kRingBytes;
constexpr uint32_t kCreditFlag = 0x80000000u;
constexpr uint32_t kUnit = 64;  // immediates count ring bytes in these units
constexpr uint32_t kRecvWqes = 2 * IbConnection::kMaxChunksInFlight;
constexpr uint32_t kInfoMagic = 0x31424943;  // "CIB1"

struct ChunkHeader {
  uint32_t tag;
  uint32_t bytes;
  uint64_t msgBytes;
};
static_assert(sizeof(ChunkHeader) == 16);

enum WorkKind : uint64_t { kDataSend = 1, kCreditSend = 2, kReceive = 3 };
uint64_t workId(WorkKind kind, uint32_t lane) { return (static_cast<uint64_t>(kind) << 32) | lane; }
WorkKind kindOf(uint64_t id) { return static_cast<WorkKind>(id >> 32); }
uint32_t laneOf(uint64_t id) { return static_cast<uint32_t>(id); }

// What one side tells the other: its address, and per lane its QP and ring.
struct InfoHeader {
  uint32_t magic;
  uint32_t lanes;
  uint32_t mtu;
  uint32_t psn;
  uint16_t lid;
  uint8_t ethernet;
  uint8_t pad[5];
  uint8_t gid[16];
};
struct InfoLane {
  uint32_t qpn;
  uint32_t rkey;
  uint64_t ring;
};

// The ring bytes a chunk of `payload` bytes takes.
uint64_t strideOf(uint64_t payload) {
  uint64_t bytes = (16 + payload + kUnit - 1) / kUnit * kUnit;
  return std::max<uint64_t>(bytes, IbConnection::kMinStride);
}

}  // namespace

IbConnection::IbConnection(int rank, int peer, std::shared_ptr<IbDevice> device, const IbQpSettings& settings,
                           std::unique_ptr<Connection> oob)
    : rank_(rank), peer_(peer), device_(std::move(device)), settings_(settings), oob_(std::move(oob)) {
  const VerbsApi& v = device_->api();
  description_ = "ib " + device_->describe() + (settings_.lanes > 1 ? " x" + std::to_string(settings_.lanes) : "");
  try {
    readyFd_ = eventfd(1, EFD_CLOEXEC);
    if (readyFd_ < 0) verbFailed("eventfd", errno);
    channel_ = v.createCompChannel(device_->context());
    if (!channel_) verbFailed("ibv_create_comp_channel", errno);
    int flags = fcntl(channel_->fd, F_GETFL);
    if (flags < 0 || fcntl(channel_->fd, F_SETFL, flags | O_NONBLOCK) != 0) verbFailed("fcntl(O_NONBLOCK)", errno);
    maxSendWr_ = kMaxChunksInFlight + 8;
    const int cqe = settings_.lanes * static_cast<int>(maxSendWr_ + kRecvWqes) + 8;
    cq_ = v.createCq(device_->context(), cqe, this, channel_, 0);
    if (!cq_) verbFailed("ibv_create_cq", errno);
    memoryBytes_ = static_cast<size_t>(settings_.lanes) * 2 * kRing;
    void* m = mmap(nullptr, memoryBytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) verbFailed("mmap", errno);
    memory_ = static_cast<char*>(m);
    mr_ = v.regMr(device_->pd(), memory_, memoryBytes_, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (!mr_) verbFailed("ibv_reg_mr", errno);
    psn_ = static_cast<uint32_t>(std::chrono::steady_clock::now().time_since_epoch().count() ^ (rank * 7919 + peer)) &
           0xffffff;
    lanes_.resize(static_cast<size_t>(settings_.lanes));
    for (uint32_t i = 0; i < lanes_.size(); ++i) {
      Lane& lane = lanes_[i];
      lane.ring = memory_ + (2 * i) * kRing;
      lane.stage = memory_ + (2 * i + 1) * kRing;
      ibv_qp_init_attr a{};
      a.qp_context = this;
      a.send_cq = a.recv_cq = cq_;
      a.qp_type = IBV_QPT_RC;
      a.cap.max_send_wr = maxSendWr_;
      a.cap.max_recv_wr = kRecvWqes;
      a.cap.max_send_sge = 2;  // a chunk's header from staging, its payload from the caller's buffer
      a.cap.max_recv_sge = 1;
      a.cap.max_inline_data = 64;
      lane.qp = v.createQp(device_->pd(), &a);
      if (!lane.qp) {
        a.cap.max_inline_data = 0;  // a device without inline sends
        lane.qp = v.createQp(device_->pd(), &a);
      }
      if (!lane.qp) verbFailed("ibv_create_qp", errno);
      maxInline_ = a.cap.max_inline_data;
      ibv_qp_attr init{};
      init.qp_state = IBV_QPS_INIT;
      init.port_num = static_cast<uint8_t>(device_->port());
      init.pkey_index = 0;
      init.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
      int err = v.modifyQp(lane.qp, &init, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
      if (err) verbFailed("ibv_modify_qp(INIT)", err);
      for (uint32_t r = 0; r < kRecvWqes; ++r) postReceive(lane, i);
    }
  } catch (...) {
    release();
    throw;
  }
}

IbConnection::~IbConnection() { release(); }

void IbConnection::release() {
  if (!device_) return;
  const VerbsApi& v = device_->api();
  for (Lane& lane : lanes_) {
    if (lane.qp) v.destroyQp(lane.qp);
    lane.qp = nullptr;
    for (const PostedChunk& c : lane.posted) {
      if (c.region.mr) (c.device ? device_->deviceRegions() : device_->userRegions()).release(c.region);
    }
    lane.posted.clear();
  }
  if (cq_) {
    if (eventsUnacked_) v.ackCqEvents(cq_, eventsUnacked_);
    v.destroyCq(cq_);
    cq_ = nullptr;
  }
  if (channel_) v.destroyCompChannel(channel_);
  channel_ = nullptr;
  if (mr_) v.deregMr(mr_);
  mr_ = nullptr;
  if (memory_) munmap(memory_, memoryBytes_);
  memory_ = nullptr;
  if (readyFd_ >= 0) close(readyFd_);
  readyFd_ = -1;
  device_.reset();
}

void IbConnection::verbFailed(const char* verb, int err) const {
  throw Error(chorusSystemError, "rank " + std::to_string(rank_) + ": ib connection to rank " + std::to_string(peer_) +
                                     " on " + device_->describe() + ": " + verb + " failed: " + std::strerror(err));
}

void IbConnection::postReceive(Lane& lane, uint32_t laneIndex) {
  ibv_recv_wr wr{};
  wr.wr_id = workId(kReceive, laneIndex);
  wr.num_sge = 0;  // writes with immediate carry their data to the ring; the receive only takes the immediate
  ibv_recv_wr* bad = nullptr;
  int err = device_->api().postRecv(lane.qp, &wr, &bad);
  if (err) verbFailed("ibv_post_recv", err);
}

std::vector<char> IbConnection::localInfo() const {
  InfoHeader h{};
  h.magic = kInfoMagic;
  h.lanes = static_cast<uint32_t>(lanes_.size());
  h.mtu = static_cast<uint32_t>(device_->activeMtu());
  h.psn = psn_;
  h.lid = device_->lid();
  h.ethernet = device_->isEthernet() ? 1 : 0;
  std::memcpy(h.gid, device_->gid().raw, 16);
  std::vector<char> out(reinterpret_cast<char*>(&h), reinterpret_cast<char*>(&h) + sizeof(h));
  for (const Lane& lane : lanes_) {
    InfoLane l{lane.qp->qp_num, mr_->rkey, reinterpret_cast<uint64_t>(lane.ring)};
    out.insert(out.end(), reinterpret_cast<char*>(&l), reinterpret_cast<char*>(&l) + sizeof(l));
  }
  return out;
}

void IbConnection::readyToReceive(const std::vector<char>& peerInfo) {
  InfoHeader h{};
  if (peerInfo.size() >= sizeof(h)) std::memcpy(&h, peerInfo.data(), sizeof(h));
  if (h.magic != kInfoMagic || peerInfo.size() != sizeof(h) + h.lanes * sizeof(InfoLane)) {
    connection_errors::corrupt(rank_, peer_, description_, "its queue pair description is malformed");
  }
  if (h.lanes != lanes_.size() || (h.ethernet != 0) != device_->isEthernet()) {
    throw Error(chorusInvalidUsage, "rank " + std::to_string(rank_) + ": ib: rank " + std::to_string(peer_) + " has " +
                                        std::to_string(h.lanes) + " queue pairs per peer on a" +
                                        (h.ethernet ? " RoCE" : "n InfiniBand") + " port, this rank " +
                                        std::to_string(lanes_.size()) + " on " + device_->describe() +
                                        ": CHORUS_IB_QPS_PER_PEER and the fabric must agree");
  }
  const VerbsApi& v = device_->api();
  for (uint32_t i = 0; i < lanes_.size(); ++i) {
    InfoLane l;
    std::memcpy(&l, peerInfo.data() + sizeof(h) + i * sizeof(l), sizeof(l));
    Lane& lane = lanes_[i];
    lane.remoteRing = l.ring;
    lane.remoteRkey = l.rkey;
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = static_cast<ibv_mtu>(std::min<uint32_t>(h.mtu, device_->activeMtu()));
    a.dest_qp_num = l.qpn;
    a.rq_psn = h.psn;
    a.max_dest_rd_atomic = 1;
    a.min_rnr_timer = 12;  // 0.64 ms; never needed: receives stay posted
    a.ah_attr.port_num = static_cast<uint8_t>(device_->port());
    if (device_->isEthernet()) {
      a.ah_attr.is_global = 1;
      std::memcpy(a.ah_attr.grh.dgid.raw, h.gid, 16);
      a.ah_attr.grh.sgid_index = static_cast<uint8_t>(device_->gidIndex());
      a.ah_attr.grh.hop_limit = 255;
    } else {
      a.ah_attr.dlid = h.lid;
    }
    int err = v.modifyQp(lane.qp, &a,
                         IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                             IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    if (err) verbFailed("ibv_modify_qp(RTR)", err);
  }
}

void IbConnection::readyToSend() {
  const VerbsApi& v = device_->api();
  for (Lane& lane : lanes_) {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = psn_;
    a.timeout = static_cast<uint8_t>(settings_.timeout);
    a.retry_cnt = static_cast<uint8_t>(settings_.retryCnt);
    a.rnr_retry = 7;
    a.max_rd_atomic = 1;
    int err = v.modifyQp(lane.qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                          IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
    if (err) verbFailed("ibv_modify_qp(RTS)", err);
  }
}

void IbConnection::sliceDone(std::deque<uint32_t>& pending, uint64_t& done, uint64_t msg) {
  size_t idx = static_cast<size_t>(msg - done);
  --pending[idx];
  while (!pending.empty() && pending.front() == 0) {
    pending.pop_front();
    ++done;
  }
}

void IbConnection::post(bool isSend, char* buf, size_t bytes, uint32_t tag, uint64_t msg, bool device) {
  uint32_t slices = 0;
  for (size_t i = 0; i < lanes_.size(); ++i) {
    size_t b, e;
    TcpConnection::stripe(bytes, lanes_.size(), i, &b, &e);
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
        sliceDone(sendPending_, sendsDone_, msg);
      }
    }
  }
  return moved;
}

bool IbConnection::drainArrivals(Lane& lane) {
  bool moved = false;
  while (!lane.arrived.empty() && !lane.recvs.empty()) {
    const Arrival a = lane.arrived.front();
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
      sliceDone(recvPending_, recvsDone_, msg);
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

void IbConnection::failed(const ibv_wc& wc) {
  // The peer may have said why first (an abandon note, or its process is gone): that is the better error.
  oob_->checkAlive();
  const VerbsApi& v = device_->api();
  const char* what = kindOf(wc.wr_id) == kReceive ? "receive" : "RDMA write";
  char vendor[16];
  std::snprintf(vendor, sizeof(vendor), "0x%x", wc.vendor_err);
  const std::string text = std::string(what) + " on " + device_->describe() + " completed with \"" +
                           v.wcStatusStr(wc.status) + "\" (status " + std::to_string(wc.status) + ", vendor error " +
                           vendor + ")";
  if (wc.status == IBV_WC_RETRY_EXC_ERR || wc.status == IBV_WC_RNR_RETRY_EXC_ERR || wc.status == IBV_WC_WR_FLUSH_ERR) {
    connection_errors::peerLost(rank_, peer_, description_, text + ": the peer's port, process or queue pair is gone");
  }
  throw Error(chorusRemoteError,
              "rank " + std::to_string(rank_) + ": ib connection to rank " + std::to_string(peer_) + ": " + text,
              Failure::kRemoteError);
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
        (c.device ? device_->deviceRegions() : device_->userRegions()).release(c.region);
        auto z = lane.zeroCopy.find(c.msg);
        if (--z->second.inFlight == 0 && z->second.allPosted) {
          lane.zeroCopy.erase(z);
          sliceDone(sendPending_, sendsDone_, c.msg);
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
  // Completion-channel events only wake a sleeper; consume them so the channel's descriptor quiets down.
  ibv_cq* evCq;
  void* evCtx;
  while (v.getCqEvent(channel_, &evCq, &evCtx) == 0) {
    if (++eventsUnacked_ >= 64) {
      v.ackCqEvents(cq_, eventsUnacked_);
      eventsUnacked_ = 0;
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
  ibv_wc wcs[16];
  int n = v.pollCq(cq_, 16, wcs);
  if (n > 0) stash_.insert(stash_.end(), wcs, wcs + n);
  if (!stash_.empty() || n < 0) fds.push_back(pollfd{readyFd_, POLLIN, 0});
  fds.push_back(pollfd{channel_->fd, POLLIN, 0});
}

bool IbConnection::peekIncomingTag(uint32_t* tag) {
  Lane& lane = lanes_[0];
  // Messages start on lane 0: with no receive posted there, its next full slot begins the next message.
  if (lane.arrived.empty() || !lane.recvs.empty()) return false;
  ChunkHeader h;
  std::memcpy(&h, lane.ring + lane.arrived.front().begin % kRing, sizeof(h));
  *tag = h.tag;
  return true;
}

void IbConnection::closeGracefully() {
  if (busy() || abandoned_) return;
  // Sent bytes may still sit in staging, unacknowledged: destroying the queue pairs would drop them. Wait for
  // their completions (the peer's adapter answers without its process's help), a bounded while.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  try {
    for (;;) {
      bool outstanding = false;
      for (const Lane& lane : lanes_) outstanding |= lane.sendsOutstanding > 0;
      if (!outstanding || std::chrono::steady_clock::now() > until) break;
      if (!progress()) {
        std::vector<pollfd> fds;
        addPollFds(fds);
        ::poll(fds.data(), fds.size(), 10);
      }
    }
  } catch (const Error&) {
    return;  // the peer is gone or gave up: no goodbye to say
  }
  oob_->closeGracefully();
}

void* IbConnection::registerMemory(const void* p, size_t bytes) {
  RegistrationCache::Handle h = device_->userRegions().acquire(p, bytes);
  if (!h.mr) verbFailed("ibv_reg_mr (chorusCommRegister)", errno);
  return new RegistrationCache::Handle(h);
}

void IbConnection::deregisterMemory(void* token) {
  auto* h = static_cast<RegistrationCache::Handle*>(token);
  if (!h) return;
  RegistrationCache& regions = device_->userRegions();
  const void* addr = h->mr->addr;
  const size_t length = h->mr->length;
  regions.release(*h);
  delete h;
  // Without on-demand paging the caller may free the memory now: no region of it may outlive this.
  if (!device_->pagesOnDemand()) regions.invalidate(addr, length);
}

void IbConnection::abandon(int lostPeer) {
  if (abandoned_) return;
  abandoned_ = true;
  oob_->abandon(lostPeer);
  for (Lane& lane : lanes_) lane.sends.clear();
}

}  // namespace chorus
