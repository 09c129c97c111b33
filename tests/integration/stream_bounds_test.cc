// The server's stream bounds against callers that hold places without
// using them: readers that never read are cut off and logged, one caller
// holds no more than its share, and update pushes beyond
// --max_inflight_updates wait for a go-ahead instead of being bounced.
// A real in-process server and raw stubs on loopback.
#include <gtest/gtest.h>

#include <future>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "proto/wire.h"
#include "runtime/model_zoo.h"
#include "server/federation_server.h"
#include "spdlog/sinks/ostream_sink.h"
#include "spdlog/spdlog.h"
#include "tests/zero_window_caller.h"

namespace fedberry::stream_bounds_test {
namespace {

// Keeps the server's log lines while it lives.
class CapturedLog {
 public:
  CapturedLog()
      : sink_(std::make_shared<spdlog::sinks::ostream_sink_mt>(text_)) {
    spdlog::default_logger()->sinks().push_back(sink_);
  }
  ~CapturedLog() {
    auto& sinks = spdlog::default_logger()->sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
  }
  std::string Text() {
    spdlog::default_logger()->flush();
    return text_.str();
  }

 private:
  std::ostringstream text_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
};

// A stub on a connection of its own whose receive window stays small (no
// bandwidth probe), so a stream it stops reading stalls.
std::unique_ptr<v1::Federation::Stub> OwnConnection(
    const std::string& address) {
  grpc::ChannelArguments args = wire::ClientChannelArguments();
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  return v1::Federation::NewStub(grpc::CreateCustomChannel(
      address, grpc::InsecureChannelCredentials(), args));
}

std::unique_ptr<grpc::ClientContext> Call(absl::Duration deadline) {
  auto c = std::make_unique<grpc::ClientContext>();
  wire::SetDeadline(*c, deadline);
  return c;
}

server::ServerOptions SmallJob(int boards) {
  server::ServerOptions o;
  o.listen = "127.0.0.1:0";
  o.coordinator.train.set_model("mlp");
  o.coordinator.rounds = 1;
  o.coordinator.min_clients_per_round = boards;
  o.coordinator.min_clients_to_start = boards;
  o.coordinator.max_update_ratio = 0;
  o.max_poll = absl::Milliseconds(500);
  o.done_grace = absl::Seconds(1);
  return o;
}

// Readers that open model file streams and never read (a zero receive
// window, pings answered) held every place until --max_stream_time (10
// min) and nothing was logged: a board's pull timed out behind them.
TEST(StreamBounds, ReadersThatNeverReadAreCutOffAndABoardStillPulls) {
  server::ServerOptions o = SmallJob(1);
  o.max_streams = 2;
  o.max_streams_per_caller = 2;
  o.stream_stall_time = absl::Seconds(1);
  const std::string sha(64, 'a');
  o.plan.plan.set_model_format("torchscript");
  o.plan.plan.set_model_sha256(sha);
  o.plan.model_file = std::make_shared<const std::string>(3 << 20, 'm');
  CapturedLog log;
  auto server = server::FederationServer::Start(
      o, (*runtime::MakeImageModel("mlp"))->State(), nullptr, nullptr);
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string address = (*server)->address();
  v1::PullModelFileRequest request;
  request.set_model_sha256(sha);
  const std::string path = "/fedberry.v1.Federation/PullModelFile";

  // One reader holds both places and asks for a third, beyond its share;
  // another waits for a place.
  auto greedy = testing::ZeroWindowCaller::Connect(address);
  auto patient = testing::ZeroWindowCaller::Connect(address);
  ASSERT_TRUE(greedy.ok() && patient.ok());
  const int held1 = (*greedy)->Open(path, request.SerializeAsString());
  const int held2 = (*greedy)->Open(path, request.SerializeAsString());
  const int beyond = (*greedy)->Open(path, request.SerializeAsString());
  // Refused at once (the counters below say why).
  ASSERT_NE((*greedy)->WaitForEnd(beyond, absl::Seconds(30)),
            testing::ZeroWindowCaller::End::kOpen);
  const int waiting = (*patient)->Open(path, request.SerializeAsString());

  // A board pulls the whole file all the same.
  auto board = OwnConnection(address);
  auto board_call = Call(absl::Seconds(30));
  auto pull = board->PullModelFile(board_call.get(), request);
  v1::ModelFileChunk chunk;
  uint64_t bytes = 0;
  while (pull->Read(&chunk)) bytes += chunk.data().size();
  const grpc::Status pulled = pull->Finish();
  ASSERT_TRUE(pulled.ok()) << pulled.error_message();
  EXPECT_EQ(bytes, o.plan.model_file->size());

  // The readers were cut off, each in its turn (a reset, or trailers
  // first, as gRPC sends them).
  for (int stream : {held1, held2}) {
    EXPECT_NE((*greedy)->WaitForEnd(stream, absl::Seconds(30)),
              testing::ZeroWindowCaller::End::kOpen);
  }
  EXPECT_NE((*patient)->WaitForEnd(waiting, absl::Seconds(30)),
            testing::ZeroWindowCaller::End::kOpen);
  const server::JobStatus status = (*server)->Status();
  ASSERT_FALSE(status.stream_bounds.empty());
  EXPECT_EQ(status.stream_bounds[0].bound, "streams");
  EXPECT_EQ(status.stream_bounds[0].cut_offs.stalled, 3);
  EXPECT_EQ(status.stream_bounds[0].cut_offs.caller_share, 1);
  // The log says who was cut off or refused, and why.
  const std::string text = log.Text();
  EXPECT_TRUE(absl::StrContains(
      text, "cut off the model file stream of connection ipv4:127.0.0.1:"))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "--stream_stall_time")) << text;
  EXPECT_TRUE(absl::StrContains(text, "--max_streams_per_caller")) << text;
}

