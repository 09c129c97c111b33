#include "secagg/session_messages.h"

#include <openssl/crypto.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "secagg/mask.h"

namespace fedberry::secagg {
namespace {

constexpr size_t kMaxSessionIdBytes = 1024;
constexpr absl::string_view kAdvertisementLabel =
    "fedberry secagg v1 key advertisement";

void AppendU32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> 8 * i));
}

}  // namespace

const char* StageName(Stage stage) {
  switch (stage) {
    case Stage::kAdvertiseKeys:
      return "advertise keys";
    case Stage::kShareKeys:
      return "share keys";
    case Stage::kMaskedInput:
      return "masked input";
    case Stage::kUnmask:
      return "unmask";
    case Stage::kDone:
      return "done";
    case Stage::kAbandoned:
      return "abandoned";
  }
  return "unknown stage";
}

absl::Status CheckSessionConfig(const SessionConfig& c) {
  if (c.session.empty() || c.session.size() > kMaxSessionIdBytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("secagg session id of %d bytes; 1..%d",
                        c.session.size(), kMaxSessionIdBytes));
  }
  if (c.cohort < 2 || c.cohort > kMaxCohort) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "secagg cohort of %d boards; 2..%d", c.cohort, kMaxCohort));
  }
  if (c.neighbours < 1 || c.neighbours > c.cohort - 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("secagg neighbours K=%d for %d boards; 1..%d",
                        c.neighbours, c.cohort, c.cohort - 1));
  }
  if (c.threshold < 1 || c.threshold > c.neighbours) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "secagg threshold t=%d with K=%d; 1..K", c.threshold, c.neighbours));
  }
  if (c.bits < 1 || c.bits > 32) {
    return absl::InvalidArgumentError(
        absl::StrFormat("secagg field of 2^%d; bits 1..32", c.bits));
  }
  if (c.vector_length < 1 || c.vector_length > kMaxMaskWords) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "secagg vector of %d words; 1..%d", c.vector_length, kMaxMaskWords));
  }
  return absl::OkStatus();
}

std::string SessionLabel(const SessionConfig& config) {
  // The id may hold any byte; its length first keeps the label unambiguous.
  return absl::StrCat(config.session.size(), ":", config.session, "#",
                      config.round);
}

std::vector<uint8_t> AdvertisementSigningBytes(const SessionConfig& config,
                                               const KeyAdvertisement& ad) {
  const std::string label = SessionLabel(config);
  std::vector<uint8_t> out(kAdvertisementLabel.begin(),
                           kAdvertisementLabel.end());
  out.push_back(0);
  AppendU32(out, static_cast<uint32_t>(label.size()));
  out.insert(out.end(), label.begin(), label.end());
  AppendU32(out, ad.board);
  out.insert(out.end(), ad.transport_public.begin(), ad.transport_public.end());
  out.insert(out.end(), ad.mask_public.begin(), ad.mask_public.end());
  return out;
}

namespace {

absl::StatusOr<Key256> AgreeAndDerive(const X25519Key& own_private,
                                      const X25519Key& peer_public,
                                      KeyPurpose purpose,
                                      const SessionConfig& config) {
  absl::StatusOr<Key256> secret = Agree(own_private, peer_public);
  if (!secret.ok()) return secret.status();
  absl::StatusOr<Key256> key =
      DeriveKey(*secret, purpose, SessionLabel(config));
  OPENSSL_cleanse(secret->data(), secret->size());
  return key;
}

}  // namespace

absl::StatusOr<Key256> PairMaskSeed(const X25519Key& own_private,
                                    const X25519Key& peer_public,
                                    const SessionConfig& config) {
  return AgreeAndDerive(own_private, peer_public, KeyPurpose::kMaskSeed,
                        config);
}

absl::StatusOr<Key256> PairTransportKey(const X25519Key& own_private,
                                        const X25519Key& peer_public,
                                        const SessionConfig& config) {
  return AgreeAndDerive(own_private, peer_public, KeyPurpose::kShareTransport,
                        config);
}

MaskSign PairMaskSign(uint32_t own, uint32_t peer) {
  return own < peer ? MaskSign::kAdd : MaskSign::kSubtract;
}

uint64_t WireBytes(const KeyAdvertisement& m) {
  return 4 + 2 * kX25519KeyBytes + m.signature.size();
}

uint64_t WireBytes(const ShareKeysMessage& m) {
  uint64_t bytes = 4;
  for (const ShareCiphertext& c : m.boxes) bytes += 8 + c.box.size();
  return bytes;
}

uint64_t WireBytes(const MaskedInput& m) { return 4 + 4 * m.masked.size(); }

uint64_t WireBytes(const UnmaskResponse& m) {
  uint64_t bytes = 4;
  // owner, kind, index, secret size, then the field elements.
  for (const UnmaskShare& s : m.shares) bytes += 16 + 8 * s.share.values.size();
  return bytes;
}

}  // namespace fedberry::secagg
