#include "perf/chorus_perf/perf_runner.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "perf/chorus_perf/engine_facts.h"
#include "perf/chorus_perf/svg_plot.h"
#include "perf/chorus_perf/sweep_summary.h"

namespace chorus::perf {

namespace {

// The C entry point a collective is timed through, for error messages.
const char* callName(Collective collective) {
  switch (collective) {
    case Collective::kAllReduce:
      return "chorusAllReduce";
    case Collective::kBroadcast:
      return "chorusBroadcast";
    case Collective::kReduce:
      return "chorusReduce";
    case Collective::kAllGather:
      return "chorusAllGather";
    case Collective::kReduceScatter:
      return "chorusReduceScatter";
    case Collective::kAllToAll:
      return "chorusAllToAll";
    case Collective::kAllToAllv:
      return "chorusAllToAllv";
    case Collective::kGather:
      return "chorusGather";
    case Collective::kScatter:
      return "chorusScatter";
    case Collective::kSendRecv:
    case Collective::kPingPong:
      return "chorusSend/chorusRecv";
    case Collective::kBarrier:
      return "chorusBarrier";
  }
  return "chorus";
}

// Opens path for writing on rank 0; prints why not and returns nullptr on failure.
std::FILE* openOutput(const std::string& path, const char* flag) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "chorus-perf: cannot open %s file '%s' for writing: %s\n", flag, path.c_str(),
                 std::strerror(errno));
  }
  return f;
}

}  // namespace

PerfRunner::PerfRunner(const PerfOptions& options, chorusComm_t comm, int rank, int nranks,
                       std::vector<chorusComm_t> comms)
    : options_(options),
      comm_(comm),
      control_(comm),
      comms_(std::move(comms)),
      rank_(rank),
      nranks_(nranks),
      info_(collectiveInfo(options.collective)),
      typeSize_(dataTypeSize(options.datatype)),
      root_(info_.rooted ? options.root : -1),
      checker_(makeResultChecker(options.datatype, options.op, nranks, info_.reduces)) {}

void PerfRunner::synchronizeHostStream() {
  if (hostStream_ != nullptr) require(chorusStreamSynchronize(hostStream_), "chorusStreamSynchronize");
}

PerfRunner::~PerfRunner() {
  if (hostEvent_ != nullptr) chorusEventDestroy(hostEvent_);
  if (hostStream_ != nullptr) chorusHostStreamDestroy(hostStream_);
  if (csv_ != nullptr) std::fclose(csv_);
  if (json_ != nullptr) std::fclose(json_);
  if (plot_ != nullptr) std::fclose(plot_);
}

void PerfRunner::require(chorusResult_t result, const char* call, chorusComm_t on) {
  if (result == chorusSuccess) return;
  std::fprintf(stderr, "chorus-perf: rank %d: %s failed: %s: %s\n", rank_, call, chorusGetErrorString(result),
               chorusGetLastError(on));
  std::fflush(stdout);
  chorusCommAbort(on);  // peers blocked on this rank learn of the failure instead of waiting for a timeout
  std::exit(1);
}

template <class F>
void PerfRunner::onDevice(const char* what, F&& step) {
  try {
    step();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chorus-perf: rank %d: %s failed: %s\n", rank_, what, e.what());
    std::fflush(stdout);
    chorusCommAbort(comm_);
    std::exit(1);
  }
}

void PerfRunner::barrier() {
  auto* token = reinterpret_cast<int*>(scratch_.data());
  *token = 0;
  require(chorusAllReduce(token, token, 1, chorusInt32, chorusSum, control_, nullptr), "chorusAllReduce", control_);
}

double PerfRunner::maxOverRanks(double value) {
  auto* slot = reinterpret_cast<double*>(scratch_.data());
  *slot = value;
  require(chorusAllReduce(slot, slot, 1, chorusFloat64, chorusMax, control_, nullptr), "chorusAllReduce", control_);
  return *slot;
}

