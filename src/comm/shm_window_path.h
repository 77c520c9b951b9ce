// Windows between ranks of one host over shared memory without the target's progress: puts stored by the sender
// straight into a peer's window that lies in chorusMemAlloc memory (the peer's memfd, mapped here at
// registration), and signals as counters in a segment each rank shares with the ranks of its host. The window
// channel (window_channel.h) asks this first and keeps its frames for what it declines.
//
// Order: a put or counter signal goes this way only once every frame this rank sent to the peer has landed there
// (the peer publishes how many it landed from each sender); while a frame is still in the ring, the next put or
// signal follows it as a frame, so nothing overtakes it.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "src/comm/window_table.h"

namespace chorus {

class ShmWindowPath {
 public:
  // Counter slots per sender: sigIdx below kSigIdxBound and ctx below kCtxBound; others travel as frames.
  static constexpr uint32_t kSigIdxBound = 64, kCtxBound = 4;
  // Words each rank contributes to a registration's allgather (announce()).
  static constexpr size_t kAnnounceWords = 10;

  // Makes this rank's signal segment (a memfd, untouched until used) for a world of nranks; throws chorus::Error.
  ShmWindowPath(int rank, int nranks);
  ~ShmWindowPath();
  ShmWindowPath(const ShmWindowPath&) = delete;
  ShmWindowPath& operator=(const ShmWindowPath&) = delete;

  // This rank's words for the allgather of a registration of [base, base + bytes): its pid, its signal segment
  // (descriptor, device, inode), a spare word, and where the buffer lies when it is chorusMemAlloc memory
  // (descriptor, device, inode, offset, allocation size).
  std::vector<uint64_t> announce(const void* base, size_t bytes) const;
  // Every rank's words (rank order, kAnnounceWords each) for window `win`: maps the signal segments of the ranks
  // in sharedPeers once, and their parts of `win` that are chorusMemAlloc memory. What cannot be mapped (another
  // pid namespace, /proc refused) keeps the frames, with an info line naming the peer and the system's text.
  void attach(const Window& win, std::span<const uint64_t> all, const std::vector<bool>& sharedPeers);
  // Unmaps the peers' parts of the window.
  void detach(uint64_t windowId);

  // Stores a put into peer's part of win when it is mapped and no frame to the peer is in flight (framesSent:
  // frames sent to it so far); false leaves the put to the frames.
  bool put(const Window& win, int peer, const void* src, uint64_t bytes, uint64_t offset, uint64_t framesSent);
  enum class Raised { kNo, kYes, kYesPeerSleeps };
  // Adds one to the peer's counter for (this rank, sigIdx, ctx) when it has a slot and no frame is in flight; a
  // peer asleep in a wait needs a wake-up frame (kYesPeerSleeps).
  Raised signal(int peer, uint32_t sigIdx, uint32_t ctx, uint64_t framesSent);
  // This rank has landed `frames` frames from peer (what the peer's order check reads).
  void landed(int peer, uint64_t frames);
  // Counter signals from peer on (sigIdx, ctx) since the last take.
  uint64_t take(int peer, uint32_t sigIdx, uint32_t ctx);
  // Around a wait's sleep: senders that raise a counter meanwhile send a wake-up frame too.
  void sleeping(bool on);
  // "shm mapped window" / "shm signal counters", as in use; "" when neither.
  std::string describe() const;

 private:
  struct Mapping {
    void* base = nullptr;  // mmap's address (null: an address of this process, not to unmap)
    size_t bytes = 0;
    char* at = nullptr;  // the peer's registered part
  };
  struct Segment;  // the layout, in the .cc
  Segment* segmentOf(int peer) const { return peers_[static_cast<size_t>(peer)].segment; }
  struct PeerSide {
    Segment* segment = nullptr;  // the peer's signal segment, mapped (or this process's address of it)
    Mapping mapping;             // how it is mapped
  };

  const int rank_, nranks_;
  int fd_ = -1;
  size_t segmentBytes_ = 0;
  Segment* mine_ = nullptr;
  uint64_t dev_ = 0, ino_ = 0;
  std::vector<PeerSide> peers_;
  bool attached_ = false;
  std::vector<uint64_t> taken_;                       // [peer * slots + slot]: counts already taken
  std::map<uint64_t, std::vector<Mapping>> windows_;  // window id -> [peer]: its mapped part
};

}  // namespace chorus
