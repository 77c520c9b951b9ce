// A Connection over one or more TCP sockets to one peer: framed, non-blocking, large messages striped.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "transports/connection.h"
#include "transports/reserved_tags.h"

namespace chorus {

// What precedes every slice on the wire; checked before a byte of payload is trusted.
struct FrameHeader {
  uint32_t magic;
  uint32_t tag;
  uint64_t bytes;
};
static_assert(sizeof(FrameHeader) == 16);
inline constexpr uint32_t kFrameMagic = 0x53524843;  // "CHRS"
inline constexpr uint32_t kGoodbyeTag = reserved_tags::kGoodbye;
inline constexpr uint32_t kAbandonTag = reserved_tags::kAbandon;

class TcpConnection final : public Connection {
 public:
  // Takes ownership of connected non-blocking socket descriptors (index i carries stripe i).
  // rank/peer/address are for messages.
  TcpConnection(int rank, int peer, std::string address, const std::vector<int>& fds);
  ~TcpConnection() override;

  uint64_t isend(const void* buf, size_t bytes, uint32_t tag) override;
  uint64_t irecv(void* buf, size_t bytes, uint32_t tag) override;
  bool progress() override;
  uint64_t sendsDone() const override { return sendsDone_; }
  uint64_t recvsDone() const override { return recvsDone_; }
  bool busy() const override { return sendsDone_ != sendsPosted_ || recvsDone_ != recvsPosted_; }
  size_t pendingReceiveBytes() const override;
  void addPollFds(std::vector<pollfd>& fds) const override;
  void closeGracefully() override;
  void abandon(int lostPeer = kNoRank) override;
  bool peekIncomingTag(uint32_t* tag) override;
  bool peeks() const override { return true; }
  void addHangupFds(std::vector<pollfd>& fds) const override;
  void checkAlive() override;
  int peer() const override { return peer_; }
  const char* describe() const override { return description_.c_str(); }

  // How a message of `bytes` is cut across `nsocks` sockets: the stripe [begin, end) carried by socket i.
  static void stripe(size_t bytes, size_t nsocks, size_t i, size_t* begin, size_t* end);
  // One slice of message `msg` completed: pending[m - done] counts message m's slices still outstanding; `done`
  // advances over every message whose slices all completed (messages complete in posting order).
  static void sliceDone(std::deque<uint32_t>& pending, uint64_t& done, uint64_t msg);

 private:
  struct Slice {
    char* data;
    size_t len;
    size_t done;   // payload bytes moved
    size_t hdrDone;  // header bytes moved
    FrameHeader hdr;  // sent (send side) or expected, then received (receive side)
    uint32_t expectTag;
    uint64_t msg;  // the message this slice belongs to
  };
  struct Stream {
    int fd;
    std::deque<Slice> sends, recvs;
    int lowat;  // the SO_RCVLOWAT last set: poll wakes when this many bytes are queued
  };
  void post(bool isSend, char* buf, size_t bytes, uint32_t tag, uint64_t msg);
  bool moveSlices(Stream& s, bool isSend);
  void checkHeader(const Slice& sl) const;
  [[noreturn]] void lost(const char* call, int err) const;

  int rank_, peer_;
  std::string address_, description_;
  std::vector<Stream> streams_;
  // Slices still outstanding for each message not yet complete, oldest first.
  std::deque<uint32_t> sendPending_, recvPending_;
  bool peerSaidGoodbye_ = false;
  bool abandoned_ = false;
  // Throws for a goodbye or abandon frame arriving where data was expected (or seen while idle).
  void checkControlFrame(const FrameHeader& h, bool expectingData) const;
  uint64_t sendsPosted_ = 0, sendsDone_ = 0, recvsPosted_ = 0, recvsDone_ = 0;
};

}  // namespace chorus