uint64_t PerfRunner::sumOverRanks(uint64_t value) {
  auto* slot = reinterpret_cast<uint64_t*>(scratch_.data());
  *slot = value;
  require(chorusAllReduce(slot, slot, 1, chorusUint64, chorusSum, control_, nullptr), "chorusAllReduce", control_);
  return *slot;
}

int PerfRunner::agreeOnStatus(int status) {
  auto* slot = reinterpret_cast<int*>(scratch_.data());
  *slot = status;
  require(chorusAllReduce(slot, slot, 1, chorusInt32, chorusMax, control_, nullptr), "chorusAllReduce", control_);
  return *slot;
}

// Allocates the buffers for the largest size and opens the output files; every rank learns whether all succeeded,
// so that no rank is left waiting in a collective for one that quit.
int PerfRunner::setUp(const std::vector<size_t>& sizes) {
  if (!scratch_.allocate(64)) {
    std::fprintf(stderr, "chorus-perf: rank %d: cannot allocate a few bytes\n", rank_);
    return 1;
  }
  int status = 0;
  if (info_.rooted && options_.root >= nranks_) {
    if (rank_ == 0) {
      std::fprintf(stderr, "chorus-perf: -r/--root %d is not a rank (the job has %d ranks)\n", options_.root, nranks_);
    }
    status = 2;
  }
  if (rank_ == 0 && status == 0) {
    if (!options_.csvPath.empty() && (csv_ = openOutput(options_.csvPath, "--csv")) == nullptr) status = 2;
    if (!options_.jsonPath.empty() && (json_ = openOutput(options_.jsonPath, "--json")) == nullptr) status = 2;
    if (!options_.plotPath.empty() && (plot_ = openOutput(options_.plotPath, "--plot")) == nullptr) status = 2;
  }
  size_t maxSend = 0;
  size_t maxRecv = 0;
  for (size_t bytes : sizes) {
    const SizeLayout layout = computeSizeLayout(options_.collective, bytes, typeSize_, nranks_, rank_);
    maxSend = std::max(maxSend, layout.sendBytes);
    maxRecv = std::max({maxRecv, layout.recvBytes, layout.inPlaceBytes});
  }
  // --group N: each call of a group has buffers of its own.
  maxSend = stride(maxSend) * static_cast<size_t>(options_.group);
  maxRecv = stride(maxRecv) * static_cast<size_t>(options_.group);
  const bool huge = options_.hugePages;
  if (status == 0 && (!sendBuffer_.allocate(maxSend, huge) || !recvBuffer_.allocate(maxRecv, huge))) {
    std::fprintf(stderr, "chorus-perf: rank %d: cannot allocate %zu + %zu bytes of buffers for -e %zu\n", rank_,
                 maxSend, maxRecv, options_.maxBytes);
    status = 1;
  }
  if (status == 0 && options_.stream != PerfOptions::Stream::kNone &&
      (chorusHostStreamCreate(&hostStream_) != chorusSuccess || chorusEventCreate(&hostEvent_) != chorusSuccess)) {
    std::fprintf(stderr, "chorus-perf: rank %d: cannot create a host stream: %s\n", rank_, chorusGetLastError(nullptr));
    status = 1;
  }
  if (status == 0 && options_.deviceBuffers) {
    std::string why;
    device_ = DeviceMirror::open(&why);
    if (!device_ || !device_->allocate(sendBuffer_, recvBuffer_, &why)) {
      std::fprintf(stderr, "chorus-perf: rank %d: --device gpu: %s\n", rank_, why.c_str());
      status = 1;
    }
  }
  status = agreeOnStatus(status);
  if (status != 0) return status;
  // Meaningful data in both buffers (no NaN or denormal slow paths) for the unchecked, timed calls.
  checker_->setSeed(0);
  checker_->fillInput(sendBuffer_.data(), sendBuffer_.capacity() / typeSize_, rank_);
  checker_->fillInput(recvBuffer_.data(), recvBuffer_.capacity() / typeSize_, rank_);
  if (device_) {
    onDevice("copying the inputs to the device", [&] { device_->upload(sendBuffer_, recvBuffer_); });
    if (rank_ == 0) std::printf("# device API: %s\n", device_->apiName());
  }
  if (csv_ != nullptr) std::fputs(csvHeader().c_str(), csv_);
  if (json_ != nullptr) std::fputs("[\n", json_);
  return 0;
}

