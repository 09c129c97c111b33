// End to end: evaluation on the boards with the real fedberry-sim, server
// and client processes on the bundled Fashion-MNIST data.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/reserved_port.h"
#include "tests/run_command.h"
#include "tests/test_files.h"

namespace fedberry::board_eval_test {
namespace {

using testing::RunCommand;

std::vector<nlohmann::json> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<nlohmann::json> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

// Per-board evaluation lines of `round` in clients.jsonl.
int EvaluationLines(const std::string& out, int round) {
  int n = 0;
  for (const auto& j : Lines(out + "/clients.jsonl")) {
    n += j.value("event", "") == "evaluation" && j.value("round", 0) == round;
  }
  return n;
}

std::string Sim(const std::string& flags, const std::string& out) {
  int code = 0;
  const std::string printed =
      RunCommand(std::string(FEDBERRY_BIN_DIR) + "/fedberry-sim " + flags +
                     " --output=" + out,
                 &code);
  EXPECT_EQ(code, 0) << printed;
  return printed;
}

// The same model evaluated by the server on the test split and by the
// boards on the shares they hold out of the training split: the two
// estimate the same accuracy, so they agree within 3 points (each covers
// 10,000+ samples: a standard error under half a point).
TEST(BoardEval, TheBoardsFigureAgreesWithTheServersOnTheSameModel) {
  testing::TempDir dir;
  const std::string out = dir / "out";
  const std::string printed =
      Sim("--clients=3 --rounds=2 --evaluate_on_boards=0.2", out);
  const auto rounds = Lines(out + "/rounds.jsonl");
  ASSERT_EQ(rounds.size(), 2u) << printed;
  for (const auto& r : rounds) {
    ASSERT_TRUE(r.contains("boards_eval_accuracy")) << r.dump();
    ASSERT_TRUE(r.contains("test_accuracy")) << r.dump();
    EXPECT_NEAR(r["boards_eval_accuracy"].get<double>(),
                r["test_accuracy"].get<double>(), 0.03)
        << r.dump();
    EXPECT_EQ(r["boards_eval_boards"].get<int>(), 3) << r.dump();
    // 20,000 samples a board, a fifth held out.
    EXPECT_EQ(r["boards_eval_samples"].get<int>(), 12000) << r.dump();
    EXPECT_LE(r["boards_eval_min"].get<double>(),
              r["boards_eval_median"].get<double>());
    EXPECT_LE(r["boards_eval_median"].get<double>(),
              r["boards_eval_max"].get<double>());
    // Held-out samples are not trained on: each board trained on 16,000.
    EXPECT_FALSE(r.contains("eval_overlapped") &&
                 r["eval_overlapped"].get<bool>());
  }
  for (const auto& j : Lines(out + "/clients.jsonl")) {
    if (!j.contains("event")) {
      EXPECT_EQ(j["num_samples"].get<int>(), 16000);
    }
  }
  EXPECT_EQ(EvaluationLines(out, 2), 3);
  EXPECT_NE(printed.find("boards_eval_accuracy"), std::string::npos) << printed;
}

// A gateway with no labelled data of its own: the job is measured on the
// boards only, every other round and always at its end (every board still
// there), with the boards' personalised figure beside it.
TEST(BoardEval, AJobWithNoServerDataIsMeasuredOnTheBoards) {
  testing::TempDir dir;
  const std::string out = dir / "out";
  const std::string printed =
      Sim("--clients=2 --rounds=3 --eval_data= --evaluate_on_boards=0.1 "
          "--board_eval_every=2 --personalize_steps=10",
          out);
  const auto rounds = Lines(out + "/rounds.jsonl");
  ASSERT_EQ(rounds.size(), 3u) << printed;
  for (const auto& r : rounds) {
    EXPECT_FALSE(r.contains("test_accuracy")) << r.dump();
  }
  EXPECT_FALSE(rounds[0].contains("boards_eval_accuracy"));
  for (int i : {1, 2}) {
    const auto& r = rounds[i];
    ASSERT_TRUE(r.contains("boards_eval_accuracy")) << r.dump();
    EXPECT_GT(r["boards_eval_accuracy"].get<double>(), 0.5) << r.dump();
    EXPECT_EQ(r["boards_eval_boards"].get<int>(), 2) << r.dump();
    ASSERT_TRUE(r.contains("boards_eval_personalized_accuracy")) << r.dump();
    EXPECT_GT(r["boards_eval_personalized_accuracy"].get<double>(), 0.5);
  }
  EXPECT_EQ(EvaluationLines(out, 3), 2);
  EXPECT_NE(printed.find("boards' accuracy"), std::string::npos) << printed;
  std::ifstream report(out + "/report.html");
  const std::string html((std::istreambuf_iterator<char>(report)),
                         std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("id=\"plot-boards-eval\""), std::string::npos);
  EXPECT_NE(html.find("id=\"plot-boards-eval-per-board\""), std::string::npos);
}

// A model checked across the fleet before it is deployed: no training,
// the boards evaluate the given weights on their held-out shares (the same
// samples the job that trained them held out: the same seed and share).
TEST(BoardEval, EvaluateOnlyChecksAGivenModelOnTheBoards) {
  testing::TempDir dir;
  const std::string trained = dir / "trained";
  Sim("--clients=2 --rounds=2 --eval_data= --evaluate_on_boards=0.2", trained);
  const auto rounds = Lines(trained + "/rounds.jsonl");
  ASSERT_EQ(rounds.size(), 2u);
  const double trained_figure =
      rounds.back()["boards_eval_accuracy"].get<double>();

  const std::string bin = FEDBERRY_BIN_DIR;
  const std::string out = dir / "check";
  absl::StatusOr<sim::ReservedPort> port = sim::ReservedPort::On("127.0.0.1");
  ASSERT_TRUE(port.ok()) << port.status();
  const std::string address = "127.0.0.1:" + std::to_string(port->port());
  const std::string client =
      bin + "/fedberry-client --server=" + address +
      " --server_ready_file=" + out +
      "/server.addr --give_up_after=60s --partition_count=2 ";
  int code = 0;
  const std::string printed = RunCommand(
      "(" + bin + "/fedberry-server --listen=" + address +
          " --evaluate_only "
          "--evaluate_on_boards=0.2 --eval_data= --min_clients_to_start=2 "
          "--weights=" +
          trained + "/global_model.pt --output=" + out + " & " + client +
          "--partition_index=0 --name=sim-client-0 & " + client +
          "--partition_index=1 --name=sim-client-1 & wait)",
      &code);
  ASSERT_EQ(code, 0) << printed;
  const auto check = Lines(out + "/rounds.jsonl");
  ASSERT_EQ(check.size(), 1u) << printed;
  EXPECT_EQ(check[0]["round"].get<int>(), 0);
  EXPECT_EQ(check[0]["participants"].get<int>(), 0);  // nobody trained
  EXPECT_EQ(check[0]["boards_eval_boards"].get<int>(), 2);
  // The same model on the same held-out samples: the same figure.
  EXPECT_DOUBLE_EQ(check[0]["boards_eval_accuracy"].get<double>(),
                   trained_figure);
  EXPECT_NE(printed.find("evaluate-only job ended"), std::string::npos)
      << printed;
}

TEST(BoardEval, ASettingOutOfRangeIsAClearError) {
  testing::TempDir dir;
  int code = 0;
  const std::string printed =
      RunCommand(std::string(FEDBERRY_BIN_DIR) +
                     "/fedberry-server --listen=127.0.0.1:0 --eval_data= "
                     "--evaluate_on_boards=1.5 --output=" +
                     (dir / "out"),
                 &code);
  EXPECT_EQ(code, 2) << printed;
  EXPECT_NE(printed.find("--evaluate_on_boards"), std::string::npos) << printed;
  const std::string personal =
      RunCommand(std::string(FEDBERRY_BIN_DIR) +
                     "/fedberry-server --listen=127.0.0.1:0 --eval_data= "
                     "--personalize_steps=5 --output=" +
                     (dir / "out2"),
                 &code);
  EXPECT_EQ(code, 2) << personal;
  EXPECT_NE(personal.find("it needs --evaluate_on_boards"), std::string::npos)
      << personal;
}

}  // namespace
}  // namespace fedberry::board_eval_test
