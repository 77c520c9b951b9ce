// The software verbs device's fabric (soft_fabric.h): the thread and sockets that carry verbs traffic between
// processes as an RDMA adapter's hardware would, so that the ib transport runs where there is none.
#include "emulation/verbs/soft_fabric.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <poll.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

#include "core/logging.h"
#include "emulation/verbs/soft_wire.h"

namespace chorus::soft_verbs {
namespace {

std::vector<GidEntry> readGidTable() {
  std::vector<GidEntry> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || !(a->ifa_flags & IFF_UP)) continue;
    const int family = a->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    GidEntry e{};
    if (family == AF_INET) {
      // IPv4-mapped: ::ffff:a.b.c.d, as RoCE GIDs of IPv4 addresses are.
      e.gid.raw[10] = 0xff;
      e.gid.raw[11] = 0xff;
      std::memcpy(&e.gid.raw[12], &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, 4);
    } else {
      // An IPv6 address is its own RoCE GID (a link-local one too: the GID's device is its scope).
      std::memcpy(e.gid.raw, &reinterpret_cast<sockaddr_in6*>(a->ifa_addr)->sin6_addr, 16);
    }
    e.ifindex = if_nametoindex(a->ifa_name);
    e.type = IBV_GID_TYPE_ROCE_V1;
    out.push_back(e);
    e.type = IBV_GID_TYPE_ROCE_V2;
    out.push_back(e);
  }
  freeifaddrs(list);
  return out;
}

void setNonBlocking(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

}  // namespace

double nowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Fabric& Fabric::get() {
  // Never destroyed: its thread runs until the process exits. A child forked from a process that used the device
  // has the parent's fabric without its thread (and maybe with its mutex held): it starts its own, as a process
  // that opened a device after fork would, and closes the descriptors it inherited.
  static std::atomic<Fabric*> fabric{nullptr};
  static std::mutex creating;
  Fabric* f = fabric.load();
  if (f && f->pid_ == getpid()) return *f;
  std::lock_guard<std::mutex> lock(creating);
  f = fabric.load();
  if (!f || f->pid_ != getpid()) {
    static std::vector<Fabric*> inherited;  // kept reachable: never used again, never freed (its mutex may be held)
    if (f) {
      f->closeInherited();
      inherited.push_back(f);
    }
    f = new Fabric();
    fabric.store(f);
  }
  return *f;
}

void Fabric::closeInherited() {
  for (auto& l : links_) {
    if (l->fd >= 0) close(l->fd);
  }
  for (int fd : {epollFd_, wakeFd_, listenFd_}) {
    if (fd >= 0) close(fd);
  }
}

