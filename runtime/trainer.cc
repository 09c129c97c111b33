#include "runtime/trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace fedberry::runtime {
namespace {

// One epoch's rows in shuffled order. 32-bit indices: half the memory of
// 64-bit ones, which counts for a CSV of tens of millions of rows on a
// board (the order of a permutation does not depend on the index type).
std::vector<uint32_t> EpochOrder(int64_t rows, uint64_t seed, int64_t epoch) {
  std::vector<uint32_t> order(static_cast<size_t>(rows));
  std::iota(order.begin(), order.end(), 0u);
  std::mt19937_64 rng(seed * 1000003u + static_cast<uint64_t>(epoch));
  // Fisher-Yates with a fixed algorithm: same order on every platform.
  for (size_t i = order.size(); i > 1; --i) {
    std::swap(order[i - 1], order[rng() % i]);
  }
  return order;
}

// The parameters that train, with requires_grad set on every parameter
// as `trainable` says (empty: all train). A frozen parameter that needs no
// gradient also spares autograd the backward pass through the layers
// before the first trainable one.
absl::StatusOr<std::vector<torch::Tensor>> TrainedParameters(
    const std::vector<torch::Tensor>& parameters,
    const std::vector<bool>& trainable) {
  if (trainable.empty()) return parameters;
  if (trainable.size() != parameters.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the trainable set names ", trainable.size(),
                     " parameters; the model has ", parameters.size()));
  }
  std::vector<torch::Tensor> trained;
  for (size_t i = 0; i < parameters.size(); ++i) {
    torch::Tensor p = parameters[i];
    p.set_requires_grad(trainable[i]);
    if (trainable[i]) {
      trained.push_back(p);
    } else if (p.grad().defined()) {
      p.mutable_grad() = torch::Tensor();
    }
  }
  return trained;
}

}  // namespace

std::vector<std::string> OptimizerNames() { return {"sgd", "adam", "adamw"}; }

absl::StatusOr<std::unique_ptr<torch::optim::Optimizer>> MakeOptimizer(
    const TrainOptions& options, std::vector<torch::Tensor> parameters) {
  if (!(options.learning_rate > 0) || !std::isfinite(options.learning_rate)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "learning rate ", options.learning_rate, " is not a positive number"));
  }
  if (!(options.weight_decay >= 0) || !std::isfinite(options.weight_decay) ||
      !(options.momentum >= 0) || !std::isfinite(options.momentum)) {
    return absl::InvalidArgumentError(
        absl::StrCat("momentum ", options.momentum, " and weight decay ",
                     options.weight_decay, " must be finite and >= 0"));
  }
  namespace optim = torch::optim;
  if (options.optimizer == "sgd") {
    return std::make_unique<optim::SGD>(
        std::move(parameters), optim::SGDOptions(options.learning_rate)
                                   .momentum(options.momentum)
                                   .weight_decay(options.weight_decay));
  }
  if (options.optimizer == "adam") {
    return std::make_unique<optim::Adam>(
        std::move(parameters), optim::AdamOptions(options.learning_rate)
                                   .weight_decay(options.weight_decay));
  }
  if (options.optimizer == "adamw") {
    return std::make_unique<optim::AdamW>(
        std::move(parameters), optim::AdamWOptions(options.learning_rate)
                                   .weight_decay(options.weight_decay));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown optimizer '", options.optimizer,
                   "' (known: ", absl::StrJoin(OptimizerNames(), ", "), ")"));
}

Batch ReadBatch(const Dataset& data, const int64_t* rows, int64_t n) {
  std::vector<int64_t> shape = {n};
  for (int64_t d : data.sample_shape()) shape.push_back(d);
  Batch batch{torch::empty(shape), torch::empty({n})};
  data.Read(rows, n, batch.inputs.data_ptr<float>(),
            batch.labels.data_ptr<float>());
  return batch;
}

absl::Status CheckModelOnData(Model& model, const Dataset& data,
                              const Objective& objective, int64_t n) {
  n = std::min(n, data.size());
  if (n == 0) return absl::InvalidArgumentError("the data set is empty");
  std::vector<int64_t> rows(n);
  std::iota(rows.begin(), rows.end(), 0);
  Batch batch = ReadBatch(data, rows.data(), n);
  torch::Tensor output;
  try {
    torch::NoGradGuard no_grad;
    model.SetTraining(false);
    output = model.Forward(batch.inputs);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("model ", model.name(), " does not accept input of shape ",
                     c10::str(batch.inputs.sizes()), " (", data.Describe(),
                     "): ", DescribeTorchError(e)));
  }
  return objective.Check(model, output, batch.labels, data.label_count());
}

