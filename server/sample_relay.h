// The open round's data moves (the opt-in mode for trusted clusters): which
// client hands how many samples to which, and the moved samples themselves,
// held in memory until the round closes. Senders deposit a move's samples
// once; its receiver takes them, waiting for the sender if need be. Moves
// are keyed by client name, so a board that restarts and joins again keeps
// its moves.
// Thread-safety: thread-safe.
#ifndef FEDBERRY_SERVER_SAMPLE_RELAY_H_
#define FEDBERRY_SERVER_SAMPLE_RELAY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "fedberry/v1/federation.pb.h"
#include "runtime/image_dataset.h"

namespace fedberry::server {

struct PlannedMove {
  std::string id;
  std::string from;  // client names
  std::string to;
  uint64_t samples = 0;
};

class SampleRelay {
 public:
  // Take's deadlines are on `clock`.
  explicit SampleRelay(Clock& clock = Clock::Real()) : clock_(clock) {}

  // Starts a round's moves; drops whatever an earlier round left.
  void Open(uint64_t round, std::vector<PlannedMove> moves);
  // Drops every move and sample (the round closed); waiting takers return.
  void Close();

  std::vector<PlannedMove> MovesFrom(const std::string& name) const;
  std::vector<PlannedMove> MovesTo(const std::string& name) const;
  // Puts the moves `name` sends and receives into its TRAIN `task`.
  void AddMovesTo(const std::string& name, v1::GetTaskResponse& task) const;
  // The move `move_id` of the open round if `sender` may deposit its
  // samples now (checked before a push is read). NotFound (no such move in
  // the open round), PermissionDenied (`sender` is not the move's sender),
  // FailedPrecondition (the sender kept them), AlreadyExists (the move's
  // samples are here already: a retried push).
  absl::StatusOr<PlannedMove> MoveToDeposit(const std::string& sender,
                                            const std::string& move_id);

  // Stores a move's samples. Codes as MoveToDeposit, plus InvalidArgument
  // (not the planned number of samples).
  absl::Status Deposit(const std::string& sender, const std::string& move_id,
                       runtime::ImageDataset samples);

  // A move's samples for its receiver, waiting until `deadline` for the
  // sender. NotFound, PermissionDenied (`receiver` is not the move's
  // receiver), DeadlineExceeded (not sent in time), Aborted (the round
  // closed meanwhile), FailedPrecondition (the sender kept them).
  absl::StatusOr<std::shared_ptr<const runtime::ImageDataset>> Take(
      const std::string& receiver, const std::string& move_id,
      absl::Time deadline);

  // The sender trained a move's samples itself (handing them over failed):
  // its receiver stops waiting (FailedPrecondition) and the samples, if any
  // arrived, are dropped. Unknown moves and other senders' are ignored.
  void Cancel(const std::string& sender, const std::string& move_id);

  // Moves `sender` must send whose samples are not here (yet, or any more:
  // a restarted server starts empty).
  std::vector<PlannedMove> Undelivered(const std::string& sender) const;
  // Whether `sender`'s update may count: it cancels the moves the sender
  // `kept` (trained itself), then FailedPrecondition with reason
  // wire::kReasonSamplesMissing naming the first move whose samples are not
  // here, which the sender must hand over again (after a server restart
  // its receivers wait for them).
  absl::Status CheckLent(const std::string& sender,
                         const std::vector<std::string>& kept);
  // Samples moved to `receiver` in the open round.
  uint64_t SamplesTo(const std::string& receiver) const;

  // Bytes of samples held now.
  uint64_t held_bytes() const;

 private:
  struct Slot {
    PlannedMove move;
    std::shared_ptr<const runtime::ImageDataset> samples;  // null: not yet
    bool cancelled = false;  // the sender kept them
  };

  // Slot `move_id` of the open round; NotFound otherwise.
  absl::StatusOr<Slot*> SlotLocked(const std::string& move_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Slot `move_id` if `sender` may deposit into it (MoveToDeposit's codes).
  absl::StatusOr<Slot*> DepositSlotLocked(const std::string& sender,
                                          const std::string& move_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The planned moves of the slots `keep` selects.
  template <typename Keep>
  std::vector<PlannedMove> Select(Keep keep) const;

  Clock& clock_;
  mutable absl::Mutex mu_;
  // Bumped by every change a waiting Take may be waiting for.
  uint64_t changes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;  // bumped by Open and Close
  uint64_t round_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, Slot> slots_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_SAMPLE_RELAY_H_
