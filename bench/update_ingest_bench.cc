// What one update costs the server's CPU, stage by stage, outside gRPC: a
// pull's encoding (the model into wire chunks, serialized), and a push's
// parsing (wire bytes into chunk messages), assembly (chunks into tensors),
// checks (layout and NaN/Inf, the update bound) and FedAvg's add. Prints
// CPU ms per update and MB/s of the model's bytes per core for each stage,
// for LeNet-5 (247 KB) and wide-mlp (4.8 MB):
//
//   build/bin/update_ingest_bench [--reps=20]
//
// One thread, no network; the update is the global model itself. Prints
// figures, asserts nothing.
#include <time.h>
#include <torch/torch.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "fedberry/v1/federation.pb.h"
#include "proto/wire.h"
#include "runtime/model_zoo.h"
#include "runtime/tensor_codec.h"
#include "server/strategy/strategy.h"
#include "server/strategy/update_layout.h"
#include "server/update_bound.h"

ABSL_FLAG(int, reps, 20, "Updates timed per stage and model.");

namespace fedberry {
namespace {

double CpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

// CPU seconds of one call of `stage`, averaged over `reps`.
double Time(int reps, const std::function<void()>& stage) {
  stage();  // warm
  const double start = CpuSeconds();
  for (int i = 0; i < reps; ++i) stage();
  return (CpuSeconds() - start) / reps;
}

void Check(const absl::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "update_ingest_bench: %s: %s\n", what,
                 std::string(s.message()).c_str());
    std::exit(1);
  }
}

void Bench(const std::string& name, int reps) {
  auto model = runtime::MakeImageModel(name);
  Check(model.status(), "model");
  auto global =
      std::make_shared<const runtime::NamedTensors>((*model)->State());
  double bytes = 0;
  for (const auto& t : *global) bytes += t.tensor.nbytes();
  auto specs = runtime::SpecsOf(*global);
  Check(specs.status(), "specs");

  std::vector<std::string> wire;  // the push as it arrives: UpdateChunks
  const auto encode = [&] {
    wire.clear();
    Check(runtime::EncodeModel(*global, 1, "t",
                               [&](const v1::ModelChunk& chunk) {
                                 v1::UpdateChunk message;
                                 *message.mutable_chunk() = chunk;
                                 wire.push_back(message.SerializeAsString());
                                 return true;
                               }),
          "encode");
  };
  std::vector<v1::UpdateChunk> parsed(0);
  const auto parse = [&] {
    parsed.resize(wire.size());
    for (size_t i = 0; i < wire.size(); ++i) {
      if (!parsed[i].ParseFromString(wire[i]))
        Check(absl::DataLossError("parse"), "parse");
    }
  };
  runtime::NamedTensors update;
  const auto assemble = [&] {
    runtime::ModelAssembler assembler(1, "t", *specs, global);
    for (const auto& m : parsed) Check(assembler.Add(m.chunk()), "add chunk");
    auto done = assembler.Finish();
    Check(done.status(), "finish");
    update = *std::move(done);
  };
  server::UpdateBound bound(global, 1000);
  const auto check = [&] {
    Check(server::CheckUpdateLayout(*global, update), "layout");
    Check(bound.Check(update).status(), "bound");
  };
  auto strategy = server::MakeStrategy(server::StrategyOptions{}, *global);
  Check(strategy.status(), "strategy");
  auto round = (*strategy)->BeginRound(global);
  Check(round.status(), "round");
  const auto add = [&] { Check((*round)->Add(update, 100), "fedavg add"); };

  encode();
  parse();
  assemble();
  struct Row {
    const char* stage;
    double seconds;
  };
  std::vector<Row> rows = {{"pull: encode + serialize", Time(reps, encode)},
                           {"push: parse wire bytes", Time(reps, parse)},
                           {"push: assemble tensors", Time(reps, assemble)},
                           {"push: layout, NaN, bound", Time(reps, check)},
                           {"push: fedavg add", Time(reps, add)}};
  double push = 0;
  for (size_t i = 1; i < rows.size(); ++i) push += rows[i].seconds;
  rows.push_back({"push: all of the above", push});
  std::printf("\n%s (%.0f KB, %zu chunks)\n", name.c_str(), bytes / 1000,
              wire.size());
  std::printf("%-28s %10s %12s\n", "stage", "cpu_ms", "MB/s/core");
  for (const Row& r : rows) {
    std::printf("%-28s %10.3f %12.0f\n", r.stage, r.seconds * 1e3,
                bytes / r.seconds / 1e6);
  }
}

}  // namespace
}  // namespace fedberry

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "CPU per update by stage (pull encoding; push parsing, assembly, "
      "checks, fedavg add) for lenet5 and wide-mlp.\nUsage: "
      "update_ingest_bench [--reps=20]");
  absl::ParseCommandLine(argc, argv);
  torch::set_num_threads(1);
  for (const char* model : {"lenet5", "wide-mlp"}) {
    fedberry::Bench(model, absl::GetFlag(FLAGS_reps));
  }
  return 0;
}
