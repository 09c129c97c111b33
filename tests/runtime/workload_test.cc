// The workload seam: the model zoo, TorchScript models exported by
// python3-torch, objectives and their metrics, plans, and training with
// every optimizer behind runtime::Train.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <fstream>

#include "absl/strings/match.h"
#include "checkpoint/torch_archive.h"
#include "runtime/model_zoo.h"
#include "runtime/objective.h"
#include "runtime/sha256.h"
#include "runtime/testing/vector_dataset.h"
#include "runtime/torchscript_model.h"
#include "runtime/trainer.h"
#include "runtime/training_plan.h"
#include "tests/test_files.h"
#include "tests/torchscript_export.h"

namespace fedberry::runtime::workload_test {
namespace {

using fedberry::testing::ExportTorchScript;
using fedberry::testing::HavePythonTorch;
using fedberry::testing::TempDir;
using testing::Blobs;
using testing::VectorDataset;

#define SKIP_WITHOUT_PYTHON_TORCH()                                      \
  if (!HavePythonTorch())                                                \
  GTEST_SKIP() << "needs /usr/bin/python3 with python3-torch to export " \
                  "fixtures"

TEST(ModelZoo, EveryModelBuildsForItsKindOfInput) {
  torch::manual_seed(1);
  struct Case {
    std::string name;
    std::vector<int64_t> shape;
    int64_t outputs;
  };
  for (const Case& c : std::vector<Case>{{"lenet5", {1, 28, 28}, 10},
                                         {"lenet5", {3, 32, 32}, 7},
                                         {"resnet8", {3, 32, 32}, 10},
                                         {"resnet8", {1, 16, 16}, 4},
                                         {"mlp", {1, 28, 28}, 10},
                                         {"wide-mlp", {12}, 3},
                                         {"tabular-mlp", {12}, 1}}) {
    auto model = MakeZooModel(c.name, c.shape, c.outputs);
    ASSERT_TRUE(model.ok()) << c.name << ": " << model.status();
    std::vector<int64_t> batch = {5};
    batch.insert(batch.end(), c.shape.begin(), c.shape.end());
    torch::Tensor out = (*model)->Forward(torch::zeros(batch));
    EXPECT_EQ(out.sizes(), (std::vector<int64_t>{5, c.outputs})) << c.name;
  }
}

TEST(ModelZoo, ResNetCarriesBatchNormStateAsBuffers) {
  auto model = MakeZooModel("resnet8", {3, 32, 32}, 10);
  ASSERT_TRUE(model.ok());
  NamedTensors state = (*model)->State();
  int64_t params = 0;
  bool has_running_mean = false, has_counter = false;
  for (const auto& t : state) {
    if (absl::EndsWith(t.name, "running_mean")) has_running_mean = true;
    if (absl::EndsWith(t.name, "num_batches_tracked")) {
      has_counter = t.tensor.scalar_type() == torch::kInt64;
    }
    if (t.tensor.is_floating_point()) params += t.tensor.numel();
  }
  EXPECT_TRUE(has_running_mean);
  EXPECT_TRUE(has_counter);
  EXPECT_GT(params, 70000);
  EXPECT_LT(params, 90000);
}

TEST(ModelZoo, RefusesShapesAndNamesItCannotTake) {
  auto flat = MakeZooModel("lenet5", {12}, 3);
  ASSERT_FALSE(flat.ok());
  EXPECT_TRUE(absl::StrContains(flat.status().message(), "takes images"))
      << flat.status();
  auto unknown = MakeZooModel("vgg", {3, 32, 32}, 10);
  ASSERT_FALSE(unknown.ok());
  EXPECT_TRUE(absl::StrContains(unknown.status().message(), "resnet8"))
      << unknown.status();
}

TEST(ModelZoo, LeNetKeepsTheNamesOfEarlierCheckpoints) {
  auto model = MakeImageModel("lenet5");
  ASSERT_TRUE(model.ok());
  std::vector<std::string> names;
  for (const auto& t : (*model)->State()) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "conv1.weight", "conv1.bias", "conv2.weight",
                       "conv2.bias", "fc1.weight", "fc1.bias", "fc2.weight",
                       "fc2.bias", "fc3.weight", "fc3.bias"}));
}

