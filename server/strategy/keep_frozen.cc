#include "server/strategy/keep_frozen.h"

#include <utility>

#include "server/strategy/strategy_decorator.h"

namespace fedberry::server {
namespace {

class KeepFrozenRound : public RoundDecorator {
 public:
  KeepFrozenRound(std::unique_ptr<RoundAggregator> rule,
                  std::shared_ptr<const runtime::NamedTensors> global,
                  runtime::TrainableSet trainable)
      : RoundDecorator(std::move(rule)),
        global_(std::move(global)),
        trainable_(std::move(trainable)) {}

  absl::StatusOr<runtime::NamedTensors> Result() override {
    absl::StatusOr<runtime::NamedTensors> next = RoundDecorator::Result();
    if (next.ok()) trainable_.KeepFrozen(*global_, &*next);
    return next;
  }

 private:
  std::shared_ptr<const runtime::NamedTensors> global_;
  const runtime::TrainableSet trainable_;
};

class KeepFrozenStrategy : public StrategyDecorator {
 public:
  KeepFrozenStrategy(std::unique_ptr<Strategy> rule,
                     runtime::TrainableSet trainable)
      : StrategyDecorator(std::move(rule)), trainable_(std::move(trainable)) {}

  absl::StatusOr<std::unique_ptr<RoundAggregator>> BeginRound(
      std::shared_ptr<const runtime::NamedTensors> global) override {
    absl::StatusOr<std::unique_ptr<RoundAggregator>> round =
        rule().BeginRound(global);
    if (!round.ok()) return round.status();
    return std::make_unique<KeepFrozenRound>(*std::move(round),
                                             std::move(global), trainable_);
  }

 private:
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
