// What transport security costs: a real FederationServer on loopback, in
// plaintext, TLS and mutual TLS, with fresh certificates (EC P-256) from
// the fleet PKI. Prints plain figures, never assertions:
//   - handshake: a new channel and its first call (GetPlan), median ms;
//   - round: one board's GetTask, PullModel and PushUpdate of the whole
//     model (what a round moves), median ms, for LeNet-5 (247 KB) and a
//     model of about 6 MB.
// --serve=MODE runs only the server (prints its address and the PKI
// folder); --connect=ADDRESS --pki=DIR runs only the board's side, so the
// aarch64 build can be timed under qemu against a host server.
#include <spdlog/spdlog.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "proto/wire.h"
#include "runtime/model_zoo.h"
#include "security/transport.h"
#include "server/federation_server.h"
#include "sim/local_pki.h"

ABSL_FLAG(int, handshakes, 40, "Handshakes timed per mode.");
ABSL_FLAG(int, rounds, 12, "Rounds timed per mode and model.");
ABSL_FLAG(std::string, serve, "",
          "Only serve: plaintext, tls or mtls (prints the address).");
ABSL_FLAG(std::string, model, "lenet5",
          "With --serve: lenet5 or big (about 6 MB).");
ABSL_FLAG(std::string, connect, "", "Only the board's side, to this server.");
ABSL_FLAG(std::string, pki, "",
          "With --connect: the folder --serve printed (empty: plaintext).");
ABSL_FLAG(bool, board_certificate, true,
          "With --connect --pki: present the board's certificate (mtls).");

