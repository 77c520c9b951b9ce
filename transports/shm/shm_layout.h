// The layout of one direction of a shared-memory pair: a control page, a ring of one-cache-line records, and a
// byte ring for payloads too big to ride inside a record. One producer (the sender), one consumer (the receiver).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace chorus::shm {

inline constexpr uint32_t kSegmentMagic = 0x4d485343;  // "CSHM"
inline constexpr uint32_t kLayoutVersion = 2;          // 2: inline pieces run on into continuation slots
// Records in flight per direction; a power of two so that a record's slot is its number masked.
inline constexpr uint32_t kRecordSlots = 1024;
// Payload bytes that travel inside the record itself: the consumer gets them with the record's one cache line.
inline constexpr size_t kInlineBytes = 32;
// An inline piece may run on into the record slots that follow its own (never past the last slot): each such
// continuation slot keeps its seq word at 0, so that no payload can ever pass for a record there later, and carries
// kContinuationBytes of payload in the rest of its line. Small messages thus arrive in consecutive lines of one
// array, with no separate line in the byte ring to miss on (a 2-rank 64 B allreduce: 0.70 us through the ring).
inline constexpr size_t kContinuationBytes = 56;
inline constexpr size_t kMaxContinuations = 4;
inline constexpr size_t kInlineMaxBytes = kInlineBytes + kMaxContinuations * kContinuationBytes;  // 256
// The control page: header, producer line, consumer line.
inline constexpr size_t kControlBytes = 4096;

// What a record carries.
enum class RecordKind : uint32_t {
  kInline = 1,  // `len` payload bytes in Record::payload
  kRing = 2,    // `len` payload bytes at the consumer's position in the byte ring (never wrapping)
  kCma = 3,     // `len` bytes at the address in Record::payload, in the producer's memory (process_vm_readv)
};

// What a side of the pair has said about its communicator, in its outbound producer line.
enum class SideState : uint32_t {
  kOpen = 0,
  kGoodbye = 1,    // destroyed its communicator on purpose (the TCP goodbye frame)
  kAbandoned = 2,  // gave up after an error or abort (the TCP abandon frame)
};

// One message piece. The producer writes every field, then `seq` (release); the consumer reads `seq` (acquire)
// at its own position and trusts the rest only when seq equals the record number it expects (+1).
struct alignas(64) Record {
  std::atomic<uint64_t> seq;
  uint64_t messageBytes;  // size of the whole message this piece belongs to (checked against the receive)
  uint32_t tag;           // the call's tag (checked against the receive)
  uint32_t len;           // bytes of this piece
  uint32_t kind;          // a RecordKind
  uint32_t reserved;
  unsigned char payload[kInlineBytes];
};
static_assert(sizeof(Record) == 64);
static_assert(sizeof(Record) - sizeof(uint64_t) == kContinuationBytes);

// The continuation slots an inline piece of `len` bytes runs on into.
inline constexpr size_t continuationsFor(size_t len) {
  return len <= kInlineBytes ? 0 : (len - kInlineBytes + kContinuationBytes - 1) / kContinuationBytes;
}
// Where continuation slot j (1-based) of an inline piece starts in the piece's bytes.
inline constexpr size_t continuationOffset(size_t j) { return kInlineBytes + (j - 1) * kContinuationBytes; }
// Copies a slot's share of an inline piece, `n` bytes of at most kShare: a whole share (every slot's but perhaps the
// last) with a copy of constant size that the compiler inlines, else through memcpy. A call per line cost a 256-byte
// piece five calls on each side.
template <size_t kShare>
inline void copyShare(void* dst, const void* src, size_t n) {
  if (n == kShare) {
    std::memcpy(dst, src, kShare);
  } else {
    std::memcpy(dst, src, n);
  }
}
// A continuation slot's payload: everything after its seq word.
inline unsigned char* continuationBytes(Record& r) { return reinterpret_cast<unsigned char*>(&r) + sizeof(uint64_t); }
inline const unsigned char* continuationBytes(const Record& r) {
  return reinterpret_cast<const unsigned char*>(&r) + sizeof(uint64_t);
}
static_assert(std::atomic<uint64_t>::is_always_lock_free && std::atomic<uint32_t>::is_always_lock_free,
              "shared-memory atomics must be lock-free to work across processes");

// Written only by the producer. 128-byte aligned so that the adjacent-line prefetcher does not couple it to the
// consumer's line.
struct alignas(128) ProducerLine {
  std::atomic<uint32_t> state;     // a SideState: the producer side's word on its communicator
  std::atomic<uint32_t> sleeping;  // 1: blocked for space or an acknowledgement; ring the doorbell after freeing
  std::atomic<uint32_t> lostPeer;  // with kAbandoned: the rank whose loss made this side give up, + 1 (0: none)
};

// Written only by the consumer, at every record.
struct alignas(128) ConsumerLine {
  std::atomic<uint64_t> recordsConsumed;  // records fully handled (a kCma record: its bytes are read = acknowledged)
  std::atomic<uint64_t> bytesConsumed;    // byte-ring bytes copied out (free for the producer again)
};

// Written only by the consumer, and only when it goes to sleep. Apart from ConsumerLine because the producer reads
// it after every record it publishes: on the counters' line that read missed every time (2-rank 8-byte allreduce:
// 0.74 us with it there, 0.45 us apart).
struct alignas(128) ConsumerSleepLine {
  std::atomic<uint32_t> sleeping;  // 1: waiting for a record; ring the doorbell after publishing one
};

// Immutable after creation; the mapper validates it before trusting any offset.
struct SegmentHeader {
  uint32_t magic;
  uint32_t version;
  uint32_t recordSlots;
  uint32_t reserved;
  uint64_t ringBytes;   // size of the byte ring
  uint64_t totalBytes;  // size of the whole segment
};

struct alignas(kControlBytes) RingControl {
  SegmentHeader header;
  ProducerLine producer;
  ConsumerLine consumer;
  ConsumerSleepLine consumerSleep;
};
static_assert(sizeof(RingControl) == kControlBytes);

// Bytes of a segment whose byte ring holds ringBytes.
inline constexpr size_t segmentBytes(size_t ringBytes) {
  return kControlBytes + kRecordSlots * sizeof(Record) + ringBytes;
}

// Typed views of a mapped segment.
inline RingControl* controlOf(void* base) { return static_cast<RingControl*>(base); }
inline Record* recordsOf(void* base) { return reinterpret_cast<Record*>(static_cast<char*>(base) + kControlBytes); }
inline char* ringOf(void* base) { return static_cast<char*>(base) + kControlBytes + kRecordSlots * sizeof(Record); }

}  // namespace chorus::shm
