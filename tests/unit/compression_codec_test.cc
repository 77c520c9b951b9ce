// The compression codec of CHORUS_COMPRESSION: bfloat16 and scaled float16 against the scalar conversions of half.h,
// specials, overflow-free scaling, in-place rounding equal to what the receiver decodes, and roundSignificands.
#include "reduce/compression_codec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "reduce/half.h"

namespace chorus {
namespace {

std::vector<float> samples(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = std::ldexp(1.0f + static_cast<float>((i * 7919) % 1000) / 1000.0f, static_cast<int>(i % 61) - 30) *
           ((i & 1) ? -1.0f : 1.0f);
  }
  v[3] = std::numeric_limits<float>::infinity();
  v[5] = -std::numeric_limits<float>::infinity();
  v[9] = std::numeric_limits<float>::quiet_NaN();
  v[11] = 0.0f;
  v[13] = -0.0f;
  return v;
}

bool sameBits(float a, float b) { return std::memcmp(&a, &b, sizeof(a)) == 0; }

TEST(CompressionCodec, Bfloat16MatchesTheScalarConversionAndRoundsInPlaceToWhatIsDecoded) {
  for (size_t n : {0u, 1u, 15u, 16u, 17u, 1000u}) {
    std::vector<float> v = samples(std::max<size_t>(n, 14));
    v.resize(n);
    std::vector<char> packed(compressedBytes(CompressionFormat::kBf16, n));
    std::vector<float> rounded(n), decoded(n);
    compressFloats(CompressionFormat::kBf16, v.data(), n, packed.data(), rounded.data());
    expandFloats(CompressionFormat::kBf16, packed.data(), n, decoded.data());
    for (size_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, packed.data() + 2 * i, 2);
      EXPECT_EQ(h, floatToBfloat16(v[i])) << n << " " << i;
      EXPECT_TRUE(sameBits(rounded[i], decoded[i])) << i;
      EXPECT_TRUE(sameBits(decoded[i], bfloat16ToFloat(floatToBfloat16(v[i])))) << i;
    }
    // In place: the values become what the peer decodes.
    std::vector<float> inPlace = v;
    compressFloats(CompressionFormat::kBf16, inPlace.data(), n, packed.data(), inPlace.data());
    for (size_t i = 0; i < n; ++i) EXPECT_TRUE(sameBits(inPlace[i], decoded[i])) << i;
  }
}

// Decoding and adding in one pass gives, bit for bit, what decoding and then a float32 sum give (NaN for NaN), in
// place on the addend too.
TEST(CompressionCodec, DecodeAddEqualsDecodeThenSum) {
  for (CompressionFormat f : {CompressionFormat::kBf16, CompressionFormat::kFp16}) {
    for (size_t n : {0u, 1u, 7u, 8u, 9u, 1000u}) {
      std::vector<float> v = samples(std::max<size_t>(n, 14)), with = samples(n + 20);
      v.resize(n);
      with.erase(with.begin(), with.begin() + 20);  // other values than v's, specials elsewhere
      std::vector<char> packed(compressedBytes(f, n));
      std::vector<float> decoded(n), fused(n);
      compressFloats(f, v.data(), n, packed.data(), nullptr);
      expandFloats(f, packed.data(), n, decoded.data());
      expandAdd(f, packed.data(), n, with.data(), fused.data());
      std::vector<float> inPlace = with;
      expandAdd(f, packed.data(), n, inPlace.data(), inPlace.data());
      for (size_t i = 0; i < n; ++i) {
        const float expected = decoded[i] + with[i];
        if (std::isnan(expected)) {
          EXPECT_TRUE(std::isnan(fused[i]) && std::isnan(inPlace[i]))
              << compressionFormatName(f) << " " << n << " " << i;
        } else {
          EXPECT_TRUE(sameBits(fused[i], expected)) << compressionFormatName(f) << " " << n << " " << i;
          EXPECT_TRUE(sameBits(inPlace[i], expected)) << compressionFormatName(f) << " " << n << " " << i;
        }
      }
    }
  }
}

