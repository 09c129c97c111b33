#include "checkpoint/inspect.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/test_files.h"

namespace fedberry::checkpoint::inspect_test {
namespace {

std::vector<CheckpointFile> Training(int round, int step) {
  nlohmann::json state = {{"kind", "client-training"},
                          {"round", round},
                          {"task_id", "r1-abc"},
                          {"step", step},
                          {"planned", 150},
                          {"finished", false}};
  return {{"model.pt", std::string(4096, 'm')}, {"state.json", state.dump()}};
}

// Flips one byte of a file inside a checkpoint folder.
void FlipByte(const std::string& path) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(10);
  char c = 0;
  f.read(&c, 1);
  f.seekp(10);
  c = static_cast<char>(c ^ 0x40);
  f.write(&c, 1);
}

class InspectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int step : {10, 20, 30})
      ASSERT_TRUE(store_.Save(Training(2, step)).ok());
  }
  fedberry::testing::TempDir dir_;
  CheckpointStore store_{dir_ / "ckpt"};
};

TEST_F(InspectTest, ListShowsEveryCheckpointWithWhatItHolds) {
  std::ostringstream out;
  ASSERT_TRUE(ListCheckpoints(store_, {}, out).ok());
  const std::string text = out.str();
  EXPECT_NE(text.find("ckpt-00000003"), std::string::npos) << text;
  EXPECT_NE(text.find("training round 2, step 30/150"), std::string::npos)
      << text;
  EXPECT_NE(text.find("step 10/150"), std::string::npos) << text;
  EXPECT_EQ(text.find("CORRUPT"), std::string::npos) << text;
}

TEST_F(InspectTest, VerifyNamesTheCorruptOneAndWhatAResumeLoads) {
  FlipByte(dir_ / "ckpt/ckpt-00000003/model.pt");
  std::ostringstream out;
  absl::Status s = VerifyCheckpoints(store_, "", {}, out);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("ckpt-00000003"), std::string::npos) << s;
  const std::string text = out.str();
  EXPECT_NE(text.find("ckpt-00000003: CORRUPT"), std::string::npos) << text;
  EXPECT_NE(text.find("model.pt"), std::string::npos) << text;
  EXPECT_NE(text.find("ckpt-00000002: ok"), std::string::npos) << text;
  EXPECT_NE(text.find("a resume loads ckpt-00000002"), std::string::npos)
      << text;
  // One good checkpoint verifies on its own.
  std::ostringstream one;
  EXPECT_TRUE(VerifyCheckpoints(store_, "ckpt-00000001", {}, one).ok());
  EXPECT_EQ(VerifyCheckpoints(store_, "ckpt-00000009", {}, one).code(),
            absl::StatusCode::kNotFound);
}

TEST_F(InspectTest, ShowPicksTheCheckpointAResumeWouldLoad) {
  FlipByte(dir_ / "ckpt/ckpt-00000003/state.json");
  std::ostringstream out;
  ASSERT_TRUE(ShowCheckpoint(store_, "", {.json = true}, out).ok());
  nlohmann::json j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["name"], "ckpt-00000002");
  EXPECT_TRUE(j["valid"].get<bool>());
  EXPECT_EQ(j["state"]["step"], 20);
  ASSERT_EQ(j["files"].size(), 2u);
  EXPECT_EQ(j["files"][0]["xxh3"].get<std::string>().size(), 16u);
  // Asked by name, the corrupt one is shown as such.
  std::ostringstream bad;
  ASSERT_TRUE(ShowCheckpoint(store_, "ckpt-00000003", {}, bad).ok());
  EXPECT_NE(bad.str().find("valid:  NO"), std::string::npos) << bad.str();
}

TEST(Inspect, EmptyFolderIsNotFound) {
  fedberry::testing::TempDir dir;
  CheckpointStore store(dir / "none");
  std::ostringstream out;
  EXPECT_EQ(ListCheckpoints(store, {}, out).code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(ShowCheckpoint(store, "", {}, out).code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace fedberry::checkpoint::inspect_test
