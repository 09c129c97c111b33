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

namespace fedberry {
namespace {

using testing::RunCommand;

TEST(Sim, SmallJobRunsToTheEndAboveChance) {
  testing::TempDir dir;
  testing::WriteTinyDataset(dir.path(), 600);
  int code = 0;
  const std::string out = RunCommand(
      std::string(FEDBERRY_BIN_DIR) + "/fedberry-sim --clients=2 --rounds=2 " +
          "--local_steps=20 --batch_size=16 --lr=0.02 --data=" + dir.path() +
          " --output=" + (dir / "out"),
      &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("round 2/2"), std::string::npos) << out;
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
}  // namespace fedberry
