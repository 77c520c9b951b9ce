#include "transports/shm/shm_transport.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <random>

#include "core/byte_text.h"
#include "core/deadline_wait.h"
#include "core/error.h"
#include "core/logging.h"
#include "core/security/channel_auth.h"
#include "transports/shm/cma_calibration.h"
#include "transports/shm/shm_handshake.h"
#include "transports/shm/shm_layout.h"
#include "transports/shm/shm_segment.h"

namespace chorus {

namespace {

// What /proc/self/ns/<kind> links to ("ipc:[4026531839]"), or "" when unreadable.
std::string namespaceOf(const char* kind) {
  char target[128];
  ssize_t n = ::readlink((std::string("/proc/self/ns/") + kind).c_str(), target, sizeof(target) - 1);
  if (n <= 0) return "";
  return std::string(target, static_cast<size_t>(n));
}

uint64_t randomWord() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

// A word at a fixed address with a value only this process knows: a peer that can read it back through
// process_vm_readv can read this process's buffers too (same user, and ptrace rules such as Yama allow it).
const uint64_t& cmaProbeWord() {
  static const uint64_t word = randomWord() | 1;
  return word;
}

std::string hex(uint64_t v) {
  char s[32];
  std::snprintf(s, sizeof(s), "%llx", static_cast<unsigned long long>(v));
  return s;
}

// Whether this process is the first of the job on this host (its network namespace: where shared memory reaches)
// to say `what`: a warning about /dev/shm is the host's, said once for all its ranks, not once by each. The first
// binds an abstract socket named after the job and the note, and holds it while the process lives.
bool firstOnThisHost(const std::string& jobKey, const char* what) {
  static std::mutex mutex;
  static std::vector<int> held;
  std::string ignored;
  const int fd = shmListen("chorus-note-" + hex(shmJobHash(jobKey)) + "-" + what, &ignored);
  if (fd < 0) return false;
  std::lock_guard<std::mutex> g(mutex);
  held.push_back(fd);
  return true;
}

// "/dev/shm (a 64 MiB tmpfs, 3 MiB free)".
std::string devShmText() {
  struct statvfs vfs {};
  if (::statvfs("/dev/shm", &vfs) != 0) return "/dev/shm";
  return "/dev/shm (" + formatBytes(static_cast<size_t>(vfs.f_blocks) * vfs.f_frsize) + ", " +
         formatBytes(static_cast<size_t>(vfs.f_bavail) * vfs.f_frsize) + " free)";
}

std::string entry(const PeerCard& card, const char* key) {
  auto it = card.entries.find(key);
  return it == card.entries.end() ? std::string() : it->second;
}

}  // namespace

// A connection this rank dialed, waiting for the peer's hello in reply.
struct ShmTransport::Dialed {
  int peer;
  ShmSegment inbound;
  ShmHelloReader reader;
};

// How long an accepted connection may take to prove the secret.
constexpr double kAcceptAuthSeconds = 2.0;

ShmTransport::ShmTransport(int rank, std::string jobKey, size_t ringBytes, ShmCma cma, ShmTuning tuning)
    : rank_(rank),
      jobKey_(std::move(jobKey)),
      ringBytes_(ringBytes),
      cma_(cma != ShmCma::kOff),
      cmaAlways_(cma == ShmCma::kAlways),
      tuning_(tuning) {
  if (cma == ShmCma::kWhenFaster) {
    const CmaSpeed& speed = cmaSpeed();
    cma_ = speed.worthIt;
    CHORUS_INFO(rank_, "shm: process_vm_readv copies " << std::lround(speed.cmaGBs) << " GB/s, memcpy "
                                                       << std::lround(speed.memcpyGBs)
                                                       << " GB/s here: large messages go "
                                                       << (cma_ ? "by process_vm_readv" : "through the shared ring"));
  }
}

ShmTransport::~ShmTransport() { closeListener(); }

void ShmTransport::closeListener() {
  if (listenFd_ >= 0) ::close(listenFd_);
  listenFd_ = -1;
}

void ShmTransport::describeSelf(PeerCard& card) {
  // One pair's inbound segment: the least this rank needs (each further peer on the host needs as much again).
  const size_t need = shm::segmentBytes(ringBytes_);
  const std::string ipc = namespaceOf("ipc"), net = namespaceOf("net");
  std::string why;
  bool usable = devShmUsable(need, &why);
  if (usable && (ipc.empty() || net.empty())) {
    usable = false;
    why = "/proc/self/ns is unreadable, so ranks sharing this host's namespaces cannot be told apart";
  }
  std::string sockName;
  if (usable) {
    static std::atomic<uint64_t> counter{0};
    sockName =
        "chorus-shm-" + std::to_string(getpid()) + "-" + std::to_string(counter.fetch_add(1)) + "-" + hex(randomWord());
    listenFd_ = shmListen(sockName, &why);
    usable = listenFd_ >= 0;
  }
  card.entries["shm.ok"] = usable ? "1" : "0";
  if (!usable) {
    // Every rank of the host finds the same; the first says it for all (the others at INFO).
    static std::atomic<bool> warned{false};
    const bool first = !warned.exchange(true) && firstOnThisHost(jobKey_, "unusable");
    CHORUS_LOG(first ? LogLevel::kWarn : LogLevel::kInfo, rank_,
               "shared-memory transport unusable on this host: "
                   << why << "; " << devShmText() << " (each peer on this host needs " << formatBytes(need) << " for a "
                   << formatBytes(ringBytes_)
                   << " CHORUS_SHM_BUFFER ring): the ranks of this host talk over TCP instead. "
                   << "To fix: give /dev/shm more room (docker run --shm-size=1g, or a larger tmpfs) "
                   << "or lower CHORUS_SHM_BUFFER");
    return;
  }
  card.entries["shm.ns"] = ipc + " " + net;
  card.entries["shm.uid"] = std::to_string(geteuid());
  card.entries["shm.pidns"] = namespaceOf("pid");
  card.entries["shm.sock"] = sockName;
  if (cma_) card.entries["shm.cma"] = hex(reinterpret_cast<uintptr_t>(&cmaProbeWord())) + ":" + hex(cmaProbeWord());
  CHORUS_INFO(rank_, "shm transport listening on @" << sockName << ", " << formatBytes(ringBytes_)
                                                    << " ring per direction"
                                                    << (cma_ ? ", process_vm_readv allowed" : ""));
}

bool ShmTransport::canConnect(const PeerCard& self, const PeerCard& peer) const {
  // Abstract unix sockets are per network namespace, and /dev/shm goes with the IPC one; the same user keeps
  // the segment and socket permissions simple. Every input is in both cards, so both ends agree.
  return entry(self, "shm.ok") == "1" && entry(peer, "shm.ok") == "1" && self.hostId == peer.hostId &&
         entry(self, "shm.ns") == entry(peer, "shm.ns") && entry(self, "shm.uid") == entry(peer, "shm.uid") &&
         !entry(peer, "shm.sock").empty();
}

bool ShmTransport::canReadMemoryOf(const PeerCard& self, const PeerCard& peer) const {
  const std::string probe = entry(peer, "shm.cma");
  // process_vm_readv takes a pid of this pid namespace; the card's pid is of the peer's.
  if (!cma_ || probe.empty() || entry(self, "shm.pidns").empty() ||
      entry(self, "shm.pidns") != entry(peer, "shm.pidns")) {
    return false;
  }
  size_t colon = probe.find(':');
  if (colon == std::string::npos) return false;
  uint64_t address = std::strtoull(probe.c_str(), nullptr, 16);
  uint64_t cookie = std::strtoull(probe.c_str() + colon + 1, nullptr, 16);
  uint64_t seen = 0;
  iovec local{&seen, sizeof(seen)};
  iovec remote{reinterpret_cast<void*>(address), sizeof(seen)};
  ssize_t r = ::process_vm_readv(peer.pid, &local, 1, &remote, 1, 0);
  if (r == static_cast<ssize_t>(sizeof(seen)) && seen == cookie) return true;
  CHORUS_INFO(rank_, "shm: cannot read rank " << peer.rank << "'s memory (process_vm_readv: "
                                              << (r < 0 ? std::strerror(errno) : "wrong word")
                                              << "): its large messages come through the shared ring");
  return false;
}

namespace {
constexpr size_t kSmallestRing = 64 << 10;  // the CHORUS_SHM_BUFFER floor

size_t devShmFree() {
  struct statvfs vfs {};
  if (::statvfs("/dev/shm", &vfs) != 0) return 0;
  return static_cast<size_t>(vfs.f_bavail) * vfs.f_frsize;
}
}  // namespace

// /dev/shm is shared by every rank of the host: n ranks there make n(n-1) segments. When they would not all fit
// at CHORUS_SHM_BUFFER, smaller rings (down to 64 KiB) keep the pairs on shared memory, slower but working.
size_t ShmTransport::ringFor(size_t localPeers) const {
  const size_t segments = (localPeers + 1) * localPeers;
  const size_t free = devShmFree();
  size_t ring = ringBytes_;
  while (ring / 2 >= kSmallestRing && segments * shm::segmentBytes(ring) > free) ring /= 2;
  if (ring < ringBytes_) {
    // Every rank of the host shrinks alike; the first says it for all (the others at INFO).
    static std::atomic<bool> warned{false};
    const bool first = !warned.exchange(true) && firstOnThisHost(jobKey_, "rings");
    CHORUS_LOG(first ? LogLevel::kWarn : LogLevel::kInfo, rank_,
               "shm: " << localPeers + 1 << " ranks on this host need "
                       << formatBytes(segments * shm::segmentBytes(ringBytes_)) << " of /dev/shm for "
                       << formatBytes(ringBytes_) << " rings (CHORUS_SHM_BUFFER), but " << devShmText()
                       << " holds less: using " << (ring >> 10) << " KiB rings, which is slower. "
                       << "To fix: give /dev/shm more room (docker run --shm-size=1g) or lower CHORUS_SHM_BUFFER");
  }
  return ring;
}

// A segment with a ring of `ring` bytes, or half that (and so on, to 64 KiB) when /dev/shm fills up meanwhile.
ShmSegment ShmTransport::createInbound(size_t ring, const std::string& context) const {
  for (;; ring /= 2) {
    bool noSpace = false;
    const bool lastTry = ring / 2 < kSmallestRing;
    ShmSegment s = ShmSegment::create(ring, context, lastTry ? nullptr : &noSpace);
    if (!noSpace) return s;
  }
}

// Why the process at the other end of a pair's socket is not rank `card.rank` ("" when it may be).
std::string ShmTransport::credentialProblem(const ucred* cred, const PeerCard& card, const PeerCard& self) const {
  if (!cred) return "no peer credentials (SO_PEERCRED)";
  if (cred->uid != geteuid()) return "it runs as uid " + std::to_string(cred->uid);
  // Pids compare only within one pid namespace.
  if (entry(card, "shm.pidns") == entry(self, "shm.pidns") && cred->pid != card.pid) {
    return "its pid " + std::to_string(cred->pid) + " is not rank " + std::to_string(card.rank) + "'s " +
           std::to_string(card.pid);
  }
  return "";
}

// Why an incoming hello is refused ("" when accepted).
std::string ShmTransport::refusal(const ShmHello& h, const ucred* cred, const std::vector<PeerCard>& peers,
                                  const PeerCard& self) const {
  if (h.jobHash != shmJobHash(jobKey_)) return "hello for another job or communicator";
  if (h.to != rank_) return "hello for rank " + std::to_string(h.to);
  for (const PeerCard& p : peers) {
    if (p.rank == h.from && h.from < rank_) return credentialProblem(cred, p, self);
  }
  return "unexpected hello from rank " + std::to_string(h.from);
}

std::vector<std::unique_ptr<Connection>> ShmTransport::connectAll(const PeerCard& self,
                                                                  const std::vector<PeerCard>& peers,
                                                                  Deadline deadline) {
  auto context = [&](int peer) { return errorContext(rank_, peer, "shm connect"); };
  std::map<int, bool> readable;  // this rank can process_vm_readv that peer
  std::map<int, ShmPairSetup> ready;
  std::vector<const PeerCard*> ordered;
  for (const PeerCard& p : peers) {
    readable[p.rank] = canReadMemoryOf(self, p);
    ordered.push_back(&p);
  }
  std::sort(ordered.begin(), ordered.end(), [](const PeerCard* a, const PeerCard* b) { return a->rank < b->rank; });
  const size_t ring = peers.empty() ? ringBytes_ : ringFor(peers.size());
  auto finish = [&](int peer, int socketFd, ShmSegment inbound, ShmSegment outbound, const ShmHello& theirs) {
    if (theirs.ringBytes != outbound.ringBytes()) {
      ::close(socketFd);
      throw Error(chorusRemoteError, context(peer) + ": hello and segment disagree on the ring size");
    }
    ShmPairSetup s;
    s.rank = rank_;
    s.peer = peer;
    s.socketFd = socketFd;
    s.inbound = std::move(inbound);
    s.outbound = std::move(outbound);
    for (const PeerCard* p : ordered) {
      if (p->rank == peer && readable[peer]) s.peerPid = p->pid;
      // Ranks as threads of one process (one pid in one pid namespace) may store into each other's memory.
      if (p->rank == peer) {
        s.peerInThisProcess = p->pid == static_cast<int>(getpid()) && !entry(self, "shm.pidns").empty() &&
                              entry(self, "shm.pidns") == entry(*p, "shm.pidns");
      }
    }
    s.cmaSend = cma_ && theirs.canReadYou == 1;
    s.cmaWrites = cmaAlways_;
    s.tuning = tuning_;
    ready.emplace(peer, std::move(s));
  };

  // Dial every higher rank: connect, send our hello with our inbound segment; its reply is read below. Nothing
  // here waits for the peer to reach connectAll (the kernel queues the connection). A blocking authentication
  // would wait for the peer's accept loop: dialing only upward keeps that free of cycles (the top rank only accepts).
  std::vector<Dialed> dialed;
  for (const PeerCard* p : ordered) {
    if (p->rank <= rank_) continue;
    const std::string ctx = context(p->rank);
    ShmSegment inbound = createInbound(ring, ctx);
    Dialed d{p->rank, std::move(inbound), ShmHelloReader(shmDial(entry(*p, "shm.sock"), deadline, ctx))};
    ucred cred{};
    std::string why = credentialProblem(shmPeerCredentials(d.reader.fd(), &cred) ? &cred : nullptr, *p, self);
    if (!why.empty()) throw Error(chorusRemoteError, ctx + ": the process listening at its address is not it: " + why);
    if (!secret_.empty()) authenticateChannel(d.reader.fd(), secret_, jobKey_, ChannelRole::kInitiator, deadline, ctx);
    ShmHello hello{
        kShmHelloMagic,       kShmHelloVersion, shmJobHash(jobKey_), rank_, p->rank, readable[p->rank] ? 1u : 0u, 0,
        d.inbound.ringBytes()};
    shmSendHello(d.reader.fd(), hello, d.inbound.fd(), deadline, ctx);
    d.inbound.closeFd();
    dialed.push_back(std::move(d));
  }

  // Accept the lower ranks and read the higher ranks' replies, as bytes arrive: a silent or malformed stranger
  // on our abstract address is refused (and logged) without holding anything up.
  std::vector<ShmHelloReader> incoming;
  while (ready.size() < peers.size()) {
    throwIfExpired(deadline, [&] {
      std::vector<int> missing;
      for (const PeerCard* p : ordered) {
        if (!ready.count(p->rank)) missing.push_back(p->rank);
      }
      return errorContext(rank_, "shm connection setup") + ": timed out waiting for ranks " + formatRankList(missing);
    });
    std::vector<pollfd> fds{{listenFd_, POLLIN, 0}};
    for (auto& r : incoming) fds.push_back({r.fd(), POLLIN, 0});
    for (auto& d : dialed) fds.push_back({d.reader.fd(), POLLIN, 0});
    pollWithin(fds, deadline, 100, errorContext(rank_, "shm connection setup"));
    for (;;) {
      int fd = ::accept4(listenFd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) break;
      if (!secret_.empty()) {
        // Bounded per connection, so that a silent stranger cannot hold up the job's own peers for long.
        Deadline authBy = Deadline::after(kAcceptAuthSeconds);
        if (deadline.at() < authBy.at()) authBy = deadline;
        try {
          authenticateChannel(fd, secret_, jobKey_, ChannelRole::kAcceptor, authBy, errorContext(rank_, "shm accept"));
        } catch (const AuthenticationError& e) {
          CHORUS_WARN(rank_, "shm: refused a connection: " << e.what());
          ::close(fd);
          continue;
        }
      }
      incoming.emplace_back(fd);
    }
    for (size_t i = 0; i < incoming.size();) {
      std::string why;
      bool complete = incoming[i].step(&why);
      if (!complete && why.empty()) {
        ++i;
        continue;
      }
      ucred cred{};
      bool haveCred = shmPeerCredentials(incoming[i].fd(), &cred);
      if (complete) {
        const ShmHello& h = incoming[i].hello();
        why = refusal(h, haveCred ? &cred : nullptr, peers, self);
        if (why.empty() && ready.count(h.from)) why = "a second hello from rank " + std::to_string(h.from);
        if (why.empty()) {
          const std::string ctx = context(h.from);
          try {
            ShmSegment outbound = ShmSegment::adopt(incoming[i].releasePassedFd(), ctx);
            ShmSegment inbound = createInbound(ring, ctx);
            ShmHello reply{
                kShmHelloMagic,     kShmHelloVersion, shmJobHash(jobKey_), rank_, h.from, readable[h.from] ? 1u : 0u, 0,
                inbound.ringBytes()};
            shmSendHello(incoming[i].fd(), reply, inbound.fd(), deadline, ctx);
            inbound.closeFd();
            ShmHello theirs = h;
            finish(theirs.from, incoming[i].releaseSocket(), std::move(inbound), std::move(outbound), theirs);
          } catch (const Error& e) {
            if (e.code() != chorusRemoteError) throw;
            why = e.what();
          }
        }
      }
      if (!why.empty()) {
        CHORUS_WARN(rank_, "shm: refused a connection (pid " << (haveCred ? std::to_string(cred.pid) : "?") << ", uid "
                                                             << (haveCred ? std::to_string(cred.uid) : "?")
                                                             << "): " << why);
      }
      incoming.erase(incoming.begin() + static_cast<long>(i));
    }
    for (size_t i = 0; i < dialed.size();) {
      std::string why;
      Dialed& d = dialed[i];
      if (!d.reader.step(&why)) {
        if (!why.empty()) throw Error(chorusRemoteError, context(d.peer) + ": its reply: " + why);
        ++i;
        continue;
      }
      const ShmHello& h = d.reader.hello();
      if (h.jobHash != shmJobHash(jobKey_) || h.from != d.peer || h.to != rank_) {
        throw Error(chorusRemoteError, context(d.peer) + ": its reply names another job or rank");
      }
      const std::string ctx = context(d.peer);
      ShmSegment outbound = ShmSegment::adopt(d.reader.releasePassedFd(), ctx);
      ShmHello theirs = h;
      finish(d.peer, d.reader.releaseSocket(), std::move(d.inbound), std::move(outbound), theirs);
      dialed.erase(dialed.begin() + static_cast<long>(i));
    }
  }
  closeListener();
  std::vector<std::unique_ptr<Connection>> out;
  for (auto& [peer, setup] : ready) out.push_back(std::make_unique<ShmConnection>(std::move(setup)));
  return out;
}

}  // namespace chorus