namespace fedberry {
namespace {

using Clock_ = std::chrono::steady_clock;

double Ms(Clock_::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

enum class Mode { kPlaintext, kTls, kMutualTls };
const char* Name(Mode m) {
  return m == Mode::kPlaintext ? "plaintext"
         : m == Mode::kTls     ? "TLS"
                               : "mutual TLS";
}

runtime::NamedTensors ModelNamed(const std::string& name) {
  if (name == "big") {
    // One 6 MB tensor: what matters here is bytes on the wire.
    return {{"weight", torch::full({1536 * 1024}, 0.01f)}};
  }
  auto net = runtime::MakeImageModel(name);
  return (*net)->State();
}

uint64_t Bytes(const runtime::NamedTensors& model) {
  uint64_t b = 0;
  for (const auto& t : model) b += t.tensor.numel() * t.tensor.element_size();
  return b;
}

std::unique_ptr<server::FederationServer> Serve(
    Mode mode, const sim::LocalPki& pki, runtime::NamedTensors model,
    security::ServerTransport* keep) {
  security::ServerTransportOptions t;
  t.listen = "127.0.0.1:0";
  if (mode != Mode::kPlaintext) {
    t.tls.cert = pki.server_cert;
    t.tls.key = pki.server_key;
    if (mode == Mode::kMutualTls) t.tls.client_ca = pki.ca_cert;
  }
  auto transport = security::MakeServerTransport(t, absl::Now());
  if (!transport.ok()) {
    std::fprintf(stderr, "%s\n", transport.status().ToString().c_str());
    std::exit(1);
  }
  *keep = *std::move(transport);
  server::ServerOptions o;
  o.listen = t.listen;
  o.credentials = keep->credentials;
  o.access = keep->access;
  o.coordinator.rounds = 1 << 20;
  o.coordinator.min_clients_per_round = 1;
  o.coordinator.min_clients_to_start = 1;
  o.coordinator.max_update_ratio = 0;
  o.coordinator.train.set_model("lenet5");
  o.coordinator.train.set_local_epochs(1);
  o.max_poll = absl::Milliseconds(200);
  auto s =
      server::FederationServer::Start(o, std::move(model), nullptr, nullptr);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.status().ToString().c_str());
    std::exit(1);
  }
  return *std::move(s);
}

// A fresh channel (a new connection and handshake) to `address`.
std::shared_ptr<grpc::Channel> Channel(const std::string& address,
                                       const sim::LocalPki* pki,
                                       bool board_certificate, int salt) {
  grpc::ChannelArguments args = wire::ClientChannelArguments();
  args.SetInt("fedberry.bench.connection", salt);  // no subchannel reuse
  security::ClientTransportOptions t;
  t.server = address;
  if (pki != nullptr) {
    t.tls.ca = pki->ca_cert;
    t.tls.server_name = pki->server_name;
    if (board_certificate) {
      t.tls.cert = pki->board_certs[0];
      t.tls.key = pki->board_keys[0];
    }
  }
  auto transport = security::MakeClientTransport(t, args, absl::Now());
  if (!transport.ok()) {
    std::fprintf(stderr, "%s\n", transport.status().ToString().c_str());
    std::exit(1);
  }
  return transport->channel;
}

double HandshakeMs(const std::string& address, const sim::LocalPki* pki,
                   bool board_certificate, int n) {
  std::vector<double> ms;
  for (int i = 0; i < n; ++i) {
    const auto start = Clock_::now();
    auto stub = v1::Federation::NewStub(
        Channel(address, pki, board_certificate, getpid() * 1000 + i));
    grpc::ClientContext c;
    wire::SetDeadline(c, absl::Seconds(30));
    v1::GetPlanRequest request;
    v1::GetPlanResponse response;
    grpc::Status s = stub->GetPlan(&c, request, &response);
    if (!s.ok()) {
      std::fprintf(stderr, "GetPlan: %s\n", s.error_message().c_str());
      std::exit(1);
    }
    ms.push_back(Ms(Clock_::now() - start));
  }
  return Median(ms);
}

// One board's rounds: task, the whole model down, the same model back up.
double RoundMs(const std::string& address, const sim::LocalPki* pki,
               bool board_certificate, int rounds) {
  auto stub = v1::Federation::NewStub(
      Channel(address, pki, board_certificate, getpid()));
  grpc::ClientContext jc;
  wire::SetDeadline(jc, absl::Seconds(30));
  v1::JoinRequest join;
  join.set_client_name("sim-client-0");
  join.set_num_samples(1000);
  v1::JoinResponse joined;
  if (grpc::Status s = stub->Join(&jc, join, &joined); !s.ok()) {
    std::fprintf(stderr, "Join: %s\n", s.error_message().c_str());
    std::exit(1);
  }
  std::vector<double> ms;
  for (int r = 0; r < rounds + 1; ++r) {
    v1::GetTaskResponse task;
    do {
      grpc::ClientContext c;
      wire::SetDeadline(c, absl::Seconds(30));
      v1::GetTaskRequest request;
      request.set_client_id(joined.client_id());
      if (grpc::Status s = stub->GetTask(&c, request, &task); !s.ok()) {
        std::fprintf(stderr, "GetTask: %s\n", s.error_message().c_str());
        std::exit(1);
      }
    } while (task.action() != v1::GetTaskResponse::TRAIN);
    const auto start = Clock_::now();
    std::vector<v1::UpdateChunk> update(1);
    v1::UpdateHeader* h = update[0].mutable_header();
    h->set_client_id(joined.client_id());
    h->set_round(task.round());
    h->set_task_id(task.task_id());
    h->set_num_samples(1);
    {
      grpc::ClientContext c;
      wire::SetDeadline(c, absl::Seconds(60));
      v1::PullModelRequest request;
      request.set_client_id(joined.client_id());
      request.set_round(task.round());
      request.set_task_id(task.task_id());
      auto reader = stub->PullModel(&c, request);
      v1::ModelChunk chunk;
      while (reader->Read(&chunk)) {
        update.emplace_back();
        *update.back().mutable_chunk() = chunk;
      }
      if (grpc::Status s = reader->Finish(); !s.ok()) {
        std::fprintf(stderr, "PullModel: %s\n", s.error_message().c_str());
        std::exit(1);
      }
    }
    {
      grpc::ClientContext c;
      wire::SetDeadline(c, absl::Seconds(60));
      v1::PushUpdateResponse response;
      auto writer = stub->PushUpdate(&c, &response);
      for (const auto& m : update) writer->Write(m);
      writer->WritesDone();
      if (grpc::Status s = writer->Finish(); !s.ok()) {
        std::fprintf(stderr, "PushUpdate: %s\n", s.error_message().c_str());
        std::exit(1);
      }
    }
    if (r > 0) ms.push_back(Ms(Clock_::now() - start));  // r 0 warms up
  }
  return Median(ms);
}

int Main() {
  spdlog::set_level(spdlog::level::warn);
  const std::string dir = (std::filesystem::temp_directory_path() /
                           absl::StrCat("fedberry-tls-bench-", getpid()))
                              .string();
  if (!absl::GetFlag(FLAGS_connect).empty()) {
    const std::string pki_dir = absl::GetFlag(FLAGS_pki);
    std::optional<sim::LocalPki> pki;
    if (!pki_dir.empty()) {
      pki.emplace();
      pki->ca_cert = pki_dir + "/fleet-ca.crt";
      pki->board_certs = {pki_dir + "/sim-client-0.crt"};
      pki->board_keys = {pki_dir + "/sim-client-0.key"};
    }
    const sim::LocalPki* p = pki ? &*pki : nullptr;
    const bool cert = absl::GetFlag(FLAGS_board_certificate);
    std::printf("handshake %.2f ms, round %.1f ms (%s)\n",
                HandshakeMs(absl::GetFlag(FLAGS_connect), p, cert,
                            absl::GetFlag(FLAGS_handshakes)),
                RoundMs(absl::GetFlag(FLAGS_connect), p, cert,
                        absl::GetFlag(FLAGS_rounds)),
                p == nullptr ? "plaintext"
                : cert       ? "mutual TLS"
                             : "TLS");
    return 0;
  }
  auto pki = sim::MakeLocalPki(dir, {"sim-client-0"});
  if (!pki.ok()) {
    std::fprintf(stderr, "%s\n", pki.status().ToString().c_str());
    return 1;
  }
  if (!absl::GetFlag(FLAGS_serve).empty()) {
    const std::string m = absl::GetFlag(FLAGS_serve);
    const Mode mode = m == "plaintext" ? Mode::kPlaintext
                      : m == "tls"     ? Mode::kTls
                                       : Mode::kMutualTls;
    security::ServerTransport keep;
    auto server =
        Serve(mode, *pki, ModelNamed(absl::GetFlag(FLAGS_model)), &keep);
    std::printf("serving %s on %s, PKI in %s\n", Name(mode),
                server->address().c_str(), dir.c_str());
    std::fflush(stdout);
    server->Wait();
    return 0;
  }
  std::printf("%-18s %-12s %14s %12s\n", "model", "transport", "handshake ms",
              "round ms");
  for (const std::string model : {"lenet5", "big"}) {
    const runtime::NamedTensors initial = ModelNamed(model);
    const std::string label =
        absl::StrCat(model == "big" ? "6 MB" : "LeNet-5", " (",
                     Bytes(initial) / 1024, " KiB)");
    for (Mode mode : {Mode::kPlaintext, Mode::kTls, Mode::kMutualTls}) {
      security::ServerTransport keep;
      auto server = Serve(mode, *pki, runtime::CloneState(initial), &keep);
      const sim::LocalPki* p = mode == Mode::kPlaintext ? nullptr : &*pki;
      const bool cert = mode == Mode::kMutualTls;
      const double handshake = HandshakeMs(server->address(), p, cert,
                                           absl::GetFlag(FLAGS_handshakes));
      const double round =
          RoundMs(server->address(), p, cert, absl::GetFlag(FLAGS_rounds));
      std::printf("%-18s %-12s %14.2f %12.1f\n", label.c_str(), Name(mode),
                  handshake, round);
      std::fflush(stdout);
      server->Stop();
    }
  }
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace fedberry

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Handshake and round times of a real server in plaintext, TLS and mutual "
      "TLS.");
  absl::ParseCommandLine(argc, argv);
  return fedberry::Main();
}
