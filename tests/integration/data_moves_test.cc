// Data moves (the opt-in mode for trusted clusters) end to end: a real
// in-process server planning moves, real client agents handing samples over
// and fetching them through it, and real PlanTrainers training on them.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "client/client_agent.h"
#include "client/plan_trainer.h"
#include "client/testing/fleet_emulation.h"
#include "proto/wire.h"
#include "runtime/model.h"
#include "runtime/model_zoo.h"
#include "server/federation_server.h"

namespace fedberry::data_moves_test {
namespace {

constexpr int64_t kRows = 640;

// 28x28 images whose first three pixels name the board and the row, so a
// sample can be traced wherever it trains.
runtime::ImageDataset TaggedData(uint8_t board) {
  runtime::ImageDataset d;
  d.rows = kRows;
  d.height = 28;
  d.width = 28;
  d.pixels.resize(kRows * 28 * 28);
  for (int64_t r = 0; r < kRows; ++r) {
    uint8_t* p = &d.pixels[r * 28 * 28];
    for (int i = 3; i < 28 * 28; ++i) p[i] = (r % 10) * 20 + (i % 7);
    p[0] = board;
    p[1] = static_cast<uint8_t>(r >> 8);
    p[2] = static_cast<uint8_t>(r & 0xff);
    d.labels.push_back(r % 10);
  }
  return d;
}

// (board, row) of each sample of `d`.
std::multiset<std::pair<int, int>> Tags(const runtime::ImageDataset& d) {
  std::multiset<std::pair<int, int>> tags;
  for (int64_t r = 0; r < d.rows; ++r) {
    const uint8_t* p = &d.pixels[r * d.height * d.width];
    tags.insert({p[0], p[1] * 256 + p[2]});
  }
  return tags;
}

// Records each round's data moves as the trainer saw them.
class SpyTrainer : public client::LocalTrainer {
 public:
  explicit SpyTrainer(client::LocalTrainer& inner) : inner_(inner) {}
  uint64_t num_samples() const override { return inner_.num_samples(); }
  uint64_t sample_bytes() const override { return inner_.sample_bytes(); }
  absl::StatusOr<runtime::ImageDataset> SamplesToLend(
      const client::TaskRef& task, const v1::TrainConfig& config,
      uint64_t count) override {
    return inner_.SamplesToLend(task, config, count);
  }
  absl::StatusOr<client::TrainOutcome> Train(
      const client::TaskRef& task, const v1::TrainConfig& config,
      const runtime::NamedTensors& global,
      const std::atomic<bool>& stop) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      Seen& seen = rounds_[task.round];
      seen.task = {task.round, task.task_id};
      seen.config = config;
      if (task.data != nullptr) {
        seen.lent = task.data->lent;
        for (const auto& b : task.data->borrowed) {
          auto tags = Tags(b);
          seen.received.insert(tags.begin(), tags.end());
        }
      }
    }
    return inner_.Train(task, config, global, stop);
  }
  struct Seen {
    client::TaskRef task;
    v1::TrainConfig config;
    uint64_t lent = 0;
    std::multiset<std::pair<int, int>> received;
  };
  std::map<uint64_t, Seen> rounds() {
    std::lock_guard<std::mutex> lock(mu_);
    return rounds_;
  }

 private:
  client::LocalTrainer& inner_;
  std::mutex mu_;
  std::map<uint64_t, Seen> rounds_;
};

struct Board {
  std::string name;
  std::unique_ptr<client::PlanTrainer> trainer;
  std::unique_ptr<client::SlowedTrainer> slowed;
  std::unique_ptr<SpyTrainer> spy;
};

std::vector<server::RoundReport> RunJob(std::vector<Board>& boards,
                                        bool server_moves, bool clients_allow,
                                        int rounds) {
  at::manual_seed(3);
  auto net = runtime::MakeImageModel("mlp");
  EXPECT_TRUE(net.ok());
  server::ServerOptions o;
  o.listen = "127.0.0.1:0";
  o.coordinator.rounds = rounds;
  o.coordinator.min_clients_per_round = static_cast<int>(boards.size());
  o.coordinator.min_clients_to_start = static_cast<int>(boards.size());
  o.coordinator.train.set_model("mlp");
  o.coordinator.train.set_local_epochs(1);
  o.coordinator.train.set_batch_size(32);
  o.coordinator.train.set_learning_rate(0.05);
  // Without data moves, greedy would plan steps instead: uniform keeps
  // every board's work what it holds.
  o.coordinator.planning.planner = server_moves ? "greedy" : "uniform";
  o.coordinator.planning.data_moves = server_moves;
  o.max_poll = absl::Milliseconds(500);
  o.done_grace = absl::Seconds(5);
  // Reports as the sink hears them: the coordinator's history keeps no
  // per-board entries.
  auto reports = std::make_shared<std::vector<server::RoundReport>>();
  auto server = server::FederationServer::Start(
      o, (*net)->State(), nullptr,
      [reports](const server::RoundReport& r) { reports->push_back(r); });
  EXPECT_TRUE(server.ok()) << server.status();
  std::vector<std::unique_ptr<client::ClientAgent>> agents;
  for (Board& b : boards) {
    client::AgentOptions a;
    a.name = b.name;
    a.rpc_timeout = absl::Seconds(30);
    a.poll_timeout = absl::Seconds(5);
    a.backoff.initial = absl::Milliseconds(50);
    a.give_up_after = absl::Seconds(20);
    a.allow_data_moves = clients_allow;
    agents.push_back(std::make_unique<client::ClientAgent>(
        a, *b.spy,
        v1::Federation::NewStub(
            wire::MakeClientChannel((*server)->address()))));
  }
  std::vector<absl::Status> done(agents.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < agents.size(); ++i) {
    threads.emplace_back([&, i] { done[i] = agents[i]->Run(); });
  }
  for (auto& t : threads) t.join();
  (*server)->Wait();
  for (const auto& s : done) EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(reports->size(), (*server)->coordinator().history().size());
  return *reports;
}

