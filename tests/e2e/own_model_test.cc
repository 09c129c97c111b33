// End to end with a user's own model and data, as docs/guide/own-model.md
// walks through it: a TorchScript module exported by python3-torch, shipped by a real
// fedberry-server as the job's plan, trained by real fedberry-client
// processes on CSV rows and on an image folder; boards whose data does not
// fit, and boards pinned to another model.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "sim/process.h"
#include "tests/run_command.h"
#include "tests/test_files.h"
#include "tests/torchscript_export.h"

namespace fedberry::own_model_test {
namespace {

const std::string kBin = FEDBERRY_BIN_DIR;
const std::string kExamples = FEDBERRY_SOURCE_DIR "/examples";

using testing::RunCommand;

std::string Python(const std::string& script_and_args) {
  int code = 0;
  std::string out =
      RunCommand(std::string(testing::kPython) + " " + script_and_args, &code);
  EXPECT_EQ(code, 0) << out;
  return out;
}

std::vector<nlohmann::json> Lines(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line));
  return out;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

class OwnModel : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::HavePythonTorch()) {
      GTEST_SKIP() << "needs /usr/bin/python3 with python3-torch";
    }
  }
  testing::TempDir dir_;
};

constexpr char kFeatures[] =
    "temp,vibration,current,voltage,rpm,pressure,humidity,noise";

TEST_F(OwnModel, TorchScriptOnCsvRowsSplitAcrossThreeBoards) {
  Python(kExamples + "/make_sensor_csv.py --out " + (dir_ / "sensors") +
         " --boards 1 --rows 1500 --test_rows 600");
  Python(kExamples + "/export_tabular.py --features 8 --classes 3 --out " +
         (dir_ / "tabular.pt"));
  int code = 0;
  const std::string out = RunCommand(
      kBin + "/fedberry-sim --clients=3 --rounds=3 --batch_size=16 " +
          "--model=" + (dir_ / "tabular.pt") + " --optimizer=adam --lr=0.01" +
          " --data=csv:" + (dir_ / "sensors/board-0.csv") +
          " --eval_data=csv:" + (dir_ / "sensors/test.csv") +
          " --label_column=state --feature_columns=" + kFeatures +
          " --output=" + (dir_ / "out"),
      &code);
  ASSERT_EQ(code, 0) << out;
  auto rounds = Lines(dir_ / "out/rounds.jsonl");
  ASSERT_EQ(rounds.size(), 3u) << out;
  for (const auto& r : rounds) EXPECT_EQ(r["participants"].get<int>(), 3);
  // Three well-separated machine states: near-perfect after three rounds.
  EXPECT_GE(rounds.back()["test_accuracy"].get<double>(), 0.95) << out;
  // The model file crossed the wire once per board, verified, and cached.
  for (int i = 0; i < 3; ++i) {
    const std::string log =
        dir_ / ("out/logs/client-" + std::to_string(i) + ".log");
    EXPECT_EQ(testing::CountLines(log, "fetched model file"), 1) << log;
    EXPECT_EQ(testing::CountLines(log, "SHA-256 verified"), 1) << log;
    EXPECT_EQ(testing::CountLines(log, "shard " + std::to_string(i) + "/3"), 1)
        << Slurp(log);
  }
  // The trained module, for torch.jit.load in Python.
  EXPECT_NE(Python("-c \"import torch; m = torch.jit.load('" +
                   (dir_ / "out/global_model.script.pt") +
                   "'); print(tuple(m(torch.zeros(2, 8)).shape))\"")
                .find("(2, 3)"),
            std::string::npos);
  // The CSV's compact binary copy sits beside it.
  bool cached = false;
  for (const auto& e : std::filesystem::directory_iterator(dir_ / "sensors")) {
    cached |= e.path().filename().string().find("board-0.csv.fedberry-") == 0;
  }
  EXPECT_TRUE(cached);
}

