#include "runtime/model_zoo.h"

#include <torch/torch.h>

#include <functional>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/nn_model.h"

namespace fedberry::runtime {
namespace {

namespace nn = torch::nn;

class LeNet5 : public nn::Module {
 public:
  LeNet5(int64_t channels, int64_t height, int64_t width, int64_t outputs)
      : conv1_(register_module(
            "conv1", nn::Conv2d(nn::Conv2dOptions(channels, 6, 5).padding(2)))),
        conv2_(register_module("conv2", nn::Conv2d(6, 16, 5))),
        fc1_(register_module("fc1", nn::Linear(16 * ((height / 2 - 4) / 2) *
                                                   ((width / 2 - 4) / 2),
                                               120))),
        fc2_(register_module("fc2", nn::Linear(120, 84))),
        fc3_(register_module("fc3", nn::Linear(84, outputs))) {}

  torch::Tensor forward(torch::Tensor x) {
    x = torch::max_pool2d(torch::relu(conv1_->forward(x)), 2);
    x = torch::max_pool2d(torch::relu(conv2_->forward(x)), 2);
    x = x.flatten(1);
    x = torch::relu(fc1_->forward(x));
    x = torch::relu(fc2_->forward(x));
    return fc3_->forward(x);
  }

 private:
  nn::Conv2d conv1_, conv2_;
  nn::Linear fc1_, fc2_, fc3_;
};

class Mlp : public nn::Module {
 public:
  Mlp(int64_t inputs, std::vector<int64_t> hidden, int64_t outputs) {
    int64_t width = inputs;
    for (size_t i = 0; i <= hidden.size(); ++i) {
      const int64_t next = i < hidden.size() ? hidden[i] : outputs;
      layers_.push_back(
          register_module(absl::StrCat("fc", i + 1), nn::Linear(width, next)));
      width = next;
    }
  }

  torch::Tensor forward(torch::Tensor x) {
    x = x.flatten(1);
    for (size_t i = 0; i < layers_.size(); ++i) {
      x = layers_[i]->forward(x);
      if (i + 1 < layers_.size()) x = torch::relu(x);
    }
    return x;
  }

 private:
  std::vector<nn::Linear> layers_;
};

// He et al.'s basic block: two 3x3 convolutions with batch norm, and a 1x1
// projection on the shortcut when the shape changes.
class BasicBlock : public nn::Module {
 public:
  BasicBlock(int64_t in, int64_t out, int64_t stride)
      : conv1_(register_module("conv1", nn::Conv2d(nn::Conv2dOptions(in, out, 3)
                                                       .stride(stride)
                                                       .padding(1)
                                                       .bias(false)))),
        // Registered in the members' order (conv1, conv2, bn1, bn2), as
        // they always were: the state's order is the model's wire layout.
        conv2_(register_module(
            "conv2",
            nn::Conv2d(nn::Conv2dOptions(out, out, 3).padding(1).bias(false)))),
        bn1_(register_module("bn1", nn::BatchNorm2d(out))),
        bn2_(register_module("bn2", nn::BatchNorm2d(out))) {
    if (stride != 1 || in != out) {
      shortcut_ = register_module(
          "shortcut",
          nn::Sequential(
              nn::Conv2d(
                  nn::Conv2dOptions(in, out, 1).stride(stride).bias(false)),
              nn::BatchNorm2d(out)));
    }
  }

  torch::Tensor forward(torch::Tensor x) {
    torch::Tensor y = torch::relu(bn1_->forward(conv1_->forward(x)));
    y = bn2_->forward(conv2_->forward(y));
    return torch::relu(y + (shortcut_ ? shortcut_->forward(x) : x));
  }

