// Fuzzes the store's wire parsing: a stream of frames as the server reads them (header checks, then the body
// decoders each op uses), with round-trip checks on what decodes.
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "core/bootstrap/store_protocol.h"

namespace wire = chorus::store_protocol;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> in(data, size);
  while (in.size() >= wire::kHeaderBytes) {
    wire::FrameHeader header = wire::decodeHeader(in.data());
    in = in.subspan(wire::kHeaderBytes);
    if (!wire::headerProblem(header).empty()) return 0;  // the server closes the connection here
    // headerProblem bounds both lengths; the server allocates exactly these before reading.
    if (header.keyBytes > wire::kMaxKeyBytes || header.valueBytes > wire::kMaxValueBytes) std::abort();
    const size_t body = size_t{header.keyBytes} + header.valueBytes;
    if (in.size() < body) return 0;  // truncated: the server waits for the rest, then times out or sees EOF
    std::string key(reinterpret_cast<const char*>(in.data()), header.keyBytes);
    std::span<const uint8_t> value = in.subspan(header.keyBytes, header.valueBytes);
    in = in.subspan(body);
    switch (header.op) {
      case wire::Op::kHello: {
        uint32_t version = 0;
        if (wire::decodeUint32(value, &version) &&
            wire::encodeUint32(version) != chorus::Bytes(value.begin(), value.end()))
          std::abort();
        (void)wire::helloAuthContext(key);
        break;
      }
      case wire::Op::kAdd: {
        int64_t delta = 0;
        if (wire::decodeInt64(value, &delta) && wire::encodeInt64(delta) != chorus::Bytes(value.begin(), value.end()))
          std::abort();
        break;
      }
      case wire::Op::kCheck: {
        std::vector<std::string> keys;
        std::string problem;
        if (wire::decodeKeyList(value, &keys, &problem)) {
          if (wire::encodeKeyList(keys) != chorus::Bytes(value.begin(), value.end())) std::abort();
        } else if (problem.empty()) {
          std::abort();  // a refusal must say why
        }
        break;
      }
      case wire::Op::kSet:
      case wire::Op::kGet:
        break;
    }
    // What the server would answer must encode within the limits it checks.
    chorus::Bytes frame = wire::encodeFrame(header.op, wire::Status::kOk, {}, value);
    wire::FrameHeader echoed = wire::decodeHeader(frame.data());
    if (!wire::headerProblem(echoed).empty() || echoed.valueBytes != value.size()) std::abort();
  }
  return 0;
}
