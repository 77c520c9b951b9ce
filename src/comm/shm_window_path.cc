#include "src/comm/shm_window_path.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "core/logging.h"
#include "src/comm/shared_allocations.h"

namespace chorus {

namespace {

constexpr uint32_t kCounterSlots = ShmWindowPath::kSigIdxBound * ShmWindowPath::kCtxBound;
constexpr uint64_t kNotShared = ~uint64_t{0};

// What one sender finds in a receiver's segment: the frames the receiver landed from it (its order check) and its
// counters, on cache lines of their own.
struct alignas(64) SenderBlock {
  std::atomic<uint64_t> landed;
  char pad[56];
  std::atomic<uint64_t> counts[kCounterSlots];
};
static_assert(std::atomic<uint64_t>::is_always_lock_free && std::atomic<uint32_t>::is_always_lock_free);

size_t segmentBytesFor(int nranks) { return 64 + sizeof(SenderBlock) * static_cast<size_t>(nranks); }

// A mapping of another process's descriptor through /proc, checked to be the file the peer announced (a pid of
// another namespace names some other process). -1 with *why on failure.
int openPeerFile(uint64_t pid, uint64_t fd, uint64_t dev, uint64_t ino, std::string* why) {
  const std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
  const int f = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (f < 0) {
    *why = "open " + path + ": " + std::strerror(errno);
    return -1;
  }
  struct stat st {};
  if (::fstat(f, &st) != 0 || static_cast<uint64_t>(st.st_dev) != dev || static_cast<uint64_t>(st.st_ino) != ino) {
    *why = path + " is not the file the peer announced (another pid namespace?)";
    ::close(f);
    return -1;
  }
  return f;
}

}  // namespace

struct ShmWindowPath::Segment {
  alignas(64) std::atomic<uint32_t> sleeping;  // the owner is (about to be) asleep in a wait
  SenderBlock* block(int sender) { return reinterpret_cast<SenderBlock*>(reinterpret_cast<char*>(this) + 64) + sender; }
};

ShmWindowPath::ShmWindowPath(int rank, int nranks)
    : rank_(rank),
      nranks_(nranks),
      segmentBytes_(segmentBytesFor(nranks)),
      peers_(static_cast<size_t>(nranks)),
      taken_(static_cast<size_t>(nranks) * kCounterSlots, 0) {
  const std::string what = errorContext(rank_, "windows: signal segment");
  fd_ = ::memfd_create("chorus-signals", MFD_CLOEXEC);
  if (fd_ < 0) throwSystemError(what, "memfd_create", errno);
  struct stat st {};
  if (::ftruncate(fd_, static_cast<off_t>(segmentBytes_)) != 0 || ::fstat(fd_, &st) != 0) {
    const int err = errno;
    ::close(fd_);
    throwSystemError(what, "ftruncate", err);
  }
  dev_ = static_cast<uint64_t>(st.st_dev);
  ino_ = static_cast<uint64_t>(st.st_ino);
  void* p = ::mmap(nullptr, segmentBytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (p == MAP_FAILED) {
    const int err = errno;
    ::close(fd_);
    throwSystemError(what, "mmap", err);
  }
  mine_ = static_cast<Segment*>(p);  // fresh pages: every counter starts at 0
}

ShmWindowPath::~ShmWindowPath() {
  for (auto& [id, parts] : windows_) {
    for (Mapping& m : parts) {
      if (m.base) ::munmap(m.base, m.bytes);
    }
  }
  for (PeerSide& s : peers_) {
    if (s.mapping.base) ::munmap(s.mapping.base, s.mapping.bytes);
  }
  ::munmap(mine_, segmentBytes_);
  ::close(fd_);
}

std::vector<uint64_t> ShmWindowPath::announce(const void* base, size_t bytes) const {
  std::vector<uint64_t> w{
      static_cast<uint64_t>(::getpid()), static_cast<uint64_t>(fd_), dev_, ino_, 0, kNotShared, 0, 0, 0, 0};
  SharedAllocation a;
  if (bytes > 0 && findShared(base, bytes, &a)) {
    w[5] = static_cast<uint64_t>(a.fd), w[6] = a.dev, w[7] = a.ino, w[8] = a.offset, w[9] = a.bytes;
  }
  return w;
}

void ShmWindowPath::attach(const Window& win, std::span<const uint64_t> all, const std::vector<bool>& sharedPeers) {
  const auto self = static_cast<uint64_t>(::getpid());
  if (!attached_) {
    attached_ = true;
    for (int q = 0; q < nranks_; ++q) {
      if (q == rank_ || !sharedPeers[static_cast<size_t>(q)]) continue;
      const uint64_t* w = &all[static_cast<size_t>(q) * kAnnounceWords];
      PeerSide& s = peers_[static_cast<size_t>(q)];
      // Mapped even from a peer of this process: the mapping outlives the peer's communicator.
      std::string why;
      const int f = openPeerFile(w[0], w[1], w[2], w[3], &why);
      void* p = f < 0 ? MAP_FAILED : ::mmap(nullptr, segmentBytes_, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
      if (f >= 0 && p == MAP_FAILED) why = std::string("mmap: ") + std::strerror(errno);
      if (f >= 0) ::close(f);
      if (p == MAP_FAILED) {
        CHORUS_INFO(rank_, "windows: peer " << q << ": its signal segment: " << why << "; signals travel as frames");
        continue;
      }
      s.segment = static_cast<Segment*>(p);
      s.mapping = Mapping{p, segmentBytes_, static_cast<char*>(p)};
    }
  }
  std::vector<Mapping> parts(static_cast<size_t>(nranks_));
  std::string mapped;
  for (int q = 0; q < nranks_; ++q) {
    const uint64_t* w = &all[static_cast<size_t>(q) * kAnnounceWords];
    const uint64_t size = win.sizes[static_cast<size_t>(q)];
    // Only peers whose signal segment is mapped here: their files are reachable, and a put's signal can follow it
    // as a counter.
    if (q == rank_ || !peers_[static_cast<size_t>(q)].segment || w[5] == kNotShared || size == 0) continue;
    Mapping& m = parts[static_cast<size_t>(q)];
    if (w[0] == self) {
      m.at = reinterpret_cast<char*>(win.bases[static_cast<size_t>(q)]);
    } else {
      std::string why;
      const int f = openPeerFile(w[0], w[5], w[6], w[7], &why);
      const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
      const uint64_t from = w[8] / page * page;
      void* p = MAP_FAILED;
      if (f >= 0) {
        p = ::mmap(nullptr, w[8] - from + size, PROT_READ | PROT_WRITE, MAP_SHARED, f, static_cast<off_t>(from));
        if (p == MAP_FAILED) why = std::string("mmap: ") + std::strerror(errno);
        ::close(f);
      }
      if (p == MAP_FAILED) {
        CHORUS_INFO(rank_,
                    "windows: peer " << q << ": window " << win.id << ": " << why << "; its puts travel as frames");
        continue;
      }
      m = Mapping{p, w[8] - from + size, static_cast<char*>(p) + (w[8] - from)};
    }
    if (!mapped.empty()) mapped += ',';  // (appends: g++ 12 -O3 misreads `"" + string` as overlapping, -Wrestrict)
    mapped += std::to_string(q);
  }
  if (!mapped.empty()) {
    CHORUS_INFO(rank_, "windows: window " << win.id << ": puts to rank(s) " << mapped << " by shm mapped window");
    windows_[win.id] = std::move(parts);
  }
}

void ShmWindowPath::detach(uint64_t windowId) {
  auto it = windows_.find(windowId);
  if (it == windows_.end()) return;
  for (Mapping& m : it->second) {
    if (m.base) ::munmap(m.base, m.bytes);
  }
  windows_.erase(it);
}

bool ShmWindowPath::put(const Window& win, int peer, const void* src, uint64_t bytes, uint64_t offset,
                        uint64_t framesSent) {
  auto it = windows_.find(win.id);
  if (it == windows_.end()) return false;
  char* at = it->second[static_cast<size_t>(peer)].at;
  // Every frame sent before must have landed, its bytes with it (acquire: they happen before this store).
  if (!at || segmentOf(peer)->block(rank_)->landed.load(std::memory_order_acquire) != framesSent) return false;
  if (bytes > 0) std::memcpy(at + offset, src, bytes);
  return true;
}

ShmWindowPath::Raised ShmWindowPath::signal(int peer, uint32_t sigIdx, uint32_t ctx, uint64_t framesSent) {
  Segment* s = segmentOf(peer);
  if (!s || sigIdx >= kSigIdxBound || ctx >= kCtxBound) return Raised::kNo;
  SenderBlock* b = s->block(rank_);
  if (b->landed.load(std::memory_order_acquire) != framesSent) return Raised::kNo;
  // seq_cst, as is the waiter's flag-then-counter: either it sees this count or this sees its flag.
  b->counts[sigIdx * kCtxBound + ctx].fetch_add(1, std::memory_order_seq_cst);
  return s->sleeping.load(std::memory_order_seq_cst) ? Raised::kYesPeerSleeps : Raised::kYes;
}

void ShmWindowPath::landed(int peer, uint64_t frames) {
  mine_->block(peer)->landed.store(frames, std::memory_order_release);
}

uint64_t ShmWindowPath::take(int peer, uint32_t sigIdx, uint32_t ctx) {
  if (sigIdx >= kSigIdxBound || ctx >= kCtxBound || peer == rank_) return 0;
  const uint32_t slot = sigIdx * kCtxBound + ctx;
  const uint64_t now = mine_->block(peer)->counts[slot].load(std::memory_order_seq_cst);
  uint64_t& taken = taken_[static_cast<size_t>(peer) * kCounterSlots + slot];
  const uint64_t fresh = now - taken;
  taken = now;
  return fresh;
}

void ShmWindowPath::sleeping(bool on) { mine_->sleeping.store(on ? 1 : 0, std::memory_order_seq_cst); }

std::string ShmWindowPath::describe() const {
  std::string out;
  for (const auto& [id, parts] : windows_) {
    for (const Mapping& m : parts) {
      if (m.at && out.empty()) out = "shm mapped window";
    }
  }
  for (const PeerSide& s : peers_) {
    if (s.segment) return out + (out.empty() ? "" : ", ") + "shm signal counters";
  }
  return out;
}

}  // namespace chorus
