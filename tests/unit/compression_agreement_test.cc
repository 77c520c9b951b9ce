// CHORUS_COMPRESSION's in-place step: compressed host allgathers and broadcasts run in place; device calls, which
// never compress, are left as they are (their buffers are not the CPU's to copy).
#include "src/comm/compression_agreement.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <vector>

#include "reduce/reducer.h"

namespace chorus {
namespace {

struct Agreement {
  std::vector<std::unique_ptr<Connection>> conns{2};
  StagingMemory staging{StagingMemory::kSlots, 4096, 4096};
  std::atomic<bool> aborted{false};
  CommIO io{0, 2, conns, staging, hostReducer(), WaitPolicy{}, aborted, -1};
  CompressionAgreement agreement{0, 2};
  Agreement() { agreement.configure("fp16:all", {TransportId::kShm, TransportId::kTcp}, io); }
};

CallArgs allGather(const float* send, float* recv) {
  CallArgs o{};
  o.collective = Collective::kAllGather;
  o.send = send;
  o.recv = recv;
  o.count = 2;
  o.type = chorusFloat32;
  return o;
}

TEST(CompressionAgreementTest, ACompressedHostAllGatherRunsInPlace) {
  Agreement a;
  const float send[2] = {1, 2};
  float recv[4] = {};
  const CallArgs& run = a.agreement.inPlace(allGather(send, recv), false);
  EXPECT_EQ(run.send, recv);
  EXPECT_EQ(recv[0], 1);
  EXPECT_EQ(recv[1], 2);
}

TEST(CompressionAgreementTest, ADeviceCallIsLeftAsItIs) {
  Agreement a;
  const float send[2] = {1, 2};
  float recv[4] = {};
  const CallArgs o = allGather(send, recv);
  const CallArgs& run = a.agreement.inPlace(o, true);
  EXPECT_EQ(&run, &o);
  EXPECT_EQ(recv[0], 0);  // nothing copied
}

}  // namespace
}  // namespace chorus
