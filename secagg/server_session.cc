#include "secagg/server_session.h"

#include <openssl/crypto.h>

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "secagg/mask.h"
#include "secagg/shamir.h"
#include "secagg/share_box.h"

namespace fedberry::secagg {
namespace {

// What each stage-1 box must weigh: a nonce, two encoded shares of 32-byte
// secrets (index, size and count as 4 bytes each, then 5 field elements),
// and the tag. Anything else is not a box a BoardSession sealed.
constexpr size_t kSharePairBytes = size_t{2} * (12 + 5 * 8);
constexpr size_t kBoxBytes =
    kShareBoxNonceBytes + kSharePairBytes + kShareBoxTagBytes;

int StageIndex(Stage stage) { return static_cast<int>(stage); }

}  // namespace

absl::StatusOr<ServerSession> ServerSession::Create(
    const SessionConfig& config, const KeyVerifier& verifier) {
  if (absl::Status s = CheckSessionConfig(config); !s.ok()) return s;
  absl::StatusOr<NeighbourGraph> graph = NeighbourGraph::Create(
      config.cohort, config.neighbours, config.graph_seed);
  if (!graph.ok()) return graph.status();
  return ServerSession(config, *std::move(graph), verifier);
}

ServerSession::ServerSession(SessionConfig config, NeighbourGraph graph,
                             const KeyVerifier& verifier)
    : config_(std::move(config)),
      graph_(std::move(graph)),
      verifier_(&verifier),
      boards_(config_.cohort) {
  counts_.started = config_.cohort;
}

absl::Status ServerSession::CheckSender(Stage stage, uint32_t board) const {
  if (!abandoned_.ok()) return abandoned_;
  if (stage_ != stage) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "secagg session '%s' round %d: a '%s' message from board %d while at "
        "stage '%s'",
        config_.session, config_.round, StageName(stage), board,
        StageName(stage_)));
  }
  if (board >= boards_.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "secagg session '%s': board %d is unknown (cohort of %d)",
        config_.session, board, config_.cohort));
  }
  const BoardRecord& r = boards_[board];
  const bool in = stage == Stage::kAdvertiseKeys ? true
                  : stage == Stage::kShareKeys   ? r.advertised
                  : stage == Stage::kMaskedInput ? r.shared
                                                 : r.masked;
  if (!in) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "secagg session '%s': board %d dropped before stage '%s'",
        config_.session, board, StageName(stage)));
  }
  return absl::OkStatus();
}

absl::Status ServerSession::Abandon(absl::Status reason) {
  stage_ = Stage::kAbandoned;
  abandoned_ = reason;
  return reason;
}

absl::Status ServerSession::CloseStage(Stage stage, bool BoardRecord::*before,
                                       bool BoardRecord::*survived) {
  if (!abandoned_.ok()) return abandoned_;
  if (stage_ != stage) {
    return absl::FailedPreconditionError(
        absl::StrFormat("secagg session '%s': cannot close stage '%s' at '%s'",
                        config_.session, StageName(stage), StageName(stage_)));
  }
  const int i = StageIndex(stage);
  int alive = 0;
  for (uint32_t b = 0; b < boards_.size(); ++b) {
    const BoardRecord& r = boards_[b];
    if (before != nullptr && !(r.*before)) continue;
    if (r.*survived) {
      ++alive;
    } else {
      counts_.dropped[i].push_back(b);
    }
  }
  counts_.survived[i] = alive;
  if (alive < config_.threshold) {
    return Abandon(absl::FailedPreconditionError(absl::StrFormat(
        "secagg session '%s' round %d abandoned at stage '%s': %d of %d "
        "boards survived it (%d dropped in it, %d before), below the "
        "threshold t=%d",
        config_.session, config_.round, StageName(stage), alive, config_.cohort,
        counts_.dropped[i].size(),
        config_.cohort - alive - static_cast<int>(counts_.dropped[i].size()),
        config_.threshold)));
  }
  stage_ = static_cast<Stage>(i + 1);
  return absl::OkStatus();
}

