// Training part of the model with real processes (fedberry-server
// --trainable, two fedberry-client boards): the frozen tensors of the final
// global model are those of the initial model, bit for bit, and the boards
// send a fraction of the bytes of the same job training everything. The
// resume after kills is in kill_test.cc (KillTest.PartialTraining...).
#include <gtest/gtest.h>
#include <torch/serialize.h>
#include <torch/torch.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "sim/process.h"
#include "tests/saved_model.h"
#include "tests/test_files.h"

namespace fedberry::trainable_test {
namespace {

using sim::Process;
const std::string kBin = FEDBERRY_BIN_DIR;
constexpr int kSeed = 3;

sim::ExitInfo WaitExit(Process& p) {
  while (true) {
    if (auto e = p.Poll()) return *e;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

class TrainableJob : public ::testing::Test {
 protected:
  void SetUp() override { testing::WriteTinyDataset(dir_ / "data", 400); }

  // Runs a two-board job into `out` with `extra` server flags.
  void Run(const std::string& out, std::vector<std::string> extra) {
    std::filesystem::create_directories(out);
    std::vector<std::string> server_args = {kBin + "/fedberry-server",
                                            "--listen=127.0.0.1:0",
                                            "--output=" + out,
                                            "--rounds=2",
                                            "--min_clients=2",
                                            "--min_clients_to_start=2",
                                            "--local_steps=20",
                                            "--batch_size=16",
                                            "--model=lenet5",
                                            "--eval_data=",
                                            "--seed=" + std::to_string(kSeed),
                                            "--threads=1"};
    server_args.insert(server_args.end(), extra.begin(), extra.end());
    auto server = Process::Spawn(server_args, out + "/server.log");
    ASSERT_TRUE(server.ok()) << server.status();
    std::string address;
    for (int i = 0; i < 3000 && address.empty() && !server->Poll(); ++i) {
      std::ifstream f(out + "/server.addr");
      std::getline(f, address);
      if (address.empty()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    ASSERT_FALSE(address.empty()) << "see " << out << "/server.log";
    std::vector<Process> clients;
    for (int i = 0; i < 2; ++i) {
      auto c = Process::Spawn(
          {kBin + "/fedberry-client", "--server=" + address,
           "--data=" + (dir_ / "data"),
           "--partition_index=" + std::to_string(i), "--partition_count=2",
           "--threads=1", "--name=client-" + std::to_string(i),
           "--give_up_after=60s"},
          out + "/client-" + std::to_string(i) + ".log");
      ASSERT_TRUE(c.ok()) << c.status();
      clients.push_back(*std::move(c));
    }
    for (auto& c : clients) ASSERT_EQ(WaitExit(c).code, 0) << out;
    ASSERT_EQ(WaitExit(*server).code, 0) << "see " << out << "/server.log";
  }

  // The bytes the boards sent, over the job (clients.jsonl).
  static int64_t SentBytes(const std::string& out) {
    std::ifstream in(out + "/clients.jsonl");
    int64_t sum = 0;
    int lines = 0;
    for (std::string line; std::getline(in, line); ++lines) {
      sum += nlohmann::json::parse(line).value("rpc_sent_bytes", int64_t{0});
    }
    EXPECT_EQ(lines, 4) << out;  // 2 boards x 2 rounds
    return sum;
  }

  testing::TempDir dir_;
};

TEST_F(TrainableJob, FrozenTensorsStayBitIdenticalAndFewerBytesGoUp) {
  Run(dir_ / "full", {});
  Run(dir_ / "head", {"--trainable=fc3\\..*"});
  const auto initial = testing::InitialZooModel("lenet5", kSeed);
  const auto head = testing::ReadSavedNamedModel(dir_ / "head/global_model.pt");
  const auto full = testing::ReadSavedNamedModel(dir_ / "full/global_model.pt");
  ASSERT_EQ(head.size(), initial.size());
  for (const auto& [name, tensor] : initial) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(head.count(name));
    const bool trained = name.rfind("fc3.", 0) == 0;
    EXPECT_EQ(head.at(name).equal(tensor), !trained);
    // The full job moved every tensor: the comparison is not vacuous.
    EXPECT_FALSE(full.at(name).equal(tensor));
  }
  const int64_t head_bytes = SentBytes(dir_ / "head");
  const int64_t full_bytes = SentBytes(dir_ / "full");
  std::printf(
      "bytes sent by the boards: %lld training fc3, %lld training all\n",
      static_cast<long long>(head_bytes), static_cast<long long>(full_bytes));
  // fc3 is 850 of LeNet-5's 44,426 parameters.
  EXPECT_LT(head_bytes * 10, full_bytes);
  EXPECT_GT(testing::CountLines(dir_ / "head/server.log",
                                "trains fc3.weight fc3.bias only"),
            0);
}

TEST_F(TrainableJob, ARegexMatchingNoParameterStopsTheServer) {
  const std::string out = dir_ / "none";
  std::filesystem::create_directories(out);
  auto server = Process::Spawn(
      {kBin + "/fedberry-server", "--listen=127.0.0.1:0", "--output=" + out,
       "--model=lenet5", "--eval_data=", "--trainable=head\\..*"},
      out + "/server.log");
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_EQ(WaitExit(*server).code, 2);
  EXPECT_GT(testing::CountLines(out + "/server.log",
                                "--trainable=head\\..* matches no parameter"),
            0);
  EXPECT_GT(testing::CountLines(out + "/server.log", "fc3.bias"), 0);
}

}  // namespace
}  // namespace fedberry::trainable_test
