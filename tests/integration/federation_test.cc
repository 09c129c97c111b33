// A real in-process server and real client agents talking gRPC on loopback.
// Clients use a scripted trainer, so the test knows every update and can
// compute the global model FedAvg must produce.
#include <ATen/ATen.h>
#include <grpcpp/generic/generic_stub.h>
#include <gtest/gtest.h>

#include <future>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "client/client_agent.h"
#include "google/protobuf/descriptor.h"
#include "proto/wire.h"
#include "runtime/model_zoo.h"
#include "runtime/tensor_codec.h"
#include "server/federation_server.h"
#include "spdlog/sinks/ostream_sink.h"
#include "spdlog/spdlog.h"

namespace fedberry::federation_test {
namespace {

using runtime::NamedTensors;

// Adds a fixed per-client offset to the global model; weight = num_samples.
class OffsetTrainer : public client::LocalTrainer {
 public:
  OffsetTrainer(float offset, uint64_t samples)
      : offset_(offset), samples_(samples) {}
  uint64_t num_samples() const override { return samples_; }
  absl::StatusOr<client::TrainOutcome> Train(
      const client::TaskRef& task, const v1::TrainConfig& config,
      const NamedTensors& global, const std::atomic<bool>& stop) override {
    client::TrainOutcome out;
    for (const auto& t : global) {
      out.model.push_back({t.name, t.tensor + offset_ * (rounds_ + 1)});
    }
    ++rounds_;
    out.num_samples = samples_;
    out.metrics.set_train_loss(1.0);
    return out;
  }
  int rounds() const { return rounds_; }

