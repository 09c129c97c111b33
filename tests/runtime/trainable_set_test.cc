// --trainable's regex resolution and the trainable set's selection and
// completion of partial updates.
#include "runtime/trainable_set.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "runtime/model_zoo.h"

namespace fedberry::runtime::trainable_set_test {
namespace {

// ResNet-8's tensors: parameters (stem, blocks, fc), then buffers.
struct Resnet {
  Resnet() {
    model = *MakeImageModel("resnet8");
    state = model->State();
    parameters = model->Parameters().size();
  }
  std::unique_ptr<Model> model;
  NamedTensors state;
  size_t parameters = 0;
};

TEST(ResolveTrainable, MatchesWholeParameterNames) {
  Resnet net;
  auto head = ResolveTrainable(net.state, net.parameters, "fc.*");
  ASSERT_TRUE(head.ok()) << head.status();
  EXPECT_EQ(*head, (std::vector<std::string>{"fc.weight", "fc.bias"}));
  auto more =
      ResolveTrainable(net.state, net.parameters, "layer3\\..*|fc\\..*");
  ASSERT_TRUE(more.ok()) << more.status();
  EXPECT_GT(more->size(), 2u);
  for (const auto& name : *more) {
    EXPECT_TRUE(absl::StartsWith(name, "layer3.") ||
                absl::StartsWith(name, "fc."))
        << name;
  }
}

TEST(ResolveTrainable, AFullMatchIsNeeded) {
  Resnet net;
  // "fc" alone is a prefix of fc.weight, not the whole name.
  auto prefix = ResolveTrainable(net.state, net.parameters, "fc");
  EXPECT_EQ(prefix.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ResolveTrainable, NoMatchNamesTheRegexAndTheParameters) {
  Resnet net;
  auto none = ResolveTrainable(net.state, net.parameters, "head\\..*");
  ASSERT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(none.status().message());
  EXPECT_TRUE(absl::StrContains(message, "--trainable=head\\..*")) << message;
  EXPECT_TRUE(absl::StrContains(message, "fc.weight")) << message;
  // Buffers are no parameters: they never train, so never match.
  auto buffers = ResolveTrainable(net.state, net.parameters, ".*running_mean");
  EXPECT_FALSE(buffers.ok());
  auto broken = ResolveTrainable(net.state, net.parameters, "fc(");
  EXPECT_EQ(broken.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(TrainableSet, UpdatesCarryTrainableParametersAndEveryBuffer) {
  Resnet net;
  auto set =
      TrainableSet::Make(net.state, net.parameters, {"fc.weight", "fc.bias"});
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_FALSE(set->whole());
  const NamedTensors sent = set->Select(net.state);
  const size_t buffers = net.state.size() - net.parameters;
  ASSERT_EQ(sent.size(), 2 + buffers);
  EXPECT_EQ(sent[0].name, "fc.weight");
  EXPECT_EQ(sent[1].name, "fc.bias");
  const std::vector<bool> training = set->TrainingParameters();
  ASSERT_EQ(training.size(), net.parameters);
  EXPECT_TRUE(training[net.parameters - 1]);
  EXPECT_FALSE(training[0]);
}

TEST(TrainableSet, APlanNamingATensorTheModelLacksIsRefused) {
  Resnet net;
  auto set = TrainableSet::Make(net.state, net.parameters, {"head.weight"});
  ASSERT_EQ(set.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(set.status().message(), "'head.weight'"))
      << set.status();
}

TEST(TrainableSet, CompleteFillsFrozenTensorsFromTheGlobalModel) {
  Resnet net;
  auto set = TrainableSet::Make(net.state, net.parameters, {"fc.bias"});
  ASSERT_TRUE(set.ok());
  NamedTensors sent = set->Select(net.state);
  sent[0].tensor = sent[0].tensor + 1;
  auto whole = set->Complete(sent, net.state);
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_EQ(whole->size(), net.state.size());
  for (size_t i = 0; i < whole->size(); ++i) {
    EXPECT_EQ((*whole)[i].name, net.state[i].name);
    if ((*whole)[i].name == "fc.bias") {
      EXPECT_TRUE((*whole)[i].tensor.equal(net.state[i].tensor + 1));
    } else {
      EXPECT_TRUE((*whole)[i].tensor.equal(net.state[i].tensor));
    }
  }
  // The whole model is refused: it carries frozen tensors.
  auto carried = set->Complete(net.state, net.state);
  ASSERT_EQ(carried.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(carried.status().message(), "freezes"));
  // And so is one without the trainable tensor.
  NamedTensors lacking(sent.begin() + 1, sent.end());
  auto missing = set->Complete(lacking, net.state);
  ASSERT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "lacks 'fc.bias'"));
}

TEST(TrainableSet, KeepFrozenCopiesTheGlobalTensorsBack) {
  Resnet net;
  auto set = TrainableSet::Make(net.state, net.parameters, {"fc.bias"});
  ASSERT_TRUE(set.ok());
  NamedTensors moved = CloneState(net.state);
  for (auto& t : moved) {
    if (t.tensor.is_floating_point()) t.tensor.add_(1e-7);
  }
  set->KeepFrozen(net.state, &moved);
  for (size_t i = 0; i < moved.size(); ++i) {
    const bool frozen = i < net.parameters && moved[i].name != "fc.bias";
    EXPECT_EQ(moved[i].tensor.equal(net.state[i].tensor),
              frozen || !moved[i].tensor.is_floating_point())
        << moved[i].name;
  }
}

}  // namespace
}  // namespace fedberry::runtime::trainable_set_test