TEST_F(OwnModel, RegressionReportsRmse) {
  // Predict the vibration reading from the others: a regression on the same
  // rows.
  Python(kExamples + "/make_sensor_csv.py --out " + (dir_ / "sensors") +
         " --boards 1 --rows 900 --test_rows 300");
  Python(kExamples + "/export_tabular.py --features 7 --classes 0 --out " +
         (dir_ / "reg.pt"));
  int code = 0;
  const std::string out = RunCommand(
      kBin + "/fedberry-sim --clients=2 --rounds=3 --batch_size=16 " +
          "--model=" + (dir_ / "reg.pt") +
          " --task=regression --loss=l1 --optimizer=adamw --lr=0.01" +
          " --data=csv:" + (dir_ / "sensors/board-0.csv") +
          " --eval_data=csv:" + (dir_ / "sensors/test.csv") +
          " --label_column=vibration" +
          " --feature_columns=temp,current,voltage,rpm,pressure," +
          "humidity,noise --output=" + (dir_ / "out"),
      &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("test_rmse"), std::string::npos) << out;
  auto rounds = Lines(dir_ / "out/rounds.jsonl");
  ASSERT_EQ(rounds.size(), 3u);
  ASSERT_TRUE(rounds.back().contains("test_mae")) << rounds.back().dump();
  EXPECT_FALSE(rounds.back().contains("test_accuracy"));
  // Vibration is 0.1, 0.5 or 1.4 by machine state (noise 0.25): predicting
  // its mean is about 0.5 off on average; a model that reads the state from
  // the other sensors does better.
  EXPECT_LT(rounds.back()["test_mae"].get<double>(), 0.35) << out;
  EXPECT_NE(Slurp(dir_ / "out/report.html").find("plot-error"),
            std::string::npos);
}

TEST_F(OwnModel, TorchScriptCnnOnAnImageFolder) {
  Python(kExamples + "/make_shape_images.py --out " + (dir_ / "shapes") +
         " --size 16 --train 60 --test 20");
  Python(kExamples + "/export_cnn.py --channels 3 --size 16 --classes 3 " +
         "--out " + (dir_ / "cnn.pt"));
  int code = 0;
  const std::string out = RunCommand(
      kBin + "/fedberry-sim --clients=3 --rounds=4 --local_epochs=3 " +
          "--batch_size=8 --model=" + (dir_ / "cnn.pt") +
          " --optimizer=adam --lr=0.01" +
          " --data=images:" + (dir_ / "shapes/train") +
          " --eval_data=images:" + (dir_ / "shapes/test") +
          " --input_shape=3,16,16 --output=" + (dir_ / "out"),
      &code);
  ASSERT_EQ(code, 0) << out;
  auto rounds = Lines(dir_ / "out/rounds.jsonl");
  ASSERT_EQ(rounds.size(), 4u) << out;
  // Circles, squares and stripes: far above chance (1/3).
  EXPECT_GE(rounds.back()["test_accuracy"].get<double>(), 0.8) << out;
  EXPECT_NE(Slurp(dir_ / "out/logs/server.log")
                .find("3 classes (circle, "
                      "square, stripes)"),
            std::string::npos);
}

// A model that does not take the data's shape fails at the server's start,
// before any board joins, naming the model and the shapes.
TEST_F(OwnModel, AModelThatDoesNotFitTheDataFailsAtStart) {
  Python(kExamples + "/make_sensor_csv.py --out " + (dir_ / "sensors") +
         " --boards 1 --rows 50 --test_rows 50");
  Python(kExamples + "/export_tabular.py --features 5 --classes 3 --out " +
         (dir_ / "five.pt"));
  int code = 0;
  const std::string out = RunCommand(
      kBin + "/fedberry-server --listen=127.0.0.1:0 --model=" +
          (dir_ / "five.pt") + " --eval_data=csv:" +
          (dir_ / "sensors/test.csv") + " --label_column=state " +
          "--feature_columns=" + kFeatures + " --output=" + (dir_ / "out"),
      &code);
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("five.pt"), std::string::npos) << out;
  EXPECT_NE(out.find("[4, 8]"), std::string::npos) << out;  // the batch given
  // A file that is not TorchScript at all.
  std::ofstream(dir_ / "notes.pt") << "hello";
  const std::string bad = RunCommand(
      kBin + "/fedberry-server --listen=127.0.0.1:0 --model=" +
          (dir_ / "notes.pt") + " --eval_data=csv:" +
          (dir_ / "sensors/test.csv") + " --label_column=state " +
          "--feature_columns=" + kFeatures + " --output=" + (dir_ / "out2"),
      &code);
  EXPECT_EQ(code, 2) << bad;
  EXPECT_NE(bad.find("is not a TorchScript module"), std::string::npos) << bad;
}