absl::Status ServerSession::AcceptAdvertisement(const KeyAdvertisement& ad) {
  if (absl::Status s = CheckSender(Stage::kAdvertiseKeys, ad.board); !s.ok()) {
    return s;
  }
  BoardRecord& r = boards_[ad.board];
  if (r.advertised) {
    return absl::AlreadyExistsError(absl::StrFormat(
        "secagg session '%s': board %d already advertised its keys",
        config_.session, ad.board));
  }
  if (absl::Status s = verifier_->Verify(
          ad.board, AdvertisementSigningBytes(config_, ad), ad.signature);
      !s.ok()) {
    return absl::Status(
        s.code(), absl::StrFormat("secagg session '%s': the advertisement of "
                                  "board %d is refused: %s",
                                  config_.session, ad.board, s.message()));
  }
  r.advertised = true;
  r.ad = ad;
  counts_.bytes_up[0] += WireBytes(ad);
  return absl::OkStatus();
}

absl::StatusOr<std::map<uint32_t, std::vector<KeyAdvertisement>>>
ServerSession::CloseAdvertiseKeys() {
  if (absl::Status s =
          CloseStage(Stage::kAdvertiseKeys, nullptr, &BoardRecord::advertised);
      !s.ok()) {
    return s;
  }
  std::map<uint32_t, std::vector<KeyAdvertisement>> out;
  for (uint32_t b = 0; b < boards_.size(); ++b) {
    if (!boards_[b].advertised) continue;
    std::vector<KeyAdvertisement>& ads = out[b];
    for (uint32_t n : graph_.Of(b)) {
      if (boards_[n].advertised) ads.push_back(boards_[n].ad);
    }
  }
  return out;
}

absl::Status ServerSession::AcceptShareKeys(const ShareKeysMessage& message) {
  const uint32_t b = message.board;
  if (absl::Status s = CheckSender(Stage::kShareKeys, b); !s.ok()) return s;
  BoardRecord& r = boards_[b];
  if (r.shared) {
    return absl::AlreadyExistsError(
        absl::StrFormat("secagg session '%s': board %d already shared its keys",
                        config_.session, b));
  }
  // Exactly one box to each neighbour that survived stage 0, as sent.
  std::set<uint32_t> expected;
  for (uint32_t n : graph_.Of(b)) {
    if (boards_[n].advertised) expected.insert(n);
  }
  std::set<uint32_t> seen;
  for (const ShareCiphertext& c : message.boxes) {
    if (c.sender != b || expected.count(c.receiver) == 0 ||
        !seen.insert(c.receiver).second || c.box.size() != kBoxBytes) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "secagg session '%s': board %d sent a share box from board %d to "
          "board %d of %d bytes; each goes from the sender to one live "
          "neighbour, once, in %d bytes",
          config_.session, b, c.sender, c.receiver, c.box.size(), kBoxBytes));
    }
  }
  if (seen.size() != expected.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "secagg session '%s': board %d sent %d share boxes for its %d live "
        "neighbours",
        config_.session, b, seen.size(), expected.size()));
  }
  r.shared = true;
  r.boxes = message.boxes;
  counts_.bytes_up[1] += WireBytes(message);
  return absl::OkStatus();
}

absl::StatusOr<std::map<uint32_t, std::vector<ShareCiphertext>>>
ServerSession::CloseShareKeys() {
  if (absl::Status s = CloseStage(Stage::kShareKeys, &BoardRecord::advertised,
                                  &BoardRecord::shared);
      !s.ok()) {
    return s;
  }
  std::map<uint32_t, std::vector<ShareCiphertext>> out;
  for (uint32_t b = 0; b < boards_.size(); ++b) {
    if (boards_[b].shared) out[b];  // a survivor may get no box at all
  }
  for (BoardRecord& r : boards_) {
    if (!r.shared) continue;
    for (ShareCiphertext& c : r.boxes) {
      if (boards_[c.receiver].shared) out[c.receiver].push_back(c);
    }
    r.boxes.clear();  // relayed; the server has no use for them
  }
  return out;
}