namespace {

// Where a run of `rows` rows starts: at step 0 of the steps `options` plan,
// or where `hooks.resume` says. InvalidArgument for options or a resume
// point that do not fit.
absl::StatusOr<TrainCursor> PlanCursor(int64_t rows, int64_t batches_per_epoch,
                                       const TrainOptions& options,
                                       const TrainHooks& hooks) {
  if (rows == 0) {
    return absl::InvalidArgumentError("training data set is empty");
  }
  if (rows > int64_t{std::numeric_limits<uint32_t>::max()}) {
    return absl::InvalidArgumentError(absl::StrCat(
        "training data set has ", rows, " rows; at most 2^32 - 1 train"));
  }
  if (options.batch_size <= 0 ||
      (options.local_steps <= 0 && options.local_epochs <= 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid training options: batch_size=", options.batch_size,
        " local_epochs=", options.local_epochs,
        " local_steps=", options.local_steps));
  }
  TrainCursor cursor;
  cursor.planned = options.local_steps > 0
                       ? options.local_steps
                       : batches_per_epoch * options.local_epochs;
  if (hooks.resume != nullptr) {
    if (hooks.resume->planned != cursor.planned ||
        hooks.resume->step > cursor.planned || hooks.resume->step < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot resume at step ", hooks.resume->step, " of ",
                       hooks.resume->planned, ": this run plans ",
                       cursor.planned, " steps"));
    }
    cursor = *hooks.resume;
  }
  return cursor;
}

// With a proximal term (mu > 0): `anchor` holds one tensor per parameter, of
// its shape.
absl::Status CheckProximalAnchor(const std::vector<torch::Tensor>& parameters,
                                 double mu,
                                 const std::vector<torch::Tensor>* anchor) {
  if (!(mu > 0)) return absl::OkStatus();
  if (anchor == nullptr || anchor->size() != parameters.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the proximal term (mu ", mu, ") needs the global model's ",
        parameters.size(), " parameters; got ", anchor ? anchor->size() : 0));
  }
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (!(*anchor)[i].sizes().equals(parameters[i].sizes())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "proximal anchor ", i, " has shape ", c10::str((*anchor)[i].sizes()),
          "; the parameter has ", c10::str(parameters[i].sizes())));
    }
  }
  return absl::OkStatus();
}

// The gradients of one batch, rows[0..n), in `parts` micro-batches, with
// its loss and score added to `cursor`. Micro-batch p is rows
// [n*p/parts, n*(p+1)/parts); its mean loss weighs by its share, so the
// gradients sum to the whole batch's.
void AccumulateBatch(Model& model, const Dataset& data,
                     const Objective& objective, const uint32_t* rows,
                     int64_t n, int64_t parts, TrainCursor& cursor) {
  std::vector<int64_t> batch_rows;
  for (int64_t p = 0; p < parts; ++p) {
    const int64_t lo = n * p / parts, hi = n * (p + 1) / parts;
    batch_rows.assign(rows + lo, rows + hi);
    Batch batch = ReadBatch(data, batch_rows.data(), hi - lo);
    torch::Tensor output = model.Forward(batch.inputs);
    torch::Tensor targets = objective.Targets(batch.labels, output);
    torch::Tensor loss = objective.Loss(model, output, targets);
    if (parts == 1) {
      loss.backward();
    } else {
      (loss * (static_cast<double>(hi - lo) / static_cast<double>(n)))
          .backward();
    }
    cursor.loss_sum += loss.item<double>() * (hi - lo);
    MetricSums sums;
    objective.Score(output, targets, &sums);
    cursor.correct += sums.correct;
  }
}

// The gradient of (mu/2) ||w - anchor||^2, once per step: the
// micro-batches' losses already sum to the batch's.
void AddProximalGradient(const std::vector<torch::Tensor>& parameters,
                         const std::vector<torch::Tensor>& anchor, double mu) {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < parameters.size(); ++i) {
    torch::Tensor grad = parameters[i].mutable_grad();
    if (!grad.defined()) continue;
    grad.add_(parameters[i].detach() - anchor[i], mu);
  }
}

TrainResult ResultOfRun(const TrainCursor& cursor, absl::Time start,
                        Clock& clock) {
  TrainResult result;
  result.samples = cursor.samples;
  result.steps = cursor.step;
  result.mean_loss = cursor.samples
                         ? cursor.loss_sum / static_cast<double>(cursor.samples)
                         : 0;
  result.accuracy = cursor.samples ? static_cast<double>(cursor.correct) /
                                         static_cast<double>(cursor.samples)
                                   : 0;
  result.seconds = cursor.seconds + absl::ToDoubleSeconds(clock.Now() - start);
  return result;
}

}  // namespace

