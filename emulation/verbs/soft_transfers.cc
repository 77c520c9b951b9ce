// The software verbs device's requests and acknowledgements (soft_fabric.h): what an RDMA adapter checks and
// answers for each transfer, emulated so that the ib transport meets the same rules where there is no adapter.
#include "emulation/verbs/soft_fabric.h"

#include <cstring>

#include "emulation/verbs/soft_wire.h"

// The software device's protocol over one connected QP pair's socket: the requester queues requests and reads
// acknowledgements (ACK, RNR/access/invalid/sequence NAKs); the responder checks each request against its QP,
// regions and posted receives, places the payload and answers. The fabric (soft_fabric.cc) moves the bytes.
namespace chorus::soft_verbs {
namespace {

// IB's RNR timer encoding (min_rnr_timer 0..31) in seconds; 0 means the longest, 655.36 ms.
double rnrDelaySeconds(uint8_t code) {
  static const double kMs[32] = {655.36, 0.01, 0.02, 0.03, 0.04, 0.06, 0.08, 0.12, 0.16, 0.24, 0.32,
                                 0.48,   0.64, 0.96, 1.28, 1.92, 2.56, 3.84, 5.12, 7.68, 10.24, 15.36,
                                 20.48,  30.72, 40.96, 61.44, 81.92, 122.88, 163.84, 245.76, 327.68, 491.52};
  return kMs[code & 31] / 1000.0;
}

}  // namespace

void Fabric::sendAck(Link* l, uint8_t op, uint32_t psn, uint8_t extra) {
  Ack a{};
  a.op = op;
  a.extra = extra;
  a.psn = psn;
  l->queueCopy(&a, sizeof(a));
}

namespace {
// True when [addr, addr+len) lies in a valid region of `pd` that grants `access`.
bool regionAllows(const std::map<uint32_t, Mr*>& mrs, uint32_t key, const ibv_pd* pd, uint64_t addr, uint64_t len,
                  int access) {
  auto it = mrs.find(key);
  if (it == mrs.end()) return false;
  const Mr* mr = it->second;
  uint64_t begin = reinterpret_cast<uint64_t>(mr->mr.addr);
  if (mr->mr.pd != pd || (mr->access & access) != access) return false;
  return addr >= begin && len <= mr->mr.length && addr - begin <= mr->mr.length - len;
}
}  // namespace

void Fabric::responderHeader(Link* l) {
  Qp* qp = l->qp;
  Request rq;
  std::memcpy(&rq, l->head.data(), sizeof(rq));
  Link::Current& cur = l->current;
  cur = Link::Current{};
  cur.active = true;
  cur.op = rq.op;
  cur.psn = rq.psn;
  cur.imm = rq.imm;
  cur.length = rq.length;
  cur.discard = true;
  l->payloadLeft = rq.length;
  l->scatter.clear();
  auto finishEmpty = [&] {
    if (l->payloadLeft == 0) responderPayloadDone(l);
  };
  if (l->discarding && rq.psn != l->expectedPsn) return finishEmpty();  // go-back-N: drop until the resend
  l->discarding = false;
  if (rq.psn != l->expectedPsn) {
    sendAck(l, kNakSeq, rq.psn);
    l->discarding = true;
    return finishEmpty();
  }
  const bool needsRecv = rq.op == kSend || rq.op == kSendImm || rq.op == kWriteImm;
  if (needsRecv && qp->rq.empty()) {
    sendAck(l, kNakRnr, rq.psn, qp->minRnrTimer);
    l->discarding = true;
    return finishEmpty();
  }
  if (rq.op == kWrite || rq.op == kWriteImm) {
    if (!(qp->accessFlags & IBV_ACCESS_REMOTE_WRITE) ||
        !regionAllows(mrsByKey, rq.rkey, &qp->pd->pd, rq.remoteAddr, rq.length, IBV_ACCESS_REMOTE_WRITE)) {
      sendAck(l, kNakAccess, rq.psn);
      ibv_async_event ev{};
      ev.event_type = IBV_EVENT_QP_ACCESS_ERR;
      ev.element.qp = &qp->qp;
      raiseAsync(qp->qp.context, ev);
      l->discarding = true;
      toError(qp, IBV_WC_SUCCESS);  // the responder's receives flush
      return finishEmpty();
    }
    if (rq.op == kWriteImm) {
      cur.hasRecv = true;
      cur.recv = std::move(qp->rq.front());
      qp->rq.pop_front();
    }
    if (rq.length > 0) l->scatter.push_back(ibv_sge{rq.remoteAddr, static_cast<uint32_t>(rq.length), rq.rkey});
    cur.discard = false;
    return finishEmpty();
  }
  // A send: scattered over the receive's entries, each checked as the HCA checks them.
  cur.hasRecv = true;
  cur.recv = std::move(qp->rq.front());
  qp->rq.pop_front();
  uint64_t room = 0;
  bool keysHold = true;
  for (const ibv_sge& s : cur.recv.sges) {
    room += s.length;
    if (s.length > 0 && !regionAllows(mrsByKey, s.lkey, &qp->pd->pd, s.addr, s.length, IBV_ACCESS_LOCAL_WRITE)) {
      keysHold = false;
    }
  }
  if (!keysHold || room < rq.length) {
    ibv_wc wc{};
    wc.wr_id = cur.recv.wrId;
    wc.status = keysHold ? IBV_WC_LOC_LEN_ERR : IBV_WC_LOC_PROT_ERR;
    wc.opcode = IBV_WC_RECV;
    wc.qp_num = qp->qp.qp_num;
    complete(qp->recvCq, wc);
    cur.hasRecv = false;
    sendAck(l, keysHold ? kNakInvalid : kNakOp, rq.psn);
    l->discarding = true;
    toError(qp, IBV_WC_SUCCESS);
    return finishEmpty();
  }
  l->scatter = cur.recv.sges;
  cur.discard = false;
  finishEmpty();
}

void Fabric::responderPayloadDone(Link* l) {
  Link::Current& cur = l->current;
  if (!cur.active) return;
  cur.active = false;
  if (cur.discard || !l->qp) return;
  Qp* qp = l->qp;
  l->expectedPsn = (l->expectedPsn + 1) & kPsnMask;
  if (cur.hasRecv) {
    ibv_wc wc{};
    wc.wr_id = cur.recv.wrId;
    wc.status = IBV_WC_SUCCESS;
    wc.opcode = cur.op == kWriteImm ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
    wc.byte_len = static_cast<uint32_t>(cur.length);
    wc.qp_num = qp->qp.qp_num;
    wc.src_qp = qp->destQpn;
    if (cur.op == kSendImm || cur.op == kWriteImm) {
      wc.wc_flags = IBV_WC_WITH_IMM;
      wc.imm_data = cur.imm;
    }
    complete(qp->recvCq, wc);
  }
  sendAck(l, kAck, cur.psn);
}

void Fabric::completeSends(Qp* qp, uint32_t ackedPsn) {
  size_t popped = 0;
  while (!qp->sq.empty() && qp->sq.front().sent && psnAtOrBefore(qp->sq.front().psn, ackedPsn)) {
    const SendWqe& w = qp->sq.front();
    if (w.signaled || qp->sigAll) {
      ibv_wc wc{};
      wc.wr_id = w.wrId;
      wc.status = IBV_WC_SUCCESS;
      wc.opcode = sendCompletionOpcode(w.opcode);
      wc.byte_len = static_cast<uint32_t>(w.length);
      wc.qp_num = qp->qp.qp_num;
      complete(qp->sendCq, wc);
      if (qp->state == IBV_QPS_ERR) return;  // the completion overflowed the CQ: the queue is flushed
      qp->sqRetiredPending = 0;  // a signaled completion releases the slots of the unsignaled ones before it
    } else {
      ++qp->sqRetiredPending;
    }
    qp->sq.pop_front();
    ++popped;
  }
  qp->nextToSend -= std::min(popped, qp->nextToSend);
}

void Fabric::requesterHeader(Link* l) {
  Qp* qp = l->qp;
  if (!qp) return;
  Ack a;
  std::memcpy(&a, l->head.data(), sizeof(a));
  if (a.op == kAck) return completeSends(qp, a.psn);
  // A NAK names the oldest request not done; everything before it is.
  completeSends(qp, (a.psn - 1) & kPsnMask);
  if (qp->state == IBV_QPS_ERR || qp->sq.empty() || qp->sq.front().psn != a.psn) return;
  if (a.op == kNakRnr) {
    SendWqe& w = qp->sq.front();
    if (qp->rnrRetry != 7 && w.rnrRetriesLeft-- <= 0) return toError(qp, IBV_WC_RNR_RETRY_EXC_ERR);
    // Go back: resend from this request once the responder's timer has run.
    for (SendWqe& s : qp->sq) s.sent = false;
    qp->nextToSend = 0;
    qp->retransmitAt = nowSeconds() + rnrDelaySeconds(a.extra);
    return;
  }
  const ibv_wc_status status = a.op == kNakAccess    ? IBV_WC_REM_ACCESS_ERR
                               : a.op == kNakInvalid ? IBV_WC_REM_INV_REQ_ERR
                               : a.op == kNakOp      ? IBV_WC_REM_OP_ERR
                                                     : IBV_WC_RETRY_EXC_ERR;  // a PSN the responder never expects
  toError(qp, status);
}

void Fabric::queuePackets(Qp* qp) {
  if (qp->state != IBV_QPS_RTS || qp->retransmitAt > 0) return;
  Link* l = qp->requester;
  while (qp->nextToSend < qp->sq.size()) {
    if (!l || l->dead) return toError(qp, IBV_WC_RETRY_EXC_ERR);
    SendWqe& w = qp->sq[qp->nextToSend];
    if (w.badLkey) {
      // The HCA finds the bad local key when it reads the WQE; requests before it still complete.
      if (qp->nextToSend == 0) return toError(qp, IBV_WC_LOC_PROT_ERR);
      return;
    }
    Request rq{};
    rq.op = w.opcode == IBV_WR_SEND                ? kSend
            : w.opcode == IBV_WR_SEND_WITH_IMM     ? kSendImm
            : w.opcode == IBV_WR_RDMA_WRITE        ? kWrite
                                                   : kWriteImm;
    rq.psn = w.psn;
    rq.imm = w.imm;
    rq.rkey = w.rkey;
    rq.remoteAddr = w.remoteAddr;
    rq.length = w.length;
    l->queueCopy(&rq, sizeof(rq));
    if (!w.inlineData.empty()) {
      l->out.push_back(Link::Piece{{}, w.inlineData.data(), w.inlineData.size()});
    } else {
      for (const ibv_sge& s : w.sges) {
        if (s.length > 0) l->out.push_back(Link::Piece{{}, reinterpret_cast<const char*>(s.addr), s.length});
      }
    }
    w.sent = true;
    ++qp->nextToSend;
  }
}

}  // namespace chorus::soft_verbs
