// Share boxes: a round trip, then every way a box can be wrong (an altered
// byte anywhere, another key, another session, round, sender or receiver,
// too short) refused with a status that says so.
#include "secagg/share_box.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "secagg/testing/fake_random.h"

namespace fedberry::secagg::share_box_test {
namespace {

using testing::ScriptedRandom;
using testing::SeededRandom;

Key256 KeyOf(uint8_t first) {
  Key256 key;
  for (size_t i = 0; i < key.size(); ++i) {
    key[i] = static_cast<uint8_t>(first + i);
  }
  return key;
}

const BoxAddress kAddress{"job-3/session-9", 12, 4, 7};
const std::vector<uint8_t> kPlaintext = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};

std::vector<uint8_t> Sealed(uint64_t seed = 1) {
  SeededRandom random(seed);
  absl::StatusOr<std::vector<uint8_t>> box =
      SealShareBox(KeyOf(1), kAddress, kPlaintext, random);
  EXPECT_TRUE(box.ok()) << box.status();
  return box.ok() ? *box : std::vector<uint8_t>();
}

TEST(ShareBoxTest, RoundTrip) {
  const std::vector<uint8_t> box = Sealed();
  EXPECT_EQ(box.size(),
            kShareBoxNonceBytes + kPlaintext.size() + kShareBoxTagBytes);
  absl::StatusOr<std::vector<uint8_t>> opened =
      OpenShareBox(KeyOf(1), kAddress, box);
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_EQ(*opened, kPlaintext);
  // The ciphertext is not the plaintext, and fresh nonces make fresh boxes.
  EXPECT_FALSE(std::equal(kPlaintext.begin(), kPlaintext.end(),
                          box.begin() + kShareBoxNonceBytes));
  EXPECT_NE(Sealed(1), Sealed(2));
  // An empty plaintext is a box of nonce and tag.
  SeededRandom random(3);
  absl::StatusOr<std::vector<uint8_t>> empty =
      SealShareBox(KeyOf(1), kAddress, {}, random);
  ASSERT_TRUE(empty.ok());
  absl::StatusOr<std::vector<uint8_t>> back =
      OpenShareBox(KeyOf(1), kAddress, *empty);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(back->empty());
}

TEST(ShareBoxTest, EveryAlteredByteIsRefused) {
  const std::vector<uint8_t> box = Sealed();
  for (size_t i = 0; i < box.size(); ++i) {
    std::vector<uint8_t> altered = box;
    altered[i] ^= 0x01;
    const absl::Status status =
        OpenShareBox(KeyOf(1), kAddress, altered).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << i << status;
    EXPECT_TRUE(absl::StrContains(status.message(), "failed authentication"))
        << status;
  }
}

struct WrongCase {
  std::string name;
  Key256 key;
  BoxAddress address;
};

TEST(ShareBoxTest, AnotherKeyOrAddressIsRefused) {
  const std::vector<uint8_t> box = Sealed();
  auto with = [](auto change) {
    BoxAddress a = kAddress;
    change(a);
    return a;
  };
  const std::vector<WrongCase> cases = {
      {"another key", KeyOf(2), kAddress},
      {"another session", KeyOf(1),
       with([](BoxAddress& a) { a.session = "job-3/session-8"; })},
      {"another round", KeyOf(1), with([](BoxAddress& a) { a.round = 13; })},
      {"another sender", KeyOf(1), with([](BoxAddress& a) { a.sender = 5; })},
      {"another receiver", KeyOf(1),
       with([](BoxAddress& a) { a.receiver = 8; })},
      {"sender and receiver swapped", KeyOf(1), with([](BoxAddress& a) {
         a.sender = 7;
         a.receiver = 4;
       })},
  };
  for (const WrongCase& c : cases) {
    SCOPED_TRACE(c.name);
    const absl::Status status = OpenShareBox(c.key, c.address, box).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
    EXPECT_TRUE(absl::StrContains(status.message(), "failed authentication"))
        << status;
  }
}

TEST(ShareBoxTest, MalformedBoxesAndInputsAreRefused) {
  const std::vector<uint8_t> box = Sealed();
  const std::vector<uint8_t> short_box(box.begin(),
                                       box.begin() + kShareBoxNonceBytes + 15);
  const absl::Status status =
      OpenShareBox(KeyOf(1), kAddress, short_box).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "of 27 bytes")) << status;
  // A cut box (tag moved) fails authentication rather than being read short.
  const std::vector<uint8_t> cut(box.begin(), box.end() - 1);
  EXPECT_EQ(OpenShareBox(KeyOf(1), kAddress, cut).status().code(),
            absl::StatusCode::kDataLoss);

  BoxAddress long_session = kAddress;
  long_session.session = std::string(1025, 's');
  SeededRandom random(1);
  EXPECT_EQ(
      SealShareBox(KeyOf(1), long_session, kPlaintext, random).status().code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      SealShareBox(KeyOf(1), kAddress,
                   std::vector<uint8_t>(kMaxShareBoxPlaintext + 1), random)
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
  ScriptedRandom none({});
  EXPECT_EQ(SealShareBox(KeyOf(1), kAddress, kPlaintext, none).status().code(),
            absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace fedberry::secagg::share_box_test
