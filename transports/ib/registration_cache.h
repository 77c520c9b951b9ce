// Memory regions for the caller's buffers, registered once and found again (UCX's rcache, Open MPI's grdma): keyed
// by page range, least recently used first out, bounded in entries and bytes. A region in use by posted work is
// pinned and never deregistered under it. Used only where a freed buffer cannot leave a stale region behind: with
// on-demand paging (the adapter faults pages in and the kernel invalidates them on unmap), or for ranges the caller
// invalidates explicitly. docs/ib.md says when the ib transport uses it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <map>

struct ibv_mr;

namespace chorus {

class RegistrationCache {
 public:
  struct Limits {
    size_t maxEntries = 1024;
    size_t maxBytes = size_t{16} << 30;
  };
  struct Stats {
    uint64_t hits = 0, misses = 0, evictions = 0, invalidations = 0;
    size_t entries = 0, bytes = 0;
  };
  // A region found or made for a range; release() it once the work using it completed.
  struct Handle {
    ibv_mr* mr = nullptr;
    uint64_t key = 0;  // the entry (0: a one-off region, deregistered at release)
  };

  // reg: registers [addr, addr+len) (null on failure, errno set); dereg: deregisters. identity (optional): the
  // allocation an address belongs to (DeviceApi::allocationId); a cached region whose identity changed belonged to
  // a buffer freed since, and is dropped instead of used.
  RegistrationCache(std::function<ibv_mr*(void*, size_t)> reg, std::function<void(ibv_mr*)> dereg, Limits limits,
                    std::function<uint64_t(const void*)> identity = {});
  ~RegistrationCache();
  RegistrationCache(const RegistrationCache&) = delete;
  RegistrationCache& operator=(const RegistrationCache&) = delete;

  // A region covering [p, p+n), pinned: a cached one, or a new one over the range's pages. Null mr on failure.
  Handle acquire(const void* p, size_t n);
  // The cached region covering [p, p+n), pinned, if there is one; never registers (a null mr otherwise).
  Handle lookup(const void* p, size_t n);
  void release(const Handle& h);
  // Forgets every region overlapping [p, p+n) (the memory was freed or remapped); pinned ones go at release.
  void invalidate(const void* p, size_t n);
  const Stats& stats() const { return stats_; }

 private:
  struct Entry {
    uintptr_t begin, end;
    ibv_mr* mr;
    int pins = 0;
    bool stale = false;  // invalidated while pinned
    uint64_t identity = 0;
    std::list<uint64_t>::iterator lru;
  };
  void drop(std::map<uint64_t, Entry>::iterator it);
  void evictBeyondLimits();

  std::function<ibv_mr*(void*, size_t)> reg_;
  std::function<void(ibv_mr*)> dereg_;
  std::function<uint64_t(const void*)> identity_;
  Limits limits_;
  std::map<uintptr_t, uint64_t> byBegin_;  // live, non-overlapping entries by first byte
  std::map<uint64_t, Entry> entries_;      // by key (stale ones too, until released)
  std::list<uint64_t> lru_;                // live entries, least recently used first
  uint64_t nextKey_ = 1;
  Stats stats_;
};

}  // namespace chorus
