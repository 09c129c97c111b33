#include "server/round/round_publisher.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "checkpoint/kill_point.h"
#include "runtime/tensor_codec.h"

namespace fedberry::server {
namespace {

// An evaluation a model can be published (or reported) on.
bool IsFinite(const runtime::EvalResult& eval) {
  return std::isfinite(eval.mean_loss) && std::isfinite(eval.accuracy);
}

// The aggregate of `sum`, or null with `report.refused_result` set.
std::shared_ptr<const runtime::NamedTensors> Aggregate(RoundAggregator& sum,
                                                       RoundReport& report,
                                                       Clock& clock) {
  const absl::Time start = clock.Now();
  absl::StatusOr<runtime::NamedTensors> averaged = sum.Result();
  report.aggregation_seconds = absl::ToDoubleSeconds(clock.Now() - start);
  if (!averaged.ok()) {
    report.refused_result =
        absl::StrCat("aggregation failed: ", averaged.status().message());
    return nullptr;
  }
  if (absl::Status finite = runtime::CheckFinite(*averaged); !finite.ok()) {
    report.refused_result =
        absl::StrCat("the aggregate is not finite: ", finite.message());
    return nullptr;
  }
  return std::make_shared<const runtime::NamedTensors>(*std::move(averaged));
}

}  // namespace

RoundResult MakeRoundResult(RoundAggregator& sum, const Evaluator& evaluator,
                            bool overlap, RoundReport& report, Clock& clock) {
  RoundResult result;
  result.model = Aggregate(sum, report, clock);
  if (result.model && evaluator) {
    // Overlapped: only a probe now, the whole evaluation once the next
    // round has opened.
    const absl::Time start = clock.Now();
    auto eval = evaluator(*result.model, overlap ? kEvaluationProbeSamples : 0);
    // An overlapped evaluation replaces the probe's time with its own.
    report.eval_seconds = absl::ToDoubleSeconds(clock.Now() - start);
    if (!eval.ok()) {
      spdlog::error("round {}: evaluation failed: {}", report.round,
                    eval.status().ToString());
      overlap = false;
    } else if (!IsFinite(*eval)) {
      report.refused_result = absl::StrCat(
          "its evaluation is not finite (loss ", eval->mean_loss,
          overlap ? absl::StrCat(" on the first ", eval->samples, " samples")
                  : "",
          ")");
      result.model.reset();
    } else if (!overlap) {
      report.eval = *eval;
    }
  }
  result.overlap = overlap && evaluator && result.model != nullptr;
  if (!report.refused_result.empty()) {
    // Never publish a model that cannot train: boards would all go NaN.
    spdlog::error(
        "round {}: refused the round's result, {}; the global model stays "
        "as it was",
        report.round, report.refused_result);
  }
  return result;
}

RoundPublisher::RoundPublisher(Evaluator evaluator, ReportSink sink,
                               RecordEvaluation record, Clock& clock)
    : evaluator_(std::move(evaluator)),
      sink_(std::move(sink)),
      record_(std::move(record)),
      clock_(clock) {}

RoundPublisher::~RoundPublisher() { FinishPending(); }

void RoundPublisher::SetSnapshotSink(SnapshotSink sink) {
  absl::MutexLock lock(&persist_mu_);
  snapshot_sink_ = std::move(sink);
}

void RoundPublisher::Persist(const FederationSnapshot& snapshot) {
  absl::MutexLock lock(&persist_mu_);
  if (!snapshot_sink_ || snapshot.sequence < persisted_sequence_) return;
  snapshot_sink_(snapshot);
  persisted_sequence_ = snapshot.sequence;
}

void RoundPublisher::FinishPending() {
  if (pending_.joinable()) pending_.join();
}

void RoundPublisher::Publish(RoundReport report,
                             const FederationSnapshot& snapshot,
                             const RoundResult& result, bool last) {
  // The snapshot is durable before the round is reported: a crash between
  // the two loses no round.
  Persist(snapshot);
  if (!result.overlap) {
    if (sink_) sink_(report);
    return;
  }
  if (last) {  // nothing follows to overlap with
    EvaluateAndReport(std::move(report), result.model);
    return;
  }
  if (!overlap_logged_) {
    spdlog::info(
        "round {}: its model is evaluated while round {} trains "
        "(--overlap_evaluation); each round's report follows its evaluation",
        report.round, report.round + 1);
    overlap_logged_ = true;
  }
  FinishPending();
  pending_ = std::thread(
      [this, report = std::move(report), model = result.model]() mutable {
        EvaluateAndReport(std::move(report), std::move(model));
      });
}

void RoundPublisher::EvaluateAndReport(
    RoundReport report, std::shared_ptr<const runtime::NamedTensors> model) {
  const absl::Time start = clock_.Now();
  auto eval = evaluator_(*model, 0);
  report.eval_seconds = absl::ToDoubleSeconds(clock_.Now() - start);
  report.eval_overlapped = true;
  if (!eval.ok()) {
    spdlog::error("round {}: evaluation failed: {}", report.round,
                  eval.status().ToString());
  } else {
    if (!IsFinite(*eval)) {
      // Its probe was finite, so the next round already trains from it.
      spdlog::error(
          "round {}: its model's evaluation is not finite (loss {}) on the "
          "whole evaluation set, though finite on its first {} samples; "
          "round {} already trains from it",
          report.round, eval->mean_loss, kEvaluationProbeSamples,
          report.round + 1);
    }
    report.eval = *eval;
  }
  // Kill tests: the next round is open, this one not yet reported.
  checkpoint::KillPoint("round.overlapped_evaluation");
  const FederationSnapshot snapshot = record_(report);
  // As in Publish: durable (now with the round's figures) before the round
  // is reported.
  Persist(snapshot);
  if (sink_) sink_(report);
}

}  // namespace fedberry::server
