#include "perf/chorus_perf/algorithm_comms.h"

#include <cstdio>
#include <cstdlib>
#include <optional>

namespace chorus::perf {

namespace {

constexpr const char* kAlgoVariable = "CHORUS_ALGO";

// Sets CHORUS_ALGO for the scope and puts back what was there (or nothing).
class AlgoVariable {
 public:
  explicit AlgoVariable(const std::string& value) {
    if (const char* old = std::getenv(kAlgoVariable)) saved_ = old;
    ::setenv(kAlgoVariable, value.c_str(), 1);
  }
  ~AlgoVariable() {
    if (saved_) {
      ::setenv(kAlgoVariable, saved_->c_str(), 1);
    } else {
      ::unsetenv(kAlgoVariable);
    }
  }
  AlgoVariable(const AlgoVariable&) = delete;
  AlgoVariable& operator=(const AlgoVariable&) = delete;

 private:
  std::optional<std::string> saved_;
};

}  // namespace

std::vector<chorusComm_t> openAlgorithmComms(chorusComm_t base, int rank, int nranks,
                                             const std::vector<std::string>& algos) {
  std::vector<chorusComm_t> comms = {base};
  for (size_t i = 1; i < algos.size(); ++i) {
    chorusUniqueId id{};
    chorusResult_t r = rank == 0 ? chorusGetUniqueId(&id) : chorusSuccess;
    const char* call = "chorusGetUniqueId";
    if (r == chorusSuccess) {
      call = "chorusBroadcast of the unique id";
      r = chorusBroadcast(&id, &id, sizeof(id), chorusUint8, 0, base, nullptr);
    }
    chorusComm_t comm = nullptr;
    if (r == chorusSuccess) {
      AlgoVariable forced(algos[i]);
      call = "chorusCommInitRank";
      r = chorusCommInitRank(&comm, nranks, id, rank);
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
  for (size_t i = 1; i < comms.size(); ++i) {
    if (chorusResult_t r = chorusCommDestroy(comms[i]); r != chorusSuccess) {
      std::fprintf(stderr, "chorus-perf: rank %d: chorusCommDestroy failed: %s: %s\n", rank, chorusGetErrorString(r),
                   chorusGetLastError(nullptr));
      ok = false;
    }
  }
  return ok;
}

}  // namespace chorus::perf
