// The software verbs device enforces the rules hardware enforces (docs/ib.md): each test shows one. Two QPs of
// this process talk through the device's fabric (over loopback), as two processes' would.
#ifdef CHORUS_HAVE_VERBS
#include <gtest/gtest.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "emulation/verbs/soft_verbs.h"

namespace chorus::test {
namespace {

const VerbsApi& V() { return *softVerbs(); }

// The index of the first RoCE v2 GID (the loopback's or any interface's: all reach this process).
int v2GidIndex(ibv_context* ctx) {
  ibv_port_attr port;
  V().queryPort(ctx, 1, &port);
  for (int i = 0; i < port.gid_tbl_len; ++i) {
    ibv_gid_entry e{};
    if (V().queryGidEx(ctx, 1, static_cast<uint32_t>(i), &e, 0) == 0 && e.gid_type == IBV_GID_TYPE_ROCE_V2) return i;
  }
  return -1;
}

struct QpOptions {
  uint32_t maxSendWr = 16, maxRecvWr = 16, maxInline = 64;
  int cqe = 64;
  int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  uint8_t rnrRetry = 7, minRnrTimer = 1;
};

// Two RC QPs connected to each other, each with its own CQ (with a completion channel).
class SoftPair {
 public:
  explicit SoftPair(QpOptions o = {}) : o_(o) {
    int n = 0;
    ibv_device** list = V().getDeviceList(&n);
    ctx = V().openDevice(list[0]);
    V().freeDeviceList(list);
    pd = V().allocPd(ctx);
    for (int i = 0; i < 2; ++i) {
      channel[i] = V().createCompChannel(ctx);
      cq[i] = V().createCq(ctx, o.cqe, nullptr, channel[i], 0);
      ibv_qp_init_attr a{};
      a.send_cq = a.recv_cq = cq[i];
      a.qp_type = IBV_QPT_RC;
      a.cap.max_send_wr = o.maxSendWr;
      a.cap.max_recv_wr = o.maxRecvWr;
      a.cap.max_send_sge = a.cap.max_recv_sge = 1;
      a.cap.max_inline_data = o.maxInline;
      qp[i] = V().createQp(pd, &a);
    }
    gidIndex = v2GidIndex(ctx);
  }
  ~SoftPair() {
    for (int i = 0; i < 2; ++i) {
      if (qp[i]) V().destroyQp(qp[i]);
      if (cq[i]) V().destroyCq(cq[i]);
      V().destroyCompChannel(channel[i]);
    }
    for (ibv_mr* m : mrs) V().deregMr(m);
    V().deallocPd(pd);
    V().closeDevice(ctx);
  }
  int toInit(int i) {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_INIT;
    a.port_num = 1;
    a.qp_access_flags = static_cast<unsigned>(o_.access);
    return V().modifyQp(qp[i], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
  }
  ibv_qp_attr rtrAttr(int i) {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = IBV_MTU_1024;
    a.dest_qp_num = qp[1 - i]->qp_num;
    a.rq_psn = 100;
    a.max_dest_rd_atomic = 1;
    a.min_rnr_timer = o_.minRnrTimer;
    a.ah_attr.is_global = 1;
    a.ah_attr.port_num = 1;
    a.ah_attr.grh.sgid_index = static_cast<uint8_t>(gidIndex);
    a.ah_attr.grh.hop_limit = 1;
    V().queryGid(ctx, 1, gidIndex, &a.ah_attr.grh.dgid);
    return a;
  }
  static constexpr int kRtrMask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
  int toRtr(int i) {
    ibv_qp_attr a = rtrAttr(i);
    return V().modifyQp(qp[i], &a, kRtrMask);
  }
  int toRts(int i) {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = 100;
    a.timeout = 14;
    a.retry_cnt = 7;
    a.rnr_retry = o_.rnrRetry;
    a.max_rd_atomic = 1;
    return V().modifyQp(qp[i], &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                       IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
  }
  void connect() {
    for (int i = 0; i < 2; ++i) ASSERT_EQ(toInit(i), 0);
    for (int i = 0; i < 2; ++i) ASSERT_EQ(toRtr(i), 0);
    for (int i = 0; i < 2; ++i) ASSERT_EQ(toRts(i), 0);
  }
  ibv_mr* reg(void* p, size_t n, int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) {
    ibv_mr* m = V().regMr(pd, p, n, access);
    if (m) mrs.push_back(m);
    return m;
  }
  int postRecv(int i, uint64_t id, void* p, uint32_t n, uint32_t lkey) {
    ibv_sge s{reinterpret_cast<uint64_t>(p), n, lkey};
    ibv_recv_wr wr{};
    wr.wr_id = id;
    wr.sg_list = &s;
    wr.num_sge = p ? 1 : 0;
    ibv_recv_wr* bad = nullptr;
    return V().postRecv(qp[i], &wr, &bad);
  }
  int post(int i, uint64_t id, ibv_wr_opcode op, const void* p, uint32_t n, uint32_t lkey,
           unsigned flags = IBV_SEND_SIGNALED, uint64_t raddr = 0, uint32_t rkey = 0, uint32_t imm = 0) {
    ibv_sge s{reinterpret_cast<uint64_t>(p), n, lkey};
    ibv_send_wr wr{};
    wr.wr_id = id;
    wr.opcode = op;
    wr.sg_list = &s;
    wr.num_sge = 1;
    wr.send_flags = flags;
    wr.imm_data = imm;
    wr.wr.rdma.remote_addr = raddr;
    wr.wr.rdma.rkey = rkey;
    ibv_send_wr* bad = nullptr;
    return V().postSend(qp[i], &wr, &bad);
  }
  // Polls cq[i] until n completions arrived or 10 s passed.
  std::vector<ibv_wc> await(int i, size_t n) {
    std::vector<ibv_wc> got;
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (got.size() < n && std::chrono::steady_clock::now() < until) {
      ibv_wc wc[8];
      int r = V().pollCq(cq[i], 8, wc);
      if (r < 0) break;
      got.insert(got.end(), wc, wc + r);
      if (r == 0) std::this_thread::yield();
    }
    return got;
  }

  QpOptions o_;
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_comp_channel* channel[2] = {};
  ibv_cq* cq[2] = {};
  ibv_qp* qp[2] = {};
  int gidIndex = -1;
  std::vector<ibv_mr*> mrs;
};

TEST(SoftVerbsTest, OneRoceDeviceWithAnActivePortAndV2Gids) {
  int n = 0;
  ibv_device** list = V().getDeviceList(&n);
  ASSERT_EQ(n, 1);
  EXPECT_STREQ(V().getDeviceName(list[0]), "chorus_soft0");
  ibv_context* ctx = V().openDevice(list[0]);
  V().freeDeviceList(list);
  ibv_port_attr port;
  ASSERT_EQ(V().queryPort(ctx, 1, &port), 0);
  EXPECT_EQ(port.state, IBV_PORT_ACTIVE);
  EXPECT_EQ(port.link_layer, IBV_LINK_LAYER_ETHERNET);
  EXPECT_EQ(port.active_mtu, IBV_MTU_4096);
  EXPECT_NE(V().queryPort(ctx, 2, &port), 0);
  int v2 = v2GidIndex(ctx);
  ASSERT_GE(v2, 0);
  ibv_gid_entry e{};
  ASSERT_EQ(V().queryGidEx(ctx, 1, static_cast<uint32_t>(v2), &e, 0), 0);
  EXPECT_GT(e.ndev_ifindex, 0u);
  EXPECT_EQ(e.gid.raw[10], 0xff);  // IPv4-mapped
  EXPECT_EQ(V().closeDevice(ctx), 0);
}

TEST(SoftVerbsTest, WrongTransitionsAndMissingAttributesFail) {
  SoftPair p;
  ibv_qp_attr a = p.rtrAttr(0);
  EXPECT_EQ(V().modifyQp(p.qp[0], &a, SoftPair::kRtrMask), EINVAL);  // RESET -> RTR
  EXPECT_EQ(p.toRts(0), EINVAL);                                        // RESET -> RTS
  ibv_qp_attr init{};
  init.qp_state = IBV_QPS_INIT;
  init.port_num = 1;
  EXPECT_EQ(V().modifyQp(p.qp[0], &init, IBV_QP_STATE | IBV_QP_PORT), EINVAL);  // access flags, pkey missing
  ASSERT_EQ(p.toInit(0), 0);
  EXPECT_EQ(p.toRts(0), EINVAL);  // INIT -> RTS
  a = p.rtrAttr(0);
  EXPECT_EQ(V().modifyQp(p.qp[0], &a, SoftPair::kRtrMask & ~IBV_QP_RQ_PSN), EINVAL);     // a required one missing
  EXPECT_EQ(V().modifyQp(p.qp[0], &a, SoftPair::kRtrMask | IBV_QP_SQ_PSN), EINVAL);      // one RTR does not take
  a.ah_attr.is_global = 0;
  EXPECT_EQ(V().modifyQp(p.qp[0], &a, SoftPair::kRtrMask), EINVAL);  // RoCE needs a GRH
  a = p.rtrAttr(0);
  a.path_mtu = static_cast<ibv_mtu>(6);  // above the port's 4096
  EXPECT_EQ(V().modifyQp(p.qp[0], &a, SoftPair::kRtrMask), EINVAL);
  ASSERT_EQ(p.toRtr(0), 0);
  ASSERT_EQ(p.toRts(0), 0);
  EXPECT_EQ(p.toRtr(0), EINVAL);  // RTS -> RTR
  ibv_qp_attr reset{};
  reset.qp_state = IBV_QPS_RESET;
  EXPECT_EQ(V().modifyQp(p.qp[0], &reset, IBV_QP_STATE), 0);  // anything -> RESET
  EXPECT_EQ(p.toInit(0), 0);
}

TEST(SoftVerbsTest, PostsBeforeTheirStateFail) {
  SoftPair p;
  char buf[64];
  ibv_mr* mr = p.reg(buf, sizeof(buf));
  EXPECT_EQ(p.postRecv(0, 1, buf, 64, mr->lkey), EINVAL);  // RESET
  ASSERT_EQ(p.toInit(0), 0);
  EXPECT_EQ(p.postRecv(0, 1, buf, 64, mr->lkey), 0);  // INIT takes receives
  EXPECT_EQ(p.post(0, 2, IBV_WR_SEND, buf, 8, mr->lkey), EINVAL);  // but not sends
  ASSERT_EQ(p.toRtr(0), 0);
  EXPECT_EQ(p.post(0, 2, IBV_WR_SEND, buf, 8, mr->lkey), EINVAL);  // nor does RTR
}

TEST(SoftVerbsTest, QueueLimitsAreEnforced) {
  QpOptions o;
  o.maxSendWr = 4;
  o.maxRecvWr = 2;
  o.maxInline = 32;
  // Registered memory outlives the QPs: the writes posted last may still be landing when the test returns
  // (destroying the QPs stops them; freeing memory they target first is the application's bug, as on hardware).
  std::vector<char> buf(4096);
  SoftPair p(o);
  ibv_qp_init_attr big{};
  big.send_cq = big.recv_cq = p.cq[0];
  big.qp_type = IBV_QPT_RC;
  big.cap.max_send_wr = 4;
  big.cap.max_send_sge = 5;  // over the device's 4
  EXPECT_EQ(V().createQp(p.pd, &big), nullptr);
  big.cap.max_send_sge = 1;
  big.cap.max_inline_data = 1024;  // over 256
  EXPECT_EQ(V().createQp(p.pd, &big), nullptr);
  p.connect();
  ibv_mr* mr = p.reg(buf.data(), buf.size());
  EXPECT_EQ(p.postRecv(1, 1, buf.data(), 64, mr->lkey), 0);
  EXPECT_EQ(p.postRecv(1, 2, buf.data(), 64, mr->lkey), 0);
  EXPECT_EQ(p.postRecv(1, 3, buf.data(), 64, mr->lkey), ENOMEM);  // max_recv_wr 2
  EXPECT_EQ(p.post(0, 1, IBV_WR_SEND, buf.data(), 33, mr->lkey, IBV_SEND_SIGNALED | IBV_SEND_INLINE), EINVAL);
  ibv_sge two[2] = {{reinterpret_cast<uint64_t>(buf.data()), 8, mr->lkey},
                    {reinterpret_cast<uint64_t>(buf.data()), 8, mr->lkey}};
  ibv_send_wr wr{};
  wr.opcode = IBV_WR_SEND;
  wr.sg_list = two;
  wr.num_sge = 2;  // max_send_sge 1
  ibv_send_wr* bad = nullptr;
  EXPECT_EQ(V().postSend(p.qp[0], &wr, &bad), EINVAL);
  EXPECT_EQ(bad, &wr);
  // Unsignaled writes hold their send-queue slots until a later signaled one completes.
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(p.post(0, 10 + i, IBV_WR_RDMA_WRITE, buf.data(), 8, mr->lkey, 0,
                     reinterpret_cast<uint64_t>(buf.data()) + 1024, mr->rkey), 0);
  }
  EXPECT_EQ(p.post(0, 20, IBV_WR_RDMA_WRITE, buf.data(), 8, mr->lkey, IBV_SEND_SIGNALED,
                   reinterpret_cast<uint64_t>(buf.data()) + 1024, mr->rkey), ENOMEM);
}

TEST(SoftVerbsTest, SendsAndWritesWithImmediateArriveInOrder) {
  SoftPair p;
  p.connect();
  std::vector<char> src(1 << 20), dst(1 << 20), small(64, 0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<char>(i * 7);
  ibv_mr* s = p.reg(src.data(), src.size());
  ibv_mr* d = p.reg(dst.data(), dst.size());
  ibv_mr* m = p.reg(small.data(), small.size());
  ASSERT_EQ(p.postRecv(1, 1, nullptr, 0, 0), 0);  // for the write with immediate
  ASSERT_EQ(p.postRecv(1, 2, small.data(), 64, m->lkey), 0);
  ASSERT_EQ(p.post(0, 1, IBV_WR_RDMA_WRITE_WITH_IMM, src.data(), static_cast<uint32_t>(src.size()), s->lkey,
                   IBV_SEND_SIGNALED, reinterpret_cast<uint64_t>(dst.data()), d->rkey, 0x12345678), 0);
  ASSERT_EQ(p.post(0, 2, IBV_WR_SEND, "hello", 6, 0, IBV_SEND_SIGNALED | IBV_SEND_INLINE), 0);
  auto sent = p.await(0, 2);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].wr_id, 1u);
  EXPECT_EQ(sent[0].opcode, IBV_WC_RDMA_WRITE);
  EXPECT_EQ(sent[1].wr_id, 2u);
  EXPECT_EQ(sent[1].status, IBV_WC_SUCCESS);
  auto got = p.await(1, 2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].wr_id, 1u);
  EXPECT_EQ(got[0].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  EXPECT_EQ(got[0].imm_data, 0x12345678u);
  EXPECT_EQ(got[0].byte_len, src.size());
  EXPECT_EQ(got[1].wr_id, 2u);
  EXPECT_EQ(got[1].opcode, IBV_WC_RECV);
  EXPECT_EQ(got[1].byte_len, 6u);
  EXPECT_STREQ(small.data(), "hello");
  EXPECT_EQ(dst, src);
}

// The requester's completion says remote access error and its QP fails; the responder's QP fails too (its
// receives flush) with an asynchronous access error.
void expectRemoteAccessError(SoftPair& p, uint64_t raddr, uint32_t rkey, const std::vector<char>& buf, uint32_t lkey) {
  ASSERT_EQ(p.postRecv(1, 7, nullptr, 0, 0), 0);
  ASSERT_EQ(p.post(0, 1, IBV_WR_RDMA_WRITE, buf.data(), 64, lkey, IBV_SEND_SIGNALED, raddr, rkey), 0);
  ASSERT_EQ(p.post(0, 2, IBV_WR_RDMA_WRITE, buf.data(), 64, lkey, IBV_SEND_SIGNALED, raddr, rkey), 0);
  auto sent = p.await(0, 2);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].status, IBV_WC_REM_ACCESS_ERR) << V().wcStatusStr(sent[0].status);
  EXPECT_EQ(sent[1].status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(p.qp[0]->state, IBV_QPS_ERR);
  auto flushed = p.await(1, 1);
  ASSERT_EQ(flushed.size(), 1u);
  EXPECT_EQ(flushed[0].status, IBV_WC_WR_FLUSH_ERR);
  ibv_async_event ev;
  ASSERT_EQ(V().getAsyncEvent(p.ctx, &ev), 0);
  EXPECT_EQ(ev.event_type, IBV_EVENT_QP_ACCESS_ERR);
  EXPECT_EQ(ev.element.qp, p.qp[1]);
  V().ackAsyncEvent(&ev);
  // A QP in error flushes what is posted to it.
  ASSERT_EQ(p.post(0, 3, IBV_WR_RDMA_WRITE, buf.data(), 64, lkey, IBV_SEND_SIGNALED, raddr, rkey), 0);
  auto after = p.await(0, 1);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].status, IBV_WC_WR_FLUSH_ERR);
}

