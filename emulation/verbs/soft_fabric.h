// The software verbs device's state (an RDMA adapter emulated for machines without one, soft_verbs.h): every verbs
// object of this process, and the fabric that carries their traffic to other processes over TCP, moved by one
// thread (as an HCA moves it without the application's help). One mutex guards it all. docs/ib.md states the rules
// it enforces and what it does not emulate.
//
// Addressing, as RoCE v2: a port's GID table holds an IPv4-mapped GID per interface address of this network
// namespace (RoCE v1 and v2 entries); a QP is reached at (GID, QPN). Each process listens on one TCP port, and a
// QPN carries that port (qpn = port << 8 | index), so (GID, QPN) names the process without a directory. At RTS a
// QP dials the peer QP's process: that socket carries its requests and the peer's acknowledgements.
#pragma once

#include <infiniband/verbs.h>

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace chorus::soft_verbs {

// Device limits: small, so that tests reach them.
inline constexpr int kMaxQpWr = 1024;
inline constexpr int kMaxSge = 4;
inline constexpr uint32_t kMaxInline = 256;
// The port's largest message (max_msg_sz): small enough that the ib transport's window puts, which split at it,
// are split in tests (a real adapter's is 1-2 GiB); larger work requests fail to post.
inline constexpr uint32_t kMaxMessage = 4u << 20;
inline constexpr int kMaxCqe = 1 << 16;
inline constexpr int kMaxQp = 255;  // per process: the QPN's low byte
inline constexpr const char* kDeviceName = "chorus_soft0";

struct Context;
struct Cq;
struct Qp;
struct Link;

struct Pd {
  ibv_pd pd;  // first: the verbs hand out &pd
  int users = 0;  // MRs and QPs
};

struct Mr {
  ibv_mr mr;
  int access = 0;
};

struct Channel {
  ibv_comp_channel channel;
  std::deque<Cq*> events;  // one per readable count of channel.fd (an eventfd in semaphore mode)
  int cqs = 0;
};

struct Cq {
  ibv_cq cq;
  Channel* channel = nullptr;
  int capacity = 0;
  std::deque<ibv_wc> entries;
  // entries.size() and overflowed, readable without the fabric's mutex: a consumer that polls an empty queue in a
  // loop (as CommIO does) must not contend with the fabric thread for the lock, as it does not on hardware.
  std::atomic<int> available{0};
  std::atomic<bool> overflowed{false};
  bool armed = false;
  unsigned eventsGiven = 0, eventsAcked = 0;  // retrieved by get_cq_event, and acknowledged
  int qps = 0;
};

struct SendWqe {
  uint64_t wrId;
  ibv_wr_opcode opcode;
  bool signaled;
  uint32_t imm;
  uint32_t rkey;
  uint64_t remoteAddr;
  std::vector<ibv_sge> sges;
  std::vector<char> inlineData;  // the payload when sent inline (copied at post)
  uint64_t length;
  uint32_t psn;
  bool badLkey;  // a local key or range that does not hold: IBV_WC_LOC_PROT_ERR when it reaches the wire
  int rnrRetriesLeft;
  bool sent = false;
};

struct RecvWqe {
  uint64_t wrId;
  std::vector<ibv_sge> sges;
};

struct Qp {
  ibv_qp qp;
  Pd* pd;
  Cq* sendCq;
  Cq* recvCq;
  bool sigAll;
  ibv_qp_cap cap;
  ibv_qp_state state = IBV_QPS_RESET;
  int accessFlags = 0;
  uint8_t port = 0;
  ibv_mtu pathMtu = IBV_MTU_1024;
  uint32_t destQpn = 0, rqPsn = 0, sqPsn = 0;
  ibv_ah_attr av{};
  uint8_t timeout = 0, retryCnt = 0, rnrRetry = 0, minRnrTimer = 0;
  std::deque<SendWqe> sq;  // posted, not yet completed (sq.size() <= cap.max_send_wr counts unretired ones)
  size_t sqRetiredPending = 0;  // completed unsignaled WQEs that still hold slots until a signaled one completes
  size_t nextToSend = 0;        // index into sq of the next WQE to put on the wire
  uint32_t nextPsn = 0;         // the PSN the next posted WQE gets
  std::deque<RecvWqe> rq;
  Link* requester = nullptr;                  // the socket to the peer QP (from RTS)
  std::vector<Link*> responders;              // sockets from the peer QP (normally one)
  double retransmitAt = 0;                    // after an RNR NAK: when to resend from nextToSend
};

// One TCP socket: requests one way, acknowledgements the other.
struct Link {
  int fd = -1;
  bool isRequester = false;
  bool connecting = false;
  bool dead = false;
  Qp* qp = nullptr;  // requester: the owner; responder: the bound QP once its hello matched one
  // Receive side.
  std::vector<char> head;  // header bytes being read
  size_t headWant = 0;
  char* payloadDst = nullptr;  // where the payload goes (scattered per `scatter`), or discarded
  std::vector<ibv_sge> scatter;
  uint64_t payloadLeft = 0;
  // Send side: bytes queued in order (headers owned here; payload pointers into registered memory).
  struct Piece {
    std::vector<char> owned;
    const char* data;
    size_t len;
  };
  std::deque<Piece> out;
  // Queues a copy of [p, p+n): a header, which the link owns until it is on the wire.
  void queueCopy(const void* p, size_t n) {
    Piece& piece = out.emplace_back();
    piece.owned.assign(static_cast<const char*>(p), static_cast<const char*>(p) + n);
    piece.data = piece.owned.data();
    piece.len = n;
  }
  // Responder state after the header of a request.
  struct Current {
    bool active = false;
    uint8_t op = 0;
    uint32_t psn = 0, imm = 0;
    bool hasRecv = false;
    RecvWqe recv;
    uint64_t length = 0;
    bool discard = false;
  } current;
  bool discarding = false;  // after a NAK: drop requests until the NAK'd PSN comes again
  uint32_t expectedPsn = 0;
  std::string peerAddress;  // for messages
};

struct Context {
  ibv_context context;
  std::deque<ibv_async_event> asyncEvents;  // one per readable count of context.async_fd
  int pds = 0;
};

struct GidEntry {
  ibv_gid gid;
  ibv_gid_type type;  // IBV_GID_TYPE_ROCE_V1 or _V2
  uint32_t ifindex;
};

// The process's fabric: its objects, its listener and its thread.
class Fabric {
 public:
  static Fabric& get();  // created on first use, never destroyed (its thread runs until the process exits)

  std::mutex mu;
  std::vector<GidEntry> gids;  // the port's GID table, read at first use
  uint16_t listenPort = 0;
  std::map<uint32_t, Qp*> qps;
  std::map<uint32_t, Mr*> mrsByKey;  // lkey == rkey; never reused
  uint32_t nextKey = 1;

  // Allocates a QPN of this process (0 when all kMaxQp are taken).
  uint32_t allocateQpn();
  // Starts the requester connection of a QP entering RTS.
  void dial(Qp* qp);
  // Detaches and closes a QP's sockets (destroy or reset).
  void dropLinks(Qp* qp);
  // Moves a QP to the error state: outstanding WQEs of both queues complete with IBV_WC_WR_FLUSH_ERR
  // (`firstStatus` for the oldest send, when not success).
  void toError(Qp* qp, ibv_wc_status firstStatus, uint32_t vendorErr = 0);
  // Adds a completion; overflow breaks the CQ (async IBV_EVENT_CQ_ERR, its QPs to error).
  void complete(Cq* cq, const ibv_wc& wc);
  // Raises an async event on the QP's or CQ's context.
  void raiseAsync(ibv_context* ctx, const ibv_async_event& ev);
  // Wakes the thread (new work posted).
  void wake();
  // Puts a QP's newly posted requests on its socket from the posting thread (mu held), as far as the socket takes
  // them: a send then does not wait for the fabric thread to be scheduled (2 cores, many processes).
  void sendNow(Qp* qp);

 private:
  Fabric();
  void run();
  void serviceLocked();
  void acceptLocked();
  void readLink(Link* link);
  void writeLink(Link* link);
  void requesterHeader(Link* link);
  void responderHeader(Link* link);
  void responderPayloadDone(Link* link);
  void linkFailed(Link* link, const std::string& why);
  void queuePackets(Qp* qp);
  void sendAck(Link* link, uint8_t op, uint32_t psn, uint8_t extra = 0);
  void completeSends(Qp* qp, uint32_t ackedPsn);
  void bindPending();

  void closeInherited();  // in a forked child: the parent's sockets are not this process's

  pid_t pid_;
  int epollFd_ = -1, wakeFd_ = -1, listenFd_ = -1;
  uint32_t nextQpnIndex_ = 1;
  std::vector<std::unique_ptr<Link>> links_;
  std::vector<Link*> unbound_;  // accepted, hello not yet matched to a QP in RTR or later
};

double nowSeconds();

// The opcode a send work request completes with.
inline ibv_wc_opcode sendCompletionOpcode(ibv_wr_opcode op) {
  return op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM ? IBV_WC_RDMA_WRITE : IBV_WC_SEND;
}

}  // namespace chorus::soft_verbs
