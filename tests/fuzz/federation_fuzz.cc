#include "tests/fuzz/federation_fuzz.h"

#include <ATen/ATen.h>

#include <cstdio>
#include <cstdlib>

#include "proto/chunking.h"
#include "proto/wire.h"
#include "runtime/sha256.h"
#include "runtime/tensor_codec.h"
#include "runtime/training_plan.h"
#include "server/federation_server.h"

namespace fedberry::fuzz {
namespace {

runtime::NamedTensors SmallModel() {
  return {{"w", at::full({4, 4}, 0.5f)},
          {"b", at::zeros({4})},
          {"n", at::zeros({1}, at::kLong)}};
}

// Not a TorchScript module: the server serves the file, it never loads it.
std::shared_ptr<const std::string> ModelFile() {
  std::string bytes(wire::kChunkBytes + wire::kChunkBytes / 2, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<char>((i * 2654435761u) >> 13);
  }
  return std::make_shared<const std::string>(std::move(bytes));
}

v1::TrainingPlan PlanOf(const std::string& file) {
  v1::TrainingPlan plan;
  plan.set_model_format(runtime::kTorchScriptFormat);
  plan.set_model_name("fuzz.pt");
  plan.set_model_sha256(runtime::Sha256Hex(file));
  plan.set_model_bytes(file.size());
  plan.add_input_shape(4);
  plan.set_task("classification");
  plan.set_num_outputs(4);
  plan.set_loss("cross_entropy");
  plan.set_optimizer("sgd");
  plan.set_learning_rate(0.1);
  return plan;
}

}  // namespace

struct FuzzFederation::Impl {
  std::unique_ptr<server::FederationServer> server;
  server::ServedPlan plan;
};

FuzzFederation& FuzzFederation::Get() {
  static FuzzFederation* federation = new FuzzFederation(false);
  return *federation;
}

FuzzFederation& FuzzFederation::GetSecAgg() {
  static FuzzFederation* federation = new FuzzFederation(true);
  return *federation;
}

FuzzFederation::FuzzFederation(bool secagg)
    : impl_(std::make_shared<Impl>()), secagg_(secagg) {
  server::ServerOptions o;
  o.listen = "127.0.0.1:0";
  o.max_poll = absl::Milliseconds(100);
  o.max_threads = 64;
  o.coordinator.rounds = 1 << 30;  // the job never ends while fuzzing
  // A session needs two boards; its stages give up quickly on the seed
  // that never speaks, so new sessions keep coming.
  o.coordinator.min_clients_per_round = secagg ? 2 : 1;
  o.coordinator.min_clients_to_start = secagg ? 2 : 1;
  if (secagg) {
    o.coordinator.round_deadline = absl::Seconds(2);
    server::SecAggOptions s;
    s.keys_deadline = absl::Seconds(2);
    s.stage_deadline = absl::Seconds(1);
    o.coordinator.secagg = s;
  }
  o.coordinator.max_clients = 1000;
  o.coordinator.train.set_model("fuzz");
  o.coordinator.train.set_local_epochs(1);
  o.coordinator.train.set_batch_size(4);
  impl_->plan.model_file = ModelFile();
  impl_->plan.plan = PlanOf(*impl_->plan.model_file);
  o.plan = impl_->plan;
  auto started =
      server::FederationServer::Start(o, SmallModel(), nullptr, nullptr);
  if (!started.ok()) {
    std::fprintf(stderr, "fuzz: cannot start the server: %s\n",
                 started.status().ToString().c_str());
    std::abort();
  }
  impl_->server = *std::move(started);
  stub_ = v1::Federation::NewStub(
      wire::MakeClientChannel(impl_->server->address()));
  Refresh();
}

void FuzzFederation::SetDeadline(grpc::ClientContext& context) const {
  wire::SetDeadline(context, absl::Milliseconds(700));
}

bool FuzzFederation::Poll(const std::string& name, std::string& id,
                          v1::GetTaskResponse& task) {
  if (id.empty()) {
    v1::JoinRequest join;
    join.set_client_name(name);
    join.set_num_samples(1000);
    grpc::ClientContext context;
    SetDeadline(context);
    v1::JoinResponse joined;
    if (!stub_->Join(&context, join, &joined).ok()) return false;
    id = joined.client_id();
  }
  v1::GetTaskRequest request;
  request.set_client_id(id);
  grpc::ClientContext context;
  SetDeadline(context);
  grpc::Status s = stub_->GetTask(&context, request, &task);
  if (s.error_code() == grpc::StatusCode::NOT_FOUND) {
    id.clear();  // a fuzzed join took the seed's name
    return false;
  }
  return s.ok();
}

void FuzzFederation::Refresh() {
  for (int attempt = 0; attempt < 20; ++attempt) {
    v1::GetTaskResponse task;
    if (secagg_) {
      v1::GetTaskResponse second;
      (void)Poll("seed-2", second_id_, second);  // a round needs two
    }
    if (!Poll("seed", id_, task)) continue;
    if (task.action() == v1::GetTaskResponse::TRAIN) {
      task_ = task.task_id();
      round_ = task.round();
      session_ = task.secagg().session();
    }
    return;  // between rounds: keep the last task
  }
}

void FuzzFederation::Fill(google::protobuf::Message& message) const {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Reflection* r = message.GetReflection();
  const google::protobuf::Descriptor* d = message.GetDescriptor();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (f->is_repeated()) continue;
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (r->HasField(message, f)) Fill(*r->MutableMessage(&message, f));
    } else if (f->name() == "client_id" &&
               r->GetString(message, f) == kClientId) {
      r->SetString(&message, f, id_);
    } else if (f->name() == "task_id" && r->GetString(message, f) == kTaskId) {
      r->SetString(&message, f, task_);
    } else if (f->name() == "model_sha256" &&
               r->GetString(message, f) == kModelSha) {
      r->SetString(&message, f, impl_->plan.plan.model_sha256());
    } else if (f->name() == "session" && r->GetString(message, f) == kSession) {
      r->SetString(&message, f, session_);
    } else if (f->name() == "round" && r->GetUInt64(message, f) == 0) {
      r->SetUInt64(&message, f, round_);
    }
  }
}

const v1::TrainingPlan& FuzzFederation::plan() const {
  return impl_->plan.plan;
}

const std::string& FuzzFederation::model_file() const {
  return *impl_->plan.model_file;
}

void FuzzFederation::CheckInvariants() const {
  auto global = impl_->server->coordinator().global_model();
  const runtime::NamedTensors reference = SmallModel();
  bool same_layout = global->size() == reference.size();
  for (size_t i = 0; same_layout && i < reference.size(); ++i) {
    same_layout =
        (*global)[i].name == reference[i].name &&
        (*global)[i].tensor.sizes().equals(reference[i].tensor.sizes());
  }
  if (!same_layout || !runtime::CheckFinite(*global).ok()) {
    std::fprintf(stderr, "fuzz: the server published a broken global model\n");
    std::abort();
  }
}

}  // namespace fedberry::fuzz
