// The sweep itself: for every size, time the out-of-place then the in-place call, verify each once, print a row.
// With --algos, the comparison instead: for every size, each algorithm's communicator verified once, then their
// out-of-place calls timed in interleaved rounds, one row of medians.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

#include "chorus/chorus.h"
#include "perf/chorus_perf/collective_layout.h"
#include "perf/chorus_perf/device_mirror.h"
#include "perf/chorus_perf/guarded_buffer.h"
#include "perf/chorus_perf/perf_options.h"
#include "perf/chorus_perf/perf_report.h"
#include "perf/chorus_perf/result_checker.h"

namespace chorus::perf {

class PerfRunner {
 public:
  // Runs on comm (already initialized) as rank of nranks; options were validated by parsePerfArgs. With --algos,
  // comms holds one communicator per options.algos entry (comms[0] == comm); otherwise it is empty.
  PerfRunner(const PerfOptions& options, chorusComm_t comm, int rank, int nranks,
             std::vector<chorusComm_t> comms = {});
  ~PerfRunner();
  PerfRunner(const PerfRunner&) = delete;
  PerfRunner& operator=(const PerfRunner&) = delete;

  // Sweeps every size and prints the table on rank 0. Returns the exit code: 0, 1 (wrong results) or 2 (bad flags
  // or output files); a failing Chorus call ends the process with 1.
  int run();

 private:
  enum class Mode { kOutOfPlace = 0, kInPlace = 1 };
  // The buffers of a call (of the first call of a --group; call k uses send + k * sendStride, recv + k * recvStride).
  struct CallBuffers {
    const void* send;
    void* recv;
    size_t sendStride = 0;
    size_t recvStride = 0;
  };

  int setUp(const std::vector<size_t>& sizes);
  // The --algos comparison (run() with comms).
  int runComparison(const std::vector<size_t>& sizes);
  ModeResult measure(const SizeLayout& layout, Mode mode, uint64_t seed);
  // The calls of a timed run lasting at least --min-ms (at most --max-iters), from one call's time (the slowest
  // rank's, so every rank counts alike); --iters without --min-ms.
  int itersLasting(double perCallUs) const;
  // With --min-ms, times runs of these warm buffers to learn one call's time, and returns the calls of a run lasting
  // --min-ms (itersLasting); --iters without.
  int calibratedIters(const CallBuffers& buffers, size_t count);
  // Times iters calls (groups) with buffers (warm already) and returns the slowest rank's mean time per call in us.
  double timeCalls(const CallBuffers& buffers, size_t count, int iters);
  // Alltoallv: this size's counts and displacements (every rank computes every pair alike).
  void planVectors(const SizeLayout& layout, uint64_t salt);
  // Where rank `from`'s block for rank `to` starts in its send buffer (elements), in this size's plan.
  size_t sendDisplacement(int from, int to) const;
  // The pointers a call gets: into the device images with --device gpu (unless hostView), else the host buffers.
  CallBuffers buffersFor(const SizeLayout& layout, Mode mode, bool hostView = false) const;
  uint64_t checkOnce(const SizeLayout& layout, Mode mode, uint64_t seed);
  uint64_t countResultMismatches(const SizeLayout& layout, const std::byte* result, Mode mode);
  // One call, or --group calls between chorusGroupStart and chorusGroupEnd.
  void launch(const CallBuffers& buffers, size_t count);
  void launchOne(const void* send, void* recv, size_t count);
  // Bytes from one call's buffer to the next one's in a --group: apart by kGroupGap, as separate tensors are (so
  // that fusion packs them; 0 without --group).
  size_t stride(size_t bytes) const { return options_.group > 1 ? bytes + kGroupGap : bytes; }
  static constexpr size_t kGroupGap = 256;
  void barrier();
  double maxOverRanks(double value);
  uint64_t sumOverRanks(uint64_t value);
  int agreeOnStatus(int status);
  void emit(const SizeRecord& record);
  // Ends the process when result is not chorusSuccess, naming the call and the library's message, after aborting the
  // communicator the call went to (`on`; the timed one, comm_, unless given) so that peers blocked on it learn of it.
  void require(chorusResult_t result, const char* call) { require(result, call, comm_); }
  void require(chorusResult_t result, const char* call, chorusComm_t on);
  // Runs a device step (copy, synchronize); on failure ends the process as require() does.
  template <class F>
  void onDevice(const char* what, F&& step);

  const PerfOptions options_;
  chorusComm_t comm_;  // the communicator calls go to (with --algos, each of comms_ in turn)
  // The runner's own barriers and reductions go to the base communicator, whichever column is timed: each column's
  // calls then start after the same barrier. Through the timed communicator, a forced hierarchical column began
  // after a hierarchical barrier, the default's after recursive doubling, and the ranks' skew leaving the barrier
  // counted in each call's time (identical hierarchical calls timed up to 1.19x apart at 16 KiB-1 MiB); an
  // autotuned column also tuned its barrier's size instead of the collective's.
  const chorusComm_t control_;
  const std::vector<chorusComm_t> comms_;
  const int rank_;
  const int nranks_;
  const CollectiveInfo& info_;
  const size_t typeSize_;
  const int root_;  // -1 for collectives without a root
  std::unique_ptr<ResultChecker> checker_;
  GuardedBuffer sendBuffer_;
  GuardedBuffer recvBuffer_;  // also the single buffer of the in-place mode
  GuardedBuffer scratch_;     // the tiny allreduces that agree on times, #wrong and status
  std::unique_ptr<DeviceMirror> device_;  // --device gpu: the buffers' device images and the stream
  std::FILE* csv_ = nullptr;
  std::FILE* json_ = nullptr;
  std::FILE* plot_ = nullptr;  // --plot: opened at set-up (a bad path fails before the sweep), written at the end
  bool jsonFirstRecord_ = true;
  std::vector<SizeRecord> rows_;     // rank 0: every row, for the summary and the plot
  std::string_view timedAlgorithm_;  // what the last timed calls ran (read before the runner's own calls)
  chorusStream_t hostStream_ = nullptr;  // --stream host / host-each
  chorusEvent_t hostEvent_ = nullptr;
  double enqueueUsSum_ = 0;  // --stream host: the timed enqueues' mean times, summed over sizes and modes
  int enqueueSamples_ = 0;
  // With a host stream: waits for its calls (a failure ends the process as require() does).
  void synchronizeHostStream();
  std::vector<size_t> sendCounts_, sendDispls_, recvCounts_, recvDispls_;  // alltoallv's, for the current size
  size_t vectorCount_ = 0;  // alltoallv: the nominal count per pair they were planned for
  uint64_t vectorSalt_ = 0;
  size_t recvExtent_ = 0;  // alltoallv: bytes of recvbuff the current plan writes
};

}  // namespace chorus::perf
