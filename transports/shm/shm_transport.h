// The shared-memory transport: ranks of one host (same host id, IPC and network namespace, same user) talk
// through per-pair rings in /dev/shm; every other pair, or a host whose /dev/shm cannot hold the rings, falls
// through to the next transport in probe order (tcp).
#pragma once

#include <sys/socket.h>

#include <string>

#include "transports/shm/shm_connection.h"
#include "transports/shm/shm_handshake.h"
#include "transports/transport.h"

namespace chorus {

// When large messages go by process_vm_readv instead of the ring (CHORUS_SHM_CMA 0, 1, 2); always only where the
// kernel lets the receiver read the sender (probed per pair at connect).
enum class ShmCma {
  kOff,         // never
  kWhenFaster,  // where this machine copies that way about as fast as memcpy (cma_calibration.h)
  kAlways,      // wherever permitted (for tests and for machines the calibration misjudges)
};

class ShmTransport final : public Transport {
 public:
  // ringBytes: byte ring per direction (CHORUS_SHM_BUFFER). jobKey keeps other jobs' and communicators'
  // connections out.
  ShmTransport(int rank, std::string jobKey, size_t ringBytes, ShmCma cma, ShmTuning tuning = {});
  ~ShmTransport() override;
  // With a non-empty secret every connection proves it (HMAC challenge-response, channel_auth.h) before its hello.
  void requireSecret(std::string secret) { secret_ = std::move(secret); }
  void describeSelf(PeerCard& card) override;
  bool canConnect(const PeerCard& self, const PeerCard& peer) const override;
  std::vector<std::unique_ptr<Connection>> connectAll(const PeerCard& self, const std::vector<PeerCard>& peers,
                                                      Deadline deadline) override;

 private:
  struct Dialed;
  size_t ringFor(size_t localPeers) const;
  ShmSegment createInbound(size_t ring, const std::string& context) const;
  bool canReadMemoryOf(const PeerCard& self, const PeerCard& peer) const;
  std::string credentialProblem(const ucred* cred, const PeerCard& card, const PeerCard& self) const;
  std::string refusal(const ShmHello& h, const ucred* cred, const std::vector<PeerCard>& peers,
                      const PeerCard& self) const;
  void closeListener();

  int rank_;
  std::string jobKey_;
  std::string secret_;
  size_t ringBytes_;
  bool cma_;
  bool cmaAlways_;  // CHORUS_SHM_CMA=2: also window puts stored by process_vm_writev
  ShmTuning tuning_;
  int listenFd_ = -1;
};

}  // namespace chorus
