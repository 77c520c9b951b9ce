// The verbs table loads rdma-core's library at run time, and says why not where it cannot.
#ifdef CHORUS_HAVE_VERBS
#include <gtest/gtest.h>

#include <string>

#include "transports/ib/verbs_api.h"

namespace chorus::test {
namespace {

TEST(VerbsApiTest, AMissingLibrarySaysWhichAndWhy) {
  VerbsApi api{};
  std::string why;
  EXPECT_FALSE(loadVerbs("libchorus-no-such-verbs.so.1", &api, &why));
  EXPECT_NE(why.find("libchorus-no-such-verbs.so.1 could not be loaded"), std::string::npos) << why;
  EXPECT_EQ(api.getDeviceList, nullptr);
}

TEST(VerbsApiTest, TheSystemLibraryLoadsWhereInstalled) {
  std::string why;
  const VerbsApi* api = systemVerbs(&why);
  if (!api) GTEST_SKIP() << why;  // rdma-core's runtime is not installed here
  EXPECT_STREQ(api->origin, "libibverbs.so.1");
  int n = -1;
  ibv_device** list = api->getDeviceList(&n);  // this machine has no RDMA devices; the call still works
  ASSERT_GE(n, 0);
  if (list) api->freeDeviceList(list);
}

}  // namespace
}  // namespace chorus::test
#endif  // CHORUS_HAVE_VERBS