absl::StatusOr<TrainResult> Train(Model& model, const Dataset& data,
                                  const Objective& objective,
                                  const TrainOptions& options,
                                  const TrainHooks& hooks) {
  const int64_t rows = data.size();
  const int64_t batches_per_epoch =
      options.batch_size > 0
          ? (rows + options.batch_size - 1) / options.batch_size
          : 0;
  absl::StatusOr<TrainCursor> planned =
      PlanCursor(rows, batches_per_epoch, options, hooks);
  if (!planned.ok()) return planned.status();
  TrainCursor cursor = *planned;
  Clock& clock = *hooks.clock;
  const absl::Time start = clock.Now();
  try {
    model.SetTraining(true);
    absl::StatusOr<std::vector<torch::Tensor>> trained =
        TrainedParameters(model.Parameters(), options.trainable);
    if (!trained.ok()) return trained.status();
    absl::StatusOr<std::unique_ptr<torch::optim::Optimizer>> made =
        MakeOptimizer(options, *std::move(trained));
    if (!made.ok()) return made.status();
    torch::optim::Optimizer& optimizer = **made;
    if (hooks.resume != nullptr && hooks.restore_optimizer) {
      if (absl::Status s = hooks.restore_optimizer(optimizer); !s.ok()) {
        return s;
      }
    }
    const std::vector<torch::Tensor> parameters = model.Parameters();
    const double mu = options.proximal_mu;
    if (absl::Status s =
            CheckProximalAnchor(parameters, mu, hooks.proximal_anchor);
        !s.ok()) {
      return s;
    }
    std::vector<uint32_t> order;
    int64_t order_epoch = -1;
    while (cursor.step < cursor.planned) {
      if (hooks.stop != nullptr && hooks.stop->load()) {
        return absl::CancelledError(absl::StrCat("training stopped after ",
                                                 cursor.step, " of ",
                                                 cursor.planned, " steps"));
      }
      const int64_t epoch = cursor.step / batches_per_epoch;
      const int64_t in_epoch = cursor.step % batches_per_epoch;
      if (epoch != order_epoch) {
        order = EpochOrder(rows, options.seed, epoch);
        order_epoch = epoch;
      }
      const int64_t begin = in_epoch * options.batch_size;
      const int64_t n = std::min(options.batch_size, rows - begin);
      const int64_t parts = std::clamp<int64_t>(
          hooks.micro_batches ? hooks.micro_batches() : 1, 1, n);
      optimizer.zero_grad();
      AccumulateBatch(model, data, objective, order.data() + begin, n, parts,
                      cursor);
      if (mu > 0) AddProximalGradient(parameters, *hooks.proximal_anchor, mu);
      optimizer.step();
      cursor.samples += n;
      ++cursor.step;
      if (hooks.after_batch) {
        TrainCursor now = cursor;
        now.seconds += absl::ToDoubleSeconds(clock.Now() - start);
        if (absl::Status s = hooks.after_batch(now, model, optimizer);
            !s.ok()) {
          return s;
        }
      }
    }
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("LibTorch failed during training: ",
                                            DescribeTorchError(e)));
  }
  return ResultOfRun(cursor, start, clock);
}

absl::StatusOr<EvalResult> Evaluate(Model& model, const Dataset& data,
                                    const Objective& objective,
                                    int64_t batch_size, int64_t max_samples) {
  const int64_t total = max_samples > 0
                            ? std::min<int64_t>(max_samples, data.size())
                            : data.size();
  if (total == 0) {
    return absl::InvalidArgumentError("evaluation data set is empty");
  }
  EvalResult result;
  try {
    torch::NoGradGuard no_grad;
    model.SetTraining(false);
    std::vector<int64_t> rows(static_cast<size_t>(batch_size));
    double loss_sum = 0;
    MetricSums sums;
    for (int64_t begin = 0; begin < total; begin += batch_size) {
      const int64_t n = std::min(batch_size, total - begin);
      std::iota(rows.begin(), rows.begin() + n, begin);
      Batch batch = ReadBatch(data, rows.data(), n);
      torch::Tensor output = model.Forward(batch.inputs);
      torch::Tensor targets = objective.Targets(batch.labels, output);
      loss_sum += objective.Loss(model, output, targets).item<double>() * n;
      objective.Score(output, targets, &sums);
    }
    result.samples = sums.samples;
    result.regression = objective.task() == TaskKind::kRegression;
    result.mean_loss = loss_sum / static_cast<double>(result.samples);
    result.accuracy = sums.Accuracy();
    result.rmse = sums.Rmse();
    result.mae = sums.Mae();
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(
        "LibTorch failed during evaluation: ", DescribeTorchError(e)));
  }
  return result;
}

}  // namespace fedberry::runtime