TEST(TorchScriptModel, LoadsAModuleExportedByPython) {
  SKIP_WITHOUT_PYTHON_TORCH();
  TempDir dir;
  ASSERT_TRUE(ExportTorchScript(fedberry::testing::TabularScript(6, 3),
                                dir / "tab.pt"));
  auto loaded = LoadTorchScriptModel(dir / "tab.pt");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  Model& model = *loaded->model;
  EXPECT_EQ(model.name(), "torchscript:tab.pt");
  EXPECT_TRUE(loaded->warnings.empty());
  EXPECT_FALSE(model.HasOwnLoss());
  EXPECT_EQ(model.Forward(torch::zeros({4, 6})).sizes(),
            (std::vector<int64_t>{4, 3}));
  std::vector<std::string> names;
  for (const auto& t : model.State()) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"fc1.weight", "fc1.bias",
                                             "fc2.weight", "fc2.bias"}));
  // State round-trips, and a state of another shape is refused by name.
  NamedTensors state = model.State();
  state[1].tensor.fill_(0.25);
  ASSERT_TRUE(model.LoadState(state).ok());
  EXPECT_EQ(model.State()[1].tensor[0].item<float>(), 0.25f);
  state[2].tensor = torch::zeros({3, 5});
  absl::Status wrong = model.LoadState(state);
  EXPECT_TRUE(absl::StrContains(wrong.message(), "fc2.weight")) << wrong;
}

TEST(TorchScriptModel, SavesTheModuleWithAnotherState) {
  SKIP_WITHOUT_PYTHON_TORCH();
  TempDir dir;
  ASSERT_TRUE(ExportTorchScript(fedberry::testing::TabularScript(6, 3),
                                dir / "tab.pt"));
  auto loaded = LoadTorchScriptModel(dir / "tab.pt");
  ASSERT_TRUE(loaded.ok());
  NamedTensors trained = loaded->model->State();
  for (auto& t : trained) t.tensor.fill_(0.5);
  ASSERT_TRUE(
      SaveTorchScriptWithState(dir / "tab.pt", trained, dir / "out.pt").ok());
  auto again = LoadTorchScriptModel(dir / "out.pt");
  ASSERT_TRUE(again.ok()) << again.status();
  for (const auto& t : again->model->State()) {
    EXPECT_TRUE(torch::all(t.tensor == 0.5).item<bool>()) << t.name;
  }
  trained.pop_back();
  EXPECT_FALSE(
      SaveTorchScriptWithState(dir / "tab.pt", trained, dir / "bad.pt").ok());
}

TEST(TorchScriptModel, FindsTheModulesOwnLoss) {
  SKIP_WITHOUT_PYTHON_TORCH();
  TempDir dir;
  ASSERT_TRUE(ExportTorchScript(
      fedberry::testing::TabularScript(4, 2, /*with_loss=*/true),
      dir / "loss.pt"));
  auto loaded = LoadTorchScriptModel(dir / "loss.pt");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_TRUE(loaded->model->HasOwnLoss());
  auto objective =
      Objective::Make(TaskKind::kClassification, "model", *loaded->model);
  ASSERT_TRUE(objective.ok());
  torch::Tensor out = loaded->model->Forward(torch::zeros({3, 4}));
  torch::Tensor loss = objective->Loss(*loaded->model, out,
                                       torch::tensor({0, 1, 1}, torch::kInt64));
  EXPECT_EQ(loss.numel(), 1);
  EXPECT_TRUE(std::isfinite(loss.item<double>()));
}