 private:
  float offset_;
  uint64_t samples_;
  int rounds_ = 0;
};

NamedTensors InitialModel(const std::string& name) {
  at::manual_seed(5);
  auto net = runtime::MakeImageModel(name);
  EXPECT_TRUE(net.ok());
  return (*net)->State();
}

std::unique_ptr<server::FederationServer> StartServer(
    const NamedTensors& initial, int rounds, int clients,
    const std::string& model, int max_streams = 32) {
  server::ServerOptions o;
  o.listen = "127.0.0.1:0";
  o.max_streams = max_streams;
  o.coordinator.rounds = rounds;
  o.coordinator.min_clients_per_round = clients;
  o.coordinator.min_clients_to_start = clients;
  o.coordinator.train.set_model(model);
  // The scripted trainer moves every weight by its offset, far beyond what
  // training does: the update bound (tested in round_coordinator_test)
  // would refuse it.
  o.coordinator.max_update_ratio = 0;
  o.max_poll = absl::Milliseconds(500);
  o.done_grace = absl::Seconds(5);
  auto s = server::FederationServer::Start(o, runtime::CloneState(initial),
                                           nullptr, nullptr);
  EXPECT_TRUE(s.ok()) << s.status();
  return *std::move(s);
}

std::unique_ptr<client::ClientAgent> MakeAgent(const std::string& address,
                                               const std::string& name,
                                               client::LocalTrainer& trainer) {
  client::AgentOptions o;
  o.name = name;
  o.rpc_timeout = absl::Seconds(30);
  o.poll_timeout = absl::Seconds(5);
  o.backoff.initial = absl::Milliseconds(50);
  o.give_up_after = absl::Seconds(20);
  return std::make_unique<client::ClientAgent>(
      o, trainer, v1::Federation::NewStub(wire::MakeClientChannel(address)));
}

// Runs `rounds` rounds with two OffsetTrainer clients and checks the global
// model against the weighted average computed here.
void RunTwoClientJob(const std::string& model, int rounds) {
  const NamedTensors initial = InitialModel(model);
  auto server = StartServer(initial, rounds, 2, model);
  OffsetTrainer t1(0.5f, 100), t2(-1.0f, 300);
  auto a1 = MakeAgent(server->address(), "one", t1);
  auto a2 = MakeAgent(server->address(), "two", t2);
  absl::Status s1, s2;
  std::thread c1([&] { s1 = a1->Run(); });
  std::thread c2([&] { s2 = a2->Run(); });
  c1.join();
  c2.join();
  server->Wait();
  EXPECT_TRUE(s1.ok()) << s1;
  EXPECT_TRUE(s2.ok()) << s2;
  EXPECT_EQ(a1->rounds_trained(), rounds);
  EXPECT_EQ(a2->rounds_trained(), rounds);

  NamedTensors expected = runtime::CloneState(initial);
  for (int r = 1; r <= rounds; ++r) {
    for (auto& t : expected) {
      at::Tensor u1 = t.tensor + 0.5f * r, u2 = t.tensor + -1.0f * r;
      t.tensor = ((u1.to(at::kDouble) * 100 + u2.to(at::kDouble) * 300) / 400)
                     .to(at::kFloat);
    }
  }
  const NamedTensors& global = *server->coordinator().global_model();
  ASSERT_EQ(global.size(), expected.size());
  for (size_t i = 0; i < global.size(); ++i) {
    EXPECT_EQ(global[i].name, expected[i].name);
    EXPECT_TRUE(at::allclose(global[i].tensor, expected[i].tensor, 1e-6, 1e-6))
        << global[i].name;
  }
  auto history = server->coordinator().history();
  ASSERT_EQ(history.size(), static_cast<size_t>(rounds));
  for (const auto& r : history) EXPECT_EQ(r.participants, 2);
}

TEST(Federation, TwoClientsTwoRoundsGiveTheWeightedAverage) {
  RunTwoClientJob("mlp", 2);
}

TEST(Federation, ModelLargerThanFourMegabytesMovesInChunks) {
  const NamedTensors wide = InitialModel("wide-mlp");
  int64_t bytes = 0;
  for (const auto& t : wide) bytes += t.tensor.nbytes();
  ASSERT_GT(bytes, 4 << 20);
  RunTwoClientJob("wide-mlp", 1);
}

// An update refused for what it is (here: beyond the update bound) is not
// trained and pushed again for the same task; the board waits for the next
// round. (Before, it was retried every backoff step, forever.)
TEST(ClientAgent, ARefusedUpdateIsNotTrainedAndPushedAgain) {
  server::ServerOptions o;
  o.listen = "127.0.0.1:0";
  o.coordinator.rounds = 1;
  o.coordinator.min_clients_per_round = 1;
  o.coordinator.min_clients_to_start = 1;
  o.coordinator.train.set_model("mlp");
  o.coordinator.max_update_ratio = 1e-6;  // every update is refused
  o.max_poll = absl::Milliseconds(200);
  auto server =
      server::FederationServer::Start(o, InitialModel("mlp"), nullptr, nullptr);
  ASSERT_TRUE(server.ok()) << server.status();
  OffsetTrainer trainer(0.5f, 100);
  auto agent = MakeAgent((*server)->address(), "refused", trainer);
  absl::Status ran;
  std::thread client([&] { ran = agent->Run(); });
  while (trainer.rounds() < 1) absl::SleepFor(absl::Milliseconds(20));
  // Many backoff steps (50 ms, doubling) fit in this: the old client trained
  // and pushed the same task again in each.
  absl::SleepFor(absl::Seconds(3));
  agent->Stop();
  client.join();
  EXPECT_EQ(trainer.rounds(), 1);
  EXPECT_TRUE(absl::IsCancelled(ran)) << ran;  // it waited, it did not quit
  EXPECT_TRUE((*server)->coordinator().history().empty());
}

// A client that opens a push and stalls is cut off at --max_stream_time, so
// it cannot hold a server thread for as long as it likes.
TEST(StreamLimits, AStalledPushIsCancelled) {
  server::ServerOptions o;
  o.listen = "127.0.0.1:0";
  o.coordinator.train.set_model("mlp");
  o.max_stream_time = absl::Seconds(1);
  auto server =
      server::FederationServer::Start(o, InitialModel("mlp"), nullptr, nullptr);
  ASSERT_TRUE(server.ok()) << server.status();
  auto stub =
      v1::Federation::NewStub(wire::MakeClientChannel((*server)->address()));
  grpc::ClientContext context;
  wire::SetDeadline(context, absl::Seconds(60));
  v1::PushUpdateResponse response;
  auto writer = stub->PushUpdate(&context, &response);
  // Nothing written and no WritesDone: the server's first Read blocks
  // until the limiter cancels the call.
  const grpc::Status status = writer->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED)
      << status.error_message();
}

// Model pulls beyond --max_streams wait their turn instead of being
// refused (which had thousands of boards asking again every half second);
// a caller that goes away while it waits leaves the queue.
TEST(StreamLimits, APullBeyondTheLimitWaitsItsTurn) {
  const NamedTensors initial = InitialModel("wide-mlp");  // 4.8 MB
  auto server = StartServer(initial, 1, 1, "wide-mlp", /*max_streams=*/1);
  // No bandwidth probe: the window stays small, so a pull this test stops
  // reading cannot be sent whole into the connection's buffers.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  auto stub = v1::Federation::NewStub(grpc::CreateCustomChannel(
      server->address(), grpc::InsecureChannelCredentials(), args));
  v1::JoinRequest join;
  join.set_client_name("puller");
  join.set_num_samples(10);
  v1::JoinResponse joined;
  grpc::ClientContext c1;
  wire::SetDeadline(c1, absl::Seconds(10));
  ASSERT_TRUE(stub->Join(&c1, join, &joined).ok());
  v1::GetTaskResponse task;
  for (int i = 0; i < 50 && task.action() != v1::GetTaskResponse::TRAIN; ++i) {
    grpc::ClientContext c2;
    wire::SetDeadline(c2, absl::Seconds(10));
    v1::GetTaskRequest req;
    req.set_client_id(joined.client_id());
    ASSERT_TRUE(stub->GetTask(&c2, req, &task).ok());
  }
  ASSERT_EQ(task.action(), v1::GetTaskResponse::TRAIN);
  v1::PullModelRequest pull;
  pull.set_client_id(joined.client_id());
  pull.set_round(task.round());
  pull.set_task_id(task.task_id());
  // Reads a whole pull; the number of chunks, or -1 when it failed.
  auto read_all = [&](grpc::ClientReader<v1::ModelChunk>& reader,
                      grpc::Status* status) {
    v1::ModelChunk chunk;
    int chunks = 0;
    while (reader.Read(&chunk)) ++chunks;
    *status = reader.Finish();
    return status->ok() ? chunks : -1;
  };

  // The first pull holds the only place: it reads one chunk and stops.
  grpc::ClientContext holding;
  wire::SetDeadline(holding, absl::Seconds(60));
  auto first = stub->PullModel(&holding, pull);
  v1::ModelChunk chunk;
  ASSERT_TRUE(first->Read(&chunk));

  // One that gives up while it waits...
  {
    grpc::ClientContext impatient;
    wire::SetDeadline(impatient, absl::Milliseconds(300));
    auto gone = stub->PullModel(&impatient, pull);
    grpc::Status status;
    EXPECT_EQ(read_all(*gone, &status), -1);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
        << status.error_message();
  }
  // ...and one that waits for its turn.
  grpc::ClientContext patient;
  wire::SetDeadline(patient, absl::Seconds(60));
  auto second = stub->PullModel(&patient, pull);
  grpc::Status second_status;
  auto second_chunks = std::async(
      std::launch::async, [&] { return read_all(*second, &second_status); });

  grpc::Status first_status;
  const int first_chunks = read_all(*first, &first_status) + 1;
  ASSERT_TRUE(first_status.ok()) << first_status.error_message();
  // The second was queued, not refused, and gets the whole model.
  EXPECT_EQ(second_chunks.get(), first_chunks) << second_status.error_message();
  EXPECT_GT(first_chunks, 1);
}