TEST(SoftVerbsTest, WriteOutsideTheRegionIsARemoteAccessError) {
  SoftPair p;
  p.connect();
  std::vector<char> buf(4096);
  ibv_mr* mr = p.reg(buf.data(), 1024);
  expectRemoteAccessError(p, reinterpret_cast<uint64_t>(buf.data()) + 1000, mr->rkey, buf, mr->lkey);  // 1000+64 > 1024
}

TEST(SoftVerbsTest, DeregisteredRegionIsNoLongerWritable) {
  SoftPair p;
  p.connect();
  std::vector<char> buf(4096), target(4096);
  ibv_mr* mr = p.reg(buf.data(), buf.size());
  ibv_mr* gone = V().regMr(p.pd, target.data(), target.size(), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  uint32_t staleKey = gone->rkey;
  ASSERT_EQ(V().deregMr(gone), 0);
  // A new region of the same memory gets a new key: the stale one stays dead.
  ibv_mr* again = p.reg(target.data(), target.size());
  EXPECT_NE(again->rkey, staleKey);
  expectRemoteAccessError(p, reinterpret_cast<uint64_t>(target.data()), staleKey, buf, mr->lkey);
}

TEST(SoftVerbsTest, RegionWithoutRemoteWriteRefusesWrites) {
  SoftPair p;
  p.connect();
  std::vector<char> buf(4096), target(4096);
  ibv_mr* mr = p.reg(buf.data(), buf.size());
  ibv_mr* local = p.reg(target.data(), target.size(), IBV_ACCESS_LOCAL_WRITE);
  expectRemoteAccessError(p, reinterpret_cast<uint64_t>(target.data()), local->rkey, buf, mr->lkey);
}

TEST(SoftVerbsTest, BadLocalKeyIsALocalProtectionError) {
  SoftPair p;
  p.connect();
  std::vector<char> buf(4096);
  ibv_mr* mr = p.reg(buf.data(), 1024);
  ASSERT_EQ(p.post(0, 1, IBV_WR_RDMA_WRITE, buf.data() + 1000, 100, mr->lkey, IBV_SEND_SIGNALED,
                   reinterpret_cast<uint64_t>(buf.data()), mr->rkey), 0);
  auto sent = p.await(0, 1);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].status, IBV_WC_LOC_PROT_ERR);
  EXPECT_EQ(p.qp[0]->state, IBV_QPS_ERR);
}

