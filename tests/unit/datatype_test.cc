#include "core/datatype.h"

#include <gtest/gtest.h>

namespace chorus {

TEST(DataType, SizesAndNames) {
  EXPECT_EQ(typeSize(chorusInt8), 1u);
  EXPECT_EQ(typeSize(chorusBfloat16), 2u);
  EXPECT_EQ(typeSize(chorusFloat32), 4u);
  EXPECT_EQ(typeSize(chorusUint64), 8u);
  EXPECT_EQ(typeSize(static_cast<chorusDataType_t>(chorusNumTypes)), 0u);
  EXPECT_STREQ(typeName(chorusFloat16), "float16");
  EXPECT_STREQ(opName(chorusAvg), "avg");
  EXPECT_STREQ(opName(static_cast<chorusRedOp_t>(-1)), "unknown");
}

}  // namespace chorus
