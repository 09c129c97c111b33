// Crash-safety shown by killing real processes: a harness SIGKILLs a
// training client (or the server) at random moments, some of them inside
// checkpoint writes (kill points armed by FEDBERRY_KILL_POINTS), restarts
// it, and checks that the job always resumes and ends with the same global
// model, bit for bit, as a job that was never interrupted.
//
// FEDBERRY_KILL_TARGET sets how many client kills a run aims for (default
// 30, which keeps the whole CI run short; the server gets an eighth of it,
// at least 4); the `soak` ctest label runs 200.
#include <gtest/gtest.h>
#include <signal.h>
#include <torch/serialize.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "sim/local_pki.h"
#include "sim/process.h"
#include "tests/saved_model.h"
#include "tests/test_files.h"
#include "tests/torchscript_export.h"

namespace fedberry::kill_test {
namespace {

using sim::Process;
const std::string kBin = FEDBERRY_BIN_DIR;
constexpr int kRounds = 3;

int KillTarget() {
  const char* env = std::getenv("FEDBERRY_KILL_TARGET");
  return env ? std::atoi(env) : 30;
}

void SleepMs(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

// Polls until the process ends or `ms` pass; returns its exit if it ended.
std::optional<sim::ExitInfo> WaitFor(Process& p, int ms) {
  for (int waited = 0; waited <= ms; waited += 5) {
    if (auto e = p.Poll()) return e;
    SleepMs(5);
  }
  return std::nullopt;
}

sim::ExitInfo WaitExit(Process& p) {
  while (true) {
    if (auto e = p.Poll()) return *e;
    SleepMs(10);
  }
}

class KillTest : public ::testing::Test {
 protected:
  void SetUp() override { testing::WriteTinyDataset(dir_ / "data", 1200); }

  std::vector<std::string> ServerArgs(const std::string& out,
                                      const std::string& listen, int clients) {
    std::vector<std::string> args = {
        kBin + "/fedberry-server", "--listen=" + listen, "--output=" + out,
        "--rounds=" + std::to_string(rounds_),
        "--min_clients=" + std::to_string(clients),
        "--min_clients_to_start=" + std::to_string(clients),
        "--local_steps=600", "--batch_size=16", "--model=lenet5",
        "--eval_data=", "--seed=3", "--threads=1",
        // Random pixels and labels, 600 steps: local training diverges
        // (updates move the model 1e5 x its norm), which the update
        // bound would refuse. This test is about crashes, not learning.
        "--max_update_ratio=0"};
    args.insert(args.end(), server_extra_.begin(), server_extra_.end());
    return args;
  }

  std::vector<std::string> ClientArgs(const std::string& out,
                                      const std::string& address, int i,
                                      int clients) {
    std::vector<std::string> args = {
        kBin + "/fedberry-client",
        "--server=" + address,
        "--data=" + (dir_ / "data"),
        "--partition_index=" + std::to_string(i),
        "--partition_count=" + std::to_string(clients),
        "--threads=1",
        "--name=client-" + std::to_string(i),
        "--checkpoint_dir=" + out + "/client-ckpt-" + std::to_string(i),
        "--checkpoint_every_batches=7",
        "--max_backoff=300ms",
        "--give_up_after=120s"};
    args.insert(args.end(), client_extra_.begin(), client_extra_.end());
    return args;
  }

  Process Spawn(const std::vector<std::string>& argv, const std::string& log,
                const char* kill_points = nullptr) {
    if (kill_points) setenv("FEDBERRY_KILL_POINTS", kill_points, 1);
    auto p = Process::Spawn(argv, log);
    unsetenv("FEDBERRY_KILL_POINTS");
    EXPECT_TRUE(p.ok()) << p.status();
    return *p;
  }

  std::string Address(const std::string& out, Process& server) {
    for (int i = 0; i < 3000; ++i) {
      std::ifstream f(out + "/server.addr");
      std::string a;
      if (std::getline(f, a) && !a.empty()) return a;
      if (server.Poll()) break;
      SleepMs(10);
    }
    ADD_FAILURE() << "server did not start; see " << out << "/server.log";
    return "";
  }

  // A job that nobody interrupts.
  void Reference(const std::string& out, int clients) {
    std::filesystem::create_directories(out);
    Process server =
        Spawn(ServerArgs(out, "127.0.0.1:0", clients), out + "/server.log");
    const std::string address = Address(out, server);
    std::vector<Process> cs;
    for (int i = 0; i < clients; ++i) {
      cs.push_back(Spawn(ClientArgs(out, address, i, clients),
                         out + "/client-" + std::to_string(i) + ".log"));
    }
    for (auto& c : cs) ASSERT_EQ(WaitExit(c).code, 0);
    ASSERT_EQ(WaitExit(server).code, 0);
  }

  static std::vector<torch::Tensor> Model(const std::string& path) {
    return testing::ReadSavedModel(path);
  }

  static void ExpectSameModel(const std::string& a, const std::string& b) {
    auto ma = Model(a), mb = Model(b);
    ASSERT_EQ(ma.size(), mb.size());
    ASSERT_FALSE(ma.empty());
    for (size_t i = 0; i < ma.size(); ++i) {
      EXPECT_TRUE(ma[i].equal(mb[i])) << "tensor " << i << " differs";
    }
  }

  // Waits until `log` holds more than `before` lines with `needle` (this
  // life of the process got that far) or the process ends.
  static void WaitForLine(Process& p, const std::string& log,
                          const std::string& needle, int before) {
    for (int i = 0; i < 6000 && !p.Poll(); ++i) {
      if (testing::CountLines(log, needle) > before) return;
      SleepMs(5);
    }
  }

  // Kills the one client of a job at random moments, `target` times, and
  // checks the job ends with the uninterrupted job's model.
  void KillClientRepeatedly(int target);
  // Kills the server of a two-board job mid-round, mid-checkpoint and just
  // after one, and checks every round is reported once and the job ends
  // with the uninterrupted job's model.
  void KillServerRepeatedly();

  testing::TempDir dir_;
  int rounds_ = kRounds;                   // the job's
  std::vector<std::string> server_extra_;  // e.g. another model
  std::vector<std::string> client_extra_;  // e.g. certificates
  std::string server_kill_points_ = "ckpt.*:0.2";
  std::mt19937 rng_{std::random_device{}()};
};

TEST_F(KillTest, ClientKilledAtRandomMomentsResumesToTheSameModel) {
  const int target = KillTarget();
  // A job long enough for the kills: 3 rounds take about 50 of them before
  // the job ends (a soak run of 200 ended after 85 with 3 rounds).
  rounds_ = kRounds * std::max(1, target / 50);
  KillClientRepeatedly(target);
}

// The same with a user's model: a TorchScript module exported by
// python3-torch (batch norm and dropout, so the RNG and the running
// statistics must resume exactly too), trained with Adam, whose moments are
// in the client's checkpoint.
TEST_F(KillTest, TorchScriptModelWithAdamResumesToTheSameModel) {
  if (!testing::HavePythonTorch()) {
    GTEST_SKIP() << "needs /usr/bin/python3 with python3-torch";
  }
  ASSERT_TRUE(testing::ExportTorchScript(
      testing::CnnScript(1, 28, 10, /*traced=*/false), dir_ / "cnn.pt"));
  server_extra_ = {"--model=" + (dir_ / "cnn.pt"), "--optimizer=adam",
                   "--lr=0.002", "--input_shape=1,28,28", "--num_outputs=10"};
  rounds_ = 2;
  KillClientRepeatedly(std::max(10, KillTarget() / 4));
  EXPECT_GT(
      testing::CountLines(dir_ / "kill/client-0.log", "fetched model file"), 0);
}

// The same over mutual TLS: every restart of the board makes a new TLS
// connection and joins again under its certificate's name, and resumes the
// round it was selected for.
TEST_F(KillTest, ClientKilledOverMutualTlsResumesToTheSameModel) {
  auto pki = sim::MakeLocalPki(dir_ / "pki", {"client-0"});
  ASSERT_TRUE(pki.ok()) << pki.status();
  server_extra_ = {"--tls_cert=" + pki->server_cert,
                   "--tls_key=" + pki->server_key,
                   "--client_ca=" + pki->ca_cert};
  client_extra_ = {"--tls_ca=" + pki->ca_cert,
                   "--tls_cert=" + pki->board_certs[0],
                   "--tls_key=" + pki->board_keys[0],
                   "--tls_server_name=" + pki->server_name};
  rounds_ = 2;
  KillClientRepeatedly(std::max(10, KillTarget() / 4));
  EXPECT_GT(testing::CountLines(dir_ / "kill/server.log", "mutual TLS"), 0);
}

// The same training part of the model (--trainable) with top-k updates:
// the board's checkpointed optimizer state covers the trained parameters
// only and its top-k leftovers the tensors that travel; the job still ends
// with the uninterrupted job's model, whose frozen tensors are the initial
// ones.
TEST_F(KillTest, PartialTrainingWithTopKResumesToTheSameModel) {
  server_extra_ = {"--trainable=fc.*", "--update_encoding=topk",
                   "--topk_fraction=0.1"};
  rounds_ = 2;
  KillClientRepeatedly(std::max(10, KillTarget() / 4));
  EXPECT_GT(testing::CountLines(dir_ / "kill/server.log",
                                "trains fc1.weight fc1.bias"),
            0);
  const auto initial = testing::InitialZooModel("lenet5", 3);
  const auto last = testing::ReadSavedNamedModel(dir_ / "kill/global_model.pt");
  for (const auto& [name, tensor] : initial) {
    EXPECT_EQ(last.at(name).equal(tensor), name.rfind("conv", 0) == 0) << name;
  }
}

void KillTest::KillClientRepeatedly(int target) {
  Reference(dir_ / "ref", 1);

  const std::string out = dir_ / "kill";
  std::filesystem::create_directories(out);
  Process server =
      Spawn(ServerArgs(out, "127.0.0.1:0", 1), out + "/server.log");
  const std::string address = Address(out, server);
  int kills = 0, self_kills = 0, starts = 0;
  std::uniform_int_distribution<int> delay(0, 700);
  const std::string log = out + "/client-0.log";
  while (true) {
    ASSERT_LT(starts, 20 * target + 50) << "the job does not finish";
    ++starts;
    const bool killing = kills < target;
    const int joined = testing::CountLines(log, "joined job");
    Process client = Spawn(ClientArgs(out, address, 0, 1), log,
                           killing ? "ckpt.*:0.03" : nullptr);
    // Kill at a random moment after this life joined the job.
    if (killing) WaitForLine(client, log, "joined job", joined);
    std::optional<sim::ExitInfo> e =
        killing ? WaitFor(client, delay(rng_)) : WaitExit(client);
    if (!e) {
      client.Signal(SIGKILL);
      e = WaitExit(client);
      ++kills;
      continue;
    }
    if (e->code == 128 + SIGKILL) {  // died at a kill point
      ++kills;
      ++self_kills;
      continue;
    }
    ASSERT_EQ(e->code, 0) << "client failed; see " << out << "/client-0.log";
    break;
  }
  ASSERT_EQ(WaitExit(server).code, 0);
  const int resumes = testing::CountLines(log, "resuming round");
  const int corrupt = testing::CountLines(log, "skipped checkpoint");
  std::printf(
      "client kill test: %d kills (%d inside checkpoint writes), %d starts, "
      "%d resumes from a checkpoint, %d corrupt checkpoints skipped\n",
      kills, self_kills, starts, resumes, corrupt);
  EXPECT_GE(kills, target);
  EXPECT_GT(resumes, 0);
  EXPECT_EQ(testing::CountLines(log, "cannot read"),
            0);  // never loaded a bad one
  ExpectSameModel(dir_ / "ref/global_model.pt", out + "/global_model.pt");
}

TEST_F(KillTest, ServerKilledMidRoundAndMidCheckpointCompletesTheJob) {
  KillServerRepeatedly();
}

// The same with a stateful strategy and encoded updates: FedAdam's moments
// and step count are in the federation checkpoint, and each board keeps its
// top-k leftovers, also when a reopened round makes it train a task again.
TEST_F(KillTest, ServerKilledUnderFedAdamWithTopKUpdatesEndsExactly) {
  server_extra_ = {"--strategy=fedadam", "--server_lr=0.05", "--tau=0.01",
                   "--update_encoding=topk", "--topk_fraction=0.05"};
  KillServerRepeatedly();
  EXPECT_GT(testing::CountLines(dir_ / "kill/server.log", "fedadam"), 0);
}

// With an evaluation set the server evaluates each round while the next
// one trains; kills also land just after such an evaluation, before its
// round is reported. Every round is still reported once, and the job ends
// with the uninterrupted job's model.
TEST_F(KillTest, ServerKilledAfterAnOverlappedEvaluationEndsExactly) {
  server_extra_ = {"--eval_data=" + (dir_ / "data")};
  server_kill_points_ = "ckpt.*:0.2,round.overlapped_evaluation:0.5";
  KillServerRepeatedly();
  EXPECT_GT(
      testing::CountLines(dir_ / "kill/server.log", "is evaluated while round"),
      0);
}

// Under differential privacy the budget is in the federation checkpoint: a
// server killed mid-round and mid-checkpoint reports, round by round, the
// epsilon of the uninterrupted job, charges each round once, and (with a
// fixed noise seed, drawn again for a reopened round) ends with its model.
TEST_F(KillTest, ServerKilledUnderDifferentialPrivacyReportsTheSameEpsilons) {
  server_extra_ = {"--dp_noise_multiplier=1.0", "--dp_clip=0.05",
                   "--dp_noise_seed=11"};
  KillServerRepeatedly();
  auto spending = [](const std::string& path) {
    std::vector<std::pair<int64_t, double>> out;
    std::ifstream rounds(path);
    std::string line;
    while (std::getline(rounds, line)) {
      auto j = nlohmann::json::parse(line);
      out.emplace_back(j.at("dp_steps").get<int64_t>(),
                       j.at("dp_epsilon").get<double>());
    }
    return out;
  };
  const auto reference = spending(dir_ / "ref/rounds.jsonl");
  ASSERT_EQ(reference.size(), static_cast<size_t>(rounds_));
  for (int r = 1; r <= rounds_; ++r) {
    EXPECT_EQ(reference[r - 1].first, r);  // q = 1: no short draw
    if (r > 1) {
      EXPECT_GT(reference[r - 1].second, reference[r - 2].second);
    }
  }
  EXPECT_EQ(spending(dir_ / "kill/rounds.jsonl"), reference);
}

void KillTest::KillServerRepeatedly() {
  const int target = std::max(4, KillTarget() / 8);
  // Rounds enough for the kills: one after a round is durable moves the job
  // on, and a fast machine finishes 3 rounds before 6 kills.
  rounds_ = 5;
  Reference(dir_ / "ref", 2);

  const std::string out = dir_ / "kill";
  std::filesystem::create_directories(out);
  Process server = Spawn(ServerArgs(out, "127.0.0.1:0", 2), out + "/server.log",
                         server_kill_points_.c_str());
  const std::string address = Address(out, server);
  std::vector<Process> clients;
  for (int i = 0; i < 2; ++i) {
    clients.push_back(Spawn(ClientArgs(out, address, i, 2),
                            out + "/client-" + std::to_string(i) + ".log"));
  }
  int kills = 0, self_kills = 0;
  std::uniform_int_distribution<int> delay(0, 300);
  const std::string log = out + "/server.log";
  while (true) {
    // Kills cycle through three moments: mid-round (just after an update
    // arrived), just after a round closed (while its checkpoint is being
    // written; kill points inside the write protocol add more of those), and
    // just after a checkpoint became durable. Until a restart has resumed
    // from a checkpoint at least once, the harness keeps killing.
    const bool resumed = testing::CountLines(log, "resuming the job") > 0;
    const bool killing = kills < target || (!resumed && kills < 4 * target);
    // In the last two rounds kills are mid-round only, at once: a kill
    // after the last round is durable would end the job under the harness.
    const bool near_the_end =
        testing::CountLines(out + "/rounds.jsonl", "\"round\"") >= rounds_ - 2;
    if (killing) {
      static const char* kAnchors[] = {"update ", " done: ", " saved as "};
      const std::string anchor = near_the_end ? "update " : kAnchors[kills % 3];
      WaitForLine(server, log, anchor, testing::CountLines(log, anchor));
    }
    std::optional<sim::ExitInfo> e =
        killing ? WaitFor(server, near_the_end ? 0 : delay(rng_))
                : WaitExit(server);
    if (!e) {
      server.Signal(SIGKILL);
      WaitExit(server);
      ++kills;
    } else if (e->code == 128 + SIGKILL) {
      ++kills;
      ++self_kills;
    } else {
      ASSERT_EQ(e->code, 0) << "see " << out << "/server.log";
      break;
    }
    ASSERT_LT(kills, 10 * target + 20);
    // Same address: clients reconnect to the restarted server.
    server = Spawn(ServerArgs(out, address, 2), out + "/server.log",
                   kills < target ? server_kill_points_.c_str() : nullptr);
  }
  for (auto& c : clients) EXPECT_EQ(WaitExit(c).code, 0);
  std::printf(
      "server kill test: %d kills (%d inside checkpoint writes), %d "
      "resumes from a checkpoint\n",
      kills, self_kills,
      testing::CountLines(out + "/server.log", "resuming the job"));
  EXPECT_GE(kills, target);
  EXPECT_GT(testing::CountLines(out + "/server.log", "resuming the job"), 0);
  // Every round exactly once in the metrics, and the same final model.
  std::ifstream rounds(out + "/rounds.jsonl");
  std::string line;
  std::vector<int> seen;
  while (std::getline(rounds, line)) {
    seen.push_back(nlohmann::json::parse(line)["round"].get<int>());
  }
  std::vector<int> expected;
  for (int r = 1; r <= rounds_; ++r) expected.push_back(r);
  EXPECT_EQ(seen, expected);
  ExpectSameModel(dir_ / "ref/global_model.pt", out + "/global_model.pt");
}

// Asynchronous rounds: the buffer, the version counter and the boards'
// tasks are in the federation checkpoint, written after every update the
// buffer takes. One board (so the updates arrive in one order): the server
// is killed just after an update arrived, mid-buffer, and the job still
// reports every version once and ends with the uninterrupted job's model.
TEST_F(KillTest, AsyncServerKilledMidBufferEndsWithTheSameVersions) {
  rounds_ = 4;
  server_extra_ = {"--mode=async", "--async_buffer=3", "--local_steps=60"};
  Reference(dir_ / "ref", 1);
  const std::string out = dir_ / "kill";
  std::filesystem::create_directories(out);
  const std::string log = out + "/server.log";
  Process server = Spawn(ServerArgs(out, "127.0.0.1:0", 1), log);
  const std::string address = Address(out, server);
  Process client = Spawn(ClientArgs(out, address, 0, 1), out + "/client-0.log");
  int kills = 0;
  while (kills < 3 && !server.Poll()) {
    // Mid-buffer: just after an update that does not fill the buffer (a
    // full one publishes its version).
    const int updates = testing::CountLines(log, "update ");
    const int full = testing::CountLines(log, "update 3/3");
    WaitForLine(server, log, "update ", updates);
    if (testing::CountLines(log, "update 3/3") > full) continue;
    // Once just as the update is counted (before it is durable: the board,
    // not yet answered, pushes it again), else once it is durable.
    if (kills != 1) {
      WaitForLine(server, log, "saved as",
                  testing::CountLines(log, "saved as"));
    }
    server.Signal(SIGKILL);
    WaitExit(server);
    ++kills;
    // Same address: the board reconnects to the restarted server.
    server = Spawn(ServerArgs(out, address, 1), log);
  }
  ASSERT_EQ(WaitExit(server).code, 0) << "see " << log;
  EXPECT_EQ(WaitExit(client).code, 0);
  EXPECT_EQ(kills, 3);
  EXPECT_GT(testing::CountLines(log, "resuming the job"), 0);
  EXPECT_GT(testing::CountLines(log, "its buffer held"), 0);
  std::ifstream rounds(out + "/rounds.jsonl");
  std::string line;
  std::vector<int> seen;
  while (std::getline(rounds, line)) {
    seen.push_back(nlohmann::json::parse(line)["version"].get<int>());
  }
  EXPECT_EQ(seen, (std::vector<int>{1, 2, 3, 4}));
  ExpectSameModel(dir_ / "ref/global_model.pt", out + "/global_model.pt");
}

// Data moves with kills at their awkward moments: the sender right after it
// handed samples over, the receiver right after it fetched them, and the
// server while it holds moved samples. Plans follow measured speeds, so the
// model is not compared with a reference run; what must hold is that the
// job ends, that samples moved, and that in every round each sample was
// trained exactly once (the round's FedAvg weights add up to the shards).
TEST_F(KillTest, DataMovesSurviveKilledSendersReceiversAndTheServer) {
  rounds_ = 4;
  const std::string out = dir_ / "moves";
  std::filesystem::create_directories(out);
  auto server_args = [&](const std::string& listen) {
    std::vector<std::string> a = ServerArgs(out, listen, 2);
    for (std::string& arg : a) {
      if (arg.rfind("--local_steps=", 0) == 0) arg = "--local_steps=0";
    }
    a.insert(a.end(), {"--local_epochs=1", "--planner=greedy", "--data_moves"});
    return a;
  };
  const std::string slog = out + "/server.log";
  Process server = Spawn(server_args("127.0.0.1:0"), slog);
  const std::string address = Address(out, server);
  auto client_args = [&](int i) {
    std::vector<std::string> a = ClientArgs(out, address, i, 2);
    a.push_back("--allow_data_moves");
    if (i == 1) {  // the sender, slowed: a test instrument
      a[0] = kBin + "/fedberry-emulated-client";
      a.push_back("--compute_slowdown=6");
    }
    return a;
  };
  const std::string logs[] = {out + "/client-0.log", out + "/client-1.log"};
  std::vector<Process> clients;
  for (int i = 0; i < 2; ++i) clients.push_back(Spawn(client_args(i), logs[i]));
  auto kill_client = [&](int i, const std::string& anchor) {
    WaitForLine(clients[i], logs[i], anchor, 0);
    ASSERT_GT(testing::CountLines(logs[i], anchor), 0)
        << "client-" << i << " never logged '" << anchor << "'; see "
        << logs[i];
    clients[i].Signal(SIGKILL);
    WaitExit(clients[i]);
    clients[i] = Spawn(client_args(i), logs[i]);
  };
  kill_client(1, "samples over to client-0");
  kill_client(0, "samples from client-1");
  // The server, as soon as the next move's samples arrive.
  const std::string deposit = "samples from client-1";
  WaitForLine(server, slog, deposit, testing::CountLines(slog, deposit));
  ASSERT_FALSE(server.Poll().has_value()) << "the job ended too soon";
  server.Signal(SIGKILL);
  WaitExit(server);
  server = Spawn(server_args(address), slog);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(WaitExit(clients[i]).code, 0) << "see " << logs[i];
  }
  ASSERT_EQ(WaitExit(server).code, 0) << "see " << slog;

  EXPECT_GT(testing::CountLines(slog, "resuming the job"), 0);
  std::vector<int> seen;
  int64_t moved = 0;
  std::ifstream rounds(out + "/rounds.jsonl");
  std::string line;
  while (std::getline(rounds, line)) {
    const auto r = nlohmann::json::parse(line);
    seen.push_back(r["round"].get<int>());
    moved += r.value("moved_samples", int64_t{0});
  }
  EXPECT_EQ(seen, (std::vector<int>{1, 2, 3, 4}));
  EXPECT_GT(moved, 0);
  std::map<int, int64_t> trained;
  std::ifstream per_client(out + "/clients.jsonl");
  while (std::getline(per_client, line)) {
    const auto c = nlohmann::json::parse(line);
    trained[c["round"].get<int>()] += c["num_samples"].get<int64_t>();
  }
  for (const auto& [round, samples] : trained) {
    EXPECT_EQ(samples, 1200) << "round " << round << ": see " << out;
  }
  std::printf(
      "data-move kill test: %lld samples moved over %zu rounds; after the "
      "server kill, %d update(s) refused until lent samples were sent again, "
      "%d fetch(es) asked again\n",
      static_cast<long long>(moved), seen.size(),
      testing::CountLines(logs[1], "hand them over again"),
      testing::CountLines(logs[0], "asking again"));
}

}  // namespace
}  // namespace fedberry::kill_test
