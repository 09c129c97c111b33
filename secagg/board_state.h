// A board's side of a SecAgg+ session as data: its key pairs, its self-mask
// seed, its live neighbours' keys and the shares they gave it, and how far
// it got. board_session.h drives it; this file gives it a byte form, so a
// board that restarts mid-session (a checkpoint, later) resumes in the same
// stage and above all still knows that it already sent a masked input: a
// second one, masked afresh, would let the server subtract the two.
//
// The bytes hold private keys and shares: whoever stores them must keep
// them as secret as the board's keys (encrypted at rest when checkpoints
// land). Also here: the plaintext inside a share box (a pair of shares).
//
// Thread-safety: plain data and functions without shared state.
#ifndef FEDBERRY_SECAGG_BOARD_STATE_H_
#define FEDBERRY_SECAGG_BOARD_STATE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "secagg/key_agreement.h"
#include "secagg/session_messages.h"
#include "secagg/shamir.h"

namespace fedberry::secagg {

// What the board has sent last.
enum class BoardStage {
  kNew = 0,         // nothing yet
  kAdvertised = 1,  // stage 0's advertisement
  kSharedKeys = 2,  // stage 1's boxes
  kMasked = 3,      // stage 2's masked input: never again this session
  kUnmasked = 4,    // stage 3's shares: never again this session
};

struct NeighbourState {
  uint32_t board = 0;
  X25519Key transport_public{};
  X25519Key mask_public{};
  // Set in stage 2 when its box arrived: it survived stage 1, the board
  // masked with it, and holds these shares of its secrets.
  bool shared = false;
  Share mask_key_share;   // of its s private key
  Share self_seed_share;  // of its b
};

struct BoardState {
  SessionConfig config;
  uint32_t board = 0;
  BoardStage stage = BoardStage::kNew;
  KeyPair transport;   // c
  KeyPair mask;        // s
  Key256 self_seed{};  // b
  // The neighbours whose advertisements came in stage 1, by id.
  std::vector<NeighbourState> neighbours;
};

std::vector<uint8_t> SerializeBoardState(const BoardState& state);

// DataLoss when the bytes are not a state SerializeBoardState wrote:
// another format version, cut short, trailing bytes, a stage or count out
// of range, or a session configuration CheckSessionConfig refuses.
absl::StatusOr<BoardState> ParseBoardState(absl::Span<const uint8_t> bytes);

// A share box's plaintext: the receiver's share of the sender's s private
// key, then of its b.
std::vector<uint8_t> EncodeSharePair(const Share& mask_key,
                                     const Share& self_seed);
// DataLoss when the bytes are not a pair EncodeSharePair wrote for two
// 32-byte secrets.
absl::Status DecodeSharePair(absl::Span<const uint8_t> bytes, Share& mask_key,
                             Share& self_seed);

}  // namespace fedberry::secagg

#endif  // FEDBERRY_SECAGG_BOARD_STATE_H_
