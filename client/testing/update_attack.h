// A test-only poisoned update, for measuring robust aggregation against
// misbehaving boards (fedberry-emulated-client --attack, fedberry-sim
// --attackers): the board trains honestly, then sends
// global + factor * (trained - global) instead of its trained model.
// `scale:F` multiplies the update by F, `signflip` reverses it (factor -1)
// and `signflip:F` reverses and scales it. Linked by the simulator's client
// and the tests only, never by fedberry-client.
// Thread-safety: UpdateAttack and the functions are plain values and pure;
// AttackingTrainer is as the trainer it wraps.
#ifndef FEDBERRY_CLIENT_TESTING_UPDATE_ATTACK_H_
#define FEDBERRY_CLIENT_TESTING_UPDATE_ATTACK_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "client/local_trainer.h"
#include "runtime/model.h"

namespace fedberry::client {

struct UpdateAttack {
  double factor = 1;
  std::string spec;  // as given, for the log
};

// "" -> no attack; otherwise `scale:F` or `signflip[:F]` with a finite,
// non-zero F; anything else is InvalidArgument naming the spec.
absl::StatusOr<std::optional<UpdateAttack>> ParseUpdateAttack(
    absl::string_view spec);

// `model` (trained from `global`, same layout) turned into the attack's
// update: each floating tensor becomes global + factor * (model - global) in
// new storage (the trainer's parameters are not touched); other tensors are
// kept. InvalidArgument when the layouts differ.
absl::Status ApplyUpdateAttack(const UpdateAttack& attack,
                               const runtime::NamedTensors& global,
                               runtime::NamedTensors* model);

// The tensors of `global` named as those of `like`, in `like`'s order (what
// an update of a plan that freezes some tensors carries). InvalidArgument
// naming a tensor `global` lacks.
absl::StatusOr<runtime::NamedTensors> SelectLike(
    const runtime::NamedTensors& global, const runtime::NamedTensors& like);

// Wraps a board's trainer so that every update it sends is poisoned: the
// trained model as ApplyUpdateAttack says, and, when the plan encodes
// updates, the encoding made again from the poisoned model (EncodeUpdate).
// Top-k's leftovers are then the poisoned ones, carried in memory from round
// to round (and from a task's first run to its retry) as the inner trainer
// carries its own; they are not checkpointed, so after a restart the first
// top-k update starts without them.
// Evaluation is honest: the attack is on what reaches the aggregate.
class AttackingTrainer : public LocalTrainerWrapper {
 public:
  // `inner` must outlive this object.
  AttackingTrainer(LocalTrainer& inner, UpdateAttack attack)
      : LocalTrainerWrapper(inner), attack_(std::move(attack)) {}

  absl::Status UsePlan(const v1::TrainingPlan& plan,
                       const runtime::VerifiedModelFile* model_file) override;
  // The inner trainer's outcome, poisoned; its errors as they are.
  absl::StatusOr<TrainOutcome> Train(const TaskRef& task,
                                     const v1::TrainConfig& config,
                                     const runtime::NamedTensors& global,
                                     const std::atomic<bool>& stop) override;

 private:
  UpdateAttack attack_;
  std::optional<v1::TrainingPlan> plan_;  // UsePlan's; none: built-in, RAW
  // Top-k leftovers of the poisoned updates (see the class comment).
  runtime::NamedTensors residual_;
  std::string residual_task_;
  runtime::NamedTensors residual_task_in_;
};

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_TESTING_UPDATE_ATTACK_H_
