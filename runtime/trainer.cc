#include "runtime/trainer.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace fedberry::runtime {
namespace {

// Fashion-MNIST pixel statistics (over the training set, scaled to [0, 1]).
constexpr float kMean = 0.2860f;
constexpr float kStd = 0.3530f;

std::vector<int64_t> EpochOrder(int64_t rows, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> order(rows);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed * 1000003u + static_cast<uint64_t>(epoch));
  // Fisher-Yates with a fixed algorithm: same order on every platform.
  for (size_t i = order.size(); i > 1; --i) {
    std::swap(order[i - 1], order[rng() % i]);
  }
  return order;
}

torch::Tensor LabelBatch(const ImageDataset& data, const int64_t* rows,
                         int64_t n) {
  torch::Tensor out = torch::empty({n}, torch::kInt64);
  auto* p = out.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) p[i] = data.labels[rows[i]];
  return out;
}

}  // namespace

torch::Tensor ImageBatch(const ImageDataset& data, const int64_t* rows,
                         int64_t n) {
  const int64_t pixels = data.height * data.width;
  torch::Tensor out = torch::empty({n, 1, data.height, data.width});
  float* dst = out.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* src = data.pixels.data() + rows[i] * pixels;
    for (int64_t j = 0; j < pixels; ++j) {
      dst[i * pixels + j] = (src[j] / 255.0f - kMean) / kStd;
    }
  }
  return out;
}

absl::StatusOr<TrainResult> Train(Net& net, const ImageDataset& data,
                                  const TrainOptions& options,
                                  const TrainHooks& hooks) {
  if (data.rows == 0) {
    return absl::InvalidArgumentError("training data set is empty");
  }
  if (options.batch_size <= 0 ||
      (options.local_steps <= 0 && options.local_epochs <= 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid training options: batch_size=", options.batch_size,
        " local_epochs=", options.local_epochs,
        " local_steps=", options.local_steps));
  }
  const int64_t batches_per_epoch =
      (data.rows + options.batch_size - 1) / options.batch_size;
  TrainCursor cursor;
  cursor.planned = options.local_steps > 0
                       ? options.local_steps
                       : batches_per_epoch * options.local_epochs;
  if (hooks.resume != nullptr) {
    if (hooks.resume->planned != cursor.planned ||
        hooks.resume->step > cursor.planned || hooks.resume->step < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot resume at step ", hooks.resume->step, " of ",
          hooks.resume->planned, ": this run plans ", cursor.planned,
          " steps"));
    }
    cursor = *hooks.resume;
  }
  const absl::Time start = absl::Now();
  try {
    net.train();
    torch::optim::SGD sgd(net.parameters(),
                          torch::optim::SGDOptions(options.learning_rate)
                              .momentum(options.momentum));
    if (hooks.resume != nullptr && hooks.restore_optimizer) {
      if (absl::Status s = hooks.restore_optimizer(sgd); !s.ok()) return s;
    }
    std::vector<int64_t> order;
    int64_t order_epoch = -1;
    while (cursor.step < cursor.planned) {
      if (hooks.stop != nullptr && hooks.stop->load()) {
        return absl::CancelledError(absl::StrCat(
            "training stopped after ", cursor.step, " of ", cursor.planned,
            " steps"));
      }
      const int64_t epoch = cursor.step / batches_per_epoch;
      const int64_t in_epoch = cursor.step % batches_per_epoch;
      if (epoch != order_epoch) {
        order = EpochOrder(data.rows, options.seed, epoch);
        order_epoch = epoch;
      }
      const int64_t begin = in_epoch * options.batch_size;
      const int64_t n = std::min(options.batch_size, data.rows - begin);
      const int64_t parts = std::clamp<int64_t>(
          hooks.micro_batches ? hooks.micro_batches() : 1, 1, n);
      sgd.zero_grad();
      for (int64_t p = 0; p < parts; ++p) {
        // Micro-batch p: rows [n*p/parts, n*(p+1)/parts) of the batch; its
        // mean loss weighs by its share, so the gradients sum to the
        // whole batch's.
        const int64_t lo = n * p / parts, hi = n * (p + 1) / parts;
        const int64_t* rows = order.data() + begin + lo;
        torch::Tensor x = ImageBatch(data, rows, hi - lo);
        torch::Tensor y = LabelBatch(data, rows, hi - lo);
        torch::Tensor logits = net.forward(x);
        torch::Tensor loss = torch::nn::functional::cross_entropy(logits, y);
        if (parts == 1) {
          loss.backward();
        } else {
          (loss * (static_cast<double>(hi - lo) / static_cast<double>(n)))
              .backward();
        }
        cursor.loss_sum += loss.item<double>() * (hi - lo);
        cursor.correct += logits.argmax(1).eq(y).sum().item<int64_t>();
      }
      sgd.step();
      cursor.samples += n;
      ++cursor.step;
      if (hooks.after_batch) {
        TrainCursor now = cursor;
        now.seconds += absl::ToDoubleSeconds(absl::Now() - start);
        if (absl::Status s = hooks.after_batch(now, net, sgd); !s.ok()) return s;
      }
    }
  } catch (const c10::Error& e) {
    return absl::InternalError(absl::StrCat(
        "LibTorch failed during training: ", e.what_without_backtrace()));
  }
  TrainResult result;
  result.samples = cursor.samples;
  result.steps = cursor.step;
  result.mean_loss =
      cursor.samples ? cursor.loss_sum / static_cast<double>(cursor.samples) : 0;
  result.accuracy = cursor.samples ? static_cast<double>(cursor.correct) /
                                         static_cast<double>(cursor.samples)
                                   : 0;
  result.seconds = cursor.seconds + absl::ToDoubleSeconds(absl::Now() - start);
  return result;
}

absl::StatusOr<EvalResult> Evaluate(Net& net, const ImageDataset& data,
                                    int64_t batch_size) {
  if (data.rows == 0) {
    return absl::InvalidArgumentError("evaluation data set is empty");
  }
  EvalResult result;
  try {
    torch::NoGradGuard no_grad;
    net.eval();
    std::vector<int64_t> rows(static_cast<size_t>(batch_size));
    double loss_sum = 0;
    int64_t correct = 0;
    for (int64_t begin = 0; begin < data.rows; begin += batch_size) {
      const int64_t n = std::min(batch_size, data.rows - begin);
      std::iota(rows.begin(), rows.begin() + n, begin);
      torch::Tensor x = ImageBatch(data, rows.data(), n);
      torch::Tensor y = LabelBatch(data, rows.data(), n);
      torch::Tensor logits = net.forward(x);
      loss_sum +=
          torch::nn::functional::cross_entropy(
              logits, y,
              torch::nn::functional::CrossEntropyFuncOptions().reduction(
                  torch::kSum))
              .item<double>();
      correct += logits.argmax(1).eq(y).sum().item<int64_t>();
      result.samples += n;
    }
    result.mean_loss = loss_sum / static_cast<double>(result.samples);
    result.accuracy =
        static_cast<double>(correct) / static_cast<double>(result.samples);
  } catch (const c10::Error& e) {
    return absl::InternalError(absl::StrCat(
        "LibTorch failed during evaluation: ", e.what_without_backtrace()));
  }
  return result;
}

}  // namespace fedberry::runtime
