#include "core/security/channel_handshake.h"

#include <cstring>

#include "core/error.h"
#include "core/little_endian.h"
#include "core/security/hmac_sha256.h"
#include "core/security/random_bytes.h"

namespace chorus {

namespace {

constexpr uint32_t kChallengeMagic = 0x43414843;  // "CHAC" as little-endian bytes
constexpr uint32_t kProofMagic = 0x50414843;      // "CHAP"
constexpr uint32_t kVerdictMagic = 0x56414843;    // "CHAV"
constexpr uint8_t kVersion = 1;
constexpr std::string_view kLabel = "chorus channel auth v1";

void appendU32(std::vector<uint8_t>* out, uint32_t v) {
  out->resize(out->size() + 4);
  putU32(out->data() + out->size() - 4, v);
}

const char* roleName(uint8_t role) {
  if (role == static_cast<uint8_t>(ChannelRole::kInitiator)) return "initiator";
  if (role == static_cast<uint8_t>(ChannelRole::kAcceptor)) return "acceptor";
  return "unknown";
}

ChannelHandshake::Nonce freshNonce() {
  ChannelHandshake::Nonce nonce;
  fillRandom(nonce);
  return nonce;
}

}  // namespace

const char* authFailureName(AuthFailure failure) {
  switch (failure) {
    case AuthFailure::kNone:
      return "none";
    case AuthFailure::kWrongSecret:
      return "wrong secret";
    case AuthFailure::kMalformed:
      return "malformed";
    case AuthFailure::kTimedOut:
      return "timed out";
    case AuthFailure::kClosed:
      return "closed";
    case AuthFailure::kSystem:
      return "system error";
  }
  return "unknown";
}

ChannelHandshake::ChannelHandshake(std::string_view secret, std::string_view context, ChannelRole role)
    : ChannelHandshake(secret, context, role, freshNonce()) {}

ChannelHandshake::ChannelHandshake(std::string_view secret, std::string_view context, ChannelRole role,
                                   const Nonce& nonce)
    : secret_(secret), context_(context), role_(role), ownNonce_(nonce) {
  if (secret_.empty()) throwInvalidArgument("channel authentication needs a non-empty secret");
  if (context_.size() > (1u << 20)) throwInvalidArgument("channel authentication context longer than 1 MiB");
}

std::vector<uint8_t> ChannelHandshake::start() const {
  std::vector<uint8_t> out;
  out.reserve(kChallengeBytes);
  appendU32(&out, kChallengeMagic);
  out.push_back(kVersion);
  out.push_back(static_cast<uint8_t>(role_));
  out.push_back(0);
  out.push_back(0);
  out.insert(out.end(), ownNonce_.begin(), ownNonce_.end());
  return out;
}

size_t ChannelHandshake::bytesWanted() const {
  switch (step_) {
    case Step::kWantChallenge:
      return kChallengeBytes;
    case Step::kWantProof:
      return kProofBytes;
    case Step::kWantVerdict:
      return kVerdictBytes;
    case Step::kDone:
    case Step::kFailed:
      return 0;
  }
  return 0;
}

const char* ChannelHandshake::waitingFor() const {
  switch (step_) {
    case Step::kWantChallenge:
      return "the peer's challenge";
    case Step::kWantProof:
      return "the peer's proof";
    case Step::kWantVerdict:
      return "the peer's verdict";
    case Step::kDone:
    case Step::kFailed:
      break;
  }
  return "nothing";
}

std::pair<const ChannelHandshake::Nonce&, const ChannelHandshake::Nonce&> ChannelHandshake::noncesInOrder() const {
  if (role_ == ChannelRole::kInitiator) return {ownNonce_, peerNonce_};
  return {peerNonce_, ownNonce_};
}

std::array<uint8_t, 32> ChannelHandshake::proofOf(ChannelRole prover) const {
  const auto [initiatorNonce, acceptorNonce] = noncesInOrder();
  HmacSha256 mac(secret_);
  mac.update(kLabel);
  std::vector<uint8_t> length;
  appendU32(&length, static_cast<uint32_t>(context_.size()));
  mac.update(length);
  mac.update(context_);
  mac.update(initiatorNonce);
  mac.update(acceptorNonce);
  const uint8_t proverByte = static_cast<uint8_t>(prover);
  mac.update(std::span<const uint8_t>(&proverByte, 1));
  return mac.finish();
}

RecordCipher::Key ChannelHandshake::recordKey(ChannelRole sender) const {
  if (!succeeded()) throwInternal("ChannelHandshake::recordKey before the handshake succeeded");
  const auto [initiatorNonce, acceptorNonce] = noncesInOrder();
  std::vector<uint8_t> salt(initiatorNonce.begin(), initiatorNonce.end());
  salt.insert(salt.end(), acceptorNonce.begin(), acceptorNonce.end());
  const std::string label = std::string("chorus record key, sealed by the ") +
                            (sender == ChannelRole::kInitiator ? "initiator" : "acceptor") + "; " + context_;
  return deriveRecordKey(secret_, salt, label);
}

void ChannelHandshake::malformed(std::string problem) {
  step_ = Step::kFailed;
  failure_ = AuthFailure::kMalformed;
  problem_ = std::move(problem);
}

void ChannelHandshake::fail(AuthFailure failure, std::string problem) {
  if (step_ == Step::kDone || step_ == Step::kFailed) return;
  step_ = Step::kFailed;
  failure_ = failure;
  problem_ = std::move(problem);
}

void ChannelHandshake::feed(std::span<const uint8_t> message, std::vector<uint8_t>* reply) {
  if (step_ == Step::kDone || step_ == Step::kFailed) return;
  if (message.size() != bytesWanted()) {
    return malformed(std::string(waitingFor()) + " is " + std::to_string(message.size()) + " bytes, not " +
                     std::to_string(bytesWanted()));
  }
  switch (step_) {
    case Step::kWantChallenge:
      return onChallenge(message, reply);
    case Step::kWantProof:
      return onProof(message, reply);
    case Step::kWantVerdict:
      return onVerdict(message);
    case Step::kDone:
    case Step::kFailed:
      return;
  }
}

void ChannelHandshake::onChallenge(std::span<const uint8_t> m, std::vector<uint8_t>* reply) {
  if (getU32(m.data()) != kChallengeMagic)
    return malformed("the peer's challenge has a bad magic (not a Chorus peer?)");
  if (m[4] != kVersion) return malformed("the peer speaks handshake version " + std::to_string(m[4]) + ", not 1");
  const uint8_t expectedRole =
      static_cast<uint8_t>(role_ == ChannelRole::kInitiator ? ChannelRole::kAcceptor : ChannelRole::kInitiator);
  if (m[5] != expectedRole) {
    return malformed(std::string("the peer claims the role '") + roleName(m[5]) + "', expected '" +
                     roleName(expectedRole) + "' (a reflected challenge?)");
  }
  if (m[6] != 0 || m[7] != 0) return malformed("the peer's challenge has non-zero reserved bytes");
  std::memcpy(peerNonce_.data(), m.data() + 8, kNonceBytes);
  // Our own nonce coming back means the peer is reflecting us, whatever role it claims.
  if (peerNonce_ == ownNonce_) return malformed("the peer's nonce equals this side's (a reflected challenge)");
  std::array<uint8_t, 32> proof = proofOf(role_);
  appendU32(reply, kProofMagic);
  reply->insert(reply->end(), proof.begin(), proof.end());
  step_ = Step::kWantProof;
}

void ChannelHandshake::onProof(std::span<const uint8_t> m, std::vector<uint8_t>* reply) {
  if (getU32(m.data()) != kProofMagic) return malformed("the peer's proof has a bad magic");
  std::array<uint8_t, 32> expected =
      proofOf(role_ == ChannelRole::kInitiator ? ChannelRole::kAcceptor : ChannelRole::kInitiator);
  const bool accepted = constantTimeEqual(expected, m.subspan(4, 32));
  appendU32(reply, kVerdictMagic);
  reply->push_back(accepted ? 1 : 0);
  reply->insert(reply->end(), {0, 0, 0});
  if (!accepted) {
    step_ = Step::kFailed;
    failure_ = AuthFailure::kWrongSecret;
    problem_ = "wrong secret: the peer's proof does not match this side's secret";
    return;
  }
  step_ = Step::kWantVerdict;
}

void ChannelHandshake::onVerdict(std::span<const uint8_t> m) {
  if (getU32(m.data()) != kVerdictMagic) return malformed("the peer's verdict has a bad magic");
  if (m[5] != 0 || m[6] != 0 || m[7] != 0) return malformed("the peer's verdict has non-zero reserved bytes");
  if (m[4] == 0) {
    step_ = Step::kFailed;
    failure_ = AuthFailure::kWrongSecret;
    problem_ = "wrong secret: the peer refused this side's proof";
    return;
  }
  if (m[4] != 1) return malformed("the peer's verdict is " + std::to_string(m[4]) + ", neither 0 nor 1");
  step_ = Step::kDone;
  problem_.clear();
}

}  // namespace chorus