// A board of a one-round job on a raw stub: joins, takes its task and
// pulls the model, which its push sends back (an update of zero).
struct RawBoard {
  RawBoard(const std::string& address, const std::string& name)
      : stub(OwnConnection(address)) {
    v1::JoinRequest join;
    join.set_client_name(name);
    join.set_num_samples(10);
    v1::JoinResponse joined;
    EXPECT_TRUE(stub->Join(Call(absl::Seconds(10)).get(), join, &joined).ok());
    id = joined.client_id();
  }

  // Polls until the round's task comes, then pulls the model.
  bool TakeTask() {
    v1::GetTaskRequest poll;
    poll.set_client_id(id);
    for (int i = 0; i < 100 && task.action() != v1::GetTaskResponse::TRAIN;
         ++i) {
      grpc::Status polled =
          stub->GetTask(Call(absl::Seconds(10)).get(), poll, &task);
      if (!polled.ok()) {
        ADD_FAILURE() << "GetTask: " << polled.error_message();
        return false;
      }
    }
    v1::PullModelRequest pull;
    pull.set_client_id(id);
    pull.set_round(task.round());
    pull.set_task_id(task.task_id());
    auto call = Call(absl::Seconds(30));
    auto reader = stub->PullModel(call.get(), pull);
    v1::ModelChunk chunk;
    while (reader->Read(&chunk)) chunks.push_back(chunk);
    grpc::Status pulled = reader->Finish();
    EXPECT_TRUE(pulled.ok()) << "PullModel: " << pulled.error_message();
    return pulled.ok() && !chunks.empty();
  }

  // Opens the push and sends its header.
  void BeginPush() {
    push_call = Call(absl::Seconds(60));
    wire::AddClientId(*push_call, id);
    writer = stub->PushUpdate(push_call.get(), &response);
    v1::UpdateChunk header;
    header.mutable_header()->set_client_id(id);
    header.mutable_header()->set_round(task.round());
    header.mutable_header()->set_task_id(task.task_id());
    header.mutable_header()->set_num_samples(10);
    header.mutable_header()->mutable_metrics()->set_train_loss(1);
    header.mutable_header()->mutable_metrics()->set_steps(1);
    ASSERT_TRUE(writer->Write(header));
  }

