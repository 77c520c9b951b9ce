#include "transports/connection_errors.h"

#include "core/error.h"

namespace chorus::connection_errors {

void peerLost(int rank, int peer, const std::string& description, const std::string& what) {
  throw Error(chorusRemoteError, errorContext(rank, peer) + ": lost connection (" + description + "): " + what,
              Failure::kPeerLost, peer);
}

void peerGaveUp(int rank, int peer, int lostPeer) {
  if (lostPeer != kNoRank && lostPeer != rank) {
    throw Error(chorusRemoteError,
                errorContext(rank, peer) + ": the peer gave up on the communicator because rank " +
                    std::to_string(lostPeer) + " vanished without a goodbye (process exited or killed)",
                Failure::kPeerLost, lostPeer);
  }
  throw Error(chorusRemoteError,
              errorContext(rank, peer) + ": the peer gave up on the communicator after an error or an abort of its own",
              Failure::kRemoteError);
}

void mismatchedMessage(int rank, int peer, uint64_t sentBytes, uint32_t sentTag, uint64_t expectedBytes,
                       uint32_t expectedTag, const std::string& where) {
  throw Error(chorusInvalidUsage,
              errorContext(rank, peer) + ": the peer sent " + std::to_string(sentBytes) + " bytes for call tag " +
                  std::to_string(sentTag) + " where this rank expects " + std::to_string(expectedBytes) +
                  " bytes for tag " + std::to_string(expectedTag) +
                  ": the ranks called different collectives, counts or types" +
                  (where.empty() ? "" : " (" + where + ")"),
              Failure::kMismatch);
}

void peerClosedEarly(int rank, int peer, const std::string& what) {
  throw Error(chorusInvalidUsage,
              errorContext(rank, peer) + ": the peer destroyed its communicator while this rank " + what +
                  " (the ranks made different numbers of calls)",
              Failure::kMismatch);
}

void corrupt(int rank, int peer, const std::string& description, const std::string& what) {
  throw Error(chorusRemoteError, errorContext(rank, peer) + ": corrupt data (" + description + "): " + what,
              Failure::kCorrupt);
}

}  // namespace chorus::connection_errors
