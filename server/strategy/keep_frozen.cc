#include "server/strategy/keep_frozen.h"

#include <utility>

namespace fedberry::server {
namespace {

class KeepFrozenRound : public RoundAggregator {
 public:
  KeepFrozenRound(std::unique_ptr<RoundAggregator> rule,
                  std::shared_ptr<const runtime::NamedTensors> global,
                  runtime::TrainableSet trainable)
      : rule_(std::move(rule)),
        global_(std::move(global)),
        trainable_(std::move(trainable)) {}

  absl::Status Add(const runtime::NamedTensors& update,
                   double weight) override {
    return rule_->Add(update, weight);
  }
  int updates() const override { return rule_->updates(); }
  void Expect(double updates) override { rule_->Expect(updates); }
  absl::StatusOr<runtime::NamedTensors> Result() override {
    absl::StatusOr<runtime::NamedTensors> next = rule_->Result();
    if (next.ok()) trainable_.KeepFrozen(*global_, &*next);
    return next;
  }
  RoundAggregator& rule() { return *rule_; }

 private:
  std::unique_ptr<RoundAggregator> rule_;
  std::shared_ptr<const runtime::NamedTensors> global_;
  const runtime::TrainableSet trainable_;
};

class KeepFrozenStrategy : public Strategy {
 public:
  KeepFrozenStrategy(std::unique_ptr<Strategy> rule,
                     runtime::TrainableSet trainable)
      : rule_(std::move(rule)), trainable_(std::move(trainable)) {}

  const std::string& name() const override { return rule_->name(); }
  absl::StatusOr<std::unique_ptr<RoundAggregator>> BeginRound(
      std::shared_ptr<const runtime::NamedTensors> global) override {
    absl::StatusOr<std::unique_ptr<RoundAggregator>> round =
        rule_->BeginRound(global);
    if (!round.ok()) return round.status();
    return std::make_unique<KeepFrozenRound>(*std::move(round),
                                             std::move(global), trainable_);
  }
  void Commit(RoundAggregator& round) override {
    rule_->Commit(static_cast<KeepFrozenRound&>(round).rule());
  }
  runtime::NamedTensors State() const override { return rule_->State(); }
  absl::Status Restore(const runtime::NamedTensors& state) override {
    return rule_->Restore(state);
  }
  int MinUpdates() const override { return rule_->MinUpdates(); }

 private:
  std::unique_ptr<Strategy> rule_;
  const runtime::TrainableSet trainable_;
};

}  // namespace

std::unique_ptr<Strategy> KeepFrozen(std::unique_ptr<Strategy> strategy,
                                     runtime::TrainableSet trainable) {
  if (trainable.whole()) return strategy;
  return std::make_unique<KeepFrozenStrategy>(std::move(strategy),
                                              std::move(trainable));
}

}  // namespace fedberry::server
