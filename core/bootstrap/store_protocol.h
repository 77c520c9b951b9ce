// Wire format of the rendezvous store, shared by StoreServer and StoreClient.
//
// Every message, request or response, is a 16-byte little-endian header followed by `keyBytes` of key and
// `valueBytes` of value:
//   u32 magic ("CHST") | u8 op | u8 status | u16 reserved (0) | u32 keyBytes | u32 valueBytes
// Lengths are checked against kMaxKeyBytes / kMaxValueBytes before anything is allocated or read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/bootstrap/store.h"

namespace chorus::store_protocol {

inline constexpr uint32_t kMagic = 0x54534843;  // "CHST" read as little-endian bytes
inline constexpr uint32_t kVersion = 3;
inline constexpr size_t kHeaderBytes = 16;
inline constexpr uint32_t kMaxKeyBytes = 4096;
inline constexpr uint32_t kMaxValueBytes = 64u << 20;
// Until its HELLO is accepted a connection is a stranger: its frames may carry at most this many value bytes.
inline constexpr uint32_t kMaxHelloValueBytes = 16;

// Requests; a response echoes its request's op.
//   HELLO: key = job id, value = u32 protocol version. Must be the first request of a connection. The kOk answer
//          carries one byte: 0 = served from now on; 1 = the server has a secret and the channel handshake of
//          core/security/channel_handshake.h (client = initiator, context = helloAuthContext(job id)) follows on the
//          raw stream, after which requests are served.
//   SET:   key, value. GET: key; answered once the key exists. ADD: key, value = i64 delta; answer = i64 sum.
//   CHECK: value = key list (see encodeKeyList); answer = one byte, 1 when every key exists.
//   SET_OWNED: as SET, and the key goes when the connection that set it closes (a process that dies takes its keys
//          with it: ZooKeeper's ephemeral nodes). A later SET, ADD or COMPARE_SET of the key by anyone ends that.
//   COMPARE_SET: key, value = encodeCompareSet(expected, desired): sets desired when the key holds expected, or is
//          missing and expected is empty; answer = the value the key holds afterwards (torch's compare_set).
//   CHECK_EACH: value = key list; answer = one byte per key, 1 when it exists.
enum class Op : uint8_t {
  kHello = 1,
  kSet = 2,
  kGet = 3,
  kAdd = 4,
  kCheck = 5,
  kSetOwned = 6,
  kCompareSet = 7,
  kCheckEach = 8
};

// Response status; requests carry kOk. A non-kOk response carries a human-readable reason as its value.
enum class Status : uint8_t {
  kOk = 0,
  kJobMismatch = 1,  // HELLO named another job; the server closes the connection
  kBadVersion = 2,   // HELLO carried an unknown protocol version; the server closes the connection
  kNotCounter = 3,   // ADD on a key whose value is not a decimal int64, or the sum overflows
  kBadRequest = 4,   // a well-formed frame the server refuses (e.g. a request before HELLO); then closes
  kAuthFailed = 5,   // unused on the wire: a failed handshake ends with its own refusal verdict, then the close
};

struct FrameHeader {
  uint32_t magic = kMagic;
  Op op = Op::kHello;
  Status status = Status::kOk;
  uint16_t reserved = 0;
  uint32_t keyBytes = 0;
  uint32_t valueBytes = 0;
};

// Writes header as kHeaderBytes little-endian bytes at out.
void encodeHeader(const FrameHeader& header, uint8_t* out);
// Reads kHeaderBytes at in; performs no validation (see headerProblem).
FrameHeader decodeHeader(const uint8_t* in);
// Empty when the header may be used (magic, op, status, reserved, both lengths); otherwise what is wrong.
std::string headerProblem(const FrameHeader& header);
// A frame (header, key, value) as one buffer; the caller has checked the lengths.
Bytes encodeFrame(Op op, Status status, std::string_view key, std::span<const uint8_t> value);
// "HELLO", "SET", ...; "op <n>" for unknown values.
std::string opName(Op op);

// 8 little-endian bytes.
Bytes encodeInt64(int64_t value);
// Reads 8 little-endian bytes; false when the span is not exactly 8 bytes.
bool decodeInt64(std::span<const uint8_t> bytes, int64_t* value);
// 4 little-endian bytes.
Bytes encodeUint32(uint32_t value);
// Reads 4 little-endian bytes; false when the span is not exactly 4 bytes.
bool decodeUint32(std::span<const uint8_t> bytes, uint32_t* value);

// COMPARE_SET's value: u32 expected length | expected | desired.
Bytes encodeCompareSet(std::span<const uint8_t> expected, std::span<const uint8_t> desired);
// False when the span is too short for the length it carries.
bool decodeCompareSet(std::span<const uint8_t> bytes, Bytes* expected, Bytes* desired);

// The HELLO answer's byte: whether the channel handshake follows.
inline constexpr uint8_t kHelloServed = 0;
inline constexpr uint8_t kHelloAuthenticate = 1;
// The context string both ends bind the handshake to: the store's purpose and its job.
std::string helloAuthContext(std::string_view jobId);

// CHECK's key list: u32 count, then per key u32 length and bytes.
Bytes encodeKeyList(const std::vector<std::string>& keys);
// Decodes a key list, checking every length against the buffer and kMaxKeyBytes; false (with *problem) if bad.
bool decodeKeyList(std::span<const uint8_t> bytes, std::vector<std::string>* keys, std::string* problem);

}  // namespace chorus::store_protocol
