// A board's side of a SecAgg+ session (session_messages.h has the stages),
// as a state machine without transport: each stage's method takes what the
// server relayed and returns what the board sends back, or refuses.
//
// The refusals that protect the board's update:
// - MaskInput runs once per session. Its state says so (stage() is
//   kMasked), and Serialize() carries that state, so a board restored from
//   it refuses too: two masked inputs of one session under the same masks
//   would let the server subtract them. Persist Serialize() before sending
//   the masked input.
// - Unmask gives, for each neighbour, the share of its self-mask seed (it
//   survived) or of its mask key (it dropped), never both, and only for
//   neighbours it holds shares of; it answers once per session.
// - Neighbours' advertisements must carry their board's signature
//   (KeyVerifier), and share boxes must authenticate (share_box.h).
//
// Thread-safety: not thread-safe; one caller drives a session. The
// RandomSource, KeySigner and KeyVerifier are borrowed and must outlive it.
#ifndef FEDBERRY_SECAGG_BOARD_SESSION_H_
#define FEDBERRY_SECAGG_BOARD_SESSION_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "secagg/board_state.h"
#include "secagg/neighbours.h"
#include "secagg/random_source.h"
#include "secagg/session_messages.h"

namespace fedberry::secagg {

class BoardSession {
 public:
  // Board `board` of the session. InvalidArgument for a bad config
  // (CheckSessionConfig) or a board outside the cohort.
  static absl::StatusOr<BoardSession> Create(const SessionConfig& config,
                                             uint32_t board,
                                             RandomSource& random,
                                             KeySigner& signer,
                                             const KeyVerifier& verifier);

  // A session from Serialize()'s bytes, in the stage it was saved in.
  // DataLoss for bytes that are not a saved state (ParseBoardState).
  static absl::StatusOr<BoardSession> Restore(absl::Span<const uint8_t> bytes,
                                              RandomSource& random,
                                              KeySigner& signer,
                                              const KeyVerifier& verifier);

  // Everything the board knows, secrets included (board_state.h).
  std::vector<uint8_t> Serialize() const;

  BoardStage stage() const { return state_.stage; }
  uint32_t board() const { return state_.board; }
  const SessionConfig& config() const { return state_.config; }
  const NeighbourGraph& graph() const { return graph_; }

  // Stage 0: fresh c and s key pairs, advertised and signed.
  // FailedPrecondition past stage 0; the signer's or RandomSource's error.
  absl::StatusOr<KeyAdvertisement> AdvertiseKeys();

  // Stage 1: the advertisements of the neighbours that survived stage 0;
  // returns one share box per neighbour. InvalidArgument for an
  // advertisement of a board that is not a neighbour, or two of one board;
  // the verifier's status (naming the board) for a bad signature;
  // FailedPrecondition out of order or with fewer than t neighbours.
  absl::StatusOr<ShareKeysMessage> ShareKeys(
      absl::Span<const KeyAdvertisement> neighbours);

  // Stage 2: the board's quantised update (vector_length words below
  // 2^bits) and the boxes its neighbours sent it in stage 1, which name the
  // neighbours that survived stage 1; returns y = x + PRG(b) +- PRG(pair
  // seeds) mod 2^bits. FailedPrecondition when it already masked (also
  // after Restore), out of order, or with fewer than t surviving
  // neighbours; InvalidArgument for a wrong update or a box from a board it
  // did not share with, or not addressed to it; DataLoss for a box that
  // fails authentication (altered, or sealed for another address).
  absl::StatusOr<MaskedInput> MaskInput(
      absl::Span<const uint32_t> update,
      absl::Span<const ShareCiphertext> inbound);

  // Stage 3: the shares the request asks for. InvalidArgument when it
  // names a board that is not a neighbour, one in both lists, one twice,
  // or this board as dropped; FailedPrecondition when it asks for a
  // neighbour the board holds no shares of, out of order, or a second time.
  absl::StatusOr<UnmaskResponse> Unmask(const UnmaskRequest& request);

 private:
  BoardSession(BoardState state, NeighbourGraph graph, RandomSource& random,
               KeySigner& signer, const KeyVerifier& verifier)
      : state_(std::move(state)),
        graph_(std::move(graph)),
        random_(&random),
        signer_(&signer),
        verifier_(&verifier) {}

  struct Received;  // one opened stage-2 box
  absl::Status CheckStage(BoardStage expected, const char* what) const;
  // The stage-2 boxes opened and decoded; nothing in state_ changes.
  absl::StatusOr<std::vector<Received>> OpenInbound(
      absl::Span<const ShareCiphertext> inbound);
  NeighbourState* FindNeighbour(uint32_t board);

  BoardState state_;
  NeighbourGraph graph_;
  RandomSource* random_;
  KeySigner* signer_;
  const KeyVerifier* verifier_;
};

}  // namespace fedberry::secagg

#endif  // FEDBERRY_SECAGG_BOARD_SESSION_H_