TEST(TorchScriptModel, WarnsAboutATracedModuleWithBatchNorm) {
  SKIP_WITHOUT_PYTHON_TORCH();
  TempDir dir;
  ASSERT_TRUE(ExportTorchScript(
      fedberry::testing::CnnScript(3, 8, 2, /*traced=*/true), dir / "t.pt"));
  ASSERT_TRUE(
      ExportTorchScript(fedberry::testing::CnnScript(3, 8, 2), dir / "s.pt"));
  auto traced = LoadTorchScriptModel(dir / "t.pt");
  ASSERT_TRUE(traced.ok()) << traced.status();
  ASSERT_EQ(traced->warnings.size(), 1u);
  EXPECT_TRUE(absl::StrContains(traced->warnings[0], "looks traced"));
  EXPECT_TRUE(absl::StrContains(traced->warnings[0], "BatchNorm"));
  auto scripted = LoadTorchScriptModel(dir / "s.pt");
  ASSERT_TRUE(scripted.ok()) << scripted.status();
  EXPECT_TRUE(scripted->warnings.empty());
}

TEST(TorchScriptModel, RefusesFilesThatAreNotModules) {
  TempDir dir;
  std::ofstream(dir / "notes.pt") << "not a zip archive";
  auto bad = LoadTorchScriptModel(dir / "notes.pt");
  ASSERT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(
      absl::StrContains(bad.status().message(), "is not a TorchScript module"))
      << bad.status();
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "notes.pt"));
  auto missing = LoadTorchScriptModel(dir / "absent.pt");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
}

TEST(CheckModelOnData, NamesTheModelAndTheShapes) {
  auto model = MakeZooModel("tabular-mlp", {6}, 3);
  ASSERT_TRUE(model.ok());
  auto ce =
      Objective::Make(TaskKind::kClassification, "cross_entropy", **model);
  ASSERT_TRUE(ce.ok());
  // Data of 4 features into a 6-input network.
  VectorDataset narrow = Blobs(8, 4, 3);
  absl::Status s = CheckModelOnData(**model, narrow, *ce);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "tabular-mlp")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "[4, 4]")) << s;
  // More classes than outputs.
  VectorDataset many = Blobs(8, 6, 5);
  s = CheckModelOnData(**model, many, *ce);
  EXPECT_TRUE(absl::StrContains(s.message(), "5 classes")) << s;
  // Fits.
  EXPECT_TRUE(CheckModelOnData(**model, Blobs(8, 6, 3), *ce).ok());
}

TEST(Objective, RefusesLossesThatDoNotFitTheTask) {
  auto model = MakeZooModel("tabular-mlp", {2}, 1);
  ASSERT_TRUE(model.ok());
  EXPECT_FALSE(
      Objective::Make(TaskKind::kRegression, "cross_entropy", **model).ok());
  EXPECT_FALSE(Objective::Make(TaskKind::kClassification, "mse", **model).ok());
  EXPECT_FALSE(
      Objective::Make(TaskKind::kClassification, "hinge", **model).ok());
  auto own = Objective::Make(TaskKind::kClassification, "model", **model);
  EXPECT_TRUE(absl::StrContains(own.status().message(), "defines no loss"))
      << own.status();
}

TEST(Objective, RegressionReportsRmseAndMae) {
  auto model = MakeZooModel("tabular-mlp", {1}, 1);
  ASSERT_TRUE(model.ok());
  auto mse = Objective::Make(TaskKind::kRegression, "mse", **model);
  ASSERT_TRUE(mse.ok());
  torch::Tensor output = torch::tensor({{1.0f}, {2.0f}, {4.0f}});
  torch::Tensor labels = torch::tensor({1.0f, 4.0f, 0.0f});
  torch::Tensor targets = mse->Targets(labels, output);
  EXPECT_EQ(targets.sizes(), output.sizes());
  MetricSums sums;
  mse->Score(output, targets, &sums);
  EXPECT_DOUBLE_EQ(sums.Mae(), (0 + 2 + 4) / 3.0);
  EXPECT_DOUBLE_EQ(sums.Rmse(), std::sqrt((0 + 4 + 16) / 3.0));
  EXPECT_NEAR(mse->Loss(**model, output, targets).item<double>(), 20 / 3.0,
              1e-5);
}

