// A board's SecAgg+ session seen from its checkpoint folder: a board
// restored after it sent its masked input (a checkpoint restore, a CRIU
// restore to an earlier point) must refuse to mask again before it calls
// the gateway at all, and the gateway's session name never leaves that
// folder. The stub is null: any call would crash the test.
#include "client/secagg_board.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cerrno>
#include <string>
#include <vector>

#include "base/file_system.h"
#include "secagg/board_state.h"
#include "secagg/random_source.h"
#include "secagg/wire_messages.h"
#include "tests/test_files.h"

namespace fedberry::client {
namespace {

secagg::BoardTaskSettings Settings(const std::string& session) {
  secagg::BoardTaskSettings s;
  s.config.session = session;
  s.config.round = 3;
  s.config.cohort = 4;
  s.config.neighbours = 3;
  s.config.threshold = 2;
  s.config.bits = 32;
  s.config.vector_length = 4;
  s.board = 1;
  s.clip = 1.0;
  s.weight_cap = 100;
  return s;
}

v1::GetTaskResponse Task(const secagg::BoardTaskSettings& s) {
  v1::GetTaskResponse task;
  task.set_round(s.config.round);
  task.set_task_id("task-3");
  *task.mutable_secagg() = secagg::ToProto(s);
  return task;
}

// The state a board keeps once it reached `stage` of `s`'s session.
std::string SavedState(const secagg::BoardTaskSettings& s,
                       secagg::BoardStage stage) {
  secagg::BoardState state;
  state.config = s.config;
  state.board = s.board;
  state.stage = stage;
  auto transport = secagg::GenerateKeyPair(secagg::OsRandom());
  auto mask = secagg::GenerateKeyPair(secagg::OsRandom());
  EXPECT_TRUE(transport.ok() && mask.ok());
  state.transport = *transport;
  state.mask = *mask;
  const std::vector<uint8_t> bytes = secagg::SerializeBoardState(state);
  return std::string(bytes.begin(), bytes.end());
}

class SecAggBoardTest : public ::testing::Test {
 protected:
  SecAggCalls Calls() {
    SecAggCalls calls;
    calls.stub = nullptr;  // a call would dereference it
    calls.fs = &base::FileSystem::Default();
    calls.state_dir = dir_.path() + "/secagg";
    return calls;
  }
  TrainOutcome Outcome() {
    TrainOutcome outcome;
    outcome.num_samples = 10;
    return outcome;
  }

  testing::TempDir dir_;
};

TEST_F(SecAggBoardTest, ARestoredBoardThatMaskedRefusesToMaskAgain) {
  for (secagg::BoardStage stage :
       {secagg::BoardStage::kMasked, secagg::BoardStage::kUnmasked}) {
    const secagg::BoardTaskSettings s = Settings("job-7-round-3");
    SecAggCalls calls = Calls();
    ASSERT_TRUE(mkdir(calls.state_dir.c_str(), 0700) == 0 || errno == EEXIST);
    testing::WriteFile(calls.state_dir + "/secagg-job-7-round-3.state",
                       SavedState(s, stage), /*gzip=*/false);
    uint64_t sent = 0;
    const absl::Status status = SendMaskedUpdate(
        calls, "board-1", Task(s), runtime::NamedTensors{}, Outcome(), &sent);
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
    EXPECT_NE(status.message().find("already sent its masked input"),
              std::string::npos)
        << status;
    EXPECT_NE(status.message().find("job-7-round-3"), std::string::npos);
    EXPECT_EQ(sent, 0u) << "nothing may leave a board that masked";
  }
}

TEST_F(SecAggBoardTest, AStateFromBeforeMaskingDoesNotBlockTheSession) {
  // Saved after sharing keys only: the board has not masked, so the
  // restore does not refuse; it fails later, on the empty model, before
  // any call (the words cannot be made).
  const secagg::BoardTaskSettings s = Settings("job-7-round-4");
  SecAggCalls calls = Calls();
  ASSERT_EQ(mkdir(calls.state_dir.c_str(), 0700), 0);
  testing::WriteFile(calls.state_dir + "/secagg-job-7-round-4.state",
                     SavedState(s, secagg::BoardStage::kSharedKeys),
                     /*gzip=*/false);
  const absl::Status status = SendMaskedUpdate(
      calls, "board-1", Task(s), runtime::NamedTensors{}, Outcome(), nullptr);
  EXPECT_NE(status.code(), absl::StatusCode::kFailedPrecondition) << status;
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
}

TEST_F(SecAggBoardTest, ACorruptStateIsAnErrorNotANewSession) {
  const secagg::BoardTaskSettings s = Settings("job-7-round-5");
  SecAggCalls calls = Calls();
  ASSERT_EQ(mkdir(calls.state_dir.c_str(), 0700), 0);
  std::string state = SavedState(s, secagg::BoardStage::kMasked);
  state.resize(state.size() / 2);
  testing::WriteFile(calls.state_dir + "/secagg-job-7-round-5.state", state,
                     /*gzip=*/false);
  const absl::Status status = SendMaskedUpdate(
      calls, "board-1", Task(s), runtime::NamedTensors{}, Outcome(), nullptr);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
}

TEST_F(SecAggBoardTest, ASessionNameThatIsNotPlainIsRefused) {
  for (const std::string name : {"../escape", "a/b", "name with space"}) {
    secagg::BoardTaskSettings s = Settings("placeholder");
    v1::GetTaskResponse task = Task(s);
    task.mutable_secagg()->set_session(name);
    const absl::Status status = SendMaskedUpdate(
        Calls(), "board-1", task, runtime::NamedTensors{}, Outcome(), nullptr);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_NE(status.message().find("letters, digits or '-'"),
              std::string::npos)
        << status;
  }
}

}  // namespace
}  // namespace fedberry::client
