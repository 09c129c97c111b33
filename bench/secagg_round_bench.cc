// Round time and bytes up per board with and without secure aggregation:
// a real fedberry-server process (LeNet-5, no evaluation) against N boards
// in this process, each a ClientAgent speaking the real client protocol
// (join, long-polled task, pull, then a push or SecAgg+'s four SecAggStep
// stages) whose trainer trains nothing: it returns the pulled model moved
// by a small seeded step, so the round's time is the protocol's and the
// server's, not training's. Prints, per board count and mode, the median
// round time (rounds.jsonl round_seconds), the server's peak RSS, and the
// bytes each board sent in the round (plain: clients.jsonl's
// rpc_sent_bytes, every call of its round; SecAgg+: secagg_bytes_up / the
// boards, the four stages' messages, plus the same task calls).
//
// Usage: secagg_round_bench [--boards=10,50,200] [--rounds=3]
//                           [--server=PATH] [--out=DIR]
// The boards share this machine's cores with the server: the figures say
// what the protocol costs side by side in one run, not a gateway's speed.
#include <ATen/ATen.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/client_agent.h"
#include "client/local_trainer.h"
#include "sim/process.h"

ABSL_FLAG(std::string, boards, "10,50,200", "board counts, comma-separated");
ABSL_FLAG(int, rounds, 3, "rounds per run");
ABSL_FLAG(std::string, server, FEDBERRY_BIN_DIR "/fedberry-server",
          "the fedberry-server binary");
ABSL_FLAG(std::string, out, "/tmp/secagg-round-bench", "where runs are kept");

namespace fedberry::bench {
namespace {

// Trains nothing: the pulled model plus a seeded step of about 1e-3.
class EchoTrainer : public client::LocalTrainer {
 public:
  explicit EchoTrainer(uint64_t seed) : seed_(seed) {}
  uint64_t num_samples() const override { return 100; }
  absl::StatusOr<client::TrainOutcome> Train(
      const client::TaskRef& task, const v1::TrainConfig&,
      const runtime::NamedTensors& global, const std::atomic<bool>&) override {
    at::Generator g = at::detail::createCPUGenerator(seed_ + task.round);
    client::TrainOutcome out;
    out.num_samples = 100;
    for (const runtime::NamedTensor& t : global) {
      at::Tensor moved = t.tensor.clone();
      if (moved.is_floating_point()) {
        moved.add_(at::normal(0.0, 1e-3, moved.sizes(), g).to(moved.dtype()));
      }
      out.model.push_back({t.name, moved});
    }
    out.metrics.set_train_loss(1.0);
    return out;
  }

 private:
  uint64_t seed_;
};

struct RunFigures {
  double median_round_seconds = 0;
  double bytes_up_per_board = 0;
  double server_peak_mib = 0;
  int boards_counted = 0;  // in the last round
};

std::vector<nlohmann::json> JsonLines(const std::string& path) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(nlohmann::json::parse(line));
  }
  return lines;
}

