// The registration cache: hits for repeated buffers, one region per page range, bounded, invalidated on request,
// and never deregistering a region that posted work still uses.
#ifdef CHORUS_HAVE_VERBS
#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <memory>
#include <set>
#include <vector>

#include "transports/ib/registration_cache.h"

namespace chorus::test {
namespace {

// Registrations as fake regions, so that the test sees every register and deregister.
struct FakeVerbs {
  std::vector<std::unique_ptr<ibv_mr>> made;
  std::set<ibv_mr*> live;
  int registrations = 0;
  RegistrationCache make(RegistrationCache::Limits limits = {}) {
    return RegistrationCache(
        [this](void* p, size_t n) {
          made.push_back(std::make_unique<ibv_mr>());
          made.back()->addr = p;
          made.back()->length = n;
          live.insert(made.back().get());
          ++registrations;
          return made.back().get();
        },
        [this](ibv_mr* mr) { EXPECT_EQ(live.erase(mr), 1u) << "deregistered twice or never registered"; }, limits);
  }
};

alignas(4096) char memory[64 * 4096];

TEST(RegistrationCacheTest, RepeatedBuffersHitAndRangesArePageAligned) {
  FakeVerbs v;
  {
    RegistrationCache cache = v.make();
    auto h = cache.acquire(memory + 100, 5000);
    ASSERT_NE(h.mr, nullptr);
    EXPECT_EQ(h.mr->addr, memory);
    EXPECT_EQ(h.mr->length, 2 * 4096u);
    cache.release(h);
    auto again = cache.acquire(memory + 200, 4000);  // inside the same pages
    EXPECT_EQ(again.mr, h.mr);
    cache.release(again);
    EXPECT_EQ(cache.stats().hits, 1u);
    EXPECT_EQ(cache.stats().misses, 1u);
    // A range that reaches past it: one region over both, the old one gone.
    auto wider = cache.acquire(memory + 4096, 3 * 4096);
    EXPECT_EQ(wider.mr->addr, memory);
    EXPECT_EQ(wider.mr->length, 4 * 4096u);
    cache.release(wider);
    EXPECT_EQ(v.live.size(), 1u);
  }
  EXPECT_TRUE(v.live.empty());  // the destructor deregisters what is left
}

TEST(RegistrationCacheTest, BoundedLeastRecentlyUsedFirst) {
  FakeVerbs v;
  RegistrationCache::Limits limits;
  limits.maxEntries = 2;
  RegistrationCache cache = v.make(limits);
  auto a = cache.acquire(memory, 10);
  cache.release(a);
  auto b = cache.acquire(memory + 8 * 4096, 10);
  cache.release(b);
  cache.release(cache.acquire(memory, 10));  // a is now the most recent
  auto c = cache.acquire(memory + 16 * 4096, 10);
  cache.release(c);
  EXPECT_EQ(cache.stats().evictions, 1u);
  EXPECT_EQ(v.live.count(b.mr), 0u);  // b went, a stayed
  EXPECT_EQ(v.live.count(a.mr), 1u);
}

TEST(RegistrationCacheTest, InvalidationDropsRegionsButNotUnderPostedWork) {
  FakeVerbs v;
  RegistrationCache cache = v.make();
  auto a = cache.acquire(memory, 10);  // still pinned: work in flight
  auto b = cache.acquire(memory + 8 * 4096, 10);
  cache.release(b);
  cache.invalidate(memory, 16 * 4096);  // the buffers were freed
  EXPECT_EQ(cache.stats().invalidations, 2u);
  EXPECT_EQ(v.live.count(b.mr), 0u);
  EXPECT_EQ(v.live.count(a.mr), 1u);  // deregistered only once its work completes
  cache.release(a);
  EXPECT_EQ(v.live.count(a.mr), 0u);
  auto fresh = cache.acquire(memory, 10);  // a miss: a new region for whatever is mapped there now
  EXPECT_EQ(cache.stats().misses, 3u);
  cache.release(fresh);
}

TEST(RegistrationCacheTest, OverlapWithPinnedRegionGetsAOneOff) {
  FakeVerbs v;
  RegistrationCache cache = v.make();
  auto pinned = cache.acquire(memory, 4096);
  auto other = cache.acquire(memory + 2048, 8192);  // overlaps the pinned one, reaches past it
  ASSERT_NE(other.mr, nullptr);
  EXPECT_NE(other.mr, pinned.mr);
  EXPECT_EQ(other.key, 0u);
  cache.release(other);
  EXPECT_EQ(v.live.count(other.mr), 0u);  // one-offs go at release
  cache.release(pinned);
  EXPECT_EQ(v.live.count(pinned.mr), 1u);  // cached
}

}  // namespace
}  // namespace chorus::test
#endif  // CHORUS_HAVE_VERBS
