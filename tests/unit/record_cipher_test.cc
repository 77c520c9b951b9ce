// AES-128-GCM records and their keys (core/security/record_cipher.h): published vectors (the GCM specification's
// test case 2, RFC 5869's HKDF-SHA256 case 1), and every alteration a stranger could make fails to open: another
// record number (replay, reorder, drop), another header, a flipped ciphertext or tag bit, another key. Both ends
// of a handshake derive the same two record keys, one per direction.
#include "core/security/record_cipher.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "core/security/channel_handshake.h"

namespace chorus {
namespace {

std::string cipherHex(std::span<const uint8_t> bytes) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (uint8_t b : bytes) {
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

std::vector<uint8_t> bytesOf(const std::string& text) { return std::vector<uint8_t>(text.begin(), text.end()); }

TEST(RecordCipherTest, MatchesTheGcmSpecificationsTestCase2) {
  // Key and nonce all zero (record 0), no additional data, 16 zero bytes.
  RecordCipher c(RecordCipher::Key{});
  std::vector<uint8_t> plain(16, 0), sealed(16 + RecordCipher::kTagBytes);
  c.seal(0, {}, plain, sealed.data());
  EXPECT_EQ(cipherHex(std::span(sealed).first(16)), "0388dace60b6a392f328c2b971b2fe78");
  EXPECT_EQ(cipherHex(std::span(sealed).last(16)), "ab6e47d42cec13bdf53a67b21257bddf");
  std::vector<uint8_t> back(16, 0xEE);
  EXPECT_TRUE(c.open(0, {}, sealed, back.data()));
  EXPECT_EQ(back, plain);
}

TEST(RecordCipherTest, HkdfMatchesRfc5869Case1) {
  const std::string ikm(22, '\x0b');
  const std::vector<uint8_t> salt = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c};
  const std::string info = "\xf0\xf1\xf2\xf3\xf4\xf5\xf6\xf7\xf8\xf9";
  // The first 16 of the case's 42 bytes.
  EXPECT_EQ(cipherHex(deriveRecordKey(ikm, salt, info)), "3cb25f25faacd57a90434f64d0362f2a");
}

TEST(RecordCipherTest, EveryAlterationFailsToOpen) {
  RecordCipher::Key key{};
  for (size_t i = 0; i < key.size(); ++i) key[i] = static_cast<uint8_t>(i * 7 + 1);
  RecordCipher sender(key), receiver(key);
  const std::vector<uint8_t> header = bytesOf("header 16 bytes!");
  std::vector<uint8_t> plain(1000);
  for (size_t i = 0; i < plain.size(); ++i) plain[i] = static_cast<uint8_t>(i * 31);
  std::vector<uint8_t> sealed(plain.size() + RecordCipher::kTagBytes), out(plain.size());
  sender.seal(41, header, plain, sealed.data());
  ASSERT_TRUE(receiver.open(41, header, sealed, out.data()));
  EXPECT_EQ(out, plain);
  // The ciphertext is not the plaintext.
  EXPECT_NE(std::vector<uint8_t>(sealed.begin(), sealed.begin() + plain.size()), plain);

  EXPECT_FALSE(receiver.open(42, header, sealed, out.data())) << "another record number (replayed or reordered)";
  std::vector<uint8_t> otherHeader = header;
  otherHeader[4] ^= 1;
  EXPECT_FALSE(receiver.open(41, otherHeader, sealed, out.data())) << "an altered header";
  for (size_t at : {size_t{0}, size_t{500}, plain.size() - 1, plain.size(), sealed.size() - 1}) {
    std::vector<uint8_t> flipped = sealed;
    flipped[at] ^= 0x80;
    EXPECT_FALSE(receiver.open(41, header, flipped, out.data())) << "bit flipped at byte " << at;
  }
  RecordCipher::Key otherKey = key;
  otherKey[0] ^= 1;
  RecordCipher stranger(otherKey);
  EXPECT_FALSE(stranger.open(41, header, sealed, out.data())) << "another key";
  EXPECT_FALSE(receiver.open(41, header, std::span(sealed).first(RecordCipher::kTagBytes - 1), out.data()))
      << "shorter than a tag";
  // Still opens after all the failures: they leave no state behind.
  EXPECT_TRUE(receiver.open(41, header, sealed, out.data()));
}

TEST(RecordCipherTest, AnEmptyRecordStillAuthenticatesItsHeader) {
  RecordCipher c(RecordCipher::Key{1, 2, 3});
  const std::vector<uint8_t> header = bytesOf("goodbye");
  std::vector<uint8_t> sealed(RecordCipher::kTagBytes);
  c.seal(5, header, {}, sealed.data());
  EXPECT_TRUE(c.open(5, header, sealed, nullptr));
  EXPECT_FALSE(c.open(5, bytesOf("goodbyf"), sealed, nullptr));
}

TEST(RecordCipherTest, BothEndsOfAHandshakeDeriveTheSameTwoKeys) {
  ChannelHandshake initiator("s3cret", "ctx", ChannelRole::kInitiator);
  ChannelHandshake acceptor("s3cret", "ctx", ChannelRole::kAcceptor);
  std::vector<uint8_t> iProof, aProof, iVerdict, aVerdict, none;
  const std::vector<uint8_t> iChallenge = initiator.start();
  initiator.feed(acceptor.start(), &iProof);
  acceptor.feed(iChallenge, &aProof);
  initiator.feed(aProof, &iVerdict);
  acceptor.feed(iProof, &aVerdict);
  acceptor.feed(iVerdict, &aVerdict);
  initiator.feed(std::vector<uint8_t>(aVerdict.end() - ChannelHandshake::kVerdictBytes, aVerdict.end()), &none);
  ASSERT_TRUE(initiator.succeeded()) << initiator.problem();
  ASSERT_TRUE(acceptor.succeeded()) << acceptor.problem();
  EXPECT_EQ(initiator.recordKey(ChannelRole::kInitiator), acceptor.recordKey(ChannelRole::kInitiator));
  EXPECT_EQ(initiator.recordKey(ChannelRole::kAcceptor), acceptor.recordKey(ChannelRole::kAcceptor));
  EXPECT_NE(initiator.recordKey(ChannelRole::kInitiator), initiator.recordKey(ChannelRole::kAcceptor));
  // A second session under the same secret draws new nonces, hence new keys.
  ChannelHandshake again("s3cret", "ctx", ChannelRole::kInitiator);
  EXPECT_THROW(again.recordKey(ChannelRole::kInitiator), Error);
}

}  // namespace
}  // namespace chorus
