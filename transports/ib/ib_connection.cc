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
#include "transports/ib/ib_wire.h"
#include "transports/tcp/tcp_connection.h"

namespace chorus {

using namespace ib_wire;

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
      if (c.region.mr && !c.borrowed) (c.device ? device_->deviceRegions() : device_->userRegions()).release(c.region);
    }
    lane.posted.clear();
  }
  if (cq_) {
    ibv_cq* evCq;
    void* evCtx;
    while (channel_ && v.getCqEvent(channel_, &evCq, &evCtx) == 0) ++eventsUnacked_;  // the channel is non-blocking
    if (eventsUnacked_) v.ackCqEvents(cq_, eventsUnacked_);
    v.destroyCq(cq_);
    cq_ = nullptr;
  }
  if (channel_) v.destroyCompChannel(channel_);
  channel_ = nullptr;
  for (ibv_mr* mr : exposedWindows_) v.deregMr(mr);
  exposedWindows_.clear();
  if (mr_) v.deregMr(mr_);
  mr_ = nullptr;
  if (memory_) munmap(memory_, memoryBytes_);
  memory_ = nullptr;
  if (readyFd_ >= 0) close(readyFd_);
  readyFd_ = -1;
  device_.reset();
}

void IbConnection::verbFailed(const char* verb, int err) const {
  throw Error(chorusSystemError, errorContext(rank_, peer_, "ib connection on " + device_->describe()) + ": " + verb +
                                     " failed: " + std::strerror(err));
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
    throw Error(chorusInvalidUsage, errorContext(rank_, peer_, "ib") + ": the peer has " + std::to_string(h.lanes) +
                                        " queue pairs per peer on a" + (h.ethernet ? " RoCE" : "n InfiniBand") +
                                        " port, this rank " + std::to_string(lanes_.size()) + " on " +
                                        device_->describe() + ": CHORUS_IB_QPS_PER_PEER and the fabric must agree");
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
  throw Error(chorusRemoteError, errorContext(rank_, peer_, "ib connection") + ": " + text, Failure::kRemoteError);
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
