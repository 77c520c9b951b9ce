// What the software verbs device (an RDMA adapter emulated for machines without one, soft_verbs.h) sends between
// processes in place of the adapter's packets. Little-endian, this machine's layout: both ends are the same build on
// the same machine.
#pragma once

#include <cstdint>

namespace chorus::soft_verbs {

inline constexpr uint32_t kHelloMagic = 0x53564231;  // "SVB1"

// First on a requester socket: which QP speaks, to which QP, from which GID.
struct Hello {
  uint32_t magic;
  uint32_t srcQpn;
  uint32_t dstQpn;
  uint8_t srcGid[16];
};
static_assert(sizeof(Hello) == 28);

enum RequestOp : uint8_t { kSend = 1, kSendImm = 2, kWrite = 3, kWriteImm = 4 };

// A request, followed by `length` payload bytes.
struct Request {
  uint8_t op;
  uint8_t pad[3];
  uint32_t psn;
  uint32_t imm;
  uint32_t rkey;
  uint64_t remoteAddr;
  uint64_t length;
};
static_assert(sizeof(Request) == 32);

enum AckOp : uint8_t {
  kAck = 1,         // every request up to psn is done
  kNakRnr = 2,      // no receive posted for psn; extra: the responder's min_rnr_timer
  kNakAccess = 3,   // rkey, range or access flags refused (remote access error)
  kNakInvalid = 4,  // the request does not fit the receive (remote invalid request)
  kNakOp = 5,       // the responder failed the request locally (remote operation error)
  kNakSeq = 6,      // psn is not the one expected
};

struct Ack {
  uint8_t op;
  uint8_t extra;
  uint16_t pad;
  uint32_t psn;
};
static_assert(sizeof(Ack) == 8);

inline constexpr uint32_t kPsnMask = 0xffffff;
// a <= b in 24-bit PSN space (within half the space).
inline bool psnAtOrBefore(uint32_t a, uint32_t b) { return ((b - a) & kPsnMask) < 0x800000; }

}  // namespace chorus::soft_verbs