// Talks to the server with a raw stub to send what a well-behaved agent never
// would.
class BadInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    initial_ = InitialModel("mlp");
    server_ = StartServer(initial_, 1, 1, "mlp");
    stub_ =
        v1::Federation::NewStub(wire::MakeClientChannel(server_->address()));
    v1::JoinRequest join;
    join.set_client_name("raw");
    join.set_num_samples(10);  // what its updates will claim
    v1::JoinResponse joined;
    grpc::ClientContext c1;
    wire::SetDeadline(c1, absl::Seconds(10));
    ASSERT_TRUE(stub_->Join(&c1, join, &joined).ok());
    id_ = joined.client_id();
    for (int i = 0; i < 50 && task_.action() != v1::GetTaskResponse::TRAIN;
         ++i) {
      grpc::ClientContext c2;
      wire::SetDeadline(c2, absl::Seconds(10));
      v1::GetTaskRequest req;
      req.set_client_id(id_);
      ASSERT_TRUE(stub_->GetTask(&c2, req, &task_).ok());
    }
    ASSERT_EQ(task_.action(), v1::GetTaskResponse::TRAIN);
  }

  v1::UpdateHeader Header() {
    v1::UpdateHeader h;
    h.set_client_id(id_);
    h.set_round(task_.round());
    h.set_task_id(task_.task_id());
    h.set_num_samples(10);
    return h;
  }

  grpc::Status Push(const std::vector<v1::UpdateChunk>& messages) {
    grpc::ClientContext c;
    wire::SetDeadline(c, absl::Seconds(10));
    v1::PushUpdateResponse response;
    auto w = stub_->PushUpdate(&c, &response);
    for (const auto& m : messages) {
      if (!w->Write(m)) break;
    }
    w->WritesDone();
    return w->Finish();
  }

  std::vector<v1::UpdateChunk> Update(const v1::UpdateHeader& header,
                                      const NamedTensors& model) {
    std::vector<v1::UpdateChunk> out(1);
    *out[0].mutable_header() = header;
    EXPECT_TRUE(runtime::EncodeModel(model, header.round(), header.task_id(),
                                     [&](const v1::ModelChunk& c) {
                                       out.emplace_back();
                                       *out.back().mutable_chunk() = c;
                                       return true;
                                     })
                    .ok());
    return out;
  }

  void ExpectGlobalUnchanged() {
    const NamedTensors& g = *server_->coordinator().global_model();
    ASSERT_EQ(g.size(), initial_.size());
    for (size_t i = 0; i < g.size(); ++i) {
      EXPECT_TRUE(g[i].tensor.equal(initial_[i].tensor));
    }
    EXPECT_EQ(server_->coordinator().current_round(), 1u);
  }

  NamedTensors initial_;
  std::unique_ptr<server::FederationServer> server_;
  std::unique_ptr<v1::Federation::Stub> stub_;
  std::string id_;
  v1::GetTaskResponse task_;
};

