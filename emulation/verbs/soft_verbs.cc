// The software verbs device's verbs (soft_verbs.h): each ibv_* call the ib transport makes, checked as an adapter's
// driver checks it, over the fabric of soft_fabric.h, so that the transport runs where there is no RDMA adapter.
#include "emulation/verbs/soft_verbs.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "emulation/verbs/soft_fabric.h"
#include "emulation/verbs/soft_wire.h"

namespace chorus {
namespace soft_verbs {
namespace {

using Lock = std::lock_guard<std::mutex>;

ibv_device* theDevice() {
  static ibv_device device = [] {
    ibv_device d{};
    d.node_type = IBV_NODE_CA;
    d.transport_type = IBV_TRANSPORT_IB;
    std::strncpy(d.name, kDeviceName, sizeof(d.name) - 1);
    std::strncpy(d.dev_name, "uverbs_soft0", sizeof(d.dev_name) - 1);
    return d;
  }();
  return &device;
}

int fail(int err) {
  errno = err;
  return err;
}

ibv_device** getDeviceList(int* count) {
  auto** list = new ibv_device*[2]{theDevice(), nullptr};
  if (count) *count = 1;
  return list;
}
void freeDeviceList(ibv_device** list) { delete[] list; }
const char* getDeviceName(ibv_device* device) { return device->name; }

ibv_context* openDevice(ibv_device* device) {
  if (device != theDevice()) {
    errno = ENODEV;
    return nullptr;
  }
  Fabric::get();  // starts the fabric: its listener and thread
  auto* c = new Context();
  c->context.device = device;
  c->context.cmd_fd = -1;
  c->context.async_fd = eventfd(0, EFD_SEMAPHORE | EFD_CLOEXEC);
  c->context.num_comp_vectors = 1;
  return &c->context;
}

int closeDevice(ibv_context* ctx) {
  auto* c = reinterpret_cast<Context*>(ctx);
  Lock lock(Fabric::get().mu);
  if (c->pds > 0) return fail(EBUSY);
  close(ctx->async_fd);
  delete c;
  return 0;
}

int queryDevice(ibv_context*, ibv_device_attr* attr) {
  std::memset(attr, 0, sizeof(*attr));
  std::strncpy(attr->fw_ver, "chorus-soft-1", sizeof(attr->fw_ver) - 1);
  attr->max_mr_size = uint64_t{1} << 40;
  attr->page_size_cap = 4096;
  attr->vendor_id = 0;
  attr->max_qp = kMaxQp;
  attr->max_qp_wr = kMaxQpWr;
  attr->max_sge = kMaxSge;
  attr->max_cq = 1 << 16;
  attr->max_cqe = kMaxCqe;
  attr->max_mr = 1 << 20;
  attr->max_pd = 1 << 16;
  attr->max_qp_rd_atom = 16;
  attr->max_qp_init_rd_atom = 16;
  attr->phys_port_cnt = 1;
  return 0;
}

int queryDeviceEx(ibv_context* ctx, ibv_device_attr_ex* attr) {
  std::memset(attr, 0, sizeof(*attr));
  queryDevice(ctx, &attr->orig_attr);
  // The fabric reads and writes the process's memory when the transfer happens: on-demand paging, in effect.
  attr->odp_caps.general_caps = IBV_ODP_SUPPORT;
  attr->odp_caps.per_transport_caps.rc_odp_caps = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE;
  return 0;
}

int queryDeviceExWithoutOdp(ibv_context* ctx, ibv_device_attr_ex* attr) {
  std::memset(attr, 0, sizeof(*attr));
  return queryDevice(ctx, &attr->orig_attr);
}

int queryPort(ibv_context*, uint8_t port, ibv_port_attr* attr) {
  if (port != 1) return fail(EINVAL);
  Fabric& f = Fabric::get();
  std::memset(attr, 0, sizeof(*attr));
  attr->state = f.gids.empty() ? IBV_PORT_DOWN : IBV_PORT_ACTIVE;
  attr->phys_state = f.gids.empty() ? 3 : 5;  // disabled / link up
  attr->max_mtu = IBV_MTU_4096;
  attr->active_mtu = IBV_MTU_4096;
  attr->gid_tbl_len = static_cast<int>(f.gids.size());
  attr->port_cap_flags = IBV_PORT_CM_SUP;
  attr->max_msg_sz = kMaxMessage;
  attr->pkey_tbl_len = 1;
  attr->lid = 0;  // RoCE: no LIDs
  attr->active_width = 2;  // 4x
  attr->active_speed = 32;  // 25 Gb/s lanes: "100 Gb/s", nominal only
  attr->link_layer = IBV_LINK_LAYER_ETHERNET;
  return 0;
}

int queryGid(ibv_context*, uint8_t port, int index, ibv_gid* gid) {
  Fabric& f = Fabric::get();
  if (port != 1 || index < 0 || index >= static_cast<int>(f.gids.size())) return fail(EINVAL);
  *gid = f.gids[static_cast<size_t>(index)].gid;
  return 0;
}

int queryGidEx(ibv_context*, uint32_t port, uint32_t index, ibv_gid_entry* entry, uint32_t flags) {
  Fabric& f = Fabric::get();
  if (port != 1 || flags != 0 || index >= f.gids.size()) return fail(EINVAL);
  const GidEntry& g = f.gids[index];
  entry->gid = g.gid;
  entry->gid_index = index;
  entry->port_num = 1;
  entry->gid_type = g.type;
  entry->ndev_ifindex = g.ifindex;
  return 0;
}

ibv_pd* allocPd(ibv_context* ctx) {
  Lock lock(Fabric::get().mu);
  auto* p = new Pd();
  p->pd.context = ctx;
  ++reinterpret_cast<Context*>(ctx)->pds;
  return &p->pd;
}

int deallocPd(ibv_pd* pd) {
  auto* p = reinterpret_cast<Pd*>(pd);
  Lock lock(Fabric::get().mu);
  if (p->users > 0) return fail(EBUSY);
  --reinterpret_cast<Context*>(pd->context)->pds;
  delete p;
  return 0;
}

constexpr int kKnownAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                             IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_ON_DEMAND | IBV_ACCESS_RELAXED_ORDERING;

ibv_mr* regMr(ibv_pd* pd, void* addr, size_t length, int access) {
  // As the verbs require: remote write needs local write; a region of no bytes is refused.
  if ((access & ~kKnownAccess) || ((access & IBV_ACCESS_REMOTE_WRITE) && !(access & IBV_ACCESS_LOCAL_WRITE)) ||
      length == 0 || length > (uint64_t{1} << 40)) {
    errno = EINVAL;
    return nullptr;
  }
  Fabric& f = Fabric::get();
  Lock lock(f.mu);
  auto* m = new Mr();
  m->mr.context = pd->context;
  m->mr.pd = pd;
  m->mr.addr = addr;
  m->mr.length = length;
  m->mr.lkey = m->mr.rkey = f.nextKey++;  // never reused: a stale key finds nothing
  m->access = access;
  f.mrsByKey[m->mr.lkey] = m;
  ++reinterpret_cast<Pd*>(pd)->users;
  return &m->mr;
}

// A dma-buf region: here the emulated device's memfd. The region covers [iova, iova+length) of this process's
// address space (the emulated device memory is mapped there), after checking that the descriptor is a file that
// holds [offset, offset+length).
ibv_mr* regDmabufMr(ibv_pd* pd, uint64_t offset, size_t length, uint64_t iova, int fd, int access) {
  struct stat st {};
  const uint64_t mapped =
      fd < 0 || ::fstat(fd, &st) != 0 ? 0 : (static_cast<uint64_t>(st.st_size) + 4095) / 4096 * 4096;
  if (mapped == 0 || !S_ISREG(st.st_mode) || offset > mapped || length > mapped - offset) {
    errno = EINVAL;
    return nullptr;
  }
  return regMr(pd, reinterpret_cast<void*>(iova), length, access);
}

int deregMr(ibv_mr* mr) {
  auto* m = reinterpret_cast<Mr*>(mr);
  Fabric& f = Fabric::get();
  Lock lock(f.mu);
  f.mrsByKey.erase(mr->lkey);
  --reinterpret_cast<Pd*>(mr->pd)->users;
  delete m;
  return 0;
}

ibv_comp_channel* createCompChannel(ibv_context* ctx) {
  auto* c = new Channel();
  c->channel.context = ctx;
  c->channel.fd = eventfd(0, EFD_SEMAPHORE | EFD_CLOEXEC);
  if (c->channel.fd < 0) {
    delete c;
    return nullptr;
  }
  return &c->channel;
}

int destroyCompChannel(ibv_comp_channel* channel) {
  auto* c = reinterpret_cast<Channel*>(channel);
  Lock lock(Fabric::get().mu);
  if (c->cqs > 0) return fail(EBUSY);
  close(channel->fd);
  delete c;
  return 0;
}

ibv_cq* createCq(ibv_context* ctx, int cqe, void* cqContext, ibv_comp_channel* channel, int vector) {
  if (cqe < 1 || cqe > kMaxCqe || vector != 0) {
    errno = EINVAL;
    return nullptr;
  }
  Lock lock(Fabric::get().mu);
  auto* c = new Cq();
  c->cq.context = ctx;
  c->cq.channel = channel;
  c->cq.cq_context = cqContext;
  c->cq.cqe = cqe;
  c->capacity = cqe;
  c->channel = reinterpret_cast<Channel*>(channel);
  if (c->channel) ++c->channel->cqs;
  return &c->cq;
}

int destroyCq(ibv_cq* cq) {
  auto* c = reinterpret_cast<Cq*>(cq);
  Lock lock(Fabric::get().mu);
  // QPs still attached, or retrieved events not acknowledged (hardware's destroy would wait for those forever).
  if (c->qps > 0 || c->eventsAcked != c->eventsGiven) return fail(EBUSY);
  if (c->channel) {
    // Events raised but never retrieved go with the CQ: out of the channel's queue and its descriptor's count.
    auto& events = c->channel->events;
    for (auto it = events.begin(); it != events.end();) {
      if (*it != c) {
        ++it;
        continue;
      }
      it = events.erase(it);
      uint64_t one;
      const int flags = fcntl(c->channel->channel.fd, F_GETFL);
      fcntl(c->channel->channel.fd, F_SETFL, flags | O_NONBLOCK);
      ssize_t r = read(c->channel->channel.fd, &one, sizeof(one));
      (void)r;
      fcntl(c->channel->channel.fd, F_SETFL, flags);
    }
    --c->channel->cqs;
  }
  delete c;
  return 0;
}

int getCqEvent(ibv_comp_channel* channel, ibv_cq** cq, void** cqContext) {
  uint64_t one;
  if (read(channel->fd, &one, sizeof(one)) != sizeof(one)) return -1;  // errno: EAGAIN where O_NONBLOCK
  auto* c = reinterpret_cast<Channel*>(channel);
  Lock lock(Fabric::get().mu);
  Cq* q = c->events.front();
  c->events.pop_front();
  ++q->eventsGiven;  // retrieved: the consumer must acknowledge it before destroying the CQ
  *cq = &q->cq;
  *cqContext = q->cq.cq_context;
  return 0;
}

void ackCqEvents(ibv_cq* cq, unsigned count) {
  Lock lock(Fabric::get().mu);
  reinterpret_cast<Cq*>(cq)->eventsAcked += count;
}

int reqNotifyCq(ibv_cq* cq, int solicitedOnly) {
  auto* c = reinterpret_cast<Cq*>(cq);
  if (!c->channel) return fail(EINVAL);
  Fabric& f = Fabric::get();
  Lock lock(f.mu);
  // Armed for the next completion; entries already queued do not raise an event (as on hardware: the consumer
  // polls once more after arming).
  c->armed = true;
  return 0;
}

int pollCq(ibv_cq* cq, int n, ibv_wc* wc) {
  auto* c = reinterpret_cast<Cq*>(cq);
  if (c->available.load(std::memory_order_acquire) == 0 && !c->overflowed.load(std::memory_order_acquire)) return 0;
  Fabric& f = Fabric::get();
  Lock lock(f.mu);
  int got = 0;
  while (got < n && !c->entries.empty()) {
    wc[got++] = c->entries.front();
    c->entries.pop_front();
  }
  c->available.fetch_sub(got, std::memory_order_relaxed);
  if (got == 0 && c->overflowed) return -1;  // a CQ that overflowed is broken once drained
  return got;
}

ibv_qp* createQp(ibv_pd* pd, ibv_qp_init_attr* a) {
  const ibv_qp_cap& cap = a->cap;
  if (a->qp_type != IBV_QPT_RC || a->srq || !a->send_cq || !a->recv_cq || cap.max_send_wr < 1 ||
      cap.max_send_wr > kMaxQpWr || cap.max_recv_wr > kMaxQpWr || cap.max_send_sge > kMaxSge ||
      cap.max_recv_sge > kMaxSge || cap.max_inline_data > kMaxInline) {
    errno = EINVAL;
    return nullptr;
  }
  Fabric& f = Fabric::get();
  Lock lock(f.mu);
  uint32_t qpn = f.allocateQpn();
  if (qpn == 0) {
    errno = ENOMEM;
    return nullptr;
  }
  auto* q = new Qp();
  q->qp.context = pd->context;
  q->qp.qp_context = a->qp_context;
  q->qp.pd = pd;
  q->qp.send_cq = a->send_cq;
  q->qp.recv_cq = a->recv_cq;
  q->qp.qp_num = qpn;
  q->qp.state = IBV_QPS_RESET;
  q->qp.qp_type = IBV_QPT_RC;
  q->pd = reinterpret_cast<Pd*>(pd);
  q->sendCq = reinterpret_cast<Cq*>(a->send_cq);
  q->recvCq = reinterpret_cast<Cq*>(a->recv_cq);
  q->sigAll = a->sq_sig_all != 0;
  q->cap = cap;
  ++q->pd->users;
  ++q->sendCq->qps;
  ++q->recvCq->qps;
  f.qps[qpn] = q;
  return &q->qp;
}

// The attributes each RC transition requires and allows (the verbs spec's table, as hardware checks it).
struct Transition {
  ibv_qp_state from, to;
  int required, optional;
};
constexpr int kRtrRequired = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                             IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
constexpr int kRtsRequired = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                             IBV_QP_MAX_QP_RD_ATOMIC;
constexpr Transition kTransitions[] = {
    {IBV_QPS_RESET, IBV_QPS_INIT, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, 0},
    {IBV_QPS_INIT, IBV_QPS_INIT, IBV_QP_STATE, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS},
    {IBV_QPS_INIT, IBV_QPS_RTR, kRtrRequired, IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH},
    {IBV_QPS_RTR, IBV_QPS_RTS, kRtsRequired, IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER | IBV_QP_ALT_PATH},
    {IBV_QPS_RTS, IBV_QPS_RTS, IBV_QP_STATE, IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER},
};

int modifyQp(ibv_qp* qp, ibv_qp_attr* attr, int mask) {
  auto* q = reinterpret_cast<Qp*>(qp);
  Fabric& f = Fabric::get();
  Lock lock(f.mu);
  if (!(mask & IBV_QP_STATE)) {
    // Attribute changes without a state change are the same-state transitions'.
    if (q->state != IBV_QPS_INIT && q->state != IBV_QPS_RTS) return fail(EINVAL);
    attr->qp_state = q->state;
    mask |= IBV_QP_STATE;
  }
  const ibv_qp_state to = attr->qp_state;
  if (to == IBV_QPS_RESET || to == IBV_QPS_ERR) {
    if (mask != IBV_QP_STATE) return fail(EINVAL);
    if (to == IBV_QPS_ERR) {
      f.toError(q, IBV_WC_SUCCESS);
    } else {
      f.dropLinks(q);
      q->sq.clear();
      q->rq.clear();
      q->nextToSend = 0;
      q->sqRetiredPending = 0;
      q->state = IBV_QPS_RESET;
      qp->state = IBV_QPS_RESET;
    }
    return 0;
  }
  const Transition* t = nullptr;
  for (const Transition& c : kTransitions) {
    if (c.from == q->state && c.to == to) t = &c;
  }
  if (!t || (mask & t->required) != t->required || (mask & ~(t->required | t->optional))) return fail(EINVAL);
  if (mask & IBV_QP_PORT) {
    if (attr->port_num != 1) return fail(EINVAL);
    q->port = attr->port_num;
  }
  if ((mask & IBV_QP_PKEY_INDEX) && attr->pkey_index != 0) return fail(EINVAL);
  if (mask & IBV_QP_ACCESS_FLAGS) q->accessFlags = static_cast<int>(attr->qp_access_flags);
  if (to == IBV_QPS_RTR) {
    const ibv_ah_attr& av = attr->ah_attr;
    // RoCE: every address carries a GRH; the source GID must be in the table; no MTU above the port's.
    if (!av.is_global || av.port_num != 1 || av.grh.sgid_index >= f.gids.size() || attr->path_mtu > IBV_MTU_4096 ||
        attr->path_mtu < IBV_MTU_256 || attr->min_rnr_timer > 31 || (attr->dest_qp_num & ~0xffffffu)) {
      return fail(EINVAL);
    }
    // IPv4-mapped GIDs and IPv6 ones are reachable here (soft_fabric.cc dials either); not the unspecified one.
    static const uint8_t kZero[16] = {};
    if (std::memcmp(av.grh.dgid.raw, kZero, 16) == 0) return fail(EINVAL);
    q->av = av;
    q->pathMtu = attr->path_mtu;
    q->destQpn = attr->dest_qp_num;
    q->rqPsn = attr->rq_psn & kPsnMask;
    q->minRnrTimer = attr->min_rnr_timer;
  }
  if (to == IBV_QPS_RTS && q->state == IBV_QPS_RTR) {
    if (attr->timeout > 31 || attr->retry_cnt > 7 || attr->rnr_retry > 7) return fail(EINVAL);
    q->sqPsn = attr->sq_psn & kPsnMask;
    q->nextPsn = q->sqPsn;
    q->timeout = attr->timeout;
    q->retryCnt = attr->retry_cnt;
    q->rnrRetry = attr->rnr_retry;
  }
  if ((mask & IBV_QP_MIN_RNR_TIMER) && to != IBV_QPS_RTR) q->minRnrTimer = attr->min_rnr_timer;
  const bool entersRts = to == IBV_QPS_RTS && q->state == IBV_QPS_RTR;
  q->state = to;
  qp->state = to;
  if (entersRts) f.dial(q);
  f.wake();  // a socket held for this QP's RTR may be bound now
  return 0;
}

int destroyQp(ibv_qp* qp) {
  auto* q = reinterpret_cast<Qp*>(qp);
  Fabric& f = Fabric::get();
  Lock lock(f.mu);
  f.dropLinks(q);
  f.qps.erase(qp->qp_num);
  --q->pd->users;
  --q->sendCq->qps;
  --q->recvCq->qps;
  delete q;
  return 0;
}

int postSend(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
  auto* q = reinterpret_cast<Qp*>(qp);
  Fabric& f = Fabric::get();
  Lock lock(f.mu);
  for (; wr; wr = wr->next) {
    *bad = wr;
    if (q->state != IBV_QPS_RTS && q->state != IBV_QPS_ERR) return fail(EINVAL);
    if (wr->num_sge < 0 || wr->num_sge > static_cast<int>(q->cap.max_send_sge)) return fail(EINVAL);
    if (wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_SEND_WITH_IMM && wr->opcode != IBV_WR_RDMA_WRITE &&
        wr->opcode != IBV_WR_RDMA_WRITE_WITH_IMM) {
      return fail(EINVAL);  // reads and atomics: not emulated
    }
    if (q->sq.size() + q->sqRetiredPending >= q->cap.max_send_wr) return fail(ENOMEM);
    SendWqe w{};
    w.wrId = wr->wr_id;
    w.opcode = wr->opcode;
    w.signaled = (wr->send_flags & IBV_SEND_SIGNALED) != 0;
    w.imm = wr->imm_data;
    w.rkey = wr->wr.rdma.rkey;
    w.remoteAddr = wr->wr.rdma.remote_addr;
    w.rnrRetriesLeft = q->rnrRetry;
    w.badLkey = false;
    uint64_t length = 0;
    for (int i = 0; i < wr->num_sge; ++i) length += wr->sg_list[i].length;
    if (length > kMaxMessage) return fail(EINVAL);
    w.length = length;
    if (wr->send_flags & IBV_SEND_INLINE) {
      if (length > q->cap.max_inline_data) return fail(EINVAL);
      for (int i = 0; i < wr->num_sge; ++i) {
        const char* p = reinterpret_cast<const char*>(wr->sg_list[i].addr);
        w.inlineData.insert(w.inlineData.end(), p, p + wr->sg_list[i].length);
      }
    } else {
      for (int i = 0; i < wr->num_sge; ++i) {
        const ibv_sge& s = wr->sg_list[i];
        auto it = f.mrsByKey.find(s.lkey);
        uint64_t begin = it == f.mrsByKey.end() ? 0 : reinterpret_cast<uint64_t>(it->second->mr.addr);
        if (s.length > 0 &&
            (it == f.mrsByKey.end() || it->second->mr.pd != qp->pd || s.addr < begin ||
             s.addr - begin > it->second->mr.length - std::min<uint64_t>(s.length, it->second->mr.length) ||
             s.length > it->second->mr.length)) {
          w.badLkey = true;
        }
        w.sges.push_back(s);
      }
    }
    if (q->state == IBV_QPS_ERR) {
      ibv_wc wc{};
      wc.wr_id = w.wrId;
      wc.status = IBV_WC_WR_FLUSH_ERR;
      wc.opcode = w.opcode == IBV_WR_SEND || w.opcode == IBV_WR_SEND_WITH_IMM ? IBV_WC_SEND : IBV_WC_RDMA_WRITE;
      wc.qp_num = qp->qp_num;
      f.complete(q->sendCq, wc);
      continue;
    }
    w.psn = q->nextPsn;
    q->nextPsn = (q->nextPsn + 1) & kPsnMask;
    q->sq.push_back(std::move(w));
  }
  *bad = nullptr;
  f.sendNow(q);
  f.wake();
  return 0;
}

int postRecv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  auto* q = reinterpret_cast<Qp*>(qp);
  Fabric& f = Fabric::get();
  Lock lock(f.mu);
  for (; wr; wr = wr->next) {
    *bad = wr;
    if (q->state == IBV_QPS_RESET) return fail(EINVAL);
    if (wr->num_sge < 0 || wr->num_sge > static_cast<int>(q->cap.max_recv_sge)) return fail(EINVAL);
    if (q->rq.size() >= q->cap.max_recv_wr) return fail(ENOMEM);
    RecvWqe w{wr->wr_id, std::vector<ibv_sge>(wr->sg_list, wr->sg_list + wr->num_sge)};
    if (q->state == IBV_QPS_ERR) {
      ibv_wc wc{};
      wc.wr_id = w.wrId;
      wc.status = IBV_WC_WR_FLUSH_ERR;
      wc.opcode = IBV_WC_RECV;
      wc.qp_num = qp->qp_num;
      f.complete(q->recvCq, wc);
      continue;
    }
    q->rq.push_back(std::move(w));
  }
  *bad = nullptr;
  f.wake();  // a request held back for want of a receive (RNR) may go now
  return 0;
}

int getAsyncEvent(ibv_context* ctx, ibv_async_event* event) {
  uint64_t one;
  if (read(ctx->async_fd, &one, sizeof(one)) != sizeof(one)) return -1;
  auto* c = reinterpret_cast<Context*>(ctx);
  Lock lock(Fabric::get().mu);
  *event = c->asyncEvents.front();
  c->asyncEvents.pop_front();
  return 0;
}

void ackAsyncEvent(ibv_async_event*) {}

const char* wcStatusStr(ibv_wc_status status) {
  switch (status) {
    case IBV_WC_SUCCESS: return "success";
    case IBV_WC_LOC_LEN_ERR: return "local length error";
    case IBV_WC_LOC_QP_OP_ERR: return "local QP operation error";
    case IBV_WC_LOC_PROT_ERR: return "local protection error";
    case IBV_WC_WR_FLUSH_ERR: return "Work Request Flushed Error";
    case IBV_WC_REM_INV_REQ_ERR: return "remote invalid request error";
    case IBV_WC_REM_ACCESS_ERR: return "remote access error";
    case IBV_WC_REM_OP_ERR: return "remote operation error";
    case IBV_WC_RETRY_EXC_ERR: return "transport retry counter exceeded";
    case IBV_WC_RNR_RETRY_EXC_ERR: return "RNR retry counter exceeded";
    default: return "unknown";
  }
}

const char* eventTypeStr(ibv_event_type type) {
  switch (type) {
    case IBV_EVENT_CQ_ERR: return "CQ error";
    case IBV_EVENT_QP_FATAL: return "local work queue catastrophic error";
    case IBV_EVENT_QP_ACCESS_ERR: return "local access violation error";
    case IBV_EVENT_PORT_ERR: return "port error";
    default: return "unknown";
  }
}

}  // namespace
}  // namespace soft_verbs

const VerbsApi* softVerbs(bool onDemandPaging) {
  using namespace soft_verbs;
  static const VerbsApi api = {
      "chorus soft verbs", getDeviceList, freeDeviceList, getDeviceName, openDevice, closeDevice, queryDevice,
      queryDeviceEx, queryPort, queryGid, queryGidEx, allocPd, deallocPd, regMr, regDmabufMr, deregMr,
      createCompChannel, destroyCompChannel, createCq, destroyCq, getCqEvent, ackCqEvents, reqNotifyCq, pollCq,
      createQp, modifyQp, destroyQp, postSend, postRecv, getAsyncEvent, ackAsyncEvent, wcStatusStr, eventTypeStr,
  };
  static const VerbsApi withoutOdp = [] {
    VerbsApi a = api;
    a.queryDeviceEx = queryDeviceExWithoutOdp;
    return a;
  }();
  return onDemandPaging ? &api : &withoutOdp;
}

}  // namespace chorus