Fabric::Fabric() : pid_(getpid()) {
  gids = readGidTable();
  epollFd_ = epoll_create1(EPOLL_CLOEXEC);
  wakeFd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  // Dual-stack: IPv4 peers arrive as v4-mapped addresses. Where the kernel has no IPv6, IPv4 alone.
  listenFd_ = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_in6 addr6{};
  addr6.sin6_family = AF_INET6;
  addr6.sin6_addr = in6addr_any;
  sockaddr_in addr4{};
  addr4.sin_family = AF_INET;
  addr4.sin_addr.s_addr = htonl(INADDR_ANY);
  const bool v6 = listenFd_ >= 0;
  if (v6) {
    int off = 0;
    setsockopt(listenFd_, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
  } else {
    listenFd_ = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  }
  sockaddr* addr = v6 ? reinterpret_cast<sockaddr*>(&addr6) : reinterpret_cast<sockaddr*>(&addr4);
  socklen_t len = v6 ? sizeof(addr6) : sizeof(addr4);
  if (epollFd_ < 0 || wakeFd_ < 0 || listenFd_ < 0 || bind(listenFd_, addr, len) != 0 || listen(listenFd_, 1024) != 0 ||
      getsockname(listenFd_, addr, &len) != 0) {
    CHORUS_WARN(-1, "soft verbs: cannot set up the fabric's socket: " << std::strerror(errno));
    gids.clear();  // no GIDs: the port reports down
    return;
  }
  listenPort = ntohs(v6 ? addr6.sin6_port : addr4.sin_port);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.ptr = nullptr;
  epoll_ctl(epollFd_, EPOLL_CTL_ADD, wakeFd_, &ev);
  ev.data.ptr = &listenFd_;
  epoll_ctl(epollFd_, EPOLL_CTL_ADD, listenFd_, &ev);
  std::thread([this] { run(); }).detach();
}

uint32_t Fabric::allocateQpn() {
  for (int tries = 0; tries < kMaxQp; ++tries) {
    uint32_t index = nextQpnIndex_;
    nextQpnIndex_ = nextQpnIndex_ % kMaxQp + 1;
    uint32_t qpn = (static_cast<uint32_t>(listenPort) << 8) | index;
    if (!qps.count(qpn)) return qpn;
  }
  return 0;
}

void Fabric::wake() {
  uint64_t one = 1;
  ssize_t r = write(wakeFd_, &one, sizeof(one));
  (void)r;
}

void Fabric::raiseAsync(ibv_context* ctx, const ibv_async_event& ev) {
  Context* c = reinterpret_cast<Context*>(ctx);
  c->asyncEvents.push_back(ev);
  uint64_t one = 1;
  ssize_t r = write(ctx->async_fd, &one, sizeof(one));
  (void)r;
}

void Fabric::complete(Cq* cq, const ibv_wc& wc) {
  if (cq->overflowed) return;
  if (static_cast<int>(cq->entries.size()) >= cq->capacity) {
    cq->overflowed.store(true, std::memory_order_release);
    ibv_async_event ev{};
    ev.event_type = IBV_EVENT_CQ_ERR;
    ev.element.cq = &cq->cq;
    raiseAsync(cq->cq.context, ev);
    for (auto& [qpn, qp] : qps) {
      if ((qp->sendCq == cq || qp->recvCq == cq) && qp->state != IBV_QPS_ERR) toError(qp, IBV_WC_SUCCESS);
    }
    return;
  }
  cq->entries.push_back(wc);
  cq->available.fetch_add(1, std::memory_order_release);
  if (cq->armed && cq->channel) {
    cq->armed = false;
    cq->channel->events.push_back(cq);
    uint64_t one = 1;
    ssize_t r = write(cq->channel->channel.fd, &one, sizeof(one));
    (void)r;
  }
}

void Fabric::toError(Qp* qp, ibv_wc_status firstStatus, uint32_t vendorErr) {
  qp->state = IBV_QPS_ERR;
  qp->qp.state = IBV_QPS_ERR;
  bool first = firstStatus != IBV_WC_SUCCESS;
  for (const SendWqe& w : qp->sq) {
    ibv_wc wc{};
    wc.wr_id = w.wrId;
    wc.status = first ? firstStatus : IBV_WC_WR_FLUSH_ERR;
    wc.vendor_err = first ? vendorErr : 0;
    wc.opcode = sendCompletionOpcode(w.opcode);
    wc.qp_num = qp->qp.qp_num;
    first = false;
    complete(qp->sendCq, wc);
  }
  qp->sq.clear();
  qp->nextToSend = 0;
  qp->sqRetiredPending = 0;
  for (const RecvWqe& w : qp->rq) {
    ibv_wc wc{};
    wc.wr_id = w.wrId;
    wc.status = IBV_WC_WR_FLUSH_ERR;
    wc.opcode = IBV_WC_RECV;
    wc.qp_num = qp->qp.qp_num;
    complete(qp->recvCq, wc);
  }
  qp->rq.clear();
  dropLinks(qp);
}

void Fabric::dropLinks(Qp* qp) {
  if (qp->requester) {
    qp->requester->dead = true;
    qp->requester->out.clear();  // its pieces point into memory the application owns again
    qp->requester->qp = nullptr;
    qp->requester = nullptr;
  }
  for (Link* l : qp->responders) {
    l->dead = true;  // acknowledgements already queued (a NAK) still go out before the socket closes
    l->qp = nullptr;
  }
  qp->responders.clear();
  wake();
}

void Fabric::dial(Qp* qp) {
  auto link = std::make_unique<Link>();
  link->isRequester = true;
  link->qp = qp;
  link->headWant = sizeof(Ack);
  const GidEntry& source = gids.at(qp->av.grh.sgid_index);
  const uint8_t* dgid = qp->av.grh.dgid.raw;
  static const uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  const uint16_t port = static_cast<uint16_t>(qp->destQpn >> 8);
  sockaddr_in addr{};
  sockaddr_in6 addr6{};
  char text[INET6_ADDRSTRLEN] = "?";
  const bool v4 = std::memcmp(dgid, kMapped, 12) == 0;
  if (v4) {
    addr.sin_family = AF_INET;
    std::memcpy(&addr.sin_addr, &dgid[12], 4);
    addr.sin_port = htons(port);
    inet_ntop(AF_INET, &addr.sin_addr, text, sizeof(text));
  } else {
    addr6.sin6_family = AF_INET6;
    std::memcpy(&addr6.sin6_addr, dgid, 16);
    addr6.sin6_port = htons(port);
    // A link-local peer is reached through the interface of this QP's own GID.
    if (IN6_IS_ADDR_LINKLOCAL(&addr6.sin6_addr)) addr6.sin6_scope_id = source.ifindex;
    inet_ntop(AF_INET6, &addr6.sin6_addr, text, sizeof(text));
  }
  // Built by appends: g++ 12 at -O3 misreads `"[" + std::string` as an overlapping copy (-Wrestrict).
  std::string host(text);
  if (!v4) host.insert(0, 1, '[').push_back(']');
  link->peerAddress = host + ":" + std::to_string(port);
  link->fd = socket(v4 ? AF_INET : AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int r = link->fd < 0 ? -1
          : v4         ? connect(link->fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr))
                       : connect(link->fd, reinterpret_cast<sockaddr*>(&addr6), sizeof(addr6));
  if (r != 0 && errno != EINPROGRESS) {
    link->dead = true;  // nobody listens there: the first request fails as a transport retry would
  } else {
    setNonBlocking(link->fd);
    link->connecting = r != 0;
    Hello hello{};
    hello.magic = kHelloMagic;
    hello.srcQpn = qp->qp.qp_num;
    hello.dstQpn = qp->destQpn;
    std::memcpy(hello.srcGid, source.gid.raw, 16);
    link->queueCopy(&hello, sizeof(hello));
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT;
    ev.data.ptr = link.get();
    epoll_ctl(epollFd_, EPOLL_CTL_ADD, link->fd, &ev);
  }
  qp->requester = link.get();
  links_.push_back(std::move(link));
  wake();
}

void Fabric::run() {
  std::vector<epoll_event> events(64);
  for (;;) {
    int timeoutMs = -1;
    {
      std::lock_guard<std::mutex> lock(mu);
      double next = 0;
      for (auto& [qpn, qp] : qps) {
        if (qp->retransmitAt > 0 && (next == 0 || qp->retransmitAt < next)) next = qp->retransmitAt;
      }
      if (next > 0) timeoutMs = std::max(0, static_cast<int>(std::ceil((next - nowSeconds()) * 1000)));
    }
    int n = epoll_wait(epollFd_, events.data(), static_cast<int>(events.size()), timeoutMs);
    if (n < 0 && errno != EINTR) {
      CHORUS_WARN(-1, "soft verbs: epoll_wait failed: " << std::strerror(errno));
      return;
    }
    uint64_t drained;
    while (read(wakeFd_, &drained, sizeof(drained)) > 0) {
    }
    std::lock_guard<std::mutex> lock(mu);
    serviceLocked();
  }
}

void Fabric::sendNow(Qp* qp) {
  queuePackets(qp);
  Link* l = qp->requester;
  if (l && !l->dead && !l->connecting && !l->out.empty()) writeLink(l);
}

void Fabric::serviceLocked() {
  acceptLocked();
  bindPending();
  const double now = nowSeconds();
  for (auto& [qpn, qp] : qps) {
    if (qp->retransmitAt > 0 && now >= qp->retransmitAt) qp->retransmitAt = 0;
    queuePackets(qp);
  }
  // Read and write until nothing moves (bounded, so one busy socket cannot starve the application's calls).
  for (int round = 0; round < 64; ++round) {
    bool moved = false;
    for (size_t i = 0; i < links_.size(); ++i) {
      Link* l = links_[i].get();
      if (l->fd < 0) continue;
      size_t before = l->out.size();
      if (!l->out.empty()) writeLink(l);
      if (l->out.size() != before) moved = true;
      if (l->dead || l->connecting) continue;
      if (!l->isRequester && !l->qp) continue;  // hello read, waiting to be bound
      uint64_t left = l->payloadLeft;
      size_t want = l->headWant;
      readLink(l);
      if (l->payloadLeft != left || l->headWant != want) moved = true;
    }
    for (auto& [qpn, qp] : qps) queuePackets(qp);
    if (!moved) break;
  }
  // Close the sockets of dead links once their last acknowledgements are out; stop watching for output otherwise.
  for (size_t i = 0; i < links_.size();) {
    Link* l = links_[i].get();
    if (l->dead && (l->out.empty() || l->fd < 0)) {
      if (l->fd >= 0) close(l->fd);
      if (l->qp && l->qp->requester == l) l->qp->requester = nullptr;
      if (l->qp) {
        auto& r = l->qp->responders;
        r.erase(std::remove(r.begin(), r.end(), l), r.end());
      }
      unbound_.erase(std::remove(unbound_.begin(), unbound_.end(), l), unbound_.end());
      links_.erase(links_.begin() + static_cast<long>(i));
      continue;
    }
    // A socket held until its QP reaches RTR is not watched for input (modify_qp wakes the thread).
    const bool held = !l->isRequester && !l->qp && l->head.size() == sizeof(Hello);
    epoll_event ev{};
    ev.events = (held ? 0u : static_cast<uint32_t>(EPOLLIN)) |
                (l->out.empty() && !l->connecting ? 0u : static_cast<uint32_t>(EPOLLOUT));
    ev.data.ptr = l;
    if (l->fd >= 0) epoll_ctl(epollFd_, EPOLL_CTL_MOD, l->fd, &ev);
    ++i;
  }
}

void Fabric::acceptLocked() {
  for (;;) {
    int fd = accept4(listenFd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    setNonBlocking(fd);
    auto link = std::make_unique<Link>();
    link->fd = fd;
    link->headWant = sizeof(Hello);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = link.get();
    epoll_ctl(epollFd_, EPOLL_CTL_ADD, fd, &ev);
    unbound_.push_back(link.get());
    links_.push_back(std::move(link));
  }
}

void Fabric::bindPending() {
  for (Link* l : unbound_) {
    if (l->dead) continue;
    if (l->head.size() < sizeof(Hello)) {
      char buf[sizeof(Hello)];
      ssize_t r = recv(l->fd, buf, sizeof(Hello) - l->head.size(), MSG_DONTWAIT);
      if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        l->dead = true;
        continue;
      }
      if (r > 0) l->head.insert(l->head.end(), buf, buf + r);
      if (l->head.size() < sizeof(Hello)) continue;
    }
    Hello h;
    std::memcpy(&h, l->head.data(), sizeof(h));
    auto it = qps.find(h.dstQpn);
    if (h.magic != kHelloMagic || it == qps.end()) {
      l->dead = true;  // no such QP: the requester's transport retries run out (IBV_WC_RETRY_EXC_ERR)
      continue;
    }
    Qp* qp = it->second;
    if (qp->state == IBV_QPS_RESET || qp->state == IBV_QPS_INIT) continue;  // not yet RTR: held, not read
    if (qp->state != IBV_QPS_RTR && qp->state != IBV_QPS_RTS) {
      l->dead = true;
      continue;
    }
    if (qp->destQpn != h.srcQpn || std::memcmp(qp->av.grh.dgid.raw, h.srcGid, 16) != 0) {
      l->dead = true;  // the QP is connected to another: packets from this one are dropped
      continue;
    }
    l->qp = qp;
    l->expectedPsn = qp->rqPsn;
    l->head.clear();
    l->headWant = sizeof(Request);
    qp->responders.push_back(l);
  }
  unbound_.erase(std::remove_if(unbound_.begin(), unbound_.end(), [](Link* l) { return l->dead || l->qp; }),
                 unbound_.end());
}

void Fabric::writeLink(Link* l) {
  if (l->connecting) {
    int err = 0;
    socklen_t len = sizeof(err);
    pollfd p{l->fd, POLLOUT, 0};
    if (poll(&p, 1, 0) <= 0) return;
    getsockopt(l->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      linkFailed(l, std::string("connect: ") + std::strerror(err));
      return;
    }
    l->connecting = false;
  }
  while (!l->out.empty()) {
    iovec iov[16];
    int n = 0;
    for (auto it = l->out.begin(); it != l->out.end() && n < 16; ++it, ++n) {
      iov[n].iov_base = const_cast<char*>(it->data);
      iov[n].iov_len = it->len;
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(n);
    ssize_t r = sendmsg(l->fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (r < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
      linkFailed(l, std::string("send: ") + std::strerror(errno));
      return;
    }
    size_t done = static_cast<size_t>(r);
    while (done > 0) {
      Link::Piece& p = l->out.front();
      size_t take = std::min(done, p.len);
      p.data += take;
      p.len -= take;
      done -= take;
      if (p.len == 0) l->out.pop_front();
    }
  }
}

void Fabric::linkFailed(Link* l, const std::string& why) {
  Qp* qp = l->qp;
  l->dead = true;
  l->out.clear();
  if (!l->isRequester || !qp) {
    if (qp) qp->responders.erase(std::remove(qp->responders.begin(), qp->responders.end(), l), qp->responders.end());
    l->qp = nullptr;
    return;  // a responder whose requester went away: hardware would not notice either
  }
  CHORUS_LOG(LogLevel::kTrace, -1, "soft verbs: QP " << qp->qp.qp_num << " lost " << l->peerAddress << ": " << why);
  // The peer's process or QP is gone: what is outstanding fails as when transport retries run out; the QP stays
  // usable for nothing but flushes. With nothing outstanding, the next request fails the same way.
  if (!qp->sq.empty()) toError(qp, IBV_WC_RETRY_EXC_ERR);
}

void Fabric::readLink(Link* l) {
  for (int guard = 0; guard < 256 && !l->dead; ++guard) {
    ssize_t r;
    if (l->payloadLeft > 0) {
      // Payload: into the destination (the current scatter entry) or a scratch buffer when discarded.
      static thread_local char scratch[1 << 16];
      char* dst = scratch;
      size_t want = std::min<uint64_t>(l->payloadLeft, sizeof(scratch));
      if (!l->current.discard) {
        while (!l->scatter.empty() && l->scatter.front().length == 0) l->scatter.erase(l->scatter.begin());
        ibv_sge& s = l->scatter.front();
        dst = reinterpret_cast<char*>(s.addr);
        want = std::min<uint64_t>(l->payloadLeft, s.length);
      }
      r = recv(l->fd, dst, want, MSG_DONTWAIT);
      if (r > 0) {
        l->payloadLeft -= static_cast<uint64_t>(r);
        if (!l->current.discard) {
          l->scatter.front().addr += static_cast<uint64_t>(r);
          l->scatter.front().length -= static_cast<uint32_t>(r);
        }
        if (l->payloadLeft == 0) responderPayloadDone(l);
        continue;
      }
    } else {
      char buf[sizeof(Request)];
      r = recv(l->fd, buf, l->headWant - l->head.size(), MSG_DONTWAIT);
      if (r > 0) {
        l->head.insert(l->head.end(), buf, buf + r);
        if (l->head.size() == l->headWant) {
          if (l->isRequester) {
            requesterHeader(l);
          } else {
            responderHeader(l);
          }
          l->head.clear();
        }
        continue;
      }
    }
    if (r == 0) {
      linkFailed(l, "the peer closed the connection");
    } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      linkFailed(l, std::string("recv: ") + std::strerror(errno));
    }
    return;
  }
}

}  // namespace chorus::soft_verbs
