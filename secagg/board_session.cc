#include "secagg/board_session.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "secagg/mask.h"
#include "secagg/shamir.h"
#include "secagg/share_box.h"

namespace fedberry::secagg {
namespace {

const char* BoardStageName(BoardStage stage) {
  switch (stage) {
    case BoardStage::kNew:
      return "new";
    case BoardStage::kAdvertised:
      return "advertised its keys";
    case BoardStage::kSharedKeys:
      return "shared its keys";
    case BoardStage::kMasked:
      return "sent its masked input";
    case BoardStage::kUnmasked:
      return "sent its unmask shares";
  }
  return "unknown";
}

BoxAddress AddressOf(const SessionConfig& config, uint32_t sender,
                     uint32_t receiver) {
  return BoxAddress{config.session, config.round, sender, receiver};
}

absl::Status Annotate(const absl::Status& status, absl::string_view context) {
  return absl::Status(status.code(),
                      absl::StrCat(context, ": ", status.message()));
}

// The advertisements relayed in stage 1, checked (neighbours only, each
// once, signed by its board) and sorted by board.
absl::StatusOr<std::vector<NeighbourState>> CheckAdvertisements(
    const SessionConfig& config, const NeighbourGraph& graph,
    const KeyVerifier& verifier, uint32_t self,
    absl::Span<const KeyAdvertisement> ads) {
  std::vector<NeighbourState> live;
  for (const KeyAdvertisement& ad : ads) {
    if (!graph.Adjacent(self, ad.board)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "board %d got the advertisement of board %d, which is not its "
          "neighbour",
          self, ad.board));
    }
    if (absl::Status s = verifier.Verify(
            ad.board, AdvertisementSigningBytes(config, ad), ad.signature);
        !s.ok()) {
      return Annotate(s, absl::StrFormat("board %d refused the advertisement "
                                         "of board %d",
                                         self, ad.board));
    }
    NeighbourState& n = live.emplace_back();
    n.board = ad.board;
    n.transport_public = ad.transport_public;
    n.mask_public = ad.mask_public;
  }
  std::sort(live.begin(), live.end(),
            [](const NeighbourState& a, const NeighbourState& b) {
              return a.board < b.board;
            });
  for (size_t i = 1; i < live.size(); ++i) {
    if (live[i].board == live[i - 1].board) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "board %d got two advertisements of board %d", self, live[i].board));
    }
  }
  return live;
}

}  // namespace

// The shares one stage-2 box carries, checked before the board commits.
struct BoardSession::Received {
  uint32_t sender = 0;
  Share mask_key;
  Share self_seed;
};

absl::StatusOr<BoardSession> BoardSession::Create(const SessionConfig& config,
                                                  uint32_t board,
                                                  RandomSource& random,
                                                  KeySigner& signer,
                                                  const KeyVerifier& verifier) {
  if (absl::Status s = CheckSessionConfig(config); !s.ok()) return s;
  if (board >= static_cast<uint32_t>(config.cohort)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "board %d is outside the cohort of %d", board, config.cohort));
  }
  absl::StatusOr<NeighbourGraph> graph = NeighbourGraph::Create(
      config.cohort, config.neighbours, config.graph_seed);
  if (!graph.ok()) return graph.status();
  BoardState state;
  state.config = config;
  state.board = board;
  return BoardSession(std::move(state), *std::move(graph), random, signer,
                      verifier);
}

absl::StatusOr<BoardSession> BoardSession::Restore(
    absl::Span<const uint8_t> bytes, RandomSource& random, KeySigner& signer,
    const KeyVerifier& verifier) {
  absl::StatusOr<BoardState> state = ParseBoardState(bytes);
  if (!state.ok()) return state.status();
  absl::StatusOr<NeighbourGraph> graph = NeighbourGraph::Create(
      state->config.cohort, state->config.neighbours, state->config.graph_seed);
  if (!graph.ok()) return graph.status();
  return BoardSession(*std::move(state), *std::move(graph), random, signer,
                      verifier);
}

std::vector<uint8_t> BoardSession::Serialize() const {
  return SerializeBoardState(state_);
}

absl::Status BoardSession::CheckStage(BoardStage expected,
                                      const char* what) const {
  if (state_.stage == expected) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrFormat(
      "board %d of secagg session '%s' round %d cannot %s: it has %s", board(),
      state_.config.session, state_.config.round, what,
      BoardStageName(state_.stage)));
}

