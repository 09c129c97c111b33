// End to end: the real fedberry-sim binary starts a real server and real
// client processes on loopback and trains on a small IDX data set.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/run_command.h"
#include "tests/test_files.h"

namespace fedberry::sim_test {
namespace {

using testing::RunCommand;

TEST(Sim, SmallJobRunsToTheEndAboveChance) {
  testing::TempDir dir;
  testing::WriteTinyDataset(dir.path(), 600);
  int code = 0;
  const std::string out = RunCommand(
      std::string(FEDBERRY_BIN_DIR) + "/fedberry-sim --clients=2 --rounds=2 " +
          "--local_steps=20 --batch_size=16 --lr=0.02 --data=" + dir.path() +
          " --board_rss_budget=1MiB --output=" + (dir / "out"),
      &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("round 2/2"), std::string::npos) << out;
  // A board over the budget it was given is flagged in the table and named.
  EXPECT_NE(out.find("budget_MiB"), std::string::npos) << out;
  EXPECT_NE(out.find("OVER BUDGET"), std::string::npos) << out;
  EXPECT_NE(out.find("fedberry-sim: client-1 peaked at"), std::string::npos)
      << out;
  EXPECT_NE(out.find("over its 1.0 MiB (--board_rss_budget)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("test_accuracy"), std::string::npos) << out;

  std::ifstream rounds(dir / "out/rounds.jsonl");
  std::string line, last;
  int lines = 0;
  while (std::getline(rounds, line)) {
    last = line;
    ++lines;
  }
  ASSERT_EQ(lines, 2) << out;
  auto j = nlohmann::json::parse(last);
  EXPECT_EQ(j["participants"].get<int>(), 2);
  EXPECT_GT(j["test_accuracy"].get<double>(), 0.3) << last;  // chance: 0.1
  std::ifstream model(dir / "out/global_model.pt");
  EXPECT_TRUE(model.good());
  // The resource table and the report.
  EXPECT_NE(out.find("peak_rss_MiB"), std::string::npos) << out;
  EXPECT_NE(out.find("samples/s"), std::string::npos) << out;
  EXPECT_NE(out.find("sim-client-1"), std::string::npos) << out;
  std::ifstream report(dir / "out/report.html");
  const std::string html((std::istreambuf_iterator<char>(report)),
                         std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("id=\"plot-cpu\""), std::string::npos);
  EXPECT_NE(html.find("id=\"plot-round-time\""), std::string::npos);
}

// The last round's line of a sim's rounds.jsonl.
nlohmann::json LastRound(const std::string& out) {
  std::ifstream rounds(out + "/rounds.jsonl");
  std::string line, last;
  while (std::getline(rounds, line)) last = line;
  return last.empty() ? nlohmann::json() : nlohmann::json::parse(last);
}

// What the clients' RPC counters say they sent, summed over the job.
double BytesSent(const std::string& out) {
  std::ifstream clients(out + "/clients.jsonl");
  std::string line;
  double sent = 0;
  while (std::getline(clients, line)) {
    sent += nlohmann::json::parse(line).value("rpc_sent_bytes", 0.0);
  }
  return sent;
}

// The default job (4 clients, Fashion-MNIST, 5 rounds) under a server
// optimizer with int8 updates ends within a point of plain FedAvg.
TEST(Sim, FedAdamWithInt8UpdatesIsWithinAPointOfFedAvg) {
  testing::TempDir dir;
  const std::string sim = std::string(FEDBERRY_BIN_DIR) + "/fedberry-sim";
  int code = 0;
  const std::string fedavg =
      RunCommand(sim + " --output=" + (dir / "fedavg"), &code);
  ASSERT_EQ(code, 0) << fedavg;
  const std::string fedadam =
      RunCommand(sim + " --strategy=fedadam --update_encoding=int8 --output=" +
                     (dir / "fedadam"),
                 &code);
  ASSERT_EQ(code, 0) << fedadam;
  const nlohmann::json a = LastRound(dir / "fedavg");
  const nlohmann::json b = LastRound(dir / "fedadam");
  ASSERT_EQ(a.value("round", 0), 5) << fedavg;
  ASSERT_EQ(b.value("round", 0), 5) << fedadam;
  EXPECT_EQ(b.value("participants", 0), 4) << b;
  EXPECT_EQ(b.value("rejected", -1), 0) << b;
  const double fedavg_accuracy = a["test_accuracy"].get<double>();
  const double fedadam_accuracy = b["test_accuracy"].get<double>();
  EXPECT_GT(fedavg_accuracy, 0.8) << a;
  EXPECT_GE(fedadam_accuracy, fedavg_accuracy - 0.01) << a << "\n" << b;
  // The server ran the asked strategy and the boards sent int8: a byte a
  // weight instead of four, plus the messages' own bytes.
  EXPECT_LT(BytesSent(dir / "fedadam"), 0.35 * BytesSent(dir / "fedavg"));
  std::ifstream log(dir / "fedadam/logs/server.log");
  const std::string text((std::istreambuf_iterator<char>(log)),
                         std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("strategy fedadam"), std::string::npos) << text;
  EXPECT_NE(text.find("updates int8"), std::string::npos) << text;
}

TEST(Sim, MissingDataIsAClearError) {
  testing::TempDir dir;
  int code = 0;
  const std::string out = RunCommand(
      std::string(FEDBERRY_BIN_DIR) + "/fedberry-sim --clients=1 --rounds=1 " +
          "--data=" + dir.path() + "/nothing --output=" + (dir / "out"),
      &code);
  EXPECT_NE(code, 0) << out;
  std::ifstream log(dir / "out/logs/server.log");
  std::string text((std::istreambuf_iterator<char>(log)),
                   std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("t10k-labels-idx1-ubyte"), std::string::npos) << text;
}

TEST(Report, MissingInputIsAClearError) {
  testing::TempDir dir;
  int code = 0;
  const std::string out =
      RunCommand(std::string(FEDBERRY_BIN_DIR) +
                     "/fedberry-report --input=" + dir.path() + "/nothing",
                 &code);
  EXPECT_NE(code, 0) << out;
  EXPECT_NE(out.find("rounds.jsonl"), std::string::npos) << out;
}

TEST(Binaries, HelpDescribesTheFlags) {
  for (const char* bin : {"fedberry-server", "fedberry-client", "fedberry-sim",
                          "fedberry-report"}) {
    int code = 0;
    const std::string out = RunCommand(
        std::string(FEDBERRY_BIN_DIR) + "/" + bin + " --help", &code);
    EXPECT_NE(out.find("Usage"), std::string::npos) << bin << ": " << out;
    EXPECT_NE(out.find("--"), std::string::npos) << bin;
  }
}

}  // namespace
}  // namespace fedberry::sim_test
