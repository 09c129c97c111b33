// The live fleet page with real processes, rendered in headless Chromium
// as an operator's browser would: boards training and then idle, a board
// too hot to train declining (and saying why), a board name that is a
// script shown as text, an old client told to upgrade, and nothing secret
// on the page or in its JSON.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "sim/process.h"
#include "tests/run_command.h"
#include "tests/test_files.h"

namespace fedberry::fleet_test {
namespace {

using sim::Process;
const std::string kBin = FEDBERRY_BIN_DIR;
const std::string kScriptName = "<script>alert(1)</script>";

void SleepMs(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

// "127.0.0.1:PORT" of the fleet page, from the server's log.
std::string FleetAddress(const std::string& log, Process& server) {
  const std::regex page("fleet page on http://([0-9.]+:[0-9]+)/");
  for (int i = 0; i < 3000 && !server.Poll(); ++i) {
    std::smatch m;
    const std::string text = Slurp(log);
    if (std::regex_search(text, m, page)) return m[1];
    SleepMs(20);
  }
  return "";
}

std::optional<nlohmann::json> FleetJson(const std::string& address) {
  httplib::Client http("http://" + address);
  http.set_connection_timeout(2);
  auto res = http.Get("/api/fleet.json");
  if (!res || res->status != 200) return std::nullopt;
  return nlohmann::json::parse(res->body, nullptr, false);
}

// The page's DOM once Chromium loaded and drew it.
std::string RenderedPage(const std::string& address,
                         const std::string& profile) {
  int code = -1;
  const std::string dom = testing::RunCommand(
      "timeout 90 chromium --headless --no-sandbox --disable-gpu "
      "--no-first-run --user-data-dir=" +
          profile + " --dump-dom http://" + address + "/ 2>/dev/null",
      &code);
  EXPECT_EQ(code, 0) << dom;
  return dom;
}

// The row of board `name` (as it is escaped in the page), or "".
std::string RowOf(const std::string& dom, const std::string& escaped_name) {
  const size_t at = dom.find("<tr data-board=\"" + escaped_name + "\"");
  if (at == std::string::npos) return "";
  return dom.substr(at, dom.find("</tr>", at) - at);
}

class Fleet : public ::testing::Test {
 protected:
  void SetUp() override { testing::WriteTinyDataset(dir_ / "data", 1200); }
  void TearDown() override {
    for (Process& p : processes_) {
      if (!p.Poll()) p.Signal(SIGKILL);
      while (!p.Poll()) SleepMs(10);
    }
  }

  Process& StartServer(const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {kBin + "/fedberry-server",
                                     "--listen=127.0.0.1:0",
                                     "--output=" + (dir_ / "out"),
                                     "--min_clients=2",
                                     "--min_clients_to_start=2",
                                     "--local_steps=150",
                                     "--batch_size=16",
                                     "--eval_data=" + (dir_ / "data"),
                                     "--threads=1",
                                     "--metrics_listen=127.0.0.1:0",
                                     "--lr=0.01"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return Spawn(argv, dir_ / "server.log");
  }

  std::string ServerAddress(Process& server) {
    for (int i = 0; i < 3000 && !server.Poll(); ++i) {
      std::ifstream f(dir_ / "out/server.addr");
      std::string a;
      if (std::getline(f, a) && !a.empty()) return a;
      SleepMs(10);
    }
    ADD_FAILURE() << Slurp(dir_ / "server.log");
    return "";
  }

  // `binary`: fedberry-emulated-client for a board with a test instrument
  // (--compute_slowdown).
  Process& StartBoard(const std::string& address, const std::string& name,
                      int index, const std::vector<std::string>& extra,
                      const std::string& binary = "fedberry-client") {
    std::vector<std::string> argv = {
        kBin + "/" + binary, "--server=" + address, "--data=" + (dir_ / "data"),
        "--partition_index=" + std::to_string(index), "--partition_count=3",
        "--threads=1", "--name=" + name, "--max_backoff=500ms",
        "--give_up_after=120s",
        // The emulated sensors, and a Pi's limit (off by default on x86).
        "--throttled_file=" + (dir_ / "no-throttled-file"),
        "--max_temperature=70"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return Spawn(argv, dir_ / ("board-" + std::to_string(index) + ".log"));
  }

  Process& Spawn(const std::vector<std::string>& argv, const std::string& log) {
    auto p = Process::Spawn(argv, log);
    EXPECT_TRUE(p.ok()) << p.status();
    processes_.push_back(*p);
    return processes_.back();
  }

  testing::TempDir dir_;
  std::deque<Process> processes_;
};

TEST_F(Fleet, ThePageShowsBoardsTrainingThenIdleAndAHotBoardDeclining) {
  WriteText(dir_ / "cool", "45000\n");
  WriteText(dir_ / "hot", "75000\n");  // millidegrees, as the kernel writes
  Process& server = StartServer({"--rounds=2"});
  const std::string address = ServerAddress(server);
  const std::string fleet = FleetAddress(dir_ / "server.log", server);
  ASSERT_FALSE(fleet.empty()) << Slurp(dir_ / "server.log");
  // The hot board first, so that it is there, declining, when round 1
  // opens.
  StartBoard(address, kScriptName, 2, {"--thermal_file=" + (dir_ / "hot")});
  bool declining = false;
  for (int i = 0; i < 600 && !declining; ++i, SleepMs(100)) {
    std::optional<nlohmann::json> j = FleetJson(fleet);
    if (!j || j->is_discarded()) continue;
    for (const auto& b : j->at("boards")) {
      declining |= b.at("state") == "declined";
    }
  }
  ASSERT_TRUE(declining) << Slurp(dir_ / "server.log");
  StartBoard(address, "board-a", 0, {"--thermal_file=" + (dir_ / "cool")});
  // 20x slower: board-a is idle, its update in, while board-b trains on
  // (long enough for Chromium to load the page on a busy machine).
  StartBoard(address, "board-b", 1,
             {"--thermal_file=" + (dir_ / "cool"), "--compute_slowdown=20"},
             "fedberry-emulated-client");

  std::map<std::string, std::vector<std::string>> states;  // as they change
  std::string dom, json, hot_reason;
  for (int i = 0; i < 1200 && !server.Poll(); ++i, SleepMs(100)) {
    std::optional<nlohmann::json> j = FleetJson(fleet);
    if (!j || j->is_discarded()) continue;
    json = j->dump();
    for (const auto& b : j->at("boards")) {
      const std::string name = b.at("name"), state = b.at("state");
      if (states[name].empty() || states[name].back() != state) {
        states[name].push_back(state);
      }
      if (name == kScriptName && state == "declined") {
        hot_reason = b.at("condition").value("declined", "");
      }
    }
    const std::vector<std::string>& a = states["board-a"];
    const bool a_trained_then_idle =
        a.size() >= 2 &&
        std::find(a.begin(), a.end(), "training") < a.end() - 1 &&
        a.back() == "idle";
    if (dom.empty() && a_trained_then_idle && !states["board-b"].empty() &&
        states["board-b"].back() == "training" && !hot_reason.empty()) {
      dom = RenderedPage(fleet, dir_ / "chromium");
    }
  }
  ASSERT_FALSE(dom.empty()) << "never saw board-a idle while board-b trained"
                            << Slurp(dir_ / "server.log");
  EXPECT_NE(hot_reason.find("SoC at 75.0 C, over the 70 C limit"),
            std::string::npos)
      << hot_reason;

  // What a person sees: both boards with their states, the hot board's
  // name as text and why it sits out, the job's round and its chart.
  EXPECT_NE(dom.find("fedberry fleet"), std::string::npos);
  EXPECT_NE(RowOf(dom, "board-a").find("data-state=\"idle\""),
            std::string::npos)
      << dom;
  EXPECT_NE(RowOf(dom, "board-b").find("data-state=\"training\""),
            std::string::npos)
      << dom;
  const std::string hot = RowOf(dom, "&lt;script&gt;alert(1)&lt;/script&gt;");
  ASSERT_FALSE(hot.empty()) << dom;
  EXPECT_NE(hot.find(">declined<"), std::string::npos) << hot;
  EXPECT_NE(hot.find("declines: SoC at 75.0 C, over the 70 C limit"),
            std::string::npos)
      << hot;
  EXPECT_NE(hot.find("75.0 °C"), std::string::npos) << hot;
  // The name stayed text: no script element made it into the page.
  EXPECT_EQ(dom.find("<script"), std::string::npos) << dom;
  EXPECT_NE(RowOf(dom, "board-a").find(">x86_64<"), std::string::npos);

  ASSERT_EQ(server.Poll().value_or(sim::ExitInfo{-1}).code, 0)
      << Slurp(dir_ / "server.log");
  // The hot board sat both rounds out: counted as declined, not dropped.
  std::ifstream rounds(dir_ / "out/rounds.jsonl");
  std::string line;
  int n = 0;
  while (std::getline(rounds, line)) {
    nlohmann::json r = nlohmann::json::parse(line);
    EXPECT_EQ(r.at("declined"), 1) << line;
    EXPECT_EQ(r.at("dropped"), 0) << line;
    EXPECT_EQ(r.at("participants"), 2) << line;
    ++n;
  }
  EXPECT_EQ(n, 2);
  EXPECT_NE(Slurp(dir_ / "board-2.log").find("sits rounds out"),
            std::string::npos);
  // The id a board joined under acts as its credential: never shown.
  const std::regex joined("joined job '[^']*' as (c[0-9]{4}-[0-9a-f]{32})");
  for (const char* log : {"board-0.log", "board-1.log"}) {
    std::smatch m;
    const std::string text = Slurp(dir_ / log);
    ASSERT_TRUE(std::regex_search(text, m, joined)) << text;
    EXPECT_EQ(dom.find(m[1].str()), std::string::npos) << log;
    EXPECT_EQ(json.find(m[1].str()), std::string::npos) << log;
  }
}

// An old client is told to upgrade and keeps asking (no crash loop); the
// page lists it as refused, saying why; under mutual TLS, neither the page
// nor the JSON carries key material.
TEST_F(Fleet, AnOldClientIsToldToUpgradeAndNoKeyIsShown) {
  const std::string pki = dir_ / "fleet";
  for (const std::string& args :
       {"init --dir=" + pki,
        "server localhost --san=DNS:localhost,IP:127.0.0.1 --dir=" + pki,
        "board board-old --dir=" + pki}) {
    int code = -1;
    const std::string out =
        testing::RunCommand(kBin + "/fedberry-pki " + args, &code);
    ASSERT_EQ(code, 0) << args << "\n" << out;
  }
  Process& server = StartServer({"--rounds=1", "--min_client_version=99.0",
                                 "--tls_cert=" + pki + "/localhost.crt",
                                 "--tls_key=" + pki + "/localhost.key",
                                 "--client_ca=" + pki + "/fleet-ca.crt"});
  const std::string address = ServerAddress(server);
  const std::string fleet = FleetAddress(dir_ / "server.log", server);
  ASSERT_FALSE(fleet.empty());
  Process& old = StartBoard(address, "board-old", 0,
                            {"--tls_ca=" + pki + "/fleet-ca.crt",
                             "--tls_cert=" + pki + "/board-old.crt",
                             "--tls_key=" + pki + "/board-old.key"});
  std::optional<nlohmann::json> seen;
  for (int i = 0; i < 600 && !seen; ++i, SleepMs(100)) {
    std::optional<nlohmann::json> j = FleetJson(fleet);
    if (!j || j->is_discarded()) continue;
    for (const auto& b : j->at("boards")) {
      if (b.at("name") == "board-old" && b.at("state") == "refused") seen = b;
    }
  }
  ASSERT_TRUE(seen.has_value()) << Slurp(dir_ / "server.log");
  const std::string why = seen->at("last_refusal");
  EXPECT_NE(why.find("99.0 or newer"), std::string::npos) << why;
  EXPECT_NE(why.find("upgrade fedberry-client"), std::string::npos) << why;
  EXPECT_NE(seen->at("client_version").get<std::string>().find('.'),
            std::string::npos);
  const std::string log = Slurp(dir_ / "board-0.log");
  EXPECT_NE(log.find("upgrade"), std::string::npos) << log;
  SleepMs(1500);
  EXPECT_FALSE(old.Poll().has_value()) << "the refused client ended:\n" << log;

  const std::string dom = RenderedPage(fleet, dir_ / "chromium");
  const std::string row = RowOf(dom, "board-old");
  EXPECT_NE(row.find(">refused<"), std::string::npos) << dom;
  EXPECT_NE(row.find("99.0 or newer"), std::string::npos) << row;

  const std::string json = FleetJson(fleet)->dump();
  for (const char* key : {"localhost.key", "board-old.key", "fleet-ca.key"}) {
    std::ifstream in(pki + "/" + key);
    std::string line;
    std::getline(in, line);  // -----BEGIN ... PRIVATE KEY-----
    ASSERT_TRUE(std::getline(in, line)) << key;  // its first base64 line
    for (const std::string& text : {dom, json}) {
      EXPECT_EQ(text.find(line.substr(0, 40)), std::string::npos) << key;
      EXPECT_EQ(text.find("PRIVATE KEY"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace fedberry::fleet_test
