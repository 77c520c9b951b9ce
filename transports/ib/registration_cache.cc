#include "transports/ib/registration_cache.h"

#include <unistd.h>

#include <algorithm>

namespace chorus {
namespace {

uintptr_t pageSize() {
  static const uintptr_t size = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  return size;
}

}  // namespace

RegistrationCache::RegistrationCache(std::function<ibv_mr*(void*, size_t)> reg, std::function<void(ibv_mr*)> dereg,
                                     Limits limits, std::function<uint64_t(const void*)> identity)
    : reg_(std::move(reg)), dereg_(std::move(dereg)), identity_(std::move(identity)), limits_(limits) {}

RegistrationCache::~RegistrationCache() {
  for (auto& [key, e] : entries_) dereg_(e.mr);
}

RegistrationCache::Handle RegistrationCache::lookup(const void* p, size_t n) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  auto it = byBegin_.upper_bound(a);
  if (it == byBegin_.begin()) return Handle{};
  Entry& e = entries_.at(std::prev(it)->second);
  if (e.begin > a || a + n > e.end) return Handle{};
  ++stats_.hits;
  ++e.pins;
  lru_.splice(lru_.end(), lru_, e.lru);
  return Handle{e.mr, std::prev(it)->second};
}

RegistrationCache::Handle RegistrationCache::acquire(const void* p, size_t n) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  const uintptr_t begin = a / pageSize() * pageSize();
  const uintptr_t end = (a + std::max<size_t>(n, 1) + pageSize() - 1) / pageSize() * pageSize();
  const uint64_t identity = identity_ ? identity_(p) : 0;
  auto it = byBegin_.upper_bound(a);
  if (it != byBegin_.begin()) {
    Entry& e = entries_.at(std::prev(it)->second);
    if (e.begin <= a && a + n <= e.end && e.identity != identity) {
      ++stats_.invalidations;  // the buffer it was made for is gone; this is another at the same address
      drop(entries_.find(std::prev(it)->second));
    }
  }
  if (Handle h = lookup(p, n); h.mr) return h;
  ++stats_.misses;
  // One region over the union of this range and the unpinned ones it overlaps, so that entries never overlap.
  uintptr_t lo = begin, hi = end;
  bool pinnedOverlap = false;
  std::vector<uint64_t> merged;
  for (auto o = byBegin_.lower_bound(0); o != byBegin_.end(); ++o) {
    const Entry& e = entries_.at(o->second);
    if (e.end <= begin || e.begin >= end) continue;
    if (e.pins > 0) pinnedOverlap = true;
    merged.push_back(o->second);
  }
  if (pinnedOverlap) {
    // Work in flight holds an overlapping region: register this range alone, for this use only.
    ibv_mr* mr = reg_(reinterpret_cast<void*>(begin), end - begin);
    return Handle{mr, 0};
  }
  for (uint64_t key : merged) {
    const Entry& e = entries_.at(key);
    lo = std::min(lo, e.begin);
    hi = std::max(hi, e.end);
  }
  for (uint64_t key : merged) drop(entries_.find(key));
  ibv_mr* mr = reg_(reinterpret_cast<void*>(lo), hi - lo);
  if (!mr) return Handle{};
  const uint64_t key = nextKey_++;
  lru_.push_back(key);
  entries_.emplace(key, Entry{lo, hi, mr, 1, false, identity, std::prev(lru_.end())});
  byBegin_[lo] = key;
  ++stats_.entries;
  stats_.bytes += hi - lo;
  evictBeyondLimits();
  return Handle{mr, key};
}

void RegistrationCache::release(const Handle& h) {
  if (!h.mr) return;
  if (h.key == 0) {
    dereg_(h.mr);
    return;
  }
  auto it = entries_.find(h.key);
  if (it == entries_.end()) return;
  if (--it->second.pins == 0 && it->second.stale) {
    dereg_(it->second.mr);
    entries_.erase(it);
    return;
  }
  evictBeyondLimits();
}

void RegistrationCache::drop(std::map<uint64_t, Entry>::iterator it) {
  Entry& e = it->second;
  byBegin_.erase(e.begin);
  lru_.erase(e.lru);
  --stats_.entries;
  stats_.bytes -= e.end - e.begin;
  if (e.pins > 0) {
    e.stale = true;  // deregistered when the work using it completes
    return;
  }
  dereg_(e.mr);
  entries_.erase(it);
}

void RegistrationCache::invalidate(const void* p, size_t n) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p), b = a + n;
  std::vector<uint64_t> gone;
  for (auto& [begin, key] : byBegin_) {
    const Entry& e = entries_.at(key);
    if (e.begin < b && a < e.end) gone.push_back(key);
  }
  for (uint64_t key : gone) {
    ++stats_.invalidations;
    drop(entries_.find(key));
  }
}

void RegistrationCache::evictBeyondLimits() {
  auto it = lru_.begin();
  while ((stats_.entries > limits_.maxEntries || stats_.bytes > limits_.maxBytes) && it != lru_.end()) {
    auto e = entries_.find(*it);
    ++it;
    if (e->second.pins > 0) continue;
    ++stats_.evictions;
    drop(e);
  }
}

}  // namespace chorus