std::string WaitForAddress(const std::string& out, sim::Process& server) {
  for (int i = 0; i < 600; ++i) {
    std::ifstream in(out + "/server.addr");
    std::string addr;
    if (std::getline(in, addr) && !addr.empty()) return addr;
    if (server.Poll()) return "";
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return "";
}

// The boards, each on its own thread, until the server says DONE.
int RunBoards(const std::string& address, int n, const std::string& dir) {
  std::vector<std::unique_ptr<EchoTrainer>> trainers;
  std::vector<std::unique_ptr<client::ClientAgent>> agents;
  for (int i = 0; i < n; ++i) {
    trainers.push_back(std::make_unique<EchoTrainer>(1000 + i));
    client::AgentOptions o;
    o.name = absl::StrCat("bench-", i);
    o.seed = static_cast<uint64_t>(i);
    o.give_up_after = absl::Minutes(5);
    o.secagg_state_dir = absl::StrCat(dir, "/board-", i, "/secagg");
    grpc::ChannelArguments args;
    args.SetInt("grpc.use_local_subchannel_pool", 1);  // a connection each
    agents.push_back(std::make_unique<client::ClientAgent>(
        o, *trainers.back(),
        v1::Federation::NewStub(grpc::CreateCustomChannel(
            address, grpc::InsecureChannelCredentials(), args))));
  }
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  for (auto& agent : agents) {
    threads.emplace_back([&agent, &failed] {
      if (absl::Status s = agent->Run(); !s.ok()) {
        std::fprintf(stderr, "a board ended with %s\n", s.ToString().c_str());
        ++failed;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return failed.load();
}

// The board's bytes of a round: SecAgg+'s stage messages, else its calls'.
double BytesUpPerBoard(const nlohmann::json& round, const std::string& out,
                       int n) {
  if (round.contains("secagg_bytes_up")) {
    return round.at("secagg_bytes_up").get<double>() / n;
  }
  double sum = 0;
  int boards = 0;
  for (const nlohmann::json& c : JsonLines(out + "/clients.jsonl")) {
    if (c.value("round", 0) == round.at("round").get<int>() &&
        c.contains("rpc_sent_bytes")) {
      sum += c.at("rpc_sent_bytes").get<double>();
      ++boards;
    }
  }
  return boards == 0 ? 0 : sum / boards;
}

absl::StatusOr<RunFigures> RunOnce(int n, bool secagg, const std::string& dir) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string out = dir + "/out";
  std::vector<std::string> argv = {
      absl::GetFlag(FLAGS_server),
      "--listen=127.0.0.1:0",
      absl::StrCat("--rounds=", absl::GetFlag(FLAGS_rounds)),
      absl::StrCat("--min_clients=", n),
      absl::StrCat("--min_clients_to_start=", n),
      absl::StrCat("--max_clients=", n + 10),
      "--model=lenet5",
      "--eval_data=",
      absl::StrCat("--output=", out)};
  if (secagg) argv.push_back("--secure_aggregation=secagg+");
  absl::StatusOr<sim::Process> server =
      sim::Process::Spawn(argv, dir + "/server.log");
  if (!server.ok()) return server.status();
  const std::string address = WaitForAddress(out, *server);
  if (address.empty()) {
    server->Signal(SIGKILL);
    return absl::InternalError(
        absl::StrCat("the server did not start; see ", dir, "/server.log"));
  }
  const int failed = RunBoards(address, n, dir);
  std::optional<sim::ExitInfo> exit;
  for (int i = 0; i < 1800 && !(exit = server->Poll()); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!exit) {
    server->Signal(SIGKILL);
    return absl::InternalError("the server did not end after the job");
  }
  const std::vector<nlohmann::json> rounds = JsonLines(out + "/rounds.jsonl");
  if (failed > 0 || exit->code != 0 ||
      rounds.size() != static_cast<size_t>(absl::GetFlag(FLAGS_rounds))) {
    return absl::InternalError(
        absl::StrCat(failed, " boards failed, server exit ", exit->code, ", ",
                     rounds.size(), " rounds published; see ", dir));
  }
  RunFigures f;
  std::vector<double> seconds;
  double bytes = 0;
  for (const nlohmann::json& r : rounds) {
    seconds.push_back(r.at("round_seconds").get<double>());
    bytes += BytesUpPerBoard(r, out, n);
  }
  std::sort(seconds.begin(), seconds.end());
  f.median_round_seconds = seconds[seconds.size() / 2];
  f.bytes_up_per_board = bytes / static_cast<double>(rounds.size());
  f.server_peak_mib = static_cast<double>(exit->max_rss_kib) / 1024.0;
  f.boards_counted = rounds.back().at("participants").get<int>();
  return f;
}

}  // namespace
}  // namespace fedberry::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  spdlog::set_level(spdlog::level::warn);  // the boards' own lines
  std::vector<int> counts;
  for (absl::string_view s : absl::StrSplit(absl::GetFlag(FLAGS_boards), ',')) {
    int n = 0;
    if (!absl::SimpleAtoi(s, &n) || n < 2) {
      std::fprintf(stderr, "--boards: '%s' is not a board count of 2 or more\n",
                   std::string(s).c_str());
      return 2;
    }
    counts.push_back(n);
  }
  std::printf(
      "LeNet-5, %d rounds per run, boards that train nothing, server and "
      "boards on this machine's cores (not a gateway's or a board's time)\n"
      "%7s %-8s %9s %15s %16s %13s\n",
      absl::GetFlag(FLAGS_rounds), "boards", "mode", "counted",
      "median round s", "bytes up/board", "server MiB");
  for (int n : counts) {
    for (bool secagg : {false, true}) {
      const std::string dir = absl::StrCat(absl::GetFlag(FLAGS_out), "/", n,
                                           secagg ? "-secagg" : "-plain");
      std::fprintf(stderr, "running %d boards, %s ...\n", n,
                   secagg ? "secagg+" : "plain");
      absl::StatusOr<fedberry::bench::RunFigures> f =
          fedberry::bench::RunOnce(n, secagg, dir);
      if (!f.ok()) {
        std::fprintf(stderr, "%d boards, %s: %s\n", n,
                     secagg ? "secagg+" : "plain",
                     f.status().ToString().c_str());
        return 1;
      }
      std::printf("%7d %-8s %9d %15.2f %16.0f %13.1f\n", n,
                  secagg ? "secagg+" : "plain", f->boards_counted,
                  f->median_round_seconds, f->bytes_up_per_board,
                  f->server_peak_mib);
      std::fflush(stdout);
    }
  }
  return 0;
}