void PerfRunner::launch(const CallBuffers& b, size_t count) {
  if (options_.group == 1) {
    launchOne(b.send, b.recv, count);
    return;
  }
  require(chorusGroupStart(), "chorusGroupStart");
  for (int k = 0; k < options_.group; ++k) {
    const size_t i = static_cast<size_t>(k);
    launchOne(static_cast<const std::byte*>(b.send) + i * b.sendStride,
              static_cast<std::byte*>(b.recv) + i * b.recvStride, count);
  }
  require(chorusGroupEnd(), "chorusGroupEnd");
}

void PerfRunner::launchOne(const void* send, void* recv, size_t count) {
  const chorusDataType_t type = options_.datatype;
  // Device buffers: the call is enqueued on the stream and returns at once (host buffers: NULL, it blocks, or a
  // host stream, it is queued).
  chorusStream_t stream = device_ ? device_->stream() : hostStream_;
  chorusResult_t result = chorusInternalError;
  switch (options_.collective) {
    case Collective::kAllReduce:
      result = chorusAllReduce(send, recv, count, type, options_.op, comm_, stream);
      break;
    case Collective::kBroadcast:
      result = chorusBroadcast(send, recv, count, type, root_, comm_, stream);
      break;
    case Collective::kReduce:
      result = chorusReduce(send, recv, count, type, options_.op, root_, comm_, stream);
      break;
    case Collective::kAllGather:
      result = chorusAllGather(send, recv, count, type, comm_, stream);
      break;
    case Collective::kReduceScatter:
      result = chorusReduceScatter(send, recv, count, type, options_.op, comm_, stream);
      break;
    case Collective::kAllToAll:
      result = chorusAllToAll(send, recv, count, type, comm_, stream);
      break;
    case Collective::kAllToAllv:
      result = chorusAllToAllv(send, sendCounts_.data(), sendDispls_.data(), recv, recvCounts_.data(),
                               recvDispls_.data(), type, comm_, stream);
      break;
    case Collective::kGather:
      result = chorusGather(send, recv, count, type, root_, comm_, stream);
      break;
    case Collective::kScatter:
      result = chorusScatter(send, recv, count, type, root_, comm_, stream);
      break;
    case Collective::kSendRecv: {
      // nccl-tests' sendrecv: to the next rank, from the previous one, in one group (inside --group's, if any).
      result = chorusGroupStart();
      const int next = (rank_ + 1) % nranks_, previous = (rank_ + nranks_ - 1) % nranks_;
      if (result == chorusSuccess) result = chorusSend(send, count, type, next, comm_, stream);
      if (result == chorusSuccess) result = chorusRecv(recv, count, type, previous, comm_, stream);
      const chorusResult_t ended = chorusGroupEnd();
      if (result == chorusSuccess) result = ended;
      break;
    }
    case Collective::kPingPong: {
      const int partner = rank_ ^ 1;
      result = chorusSuccess;
      if (partner >= nranks_) break;  // the last of an odd number of ranks sits out
      if (rank_ % 2 == 0) {
        result = chorusSend(send, count, type, partner, comm_, stream);
        if (result == chorusSuccess) result = chorusRecv(recv, count, type, partner, comm_, stream);
      } else {
        result = chorusRecv(recv, count, type, partner, comm_, stream);
        if (result == chorusSuccess) result = chorusSend(send, count, type, partner, comm_, stream);
      }
      break;
    }
    case Collective::kBarrier:
      result = chorusBarrier(comm_, stream);
      break;
  }
  require(result, callName(options_.collective));
}