std::vector<Board> Fleet(double slowdown) {
  std::vector<Board> boards;
  for (int i = 0; i < 3; ++i) {
    Board b;
    b.name = i == 0 ? "slow" : absl::StrCat("fast-", i);
    b.trainer = std::make_unique<client::PlanTrainer>(TaggedData(i + 1),
                                                      /*seed_salt=*/i);
    client::LocalTrainer* inner = b.trainer.get();
    if (i == 0) {
      b.slowed = std::make_unique<client::SlowedTrainer>(*b.trainer, slowdown);
      inner = b.slowed.get();
    }
    b.spy = std::make_unique<SpyTrainer>(*inner);
    boards.push_back(std::move(b));
  }
  return boards;
}

std::map<std::string, uint64_t> SamplesByClient(const server::RoundReport& r) {
  std::map<std::string, uint64_t> out;
  for (const auto& c : r.clients) out[c.client_name] = c.num_samples;
  return out;
}

TEST(DataMoves, SlowBoardHandsSamplesToFastOnesAndEverySampleTrainsOnce) {
  std::vector<Board> boards = Fleet(/*slowdown=*/20);
  const auto history = RunJob(boards, true, true, 3);
  ASSERT_EQ(history.size(), 3u);
  // Round 1: nothing measured yet, so nothing moves.
  EXPECT_EQ(history[0].moved_samples, 0u);
  for (const auto& [name, n] : SamplesByClient(history[0])) {
    EXPECT_EQ(n, static_cast<uint64_t>(kRows)) << name;
  }
  const auto slow_seen = boards[0].spy->rounds();
  for (size_t r = 1; r < history.size(); ++r) {
    const server::RoundReport& report = history[r];
    SCOPED_TRACE(absl::StrCat("round ", report.round));
    EXPECT_EQ(report.participants, 3);
    EXPECT_GT(report.moved_samples, 0u);
    EXPECT_EQ(report.planner, "greedy+moves");
    const auto samples = SamplesByClient(report);
    uint64_t total = 0;
    for (const auto& [name, n] : samples) total += n;
    // Every sample trained exactly once in the round, by someone.
    EXPECT_EQ(total, 3u * kRows);
    EXPECT_EQ(samples.at("slow"), kRows - report.moved_samples);
    // What the slow board lent is exactly what the fast boards received.
    const SpyTrainer::Seen& lent = slow_seen.at(report.round);
    EXPECT_EQ(lent.lent, report.moved_samples);
    auto lent_samples =
        boards[0].trainer->SamplesToLend(lent.task, lent.config, lent.lent);
    ASSERT_TRUE(lent_samples.ok()) << lent_samples.status();
    std::multiset<std::pair<int, int>> received;
    for (int i = 1; i < 3; ++i) {
      const auto seen = boards[i].spy->rounds().at(report.round);
      EXPECT_EQ(seen.lent, 0u);
      EXPECT_EQ(samples.at(boards[i].name), kRows + seen.received.size());
      received.insert(seen.received.begin(), seen.received.end());
    }
    EXPECT_EQ(received, Tags(*lent_samples));
    for (const auto& [board, row] : received) EXPECT_EQ(board, 1);
  }
}

TEST(DataMoves, NothingMovesUnlessBothServerAndClientsAllowIt) {
  for (const bool server_moves : {false, true}) {
    SCOPED_TRACE(server_moves ? "clients do not allow" : "server mode off");
    std::vector<Board> boards = Fleet(/*slowdown=*/20);
    const auto history = RunJob(boards, server_moves, !server_moves, 2);
    ASSERT_EQ(history.size(), 2u);
    for (const auto& r : history) {
      EXPECT_EQ(r.moved_samples, 0u);
      for (const auto& [name, n] : SamplesByClient(r)) {
        EXPECT_EQ(n, static_cast<uint64_t>(kRows)) << name;
      }
    }
    for (const Board& b : boards) {
      for (const auto& [round, seen] : b.spy->rounds()) {
        EXPECT_EQ(seen.lent, 0u);
        EXPECT_TRUE(seen.received.empty());
      }
    }
  }
}

}  // namespace
}  // namespace fedberry::data_moves_test