TEST(SoftVerbsTest, SendWithoutReceiveIsRetriedUntilOneIsPosted) {
  SoftPair p;  // rnr_retry 7: retried for ever
  p.connect();
  std::vector<char> buf(64);
  ibv_mr* mr = p.reg(buf.data(), buf.size());
  ASSERT_EQ(p.post(0, 1, IBV_WR_SEND, "late", 5, 0, IBV_SEND_SIGNALED | IBV_SEND_INLINE), 0);
  ASSERT_EQ(p.post(0, 2, IBV_WR_SEND, "later", 6, 0, IBV_SEND_SIGNALED | IBV_SEND_INLINE), 0);
  ibv_wc wc;
  // Nothing completes while no receive is posted (the responder answers receiver-not-ready).
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
  while (std::chrono::steady_clock::now() < until) ASSERT_EQ(V().pollCq(p.cq[0], 1, &wc), 0);
  ASSERT_EQ(p.postRecv(1, 1, buf.data(), 32, mr->lkey), 0);
  ASSERT_EQ(p.postRecv(1, 2, buf.data() + 32, 32, mr->lkey), 0);
  auto sent = p.await(0, 2);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(sent[1].status, IBV_WC_SUCCESS);
  EXPECT_STREQ(buf.data(), "late");
  EXPECT_STREQ(buf.data() + 32, "later");
}

