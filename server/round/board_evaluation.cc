#include "server/round/board_evaluation.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/log_text.h"

namespace fedberry::server {
namespace {

// What a board can report of a model over its held-out samples: losses,
// RMSE and MAE beyond this are no figure of a model but a lie (a loss of
// -1e300 or 1e300 moved the job's published figure).
constexpr double kMaxEvalFigure = 1e12;

// `v` in the fewest digits that read back as the same double: a figure
// just over a bound must not print as the bound ("1.0000001", not "1").
std::string Exact(double v) {
  for (int digits = 6; digits < 17; ++digits) {
    std::string text = absl::StrFormat("%.*g", digits, v);
    if (std::strtod(text.c_str(), nullptr) == v) return text;
  }
  return absl::StrFormat("%.17g", v);
}

absl::Status CheckMetrics(const v1::EvalMetrics& m, const char* which,
                          uint64_t max_samples, bool own_loss) {
  if (m.samples() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("the ", which, " figures cover no samples"));
  }
  if (m.samples() > max_samples) {
    return absl::InvalidArgumentError(
        absl::StrCat("the ", which, " figures claim ", m.samples(),
                     " held-out samples; the board's declaration (capped by "
                     "--max_samples_ratio) allows at most ",
                     max_samples));
  }
  if (!std::isfinite(m.loss())) {
    return absl::InvalidArgumentError(
        absl::StrCat("the ", which, " loss is not finite (", m.loss(), ")"));
  }
  // Every built-in loss is a mean of non-negative terms; a model's own loss
  // may be negative (a log-likelihood), not absurd.
  const double lowest = own_loss ? -kMaxEvalFigure : 0;
  if (m.loss() < lowest || m.loss() > kMaxEvalFigure) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the %s loss %s is out of range: a loss over held-out samples is "
        "in [%g, %g]%s",
        which, Exact(m.loss()), lowest, kMaxEvalFigure,
        own_loss ? "" : " (the job's loss is never negative)"));
  }
  if (!(m.accuracy() >= 0 && m.accuracy() <= 1)) {
    const double a = m.accuracy();
    return absl::InvalidArgumentError(absl::StrFormat(
        "the %s accuracy %s is not in [0, 1]%s", which, Exact(a),
        a > 1 ? ": it is above 1, more samples right than were evaluated"
              : ""));
  }
  for (const auto& [name, value] :
       {std::pair{"RMSE", m.rmse()}, std::pair{"MAE", m.mae()}}) {
    if (!(value >= 0 && std::isfinite(value))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the ", which, " ", name, " ", value, " is not a finite value >= 0"));
    }
    if (value > kMaxEvalFigure) {
      return absl::InvalidArgumentError(
          absl::StrFormat("the %s %s %s is out of range: at most %g", which,
                          name, Exact(value), kMaxEvalFigure));
    }
  }
  return absl::OkStatus();
}

runtime::EvalResult ToEvalResult(const v1::EvalMetrics& m, bool regression) {
  runtime::EvalResult r;
  r.samples = static_cast<int64_t>(m.samples());
  r.mean_loss = m.loss();
  r.accuracy = m.accuracy();
  r.rmse = m.rmse();
  r.mae = m.mae();
  r.regression = regression;
  return r;
}

// Sample-weighted means of `results` (none: all zero).
runtime::EvalResult Combine(const std::vector<runtime::EvalResult>& results,
                            bool regression) {
  runtime::EvalResult sum;
  sum.regression = regression;
  for (const runtime::EvalResult& r : results) {
    const double w = static_cast<double>(r.samples);
    sum.samples += r.samples;
    sum.mean_loss += w * r.mean_loss;
    sum.accuracy += w * r.accuracy;
    // RMSE combines as the root of the weighted mean square.
    sum.rmse += w * r.rmse * r.rmse;
    sum.mae += w * r.mae;
  }
  if (sum.samples == 0) return sum;
  const double n = static_cast<double>(sum.samples);
  sum.mean_loss /= n;
  sum.accuracy /= n;
  sum.rmse = std::sqrt(sum.rmse / n);
  sum.mae /= n;
  return sum;
}

}  // namespace

bool EvaluatesOnBoards(const BoardEvalOptions& options, uint64_t round,
                       bool last) {
  if (options.holdout_fraction <= 0) return false;
  return last || round % static_cast<uint64_t>(std::max(1, options.every)) == 0;
}

uint64_t MaxHeldOutSamples(uint64_t declared_samples, double fraction) {
  if (!(fraction > 0 && fraction < 1)) return 0;
  // held = round(f * (held + train)), so held <= f / (1 - f) * train + 1;
  // one more for the floor of one held-out sample on tiny boards.
  return static_cast<uint64_t>(std::ceil(static_cast<double>(declared_samples) *
                                         fraction / (1 - fraction))) +
         2;
}

