// A short real job in one process: the gRPC server with its metrics log,
// Prometheus page and HTTP endpoint, and two agents training LeNet-5 on a
// tiny generated data set with real /proc readings. Checks that every
// client and round lands in the JSON lines with plausible figures, and that
// /metrics answers in valid exposition format and /healthz in JSON.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "base/version.h"
#include "client/client_agent.h"
#include "client/plan_trainer.h"
#include "proto/wire.h"
#include "runtime/image_dataset.h"
#include "runtime/model_zoo.h"
#include "runtime/periodic_sampler.h"
#include "runtime/resource_monitor.h"
#include "server/federation_server.h"
#include "server/fleet/fleet_status.h"
#include "server/fleet_view.h"
#include "server/metrics_http_server.h"
#include "server/metrics_log.h"
#include "server/server_metrics.h"
#include "tests/exposition_parser.h"
#include "tests/test_files.h"

namespace fedberry::observability_test {
namespace {

std::vector<nlohmann::json> ReadLines(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line));
  return out;
}

TEST(Observability, ShortJobFillsJsonLinesAndServesMetrics) {
  testing::TempDir dir;
  testing::WriteTinyDataset(dir.path(), 200);
  constexpr int kRounds = 2;
  at::manual_seed(3);
  auto net = runtime::MakeImageModel("lenet5");
  ASSERT_TRUE(net.ok());

  auto log = server::MetricsLog::Open(dir / "out");
  ASSERT_TRUE(log.ok()) << log.status();
  server::ServerMetrics figures;
  server::ServerOptions o;
  o.listen = "127.0.0.1:0";
  o.coordinator.rounds = kRounds;
  o.coordinator.min_clients_per_round = 2;
  o.coordinator.min_clients_to_start = 2;
  o.coordinator.train.set_model("lenet5");
  o.coordinator.train.set_local_steps(15);
  o.coordinator.train.set_batch_size(16);
  o.coordinator.train.set_learning_rate(0.02);
  o.max_poll = absl::Milliseconds(500);
  o.done_grace = absl::Seconds(5);
  auto server = server::FederationServer::Start(
      o, (*net)->State(), nullptr, [&](const server::RoundReport& r) {
        (*log)->Write(r);
        figures.Record(r);
      });
  ASSERT_TRUE(server.ok()) << server.status();
  server::RoundCoordinator* coordinator = &(*server)->coordinator();
  const server::FleetJob job{"obs-job", "lenet5", "fedavg"};
  const auto fleet = [&] {
    return server::FleetOf(*coordinator, figures, job, absl::Now());
  };
  auto http = server::MetricsHttpServer::Start(
      "127.0.0.1:0",
      {[&] { return server::StatusOf(*coordinator); },
       [&](const server::JobStatus& s) { return figures.Render(s); },
       [&] { return server::FleetPage(fleet()); },
       [&] { return server::FleetJson(fleet()); }});
  ASSERT_TRUE(http.ok()) << http.status();
  httplib::Client web("127.0.0.1", (*http)->port());

  auto health = web.Get("/healthz");
  ASSERT_TRUE(health) << "no answer from /healthz";
  EXPECT_EQ(health->status, 200);
  EXPECT_TRUE(nlohmann::json::parse(health->body)["job_running"].get<bool>());

  std::vector<std::unique_ptr<client::PlanTrainer>> trainers;
  std::vector<std::unique_ptr<runtime::ResourceMonitor>> monitors;
  std::vector<std::unique_ptr<client::ClientAgent>> agents;
  for (int i = 0; i < 2; ++i) {
    runtime::PartitionSpec part;
    part.index = i;
    part.count = 2;
    auto data =
        runtime::LoadIdxDataset(dir.path(), runtime::Split::kTrain, &part);
    ASSERT_TRUE(data.ok()) << data.status();
    trainers.push_back(
        std::make_unique<client::PlanTrainer>(*std::move(data), i));
    monitors.push_back(std::make_unique<runtime::ResourceMonitor>(
        runtime::ProcFiles::Real(), Clock::Real()));
    client::AgentOptions a;
    a.name = "obs-" + std::to_string(i);
    a.device.set_architecture("test-arch");
    a.device.set_cores(2);
    a.rpc_timeout = absl::Seconds(30);
    a.poll_timeout = absl::Seconds(5);
    a.give_up_after = absl::Seconds(20);
    a.monitor = monitors.back().get();
    agents.push_back(std::make_unique<client::ClientAgent>(
        a, *trainers.back(),
        v1::Federation::NewStub(
            wire::MakeClientChannel((*server)->address()))));
  }
  {
    runtime::PeriodicSampler s0(absl::Milliseconds(10),
                                [&] { monitors[0]->Sample(); });
    absl::Status s[2];
    std::thread c0([&] { s[0] = agents[0]->Run(); });
    std::thread c1([&] { s[1] = agents[1]->Run(); });
    c0.join();
    c1.join();
    EXPECT_TRUE(s[0].ok()) << s[0];
    EXPECT_TRUE(s[1].ok()) << s[1];
  }
  (*server)->Wait();

  // Every client and every round in the JSON lines, with real figures.
  auto clients = ReadLines(dir / "out/clients.jsonl");
  ASSERT_EQ(clients.size(), 2u * kRounds);
  std::set<std::pair<int, std::string>> seen;
  int with_device = 0;
  for (const auto& c : clients) {
    SCOPED_TRACE(c.dump());
    seen.insert({c["round"].get<int>(), c["client"].get<std::string>()});
    EXPECT_GT(c["train_seconds"].get<double>(), 0);
    EXPECT_GT(c["client_wall_seconds"].get<double>(), 0);
    EXPECT_GE(c["client_wall_seconds"].get<double>(),
              c["train_seconds"].get<double>());
    EXPECT_GT(c["samples_per_second"].get<double>(), 0);
    ASSERT_TRUE(c.contains("cpu_seconds"));
    EXPECT_GE(c["cpu_seconds"].get<double>(), 0);
    EXPECT_GT(c["rss_bytes"].get<uint64_t>(), 1u << 20);
    EXPECT_GE(c["peak_rss_bytes"].get<uint64_t>(),
              c["rss_bytes"].get<uint64_t>());
    // A LeNet-5 model is ~240 KB of fp32 each way.
    EXPECT_GT(c["rpc_received_bytes"].get<uint64_t>(), 200'000u);
    EXPECT_GT(c["rpc_sent_bytes"].get<uint64_t>(), 200'000u);
    EXPECT_FALSE(c.contains("watchdog_pauses"));  // no watchdog yet: absent
    if (c.contains("device")) {
      ++with_device;
      EXPECT_EQ(c["device"]["architecture"], "test-arch");
    }
  }
  EXPECT_EQ(seen.size(), 2u * kRounds);
  EXPECT_EQ(with_device, 2);  // once per client
  auto rounds = ReadLines(dir / "out/rounds.jsonl");
  ASSERT_EQ(rounds.size(), static_cast<size_t>(kRounds));
  for (int r = 0; r < kRounds; ++r) {
    EXPECT_EQ(rounds[r]["round"].get<int>(), r + 1);
    EXPECT_EQ(rounds[r]["participants"].get<int>(), 2);
    EXPECT_EQ(rounds[r]["dropped"].get<int>(), 0);
    EXPECT_EQ(rounds[r]["stragglers"].get<int>(), 0);
    EXPECT_GT(rounds[r]["round_seconds"].get<double>(), 0);
    EXPECT_EQ(rounds[r]["declined"].get<int>(), 0);
    EXPECT_GE(rounds[r]["elapsed_seconds"].get<double>(),
              rounds[r]["round_seconds"].get<double>() - 1e-9);
    if (r > 0) {
      EXPECT_GT(rounds[r]["elapsed_seconds"].get<double>(),
                rounds[r - 1]["elapsed_seconds"].get<double>());
    }
    EXPECT_GT(rounds[r]["aggregation_seconds"].get<double>(), 0);
  }

  // The Prometheus page parses and holds the job's figures.
  auto res = web.Get("/metrics");
  ASSERT_TRUE(res) << "no answer from /metrics";
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"),
            "text/plain; version=0.0.4; charset=utf-8");
  auto page = testing::ParseExposition(res->body);
  ASSERT_EQ(page.error, "") << res->body;
  EXPECT_EQ(page.Value("fedberry_job_running"), 0);
  EXPECT_EQ(page.Value("fedberry_rounds_completed_total"), kRounds);
  EXPECT_EQ(page.Value("fedberry_updates_accepted_total"), 2 * kRounds);
  for (const char* name : {"obs-0", "obs-1"}) {
    EXPECT_EQ(page.Value("fedberry_client_rounds_total", {{"client", name}}),
              kRounds);
    EXPECT_GT(
        page.Value("fedberry_client_resident_memory_bytes", {{"client", name}}),
        0);
    EXPECT_GT(page.Value("fedberry_client_rpc_received_bytes_total",
                         {{"client", name}}),
              0);
  }
  health = web.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_FALSE(nlohmann::json::parse(health->body)["job_running"].get<bool>());

  // The fleet page and its JSON: both boards, idle after the last round
  // they delivered to, with their release and figures; a page that may
  // run no script.
  auto json = web.Get("/api/fleet.json");
  ASSERT_TRUE(json);
  EXPECT_EQ(json->get_header_value("Content-Type"), "application/json");
  const nlohmann::json f = nlohmann::json::parse(json->body);
  EXPECT_EQ(f["state"], "done");
  EXPECT_EQ(f["accuracy"].size(), 0u);  // no evaluator in this job
  ASSERT_EQ(f["boards"].size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const nlohmann::json& b = f["boards"][i];
    SCOPED_TRACE(b.dump());
    EXPECT_EQ(b["name"], "obs-" + std::to_string(i));
    EXPECT_EQ(b["state"], "idle");
    EXPECT_EQ(b["round"], kRounds);
    EXPECT_EQ(b["client_version"], std::string(FedberryVersion()));
    EXPECT_EQ(b["architecture"], "test-arch");
    EXPECT_GT(b["samples_per_second"].get<double>(), 0);
    EXPECT_GT(b["peak_rss_bytes"].get<uint64_t>(), 1u << 20);
    EXPECT_FALSE(b["last_seen"].get<std::string>().empty());
  }
  auto html = web.Get("/");
  ASSERT_TRUE(html);
  EXPECT_EQ(html->status, 200);
  EXPECT_EQ(html->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(html->get_header_value("Content-Security-Policy")
                .find("default-src 'none'"),
            std::string::npos);
  EXPECT_NE(html->body.find("<tr data-board=\"obs-1\" data-state=\"idle\">"),
            std::string::npos)
      << html->body;
}

// A port alone binds loopback: the page is for a local scraper or a tunnel
// unless the operator names an address. The page carries figures only.
TEST(MetricsEndpoint, APortAloneBindsLoopbackAndServesNoModel) {
  for (const char* listen : {"0", ":0"}) {
    auto http = server::MetricsHttpServer::Start(
        listen, {[] { return server::JobStatus{}; },
                 [](const server::JobStatus&) { return std::string("x 1\n"); },
                 nullptr, nullptr});
    ASSERT_TRUE(http.ok()) << http.status();
    EXPECT_EQ((*http)->address().rfind("127.0.0.1:", 0), 0u)
        << (*http)->address();
    httplib::Client web("127.0.0.1", (*http)->port());
    // No fleet handlers given: no fleet page either.
    for (const char* path :
         {"/model", "/global_model.pt", "/plan", "/", "/api/fleet.json"}) {
      auto res = web.Get(path);
      ASSERT_TRUE(res);
      EXPECT_EQ(res->status, 404) << path;
    }
  }
}

}  // namespace
}  // namespace fedberry::observability_test