TEST(Objective, BinaryLogitsCountAsCorrectOnTheirSign) {
  auto model = MakeZooModel("tabular-mlp", {1}, 1);
  ASSERT_TRUE(model.ok());
  auto bce =
      Objective::Make(TaskKind::kClassification, "bce_with_logits", **model);
  ASSERT_TRUE(bce.ok());
  torch::Tensor output = torch::tensor({{2.0f}, {-1.0f}, {0.5f}});
  torch::Tensor targets =
      bce->Targets(torch::tensor({1.0f, 0.0f, 0.0f}), output);
  MetricSums sums;
  bce->Score(output, targets, &sums);
  EXPECT_EQ(sums.correct, 2);
  // Three classes cannot be binary.
  absl::Status s =
      bce->Check(**model, output, torch::tensor({0.0f, 1.0f, 2.0f}), 3);
  EXPECT_TRUE(absl::StrContains(s.message(), "binary")) << s;
}

TEST(Train, EveryOptimizerLearnsRows) {
  VectorDataset data = Blobs(400, 4, 3);
  for (const std::string& optimizer : OptimizerNames()) {
    torch::manual_seed(3);
    auto model = MakeZooModel("tabular-mlp", {4}, 3);
    ASSERT_TRUE(model.ok());
    auto ce =
        Objective::Make(TaskKind::kClassification, "cross_entropy", **model);
    TrainOptions options;
    options.optimizer = optimizer;
    options.learning_rate = optimizer == "sgd" ? 0.05 : 0.01;
    options.local_epochs = 3;
    options.batch_size = 16;
    auto before = Evaluate(**model, data, *ce);
    auto trained = Train(**model, data, *ce, options);
    ASSERT_TRUE(trained.ok()) << optimizer << ": " << trained.status();
    auto after = Evaluate(**model, data, *ce);
    ASSERT_TRUE(after.ok());
    EXPECT_LT(after->mean_loss, before->mean_loss) << optimizer;
    EXPECT_GT(after->accuracy, 0.8) << optimizer;
  }
  TrainOptions bad;
  bad.optimizer = "lbfgs";
  auto model = MakeZooModel("tabular-mlp", {4}, 3);
  auto ce =
      Objective::Make(TaskKind::kClassification, "cross_entropy", **model);
  auto refused = Train(**model, data, *ce, bad);
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "lbfgs"))
      << refused.status();
}

// Adam's moments are part of the optimizer state: a run interrupted at a
// batch and resumed from the saved model, optimizer and RNG ends bit for bit
// where the uninterrupted run ends.
TEST(Train, AdamResumesBitExactlyFromSavedState) {
  SKIP_WITHOUT_PYTHON_TORCH();
  TempDir dir;
  ASSERT_TRUE(ExportTorchScript(fedberry::testing::TabularScript(4, 3),
                                dir / "tab.pt"));
  VectorDataset data = Blobs(96, 4, 3);
  TrainOptions options;
  options.optimizer = "adam";
  options.learning_rate = 0.01;
  options.local_steps = 10;
  options.batch_size = 16;
  auto fresh = [&] {
    return std::move(*LoadTorchScriptModel(dir / "tab.pt")).model;
  };

  std::unique_ptr<Model> straight = fresh();
  auto ce =
      Objective::Make(TaskKind::kClassification, "cross_entropy", *straight);
  torch::manual_seed(9);  // dropout draws from the global generator
  ASSERT_TRUE(Train(*straight, data, *ce, options).ok());

  // The same run, stopped after batch 4 with its state saved.
  std::unique_ptr<Model> first = fresh();
  torch::manual_seed(9);
  std::atomic<bool> stop{false};
  TrainCursor at;
  NamedTensors saved_model;
  std::string saved_optimizer, saved_rng;
  TrainHooks hooks;
  hooks.stop = &stop;
  hooks.after_batch = [&](const TrainCursor& c, Model& m,
                          torch::optim::Optimizer& o) {
    if (c.step == 4) {
      at = c;
      saved_model = m.State();
      saved_optimizer = *checkpoint::ArchiveToBytes(
          [&](torch::serialize::OutputArchive& a) { o.save(a); });
      saved_rng = *checkpoint::CpuRngStateToBytes();
      stop = true;
    }
    return absl::OkStatus();
  };
  EXPECT_TRUE(
      absl::IsCancelled(Train(*first, data, *ce, options, hooks).status()));

  std::unique_ptr<Model> resumed = fresh();
  ASSERT_TRUE(resumed->LoadState(saved_model).ok());
  ASSERT_TRUE(checkpoint::RestoreCpuRngState(saved_rng).ok());
  TrainHooks resume;
  resume.resume = &at;
  resume.restore_optimizer = [&](torch::optim::Optimizer& o) {
    return checkpoint::ArchiveFromBytes(
        saved_optimizer, "optimizer",
        [&](torch::serialize::InputArchive& a) { o.load(a); });
  };
  ASSERT_TRUE(Train(*resumed, data, *ce, options, resume).ok());

  NamedTensors a = straight->State(), b = resumed->State();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(torch::equal(a[i].tensor, b[i].tensor)) << a[i].name;
  }
}