absl::Status CheckEvaluationReport(const v1::EvaluationReport& report,
                                   uint64_t declared_samples,
                                   const BoardEvalOptions& options) {
  if (!report.declined().empty()) return absl::OkStatus();
  if (!report.has_global()) {
    return absl::InvalidArgumentError(
        "the evaluation report has neither figures nor a reason to decline");
  }
  const uint64_t max_samples =
      MaxHeldOutSamples(declared_samples, options.holdout_fraction);
  if (absl::Status s = CheckMetrics(report.global(), "model's", max_samples,
                                    options.own_loss);
      !s.ok()) {
    return s;
  }
  if (!report.has_personalized()) return absl::OkStatus();
  if (options.personalize_steps == 0) {
    return absl::InvalidArgumentError(
        "the report has personalised figures, but the job asks for none");
  }
  if (report.personalized().samples() != report.global().samples()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the personalised figures cover ", report.personalized().samples(),
        " samples, the model's ", report.global().samples(),
        ": both must be the same held-out samples"));
  }
  return CheckMetrics(report.personalized(), "personalised", max_samples,
                      options.own_loss);
}

std::string DescribeBoardEvaluation(const BoardEvalSummary& summary) {
  const runtime::EvalResult& c = summary.combined;
  const char* metric = c.regression ? "RMSE" : "accuracy";
  std::string line = absl::StrFormat(
      "the boards' evaluation: %s %.4f (loss %.4g) over %d samples of %d of "
      "%d boards asked",
      metric, c.regression ? c.rmse : c.accuracy, c.mean_loss, c.samples,
      summary.boards, summary.asked);
  if (summary.declined > 0) {
    absl::StrAppend(&line, " (", summary.declined, " declined)");
  }
  if (summary.boards > 0) {
    absl::StrAppendFormat(&line, "; per board min %.4f, median %.4f, max %.4f",
                          summary.min, summary.median, summary.max);
  }
  if (summary.personalized) {
    const runtime::EvalResult& p = *summary.personalized;
    absl::StrAppendFormat(&line, "; personalised %s %.4f", metric,
                          p.regression ? p.rmse : p.accuracy);
  }
  return line;
}

BoardEvaluation::BoardEvaluation(
    uint64_t round, std::string task_id,
    std::shared_ptr<const runtime::NamedTensors> model,
    std::set<std::string> asked, absl::Time opened)
    : round_(round),
      task_id_(std::move(task_id)),
      model_(std::move(model)),
      asked_(std::move(asked)),
      opened_(opened) {}

bool BoardEvaluation::Awaits(const std::string& client_id) const {
  return asked_.count(client_id) && !declined_.count(client_id) &&
         !figures_.count(client_id);
}

absl::Status BoardEvaluation::Accept(const std::string& client_id,
                                     const std::string& client_name,
                                     uint64_t declared_samples,
                                     const v1::EvaluationReport& report,
                                     const BoardEvalOptions& options) {
  if (report.round() != round_ || !asked_.count(client_id)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "board ", client_name, " was not asked to evaluate round ",
        report.round(), " (the server evaluates round ", round_, ")"));
  }
  if (report.task_id() != task_id_) {
    return absl::InvalidArgumentError(
        absl::StrCat("task id '", base::Printable(report.task_id()),
                     "' is not round ", round_, "'s evaluation task"));
  }
  if (!Awaits(client_id)) {
    return absl::AlreadyExistsError(absl::StrCat("board ", client_name,
                                                 " already answered round ",
                                                 round_, "'s evaluation"));
  }
  if (absl::Status s = CheckEvaluationReport(report, declared_samples, options);
      !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("board ", client_name, "'s evaluation of round ", round_,
                     " is refused: ", s.message()));
  }
  ++answered_;
  if (!report.declined().empty()) {
    declined_.insert(client_id);
    return absl::OkStatus();
  }
  BoardEvalEntry entry;
  entry.client_name = client_name;
  entry.global = ToEvalResult(report.global(), options.regression);
  if (report.has_personalized()) {
    entry.personalized =
        ToEvalResult(report.personalized(), options.regression);
  }
  figures_[client_id] = std::move(entry);
  return absl::OkStatus();
}

void BoardEvaluation::Rename(const std::string& old_id, const std::string& id) {
  if (asked_.erase(old_id) == 0) return;
  asked_.insert(id);
  if (declined_.erase(old_id) > 0) declined_.insert(id);
  if (auto it = figures_.find(old_id); it != figures_.end()) {
    figures_[id] = std::move(it->second);
    figures_.erase(it);
  }
}

BoardEvalSummary BoardEvaluation::Summarize(absl::Time now,
                                            bool regression) const {
  BoardEvalSummary summary;
  summary.asked = static_cast<int>(asked_.size());
  summary.boards = static_cast<int>(figures_.size());
  summary.declined = static_cast<int>(declined_.size());
  summary.seconds = absl::ToDoubleSeconds(now - opened_);
  std::vector<runtime::EvalResult> global, personalized;
  std::vector<double> spread;
  for (const auto& [id, entry] : figures_) {
    global.push_back(entry.global);
    spread.push_back(regression ? entry.global.rmse : entry.global.accuracy);
    if (entry.personalized) personalized.push_back(*entry.personalized);
    summary.per_board.push_back(entry);
  }
  summary.combined = Combine(global, regression);
  if (!personalized.empty()) {
    summary.personalized = Combine(personalized, regression);
  }
  if (!spread.empty()) {
    std::sort(spread.begin(), spread.end());
    const size_t n = spread.size();
    summary.min = spread.front();
    summary.max = spread.back();
    summary.median =
        n % 2 == 1 ? spread[n / 2] : (spread[n / 2 - 1] + spread[n / 2]) / 2;
  }
  return summary;
}

}  // namespace fedberry::server