void PerfRunner::planVectors(const SizeLayout& layout, uint64_t salt) {
  if (options_.collective != Collective::kAllToAllv) return;
  vectorCount_ = layout.count;
  vectorSalt_ = salt;
  const size_t n = static_cast<size_t>(nranks_);
  sendCounts_.assign(n, 0);
  sendDispls_.assign(n, 0);
  recvCounts_.assign(n, 0);
  recvDispls_.assign(n, 0);
  size_t received = 0;
  for (int p = 0; p < nranks_; ++p) {
    sendCounts_[p] = alltoallvCount(layout.count, rank_, p, salt);
    sendDispls_[p] = sendDisplacement(rank_, p);
    recvCounts_[p] = alltoallvCount(layout.count, p, rank_, salt);
    recvDispls_[p] = received;
    received += recvCounts_[p];
  }
  recvExtent_ = received * typeSize_;
}

size_t PerfRunner::sendDisplacement(int from, int to) const {
  size_t at = 0;
  for (int p = 0; p < to; ++p) at += alltoallvCount(vectorCount_, from, p, vectorSalt_);
  return at;
}

PerfRunner::CallBuffers PerfRunner::buffersFor(const SizeLayout& layout, Mode mode, bool hostView) const {
  const bool onDevice = device_ && !hostView;
  std::byte* send = onDevice ? device_->send() : sendBuffer_.data();
  std::byte* recv = onDevice ? device_->recv() : recvBuffer_.data();
  if (mode == Mode::kOutOfPlace) return {send, recv, stride(layout.sendBytes), stride(layout.recvBytes)};
  std::byte* buffer = recv;  // NCCL's in-place layouts: both pointers inside one buffer
  return {buffer + layout.inPlaceSendOffset, buffer + layout.inPlaceRecvOffset, stride(layout.inPlaceBytes),
          stride(layout.inPlaceBytes)};
}

double PerfRunner::timeCalls(const CallBuffers& buffers, size_t count, int iters) {
  // Device calls return once enqueued: the clock starts with the stream idle and stops once it has run them all.
  if (device_) onDevice("synchronizing the stream", [&] { device_->synchronize(); });
  synchronizeHostStream();
  barrier();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) {
    launch(buffers, count);
    if (options_.stream == PerfOptions::Stream::kHostEach) {
      require(chorusEventRecord(hostEvent_, hostStream_), "chorusEventRecord");
      require(chorusEventSynchronize(hostEvent_), "chorusEventSynchronize");
    }
  }
  const auto enqueued = std::chrono::steady_clock::now();
  if (device_) onDevice("synchronizing the stream", [&] { device_->synchronize(); });
  synchronizeHostStream();
  const auto stop = std::chrono::steady_clock::now();
  timedAlgorithm_ = lastAlgorithm(comm_);  // before the runner's own calls below replace it
  if (options_.stream == PerfOptions::Stream::kHost) {
    enqueueUsSum_ += maxOverRanks(std::chrono::duration<double, std::micro>(enqueued - start).count() / iters);
    ++enqueueSamples_;
  }
  // A ping-pong's time is one way: half the round trip.
  const double perCall = options_.collective == Collective::kPingPong ? 2.0 * iters : iters;
  return maxOverRanks(std::chrono::duration<double, std::micro>(stop - start).count() / perCall);
}

int PerfRunner::itersLasting(double perCallUs) const {
  if (options_.minMs <= 0 || !(perCallUs > 0)) return options_.iters;
  const double wanted = std::ceil(options_.minMs * 1e3 / perCallUs);
  const double most = std::max(options_.iters, options_.maxIters);
  return static_cast<int>(std::clamp(wanted, static_cast<double>(options_.iters), most));
}

