// Which memory the ib transport sends without copying: on a device with on-demand paging any large buffer (its
// region cached), elsewhere only ranges registered through registerMemory (chorusCommRegister) until deregistered.
#ifdef CHORUS_HAVE_VERBS
#include <gtest/gtest.h>

#include <vector>

#include "tests/unit/device_test_support.h"
#include "tests/unit/ib_pair.h"
#include "transports/device/staged_connection.h"

namespace chorus::test {
namespace {

// Sends `bytes` from a to b and checks them; returns the registration cache's statistics after.
RegistrationCache::Stats sendOnce(std::pair<std::unique_ptr<Connection>, std::unique_ptr<Connection>>& p,
                                  std::vector<char>& out, int salt) {
  std::vector<char> in(out.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<char>(i * 13 + salt);
  p.first->isend(out.data(), out.size(), 3);
  p.second->irecv(in.data(), in.size(), 3);
  EXPECT_TRUE(drive(*p.first, *p.second, [&] { return !p.first->busy() && !p.second->busy(); }));
  EXPECT_EQ(in, out);
  return static_cast<IbConnection&>(*p.first).deviceForTests().userRegions().stats();
}

TEST(IbRegistrationTest, WithOnDemandPagingLargeBuffersAreCachedAndHit) {
  auto p = ibPair(1, true);
  std::vector<char> out(1 << 20);
  auto first = sendOnce(p, out, 1);
  EXPECT_GT(first.misses, 0u);
  auto second = sendOnce(p, out, 2);  // the same buffer: its regions are found again
  EXPECT_GT(second.hits, first.hits);
}

TEST(IbRegistrationTest, WithoutOnDemandPagingOnlyRegisteredBuffersGoWithoutCopy) {
  auto p = ibPair(1, false);
  std::vector<char> out(1 << 20);
  auto unregistered = sendOnce(p, out, 1);
  EXPECT_EQ(unregistered.misses, 0u);  // nothing registered behind the caller's back
  EXPECT_EQ(unregistered.hits, 0u);
  MemoryRegistration* registration = p.first->capabilities().registration;
  ASSERT_NE(registration, nullptr);
  void* token = registration->registerMemory(out.data(), out.size());
  ASSERT_NE(token, nullptr);
  auto registered = sendOnce(p, out, 2);
  EXPECT_GT(registered.hits, 0u);  // every large chunk found the registered region
  registration->deregisterMemory(token);
  EXPECT_EQ(registered.entries, 1u);
  auto after = static_cast<IbConnection&>(*p.first).deviceForTests().userRegions().stats();
  EXPECT_EQ(after.entries, 0u);  // deregistered and forgotten: the caller may free it now
  auto again = sendOnce(p, out, 3);
  EXPECT_EQ(again.hits, registered.hits);  // copied again
}

// Device buffers over ib go straight from device memory (a dma-buf region per page range, cached) where the adapter
// registers dma-bufs and the device exports them; the receive side stays staged. The software device registers the
// emulated device's memfds.
TEST(IbRegistrationTest, DeviceBuffersAreSentFromDmaBufRegions) {
  HostEnds hosts(ibPair());
  StagedConnection a(0, *hosts.hostA, hosts.apiA), b(1, *hosts.hostB, hosts.apiB);
  const size_t n = (size_t{3} << 20) + 5;  // several staged chunks and a ragged end
  DeviceBuffer out(hosts.apiA, n), in(hosts.apiB, n);
  for (int round = 0; round < 2; ++round) {
    out.write(pattern(n, round + 1));
    a.isend(out.get(), n, 4);
    b.irecv(in.get(), n, 4);
    ASSERT_TRUE(drive(a, b, [&] { return !a.busy() && !b.busy(); }));
    EXPECT_EQ(in.read(), pattern(n, round + 1));
  }
  auto& ib = static_cast<IbConnection&>(*hosts.hostA);
  ASSERT_NE(ib.deviceForTests().directDeviceApi(), nullptr);
  const auto& stats = ib.deviceForTests().deviceRegions().stats();
  EXPECT_GT(stats.misses, 0u);
  EXPECT_GT(stats.hits, 0u);  // the second round found the regions again
}

// A device buffer freed and another allocated at the same address: the cached region is not used for it.
TEST(IbRegistrationTest, ARegionOfAFreedDeviceBufferIsNotReused) {
  HostEnds hosts(ibPair());
  StagedConnection a(0, *hosts.hostA, hosts.apiA), b(1, *hosts.hostB, hosts.apiB);
  auto& ib = static_cast<IbConnection&>(*hosts.hostA);
  const size_t n = 256 << 10;
  DeviceBuffer in(hosts.apiB, n);
  uint64_t invalidationsBefore = 0;
  for (int round = 0; round < 2; ++round) {
    DeviceBuffer out(hosts.apiA, n);  // freed at the end of the round; the next may get the same address
    out.write(pattern(n, round + 7));
    a.isend(out.get(), n, 4);
    b.irecv(in.get(), n, 4);
    ASSERT_TRUE(drive(a, b, [&] { return !a.busy() && !b.busy(); }));
    EXPECT_EQ(in.read(), pattern(n, round + 7));
    if (round == 0) invalidationsBefore = ib.deviceForTests().deviceRegions().stats().invalidations;
  }
  // Either the address differed (a miss) or the identity check dropped the old region: never a stale hit.
  const auto& stats = ib.deviceForTests().deviceRegions().stats();
  EXPECT_TRUE(stats.misses >= 2 || stats.invalidations > invalidationsBefore);
}

}  // namespace
}  // namespace chorus::test
#endif  // CHORUS_HAVE_VERBS
