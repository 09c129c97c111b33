// Securely aggregated synchronous rounds (--secure_aggregation=secagg+):
// the cohort, tasks and deadlines of SyncRounds, but no board's update is
// ever taken in the clear. Each task carries the board's part of a SecAgg+
// session (secagg/server_session.h); after training, boards send the four
// stages' messages through Step, and the round closes when the session
// unmasks the sum of their weighted, clipped, quantised updates
// (secagg/update_words.h), whose mean is the round's one update. A stage
// closes once every board still in sent its message, or at its deadline;
// a session that falls below its threshold abandons the round, which
// starts over with the same model.
//
// Thread-compatible: the coordinator's lock guards it (see RoundKind).
#ifndef FEDBERRY_SERVER_ROUND_SECAGG_ROUNDS_H_
#define FEDBERRY_SERVER_ROUND_SECAGG_ROUNDS_H_

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fedberry/v1/federation.pb.h"
#include "secagg/server_session.h"
#include "secagg/unsigned_keys.h"
#include "secagg/update_words.h"
#include "security/secagg_keys.h"
#include "server/round/round_kind.h"
#include "server/round/secagg_options.h"
#include "server/round/sync_rounds.h"

namespace fedberry::server {

class SecAggRounds final : public RoundKind {
 public:
  // `plain` runs the cohort and tasks.
  SecAggRounds(RoundContext context, SecAggOptions options,
               std::unique_ptr<SyncRounds> plain);

  // A board's message of the open round's session, or its wait for the
  // next stage's input. NotFound/FailedPrecondition when `request` is not
  // of the open round's task and session; PermissionDenied when it speaks
  // as another board, or (with signed keys) sends keys without the
  // certificate of a mutual-TLS call, `peer_certificate` (PEM); the
  // session's refusals (server_session.h).
  absl::StatusOr<v1::SecAggResponse> Step(const v1::SecAggRequest& request,
                                          const std::string& peer_certificate);
  // The long polls' key a board's parked wait for a stage goes under: its
  // own, so a closed stage wakes no task poll.
  static std::string WaitKey(const std::string& client_id) {
    return "secagg:" + client_id;
  }

  Cohort Draw(std::vector<std::string> available,
              std::mt19937_64& rng) const override {
    return plain_->Draw(std::move(available), rng);
  }
  void Open(const Cohort& cohort, std::mt19937_64& rng, int available,
            RoundAggregator& sum) override;
  std::optional<TrainTask> TaskFor(const std::string& id,
                                   const ClientRecord& client) override;
  absl::Status CheckTask(const std::string& id, uint64_t round,
                         const std::string& task_id, TaskUse use) override {
    return plain_->CheckTask(id, round, task_id, use);
  }
  absl::StatusOr<TaskBase> BaseOf(const std::string& id) const override {
    return plain_->BaseOf(id);
  }
  bool TakesPush() const override { return true; }
  // Refuses every plain update: it would show the gateway a board's update.
  absl::StatusOr<std::optional<int>> Claim(
      const std::string& id,
      const std::shared_ptr<const runtime::NamedTensors>& base) override;
  runtime::NamedTensors Prepare(runtime::NamedTensors whole,
                                const runtime::NamedTensors& base,
                                const runtime::NamedTensors& current,
                                std::optional<int> staleness) const override {
    return whole;
  }
  Settled Settle(const std::string& id, std::optional<int> staleness,
                 std::optional<runtime::NamedTensors> added,
                 uint64_t samples) override {
    return plain_->Settle(id, staleness, std::move(added), samples);
  }
  Renamed Rename(const std::string& id, const std::string& new_id) override;
  bool Release(const std::string& id,
               const v1::UpdateHeader* refused) override {
    return plain_->Release(id, refused);
  }
  BoardPart PartOf(const std::string& id) const override {
    return plain_->PartOf(id);
  }
  bool Closes(CloseDecision& decision) override;
  void Close(RoundReport& report) override;
  std::optional<AsyncState> State() const override { return std::nullopt; }
  void Restore(const std::optional<AsyncState>& state) override {
    plain_->Restore(state);
  }

 private:
  // The open round's session, from its cohort; the reason when none can run.
  absl::Status StartSession(const std::vector<std::string>& members);
  // Closes the stage in progress when every board still in sent its
  // message or its deadline passed; runs Finish after the last.
  void Advance();
  absl::Status CloseStage(secagg::Stage stage);
  absl::Status Finish();
  const secagg::KeyVerifier& Verifier() const {
    if (options_.signed_keys) return certified_;
    return unsigned_;
  }
  absl::StatusOr<v1::SecAggResponse> Accept(
      uint32_t board, const v1::SecAggRequest& request,
      const std::string& peer_certificate);
  absl::Status AcceptKeys(uint32_t board, const v1::SecAggKeys& keys,
                          const std::string& peer_certificate);
  v1::SecAggResponse Await(uint32_t board, uint32_t stage) const;
  void GiveUp(const absl::Status& why);
  // Answers the cohort's parked waits (the session moved on).
  void WakeCohort();

  RoundContext ctx_;
  SecAggOptions options_;
  std::unique_ptr<SyncRounds> plain_;
  // The boards' key signatures: checked against the certificates of their
  // calls (signed_keys), or only empty ones taken. Before session_, which
  // borrows them.
  security::CertificateKeyVerifier certified_;
  secagg::UnsignedKeys unsigned_;

  // The open round's session; empty between rounds or when it gave up.
  std::optional<secagg::ServerSession> session_;
  std::optional<secagg::UpdateWords> words_;
  std::shared_ptr<const runtime::NamedTensors> base_;
  RoundAggregator* sum_ = nullptr;
  std::map<std::string, uint32_t> board_of_;  // client id -> board number
  uint64_t weight_cap_ = 0;
  absl::Time stage_began_;
  absl::Time opened_;
  bool started_ = false;  // the open round's session began
  // What each board gets for stages 1, 2 and 3 once the one before closed.
  std::map<uint32_t, std::vector<secagg::KeyAdvertisement>> keys_for_;
  std::map<uint32_t, std::vector<secagg::ShareCiphertext>> boxes_for_;
  std::map<uint32_t, secagg::UnmaskRequest> requests_for_;
  // Messages accepted in the stage in progress (the session counts its
  // survivors only when a stage closes).
  int accepted_ = 0;
  // Boards whose keys were refused (PermissionDenied): out of the session.
  std::set<uint32_t> refused_;
  // Boards whose keys the session took.
  std::set<uint32_t> advertised_;
  bool finished_ = false;
  // Why the open round's session gave up; kept until the next round opens
  // (the close's log line reads it).
  std::string given_up_;
  SecAggFigures figures_;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_SECAGG_ROUNDS_H_