TEST(SoftVerbsTest, ReceiverNotReadyRetriesRunOut) {
  QpOptions o;
  o.rnrRetry = 2;
  SoftPair p(o);
  p.connect();
  ASSERT_EQ(p.post(0, 1, IBV_WR_SEND, "x", 2, 0, IBV_SEND_SIGNALED | IBV_SEND_INLINE), 0);
  auto sent = p.await(0, 1);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].status, IBV_WC_RNR_RETRY_EXC_ERR) << V().wcStatusStr(sent[0].status);
  EXPECT_EQ(p.qp[0]->state, IBV_QPS_ERR);
}

TEST(SoftVerbsTest, CompletionQueueOverflowsWhenNotPolled) {
  QpOptions o;
  o.cqe = 2;
  SoftPair p(o);
  p.connect();
  std::vector<char> buf(4096);
  ibv_mr* mr = p.reg(buf.data(), buf.size());
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(p.post(0, static_cast<uint64_t>(i), IBV_WR_RDMA_WRITE, buf.data(), 8, mr->lkey, IBV_SEND_SIGNALED,
                     reinterpret_cast<uint64_t>(buf.data()) + 2048, mr->rkey), 0);
  }
  ibv_async_event ev;
  ASSERT_EQ(V().getAsyncEvent(p.ctx, &ev), 0);  // blocks until the overflow
  EXPECT_EQ(ev.event_type, IBV_EVENT_CQ_ERR);
  EXPECT_EQ(ev.element.cq, p.cq[0]);
  V().ackAsyncEvent(&ev);
  EXPECT_EQ(p.qp[0]->state, IBV_QPS_ERR);
  ibv_wc wc[4];
  EXPECT_EQ(V().pollCq(p.cq[0], 4, wc), 2);
  EXPECT_LT(V().pollCq(p.cq[0], 4, wc), 0);
}