// Bytes that are not the method's message: gRPC refuses them before any
// handler runs, with INTERNAL and an empty message; the server says what
// was wrong instead. An update stream's first message is read by the
// handler, which refuses what is not a header.
TEST_F(BadInputTest, UndecodableBytesGetAClearRefusal) {
  grpc::GenericStub generic(wire::MakeClientChannel(server_->address()));
  for (const char* method :
       {"/fedberry.v1.Federation/Join", "/fedberry.v1.Federation/GetTask",
        "/fedberry.v1.Federation/PullModel",
        "/fedberry.v1.Federation/PushUpdate"}) {
    grpc::ClientContext context;
    wire::SetDeadline(context, absl::Seconds(10));
    grpc::Slice junk(std::string("\xff\xff\xff\xff\x0f not protobuf"));
    grpc::ByteBuffer request(&junk, 1), response;
    std::promise<grpc::Status> done;
    generic.UnaryCall(&context, method, grpc::StubOptions(), &request,
                      &response,
                      [&](grpc::Status status) { done.set_value(status); });
    const grpc::Status status = done.get_future().get();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << method;
    const bool push = absl::EndsWith(method, "PushUpdate");
    EXPECT_NE(status.error_message().find(
                  push ? "must start with an UpdateHeader" : "does not decode"),
              std::string::npos)
        << status.error_message();
  }
}

