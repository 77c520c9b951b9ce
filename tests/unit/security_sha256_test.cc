// SHA-256 against FIPS 180-4's examples and HMAC-SHA256 against RFC 4231's test cases; constant-time equality.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/security/hmac_sha256.h"
#include "core/security/sha256.h"

namespace chorus {
namespace {

std::string hex(std::span<const uint8_t> bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

std::vector<uint8_t> repeated(uint8_t byte, size_t n) { return std::vector<uint8_t>(n, byte); }

std::span<const uint8_t> spanOf(std::string_view text) {
  return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size());
}

TEST(SecuritySha256Test, MatchesTheFips180Examples) {
  EXPECT_EQ(hex(sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex(sha256("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hex(sha256("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopq"
                       "rsmnopqrstnopqrstu")),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(hex(sha256(repeated('a', 1000000))), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(SecuritySha256Test, IncrementalUpdatesInAnyPiecesGiveTheSameDigest) {
  std::vector<uint8_t> message(1000);
  for (size_t i = 0; i < message.size(); ++i) message[i] = static_cast<uint8_t>(i * 31 + 7);
  const Sha256Digest whole = sha256(message);
  // Piece sizes around the 64-byte block and the 56-byte padding boundary.
  for (size_t piece : {1u, 55u, 56u, 63u, 64u, 65u, 119u, 999u}) {
    Sha256 h;
    for (size_t at = 0; at < message.size(); at += piece) {
      h.update(std::span<const uint8_t>(message).subspan(at, std::min(piece, message.size() - at)));
    }
    EXPECT_EQ(h.finish(), whole) << "pieces of " << piece;
  }
  // Every length across two blocks pads correctly (compared with one-shot hashing of the same prefix).
  for (size_t n = 0; n <= 130; ++n) {
    Sha256 h;
    h.update(std::span<const uint8_t>(message).first(n / 2));
    h.update(std::span<const uint8_t>(message).subspan(n / 2, n - n / 2));
    EXPECT_EQ(h.finish(), sha256(std::span<const uint8_t>(message).first(n))) << n;
  }
}

TEST(SecuritySha256Test, HmacMatchesRfc4231) {
  std::string key1(20, '\x0b');
  EXPECT_EQ(hex(hmacSha256(key1, spanOf("Hi There"))),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(hex(hmacSha256("Jefe", spanOf("what do ya want for nothing?"))),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(hex(hmacSha256(std::string(20, '\xaa'), repeated(0xdd, 50))),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  std::string key4;
  for (int i = 1; i <= 25; ++i) key4.push_back(static_cast<char>(i));
  EXPECT_EQ(hex(hmacSha256(key4, repeated(0xcd, 50))),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
  EXPECT_EQ(hex(hmacSha256(std::string(20, '\x0c'), spanOf("Test With Truncation"))).substr(0, 32),
            "a3b6167473100ee06e0c796c2955552b");
  const std::string bigKey(131, '\xaa');
  EXPECT_EQ(hex(hmacSha256(bigKey, spanOf("Test Using Larger Than Block-Size Key - Hash Key First"))),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  EXPECT_EQ(hex(hmacSha256(bigKey, spanOf("This is a test using a larger than block-size key and a larger than "
                                           "block-size data. The key needs to be hashed before being used by the "
                                           "HMAC algorithm."))),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

TEST(SecuritySha256Test, HmacInPiecesEqualsHmacInOneCall) {
  HmacSha256 mac("Jefe");
  mac.update("what do ya ");
  mac.update(spanOf("want for nothing?"));
  EXPECT_EQ(hex(mac.finish()), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(SecuritySha256Test, ConstantTimeEqualComparesEveryByteAndTheLength) {
  std::vector<uint8_t> a = {1, 2, 3, 4}, b = {1, 2, 3, 4};
  EXPECT_TRUE(constantTimeEqual(a, b));
  for (size_t i = 0; i < a.size(); ++i) {
    std::vector<uint8_t> c = b;
    c[i] ^= 0x80;
    EXPECT_FALSE(constantTimeEqual(a, c)) << i;
  }
  EXPECT_FALSE(constantTimeEqual(a, std::span<const uint8_t>(b).first(3)));
  EXPECT_TRUE(constantTimeEqual({}, {}));
}

}  // namespace
}  // namespace chorus