absl::Status ServerSession::AcceptMaskedInput(const MaskedInput& input) {
  const uint32_t b = input.board;
  if (absl::Status s = CheckSender(Stage::kMaskedInput, b); !s.ok()) return s;
  BoardRecord& r = boards_[b];
  if (r.masked) {
    return absl::AlreadyExistsError(absl::StrFormat(
        "secagg session '%s': board %d already sent its masked input",
        config_.session, b));
  }
  if (input.masked.size() != config_.vector_length) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "secagg session '%s': board %d's masked input has %d words; the "
        "session's vectors have %d",
        config_.session, b, input.masked.size(), config_.vector_length));
  }
  const uint64_t top = uint64_t{1} << config_.bits;
  for (size_t i = 0; i < input.masked.size(); ++i) {
    if (input.masked[i] >= top) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "secagg session '%s': board %d's masked word %d is %d, not below "
          "2^%d",
          config_.session, b, i, input.masked[i], config_.bits));
    }
  }
  r.masked = true;
  if (masked_sum_.empty()) masked_sum_.assign(config_.vector_length, 0);
  const uint32_t keep = static_cast<uint32_t>(top - 1);
  for (size_t i = 0; i < masked_sum_.size(); ++i) {
    masked_sum_[i] = (masked_sum_[i] + input.masked[i]) & keep;
  }
  counts_.bytes_up[2] += WireBytes(input);
  return absl::OkStatus();
}

absl::StatusOr<std::map<uint32_t, UnmaskRequest>>
ServerSession::CloseMaskedInput() {
  if (absl::Status s = CloseStage(Stage::kMaskedInput, &BoardRecord::shared,
                                  &BoardRecord::masked);
      !s.ok()) {
    return s;
  }
  std::map<uint32_t, UnmaskRequest> out;
  for (uint32_t b = 0; b < boards_.size(); ++b) {
    if (!boards_[b].masked) continue;
    UnmaskRequest& request = out[b];
    // Neighbours that dropped before sharing keys hold no secrets with b.
    for (uint32_t n : graph_.Of(b)) {
      if (boards_[n].masked) {
        request.survivors.push_back(n);
      } else if (boards_[n].shared) {
        request.dropped.push_back(n);
      }
    }
    boards_[b].request = request;
  }
  return out;
}

absl::Status ServerSession::AcceptUnmask(const UnmaskResponse& response) {
  const uint32_t b = response.board;
  if (absl::Status s = CheckSender(Stage::kUnmask, b); !s.ok()) return s;
  BoardRecord& r = boards_[b];
  if (r.unmasked) {
    return absl::AlreadyExistsError(absl::StrFormat(
        "secagg session '%s': board %d already sent its unmask shares",
        config_.session, b));
  }
  const std::set<uint32_t> survivors(r.request.survivors.begin(),
                                     r.request.survivors.end());
  const std::set<uint32_t> dropped(r.request.dropped.begin(),
                                   r.request.dropped.end());
  std::set<uint32_t> owners;
  for (const UnmaskShare& s : response.shares) {
    const bool asked = s.kind == ShareKind::kSelfMaskSeed
                           ? survivors.count(s.owner) > 0
                           : dropped.count(s.owner) > 0;
    if (!asked || !owners.insert(s.owner).second) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "secagg session '%s': board %d sent a %s share of board %d, which "
          "it was not asked for (or sent twice)",
          config_.session, b,
          s.kind == ShareKind::kSelfMaskSeed ? "self-mask seed" : "mask key",
          s.owner));
    }
  }
  for (const UnmaskShare& s : response.shares) {
    (s.kind == ShareKind::kSelfMaskSeed ? seed_shares_ : key_shares_)[s.owner]
        .push_back(s.share);
  }
  r.unmasked = true;
  counts_.bytes_up[3] += WireBytes(response);
  return absl::OkStatus();
}