// The first run tells how long one call takes, the second (a quarter of --min-ms long) tells it again: the warm-up's
// own time does not, nor a run of a few calls (the job's first calls take 5-50x the later ones, and a few calls of
// 8 B time the ranks' skew leaving the barrier: a first column at 8 B timed 2 calls a run and came out 3-13x the
// others).
int PerfRunner::calibratedIters(const CallBuffers& buffers, size_t count) {
  if (options_.minMs <= 0) return options_.iters;
  double perCall = timeCalls(buffers, count, options_.iters);
  if (const int longer = itersLasting(perCall) / 4; longer > options_.iters)
    perCall = timeCalls(buffers, count, longer);
  return itersLasting(perCall);
}

ModeResult PerfRunner::measure(const SizeLayout& layout, Mode mode, uint64_t seed) {
  const CallBuffers buffers = buffersFor(layout, mode);
  for (int i = 0; i < options_.warmupIters; ++i) launch(buffers, layout.count);
  synchronizeHostStream();
  ModeResult result;
  result.timeUs = timeCalls(buffers, layout.count, calibratedIters(buffers, layout.count));
  // A group's time moves every call's bytes.
  computeBandwidths(result, layout.bytes * static_cast<size_t>(options_.group),
                    busBandwidthFactor(options_.collective, nranks_));
  if (options_.check != 0) result.wrong = sumOverRanks(checkOnce(layout, mode, seed));
  return result;
}

// One verified call (one group with --group): fresh inputs, sentinels where the calls must write (and in the guard
// bands, where they must not), the calls, then a count of every element that is not what it must be.
uint64_t PerfRunner::checkOnce(const SizeLayout& layout, Mode mode, uint64_t seed) {
  constexpr size_t kGuard = GuardedBuffer::kGuardBytes;
  checker_->setSeed(seed);
  std::byte* send = sendBuffer_.data();
  std::byte* recv = recvBuffer_.data();
  const size_t sendCount = layout.sendBytes / typeSize_;
  const size_t calls = static_cast<size_t>(options_.group);
  const size_t recvStride = stride(mode == Mode::kOutOfPlace ? layout.recvBytes : layout.inPlaceBytes);
  const size_t sendStride = stride(layout.sendBytes);
  const size_t recvSpan = recvStride * calls;  // bytes of recvBuffer_ the calls may touch (gaps included)
  const size_t sendSpan = sendStride * calls;
  // Sentinels everywhere the calls may touch, the gaps between a group's buffers included (they must stay).
  fillSentinel(recv, recvSpan);
  if (mode == Mode::kOutOfPlace) fillSentinel(send, sendSpan);
  for (size_t k = 0; k < calls; ++k) {
    std::byte* sendK = send + k * sendStride;
    std::byte* recvK = recv + k * recvStride;
    if (mode == Mode::kOutOfPlace) {
      checker_->fillInput(sendK, sendCount, rank_);
    } else {
      const bool gathers = options_.collective == Collective::kAllGather || options_.collective == Collective::kGather;
      if (gathers) fillSentinel(recvK, layout.inPlaceBytes);
      checker_->fillInput(recvK + layout.inPlaceSendOffset, sendCount, rank_);
    }
  }
  if (mode == Mode::kOutOfPlace) {
    fillSentinel(send - kGuard, kGuard);
    fillSentinel(send + sendSpan, kGuard);
  }
  fillSentinel(recv - kGuard, kGuard);
  fillSentinel(recv + recvSpan, kGuard);

  if (device_) onDevice("copying the inputs to the device", [&] { device_->upload(sendBuffer_, recvBuffer_); });
  launch(buffersFor(layout, mode), layout.count);
  synchronizeHostStream();
  // The copies back are enqueued on the call's stream: they run after it.
  if (device_) onDevice("copying the results from the device", [&] { device_->download(sendBuffer_, recvBuffer_); });

  const CallBuffers buffers = buffersFor(layout, mode, true);
  uint64_t wrong = 0;
  for (size_t k = 0; k < calls; ++k) {
    wrong += countResultMismatches(layout, static_cast<const std::byte*>(buffers.recv) + k * buffers.recvStride, mode);
    if (mode == Mode::kOutOfPlace) {
      wrong += checker_->countInputMismatches(send + k * sendStride, sendCount, rank_);  // sendbuff is const
    }
    // The gap after each call's buffers keeps its sentinel.
    const size_t gap = recvStride - (mode == Mode::kOutOfPlace ? layout.recvBytes : layout.inPlaceBytes);
    wrong += countSentinelMismatches(recv + k * recvStride + (recvStride - gap), gap, typeSize_);
  }
  if (mode == Mode::kOutOfPlace) {
    wrong += countSentinelMismatches(send - kGuard, kGuard, typeSize_);
    wrong += countSentinelMismatches(send + sendSpan, kGuard, typeSize_);
  }
  wrong += countSentinelMismatches(recv - kGuard, kGuard, typeSize_);
  wrong += countSentinelMismatches(recv + recvSpan, kGuard, typeSize_);
  return wrong;
}