 private:
  nn::Conv2d conv1_, conv2_;
  nn::BatchNorm2d bn1_, bn2_;
  nn::Sequential shortcut_{nullptr};
};

// ResNet-8 for small images (CIFAR style): a 3x3 stem, three stages of one
// basic block (16, 32, 64 channels), global average pooling.
class ResNet8 : public nn::Module {
 public:
  ResNet8(int64_t channels, int64_t outputs)
      : stem_(register_module(
            "conv1",
            nn::Conv2d(
                nn::Conv2dOptions(channels, 16, 3).padding(1).bias(false)))),
        bn_(register_module("bn1", nn::BatchNorm2d(16))),
        layer1_(
            register_module("layer1", std::make_shared<BasicBlock>(16, 16, 1))),
        layer2_(
            register_module("layer2", std::make_shared<BasicBlock>(16, 32, 2))),
        layer3_(
            register_module("layer3", std::make_shared<BasicBlock>(32, 64, 2))),
        fc_(register_module("fc", nn::Linear(64, outputs))) {}

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(bn_->forward(stem_->forward(x)));
    x = layer3_->forward(layer2_->forward(layer1_->forward(x)));
    x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
    return fc_->forward(x);
  }

 private:
  nn::Conv2d stem_;
  nn::BatchNorm2d bn_;
  std::shared_ptr<BasicBlock> layer1_, layer2_, layer3_;
  nn::Linear fc_;
};

template <typename Net>
std::unique_ptr<Model> Wrap(const std::string& name, std::shared_ptr<Net> net) {
  return std::make_unique<NnModel<Net>>(name, std::move(net));
}

}  // namespace

std::vector<std::string> ZooModelNames() {
  return {"lenet5", "resnet8", "mlp", "wide-mlp", "tabular-mlp"};
}

bool IsZooModel(const std::string& name) {
  for (const auto& n : ZooModelNames()) {
    if (n == name) return true;
  }
  return false;
}

absl::StatusOr<std::unique_ptr<Model>> MakeZooModel(
    const std::string& name, const std::vector<int64_t>& shape,
    int64_t outputs) {
  if (!IsZooModel(name)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown model '", name, "' (built in: ",
        absl::StrJoin(ZooModelNames(), ", "), "; or a TorchScript file)"));
  }
  if (outputs < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("model '", name, "' needs at least one output"));
  }
  for (int64_t d : shape) {
    if (d < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input shape ", absl::StrJoin(shape, ","), " has an empty side"));
    }
  }
  const int64_t inputs = std::accumulate(shape.begin(), shape.end(), int64_t{1},
                                         std::multiplies<int64_t>());
  const bool image = shape.size() == 3;
  try {
    if (name == "lenet5" || name == "resnet8") {
      if (!image || (name == "lenet5" && (shape[1] < 16 || shape[2] < 16))) {
        return absl::InvalidArgumentError(
            absl::StrCat("model '", name, "' takes images [C,H,W]",
                         name == "lenet5" ? " of at least 16x16" : "",
                         "; the input shape is ", absl::StrJoin(shape, ",")));
      }
      if (name == "lenet5") {
        return Wrap(name, std::make_shared<LeNet5>(shape[0], shape[1], shape[2],
                                                   outputs));
      }
      return Wrap(name, std::make_shared<ResNet8>(shape[0], outputs));
    }
    if (name == "mlp") {
      return Wrap(name, std::make_shared<Mlp>(inputs, std::vector<int64_t>{32},
                                              outputs));
    }
    if (name == "wide-mlp") {
      return Wrap(name, std::make_shared<Mlp>(
                            inputs, std::vector<int64_t>{1536}, outputs));
    }
    return Wrap(name, std::make_shared<Mlp>(
                          inputs, std::vector<int64_t>{64, 64}, outputs));
  } catch (const c10::Error& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot build model '", name, "': ", e.what_without_backtrace()));
  }
}

absl::StatusOr<std::unique_ptr<Model>> MakeImageModel(const std::string& name) {
  return MakeZooModel(name, {1, 28, 28}, 10);
}

}  // namespace fedberry::runtime