NeighbourState* BoardSession::FindNeighbour(uint32_t board) {
  auto it = std::lower_bound(
      state_.neighbours.begin(), state_.neighbours.end(), board,
      [](const NeighbourState& n, uint32_t id) { return n.board < id; });
  return it != state_.neighbours.end() && it->board == board ? &*it : nullptr;
}

absl::StatusOr<KeyAdvertisement> BoardSession::AdvertiseKeys() {
  if (absl::Status s = CheckStage(BoardStage::kNew, "advertise keys");
      !s.ok()) {
    return s;
  }
  absl::StatusOr<KeyPair> transport = GenerateKeyPair(*random_);
  if (!transport.ok()) return transport.status();
  absl::StatusOr<KeyPair> mask = GenerateKeyPair(*random_);
  if (!mask.ok()) return mask.status();
  KeyAdvertisement ad;
  ad.board = board();
  ad.transport_public = transport->public_key;
  ad.mask_public = mask->public_key;
  absl::StatusOr<std::vector<uint8_t>> signature =
      signer_->Sign(AdvertisementSigningBytes(state_.config, ad));
  if (!signature.ok()) return signature.status();
  ad.signature = *std::move(signature);
  state_.transport = *transport;
  state_.mask = *mask;
  state_.stage = BoardStage::kAdvertised;
  return ad;
}

absl::StatusOr<ShareKeysMessage> BoardSession::ShareKeys(
    absl::Span<const KeyAdvertisement> neighbours) {
  if (absl::Status s = CheckStage(BoardStage::kAdvertised, "share keys");
      !s.ok()) {
    return s;
  }
  absl::StatusOr<std::vector<NeighbourState>> live = CheckAdvertisements(
      state_.config, graph_, *verifier_, board(), neighbours);
  if (!live.ok()) return live.status();
  const int t = state_.config.threshold;
  const int m = static_cast<int>(live->size());
  if (m < t) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "board %d has %d live neighbours after stage 'advertise keys'; "
        "sharing needs the threshold t=%d",
        board(), m, t));
  }
  Key256 seed;
  if (absl::Status s = random_->Fill(absl::MakeSpan(seed)); !s.ok()) return s;
  absl::StatusOr<std::vector<Share>> key_shares =
      Split(state_.mask.private_key, t, m, *random_);
  if (!key_shares.ok()) return key_shares.status();
  absl::StatusOr<std::vector<Share>> seed_shares = Split(seed, t, m, *random_);
  if (!seed_shares.ok()) return seed_shares.status();
  ShareKeysMessage message;
  message.board = board();
  for (int k = 0; k < m; ++k) {
    const NeighbourState& n = (*live)[k];
    absl::StatusOr<Key256> key = PairTransportKey(
        state_.transport.private_key, n.transport_public, state_.config);
    if (!key.ok()) return key.status();
    absl::StatusOr<std::vector<uint8_t>> box = SealShareBox(
        *key, AddressOf(state_.config, board(), n.board),
        EncodeSharePair((*key_shares)[k], (*seed_shares)[k]), *random_);
    OPENSSL_cleanse(key->data(), key->size());
    if (!box.ok()) return box.status();
    message.boxes.push_back({board(), n.board, *std::move(box)});
  }
  state_.self_seed = seed;
  OPENSSL_cleanse(seed.data(), seed.size());
  state_.neighbours = *std::move(live);
  state_.stage = BoardStage::kSharedKeys;
  return message;
}

absl::StatusOr<std::vector<BoardSession::Received>> BoardSession::OpenInbound(
    absl::Span<const ShareCiphertext> inbound) {
  std::vector<Received> received;
  std::set<uint32_t> senders;
  for (const ShareCiphertext& c : inbound) {
    const NeighbourState* n = FindNeighbour(c.sender);
    if (c.receiver != board() || n == nullptr) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "board %d got a share box from board %d to board %d; it takes "
          "boxes addressed to it from the neighbours it shared with",
          board(), c.sender, c.receiver));
    }
    if (!senders.insert(c.sender).second) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "board %d got two share boxes from board %d", board(), c.sender));
    }
    absl::StatusOr<Key256> key = PairTransportKey(
        state_.transport.private_key, n->transport_public, state_.config);
    if (!key.ok()) return key.status();
    absl::StatusOr<std::vector<uint8_t>> plain =
        OpenShareBox(*key, AddressOf(state_.config, c.sender, board()), c.box);
    OPENSSL_cleanse(key->data(), key->size());
    if (!plain.ok()) {
      return Annotate(plain.status(),
                      absl::StrFormat("board %d refused the share box from "
                                      "board %d",
                                      board(), c.sender));
    }
    Received& r = received.emplace_back();
    r.sender = c.sender;
    absl::Status decoded = DecodeSharePair(*plain, r.mask_key, r.self_seed);
    OPENSSL_cleanse(plain->data(), plain->size());
    if (!decoded.ok()) return decoded;
  }
  return received;
}

