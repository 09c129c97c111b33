#include "runtime/trainer.h"

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
                                  const std::atomic<bool>* stop,
                                  const ProgressFn& progress) {
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
  const int64_t planned = options.local_steps > 0
                              ? options.local_steps
                              : batches_per_epoch * options.local_epochs;
  TrainResult result;
  const absl::Time start = absl::Now();
  try {
    net.train();
    torch::optim::SGD sgd(net.parameters(),
                          torch::optim::SGDOptions(options.learning_rate)
                              .momentum(options.momentum));
    double loss_sum = 0;
    int64_t correct = 0;
    std::vector<int64_t> order;
    for (int64_t step = 0; step < planned; ++step) {
      if (stop != nullptr && stop->load()) {
        return absl::CancelledError(absl::StrCat(
            "training stopped after ", step, " of ", planned, " steps"));
      }
      const int64_t epoch = step / batches_per_epoch;
      const int64_t in_epoch = step % batches_per_epoch;
      if (in_epoch == 0) order = EpochOrder(data.rows, options.seed, epoch);
      const int64_t begin = in_epoch * options.batch_size;
      const int64_t n = std::min(options.batch_size, data.rows - begin);
      torch::Tensor x = ImageBatch(data, order.data() + begin, n);
      torch::Tensor y = LabelBatch(data, order.data() + begin, n);
      sgd.zero_grad();
      torch::Tensor logits = net.forward(x);
      torch::Tensor loss = torch::nn::functional::cross_entropy(logits, y);
      loss.backward();
      sgd.step();
      loss_sum += loss.item<double>() * n;
      correct += logits.argmax(1).eq(y).sum().item<int64_t>();
      result.samples += n;
      result.steps = step + 1;
      if (progress) progress(step + 1, planned);
    }
    result.mean_loss = loss_sum / static_cast<double>(result.samples);
    result.accuracy =
        static_cast<double>(correct) / static_cast<double>(result.samples);
  } catch (const c10::Error& e) {
    return absl::InternalError(absl::StrCat("LibTorch failed during training: ",
                                            e.what_without_backtrace()));
  }
  result.seconds = absl::ToDoubleSeconds(absl::Now() - start);
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