v1::TrainingPlan ScriptPlan() {
  v1::TrainingPlan plan;
  plan.set_model_format(kTorchScriptFormat);
  plan.set_model_name("model.pt");
  plan.set_model_sha256(std::string(64, 'a'));
  plan.set_model_bytes(1000);
  plan.add_input_shape(12);
  plan.set_task("regression");
  plan.set_num_outputs(1);
  plan.set_loss("mse");
  plan.set_optimizer("adam");
  plan.set_learning_rate(0.01);
  return plan;
}

TEST(TrainingPlan, ValidPlansPass) {
  EXPECT_TRUE(ValidatePlan(ScriptPlan()).ok()) << ValidatePlan(ScriptPlan());
  v1::TrainConfig config;
  config.set_model("lenet5");
  config.set_learning_rate(0.05);
  config.set_momentum(0.9);
  EXPECT_TRUE(ValidatePlan(DefaultImagePlan(config)).ok());
}

TEST(TrainingPlan, RefusesEachMalformedField) {
  struct Case {
    std::string field;
    std::function<void(v1::TrainingPlan&)> spoil;
  };
  for (const Case& c : std::vector<Case>{
           {"model_format", [](auto& p) { p.set_model_format("onnx"); }},
           {"model_sha256", [](auto& p) { p.set_model_sha256("ABC"); }},
           {"model_bytes", [](auto& p) { p.set_model_bytes(0); }},
           {"model_name",
            [](auto& p) {
              p.set_model_format(kBuiltinFormat);
              p.set_model_name("vgg");
            }},
           {"input_shape", [](auto& p) { p.clear_input_shape(); }},
           {"input_shape", [](auto& p) { p.add_input_shape(0); }},
           {"input_shape",
            [](auto& p) {
              for (int i = 0; i < 3; ++i) p.add_input_shape(60000);
            }},
           {"task", [](auto& p) { p.set_task("ranking"); }},
           {"num_outputs", [](auto& p) { p.set_num_outputs(0); }},
           {"loss", [](auto& p) { p.set_loss("hinge"); }},
           {"optimizer", [](auto& p) { p.set_optimizer("lbfgs"); }},
           {"learning_rate", [](auto& p) { p.set_learning_rate(NAN); }},
           {"learning_rate", [](auto& p) { p.set_learning_rate(-1); }},
           {"momentum/weight_decay",
            [](auto& p) { p.set_weight_decay(INFINITY); }},
           {"input_std", [](auto& p) { p.add_input_std(0); }},
           {"input_mean", [](auto& p) { p.add_input_mean(NAN); }},
           {"label_column",
            [](auto& p) { p.set_label_column(std::string(300, 'x')); }},
       }) {
    v1::TrainingPlan plan = ScriptPlan();
    c.spoil(plan);
    absl::Status s = ValidatePlan(plan);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.field;
    EXPECT_TRUE(absl::StrContains(s.message(), c.field))
        << c.field << ": " << s;
  }
}

