// A strategy that wraps the job's rule and changes part of what it does
// (KeepFrozen, differential privacy's Gaussian sum): everything not
// overridden goes to the wrapped rule, and a round's commit reaches the
// wrapped rule's round. Thread-safety: as the wrapped strategy's.
#ifndef FEDBERRY_SERVER_STRATEGY_STRATEGY_DECORATOR_H_
#define FEDBERRY_SERVER_STRATEGY_STRATEGY_DECORATOR_H_

#include <memory>
#include <string>
#include <utility>

#include "server/strategy/strategy.h"

namespace fedberry::server {

// A round of a StrategyDecorator: forwards to the wrapped rule's round.
class RoundDecorator : public RoundAggregator {
 public:
  explicit RoundDecorator(std::unique_ptr<RoundAggregator> rule)
      : rule_(std::move(rule)) {}
  absl::Status Add(const runtime::NamedTensors& update,
                   double weight) override {
    return rule_->Add(update, weight);
  }
  absl::Status AddSum(const runtime::NamedTensors& sum, int updates,
                      int clipped) override {
    return rule_->AddSum(sum, updates, clipped);
  }
  int updates() const override { return rule_->updates(); }
  void Expect(double updates) override { rule_->Expect(updates); }
  absl::StatusOr<runtime::NamedTensors> Result() override {
    return rule_->Result();
  }
  RoundAggregator& rule() { return *rule_; }

 private:
  std::unique_ptr<RoundAggregator> rule_;
};

// Rounds from BeginRound must be RoundDecorators (Commit unwraps them).
class StrategyDecorator : public Strategy {
 public:
  explicit StrategyDecorator(std::unique_ptr<Strategy> rule)
      : rule_(std::move(rule)) {}
  const std::string& name() const override { return rule_->name(); }
  void Commit(RoundAggregator& round) override {
    rule_->Commit(static_cast<RoundDecorator&>(round).rule());
  }
  runtime::NamedTensors State() const override { return rule_->State(); }
  absl::Status Restore(const runtime::NamedTensors& state) override {
    return rule_->Restore(state);
  }
  int MinUpdates() const override { return rule_->MinUpdates(); }

 protected:
  Strategy& rule() { return *rule_; }

 private:
  std::unique_ptr<Strategy> rule_;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_STRATEGY_STRATEGY_DECORATOR_H_