uint64_t PerfRunner::countResultMismatches(const SizeLayout& layout, const std::byte* result, Mode mode) {
  const size_t count = layout.count;
  const size_t block = count * typeSize_;
  const size_t r = static_cast<size_t>(rank_);
  switch (options_.collective) {
    case Collective::kAllReduce:
      return checker_->countReducedMismatches(result, count);
    case Collective::kBroadcast:
      return checker_->countInputMismatches(result, count, root_);
    case Collective::kReduce:
      if (rank_ == root_) return checker_->countReducedMismatches(result, count);
      // recvbuff is written on the root only: elsewhere it keeps the sentinel, or in place, this rank's input.
      if (mode == Mode::kOutOfPlace) return countSentinelMismatches(result, layout.recvBytes, typeSize_);
      return checker_->countInputMismatches(result, count, rank_);
    case Collective::kAllGather: {
      uint64_t wrong = 0;
      for (int p = 0; p < nranks_; ++p) {
        wrong += checker_->countInputMismatches(result + static_cast<size_t>(p) * layout.sendBytes, count, p);
      }
      return wrong;
    }
    case Collective::kReduceScatter:
      return checker_->countReducedMismatches(result, count, r * count);
    case Collective::kAllToAll: {
      uint64_t wrong = 0;
      for (int p = 0; p < nranks_; ++p) {
        wrong += checker_->countInputMismatches(result + static_cast<size_t>(p) * block, count, p, r * count);
      }
      return wrong;
    }
    case Collective::kAllToAllv: {
      uint64_t wrong = 0;
      for (int p = 0; p < nranks_; ++p) {
        wrong += checker_->countInputMismatches(result + recvDispls_[p] * typeSize_, recvCounts_[p], p,
                                                sendDisplacement(p, rank_));
      }
      return wrong + countSentinelMismatches(result + recvExtent_, layout.recvBytes - recvExtent_, typeSize_);
    }
    case Collective::kGather: {
      // result is recvbuff: the gathered blocks on the root; elsewhere untouched (in place: this rank's input in
      // its own block).
      uint64_t wrong = 0;
      for (int p = 0; p < nranks_; ++p) {
        const std::byte* at = result + static_cast<size_t>(p) * block;
        if (rank_ == root_) {
          wrong += checker_->countInputMismatches(at, count, p);
        } else if (mode == Mode::kInPlace && p == rank_) {
          wrong += checker_->countInputMismatches(at, count, p);
        } else {
          wrong += countSentinelMismatches(at, block, typeSize_);
        }
      }
      return wrong;
    }
    case Collective::kScatter:
      return checker_->countInputMismatches(result, count, root_, r * count);
    case Collective::kSendRecv:
      return checker_->countInputMismatches(result, count, (rank_ + nranks_ - 1) % nranks_);
    case Collective::kPingPong:
      if ((rank_ ^ 1) >= nranks_) return countSentinelMismatches(result, layout.recvBytes, typeSize_);
      return checker_->countInputMismatches(result, count, rank_ ^ 1);
    case Collective::kBarrier:
      return 0;
  }
  return 0;
}

