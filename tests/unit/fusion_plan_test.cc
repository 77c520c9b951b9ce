// Fusion across precisions: the plan looks ahead in a group, so allreduces that alternate float16 and float32 (as
// mixed-precision training issues them) fill one buffer per precision instead of closing one at every change.
#include <gtest/gtest.h>

#include <vector>

#include "src/comm/tensor_fusion.h"

namespace chorus {
namespace {

TEST(FusionPlan, AlternatingPrecisionsFuseIntoOneEntryEach) {
  std::vector<CallArgs> ops;
  for (int i = 0; i < 64; ++i) {
    const bool half = i % 2 == 0;
    ops.push_back(CallArgs{.collective = Collective::kAllReduce,
                           .count = half ? 2048u : 1024u,
                           .type = half ? chorusFloat16 : chorusFloat32,
                           .reduction = chorusSum});
  }
  const auto plan = planFusion(ops, 64 << 20);
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].size(), 32u);
  EXPECT_EQ(plan[1].size(), 32u);
  for (size_t m : plan[0]) EXPECT_EQ(ops[m].type, chorusFloat16);
  for (size_t m : plan[1]) EXPECT_EQ(ops[m].type, chorusFloat32);
  // A full buffer closes its precision's entry only: the other keeps filling.
  const auto small = planFusion(ops, 16 << 10);  // 4 tensors of 4 KiB per buffer
  EXPECT_EQ(small.size(), 16u);
  for (const auto& entry : small) {
    EXPECT_EQ(entry.size(), 4u);
    for (size_t m : entry) EXPECT_EQ(ops[m].type, ops[entry.front()].type);
  }
}

}  // namespace
}  // namespace chorus
