#include "core/bootstrap/store_protocol.h"

#include <algorithm>
#include <cstdio>

#include "core/little_endian.h"

namespace chorus::store_protocol {

namespace {

bool knownOp(Op op) { return op >= Op::kHello && op <= Op::kCheckEach; }

bool knownStatus(Status status) { return status <= Status::kAuthFailed; }

}  // namespace

void encodeHeader(const FrameHeader& header, uint8_t* out) {
  putLe(out, header.magic, 4);
  out[4] = static_cast<uint8_t>(header.op);
  out[5] = static_cast<uint8_t>(header.status);
  putLe(out + 6, header.reserved, 2);
  putLe(out + 8, header.keyBytes, 4);
  putLe(out + 12, header.valueBytes, 4);
}

FrameHeader decodeHeader(const uint8_t* in) {
  FrameHeader header;
  header.magic = static_cast<uint32_t>(getLe(in, 4));
  header.op = static_cast<Op>(in[4]);
  header.status = static_cast<Status>(in[5]);
  header.reserved = static_cast<uint16_t>(getLe(in + 6, 2));
  header.keyBytes = static_cast<uint32_t>(getLe(in + 8, 4));
  header.valueBytes = static_cast<uint32_t>(getLe(in + 12, 4));
  return header;
}

std::string headerProblem(const FrameHeader& header) {
  if (header.magic != kMagic) {
    char text[64];
    std::snprintf(text, sizeof(text), "bad magic 0x%08x (not a Chorus store peer?)", header.magic);
    return text;
  }
  if (!knownOp(header.op)) return "unknown " + opName(header.op);
  if (!knownStatus(header.status)) return "unknown status " + std::to_string(static_cast<int>(header.status));
  if (header.reserved != 0) return "reserved header field is " + std::to_string(header.reserved) + ", not 0";
  if (header.keyBytes > kMaxKeyBytes) {
    return "key length " + std::to_string(header.keyBytes) + " exceeds " + std::to_string(kMaxKeyBytes);
  }
  if (header.valueBytes > kMaxValueBytes) {
    return "value length " + std::to_string(header.valueBytes) + " exceeds " + std::to_string(kMaxValueBytes);
  }
  return {};
}

Bytes encodeFrame(Op op, Status status, std::string_view key, std::span<const uint8_t> value) {
  FrameHeader header;
  header.op = op;
  header.status = status;
  header.keyBytes = static_cast<uint32_t>(key.size());
  header.valueBytes = static_cast<uint32_t>(value.size());
  Bytes frame(kHeaderBytes + key.size() + value.size());
  encodeHeader(header, frame.data());
  std::copy(key.begin(), key.end(), frame.begin() + kHeaderBytes);
  std::copy(value.begin(), value.end(), frame.begin() + kHeaderBytes + key.size());
  return frame;
}

std::string opName(Op op) {
  switch (op) {
    case Op::kHello:
      return "HELLO";
    case Op::kSet:
      return "SET";
    case Op::kGet:
      return "GET";
    case Op::kAdd:
      return "ADD";
    case Op::kCheck:
      return "CHECK";
    case Op::kSetOwned:
      return "SET_OWNED";
    case Op::kCompareSet:
      return "COMPARE_SET";
    case Op::kCheckEach:
      return "CHECK_EACH";
  }
  return "op " + std::to_string(static_cast<int>(op));
}

Bytes encodeInt64(int64_t value) {
  Bytes out(8);
  putLe(out.data(), static_cast<uint64_t>(value), 8);
  return out;
}

bool decodeInt64(std::span<const uint8_t> bytes, int64_t* value) {
  if (bytes.size() != 8) return false;
  *value = static_cast<int64_t>(getLe(bytes.data(), 8));
  return true;
}

Bytes encodeUint32(uint32_t value) {
  Bytes out(4);
  putLe(out.data(), value, 4);
  return out;
}

bool decodeUint32(std::span<const uint8_t> bytes, uint32_t* value) {
  if (bytes.size() != 4) return false;
  *value = static_cast<uint32_t>(getLe(bytes.data(), 4));
  return true;
}

Bytes encodeCompareSet(std::span<const uint8_t> expected, std::span<const uint8_t> desired) {
  Bytes out(4 + expected.size() + desired.size());
  putLe(out.data(), expected.size(), 4);
  std::copy(expected.begin(), expected.end(), out.begin() + 4);
  std::copy(desired.begin(), desired.end(), out.begin() + 4 + static_cast<ptrdiff_t>(expected.size()));
  return out;
}

bool decodeCompareSet(std::span<const uint8_t> bytes, Bytes* expected, Bytes* desired) {
  if (bytes.size() < 4) return false;
  const uint64_t length = getLe(bytes.data(), 4);
  if (length > bytes.size() - 4) return false;
  expected->assign(bytes.begin() + 4, bytes.begin() + 4 + static_cast<ptrdiff_t>(length));
  desired->assign(bytes.begin() + 4 + static_cast<ptrdiff_t>(length), bytes.end());
  return true;
}

std::string helloAuthContext(std::string_view jobId) { return "chorus store v2 job " + std::string(jobId); }

Bytes encodeKeyList(const std::vector<std::string>& keys) {
  Bytes out(4);
  putLe(out.data(), keys.size(), 4);
  for (const std::string& key : keys) {
    size_t at = out.size();
    out.resize(at + 4 + key.size());
    putLe(out.data() + at, key.size(), 4);
    std::copy(key.begin(), key.end(), out.begin() + at + 4);
  }
  return out;
}

bool decodeKeyList(std::span<const uint8_t> bytes, std::vector<std::string>* keys, std::string* problem) {
  keys->clear();
  if (bytes.size() < 4) {
    *problem = "key list shorter than its count field";
    return false;
  }
  uint64_t count = getLe(bytes.data(), 4);
  size_t at = 4;
  // Each key takes at least its 4-byte length, so a count the buffer cannot hold is refused before reserving.
  if (count > (bytes.size() - at) / 4) {
    *problem = "key list claims " + std::to_string(count) + " keys in " + std::to_string(bytes.size()) + " bytes";
    return false;
  }
  keys->reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    if (bytes.size() - at < 4) {
      *problem = "key list truncated at key " + std::to_string(i);
      return false;
    }
    uint64_t length = getLe(bytes.data() + at, 4);
    at += 4;
    if (length > kMaxKeyBytes || length > bytes.size() - at) {
      *problem = "key " + std::to_string(i) + " of the key list has bad length " + std::to_string(length);
      return false;
    }
    keys->emplace_back(reinterpret_cast<const char*>(bytes.data() + at), length);
    at += length;
  }
  if (at != bytes.size()) {
    *problem = "key list has " + std::to_string(bytes.size() - at) + " trailing bytes";
    return false;
  }
  return true;
}

}  // namespace chorus::store_protocol
