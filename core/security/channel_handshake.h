// The mutual HMAC-SHA256 challenge-response of two ends that share a secret, as a pure state machine (no I/O),
// so that blocking code, poll loops and Asio can all drive it and a fuzzer can feed it bytes.
//
// Both ends run the same three steps; each message has a fixed size, so every read is of a known length:
//   1. CHALLENGE (40 B): u32 magic "CHAC" | u8 version 1 | u8 role | u16 0 | 32-byte nonce from getrandom
//   2. PROOF     (36 B): u32 magic "CHAP" | HMAC-SHA256(secret, label | u32 len | context | initiator nonce |
//                        acceptor nonce | u8 role of the prover)
//   3. VERDICT   ( 8 B): u32 magic "CHAV" | u8 1 accepted / 0 refused | 3 zero bytes
// Fresh nonces on both sides defeat replays; the prover's role inside the MAC defeats reflecting an end's own
// proof back at it; the context (e.g. the store's job id, or a TCP hello) binds a proof to one purpose.
// The verdict lets the refused side say "wrong secret" instead of "connection closed".
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/security/record_cipher.h"

namespace chorus {

// Which end of the channel this is: the one that connected, or the one that accepted.
enum class ChannelRole : uint8_t { kInitiator = 1, kAcceptor = 2 };

// Why a handshake failed (kNone while it has not).
enum class AuthFailure {
  kNone,
  kWrongSecret,  // the peer's proof does not match our secret, or the peer refused ours
  kMalformed,    // a message that is not the one expected (magic, version, role, reserved bytes)
  kTimedOut,     // the deadline passed first
  kClosed,       // the peer closed the connection before the handshake was over
  kSystem,       // a send/recv/poll failed
};

// "wrong secret", "malformed", "timed out", "closed", "system error".
const char* authFailureName(AuthFailure failure);

class ChannelHandshake {
 public:
  static constexpr size_t kNonceBytes = 32;
  static constexpr size_t kChallengeBytes = 40;
  static constexpr size_t kProofBytes = 36;
  static constexpr size_t kVerdictBytes = 8;
  using Nonce = std::array<uint8_t, kNonceBytes>;

  // A fresh nonce from getrandom. The secret must not be empty (throws chorusInvalidArgument).
  ChannelHandshake(std::string_view secret, std::string_view context, ChannelRole role);
  // With a given nonce: only for tests and fuzzing, which need repeatable runs.
  ChannelHandshake(std::string_view secret, std::string_view context, ChannelRole role, const Nonce& nonce);

  // This end's first message (its challenge); send it before feeding anything.
  std::vector<uint8_t> start() const;
  // Size of the next message this end expects from the peer; 0 once finished (succeeded or failed).
  size_t bytesWanted() const;
  // Consumes the next message, which must be exactly bytesWanted() bytes (else: malformed). Appends what must
  // be sent next to *reply (possibly a refusal verdict even on failure: send it, best effort, before closing).
  void feed(std::span<const uint8_t> message, std::vector<uint8_t>* reply);
  // Records that the transport failed (timeout, close, system error) with a reason; ends the handshake.
  void fail(AuthFailure failure, std::string problem);

  bool succeeded() const { return step_ == Step::kDone; }
  bool failed() const { return step_ == Step::kFailed; }
  AuthFailure failure() const { return failure_; }
  // What went wrong, in words, when failed(); which message we wait for, otherwise.
  const std::string& problem() const { return problem_; }
  // "the peer's challenge", "the peer's proof", "the peer's verdict": for timeout messages.
  const char* waitingFor() const;
  // Once succeeded(): the key of the records that the end in role `sender` seals on this channel (HKDF-SHA256 of
  // the secret, salted with both nonces, labelled with the sender's role and the context), for RecordCipher.
  // Both ends compute the same two keys; nobody sends them.
  RecordCipher::Key recordKey(ChannelRole sender) const;

 private:
  enum class Step { kWantChallenge, kWantProof, kWantVerdict, kDone, kFailed };
  std::array<uint8_t, 32> proofOf(ChannelRole prover) const;
  // The initiator's nonce, then the acceptor's (whichever end this is): the order both ends hash them in.
  std::pair<const Nonce&, const Nonce&> noncesInOrder() const;
  void onChallenge(std::span<const uint8_t> message, std::vector<uint8_t>* reply);
  void onProof(std::span<const uint8_t> message, std::vector<uint8_t>* reply);
  void onVerdict(std::span<const uint8_t> message);
  void malformed(std::string problem);

  std::string secret_;
  std::string context_;
  ChannelRole role_;
  Nonce ownNonce_;
  Nonce peerNonce_{};
  Step step_ = Step::kWantChallenge;
  AuthFailure failure_ = AuthFailure::kNone;
  std::string problem_;
};

}  // namespace chorus
