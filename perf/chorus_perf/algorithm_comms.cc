#include "perf/chorus_perf/algorithm_comms.h"

#include <cstdio>

namespace chorus::perf {

std::vector<chorusComm_t> openAlgorithmComms(chorusComm_t base, int rank, int nranks,
                                             const std::vector<std::string>& algos) {
  std::vector<chorusComm_t> comms;
  for (size_t i = 0; i < algos.size(); ++i) {
    chorusUniqueId id{};
    chorusResult_t r = rank == 0 ? chorusGetUniqueId(&id) : chorusSuccess;
    const char* call = "chorusGetUniqueId";
    if (r == chorusSuccess) {
      call = "chorusBroadcast of the unique id";
      r = chorusBroadcast(&id, &id, sizeof(id), chorusUint8, 0, base, nullptr);
    }
    chorusComm_t comm = nullptr;
    if (r == chorusSuccess) {
      // Each communicator runs one algorithm wherever it has one (the default selection elsewhere); "autotune" is
      // the default selection tuning itself (CHORUS_AUTOTUNE) as the rounds go.
      chorusConfig_t config = CHORUS_CONFIG_INITIALIZER;
      if (algos[i] == "autotune") {
        config.autotune = 1;
      } else if (i > 0) {
        config.algo = algos[i].c_str();
      }
      config.commName = algos[i].c_str();
      call = "chorusCommInitRankConfig";
      r = chorusCommInitRankConfig(&comm, nranks, id, rank, &config);
    }
    if (r != chorusSuccess) {
      std::fprintf(stderr, "chorus-perf: rank %d: --algos %s: %s failed: %s: %s\n", rank, algos[i].c_str(), call,
                   chorusGetErrorString(r), chorusGetLastError(nullptr));
      closeAlgorithmComms(comms, rank);
      return {};
    }
    comms.push_back(comm);
  }
  return comms;
}

bool closeAlgorithmComms(const std::vector<chorusComm_t>& comms, int rank) {
  bool ok = true;
  for (size_t i = 0; i < comms.size(); ++i) {
    if (chorusResult_t r = chorusCommDestroy(comms[i]); r != chorusSuccess) {
      std::fprintf(stderr, "chorus-perf: rank %d: chorusCommDestroy failed: %s: %s\n", rank, chorusGetErrorString(r),
                   chorusGetLastError(nullptr));
      ok = false;
    }
  }
  return ok;
}

}  // namespace chorus::perf