  // Waits for the server's answer to the header: true for the go-ahead.
  bool AwaitTurn() {
    writer->WaitForInitialMetadata();
    return wire::HasPushTurn(push_call->GetServerInitialMetadata());
  }

  grpc::Status FinishPush() {
    for (const v1::ModelChunk& c : chunks) {
      v1::UpdateChunk message;
      *message.mutable_chunk() = c;
      if (!writer->Write(message)) break;
    }
    writer->WritesDone();
    return writer->Finish();
  }

  std::unique_ptr<v1::Federation::Stub> stub;
  std::string id;
  v1::GetTaskResponse task;
  std::vector<v1::ModelChunk> chunks;
  std::unique_ptr<grpc::ClientContext> push_call;
  std::unique_ptr<grpc::ClientWriter<v1::UpdateChunk>> writer;
  v1::PushUpdateResponse response;
};

// Waits (a state, not a time) until `bound` of `server` has `n` waiting.
bool AwaitWaiting(server::FederationServer& server, const std::string& bound,
                  int n) {
  for (int i = 0; i < 500; ++i) {
    for (const auto& b : server.Status().stream_bounds) {
      if (b.bound == bound && b.waiting == n) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// A push beyond --max_inflight_updates was refused RESOURCE_EXHAUSTED (2.3
// to 4.5 refusals per accepted update at 1,000 boards, each followed by a
// backoff), and a refusal looked like the go-ahead until the first chunk
// failed. It now waits for its turn, and the go-ahead is a signal of its own.
TEST(StreamBounds, APushBeyondTheInflightBoundWaitsForItsGoAhead) {
  server::ServerOptions o = SmallJob(2);
  o.max_inflight_updates = 1;
  auto server = server::FederationServer::Start(
      o, (*runtime::MakeImageModel("mlp"))->State(), nullptr, nullptr);
  ASSERT_TRUE(server.ok()) << server.status();
  RawBoard first((*server)->address(), "first");
  RawBoard second((*server)->address(), "second");
  // Both poll at once: a round opens for boards that wait for it.
  auto second_task =
      std::async(std::launch::async, [&] { return second.TakeTask(); });
  ASSERT_TRUE(first.TakeTask());
  ASSERT_TRUE(second_task.get());

  first.BeginPush();
  ASSERT_TRUE(first.AwaitTurn());  // it holds the only place
  second.BeginPush();
  auto second_turn =
      std::async(std::launch::async, [&] { return second.AwaitTurn(); });
  ASSERT_TRUE(AwaitWaiting(**server, "updates", 1))
      << "the second push was not queued";

  const grpc::Status first_pushed = first.FinishPush();
  ASSERT_TRUE(first_pushed.ok()) << first_pushed.error_message();
  EXPECT_TRUE(second_turn.get()) << "no go-ahead once the place freed";
  const grpc::Status second_pushed = second.FinishPush();
  ASSERT_TRUE(second_pushed.ok()) << second_pushed.error_message();
  EXPECT_EQ(second.response.received_updates(), 2u);
}

// A push refused for its header (here: a round it has no task in) hears
// no go-ahead, and says why; it never takes a place.
TEST(StreamBounds, ARefusedPushHearsNoGoAhead) {
  server::ServerOptions o = SmallJob(1);
  auto server = server::FederationServer::Start(
      o, (*runtime::MakeImageModel("mlp"))->State(), nullptr, nullptr);
  ASSERT_TRUE(server.ok()) << server.status();
  RawBoard board((*server)->address(), "board");
  ASSERT_TRUE(board.TakeTask());
  board.task.set_round(board.task.round() + 5);
  board.BeginPush();
  EXPECT_FALSE(board.AwaitTurn());
  const grpc::Status refused = board.writer->Finish();
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << refused.error_message();
}

}  // namespace
}  // namespace fedberry::stream_bounds_test
