// Per-communicator configuration (chorusConfig_t, chorus::Config): bad fields are refused naming the field, unset
// fields come from the environment, set fields win over it, and two communicators of one process run with
// different settings side by side.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "chorus/chorus.h"
#include "chorus/chorus.hpp"
#include "tests/collectives/suite_knobs.h"
#include "tests/harness/scoped_env.h"
#include "tests/harness/thread_world.h"

namespace chorus::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Initializes a world of one with `config`; returns the result and the last error, destroying what was made.
std::pair<chorusResult_t, std::string> initAlone(chorusConfig_t* config) {
  chorusUniqueId id;
  EXPECT_EQ(chorusGetUniqueId(&id), chorusSuccess);
  chorusComm_t comm = nullptr;
  chorusResult_t r = chorusCommInitRankConfig(&comm, 1, id, 0, config);
  std::string error = r == chorusSuccess ? "" : chorusGetLastError(nullptr);
  if (r == chorusSuccess) {
    float x = 1;
    EXPECT_EQ(chorusAllReduce(&x, &x, 1, chorusFloat32, chorusSum, comm, nullptr), chorusSuccess);
    EXPECT_EQ(chorusCommDestroy(comm), chorusSuccess);
  } else {
    EXPECT_EQ(comm, nullptr);
  }
  return {r, error};
}

struct BadField {
  const char* what;
  std::function<void(chorusConfig_t&)> spoil;
  const char* named;  // a piece of the message
};

TEST(CommConfigTest, BadFieldsAreInvalidArgumentsNamingTheField) {
  const std::vector<BadField> cases = {
      {"magic", [](chorusConfig_t& c) { c.magic = 7; }, "config->magic"},
      {"size too small", [](chorusConfig_t& c) { c.size = 8; }, "config->size"},
      {"size too large", [](chorusConfig_t& c) { c.size = sizeof(chorusConfig_t) + 8; }, "config->size"},
      {"newer version", [](chorusConfig_t& c) { c.version = CHORUS_VERSION_CODE + 1; }, "config->version"},
      {"negative timeout", [](chorusConfig_t& c) { c.timeoutSeconds = -1; }, "config->timeoutSeconds = -1"},
      {"algorithm", [](chorusConfig_t& c) { c.algo = "allreduce:0-64K=nonsense"; }, "config->algo"},
      {"small chunk", [](chorusConfig_t& c) { c.chunkSize = 100; }, "config->chunkSize = 100"},
      {"sockets", [](chorusConfig_t& c) { c.socketsPerPeer = 0; }, "config->socketsPerPeer = 0"},
      {"mismatch flag", [](chorusConfig_t& c) { c.checkMismatch = 2; }, "config->checkMismatch = 2"},
      {"shm buffer", [](chorusConfig_t& c) { c.shmBufferBytes = 1; }, "config->shmBufferBytes = 1"},
      {"cma", [](chorusConfig_t& c) { c.shmCma = 3; }, "config->shmCma = 3"},
      {"probe flag", [](chorusConfig_t& c) { c.topoProbe = -4; }, "config->topoProbe = -4"},
      {"device calls", [](chorusConfig_t& c) { c.deviceCalls = 3; }, "config->deviceCalls = 3"},
      {"device chunk", [](chorusConfig_t& c) { c.deviceChunkSize = 128 << 20; }, "config->deviceChunkSize = 134217728"},
      {"flight records", [](chorusConfig_t& c) { c.flightRecords = -1; }, "config->flightRecords = -1"},
      {"socket family", [](chorusConfig_t& c) { c.socketFamily = "AF_UNIX"; }, "config->socketFamily = \"AF_UNIX\""},
      {"metrics port", [](chorusConfig_t& c) { c.metricsPort = 70000; }, "config->metricsPort = 70000"},
  };
  for (const BadField& b : cases) {
    SCOPED_TRACE(b.what);
    chorusConfig_t config = CHORUS_CONFIG_INITIALIZER;
    b.spoil(config);
    auto [result, error] = initAlone(&config);
    EXPECT_EQ(result, chorusInvalidArgument);
    EXPECT_NE(error.find("chorusCommInitRankConfig"), std::string::npos) << error;
    EXPECT_NE(error.find(b.named), std::string::npos) << error;
  }
}

