// The gateway's side of a SecAgg+ session (session_messages.h has the
// stages): it relays keys and share boxes, collects masked inputs, and at
// the end learns only the sum of the counted boards' updates. A state
// machine without transport or clock: the caller feeds each message to
// Accept*, and closes a stage (Close*) when its deadline passes; the boards
// that sent nothing acceptable by then have dropped at that stage.
//
// Each Accept* refuses, and does not record, a message from an unknown
// board (InvalidArgument), one that dropped earlier or sent in the wrong
// stage (FailedPrecondition), a duplicate (AlreadyExists), a bad signature
// (the verifier's status), share boxes not routed to exactly the sender's
// live neighbours, a masked input of the wrong length or out of the field,
// unmask shares the board was not asked for (InvalidArgument).
//
// A stage that ends with fewer than t survivors abandons the session: every
// later call returns the same FailedPrecondition naming the stage and the
// counts (abandon_reason()). Finish also abandons when a secret it must
// rebuild has fewer than t shares, and with DataLoss when shares disagree
// or a rebuilt mask key does not match its board's advertised key.
//
// Thread-safety: not thread-safe; one caller drives a session. The
// KeyVerifier is borrowed and must outlive it.
#ifndef FEDBERRY_SECAGG_SERVER_SESSION_H_
#define FEDBERRY_SECAGG_SERVER_SESSION_H_

#include <array>
#include <cstdint>
#include <map>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "secagg/neighbours.h"
#include "secagg/session_messages.h"

namespace fedberry::secagg {

struct SessionCounts {
  int started = 0;  // the cohort, n
  // Per stage (advertise keys, share keys, masked input, unmask): how many
  // boards sent an accepted message, who did not (of those still in), and
  // the accepted messages' WireBytes.
  std::array<int, kStageCount> survived{};
  std::array<std::vector<uint32_t>, kStageCount> dropped;
  std::array<uint64_t, kStageCount> bytes_up{};
};

struct AggregateResult {
  std::vector<uint32_t> sum;      // mod 2^bits, over `counted`
  std::vector<uint32_t> counted;  // the boards whose masked inputs count
  SessionCounts counts;
};

class ServerSession {
 public:
  // InvalidArgument for a bad config (CheckSessionConfig).
  static absl::StatusOr<ServerSession> Create(const SessionConfig& config,
                                              const KeyVerifier& verifier);

  Stage stage() const { return stage_; }
  const SessionConfig& config() const { return config_; }
  const NeighbourGraph& graph() const { return graph_; }
  const SessionCounts& counts() const { return counts_; }
  // OK unless abandoned.
  const absl::Status& abandon_reason() const { return abandoned_; }

  // Stage 0.
  absl::Status AcceptAdvertisement(const KeyAdvertisement& ad);
  // Ends stage 0: for each surviving board, its surviving neighbours'
  // advertisements.
  absl::StatusOr<std::map<uint32_t, std::vector<KeyAdvertisement>>>
  CloseAdvertiseKeys();

  // Stage 1.
  absl::Status AcceptShareKeys(const ShareKeysMessage& message);
  // Ends stage 1: for each surviving board, the boxes addressed to it by
  // the other survivors.
  absl::StatusOr<std::map<uint32_t, std::vector<ShareCiphertext>>>
  CloseShareKeys();

  // Stage 2.
  absl::Status AcceptMaskedInput(const MaskedInput& input);
  // Ends stage 2: for each surviving board, the request for its shares.
  absl::StatusOr<std::map<uint32_t, UnmaskRequest>> CloseMaskedInput();

  // Stage 3.
  absl::Status AcceptUnmask(const UnmaskResponse& response);
  // Ends stage 3 and unmasks the sum.
  absl::StatusOr<AggregateResult> Finish();

 private:
  struct BoardRecord {
    bool advertised = false;  // survived stage 0
    bool shared = false;      // survived stage 1
    bool masked = false;      // survived stage 2
    bool unmasked = false;    // answered stage 3
    KeyAdvertisement ad;
    std::vector<ShareCiphertext> boxes;
    UnmaskRequest request;
  };

  ServerSession(SessionConfig config, NeighbourGraph graph,
                const KeyVerifier& verifier);

  // The common refusals: stage, abandoned, unknown board, dropped earlier.
  absl::Status CheckSender(Stage stage, uint32_t board) const;
  // Records who dropped at `stage` (in before, not `survived` after), and
  // abandons below t.
  absl::Status CloseStage(Stage stage, bool BoardRecord::*before,
                          bool BoardRecord::*survived);
  absl::Status Abandon(absl::Status reason);
  // Finish's arithmetic over the records.
  absl::StatusOr<std::vector<uint32_t>> Unmasked();
  absl::Status RemoveDroppedMasks(uint32_t dropped, std::vector<uint32_t>& sum);

  SessionConfig config_;
  NeighbourGraph graph_;
  const KeyVerifier* verifier_;
  Stage stage_ = Stage::kAdvertiseKeys;
  absl::Status abandoned_;
  std::vector<BoardRecord> boards_;
  // The masked inputs' sum mod 2^bits, added as each arrives: every input
  // taken counts, so none is kept (200 LeNet-5 inputs would be 49 MB).
  std::vector<uint32_t> masked_sum_;
  // Stage 3's shares by the board whose secret they rebuild.
  std::map<uint32_t, std::vector<Share>> seed_shares_;
  std::map<uint32_t, std::vector<Share>> key_shares_;
  SessionCounts counts_;
};

}  // namespace fedberry::secagg

#endif  // FEDBERRY_SECAGG_SERVER_SESSION_H_