// A unary call through the generic stub: its status and response bytes.
std::pair<grpc::Status, std::string> CallRaw(const std::string& address,
                                             const std::string& method,
                                             const std::string& request) {
  grpc::GenericStub generic(wire::MakeClientChannel(address));
  grpc::ClientContext context;
  wire::SetDeadline(context, absl::Seconds(10));
  grpc::Slice bytes(request);
  grpc::ByteBuffer in(&bytes, 1), out;
  std::promise<grpc::Status> done;
  generic.UnaryCall(&context, method, grpc::StubOptions(), &in, &out,
                    [&](grpc::Status status) { done.set_value(status); });
  const grpc::Status status = done.get_future().get();
  std::vector<grpc::Slice> slices;
  std::string response;
  if (status.ok() && out.Dump(&slices).ok()) {
    for (const grpc::Slice& s : slices) {
      response.append(reinterpret_cast<const char*>(s.begin()), s.size());
    }
  }
  return {status, response};
}

// gRPC's answer for what is not served, with what is.
TEST_F(BadInputTest, UnknownMethodsAreUnimplemented) {
  for (const char* method :
       {"/fedberry.v1.Federation/NoSuchMethod", "/other.v1.Service/Call"}) {
    const auto [status, response] = CallRaw(server_->address(), method, "");
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED) << method;
    EXPECT_NE(status.error_message().find("serves fedberry.v1.Federation"),
              std::string::npos)
        << status.error_message();
  }
}

// grpc.health.v1.Health/Check: HealthCheckResponse{status: SERVING} is the
// two bytes 08 01, for the server ("") and for the federation service.
TEST_F(BadInputTest, TheStandardHealthServiceAnswers) {
  const std::string federation = "fedberry.v1.Federation";
  for (const std::string& request :
       {std::string(),
        "\x0a" + std::string(1, static_cast<char>(federation.size())) +
            federation}) {
    const auto [status, response] =
        CallRaw(server_->address(), "/grpc.health.v1.Health/Check", request);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response, std::string("\x08\x01"));
  }
  const auto [unknown, ignored] =
      CallRaw(server_->address(), "/grpc.health.v1.Health/Check", "\x0a\x02no");
  EXPECT_EQ(unknown.error_code(), grpc::StatusCode::NOT_FOUND);
}

// The paths (field after field, through singular message fields, two deep)
// to every string field of `type`.
using FieldPath = std::vector<const google::protobuf::FieldDescriptor*>;
void StringFieldPaths(const google::protobuf::Descriptor* type,
                      FieldPath& prefix, int depth,
                      std::vector<FieldPath>& out) {
  using google::protobuf::FieldDescriptor;
  for (int i = 0; i < type->field_count(); ++i) {
    const FieldDescriptor* f = type->field(i);
    prefix.push_back(f);
    if (f->type() == FieldDescriptor::TYPE_STRING) {
      out.push_back(prefix);
    } else if (f->type() == FieldDescriptor::TYPE_MESSAGE &&
               !f->is_repeated() && depth < 2) {
      StringFieldPaths(f->message_type(), prefix, depth + 1, out);
    }
    prefix.pop_back();
  }
}

// `base` with the string at `path` set to `text`.
template <typename M>
M WithString(const M& base, const FieldPath& path, const std::string& text) {
  M out = base;
  google::protobuf::Message* m = &out;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    m = m->GetReflection()->MutableMessage(m, path[i]);
  }
  if (path.back()->is_repeated()) {
    m->GetReflection()->AddString(m, path.back(), text);
  } else {
    m->GetReflection()->SetString(m, path.back(), text);
  }
  return out;
}

// Calls `call` once for each string field of `base`, set to `text`.
template <typename M, typename Call>
void SweepStrings(const M& base, const std::string& text, Call call) {
  FieldPath prefix;
  std::vector<FieldPath> paths;
  StringFieldPaths(M::descriptor(), prefix, 0, paths);
  for (const FieldPath& path : paths) {
    SCOPED_TRACE(
        absl::StrCat(M::descriptor()->name(), ".", path.back()->full_name()));
    call(WithString(base, path, text));
  }
}

