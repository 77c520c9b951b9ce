// Two connected shared-memory ends through the real handshake (two transports in this process, one thread each),
// for the suites that test shm connections and the device connections layered over them.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/deadline.h"
#include "transports/connection.h"
#include "transports/shm/shm_transport.h"

namespace chorus::test {

// Rank 0's end (to rank 1) and rank 1's (to rank 0), under a job key unique to this process and jobPrefix. Expects
// the two to be able to connect; throws if the handshake does not give one connection each.
inline std::pair<std::unique_ptr<Connection>, std::unique_ptr<Connection>> connectShmPair(
    const std::string& jobPrefix, size_t ring, ShmCma cma = ShmCma::kOff, ShmTuning tuning = {}) {
  const std::string job = jobPrefix + std::to_string(getpid());
  ShmTransport t0(0, job, ring, cma, tuning), t1(1, job, ring, cma, tuning);
  PeerCard c0, c1;
  c0.rank = 0;
  c1.rank = 1;
  c0.pid = c1.pid = static_cast<int>(getpid());
  c0.hostId = c1.hostId = "this-host";
  t0.describeSelf(c0);
  t1.describeSelf(c1);
  EXPECT_TRUE(t0.canConnect(c0, c1));
  auto other = std::async(std::launch::async, [&] { return t1.connectAll(c1, {c0}, Deadline::after(20)); });
  auto mine = t0.connectAll(c0, {c1}, Deadline::after(20));
  auto theirs = other.get();
  EXPECT_EQ(mine.size(), 1u);
  EXPECT_EQ(theirs.size(), 1u);
  if (mine.size() != 1 || theirs.size() != 1) throw std::runtime_error("shm connectAll did not give one end each");
  return {std::move(mine[0]), std::move(theirs[0])};
}

}  // namespace chorus::test
