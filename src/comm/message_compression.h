// CHORUS_COMPRESSION's side of CommIO: a call's float32 messages to and from the peers whose links are compressed
// travel at 16 bits (reduce/compression_codec.h). A send is encoded into a compressed buffer when posted; a receive
// lands in one and is decoded into the algorithm's buffer once it is waited for, so algorithms never see the compressed
// format and reduce in float32 as ever. A sender rounds, in place, the values it sends wherever the call may write
// them, so that it keeps what its peer receives: the ranks of an allreduce agree bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/collective.h"
#include "reduce/compression_codec.h"
#include "transports/connection.h"

namespace chorus {

// Whether `op` may travel compressed: float32 sum/avg reductions, allgather and broadcast, on host memory.
bool compressibleCall(const CallArgs& op);

class MessageCompressor {
 public:
  // peers[p]: the link to rank p is compressed. kNone: nothing ever is.
  void configure(CompressionFormat format, std::vector<bool> peers);
  CompressionFormat format() const { return format_; }
  // Starts a call (`op` among `size` ranks; null: untracked traffic, never compressed). Every buffer is free again.
  void begin(const CallArgs* op, int size, bool hostMemory);
  bool active() const { return active_; }
  bool compresses(int peer, size_t bytes) const {
    return active_ && peers_[static_cast<size_t>(peer)] && bytes > 0 && bytes % 4 == 0;
  }
  // Encodes the floats at buf into a compressed buffer (rounding buf in place unless it is the call's read-only input)
  // and returns it; *compressedSize gets its size. Call sent() with the send's id at once.
  char* encodeSend(const void* buf, size_t bytes, size_t* compressedSize);
  void sent(Connection* conn, uint64_t id);
  // The compressed buffer a receive of `bytes` into buf lands in; call received() with the receive's id at once.
  char* receiveBuffer(void* buf, size_t bytes, size_t* compressedSize);
  void received(Connection* conn, uint64_t id);
  // Decodes the receive `id` of conn (complete by now) into its buffer, if it was compressed and not yet decoded.
  void expand(Connection* conn, uint64_t id);
  // For a float32 sum: out = the receive `id` of conn (complete by now) + with, straight from its compressed buffer,
  // its own buffer left unwritten (expandAdd), if it was compressed and not yet decoded; false otherwise.
  bool expandAdding(Connection* conn, uint64_t id, const void* with, void* out);
  // expandAdding, and `out` encoded for sending in the same pass (expandAddCompress; `out` rounded in place to what its
  // receiver decodes): the send's compressed buffer, with *compressedSize; call sent() with the send's id at once. Null
  // (nothing done) where the receive was not compressed or is decoded already.
  const char* expandAddingEncoded(Connection* conn, uint64_t id, const void* with, void* out, size_t* compressedSize);
  // Decodes every completed receive of this call not yet decoded.
  void expandAll();

 private:
  struct Buffer {
    std::vector<char> bytes;  // grows, never shrinks: reused across calls
    Connection* conn = nullptr;
    uint64_t id = 0;
    bool isSend = false;
    bool busy = false;
    bool posted = false;
    void* out = nullptr;  // a receive's destination
    size_t count = 0;     // floats
  };
  size_t acquire(size_t bytes);
  // The receive's buffer if it is compressed, complete and not yet decoded; else buffers_.size().
  size_t pendingReceive(Connection* conn, uint64_t id) const;
  bool readOnly(const void* buf, size_t bytes) const;

  CompressionFormat format_ = CompressionFormat::kNone;
  std::vector<bool> peers_;
  bool active_ = false;
  const char* inputBegin_ = nullptr;  // the call's input that is not also its output: never written
  const char* inputEnd_ = nullptr;
  std::vector<Buffer> buffers_;
  size_t last_ = 0;  // the buffer encodeSend/receiveBuffer handed out last
};

}  // namespace chorus