// Every string field of every request (and of the messages it holds), set
// to a forged log line with ANSI escapes and 100 kB: no refusal and no log
// line of the server carries a control byte or runs long.
TEST_F(BadInputTest, NoWireStringReachesALogOrARefusalRaw) {
  const std::string forged =
      "x\n[2026-11-27 00:00:00.000] [info] round 3/3 done\x1b[2J" +
      std::string(100000, 'y');
  std::ostringstream captured;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(captured);
  spdlog::default_logger()->sinks().push_back(sink);
  std::vector<grpc::Status> statuses;
  auto context = [] {
    auto c = std::make_unique<grpc::ClientContext>();
    wire::SetDeadline(*c, absl::Seconds(10));
    return c;
  };
  auto read_all = [](auto& reader, auto message) {
    while (reader->Read(&message)) {
    }
    return reader->Finish();
  };
  v1::JoinRequest join;
  join.set_client_name("sweep");
  join.set_num_samples(10);
  SweepStrings(join, forged, [&](const v1::JoinRequest& r) {
    v1::JoinResponse out;
    statuses.push_back(stub_->Join(context().get(), r, &out));
  });
  v1::GetTaskRequest task;
  SweepStrings(task, forged, [&](const v1::GetTaskRequest& r) {
    v1::GetTaskResponse out;
    statuses.push_back(stub_->GetTask(context().get(), r, &out));
  });
  v1::HeartbeatRequest beat;
  beat.set_client_id(id_);
  beat.set_round(task_.round());
  beat.set_task_id(task_.task_id());
  SweepStrings(beat, forged, [&](const v1::HeartbeatRequest& r) {
    v1::HeartbeatResponse out;
    statuses.push_back(stub_->Heartbeat(context().get(), r, &out));
  });
  SweepStrings(v1::GetPlanRequest(), forged, [&](const v1::GetPlanRequest& r) {
    v1::GetPlanResponse out;
    statuses.push_back(stub_->GetPlan(context().get(), r, &out));
  });
  v1::PullModelRequest pull;
  pull.set_client_id(id_);
  pull.set_round(task_.round());
  pull.set_task_id(task_.task_id());
  SweepStrings(pull, forged, [&](const v1::PullModelRequest& r) {
    auto c = context();
    auto reader = stub_->PullModel(c.get(), r);
    statuses.push_back(read_all(reader, v1::ModelChunk()));
  });
  SweepStrings(v1::PullModelFileRequest(), forged,
               [&](const v1::PullModelFileRequest& r) {
                 auto c = context();
                 auto reader = stub_->PullModelFile(c.get(), r);
                 statuses.push_back(read_all(reader, v1::ModelFileChunk()));
               });
  v1::PullSamplesRequest samples;
  samples.set_client_id(id_);
  samples.set_round(task_.round());
  samples.set_task_id(task_.task_id());
  SweepStrings(samples, forged, [&](const v1::PullSamplesRequest& r) {
    auto c = context();
    auto reader = stub_->PullSamples(c.get(), r);
    statuses.push_back(read_all(reader, v1::SampleChunk()));
  });
  v1::SampleChunk deposit;
  deposit.set_client_id(id_);
  deposit.set_round(task_.round());
  deposit.set_task_id(task_.task_id());
  SweepStrings(deposit, forged, [&](const v1::SampleChunk& r) {
    auto c = context();
    v1::PushSamplesResponse out;
    auto writer = stub_->PushSamples(c.get(), &out);
    writer->Write(r);
    writer->WritesDone();
    statuses.push_back(writer->Finish());
  });
  v1::UpdateChunk header;
  *header.mutable_header() = Header();
  SweepStrings(header, forged, [&](const v1::UpdateChunk& r) {
    statuses.push_back(Push({r}));
  });
  spdlog::default_logger()->flush();
  auto& sinks = spdlog::default_logger()->sinks();
  sinks.erase(std::remove(sinks.begin(), sinks.end(), sink), sinks.end());

  EXPECT_GT(statuses.size(), 20u);
  for (const grpc::Status& s : statuses) {
    EXPECT_LE(s.error_message().size(), 2048u)
        << s.error_message().substr(0, 200);
    EXPECT_EQ(s.error_message().find_first_of("\n\x1b"), std::string::npos)
        << s.error_message().substr(0, 300);
  }
  const std::string log = captured.str();
  EXPECT_FALSE(log.empty());
  EXPECT_EQ(log.find('\x1b'), std::string::npos);
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    EXPECT_LE(line.size(), 4096u) << line.substr(0, 300);
    EXPECT_FALSE(absl::StartsWith(line, "[2026-11-27 00:00:00.000]")) << line;
  }
}

