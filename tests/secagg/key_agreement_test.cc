// X25519 against RFC 7748's vectors, agreement from both sides, low-order
// peer keys refused, HKDF-SHA256 against RFC 5869, and DeriveKey's labels
// and sessions keeping keys apart.
#include "secagg/key_agreement.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "secagg/testing/fake_random.h"

namespace fedberry::secagg::key_agreement_test {
namespace {

using testing::ScriptedRandom;
using testing::SeededRandom;

X25519Key KeyFromHex(const std::string& hex) {
  const std::string bytes = absl::HexStringToBytes(hex);
  X25519Key key{};
  EXPECT_EQ(bytes.size(), key.size());
  std::copy(bytes.begin(), bytes.end(), key.begin());
  return key;
}

std::string Hex(absl::Span<const uint8_t> bytes) {
  return absl::BytesToHexString(absl::string_view(
      reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

KeyPair Generate(uint64_t seed) {
  SeededRandom random(seed);
  absl::StatusOr<KeyPair> pair = GenerateKeyPair(random);
  EXPECT_TRUE(pair.ok()) << pair.status();
  return pair.ok() ? *pair : KeyPair{};
}

// RFC 7748 section 6.1 (also checked with Python's cryptography).
TEST(KeyAgreementTest, MatchesRfc7748) {
  const X25519Key alice_private = KeyFromHex(
      "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a");
  const X25519Key bob_private = KeyFromHex(
      "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb");
  absl::StatusOr<KeyPair> alice = KeyPairFromPrivate(alice_private);
  absl::StatusOr<KeyPair> bob = KeyPairFromPrivate(bob_private);
  ASSERT_TRUE(alice.ok()) << alice.status();
  ASSERT_TRUE(bob.ok()) << bob.status();
  EXPECT_EQ(Hex(alice->public_key),
            "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a");
  EXPECT_EQ(Hex(bob->public_key),
            "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f");
  absl::StatusOr<Key256> shared = Agree(alice_private, bob->public_key);
  ASSERT_TRUE(shared.ok()) << shared.status();
  EXPECT_EQ(Hex(*shared),
            "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742");
}

TEST(KeyAgreementTest, BothSidesAgreeAndOtherPairsDiffer) {
  const KeyPair a = Generate(1);
  const KeyPair b = Generate(2);
  const KeyPair c = Generate(3);
  absl::StatusOr<Key256> ab = Agree(a.private_key, b.public_key);
  absl::StatusOr<Key256> ba = Agree(b.private_key, a.public_key);
  absl::StatusOr<Key256> ac = Agree(a.private_key, c.public_key);
  ASSERT_TRUE(ab.ok() && ba.ok() && ac.ok());
  EXPECT_EQ(*ab, *ba);
  EXPECT_NE(*ab, *ac);
  // A restored private key gives the same pair.
  absl::StatusOr<KeyPair> restored = KeyPairFromPrivate(a.private_key);
  ASSERT_TRUE(restored.ok());
  EXPECT_EQ(restored->public_key, a.public_key);
}

TEST(KeyAgreementTest, GenerationReadsItsRandomSource) {
  EXPECT_EQ(Generate(7).public_key, Generate(7).public_key);
  EXPECT_NE(Generate(7).public_key, Generate(8).public_key);
  ScriptedRandom none({});
  EXPECT_EQ(GenerateKeyPair(none).status().code(), absl::StatusCode::kInternal);
  // The operating system's source works too.
  absl::StatusOr<KeyPair> os = GenerateKeyPair(OsRandom());
  ASSERT_TRUE(os.ok()) << os.status();
  EXPECT_NE(os->public_key, X25519Key{});
}

// Low-order points (RFC 7748 section 6.1's remark; the list cr.yp.to gives):
// whatever our private key, the result would be all zero.
TEST(KeyAgreementTest, LowOrderPeerKeysAreRefused) {
  const KeyPair own = Generate(4);
  for (const std::string& hex : std::vector<std::string>{
           std::string(64, '0'),  // 0
           "0100000000000000000000000000000000000000000000000000000000000000",
           "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800",
           "5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157",
           "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
       }) {
    SCOPED_TRACE(hex);
    const absl::Status status =
        Agree(own.private_key, KeyFromHex(hex)).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_TRUE(absl::StrContains(status.message(), "low-order point"))
        << status;
  }
}

// RFC 5869 test case 3: SHA-256, empty salt and info.
TEST(KeyAgreementTest, HkdfMatchesRfc5869) {
  const std::vector<uint8_t> ikm(22, 0x0b);
  absl::StatusOr<std::vector<uint8_t>> okm = HkdfSha256(ikm, {}, 42);
  ASSERT_TRUE(okm.ok()) << okm.status();
  EXPECT_EQ(Hex(*okm),
            "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d"
            "9d201395faa4b61a96c8");
  EXPECT_EQ(HkdfSha256(ikm, {}, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(HkdfSha256(ikm, {}, 8161).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(KeyAgreementTest, LabelsAndSessionsSeparateDerivedKeys) {
  const KeyPair a = Generate(5);
  const KeyPair b = Generate(6);
  absl::StatusOr<Key256> ab = Agree(a.private_key, b.public_key);
  absl::StatusOr<Key256> ba = Agree(b.private_key, a.public_key);
  ASSERT_TRUE(ab.ok() && ba.ok());
  std::set<Key256> keys;
  for (KeyPurpose purpose :
       {KeyPurpose::kShareTransport, KeyPurpose::kMaskSeed}) {
    for (absl::string_view session : {"job-1/round-1", "job-1/round-2", ""}) {
      absl::StatusOr<Key256> mine = DeriveKey(*ab, purpose, session);
      absl::StatusOr<Key256> theirs = DeriveKey(*ba, purpose, session);
      ASSERT_TRUE(mine.ok() && theirs.ok());
      EXPECT_EQ(*mine, *theirs);  // both ends derive the same key
      EXPECT_NE(*mine, *ab);      // and not the shared secret itself
      keys.insert(*mine);
    }
  }
  EXPECT_EQ(keys.size(), 6u);  // two purposes x three sessions, all apart
}

}  // namespace
}  // namespace fedberry::secagg::key_agreement_test
