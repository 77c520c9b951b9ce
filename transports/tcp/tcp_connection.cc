#include "transports/tcp/tcp_connection.h"

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "topology/network_interfaces.h"
#include "transports/connection_errors.h"

namespace chorus {

namespace {
// A waiter that sleeps on a receive is woken when up to kWakeBytes of it have arrived.
constexpr size_t kWakeBytes = 1024 * 1024;
// Payload per sendmsg or recvmsg: one syscall per direction and socket per progress round, then the other direction.
// Sending a pipeline's whole run of slices in one go (until EAGAIN) would leave the peer's data waiting in our receive
// queue meanwhile, and on loopback the sender also does the receiver's protocol work. 256 KiB does better than 128
// KiB, 512 KiB and 1 MiB (perf/results/tcp.md, "One syscall per direction per round").
constexpr size_t kTurnBytes = 256 * 1024;
}  // namespace

TcpConnection::TcpConnection(int rank, int peer, std::string address, const std::vector<int>& fds,
                             const std::vector<TcpLinkKeys>& keys, RailPlan rails)
    : rank_(rank), peer_(peer), address_(std::move(address)), rails_(std::move(rails)) {
  if (!keys.empty() && keys.size() != fds.size()) throwInternal("TcpConnection: one key pair per socket, or none");
  perRail_ = std::max<size_t>(1, rails_.socketsPerRail(fds.size()));
  for (size_t w = 0; w <= perRail_; ++w) cuts_.push_back(rails_.cuts(fds.size(), std::max<size_t>(w, 1)));
  defaultWidth_ = rails_.defaultWidth == 0 ? perRail_ : std::min(rails_.defaultWidth, perRail_);
  // Only an interface seen up here can be reported down later: one that never shows a carrier (some tunnels) must
  // not fail a call that is merely slow.
  for (const std::string& name : rails_.interfaces) watched_.push_back(!name.empty() && interfaceIsUp(name));
  width_ = defaultWidth_;
  description_ = "tcp " + address_ + " x" + std::to_string(fds.size()) + rails_.describe() +
                 (keys.empty() ? "" : " aes-gcm");
  streams_.reserve(fds.size());
  for (size_t i = 0; i < fds.size(); ++i) {
    Stream& s = streams_.emplace_back();
    s.fd = fds[i];
    s.lowat = 1;
    if (!keys.empty()) {
      s.sealer = std::make_unique<RecordCipher>(keys[i].send);
      s.opener = std::make_unique<RecordCipher>(keys[i].recv);
    }
  }
}

TcpConnection::~TcpConnection() {
  for (auto& s : streams_) ::close(s.fd);
}

void TcpConnection::post(bool isSend, char* buf, size_t bytes, uint32_t tag, uint64_t msg) {
  uint32_t slices = 0;
  for (size_t i = 0; i < streams_.size(); ++i) {
    size_t b, e;
    cuts_[width_].cut(bytes, i, &b, &e);
    if (e <= b && !(i == 0 && bytes == 0)) continue;  // a zero-byte message still sends its header on socket 0
    Stream& s = streams_[i];
    std::deque<Slice>& q = isSend ? s.sends : s.recvs;
    if (!s.sealer) {
      q.push_back(Slice{buf + b, e - b, 0, 0, FrameHeader{kFrameMagic, tag, e - b}, tag, msg, buf + b, e - b});
      ++slices;
      continue;
    }
    // Sealed: one frame per record, numbered in posting order, which is the socket's order on the wire.
    size_t at = b;
    do {
      const size_t n = std::min(kRecordBytes, e - at);
      Slice sl{nullptr, n + RecordCipher::kTagBytes, 0, 0, FrameHeader{kFrameMagic, tag, n}, tag, msg, buf + at, n};
      sl.number = isSend ? s.nextSealed++ : s.nextOpened++;
      q.push_back(sl);
      ++slices;
      at += n;
    } while (at < e);
  }
  (isSend ? sendPending_ : recvPending_).push_back(slices);
}

void TcpConnection::stage(Stream& s, Slice& sl, bool isSend) {
  if (s.freeBuffers.empty()) {
    s.pool.push_back(std::make_unique<char[]>(kRecordBytes + RecordCipher::kTagBytes));
    s.freeBuffers.push_back(static_cast<int>(s.pool.size() - 1));
  }
  sl.buffer = s.freeBuffers.back();
  s.freeBuffers.pop_back();
  sl.data = s.pool[static_cast<size_t>(sl.buffer)].get();
  if (isSend) {
    s.sealer->seal(sl.number, std::span(reinterpret_cast<const uint8_t*>(&sl.hdr), sizeof(sl.hdr)),
                   std::span(reinterpret_cast<const uint8_t*>(sl.user), sl.plainLen),
                   reinterpret_cast<uint8_t*>(sl.data));
  }
}

void TcpConnection::unstage(Stream& s, Slice& sl, bool isSend) {
  s.freeBuffers.push_back(sl.buffer);
  if (isSend) return;
  if (!s.opener->open(sl.number, std::span(reinterpret_cast<const uint8_t*>(&sl.hdr), sizeof(sl.hdr)),
                      std::span(reinterpret_cast<const uint8_t*>(sl.data), sl.len),
                      reinterpret_cast<uint8_t*>(sl.user))) {
    connection_errors::corrupt(rank_, peer_, description_,
                               "record " + std::to_string(sl.number) + " (" + std::to_string(sl.plainLen) +
                                   " bytes, tag " + std::to_string(sl.hdr.tag) +
                                   ") does not authenticate: altered, replayed, reordered or sealed with another key");
  }
}

uint64_t TcpConnection::isend(const void* buf, size_t bytes, uint32_t tag) {
  post(true, const_cast<char*>(static_cast<const char*>(buf)), bytes, tag, sendsPosted_);
  return sendsPosted_++;
}

uint64_t TcpConnection::irecv(void* buf, size_t bytes, uint32_t tag) {
  post(false, static_cast<char*>(buf), bytes, tag, recvsPosted_);
  return recvsPosted_++;
}

void TcpConnection::lost(const char* call, int err) const {
  std::string what = err == 0 ? std::string("the connection was closed without a goodbye (process exited or killed)")
                              : std::string(call) + " failed: " + std::strerror(err);
  connection_errors::peerLost(rank_, peer_, description_, what);
}

void TcpConnection::closeGracefully() {
  // Only when idle: a goodbye behind unsent data would be a lie about what the peer will receive.
  if (busy()) return;
  FrameHeader bye{kFrameMagic, kGoodbyeTag, 0};
  for (Stream& s : streams_) {
    ssize_t ignored = ::send(s.fd, &bye, sizeof(bye), MSG_DONTWAIT | MSG_NOSIGNAL);
    (void)ignored;
  }
}

void TcpConnection::abandon(int lostPeer) {
  if (abandoned_) return;
  abandoned_ = true;
  // The byte count carries the lost peer (connection_errors::lostPeerNote); the frame has no payload.
  FrameHeader note{kFrameMagic, kAbandonTag, connection_errors::lostPeerNote(lostPeer)};
  for (Stream& s : streams_) {
    // A frame already half on the wire cannot be followed by another: then the hang-up alone must tell.
    bool midFrame = !s.sends.empty() && (s.sends.front().hdrDone > 0);
    if (!midFrame) {
      ssize_t ignored = ::send(s.fd, &note, sizeof(note), MSG_DONTWAIT | MSG_NOSIGNAL);
      (void)ignored;
    }
    ::shutdown(s.fd, SHUT_WR);
    s.sends.clear();
  }
}

bool TcpConnection::peekIncomingTag(uint32_t* tag) {
  // Every message's first slice travels on socket 0, header first.
  const Stream& s = streams_[0];
  if (!s.recvs.empty() || recvsDone_ < recvsPosted_) return false;
  FrameHeader h{};
  const ssize_t got = ::recv(s.fd, &h, sizeof(h), MSG_PEEK | MSG_DONTWAIT);
  if (got != static_cast<ssize_t>(sizeof(h)) || h.magic != kFrameMagic) return false;
  if (h.tag == kAbandonTag || h.tag == kGoodbyeTag) return false;  // for checkAlive and the hang-up watch to judge
  *tag = h.tag;
  return true;
}

void TcpConnection::checkControlFrame(const FrameHeader& h, bool expectingData) const {
  if (h.magic != kFrameMagic) return;
  if (h.tag == kAbandonTag) {
    connection_errors::peerGaveUp(rank_, peer_, connection_errors::lostPeerOfNote(h.bytes));
  }
  if (h.tag == kGoodbyeTag && expectingData)
    connection_errors::peerClosedEarly(rank_, peer_, "still expected data from it");
}

void TcpConnection::addHangupFds(std::vector<pollfd>& fds) const {
  if (peerSaidGoodbye_) return;
  for (const Stream& s : streams_) fds.push_back(pollfd{s.fd, POLLRDHUP, 0});
}

void TcpConnection::checkAlive() {
  if (peerSaidGoodbye_) return;
  for (Stream& s : streams_) {
    // Inside a frame the next bytes are payload, not a header; only the end of the stream means anything then.
    bool midFrame = !s.recvs.empty() && s.recvs.front().hdrDone > 0;
    FrameHeader next{};
    ssize_t r = ::recv(s.fd, &next, sizeof(next), MSG_PEEK | MSG_DONTWAIT);
    if (r == 0) lost("recv", 0);  // closed with nothing left to read: no goodbye, so the process is gone
    if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) lost("recv", errno);
    if (r == sizeof(next) && !midFrame) {
      checkControlFrame(next, false);
      if (next.magic == kFrameMagic && next.tag == kGoodbyeTag) peerSaidGoodbye_ = true;
    }
  }
}