TEST(SoftVerbsTest, PeerQpThatGoesAwayFailsOutstandingWork) {
  SoftPair p;
  p.connect();
  std::vector<char> buf(4096);
  ibv_mr* mr = p.reg(buf.data(), buf.size());
  ASSERT_EQ(V().destroyQp(p.qp[1]), 0);
  p.qp[1] = nullptr;
  ASSERT_EQ(p.post(0, 1, IBV_WR_RDMA_WRITE, buf.data(), 64, mr->lkey, IBV_SEND_SIGNALED,
                   reinterpret_cast<uint64_t>(buf.data()) + 1024, mr->rkey), 0);
  ASSERT_EQ(p.post(0, 2, IBV_WR_RDMA_WRITE, buf.data(), 64, mr->lkey, IBV_SEND_SIGNALED,
                   reinterpret_cast<uint64_t>(buf.data()) + 1024, mr->rkey), 0);
  auto sent = p.await(0, 2);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].status, IBV_WC_RETRY_EXC_ERR) << V().wcStatusStr(sent[0].status);
  EXPECT_EQ(sent[1].status, IBV_WC_WR_FLUSH_ERR);
}

TEST(SoftVerbsTest, DmaBufRegionsNeedAFileThatHoldsTheRange) {
  SoftPair p;
  const int fd = memfd_create("soft-verbs-dmabuf-test", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 8192), 0);
  void* mapped = mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  const uint64_t iova = reinterpret_cast<uint64_t>(mapped);
  EXPECT_EQ(V().regDmabufMr(p.pd, 0, 4096, iova, -1, IBV_ACCESS_LOCAL_WRITE), nullptr);        // no descriptor
  EXPECT_EQ(V().regDmabufMr(p.pd, 4096, 8192, iova, fd, IBV_ACCESS_LOCAL_WRITE), nullptr);     // past its end
  ibv_mr* mr = V().regDmabufMr(p.pd, 0, 8192, iova, fd, IBV_ACCESS_LOCAL_WRITE);
  ASSERT_NE(mr, nullptr);
  EXPECT_EQ(mr->addr, mapped);
  EXPECT_EQ(V().deregMr(mr), 0);
  munmap(mapped, 8192);
  close(fd);
}

