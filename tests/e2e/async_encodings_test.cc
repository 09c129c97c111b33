// End to end: asynchronous rounds (fedberry-sim --mode=async) with lossy
// update encodings. An int8 or top-k update is a difference from the model
// its board pulled, which under --mode=async may be versions behind the
// current one: the server decodes it against that version, then rebases it
// (docs/guide/async.md). Each test runs one job twice, with float32 updates
// and with the encoding, on a 6000-image Fashion-MNIST subset and a fleet
// with a 3x slower board (so updates arrive stale), and asks that the
// encoded job publish every version and end near the float32 one: a decode
// against the wrong model or a broken one leaves it far below (chance is
// 0.1). No times are asserted.
//
// Calibration (this x86 host, 2 cores, one or two jobs at once, 6-11 runs
// of each): the best test accuracy of the last six versions was
// 0.768-0.801 with float32 updates, 0.768-0.798 with int8 and 0.758-0.791
// with top-k (10%); the last version alone 0.673-0.801.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/image_dataset.h"
#include "tests/json_lines.h"
#include "tests/run_command.h"
#include "tests/test_files.h"

namespace fedberry::async_encodings_test {
namespace {

using testing::ReadJsonLines;

constexpr int kVersions = 12;
constexpr int kBuffer = 2;
// Below every calibration run; a broken decode stays far under it.
constexpr double kFloor = 0.7;
// The encoded job may end this far below the float32 one (the widest gap
// between two calibration runs was 0.043).
constexpr double kMargin = 0.08;
// The last version alone: lower (one version's figure swings), but a job
// that diverged late falls below it.
constexpr double kLastFloor = 0.6;

// The first `rows` images of each split of Debian's Fashion-MNIST, in `dir`.
void WriteFashionMnistSubset(const std::string& dir) {
  std::filesystem::create_directories(dir);
  for (const auto& [split, name, rows] :
       {std::tuple{runtime::Split::kTrain, "train", 6000},
        std::tuple{runtime::Split::kTest, "t10k", 1000}}) {
    auto data =
        runtime::LoadIdxDataset(runtime::kDefaultFashionMnistDir, split);
    ASSERT_TRUE(data.ok()) << data.status();
    const int64_t pixels = rows * data->height * data->width;
    testing::WriteFile(dir + "/" + name + "-images-idx3-ubyte.gz",
                       testing::IdxBytes({rows, data->height, data->width},
                                         {data->pixels.begin(),
                                          data->pixels.begin() + pixels}),
                       true);
    testing::WriteFile(dir + "/" + name + "-labels-idx1-ubyte.gz",
                       testing::IdxBytes({rows}, {data->labels.begin(),
                                                  data->labels.begin() + rows}),
                       true);
  }
}

struct AsyncJob {
  std::vector<nlohmann::json> rounds;
  double sent_bytes = 0;  // the boards' RPC bytes, summed over the job
  std::string server_log;
};

// The job with `encoding` updates; a failure names what went wrong.
void RunJob(const testing::TempDir& dir, const std::string& encoding,
            AsyncJob& job) {
  const std::string out = dir / encoding;
  int code = 0;
  const std::string log = testing::RunCommand(
      std::string(FEDBERRY_BIN_DIR) + "/fedberry-sim --data=" + (dir / "data") +
          " --fleet_profile=" + (dir / "fleet.txt") +
          " --rounds=" + std::to_string(kVersions) +
          " --mode=async --async_buffer=" + std::to_string(kBuffer) +
          " --local_steps=30 --batch_size=32 --update_encoding=" + encoding +
          " --topk_fraction=0.1 --output=" + out,
      &code);
  ASSERT_EQ(code, 0) << log;
  job.rounds = ReadJsonLines(out + "/rounds.jsonl");
  ASSERT_EQ(job.rounds.size(), static_cast<size_t>(kVersions)) << log;
  for (const auto& c : ReadJsonLines(out + "/clients.jsonl")) {
    job.sent_bytes += c.value("rpc_sent_bytes", 0.0);
  }
  std::ifstream in(out + "/logs/server.log");
  job.server_log.assign(std::istreambuf_iterator<char>(in),
                        std::istreambuf_iterator<char>());
}

// The best test accuracy of the last half of the versions: one version's
// figure swings by several points with the order stale updates arrive in,
// and top-k's error feedback makes the curve wander.
double EndAccuracy(const AsyncJob& job) {
  double best = 0;
  for (size_t i = job.rounds.size() / 2; i < job.rounds.size(); ++i) {
    best = std::max(best, job.rounds[i].at("test_accuracy").get<double>());
  }
  return best;
}

void ExpectNearFloat32(const std::string& encoding) {
  testing::TempDir dir;
  ASSERT_NO_FATAL_FAILURE(WriteFashionMnistSubset(dir / "data"));
  testing::WriteFile(dir / "fleet.txt",
                     "compute_slowdown=1\ncompute_slowdown=1\n"
                     "compute_slowdown=3\n",
                     false);
  AsyncJob float32, encoded;
  ASSERT_NO_FATAL_FAILURE(RunJob(dir, "raw", float32));
  ASSERT_NO_FATAL_FAILURE(RunJob(dir, encoding, encoded));
  int stalest = 0;
  for (const auto& r : encoded.rounds) {
    EXPECT_EQ(r.at("updates").get<int>(), kBuffer) << r;
    EXPECT_EQ(r.at("rejected").get<int>(), 0) << r;
    stalest = std::max(stalest, r.at("staleness_max").get<int>());
  }
  // Some updates were decoded on a version the job had moved past.
  EXPECT_GT(stalest, 0);
  EXPECT_GT(EndAccuracy(encoded), kFloor);
  EXPECT_GT(encoded.rounds.back().at("test_accuracy").get<double>(),
            kLastFloor);
  EXPECT_GE(EndAccuracy(encoded), EndAccuracy(float32) - kMargin)
      << "float32 " << EndAccuracy(float32);
  // The boards sent the encoding: int8 a byte a weight, top-k a tenth of
  // the weights with their indices (a quarter and a fifth of float32's
  // bytes in the calibration runs).
  EXPECT_NE(encoded.server_log.find("updates " + encoding), std::string::npos);
  EXPECT_LT(encoded.sent_bytes, 0.35 * float32.sent_bytes);
}

TEST(AsyncEncodings, Int8UpdatesDecodeOnTheirVersionAndEndNearFloat32) {
  ExpectNearFloat32("int8");
}

TEST(AsyncEncodings, TopKUpdatesDecodeOnTheirVersionAndEndNearFloat32) {
  ExpectNearFloat32("topk");
}

}  // namespace
}  // namespace fedberry::async_encodings_test
