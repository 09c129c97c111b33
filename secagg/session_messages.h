// What a SecAgg+ session's parties agree on and send each other, as plain
// structs: the transport (gRPC, later) carries them, this library only
// builds and checks them. A session runs four stages (Bonawitz et al. 2017,
// with Bell et al. 2020's neighbour graph):
//   0 advertise keys: each board sends two signed X25519 public keys
//     (c: share transport, s: masks);
//   1 share keys: each board Shamir-shares its s private key and a self-mask
//     seed b among its neighbours, each pair of shares in a share box;
//   2 masked input: each board sends y = x + PRG(b) +- PRG(s agreements);
//   3 unmask: each board sends, per neighbour, the share of b (survivor) or
//     of the s private key (dropped after stage 1), never both.
// board_session.h and server_session.h are the two sides.
//
// Signing: the fleet's certificates will sign the advertisements; here the
// signer and verifier are interfaces, so tests pass a fake.
// Thread-safety: plain data; the interfaces say nothing about threads (an
// implementation used from several threads must be thread-safe).
#ifndef FEDBERRY_SECAGG_SESSION_MESSAGES_H_
#define FEDBERRY_SECAGG_SESSION_MESSAGES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "secagg/key_agreement.h"
#include "secagg/mask.h"
#include "secagg/neighbours.h"
#include "secagg/shamir.h"

namespace fedberry::secagg {

enum class Stage {
  kAdvertiseKeys = 0,
  kShareKeys = 1,
  kMaskedInput = 2,
  kUnmask = 3,
  kDone = 4,
  kAbandoned = 5,
};
inline constexpr int kStageCount = 4;  // the four stages that take messages

// "advertise keys", "share keys", "masked input", "unmask", "done",
// "abandoned".
const char* StageName(Stage stage);

// What the server tells every board before stage 0.
struct SessionConfig {
  std::string session;  // the session's id, unique per job (<= 1024 bytes)
  uint64_t round = 0;
  int cohort = 0;              // n: boards 0..n-1
  int neighbours = 0;          // K (parameters.h)
  int threshold = 0;           // t, 1..K
  int bits = 0;                // the field is 2^bits, 1..32 (quantise.h)
  uint64_t vector_length = 0;  // words per update, 1..kMaxMaskWords
  GraphSeed graph_seed{};
};

// InvalidArgument naming the first field out of range.
absl::Status CheckSessionConfig(const SessionConfig& config);

// Session and round as one string, for HKDF's info and share boxes.
std::string SessionLabel(const SessionConfig& config);

// Signs a board's advertisement (the fleet certificate's key, later).
class KeySigner {
 public:
  virtual ~KeySigner() = default;
  // The signature of `bytes`; Internal or Unavailable when signing fails.
  virtual absl::StatusOr<std::vector<uint8_t>> Sign(
      absl::Span<const uint8_t> bytes) = 0;
};

// Checks that `board` signed an advertisement.
class KeyVerifier {
 public:
  virtual ~KeyVerifier() = default;
  // OK when `signature` is `board`'s over `bytes`; PermissionDenied (or
  // Unauthenticated) otherwise.
  virtual absl::Status Verify(uint32_t board, absl::Span<const uint8_t> bytes,
                              absl::Span<const uint8_t> signature) const = 0;
};

// Stage 0, board to server, then relayed to the board's neighbours.
struct KeyAdvertisement {
  uint32_t board = 0;
  X25519Key transport_public{};  // c
  X25519Key mask_public{};       // s
  std::vector<uint8_t> signature;
};

// What the signature covers: a versioned label, the session label, the
// board's id and both keys, so an advertisement cannot be replayed into
// another session or passed off as another board's.
std::vector<uint8_t> AdvertisementSigningBytes(const SessionConfig& config,
                                               const KeyAdvertisement& ad);

// Stage 1: one box from `sender` to `receiver`, relayed by the server.
struct ShareCiphertext {
  uint32_t sender = 0;
  uint32_t receiver = 0;
  std::vector<uint8_t> box;  // share_box.h: the two shares for receiver
};

struct ShareKeysMessage {
  uint32_t board = 0;
  std::vector<ShareCiphertext> boxes;  // one per live neighbour
};

// Stage 2.
struct MaskedInput {
  uint32_t board = 0;
  std::vector<uint32_t> masked;  // vector_length words below 2^bits
};

// Stage 3, server to one board: its neighbours whose masked inputs were
// counted (send their b shares) and those that dropped after sharing keys
// (send their s key shares).
struct UnmaskRequest {
  std::vector<uint32_t> survivors;
  std::vector<uint32_t> dropped;
};

enum class ShareKind { kSelfMaskSeed, kMaskKey };

struct UnmaskShare {
  uint32_t owner = 0;  // whose secret this is a share of
  ShareKind kind = ShareKind::kSelfMaskSeed;
  Share share;
};

struct UnmaskResponse {
  uint32_t board = 0;
  std::vector<UnmaskShare> shares;
};

// The seed of the mask boards `own` and `peer` share: X25519 of one's s
// private key with the other's s public key (either way round), through
// HKDF with the session label. Errors as Agree and DeriveKey.
absl::StatusOr<Key256> PairMaskSeed(const X25519Key& own_private,
                                    const X25519Key& peer_public,
                                    const SessionConfig& config);

// The key of the share boxes between two boards, from their c keys.
absl::StatusOr<Key256> PairTransportKey(const X25519Key& own_private,
                                        const X25519Key& peer_public,
                                        const SessionConfig& config);

// How board `own` applies the mask it shares with `peer`: the lower id adds
// it, the higher subtracts it, so the pair's masks cancel in the sum.
MaskSign PairMaskSign(uint32_t own, uint32_t peer);

// The size of a message on the wire, counted as its fields' fixed-width
// encoding (ids 4 bytes, words 4, field elements 8, keys and boxes as they
// are): what the per-stage byte counts report. The gRPC encoding will
// differ by its framing.
uint64_t WireBytes(const KeyAdvertisement& message);
uint64_t WireBytes(const ShareKeysMessage& message);
uint64_t WireBytes(const MaskedInput& message);
uint64_t WireBytes(const UnmaskResponse& message);

}  // namespace fedberry::secagg

#endif  // FEDBERRY_SECAGG_SESSION_MESSAGES_H_