void TcpConnection::checkHeader(const Slice& sl) const {
  checkControlFrame(sl.hdr, true);
  if (sl.hdr.magic != kFrameMagic) connection_errors::corrupt(rank_, peer_, description_, "frame: bad magic");
  if (sl.hdr.tag != sl.expectTag || sl.hdr.bytes != sl.plainLen) {
    connection_errors::mismatchedMessage(rank_, peer_, sl.hdr.bytes, sl.hdr.tag, sl.plainLen, sl.expectTag, "");
  }
}

// Stripes of one message may finish on different sockets out of order; completion stays in message order.
void TcpConnection::sliceDone(std::deque<uint32_t>& pending, uint64_t& done, uint64_t msg) {
  --pending[msg - done];
  while (!pending.empty() && pending.front() == 0) {
    pending.pop_front();
    ++done;
  }
}

// One syscall's worth of queued slices: header and payload of up to kBatch slices in one iovec list, so that many
// small slices (or a pipeline's run of slices) cost one sendmsg/recvmsg instead of one each; at most kTurnBytes of
// payload, after which the other direction takes its turn.
bool TcpConnection::moveSlices(Stream& s, bool isSend) {
  constexpr size_t kBatch = 16;
  std::deque<Slice>& q = isSend ? s.sends : s.recvs;
  bool moved = false;
  while (!q.empty()) {  // once, and again only after EINTR
    iovec iov[2 * kBatch];
    int n = 0;
    size_t turn = 0;  // bytes offered in this syscall, at most kTurnBytes of payload
    for (size_t i = 0; i < q.size() && i < kBatch && turn < kTurnBytes; ++i) {
      Slice& sl = q[i];
      if (sl.hdrDone < sizeof(FrameHeader)) {
        iov[n++] = {reinterpret_cast<char*>(&sl.hdr) + sl.hdrDone, sizeof(FrameHeader) - sl.hdrDone};
      }
      if (sl.done < sl.len) {
        if (s.sealer && sl.buffer < 0) stage(s, sl, isSend);
        const size_t len = std::min(sl.len - sl.done, kTurnBytes - turn);
        iov[n++] = {sl.data + sl.done, len};
        turn += len;
      }
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(n);
    ssize_t r = isSend ? ::sendmsg(s.fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) : ::recvmsg(s.fd, &msg, MSG_DONTWAIT);
    if (r < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      if (errno == EINTR) continue;
      lost(isSend ? "sendmsg" : "recvmsg", errno);
    }
    if (r == 0 && !isSend) lost("recvmsg", 0);
    moved = true;
    size_t got = static_cast<size_t>(r);
    // Account the bytes slice by slice; a received header is checked the moment it is complete.
    while (got > 0 || (!q.empty() && q.front().hdrDone == sizeof(FrameHeader) && q.front().done == q.front().len)) {
      Slice& sl = q.front();
      size_t h = std::min(got, sizeof(FrameHeader) - sl.hdrDone);
      bool headerJustArrived = h > 0 && sl.hdrDone + h == sizeof(FrameHeader);
      sl.hdrDone += h;
      got -= h;
      if (headerJustArrived && !isSend) checkHeader(sl);
      size_t p = std::min(got, sl.len - sl.done);
      sl.done += p;
      got -= p;
      if (sl.hdrDone < sizeof(FrameHeader) || sl.done < sl.len) break;
      if (sl.buffer >= 0) unstage(s, sl, isSend);
      uint64_t msgId = sl.msg;
      q.pop_front();
      if (isSend) {
        sliceDone(sendPending_, sendsDone_, msgId);
      } else {
        sliceDone(recvPending_, recvsDone_, msgId);
      }
      if (q.empty()) break;
    }
    break;  // one syscall per direction per turn: the other direction (and the other sockets) go next
  }
  return moved;
}

bool TcpConnection::progress() {
  bool moved = false;
  for (Stream& s : streams_) {
    if (!s.sends.empty()) moved |= moveSlices(s, true);
    if (!s.recvs.empty()) moved |= moveSlices(s, false);
  }
  if (!moved && !rails_.interfaces.empty() && (++idleRounds_ & 15) == 0) checkInterfaces();
  return moved;
}

void TcpConnection::checkInterfaces() {
  const auto now = std::chrono::steady_clock::now();
  if (now - lastInterfaceCheck_ < std::chrono::milliseconds(500)) return;
  lastInterfaceCheck_ = now;
  for (size_t r = 0; r < rails_.interfaces.size(); ++r) {
    const std::string& name = rails_.interfaces[r];
    if (!watched_[r] || interfaceIsUp(name)) continue;
    throw Error(chorusSystemError,
                errorContext(rank_, peer_) + ": the link (" + description_ + ") stalled: interface " + name +
                    " (rail " + std::to_string(r + 1) + " of " + std::to_string(rails_.interfaces.size()) + ") is down",
                Failure::kLinkDown);
  }
}

size_t TcpConnection::pendingReceiveBytes() const {
  size_t most = 0;
  for (const Stream& s : streams_) {
    if (!s.recvs.empty()) most = std::max(most, s.recvs.front().len - s.recvs.front().done);
  }
  return most;
}

void TcpConnection::addPollFds(std::vector<pollfd>& fds) const {
  for (const Stream& cs : streams_) {
    short ev = 0;
    if (!cs.sends.empty()) ev |= POLLOUT;
    if (!cs.recvs.empty()) {
      ev |= POLLIN;
      // Wake when the front slice has (mostly) arrived, not at its first byte: one large copy instead of many.
      // Never above what the slice still needs, or the last bytes of a message would never wake us.
      const Slice& f = cs.recvs.front();
      size_t want = (sizeof(FrameHeader) - f.hdrDone) + (f.len - f.done);
      int lowat = static_cast<int>(std::max<size_t>(1, std::min(want, kWakeBytes)));
      if (lowat != cs.lowat) {
        // The low-water mark only tunes wakeups; if the kernel refuses it we still wake, just sooner.
        if (setsockopt(cs.fd, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof(lowat)) == 0) {
          const_cast<Stream&>(cs).lowat = lowat;
        }
      }
    }
    if (ev) fds.push_back(pollfd{cs.fd, ev, 0});
  }
}

}  // namespace chorus