// Decoding, adding and encoding the sum in one pass gives what expandAdd and then compressFloats with the sum
// rounded in place give, bit for bit (compressed and rounded sum).
TEST(CompressionCodec, DecodeAddEncodeEqualsDecodeAddThenEncode) {
  for (CompressionFormat f : {CompressionFormat::kBf16, CompressionFormat::kFp16}) {
    for (size_t n : {0u, 1u, 15u, 16u, 17u, 1000u}) {
      std::vector<float> v = samples(std::max<size_t>(n, 14)), with = samples(n + 20);
      v.resize(n);
      with.erase(with.begin(), with.begin() + 20);
      std::vector<char> packed(compressedBytes(f, n)), expectedPacked(compressedBytes(f, n)),
          fusedPacked(compressedBytes(f, n));
      compressFloats(f, v.data(), n, packed.data(), nullptr);
      std::vector<float> expected(n), fused(n);
      expandAdd(f, packed.data(), n, with.data(), expected.data());
      compressFloats(f, expected.data(), n, expectedPacked.data(), expected.data());
      expandAddCompress(f, packed.data(), n, with.data(), fused.data(), fusedPacked.data());
      EXPECT_EQ(std::memcmp(fusedPacked.data(), expectedPacked.data(), expectedPacked.size()), 0)
          << compressionFormatName(f) << n;
      for (size_t i = 0; i < n; ++i) {
        if (std::isnan(expected[i])) {
          EXPECT_TRUE(std::isnan(fused[i])) << compressionFormatName(f) << " " << n << " " << i;
        } else {
          EXPECT_TRUE(sameBits(fused[i], expected[i])) << compressionFormatName(f) << " " << n << " " << i;
        }
      }
    }
  }
}

TEST(CompressionCodec, Float16IsScaledSoThatLargeValuesNeitherOverflowNorLosePrecision) {
  for (float big : {1e9f, 2e38f, 65504.0f, 1e-12f, 1e-40f}) {
    std::vector<float> v(37);
    for (size_t i = 0; i < v.size(); ++i) v[i] = big * (1.0f + static_cast<float>(i) / 64.0f) * ((i & 1) ? -1 : 1);
    std::vector<char> packed(compressedBytes(CompressionFormat::kFp16, v.size()));
    EXPECT_EQ(packed.size(), 4 + 2 * v.size());
    std::vector<float> rounded(v.size()), decoded(v.size());
    compressFloats(CompressionFormat::kFp16, v.data(), v.size(), packed.data(), rounded.data());
    expandFloats(CompressionFormat::kFp16, packed.data(), v.size(), decoded.data());
    for (size_t i = 0; i < v.size(); ++i) {
      EXPECT_TRUE(std::isfinite(decoded[i])) << big;
      EXPECT_LE(std::fabs(decoded[i] - v[i]), std::ldexp(1.0, -11) * std::fabs(v[i])) << big << " " << i;
      EXPECT_TRUE(sameBits(rounded[i], decoded[i])) << i;
    }
  }
  // Specials survive; exactly representable values stay exact.
  std::vector<float> v = {1.0f,    -2.5f,   0.0f, std::numeric_limits<float>::infinity(), 3.0f,
                          1024.0f, -0.125f, 7.0f, std::numeric_limits<float>::quiet_NaN()};
  std::vector<char> packed(compressedBytes(CompressionFormat::kFp16, v.size()));
  std::vector<float> decoded(v.size());
  compressFloats(CompressionFormat::kFp16, v.data(), v.size(), packed.data(), nullptr);
  expandFloats(CompressionFormat::kFp16, packed.data(), v.size(), decoded.data());
  for (size_t i = 0; i + 1 < v.size(); ++i) EXPECT_EQ(decoded[i], v[i]) << i;
  EXPECT_TRUE(std::isnan(decoded.back()));
}

TEST(CompressionCodec, RoundSignificandsIsIdempotentAndAgreesWithTheCompressedRounding) {
  std::vector<float> v = samples(500);
  for (CompressionFormat f : {CompressionFormat::kBf16, CompressionFormat::kFp16}) {
    std::vector<float> once = v;
    roundSignificands(f, once.data(), once.size());
    std::vector<float> twice = once;
    roundSignificands(f, twice.data(), twice.size());
    for (size_t i = 0; i < v.size(); ++i) EXPECT_TRUE(sameBits(once[i], twice[i]) || std::isnan(once[i])) << i;
    // A value and its compressed rounding agree after it (float16: the message's normal range).
    std::vector<char> packed(compressedBytes(f, v.size()));
    std::vector<float> decoded(v.size());
    compressFloats(f, v.data(), v.size(), packed.data(), nullptr);
    expandFloats(f, packed.data(), v.size(), decoded.data());
    roundSignificands(f, decoded.data(), decoded.size());
    for (size_t i = 0; i < v.size(); ++i) {
      if (std::isnan(v[i]) || (f == CompressionFormat::kFp16 && std::fabs(v[i]) < std::ldexp(1.0f, 31 - 14))) continue;
      EXPECT_TRUE(sameBits(once[i], decoded[i])) << compressionFormatName(f) << " " << i << " " << v[i];
    }
  }
}

}  // namespace
}  // namespace chorus