// A board whose data does not fit the plan says why; the server logs it and
// lists it in clients.jsonl; the board waits instead of crash-looping. A
// board pinned to another model refuses the job and exits.
TEST_F(OwnModel, BoardsThatDoNotFitAreToldAndListed) {
  Python(kExamples + "/make_sensor_csv.py --out " + (dir_ / "sensors") +
         " --boards 1 --rows 60 --test_rows 60");
  Python(kExamples + "/export_tabular.py --features 8 --classes 3 --out " +
         (dir_ / "tabular.pt"));
  // This board's rows lack the label column the plan names.
  std::ofstream(dir_ / "other.csv") << "a,b\n1,2\n3,4\n";
  const std::string out = dir_ / "out";
  std::filesystem::create_directories(out);
  auto server = sim::Process::Spawn(
      {kBin + "/fedberry-server", "--listen=127.0.0.1:0",
       "--model=" + (dir_ / "tabular.pt"),
       "--eval_data=csv:" + (dir_ / "sensors/test.csv"), "--label_column=state",
       std::string("--feature_columns=") + kFeatures, "--output=" + out,
       "--rounds=1", "--min_clients=1", "--min_clients_to_start=1"},
      out + "/server.log");
  ASSERT_TRUE(server.ok());
  std::string address;
  for (int i = 0; i < 3000 && address.empty(); ++i) {
    std::ifstream f(out + "/server.addr");
    std::getline(f, address);
    if (address.empty()) usleep(10000);
  }
  ASSERT_FALSE(address.empty()) << Slurp(out + "/server.log");
  auto unfit = sim::Process::Spawn(
      {kBin + "/fedberry-client", "--server=" + address,
       "--data=csv:" + (dir_ / "other.csv"), "--name=board-unfit",
       "--cache_dir=" + (dir_ / "cache-unfit")},
      out + "/unfit.log");
  ASSERT_TRUE(unfit.ok());
  int code = 0;
  const std::string pinned = RunCommand(
      kBin + "/fedberry-client --server=" + address +
          " --data=csv:" + (dir_ / "sensors/board-0.csv") +
          " --name=board-pinned " + "--model_sha256=" + std::string(64, '0') +
          " --cache_dir=" + (dir_ / "cache-pinned"),
      &code);
  EXPECT_EQ(code, 1) << pinned;
  EXPECT_NE(pinned.find("accepts only"), std::string::npos) << pinned;
  EXPECT_EQ(pinned.find("fetched model file"), std::string::npos) << pinned;
  // The unfit board is listed and keeps waiting.
  for (int i = 0; i < 1000; ++i) {
    if (testing::CountLines(out + "/clients.jsonl", "plan_refused") > 0) break;
    usleep(10000);
  }
  const std::string listed = Slurp(out + "/clients.jsonl");
  EXPECT_NE(listed.find("board-unfit"), std::string::npos) << listed;
  EXPECT_NE(listed.find("state"), std::string::npos) << listed;  // the reason
  EXPECT_NE(Slurp(out + "/server.log").find("cannot take part"),
            std::string::npos);
  EXPECT_FALSE(unfit->Poll().has_value()) << Slurp(out + "/unfit.log");
  // The server lists the board while answering its Join; the board logs
  // the refusal once the answer arrives.
  for (int i = 0; i < 1000; ++i) {
    if (Slurp(out + "/unfit.log").find("asking for the job's plan again") !=
        std::string::npos) {
      break;
    }
    usleep(10000);
  }
  EXPECT_NE(Slurp(out + "/unfit.log").find("asking for the job's plan again"),
            std::string::npos)
      << Slurp(out + "/unfit.log");
  unfit->Signal(SIGTERM);
  server->Signal(SIGTERM);
  while (!unfit->Poll()) usleep(10000);
  while (!server->Poll()) usleep(10000);
}

}  // namespace
}  // namespace fedberry::own_model_test