TEST_F(BadInputTest, EachBadUpdateGetsItsStatusAndChangesNothing) {
  NamedTensors nan = runtime::CloneState(initial_);
  nan[0].tensor[0][0] = std::numeric_limits<float>::quiet_NaN();
  auto s = Push(Update(Header(), nan));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("NaN"), std::string::npos);

  NamedTensors shape = runtime::CloneState(initial_);
  shape[1].tensor = at::zeros({7});
  s = Push(Update(Header(), shape));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("shape"), std::string::npos);

  NamedTensors names = runtime::CloneState(initial_);
  names[0].name = "evil.weight";
  s = Push(Update(Header(), names));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  auto wrong_round = Header();
  wrong_round.set_round(9);
  EXPECT_EQ(Push(Update(wrong_round, initial_)).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);

  auto unknown = Header();
  unknown.set_client_id("c0000-nobody");
  EXPECT_EQ(Push(Update(unknown, initial_)).error_code(),
            grpc::StatusCode::NOT_FOUND);

  // A stream that starts with a chunk instead of a header.
  auto headless = Update(Header(), initial_);
  headless.erase(headless.begin());
  EXPECT_EQ(Push(headless).error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  // A stream cut short.
  auto cut = Update(Header(), initial_);
  cut.pop_back();
  EXPECT_EQ(Push(cut).error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  // A message above the chunk limit is refused by the transport.
  auto huge = Update(Header(), initial_);
  huge[1].mutable_chunk()->set_data(
      std::string(wire::kMaxMessageBytes + 1, 'x'));
  EXPECT_EQ(Push(huge).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);

  ExpectGlobalUnchanged();

  // After all that, the honest update is accepted once and closes the round.
  EXPECT_TRUE(Push(Update(Header(), initial_)).ok());
  // A second copy is refused: ALREADY_EXISTS while the round is still open,
  // FAILED_PRECONDITION once the driver closed it (a race under load).
  const grpc::StatusCode again = Push(Update(Header(), initial_)).error_code();
  EXPECT_TRUE(again == grpc::StatusCode::FAILED_PRECONDITION ||
              again == grpc::StatusCode::ALREADY_EXISTS)
      << again;
}

TEST(ClientAgent, RetriesWithBackoffThenGivesUpWhenNoServer) {
  // A port nothing listens on: bind one, note it, close it.
  server::ServerOptions o;
  o.listen = "127.0.0.1:0";
  auto s =
      server::FederationServer::Start(o, InitialModel("mlp"), nullptr, nullptr);
  ASSERT_TRUE(s.ok());
  const std::string address = (*s)->address();
  s->reset();
  OffsetTrainer trainer(1, 1);
  client::AgentOptions ao;
  ao.name = "lonely";
  ao.rpc_timeout = absl::Milliseconds(300);
  ao.backoff.initial = absl::Milliseconds(20);
  ao.backoff.max = absl::Milliseconds(100);
  ao.give_up_after = absl::Seconds(1);
  client::ClientAgent agent(
      ao, trainer, v1::Federation::NewStub(wire::MakeClientChannel(address)));
  absl::Status status = agent.Run();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_EQ(trainer.rounds(), 0);
}

TEST(ClientAgent, StopEndsALongPoll) {
  auto server = StartServer(InitialModel("mlp"), 1, /*clients=*/2, "mlp");
  OffsetTrainer trainer(1, 1);
  auto agent = MakeAgent(server->address(), "waiting", trainer);
  absl::Status status;
  std::thread t([&] { status = agent->Run(); });
  // Wait until the agent joined and sits in its long poll.
  while (server->coordinator().registered_clients() < 1) {
    std::this_thread::yield();
  }
  agent->Stop();
  t.join();
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(trainer.rounds(), 0);  // a round never opened with one client
}

}  // namespace
}  // namespace fedberry::federation_test
