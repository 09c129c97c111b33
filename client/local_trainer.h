// What the client agent asks of the board's training: take the global model,
// train it per the round's config, and report how many samples it trained on.
// The agent knows nothing of data sets or LibTorch optimisers.
// Thread-safety: Train is called from the agent's thread only.
#ifndef FEDBERRY_CLIENT_LOCAL_TRAINER_H_
#define FEDBERRY_CLIENT_LOCAL_TRAINER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fedberry/v1/federation.pb.h"
#include "runtime/image_dataset.h"
#include "runtime/model.h"
#include "runtime/model_file.h"
#include "runtime/update_encoding.h"

namespace fedberry::client {

// A round's data moves, as carried out (the opt-in mode for trusted
// clusters): the board trains on its own samples less the first `lent` of
// those SamplesToLend gives for the task, plus the samples it received.
struct RoundData {
  uint64_t lent = 0;
  std::vector<runtime::ImageDataset> borrowed;
  std::vector<std::string> kept;  // moves not handed over: trained here
};

// The round task a training run belongs to.
struct TaskRef {
  uint64_t round = 0;
  std::string task_id;
  const RoundData* data = nullptr;  // null: no data moves this round
  uint32_t total_rounds = 0;        // the job's, as the server said
  // Called after each optimizer step with the steps done and planned (may
  // be empty). Keep it cheap: it runs on the training thread.
  std::function<void(int64_t steps_done, int64_t steps_planned)> progress =
      nullptr;
};

struct TrainOutcome {
  runtime::NamedTensors model;  // the locally trained model
  uint64_t num_samples = 0;     // the FedAvg weight
  v1::TrainMetrics metrics;
  // The update as the plan asks it sent (update_encoding); empty: send
  // `model` RAW.
  std::vector<runtime::EncodedTensor> encoded;
};

// A model's figures on a board's held-out samples.
struct BoardEvalOutcome {
  v1::EvalMetrics global;
  std::optional<v1::EvalMetrics> personalized;
  double seconds = 0;
};

class LocalTrainer {
 public:
  virtual ~LocalTrainer() = default;
  // Binds this board's data and model to the job's plan, before joining;
  // `model_file` is the plan's model file (null for built-in models). An
  // error says why the board cannot take part (data that does not fit, a
  // model that does not load).
  virtual absl::Status UsePlan(const v1::TrainingPlan& plan,
                               const runtime::VerifiedModelFile* model_file) {
    return absl::OkStatus();
  }
  // Samples this board holds (sent at join). When it changes (a site
  // gateway whose boards came or went), the agent joins again before its
  // next update, so the server weighs the update by what it declared.
  virtual uint64_t num_samples() const = 0;
  // A site gateway (tiers): the boards it speaks for; 0: a board.
  virtual uint32_t boards() const { return 0; }
  // One sample's size on the wire, for planning data moves (0: this
  // trainer cannot move data).
  virtual uint64_t sample_bytes() const { return 0; }
  // The samples this board hands over for `task` if it lends `count`, in
  // lending order (lending fewer hands over a prefix of them). The same
  // task and config always give the same samples.
  virtual absl::StatusOr<runtime::ImageDataset> SamplesToLend(
      const TaskRef& task, const v1::TrainConfig& config, uint64_t count) {
    return absl::UnimplementedError("this trainer cannot hand over samples");
  }
  // Trains from `global` for `task`. Cancelled when `stop` becomes true;
  // InvalidArgument when the model or config does not fit this trainer.
  virtual absl::StatusOr<TrainOutcome> Train(
      const TaskRef& task, const v1::TrainConfig& config,
      const runtime::NamedTensors& global, const std::atomic<bool>& stop) = 0;
  // Evaluates `global` on the share of this board's data the plan holds
  // out (TrainingPlan.eval_holdout_fraction), and, when the plan asks for
  // personalisation, a copy trained from it on the board's own training
  // share. FailedPrecondition when this trainer holds nothing out;
  // Unavailable (with the reason) when the board declines, e.g. under
  // memory pressure.
  virtual absl::StatusOr<BoardEvalOutcome> Evaluate(
      const TaskRef& task, const v1::TrainConfig& config,
      const runtime::NamedTensors& global, const std::atomic<bool>& stop) {
    return absl::FailedPreconditionError(
        "this trainer cannot evaluate on held-out samples");
  }
  // The job ended; saved state for unfinished tasks is of no further use.
  virtual void JobDone() {}
};

// A LocalTrainer that hands every call to `inner`: a decorator overrides the
// calls it changes (as leveldb's EnvWrapper does for Env). `inner` must
// outlive it. Thread-safety: as `inner`.
class LocalTrainerWrapper : public LocalTrainer {
 public:
  explicit LocalTrainerWrapper(LocalTrainer& inner) : inner_(inner) {}

  absl::Status UsePlan(const v1::TrainingPlan& plan,
                       const runtime::VerifiedModelFile* model_file) override {
    return inner_.UsePlan(plan, model_file);
  }
  uint64_t num_samples() const override { return inner_.num_samples(); }
  uint32_t boards() const override { return inner_.boards(); }
  uint64_t sample_bytes() const override { return inner_.sample_bytes(); }
  absl::StatusOr<runtime::ImageDataset> SamplesToLend(
      const TaskRef& task, const v1::TrainConfig& config,
      uint64_t count) override {
    return inner_.SamplesToLend(task, config, count);
  }
  absl::StatusOr<TrainOutcome> Train(const TaskRef& task,
                                     const v1::TrainConfig& config,
                                     const runtime::NamedTensors& global,
                                     const std::atomic<bool>& stop) override {
    return inner_.Train(task, config, global, stop);
  }
  absl::StatusOr<BoardEvalOutcome> Evaluate(
      const TaskRef& task, const v1::TrainConfig& config,
      const runtime::NamedTensors& global,
      const std::atomic<bool>& stop) override {
    return inner_.Evaluate(task, config, global, stop);
  }
  void JobDone() override { inner_.JobDone(); }

 protected:
  LocalTrainer& inner() { return inner_; }

 private:
  LocalTrainer& inner_;
};

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_LOCAL_TRAINER_H_