void PerfRunner::emit(const SizeRecord& record) {
  std::fputs(formatTableRow(record).c_str(), stdout);
  std::fflush(stdout);
  if (csv_ != nullptr) {
    std::fputs(csvRecord(record).c_str(), csv_);
    std::fflush(csv_);
  }
  if (json_ != nullptr) {
    std::fputs(jsonFirstRecord_ ? "  " : ",\n  ", json_);
    std::fputs(jsonRecord(record).c_str(), json_);
    std::fflush(json_);
    jsonFirstRecord_ = false;
  }
}

int PerfRunner::run() {
  // A barrier moves no data: one row, whatever the sizes.
  const std::vector<size_t> sizes =
      options_.collective == Collective::kBarrier ? std::vector<size_t>{0} : sweepSizes(options_);
  if (int status = setUp(sizes); status != 0) return status;
  if (!comms_.empty()) return runComparison(sizes);
  if (rank_ == 0) {
    std::fputs(formatTableHeader(options_, nranks_).c_str(), stdout);
    std::fflush(stdout);
  }
  uint64_t totalWrong = 0;
  double busBandwidthSum = 0;
  int busBandwidthSamples = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const SizeLayout layout = computeSizeLayout(options_.collective, sizes[i], typeSize_, nranks_, rank_);
    SizeRecord record;
    record.collective = info_.name;
    record.nranks = nranks_;
    record.bytes = layout.bytes;
    record.count = layout.count;
    record.type = dataTypeName(options_.datatype);
    record.op = info_.reduces ? redOpName(options_.op) : "none";
    record.root = root_;
    planVectors(layout, i + 1);
    record.outOfPlace = measure(layout, Mode::kOutOfPlace, 2 * i + 1);
    record.algorithm = timedAlgorithm_;
    record.hasInPlace = info_.hasInPlace;
    if (record.hasInPlace) record.inPlace = measure(layout, Mode::kInPlace, 2 * i + 2);
    for (const ModeResult* m : {&record.outOfPlace, &record.inPlace}) {
      if (m == &record.inPlace && !record.hasInPlace) continue;
      totalWrong += m->wrong.value_or(0);
      busBandwidthSum += m->busBandwidthGBs;
      ++busBandwidthSamples;
    }
    if (rank_ == 0) {
      emit(record);
      rows_.push_back(record);
    }
  }
  if (json_ != nullptr) std::fputs("\n]\n", json_);
  if (rank_ == 0 && enqueueSamples_ > 0) {
    std::printf("# Avg enqueue time     : %.2f us per call (--stream host; slowest rank)\n",
                enqueueUsSum_ / enqueueSamples_);
  }
  if (rank_ == 0) {
    std::fputs(formatTableFooter(totalWrong, busBandwidthSamples ? busBandwidthSum / busBandwidthSamples : 0).c_str(),
               stdout);
    const std::string transports = transportsInUse(comm_);
    std::fputs(formatSweepSummary(rows_, transports).c_str(), stdout);
    std::fflush(stdout);
    if (plot_ != nullptr) {
      std::string title = "chorus-perf ";
      title.append(info_.name).append(", ").append(std::to_string(nranks_)).append(" ranks, ");
      title.append(dataTypeName(options_.datatype));
      if (info_.reduces) title.append(" ").append(redOpName(options_.op));
      title.append(" (").append(transports).append(")");
      const std::string svg = svgBandwidthPlot(rows_, title);
      const bool written = std::fputs(svg.c_str(), plot_) >= 0;
      if (std::fclose(plot_) != 0 || !written) {
        std::fprintf(stderr, "chorus-perf: cannot write --plot file '%s': %s\n", options_.plotPath.c_str(),
                     std::strerror(errno));
      }
      plot_ = nullptr;
    }
  }
  // Launchers stop the whole job when one rank exits non-zero: no rank leaves before rank 0 has printed.
  barrier();
  return totalWrong == 0 ? 0 : 1;
}

}  // namespace chorus::perf
