// What one IbConnection writes into its peer's ring and immediates, and how it names its work requests: shared by
// the connection's setup (ib_connection.cc) and its data path (ib_data_path.cc), nowhere else.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "transports/ib/ib_connection.h"

namespace chorus::ib_wire {

inline constexpr size_t kRing = IbConnection::kRingBytes;
inline constexpr uint32_t kCreditFlag = 0x80000000u;
// A window put's immediate (WindowRdmaWrites): the low 30 bits are the window channel's; chunk offsets in units
// (kRing / kUnit) never reach this bit.
inline constexpr uint32_t kWindowFlag = 0x40000000u;
static_assert(IbConnection::kRingBytes / 64 < kWindowFlag && WindowRdmaWrites::kMaxImmediate < kWindowFlag);
inline constexpr uint32_t kUnit = 64;  // immediates count ring bytes in these units
inline constexpr uint32_t kRecvWqes = 2 * IbConnection::kMaxChunksInFlight;
inline constexpr uint32_t kInfoMagic = 0x31424943;  // "CIB1"

struct ChunkHeader {
  uint32_t tag;
  uint32_t bytes;
  uint64_t msgBytes;
};
static_assert(sizeof(ChunkHeader) == 16);

enum WorkKind : uint64_t { kDataSend = 1, kCreditSend = 2, kReceive = 3 };
inline uint64_t workId(WorkKind kind, uint32_t lane) { return (static_cast<uint64_t>(kind) << 32) | lane; }
inline WorkKind kindOf(uint64_t id) { return static_cast<WorkKind>(id >> 32); }
inline uint32_t laneOf(uint64_t id) { return static_cast<uint32_t>(id); }

// What one side tells the other: its address, and per lane its QP and ring.
struct InfoHeader {
  uint32_t magic;
  uint32_t lanes;
  uint32_t mtu;
  uint32_t psn;
  uint16_t lid;
  uint8_t ethernet;
  uint8_t pad[5];
  uint8_t gid[16];
};
struct InfoLane {
  uint32_t qpn;
  uint32_t rkey;
  uint64_t ring;
};

// The ring bytes a chunk of `payload` bytes takes.
inline uint64_t strideOf(uint64_t payload) {
  uint64_t bytes = (16 + payload + kUnit - 1) / kUnit * kUnit;
  return std::max<uint64_t>(bytes, IbConnection::kMinStride);
}

}  // namespace chorus::ib_wire