absl::StatusOr<AggregateResult> ServerSession::Finish() {
  if (absl::Status s = CloseStage(Stage::kUnmask, &BoardRecord::masked,
                                  &BoardRecord::unmasked);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<std::vector<uint32_t>> sum = Unmasked();
  seed_shares_.clear();
  key_shares_.clear();
  if (!sum.ok()) return Abandon(sum.status());
  stage_ = Stage::kDone;
  AggregateResult result;
  result.sum = *std::move(sum);
  for (uint32_t b = 0; b < boards_.size(); ++b) {
    if (boards_[b].masked) result.counted.push_back(b);
  }
  result.counts = counts_;
  return result;
}

absl::StatusOr<std::vector<uint32_t>> ServerSession::Unmasked() {
  std::vector<uint32_t> sum = masked_sum_;
  sum.resize(config_.vector_length, 0);  // no input taken: zeros
  // The survivors' self masks: each b rebuilt from its neighbours' shares.
  for (uint32_t b = 0; b < boards_.size(); ++b) {
    if (!boards_[b].masked) continue;
    const std::vector<Share>& shares = seed_shares_[b];
    if (shares.size() < static_cast<size_t>(config_.threshold)) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "secagg session '%s' round %d abandoned at stage 'unmask': %d "
          "shares of board %d's self-mask seed came back, below the "
          "threshold t=%d",
          config_.session, config_.round, shares.size(), b, config_.threshold));
    }
    absl::StatusOr<std::vector<uint8_t>> seed =
        Reconstruct(shares, config_.threshold);
    if (!seed.ok() || seed->size() != sizeof(Key256)) {
      return absl::DataLossError(absl::StrFormat(
          "secagg session '%s': board %d's self-mask seed did not rebuild: "
          "%s",
          config_.session, b,
          seed.ok() ? absl::string_view("wrong size")
                    : seed.status().message()));
    }
    Key256 key;
    std::copy(seed->begin(), seed->end(), key.begin());
    OPENSSL_cleanse(seed->data(), seed->size());
    absl::Status s =
        ApplyMask(absl::MakeSpan(sum), key, config_.bits, MaskSign::kSubtract);
    OPENSSL_cleanse(key.data(), key.size());
    if (!s.ok()) return s;
  }
  for (uint32_t b = 0; b < boards_.size(); ++b) {
    if (boards_[b].shared && !boards_[b].masked) {
      if (absl::Status s = RemoveDroppedMasks(b, sum); !s.ok()) return s;
    }
  }
  return sum;
}

// Board `dropped` shared keys but sent no masked input, so its surviving
// neighbours' inputs carry pair masks with it that nothing cancels: rebuild
// its s private key and take them out.
absl::Status ServerSession::RemoveDroppedMasks(uint32_t dropped,
                                               std::vector<uint32_t>& sum) {
  const std::vector<Share>& shares = key_shares_[dropped];
  if (shares.size() < static_cast<size_t>(config_.threshold)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "secagg session '%s' round %d abandoned at stage 'unmask': %d shares "
        "of dropped board %d's mask key came back, below the threshold t=%d",
        config_.session, config_.round, shares.size(), dropped,
        config_.threshold));
  }
  absl::StatusOr<std::vector<uint8_t>> secret =
      Reconstruct(shares, config_.threshold);
  X25519Key private_key{};
  if (secret.ok() && secret->size() == private_key.size()) {
    std::copy(secret->begin(), secret->end(), private_key.begin());
    OPENSSL_cleanse(secret->data(), secret->size());
  }
  // With exactly t shares Shamir cannot tell an altered share; the
  // advertised public key can.
  absl::StatusOr<KeyPair> pair = KeyPairFromPrivate(private_key);
  if (!secret.ok() || !pair.ok() ||
      pair->public_key != boards_[dropped].ad.mask_public) {
    OPENSSL_cleanse(private_key.data(), private_key.size());
    return absl::DataLossError(absl::StrFormat(
        "secagg session '%s': dropped board %d's mask key did not rebuild "
        "to its advertised key%s",
        config_.session, dropped,
        secret.ok() ? "" : absl::StrCat(": ", secret.status().message())));
  }
  for (uint32_t n : graph_.Of(dropped)) {
    if (!boards_[n].masked) continue;
    absl::StatusOr<Key256> seed =
        PairMaskSeed(private_key, boards_[n].ad.mask_public, config_);
    if (!seed.ok()) return seed.status();
    // n applied its sign for the pair (n, dropped); undo it.
    const MaskSign undo = PairMaskSign(n, dropped) == MaskSign::kAdd
                              ? MaskSign::kSubtract
                              : MaskSign::kAdd;
    absl::Status s = ApplyMask(absl::MakeSpan(sum), *seed, config_.bits, undo);
    OPENSSL_cleanse(seed->data(), seed->size());
    if (!s.ok()) return s;
  }
  OPENSSL_cleanse(private_key.data(), private_key.size());
  return absl::OkStatus();
}

}  // namespace fedberry::secagg
