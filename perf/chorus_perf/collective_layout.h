// What each collective benchmarked by chorus-perf is, and how a sweep size maps onto counts and buffer spans.
// Pure arithmetic (no library calls), so that the unit tests can check it against nccl-tests' conventions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace chorus::perf {

// kSendRecv: nccl-tests' sendrecv_perf, each rank sending to rank + 1 and receiving from rank - 1 in one group.
// kPingPong: ranks 2k and 2k+1 bounce a message (blocking send, then receive); its time is half the round trip.
enum class Collective {
  kAllReduce,
  kBroadcast,
  kReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kAllToAllv,
  kGather,
  kScatter,
  kSendRecv,
  kPingPong,
  kBarrier,
};
inline constexpr Collective kAllPerfCollectives[] = {
    Collective::kAllReduce, Collective::kBroadcast, Collective::kReduce,  Collective::kAllGather,
    Collective::kReduceScatter, Collective::kAllToAll, Collective::kAllToAllv, Collective::kGather,
    Collective::kScatter,   Collective::kSendRecv,  Collective::kPingPong,  Collective::kBarrier};

// The static facts chorus-perf needs about one collective.
struct CollectiveInfo {
  Collective collective;
  std::string_view name;  // as typed on the command line and printed in the header
  bool rooted;            // has a root (the root column shows it; -1 otherwise)
  bool reduces;           // takes a reduction op (the redop column shows "none" otherwise)
  bool hasInPlace;        // has an in-place form (the in-place columns show "-" otherwise)
};

// The descriptor of `collective`.
inline const CollectiveInfo& collectiveInfo(Collective collective) {
  static constexpr CollectiveInfo kInfos[] = {
      {Collective::kAllReduce, "allreduce", false, true, true},
      {Collective::kBroadcast, "broadcast", true, false, true},
      {Collective::kReduce, "reduce", true, true, true},
      {Collective::kAllGather, "allgather", false, false, true},
      {Collective::kReduceScatter, "reducescatter", false, true, true},
      {Collective::kAllToAll, "alltoall", false, false, false},
      {Collective::kAllToAllv, "alltoallv", false, false, false},
      {Collective::kGather, "gather", true, false, true},
      {Collective::kScatter, "scatter", true, false, true},
      {Collective::kSendRecv, "sendrecv", false, false, false},
      {Collective::kPingPong, "pingpong", false, false, false},
      {Collective::kBarrier, "barrier", false, false, false},
  };
  return kInfos[static_cast<int>(collective)];
}

// "allreduce, broadcast, ...": every name, for messages.
inline std::string collectiveNames() {
  std::string names;
  for (Collective c : kAllPerfCollectives) names += (names.empty() ? "" : ", ") + std::string(collectiveInfo(c).name);
  return names;
}

// The collective named `name` ("allreduce", also nccl-tests' "all_reduce"); nullopt when unknown.
inline std::optional<Collective> parseCollective(std::string_view name) {
  std::string folded;
  for (char c : name) {
    if (c != '_' && c != '-') folded.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
  }
  for (Collective c : kAllPerfCollectives) {
    if (folded == collectiveInfo(c).name) return c;
  }
  return std::nullopt;
}

// nccl-tests' bus bandwidth factor: busbw = algbw * factor, so that busbw compares with the link speed.
inline double busBandwidthFactor(Collective collective, int nranks) {
  const double n = nranks;
  switch (collective) {
    case Collective::kAllReduce:
      return 2.0 * (n - 1) / n;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll:
    case Collective::kAllToAllv:
    case Collective::kGather:
    case Collective::kScatter:
      return (n - 1) / n;
    case Collective::kBroadcast:
    case Collective::kReduce:
    case Collective::kSendRecv:
    case Collective::kPingPong:
      return 1.0;
    case Collective::kBarrier:
      return 0.0;
  }
  return 1.0;
}

// One sweep point: the count passed to the call and the byte spans the call reads and writes.
struct SizeLayout {
  size_t bytes = 0;         // the size column: per-rank buffer bytes (allgather: recv total; reducescatter: send total)
  size_t count = 0;         // the count argument of the call (per-rank count for allgather and reducescatter)
  size_t totalCount = 0;    // elements of the full result (count * nranks for allgather and reducescatter)
  size_t sendBytes = 0;     // bytes of sendbuff the call reads
  size_t recvBytes = 0;     // bytes of recvbuff the call writes
  size_t inPlaceBytes = 0;  // bytes of the single in-place buffer
  size_t inPlaceSendOffset = 0;  // sendbuff = buffer + this, in place (allgather: rank * count * typeSize)
  size_t inPlaceRecvOffset = 0;  // recvbuff = buffer + this, in place (reducescatter: rank * count * typeSize)
};

// Maps the requested `bytes` onto whole elements as nccl-tests does (rounding down; to a multiple of nranks where
// the collective splits the buffer across ranks).
inline SizeLayout computeSizeLayout(Collective collective, size_t bytes, size_t typeSize, int nranks, int rank) {
  SizeLayout layout;
  const size_t n = static_cast<size_t>(nranks);
  const size_t r = static_cast<size_t>(rank);
  switch (collective) {
    case Collective::kAllReduce:
    case Collective::kBroadcast:
    case Collective::kReduce:
    case Collective::kSendRecv:
    case Collective::kPingPong:
      layout.count = bytes / typeSize;
      layout.totalCount = layout.count;
      layout.sendBytes = layout.recvBytes = layout.inPlaceBytes = layout.bytes = layout.count * typeSize;
      break;
    case Collective::kAllGather:
    case Collective::kGather:
      layout.count = bytes / typeSize / n;
      layout.totalCount = layout.count * n;
      layout.sendBytes = layout.count * typeSize;
      layout.recvBytes = layout.inPlaceBytes = layout.bytes = layout.totalCount * typeSize;
      layout.inPlaceSendOffset = r * layout.sendBytes;
      break;
    case Collective::kReduceScatter:
    case Collective::kScatter:
      layout.count = bytes / typeSize / n;
      layout.totalCount = layout.count * n;
      layout.recvBytes = layout.count * typeSize;
      layout.sendBytes = layout.inPlaceBytes = layout.bytes = layout.totalCount * typeSize;
      layout.inPlaceRecvOffset = r * layout.recvBytes;
      break;
    case Collective::kAllToAll:
      layout.count = bytes / typeSize / n;
      layout.totalCount = layout.count * n;
      layout.sendBytes = layout.recvBytes = layout.bytes = layout.totalCount * typeSize;
      break;
    case Collective::kAllToAllv:
      // The size column is the nominal per-rank total; the pairs' counts vary around count (alltoallvCount), up to
      // twice it, so the buffers are twice the nominal size.
      layout.count = bytes / typeSize / n;
      layout.totalCount = layout.count * n;
      layout.bytes = layout.totalCount * typeSize;
      layout.sendBytes = layout.recvBytes = 2 * layout.bytes;
      break;
    case Collective::kBarrier:
      break;
  }
  return layout;
}

// Alltoallv's random but reproducible split: the elements rank `from` sends to rank `to` for a nominal `count` per
// pair, between half and one and a half times it (every rank computes every pair alike).
inline size_t alltoallvCount(size_t count, int from, int to, size_t salt) {
  uint64_t h = (static_cast<uint64_t>(from) << 40) ^ (static_cast<uint64_t>(to) << 20) ^ salt;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return count / 2 + (count == 0 ? 0 : static_cast<size_t>(h % (count + 1)));
}

}  // namespace chorus::perf