absl::StatusOr<MaskedInput> BoardSession::MaskInput(
    absl::Span<const uint32_t> update,
    absl::Span<const ShareCiphertext> inbound) {
  if (absl::Status s = CheckStage(BoardStage::kSharedKeys, "mask its input");
      !s.ok()) {
    return s;
  }
  const SessionConfig& config = state_.config;
  if (update.size() != config.vector_length) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "board %d's update has %d words; the session expects %d", board(),
        update.size(), config.vector_length));
  }
  absl::StatusOr<std::vector<Received>> received = OpenInbound(inbound);
  if (!received.ok()) return received.status();
  if (received->size() < static_cast<size_t>(config.threshold)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "board %d has %d neighbours that survived stage 'share keys'; "
        "masking needs the threshold t=%d",
        board(), received->size(), config.threshold));
  }
  MaskedInput out;
  out.board = board();
  out.masked.assign(update.begin(), update.end());
  // ApplyMask refuses a word not below 2^bits before changing any.
  if (absl::Status s = ApplyMask(absl::MakeSpan(out.masked), state_.self_seed,
                                 config.bits, MaskSign::kAdd);
      !s.ok()) {
    return Annotate(s, absl::StrFormat("board %d's update", board()));
  }
  for (const Received& r : *received) {
    const NeighbourState* n = FindNeighbour(r.sender);
    absl::StatusOr<Key256> seed =
        PairMaskSeed(state_.mask.private_key, n->mask_public, config);
    if (!seed.ok()) return seed.status();
    absl::Status s = ApplyMask(absl::MakeSpan(out.masked), *seed, config.bits,
                               PairMaskSign(board(), r.sender));
    OPENSSL_cleanse(seed->data(), seed->size());
    if (!s.ok()) return s;
  }
  for (Received& r : *received) {
    NeighbourState* n = FindNeighbour(r.sender);
    n->shared = true;
    n->mask_key_share = std::move(r.mask_key);
    n->self_seed_share = std::move(r.self_seed);
  }
  // From here on this session never masks again (Serialize carries it).
  state_.stage = BoardStage::kMasked;
  return out;
}

absl::StatusOr<UnmaskResponse> BoardSession::Unmask(
    const UnmaskRequest& request) {
  if (absl::Status s = CheckStage(BoardStage::kMasked, "send unmask shares");
      !s.ok()) {
    return s;
  }
  std::set<uint32_t> survivors;
  for (uint32_t id : request.survivors) {
    if (!survivors.insert(id).second) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "unmask request to board %d names survivor %d twice", board(), id));
    }
  }
  UnmaskResponse response;
  response.board = board();
  std::set<uint32_t> dropped;
  for (uint32_t id : request.dropped) {
    if (id == board()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "unmask request to board %d names the board itself as dropped",
          board()));
    }
    if (survivors.count(id) > 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "unmask request to board %d asks for both shares of board %d (as "
          "survivor and as dropped): together they would unmask its input",
          board(), id));
    }
    if (!dropped.insert(id).second) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "unmask request to board %d names dropped board %d twice", board(),
          id));
    }
  }
  for (const auto& [ids, kind] :
       {std::pair{&survivors, ShareKind::kSelfMaskSeed},
        std::pair{&dropped, ShareKind::kMaskKey}}) {
    for (uint32_t id : *ids) {
      if (id == board()) continue;  // its own inclusion is no request
      if (!graph_.Adjacent(board(), id)) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "unmask request to board %d names board %d, which is not its "
            "neighbour",
            board(), id));
      }
      const NeighbourState* n = FindNeighbour(id);
      if (n == nullptr || !n->shared) {
        return absl::FailedPreconditionError(absl::StrFormat(
            "unmask request to board %d names board %d, whose shares it "
            "does not hold (it dropped before sharing keys)",
            board(), id));
      }
      response.shares.push_back({id, kind,
                                 kind == ShareKind::kSelfMaskSeed
                                     ? n->self_seed_share
                                     : n->mask_key_share});
    }
  }
  state_.stage = BoardStage::kUnmasked;
  return response;
}

}  // namespace fedberry::secagg
