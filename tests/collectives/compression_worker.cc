// chorus_compression_worker: one rank of a process world with CHORUS_COMPRESSION set (tests/harness/process_world.h):
// allreduce, allgather and broadcast of adversarial float32 data across emulated hosts (CHORUS_TEST_HOSTS), so that
// some links are TCP (compressed) and some shared memory (full precision). Checks that every rank holds the same
// bits (checksums allgathered as integers, which are never compressed) and that the allreduce is within the
// docs/compression.md's bound. Exits 0 and prints "compression right" when all holds.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "chorus/chorus.h"
#include "tests/collectives/emulated_hosts.h"

namespace {

constexpr size_t kCount = 300007;  // ~1.2 MiB: several slices on every path

float input(int r, size_t i) {
  uint32_t h = static_cast<uint32_t>(r * 2654435761u) ^ static_cast<uint32_t>(i * 40503u + 17);
  h ^= h >> 13;
  h *= 0x5bd1e995u;
  h ^= h >> 15;
  const float mantissa = 1.0f + static_cast<float>((h >> 8) & 0xffff) / 65536.0f;
  return ((h >> 7) & 1 ? -1.0f : 1.0f) * std::ldexp(mantissa, static_cast<int>(h % 21) - 10);
}

uint64_t checksum(const std::vector<float>& v) {
  uint64_t h = 1469598103934665603ull;
  const auto* p = reinterpret_cast<const unsigned char*>(v.data());
  for (size_t i = 0; i < v.size() * sizeof(float); ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

}  // namespace

int main() {
  const char* rankText = std::getenv("CHORUS_RANK");
  const char* sizeText = std::getenv("CHORUS_WORLD_SIZE");
  chorus::test::emulateHosts(rankText ? std::atoi(rankText) : -1, sizeText ? std::atoi(sizeText) : 0);
  chorusComm_t comm = nullptr;
  if (chorusCommInitFromEnv(&comm) != chorusSuccess) {
    std::printf("init failed: %s\n", chorusGetLastError(nullptr));
    return 1;
  }
  int n = 0, rank = 0;
  chorusCommCount(comm, &n);
  chorusCommUserRank(comm, &rank);
  std::vector<float> x(kCount), sum(kCount), bcast(kCount), gathered(kCount * static_cast<size_t>(n));
  for (size_t i = 0; i < kCount; ++i) x[i] = bcast[i] = input(rank, i);
  bool ok = chorusAllReduce(x.data(), sum.data(), kCount, chorusFloat32, chorusSum, comm, nullptr) == chorusSuccess &&
            chorusAllGather(x.data(), gathered.data(), kCount, chorusFloat32, comm, nullptr) == chorusSuccess &&
            chorusBroadcast(bcast.data(), bcast.data(), kCount, chorusFloat32, 0, comm, nullptr) == chorusSuccess;
  if (!ok) {
    std::printf("rank %d: a call failed: %s\n", rank, chorusGetLastError(comm));
    return 1;
  }
  std::vector<uint64_t> mine = {checksum(sum), checksum(gathered), checksum(bcast)}, all(3 * static_cast<size_t>(n));
  if (chorusAllGather(mine.data(), all.data(), 3, chorusUint64, comm, nullptr) != chorusSuccess) {
    std::printf("rank %d: checksum allgather failed: %s\n", rank, chorusGetLastError(comm));
    return 1;
  }
  int failures = 0;
  const char* names[] = {"allreduce", "allgather", "broadcast"};
  for (int r = 0; r < n; ++r) {
    for (int k = 0; k < 3; ++k) {
      if (all[3 * static_cast<size_t>(r) + k] != mine[k]) {
        std::printf("rank %d: %s result differs from rank %d's\n", rank, names[k], r);
        ++failures;
      }
    }
  }
  const std::string format = std::getenv("CHORUS_COMPRESSION") ? std::getenv("CHORUS_COMPRESSION") : "none";
  const double u = format.rfind("fp16", 0) == 0 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -8);
  const double bound = (n + 1) * u + n * std::ldexp(1.0, -23);
  const double range = format.rfind("fp16", 0) == 0 ? (n + 1) * std::ldexp(1.0, -38) * n * std::ldexp(1.0, 11) : 0;
  for (size_t i = 0; i < kCount && failures < 5; ++i) {
    double exact = 0, magnitude = 0;
    for (int r = 0; r < n; ++r) {
      exact += input(r, i);
      magnitude += std::fabs(input(r, i));
    }
    if (std::fabs(sum[i] - exact) > bound * magnitude + range) {
      std::printf("rank %d: allreduce element %zu is %g, exact %g: beyond the bound\n", rank, i, sum[i], exact);
      ++failures;
    }
  }
  chorusCommDestroy(comm);
  if (failures) return 1;
  std::printf("rank %d: compression right (%s, %d ranks)\n", rank, format.c_str(), n);
  return 0;
}