TEST(TrainingPlan, CarriesBindingAndOptions) {
  v1::TrainingPlan plan = ScriptPlan();
  plan.set_label_column("target");
  plan.add_feature_columns("a");
  plan.add_feature_columns("b");
  plan.add_input_mean(1.5f);
  plan.add_input_std(2.0f);
  plan.set_weight_decay(0.001);
  DataBinding b = BindingOf(plan, /*skip_bad_rows=*/true);
  EXPECT_EQ(b.task, TaskKind::kRegression);
  EXPECT_EQ(b.input_shape, (std::vector<int64_t>{12}));
  EXPECT_EQ(b.label_column, "target");
  EXPECT_EQ(b.feature_columns, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(b.mean, (std::vector<float>{1.5f}));
  EXPECT_TRUE(b.skip_bad_rows);
  v1::TrainConfig config;
  config.set_batch_size(16);
  config.set_local_steps(7);
  TrainOptions o = TrainOptionsOf(plan, config);
  EXPECT_EQ(o.optimizer, "adam");
  EXPECT_EQ(o.batch_size, 16);
  EXPECT_EQ(o.local_steps, 7);
  EXPECT_DOUBLE_EQ(o.weight_decay, 0.001);
  EXPECT_EQ(ModelIdOf(plan), "torchscript:" + std::string(64, 'a'));
}

TEST(TrainingPlan, AModelFileMustHashToThePlan) {
  SKIP_WITHOUT_PYTHON_TORCH();
  TempDir dir;
  ASSERT_TRUE(
      ExportTorchScript(fedberry::testing::TabularScript(12, 1), dir / "m.pt"));
  v1::TrainingPlan plan = ScriptPlan();
  // Checked against the plan's hash: the file is not that model.
  auto wrong = VerifiedModelFile::Check(dir / "m.pt", plan.model_sha256());
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(wrong.status().message(), "SHA-256"));
  // Checked against its own hash, it still is not the plan's model.
  std::ifstream in(dir / "m.pt", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  auto file = VerifiedModelFile::Check(dir / "m.pt", Sha256Hex(bytes));
  ASSERT_TRUE(file.ok()) << file.status();
  auto other = MakePlanModel(plan, &*file);
  EXPECT_EQ(other.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(MakePlanModel(plan, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);

  plan.set_model_sha256(Sha256Hex(bytes));
  auto right = MakePlanModel(plan, &*file);
  ASSERT_TRUE(right.ok()) << right.status();
  EXPECT_EQ((*right)->Forward(torch::zeros({2, 12})).sizes(),
            (std::vector<int64_t>{2, 1}));
  // The same model from bytes in memory (how the server loads what it
  // serves): no file is read.
  auto held = VerifiedModelFile::InMemory(
      "not-on-disk.pt", std::make_shared<const std::string>(bytes));
  EXPECT_EQ(held.sha256(), plan.model_sha256());
  auto from_bytes = MakePlanModel(plan, &held);
  ASSERT_TRUE(from_bytes.ok()) << from_bytes.status();
  (*right)->SetTraining(false);  // no dropout: the same weights, same output
  (*from_bytes)->SetTraining(false);
  EXPECT_TRUE((*from_bytes)
                  ->Forward(torch::ones({2, 12}))
                  .equal((*right)->Forward(torch::ones({2, 12}))));
}

TEST(DataSpec, ParsesKindsAndRefusesOthers) {
  EXPECT_EQ(ParseDataSpec("csv:rows.csv")->kind, "csv");
  EXPECT_EQ(ParseDataSpec("images:a/b")->path, "a/b");
  EXPECT_EQ(ParseDataSpec("/usr/share/datasets/fashion-mnist")->kind, "idx");
  EXPECT_FALSE(ParseDataSpec("parquet:x").ok());
  EXPECT_FALSE(ParseDataSpec("csv:").ok());
}

}  // namespace
}  // namespace fedberry::runtime::workload_test
