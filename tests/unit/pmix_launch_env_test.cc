// When chorusCommInitFromEnv turns to PMIx: only under a PMIx server, and only when no store is named.
#include <gtest/gtest.h>

#include "core/bootstrap/launch_spec.h"
#include "core/bootstrap/pmix_exchange.h"
#include "core/error.h"
#include "tests/harness/scoped_env.h"

namespace chorus {
namespace {

using test::ScopedEnv;

// Every launcher variable unset, then `set`.
ScopedEnv launchEnv(std::vector<std::pair<std::string, std::optional<std::string>>> set) {
  std::vector<std::pair<std::string, std::optional<std::string>>> all;
  for (const char* name : {"CHORUS_RANK", "CHORUS_WORLD_SIZE", "CHORUS_STORE", "CHORUS_STORE_SERVED", "RANK",
                           "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                           "SLURM_PROCID", "SLURM_NTASKS", "PMIX_RANK", "PMIX_NAMESPACE", "PMIX_SERVER_URI4",
                           "PMIX_SERVER_URI3", "PMIX_SERVER_URI2", "PMIX_SERVER_URI21", "PMIX_SERVER_URI41"}) {
    all.emplace_back(name, std::nullopt);
  }
  all.insert(all.end(), set.begin(), set.end());
  return ScopedEnv(all);
}

const std::vector<std::pair<std::string, std::optional<std::string>>> kPmixServer = {
    {"PMIX_RANK", "1"}, {"PMIX_NAMESPACE", "job-7"}, {"PMIX_SERVER_URI4", "job-7.0;tcp4://127.0.0.1:1"}};

std::vector<std::pair<std::string, std::optional<std::string>>> with(
    std::vector<std::pair<std::string, std::optional<std::string>>> more) {
  more.insert(more.end(), kPmixServer.begin(), kPmixServer.end());
  return more;
}

TEST(PmixLaunchEnv, MpirunWithoutAStoreGoesThroughPmix) {
  ScopedEnv env = launchEnv(with({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "4"}}));
  ASSERT_TRUE(pmixLaunched());
  LaunchSpec s = launchSpecFromEnv();
  EXPECT_TRUE(s.storeThroughPmix);
  EXPECT_FALSE(s.serveStore);
  EXPECT_EQ(s.rank, 1);
  EXPECT_EQ(s.nranks, 4);
  EXPECT_NE(s.source.find("store through PMIx"), std::string::npos) << s.source;
}

TEST(PmixLaunchEnv, TheRankAndSizeComeFromPmixAlone) {
  ScopedEnv env = launchEnv(kPmixServer);
  LaunchSpec s = launchSpecFromEnv();
  EXPECT_TRUE(s.storeThroughPmix);
  EXPECT_EQ(s.nranks, 0);  // until PMIx says it
  EXPECT_EQ(s.source, "PMIx, store through PMIx");
}

TEST(PmixLaunchEnv, ANamedStoreWins) {
  ScopedEnv env = launchEnv(
      with({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"CHORUS_STORE", "127.0.0.1:29400"}}));
  LaunchSpec s = launchSpecFromEnv();
  EXPECT_FALSE(s.storeThroughPmix);
  EXPECT_TRUE(s.serveStore);
  EXPECT_EQ(s.storePort, 29400);
}

TEST(PmixLaunchEnv, ChorusrunsRanksNeverUsePmix) {
  ScopedEnv env = launchEnv(with({{"CHORUS_RANK", "0"},
                                  {"CHORUS_WORLD_SIZE", "2"},
                                  {"CHORUS_STORE", "127.0.0.1:29401"},
                                  {"CHORUS_STORE_SERVED", "1"}}));
  LaunchSpec s = launchSpecFromEnv();
  EXPECT_FALSE(s.storeThroughPmix);
  EXPECT_FALSE(s.serveStore);
  EXPECT_EQ(s.source, "CHORUS_RANK/CHORUS_WORLD_SIZE");
}

TEST(PmixLaunchEnv, NoServerAddressIsNoPmix) {
  ScopedEnv env = launchEnv({{"PMIX_RANK", "0"}, {"PMIX_NAMESPACE", "job-7"}});
  EXPECT_FALSE(pmixLaunched());
  try {
    launchSpecFromEnv();
    FAIL() << "expected chorusInvalidArgument";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), chorusInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("no launch variables"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace chorus
