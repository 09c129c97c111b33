// The mask stream against values computed outside OpenSSL: RFC 8439's
// ChaCha20 keystream for the zero key, and words of a fixed seed from a
// pure-Python ChaCha20 (checked against that RFC vector and against
// `openssl enc -chacha20 -iv 00..00`). Then masks of fewer bits in range,
// and a pair's masks cancelling in a sum.
#include "secagg/mask.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "absl/status/status.h"

namespace fedberry::secagg::mask_test {
namespace {

Key256 CountingSeed() {  // 00 01 02 ... 1f
  Key256 seed;
  for (size_t i = 0; i < seed.size(); ++i) seed[i] = static_cast<uint8_t>(i);
  return seed;
}

std::vector<uint32_t> Expand(const Key256& seed, uint64_t count, int bits) {
  absl::StatusOr<std::vector<uint32_t>> mask = ExpandMask(seed, count, bits);
  EXPECT_TRUE(mask.ok()) << mask.status();
  return mask.ok() ? *mask : std::vector<uint32_t>();
}

// RFC 8439 appendix A.1, test vector 1: key 0, nonce 0, counter 0; the
// keystream 76 b8 e0 ad a0 f1 3d 90 ... read as little-endian words.
TEST(MaskTest, ZeroSeedIsRfc8439Keystream) {
  EXPECT_EQ(
      Expand(Key256{}, 4, 32),
      (std::vector<uint32_t>{0xade0b876, 0x903df1a0, 0xe56a5d40, 0x28bd8653}));
}

TEST(MaskTest, FixedSeedKnownAnswers) {
  const std::vector<uint32_t> words = Expand(CountingSeed(), 4098, 32);
  ASSERT_EQ(words.size(), 4098u);
  const std::vector<uint32_t> first(words.begin(), words.begin() + 8);
  EXPECT_EQ(first, (std::vector<uint32_t>{0x7d2bfd39, 0x6a19c5d9, 0x7703bd8d,
                                          0x494adcb8, 0x6fd8358a, 0xcc6adebc,
                                          0x4c7dccb2, 0x9224ead8}));
  // The second block (counter 1) and across the 4096-word piece boundary.
  EXPECT_EQ(words[16], 0x3142b818u);
  EXPECT_EQ(words[19], 0x274e43afu);
  EXPECT_EQ(words[4095], 0x7096311au);
  EXPECT_EQ(words[4096], 0xc3241118u);
  EXPECT_EQ(words[4097], 0x7bcc131au);
  // A shorter mask is a prefix of a longer one.
  EXPECT_EQ(Expand(CountingSeed(), 3, 32),
            std::vector<uint32_t>(words.begin(), words.begin() + 3));
}

TEST(MaskTest, FewerBitsKeepTheLowBitsInRange) {
  const std::vector<uint32_t> full = Expand(CountingSeed(), 1000, 32);
  for (int bits : {1, 7, 16, 20, 31}) {
    SCOPED_TRACE(bits);
    const std::vector<uint32_t> mask = Expand(CountingSeed(), 1000, bits);
    const uint32_t top = (uint32_t{1} << bits) - 1;
    uint32_t seen = 0;
    for (size_t i = 0; i < mask.size(); ++i) {
      EXPECT_LE(mask[i], top);
      EXPECT_EQ(mask[i], full[i] & top);
      seen |= mask[i];
    }
    EXPECT_EQ(seen, top);  // every bit position is used
  }
  EXPECT_TRUE(Expand(CountingSeed(), 0, 32).empty());
}

TEST(MaskTest, BadArgumentsAreRefused) {
  for (int bits : {0, 33, -1}) {
    EXPECT_EQ(ExpandMask(CountingSeed(), 4, bits).status().code(),
              absl::StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(ExpandMask(CountingSeed(), kMaxMaskWords + 1, 32).status().code(),
            absl::StatusCode::kInvalidArgument);
  std::vector<uint32_t> values = {1, 2, 16};
  const absl::Status status =
      ApplyMask(absl::MakeSpan(values), CountingSeed(), 4, MaskSign::kAdd);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_EQ(values, (std::vector<uint32_t>{1, 2, 16}));  // unchanged
}

// Board a adds the pair's mask and b subtracts it: the sum mod 2^bits is
// the plain sum. A mask alone changes the values.
TEST(MaskTest, APairsMasksCancelInTheSum) {
  for (int bits : {12, 32}) {
    SCOPED_TRACE(bits);
    const uint32_t keep = bits == 32 ? ~uint32_t{0} : (1u << bits) - 1;
    std::vector<uint32_t> a = {0, 1, 100, keep, 7};
    std::vector<uint32_t> b = {keep, 5, 0, keep, 9};
    const std::vector<uint32_t> plain_a = a;
    ASSERT_TRUE(
        ApplyMask(absl::MakeSpan(a), CountingSeed(), bits, MaskSign::kAdd)
            .ok());
    ASSERT_TRUE(
        ApplyMask(absl::MakeSpan(b), CountingSeed(), bits, MaskSign::kSubtract)
            .ok());
    EXPECT_NE(a, plain_a);
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_LE(a[i], keep);
      EXPECT_LE(b[i], keep);
      const uint32_t plain_b = std::vector<uint32_t>{keep, 5, 0, keep, 9}[i];
      EXPECT_EQ((a[i] + b[i]) & keep, (plain_a[i] + plain_b) & keep) << i;
    }
  }
}

}  // namespace
}  // namespace fedberry::secagg::mask_test
