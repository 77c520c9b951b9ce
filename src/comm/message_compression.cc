#include "src/comm/message_compression.h"

#include <algorithm>
#include <cstdint>

#include "core/error.h"

namespace chorus {

bool compressibleCall(const CallArgs& op) {
  if (op.type != chorusFloat32) return false;
  switch (op.collective) {
    case Collective::kAllReduce:
    case Collective::kReduce:
    case Collective::kReduceScatter:
      return op.reduction == chorusSum || op.reduction == chorusAvg;
    case Collective::kAllGather:
    case Collective::kBroadcast:
      return true;
    default:
      return false;
  }
}

void MessageCompressor::configure(CompressionFormat format, std::vector<bool> peers) {
  format_ = format;
  peers_ = std::move(peers);
}

void MessageCompressor::begin(const CallArgs* op, int size, bool hostMemory) {
  active_ = format_ != CompressionFormat::kNone && op != nullptr && hostMemory && compressibleCall(*op);
  for (Buffer& b : buffers_) b.busy = false;
  inputBegin_ = inputEnd_ = nullptr;
  if (!active_) return;
  const size_t n = static_cast<size_t>(size), bytes = op->count * 4;
  const size_t in = op->collective == Collective::kReduceScatter ? bytes * n : bytes;
  const size_t out = op->collective == Collective::kAllGather ? bytes * n : bytes;
  const char* send = static_cast<const char*>(op->send);
  const char* recv = static_cast<const char*>(op->recv);
  // An in-place call's input is its output, which the call may write.
  const bool inPlace = send != nullptr && recv != nullptr && send >= recv && send + in <= recv + out;
  if (send != nullptr && !inPlace) {
    inputBegin_ = send;
    inputEnd_ = send + in;
  }
}

bool MessageCompressor::readOnly(const void* buf, size_t bytes) const {
  const char* p = static_cast<const char*>(buf);
  return inputBegin_ != nullptr && p < inputEnd_ && p + bytes > inputBegin_;
}

size_t MessageCompressor::acquire(size_t bytes) {
  constexpr size_t kNone = SIZE_MAX;
  size_t fits = kNone, largest = kNone;  // the smallest free buffer that fits; the largest free one
  for (size_t i = 0; i < buffers_.size(); ++i) {
    Buffer& b = buffers_[i];
    // A send's buffer is free once the connection has sent it; a receive's once decoded (expand clears busy).
    if (b.busy && b.isSend && b.posted && b.conn->sendsDone() > b.id) b.busy = false;
    if (b.busy) continue;
    const size_t size = b.bytes.size();
    if (size >= bytes && (fits == kNone || size < buffers_[fits].bytes.size())) fits = i;
    if (largest == kNone || size > buffers_[largest].bytes.size()) largest = i;
  }
  size_t chosen = fits != kNone ? fits : largest;
  if (chosen == kNone) {
    chosen = buffers_.size();
    buffers_.emplace_back();
  }
  Buffer& b = buffers_[chosen];
  if (b.bytes.size() < bytes) b.bytes.resize(bytes);
  b.busy = true;
  b.posted = false;
  b.out = nullptr;
  return chosen;
}

char* MessageCompressor::encodeSend(const void* buf, size_t bytes, size_t* compressedSize) {
  const size_t count = bytes / 4;
  *compressedSize = compressedBytes(format_, count);
  last_ = acquire(*compressedSize);
  Buffer& b = buffers_[last_];
  b.isSend = true;
  compressFloats(format_, buf, count, b.bytes.data(), readOnly(buf, bytes) ? nullptr : const_cast<void*>(buf));
  return b.bytes.data();
}

void MessageCompressor::sent(Connection* conn, uint64_t id) {
  Buffer& b = buffers_[last_];
  b.conn = conn;
  b.id = id;
  b.posted = true;
}

char* MessageCompressor::receiveBuffer(void* buf, size_t bytes, size_t* compressedSize) {
  const size_t count = bytes / 4;
  *compressedSize = compressedBytes(format_, count);
  last_ = acquire(*compressedSize);
  Buffer& b = buffers_[last_];
  b.isSend = false;
  b.out = buf;
  b.count = count;
  return b.bytes.data();
}

void MessageCompressor::received(Connection* conn, uint64_t id) { sent(conn, id); }

size_t MessageCompressor::pendingReceive(Connection* conn, uint64_t id) const {
  size_t i = 0;
  for (; i < buffers_.size(); ++i) {
    const Buffer& b = buffers_[i];
    if (b.busy && !b.isSend && b.posted && b.conn == conn && b.id == id) break;
  }
  return i;
}

void MessageCompressor::expand(Connection* conn, uint64_t id) {
  const size_t i = pendingReceive(conn, id);
  if (i == buffers_.size()) return;
  Buffer& b = buffers_[i];
  expandFloats(format_, b.bytes.data(), b.count, b.out);
  b.busy = false;
}

bool MessageCompressor::expandAdding(Connection* conn, uint64_t id, const void* with, void* out) {
  const size_t i = pendingReceive(conn, id);
  if (i == buffers_.size()) return false;
  Buffer& b = buffers_[i];
  expandAdd(format_, b.bytes.data(), b.count, with, out);
  b.busy = false;
  return true;
}

const char* MessageCompressor::expandAddingEncoded(Connection* conn, uint64_t id, const void* with, void* out,
                                                   size_t* compressedSize) {
  const size_t in = pendingReceive(conn, id);
  if (in == buffers_.size()) return nullptr;
  const size_t count = buffers_[in].count;
  *compressedSize = compressedBytes(format_, count);
  last_ = acquire(*compressedSize);  // may add a buffer: indices stay, references would not
  Buffer& send = buffers_[last_];
  Buffer& arrived = buffers_[in];
  send.isSend = true;
  expandAddCompress(format_, arrived.bytes.data(), count, with, out, send.bytes.data());
  arrived.busy = false;
  return send.bytes.data();
}

void MessageCompressor::expandAll() {
  for (Buffer& b : buffers_) {
    if (b.busy && !b.isSend && b.posted && b.conn->recvsDone() > b.id) {
      expandFloats(format_, b.bytes.data(), b.count, b.out);
      b.busy = false;
    }
  }
}

}  // namespace chorus
