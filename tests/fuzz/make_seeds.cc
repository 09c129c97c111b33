// Writes the committed seed corpus of the RPC fuzz targets (one folder per
// target under the given directory): well-formed requests that use the
// placeholders of federation_fuzz.h, plus a few hostile ones. Run once when
// the wire contract changes:  fuzz_make_seeds tests/fuzz/corpus
#include <ATen/ATen.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "google/protobuf/util/delimited_message_util.h"
#include "runtime/tensor_codec.h"
#include "tests/fuzz/federation_fuzz.h"

namespace {

using namespace fedberry;
namespace fs = std::filesystem;

std::string dir;

void Write(const std::string& target, const std::string& name,
           const std::string& bytes) {
  fs::create_directories(dir + "/" + target);
  std::ofstream(dir + "/" + target + "/" + name, std::ios::binary) << bytes;
}

template <typename Message>
void WriteStream(const std::string& target, const std::string& name,
                 const std::vector<Message>& stream) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream out(&bytes);
    for (const Message& m : stream) {
      google::protobuf::util::SerializeDelimitedToZeroCopyStream(m, &out);
    }
  }
  Write(target, name, bytes);
}

std::vector<v1::UpdateChunk> Update(float value) {
  runtime::NamedTensors model = {{"w", at::full({4, 4}, value)},
                                 {"b", at::full({4}, value)},
                                 {"n", at::zeros({1}, at::kLong)}};
  std::vector<v1::UpdateChunk> stream(1);
  v1::UpdateHeader* h = stream[0].mutable_header();
  h->set_client_id(fuzz::kClientId);
  h->set_task_id(fuzz::kTaskId);
  h->set_num_samples(100);
  h->mutable_metrics()->set_train_loss(0.5);
  h->mutable_metrics()->set_train_accuracy(0.8);
  h->mutable_resources()->set_cpu_utilization(0.9);
  (void)runtime::EncodeModel(
      model, 0, fuzz::kTaskId,
      [&](const v1::ModelChunk& c) {
        v1::UpdateChunk m;
        *m.mutable_chunk() = c;
        stream.push_back(m);
        return true;
      },
      32);
  return stream;
}

}  // namespace

// One SecAggStep request of each kind, as the seed board of the open
// round's session (FuzzFederation::GetSecAgg) would send it.
v1::SecAggRequest SecAggBase() {
  v1::SecAggRequest r;
  r.set_client_id(fuzz::kClientId);
  r.set_task_id(fuzz::kTaskId);
  r.set_session(fuzz::kSession);
  return r;
}

void WriteSecAggSeeds() {
  v1::SecAggRequest keys = SecAggBase();
  keys.mutable_keys()->set_board(0);
  keys.mutable_keys()->set_transport_public(std::string(32, '\x11'));
  keys.mutable_keys()->set_mask_public(std::string(32, '\x22'));
  Write("secagg_step", "keys", keys.SerializeAsString());
  v1::SecAggRequest wait = SecAggBase();
  wait.set_await(1);
  Write("secagg_step", "await", wait.SerializeAsString());
  v1::SecAggRequest shares = SecAggBase();
  v1::SecAggShareBox* box = shares.mutable_share_keys()->add_boxes();
  box->set_sender(0);
  box->set_receiver(1);
  box->set_box(std::string(120, '\x33'));
  Write("secagg_step", "share_keys", shares.SerializeAsString());
  v1::SecAggRequest masked = SecAggBase();
  for (uint32_t i = 0; i < 26; ++i) masked.mutable_masked()->add_words(i);
  Write("secagg_step", "masked", masked.SerializeAsString());
  v1::SecAggRequest unmask = SecAggBase();
  v1::SecAggShare* share = unmask.mutable_unmask()->add_shares();
  share->set_owner(1);
  share->set_index(1);
  share->set_secret_size(32);
  for (int i = 0; i < 4; ++i) share->add_values(0xFFFFFFFFFFFFFFFFull);
  Write("secagg_step", "unmask", unmask.SerializeAsString());
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_make_seeds <corpus folder>\n");
    return 2;
  }
  dir = argv[1];
  v1::GetPlanRequest get_plan;
  get_plan.set_client_name("board-1");
  Write("get_plan", "board", get_plan.SerializeAsString());
  get_plan.set_client_name(std::string(4096, '\x1b'));
  Write("get_plan", "hostile", get_plan.SerializeAsString());
  v1::PullModelFileRequest pull_file;
  pull_file.set_model_sha256(fuzz::kModelSha);
  Write("pull_model_file", "plan", pull_file.SerializeAsString());
  pull_file.set_model_sha256(std::string(64, 'a'));
  Write("pull_model_file", "unknown", pull_file.SerializeAsString());
  v1::JoinRequest join;
  join.set_client_name("board-1");
  join.set_num_samples(500);
  join.mutable_device()->set_architecture("aarch64");
  join.mutable_device()->set_cores(4);
  Write("join", "board", join.SerializeAsString());
  join.set_client_name("evil\n\x1b[31m");
  join.set_num_samples(uint64_t{1} << 63);
  Write("join", "hostile", join.SerializeAsString());
  join.set_client_name("seed");  // takes the seed board's name
  Write("join", "rejoin", join.SerializeAsString());

  v1::GetTaskRequest task;
  task.set_client_id(fuzz::kClientId);
  Write("get_task", "seed", task.SerializeAsString());
  task.set_client_id("c0001-000000");
  Write("get_task", "unknown", task.SerializeAsString());

  v1::HeartbeatRequest beat;
  beat.set_client_id(fuzz::kClientId);
  beat.set_task_id(fuzz::kTaskId);
  beat.set_state(v1::HeartbeatRequest::PAUSED);
  beat.set_paused_seconds(3);
  Write("heartbeat", "paused", beat.SerializeAsString());
  beat.set_state(v1::HeartbeatRequest::RELEASED);
  Write("heartbeat", "released", beat.SerializeAsString());

  v1::PullModelRequest pull;
  pull.set_client_id(fuzz::kClientId);
  pull.set_task_id(fuzz::kTaskId);
  Write("pull_model", "seed", pull.SerializeAsString());

  v1::PullSamplesRequest samples;
  samples.set_client_id(fuzz::kClientId);
  samples.set_task_id(fuzz::kTaskId);
  samples.set_move_id("r1-m1");
  Write("pull_samples", "seed", samples.SerializeAsString());

  WriteStream("push_update", "honest", Update(0.6f));
  WriteStream("push_update", "poison", Update(1e38f));
  auto heavy = Update(0.6f);
  heavy[0].mutable_header()->set_num_samples(uint64_t{1} << 63);
  heavy[0].mutable_header()->mutable_metrics()->set_train_loss(std::nan(""));
  WriteStream("push_update", "heavy", heavy);

  v1::SampleChunk chunk;
  chunk.set_client_id(fuzz::kClientId);
  chunk.set_task_id(fuzz::kTaskId);
  chunk.set_move_id("r1-m1");
  chunk.set_height(2);
  chunk.set_width(2);
  chunk.set_pixels(std::string(8, '\x7f'));
  chunk.set_labels(std::string(2, '\x03'));
  WriteStream("push_samples", "seed", std::vector<v1::SampleChunk>{chunk});
  WriteSecAggSeeds();
  return 0;
}
