// A Connection over one or more TCP sockets to one peer: framed, non-blocking, large messages striped; with keys
// (CHORUS_ENCRYPT), every frame's payload travels as AES-128-GCM records (core/security/record_cipher.h).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "core/security/record_cipher.h"
#include "transports/connection.h"
#include "transports/reserved_tags.h"
#include "transports/tcp/stripe_cuts.h"
#include "transports/tcp/tcp_rails.h"

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

// The record keys of one socket: what this end seals with, and what it opens with (the peer's sealing key).
struct TcpLinkKeys {
  RecordCipher::Key send{}, recv{};
};

class TcpConnection final : public Connection, public StripedSends, public TagPeeking {
 public:
  // A sealed frame's payload is cut into records of at most this many bytes, each with its own tag: a record is
  // checked and decrypted as soon as it is in, and the staging it needs stays small. As large as a receiver's wake
  // (kWakeBytes in tcp_connection.cc): smaller records (256 KiB, likely waking a receiver for each record and for
  // the tag each 256 KiB send turn leaves behind) cost an encrypted call about 30% of its speed
  // (perf/results/encryption.md, "The record size").
  static constexpr size_t kRecordBytes = 1024 * 1024;

  // Takes ownership of connected non-blocking socket descriptors (index i carries stripe i).
  // rank/peer/address are for messages. keys: empty (plain), or one per socket (sealed records). rails: which
  // interface each socket leaves by and each rail's share of a striped message (one rail of even sockets if not
  // given); a connection stalled on an interface that went down says so, naming it.
  TcpConnection(int rank, int peer, std::string address, const std::vector<int>& fds,
                const std::vector<TcpLinkKeys>& keys = {}, RailPlan rails = {});
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
  void addHangupFds(std::vector<pollfd>& fds) const override;
  void checkAlive() override;
  void setStripeWidth(size_t width) override { width_ = width == 0 ? defaultWidth_ : std::min(width, perRail_); }
  size_t maxStripeWidth() const override { return perRail_; }
  int peer() const override { return peer_; }
  const char* describe() const override { return description_.c_str(); }
  ConnectionCapabilities capabilities() override { return ConnectionCapabilities{.striping = this, .peeking = this}; }

  // One slice of message `msg` completed: pending[m - done] counts message m's slices still outstanding; `done`
  // advances over every message whose slices all completed (messages complete in posting order).
  static void sliceDone(std::deque<uint32_t>& pending, uint64_t& done, uint64_t msg);

 private:
  struct Slice {
    char* data;    // what moves on the wire: the caller's bytes, or (sealed) a staging buffer once it has one
    size_t len;    // bytes on the wire after the header (sealed: the record, tag included)
    size_t done;   // payload bytes moved
    size_t hdrDone;  // header bytes moved
    FrameHeader hdr;  // sent (send side) or expected, then received (receive side)
    uint32_t expectTag;
    uint64_t msg;  // the message this slice belongs to
    char* user = nullptr;  // sealed: the caller's bytes (read to seal, written when opened)
    size_t plainLen = 0;   // the header's byte count: the caller's bytes in this slice
    int buffer = -1;       // sealed: its staging buffer in the stream's pool; -1 before it has one
    uint64_t number = 0;   // sealed: the record's number on its socket and direction
  };
  struct Stream {
    int fd;
    std::deque<Slice> sends, recvs;
    int lowat;  // the SO_RCVLOWAT last set: poll wakes when this many bytes are queued
    // Sealed streams only: the ciphers of each direction, the next record numbers, and staging buffers of
    // kRecordBytes + tag, reused (made on first need, never per call).
    std::unique_ptr<RecordCipher> sealer, opener;
    uint64_t nextSealed = 0, nextOpened = 0;
    std::vector<std::unique_ptr<char[]>> pool;
    std::vector<int> freeBuffers;
  };
  // Gives a sealed slice its staging buffer (sealing its record now, on the send side).
  void stage(Stream& s, Slice& sl, bool isSend);
  // A sealed slice fully moved: opens a received record into the caller's buffer (throws if it does not
  // authenticate), and returns the buffer to the pool.
  void unstage(Stream& s, Slice& sl, bool isSend);
  void post(bool isSend, char* buf, size_t bytes, uint32_t tag, uint64_t msg);
  bool moveSlices(Stream& s, bool isSend);
  void checkHeader(const Slice& sl) const;
  [[noreturn]] void lost(const char* call, int err) const;
  // While stalled: every interface the sockets leave by is still up (looked at most twice a second), else throws.
  void checkInterfaces();

  int rank_, peer_;
  std::string address_, description_;
  std::vector<Stream> streams_;
  RailPlan rails_;
  size_t perRail_, defaultWidth_, width_;  // sockets per rail; how many a message stripes over by default, and now
  std::vector<StripeCuts> cuts_;           // by width, 1..perRail_ (index 0 unused)
  std::vector<bool> watched_;  // per rail: its interface was up when the connection was made
  unsigned idleRounds_ = 0;
  std::chrono::steady_clock::time_point lastInterfaceCheck_{};
  // Slices still outstanding for each message not yet complete, oldest first.
  std::deque<uint32_t> sendPending_, recvPending_;
  bool peerSaidGoodbye_ = false;
  bool abandoned_ = false;
  // Throws for a goodbye or abandon frame arriving where data was expected (or seen while idle).
  void checkControlFrame(const FrameHeader& h, bool expectingData) const;
  uint64_t sendsPosted_ = 0, sendsDone_ = 0, recvsPosted_ = 0, recvsDone_ = 0;
};

}  // namespace chorus