TEST(SoftVerbsTest, CompletionChannelWakesAnArmedQueue) {
  SoftPair p;
  p.connect();
  std::vector<char> buf(4096);
  ibv_mr* mr = p.reg(buf.data(), buf.size());
  int flags = fcntl(p.channel[0]->fd, F_GETFL);
  ASSERT_EQ(fcntl(p.channel[0]->fd, F_SETFL, flags | O_NONBLOCK), 0);
  ibv_cq* cq = nullptr;
  void* ctx = nullptr;
  EXPECT_NE(V().getCqEvent(p.channel[0], &cq, &ctx), 0);  // nothing armed, nothing yet
  EXPECT_EQ(errno, EAGAIN);
  ASSERT_EQ(V().reqNotifyCq(p.cq[0], 0), 0);
  ASSERT_EQ(p.post(0, 1, IBV_WR_RDMA_WRITE, buf.data(), 64, mr->lkey, IBV_SEND_SIGNALED,
                   reinterpret_cast<uint64_t>(buf.data()) + 1024, mr->rkey), 0);
  pollfd pfd{p.channel[0]->fd, POLLIN, 0};
  ASSERT_EQ(poll(&pfd, 1, 10000), 1);
  ASSERT_EQ(V().getCqEvent(p.channel[0], &cq, &ctx), 0);
  EXPECT_EQ(cq, p.cq[0]);
  EXPECT_EQ(p.await(0, 1).size(), 1u);
  ASSERT_EQ(V().destroyQp(p.qp[0]), 0);
  p.qp[0] = nullptr;
  EXPECT_EQ(V().destroyCq(p.cq[0]), EBUSY);  // a retrieved event not acknowledged
  V().ackCqEvents(cq, 1);
}

// Events raised but never retrieved do not hold a CQ back: they go with it.
TEST(SoftVerbsTest, UnreadEventsGoWithTheirQueue) {
  SoftPair p;
  p.connect();
  std::vector<char> buf(4096);
  ibv_mr* mr = p.reg(buf.data(), buf.size());
  ASSERT_EQ(V().reqNotifyCq(p.cq[0], 0), 0);
  ASSERT_EQ(p.post(0, 1, IBV_WR_RDMA_WRITE, buf.data(), 64, mr->lkey, IBV_SEND_SIGNALED,
                   reinterpret_cast<uint64_t>(buf.data()) + 1024, mr->rkey), 0);
  pollfd pfd{p.channel[0]->fd, POLLIN, 0};
  ASSERT_EQ(poll(&pfd, 1, 10000), 1);  // raised, not read
  ASSERT_EQ(V().destroyQp(p.qp[0]), 0);
  p.qp[0] = nullptr;
  ASSERT_EQ(V().destroyCq(p.cq[0]), 0);
  p.cq[0] = nullptr;
  EXPECT_EQ(poll(&pfd, 1, 0), 0);  // its count went with it
}

}  // namespace
}  // namespace chorus::test
#endif  // CHORUS_HAVE_VERBS