TEST(CommConfigTest, NullAndUnsetConfigsTakeTheEnvironment) {
  EXPECT_EQ(initAlone(nullptr).first, chorusSuccess);
  chorusConfig_t unset = CHORUS_CONFIG_INITIALIZER;
  EXPECT_EQ(initAlone(&unset).first, chorusSuccess);
  // A bad variable fails the fields it feeds, naming the variable...
  ScopedEnv env({{"CHORUS_ALGO", "no_such_algorithm"}, {"CHORUS_TIMEOUT", "-3"}});
  auto [result, error] = initAlone(&unset);
  EXPECT_EQ(result, chorusInvalidArgument);
  EXPECT_NE(error.find("CHORUS_"), std::string::npos) << error;
  // ...unless the field is set: then the variable is not read at all.
  chorusConfig_t set = CHORUS_CONFIG_INITIALIZER;
  set.algo = "ring";
  set.timeoutSeconds = 10;
  EXPECT_EQ(initAlone(&set).first, chorusSuccess) << initAlone(&set).second;
}

TEST(CommConfigTest, FieldsBeyondAnOlderCallersSizeAreUnset) {
  chorusConfig_t config = CHORUS_CONFIG_INITIALIZER;
  config.size = offsetof(chorusConfig_t, commName) + sizeof(const char*);  // the first version's fields only
  config.shmCma = 99;                                                         // not part of that caller's struct
  EXPECT_EQ(initAlone(&config).first, chorusSuccess);
}

// Two worlds alive at once in one process: one with a 1 s timeout and the mismatch listing, one with a long
// timeout and no listing. Each behaves as its own config says and names itself in its errors.
TEST(CommConfigTest, TwoCommunicatorsOfOneProcessRunWithTheirOwnSettings) {
  Config fast = suiteConfig();
  fast.timeoutSeconds = 1;
  fast.commName = "alpha";
  Config patient = suiteConfig();
  patient.timeoutSeconds = 30;
  patient.checkMismatch = false;
  patient.commName = "beta";
  ThreadWorld alpha(2, 60s, fast);
  ThreadWorld beta(2, 60s, patient);
  ASSERT_TRUE(alpha.ready() && beta.ready());

  // alpha: rank 1 never calls; rank 0 gives up after alpha's 1 s.
  std::string alphaError;
  chorusResult_t alphaResult = chorusSuccess;
  double alphaSeconds = 0;
  alpha.run(
      [&](chorusComm_t comm, int rank) {
        if (rank == 1) return;
        float x = 1;
        const Clock::time_point start = Clock::now();
        alphaResult = chorusAllReduce(&x, &x, 1, chorusFloat32, chorusSum, comm, nullptr);
        alphaSeconds = std::chrono::duration<double>(Clock::now() - start).count();
        alphaError = chorusGetLastError(comm);
      },
      60s);
  EXPECT_EQ(alphaResult, chorusTimeout) << alphaError;
  EXPECT_LT(alphaSeconds, 10.0);
  EXPECT_EQ(alphaError.rfind("comm alpha: ", 0), 0u) << alphaError;

  // beta, still healthy: mismatched counts fail without a listing (checkMismatch off), naming beta.
  std::vector<std::string> betaErrors(2);
  std::vector<int> betaResults(2, -1);
  beta.run(
      [&](chorusComm_t comm, int rank) {
        std::vector<float> v(2000, 1.0f);
        betaResults[rank] =
            chorusAllReduce(v.data(), v.data(), rank == 0 ? 1000 : 1001, chorusFloat32, chorusSum, comm, nullptr);
        betaErrors[rank] = chorusGetLastError(comm);
      },
      60s);
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(betaResults[r], chorusSuccess) << r;
    EXPECT_EQ(betaErrors[r].find("does not match across ranks"), std::string::npos) << betaErrors[r];
    EXPECT_EQ(betaErrors[r].rfind("comm beta: ", 0), 0u) << betaErrors[r];
  }
}

TEST(CommConfigTest, ArgumentErrorsNameTheCommunicator) {
  chorus::Communicator comm(1, makeUniqueId(), 0, {.timeoutSeconds = 5, .commName = "gamma"});
  EXPECT_EQ(chorusAllReduce(nullptr, nullptr, 4, chorusFloat32, chorusSum, comm.handle(), nullptr),
            chorusInvalidArgument);
  const std::string error = chorusGetLastError(comm.handle());
  EXPECT_EQ(error.rfind("comm gamma: rank 0, chorusAllReduce: ", 0), 0u) << error;
}

TEST(CommConfigTest, CppConfigWithDesignatedInitializers) {
  chorus::Communicator comm(1, makeUniqueId(), 0, {.timeoutSeconds = 5, .algo = "ring", .chunkSize = 8192});
  std::vector<float> v = {1, 2, 3};
  comm.allReduce(std::span<float>(v));
  EXPECT_EQ(v[2], 3.0f);
  try {
    chorus::Communicator bad(1, makeUniqueId(), 0, {.socketsPerPeer = 99});
    FAIL() << "no throw";
  } catch (const chorus::Exception& e) {
    EXPECT_EQ(e.code(), chorusInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("config->socketsPerPeer = 99"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace chorus::test
