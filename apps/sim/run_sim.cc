#include "apps/sim/run_sim.h"

#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "apps/sim/child_args.h"
#include "apps/sim/sim_report.h"
#include "base/clock.h"
#include "base/shutdown_signal.h"
#include "server/html_report.h"
#include "sim/link_shaper.h"
#include "sim/local_pki.h"
#include "sim/process.h"
#include "sim/reserved_port.h"

namespace fedberry::sim {
namespace {

namespace fs = std::filesystem;

// Says why the federation cannot go on; the exit status `code`.
int Fail(const absl::Status& status, int code) {
  std::fprintf(stderr, "fedberry-sim: %s\n",
               std::string(status.message()).c_str());
  return code;
}

// Removes what an earlier run in the same folder would mix into this one's
// figures (and, unless resuming, its checkpoints), and makes the folders.
absl::Status PrepareOutput(const SimPlan& plan) {
  const std::string& out = plan.output.dir;
  std::error_code ec;
  fs::remove(out + "/rounds.jsonl", ec);
  fs::remove(out + "/clients.jsonl", ec);
  fs::remove(out + "/server.addr", ec);
  if (!plan.job.resume) {
    fs::remove_all(out + "/checkpoints", ec);
    fs::remove_all(out + "/client-checkpoints", ec);
  }
  fs::remove(out + "/report.html", ec);
  for (int g = 0; g < GatewayCount(plan); ++g) {
    const std::string dir = GatewayDir(plan, g);
    fs::remove(dir + "/server.addr", ec);
    fs::remove(dir + "/rounds.jsonl", ec);
    fs::remove(dir + "/clients.jsonl", ec);
    if (!plan.job.resume) fs::remove_all(dir + "/checkpoints", ec);
    fs::create_directories(dir, ec);
  }
  fs::create_directories(out + "/logs", ec);
  if (ec) {
    return absl::InternalError(
        absl::StrFormat("cannot create %s/logs: %s", out, ec.message()));
  }
  return absl::OkStatus();
}

// With --tls, fresh certificates for the server and every board; without,
// none.
absl::StatusOr<std::optional<LocalPki>> MakePki(const SimPlan& plan) {
  if (!plan.transport.tls) return std::optional<LocalPki>();
  std::vector<std::string> names;
  for (int i = 0; i < ClientCount(plan); ++i) {
    names.push_back(absl::StrCat("sim-client-", i));
  }
  auto made = MakeLocalPki(plan.output.dir + "/pki", names);
  if (!made.ok()) return made.status();
  std::printf("fedberry-sim: mutual TLS with fresh certificates in %s/pki\n",
              plan.output.dir.c_str());
  return std::optional<LocalPki>(*std::move(made));
}

// The servers' ports, held until the run ends.
struct HeldPorts {
  std::vector<ReservedPort> held;  // the server's, then the gateways'
  SimPorts ports;
};

// Every server's port is chosen now, so that all processes start at
// once: boards load LibTorch and their data while the servers load.
// Shaped clients reach the server over their veth, not loopback.
absl::StatusOr<HeldPorts> ReservePorts(const SimPlan& plan) {
  HeldPorts h;
  auto server =
      ReservedPort::On(HasShapedLinks(plan) ? "0.0.0.0" : "127.0.0.1");
  if (!server.ok()) return server.status();
  h.ports.server = server->port();
  h.held.push_back(*std::move(server));
  for (int g = 0; g < GatewayCount(plan); ++g) {
    auto reserved = ReservedPort::On("127.0.0.1");
    if (!reserved.ok()) return reserved.status();
    h.ports.gateways.push_back(reserved->port());
    h.held.push_back(*std::move(reserved));
  }
  return h;
}

// The federation's processes: the server, then its site gateways, then the
// clients (client i joins gateway i % gateways), and their names for the
// exit table.
class Federation {
 public:
  explicit Federation(std::string out) : out_(std::move(out)) {}

  // Starts a process logging to logs/NAME.log; on failure says why and
  // stops those already started.
  bool Launch(const std::vector<std::string>& argv, const std::string& name) {
    auto p = Process::Spawn(argv, absl::StrCat(out_, "/logs/", name, ".log"));
    if (!p.ok()) {
      Fail(p.status(), 2);
      SignalAll(SIGTERM);
      return false;
    }
    procs_.push_back(*p);
    names_.push_back(name);
    return true;
  }
  void SignalAll(int sig) {
    for (auto& p : procs_) p.Signal(sig);
  }
  std::vector<Process>& procs() { return procs_; }
  const std::vector<std::string>& names() const { return names_; }
  const std::string& out() const { return out_; }

 private:
  std::string out_;
  std::vector<Process> procs_;
  std::vector<std::string> names_;
};

// The server, then with tiers its site gateways: each takes the server's
// plan, then listens for its own clients.
bool StartServers(const SimPlan& plan, const SimPorts& ports,
                  const LocalPki* pki, Federation& fed) {
  const std::string& out = plan.output.dir;
  if (!fed.Launch(ServerArgs(plan, ports, pki), "server")) return false;
  std::printf("fedberry-sim: server started (log %s/logs/server.log)\n",
              out.c_str());
  for (int g = 0; g < GatewayCount(plan); ++g) {
    const std::string name = absl::StrCat("gateway-", g);
    if (!fed.Launch(GatewayArgs(plan, g, ports), name)) return false;
    std::printf(
        "fedberry-sim: %s on 127.0.0.1:%d for %d clients (log "
        "%s/logs/%s.log)\n",
        name.c_str(), ports.gateways[g], GatewayBoards(plan, g), out.c_str(),
        name.c_str());
  }
  return true;
}

// The boards, a shaped one in its own network namespace (`shaper`: null
// when no link is shaped). False, with the federation stopped, when one
// cannot start.
bool StartClients(const SimPlan& plan, const SimPorts& ports,
                  const LocalPki* pki, LinkShaper* shaper, Federation& fed) {
  for (int i = 0; i < ClientCount(plan); ++i) {
    std::optional<ShapedLink> link;
    if (shaper != nullptr && plan.fleet.boards[i].bandwidth_mbit > 0) {
      const double mbit = plan.fleet.boards[i].bandwidth_mbit;
      auto added = shaper->Add(i, mbit);
      if (!added.ok()) {
        std::fprintf(stderr,
                     "fedberry-sim: cannot shape client-%d's link: %s\n", i,
                     std::string(added.status().message()).c_str());
        fed.SignalAll(SIGTERM);
        return false;
      }
      link = *added;
      std::printf(
          "fedberry-sim: client-%d in network namespace %s, %g Mbit/s "
          "each way (tc tbf)\n",
          i, link->netns.c_str(), mbit);
    }
    std::vector<std::string> argv =
        ClientArgs(plan, i, ports, link ? &*link : nullptr, pki);
    if (link) argv = shaper->Wrap(*link, argv);
    if (!fed.Launch(argv, absl::StrCat("client-", i))) return false;
  }
  return true;
}

// A server writes its bound address into `dir` once it listens; one that
// exits first (or a signal) stops the federation.
bool WaitListening(Federation& fed, const std::string& dir, size_t index,
                   const std::string& name,
                   const std::atomic<bool>& interrupted) {
  while (true) {
    std::string address;
    std::ifstream f(dir + "/server.addr");
    std::getline(f, address);
    if (!address.empty()) return true;
    if (fed.procs()[index].Poll() || interrupted) {
      std::fprintf(stderr,
                   "fedberry-sim: the %s exited before listening; see "
                   "%s/logs/%s.log\n",
                   name.c_str(), fed.out().c_str(), name.c_str());
      fed.SignalAll(SIGTERM);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// The server, then each gateway.
bool WaitAllListening(const SimPlan& plan, Federation& fed,
                      const std::atomic<bool>& interrupted) {
  if (!WaitListening(fed, plan.output.dir, 0, "server", interrupted)) {
    return false;
  }
  for (int g = 0; g < GatewayCount(plan); ++g) {
    if (!WaitListening(fed, GatewayDir(plan, g), 1 + g,
                       absl::StrCat("gateway-", g), interrupted)) {
      return false;
    }
  }
  return true;
}

void PrintStartBanner(const SimPlan& plan, const SimPorts& ports) {
  const int gateways = GatewayCount(plan);
  const std::string address = absl::StrCat(
      HasShapedLinks(plan) ? "0.0.0.0:" : "127.0.0.1:", ports.server);
  std::printf("fedberry-sim: %d clients on %s%s, %d rounds of %s, planner %s\n",
              ClientCount(plan), address.c_str(),
              gateways > 0
                  ? absl::StrCat(" through ", gateways, " gateways").c_str()
                  : "",
              plan.server.rounds.rounds, plan.server.plan.model.c_str(),
              plan.server.planner.planner.c_str());
  const std::vector<BoardProfile>& fleet = plan.fleet.boards;
  for (size_t i = 0; i < fleet.size(); ++i) {
    std::printf(
        "fedberry-sim: client-%zu data_fraction %g compute_slowdown "
        "%g%s\n",
        i, fleet[i].data_fraction, fleet[i].compute_slowdown,
        fleet[i].pause_every > 0
            ? absl::StrFormat(", pauses %g s every %d task(s)",
                              fleet[i].pause_seconds, fleet[i].pause_every)
                  .c_str()
            : "");
  }
  std::fflush(stdout);
}

// procs: the server, then `gateways` site gateways, then the clients
// (client i joins gateway i % gateways). Signals what a server that has
// just ended leaves behind: its boards, which would only retry, and its
// site gateways only when it failed (after a clean end they tell their own
// boards, which may be mid-task, and end).
void StopOrphans(std::vector<Process>& procs, int gateways,
                 std::vector<bool>& ended) {
  const auto server_of = [gateways](size_t k) -> size_t {
    if (k <= static_cast<size_t>(gateways)) return 0;  // the server, gateways
    return gateways > 0 ? 1 + (k - 1 - gateways) % gateways : 0;
  };
  for (size_t s = 0; s <= static_cast<size_t>(gateways); ++s) {
    if (ended[s] || !procs[s].exit()) continue;
    ended[s] = true;
    const bool failed = procs[s].exit()->code != 0;
    for (size_t k = 1; k < procs.size(); ++k) {
      const bool gateway = k <= static_cast<size_t>(gateways);
      if (server_of(k) == s && (!gateway || failed)) procs[k].Signal(SIGTERM);
    }
  }
}

// Shows each round as the server logs it, and a note after 10 s without
// one, until every process has ended; stops what a finished server leaves
// behind, and the whole federation on a signal.
void WatchUntilEnd(const SimPlan& plan, Federation& fed,
                   const std::atomic<bool>& interrupted, Clock& clock,
                   absl::Time start) {
  const int rounds = plan.server.rounds.rounds;
  size_t shown = 0;
  absl::Time last_note = clock.Now();
  bool signalled = false;
  std::vector<bool> ended(fed.procs().size(), false);
  while (true) {
    if (interrupted && !signalled) {
      std::printf("fedberry-sim: interrupted; stopping the federation\n");
      fed.SignalAll(SIGTERM);
      signalled = true;
    }
    auto lines = ReadJsonLines(plan.output.dir + "/rounds.jsonl");
    for (; shown < lines.size(); ++shown) {
      const auto& r = lines[shown];
      std::printf("[%6.1fs] round %d/%d: %d/%d clients, %s, round %.2f s\n",
                  absl::ToDoubleSeconds(clock.Now() - start),
                  static_cast<int>(JsonNumber(r, "round")), rounds,
                  static_cast<int>(JsonNumber(r, "participants")),
                  static_cast<int>(JsonNumber(r, "selected")),
                  RoundFigures(r).c_str(), JsonNumber(r, "round_seconds"));
      std::fflush(stdout);
      last_note = clock.Now();
    }
    bool all_done = true;
    for (auto& p : fed.procs()) all_done &= p.Poll().has_value();
    if (all_done) break;
    StopOrphans(fed.procs(), GatewayCount(plan), ended);
    if (clock.Now() - last_note > absl::Seconds(10)) {
      std::printf("[%6.1fs] round %zu/%d in progress\n",
                  absl::ToDoubleSeconds(clock.Now() - start), shown + 1,
                  rounds);
      std::fflush(stdout);
      last_note = clock.Now();
    }
    // A poll of the processes and the log: real time.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// Each process's exit code and peak memory against its budget; the number
// that failed. A process over its budget is marked and named after the
// table, so a memory regression shows in every run.
int PrintExitTable(const SimPlan& plan, Federation& fed) {
  std::printf("\n%-10s %-10s %-14s %-12s\n", "process", "exit", "peak_rss_MiB",
              "budget_MiB");
  const double mib = 1024.0 * 1024.0;
  int failures = 0;
  std::vector<std::string> over;
  for (size_t i = 0; i < fed.procs().size(); ++i) {
    const auto& e = *fed.procs()[i].exit();
    const std::string& name = fed.names()[i];
    const bool board = absl::StartsWith(name, "client");
    const uint64_t budget =
        board ? plan.fleet.board_rss_budget : plan.fleet.server_rss_budget;
    const double peak = e.max_rss_kib / 1024.0;
    const bool above = peak > budget / mib;
    // A board the fleet profile kills (secagg_kill_*) fails on purpose.
    size_t index = 0;
    const bool killed =
        board && e.code != 0 &&
        absl::SimpleAtoi(absl::StripPrefix(name, "client-"), &index) &&
        index < plan.fleet.boards.size() &&
        plan.fleet.boards[index].secagg_kill_round > 0;
    std::printf("%-10s %-10d %-14.1f %-12.1f%s%s\n", name.c_str(), e.code, peak,
                budget / mib, above ? " OVER BUDGET" : "",
                killed ? " killed (fleet profile)" : "");
    if (above) {
      over.push_back(absl::StrFormat(
          "%s peaked at %.1f MiB, over its %.1f MiB (%s)", name, peak,
          budget / mib, board ? "--board_rss_budget" : "--server_rss_budget"));
    }
    failures += e.code != 0 && !killed;
  }
  for (const std::string& line : over) {
    std::fprintf(stderr, "fedberry-sim: %s\n", line.c_str());
  }
  return failures;
}

// The tables, the report page and the closing line, once every process
// has ended; the exit status.
int Finish(const SimPlan& plan, Federation& fed, double wall) {
  const std::string& out = plan.output.dir;
  const int rounds = plan.server.rounds.rounds;
  auto lines = ReadJsonLines(out + "/rounds.jsonl");
  PrintRoundTable(lines);
  const int failures = PrintExitTable(plan, fed);
  PrintClientTable(out);
  const std::string report = out + "/report.html";
  if (absl::Status s = server::WriteHtmlReport(out, report); s.ok()) {
    std::printf("\nfedberry-sim: report in %s\n", report.c_str());
  } else {
    std::fprintf(stderr, "fedberry-sim: no report: %s\n",
                 std::string(s.message()).c_str());
  }
  std::printf(
      "\nfedberry-sim: %zu/%d rounds, final %s, wall time %.1f s, output in "
      "%s\n",
      lines.size(), rounds,
      lines.empty() ? "no figures" : RoundFigures(lines.back()).c_str(), wall,
      out.c_str());
  if (failures > 0 || static_cast<int>(lines.size()) != rounds) {
    std::fprintf(stderr,
                 "fedberry-sim: the job did not complete cleanly (%d process "
                 "failures); see %s/logs/\n",
                 failures, out.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int RunSim(const SimPlan& plan) {
  if (absl::Status s = PrepareOutput(plan); !s.ok()) return Fail(s, 2);
  // The wall time shown to whoever runs the simulation.
  Clock& clock = Clock::Real();
  const absl::Time start = clock.Now();
  Federation fed(plan.output.dir);
  std::atomic<bool> interrupted{false};
  ShutdownSignal signal([&](int) { interrupted = true; });
  auto pki = MakePki(plan);
  if (!pki.ok()) return Fail(pki.status(), 2);
  const LocalPki* tls = pki->has_value() ? &**pki : nullptr;
  auto ports = ReservePorts(plan);
  if (!ports.ok()) return Fail(ports.status(), 2);
  if (!StartServers(plan, ports->ports, tls, fed)) return 2;
  std::unique_ptr<LinkShaper> shaper;
  if (HasShapedLinks(plan)) {
    shaper = std::make_unique<LinkShaper>(plan.output.dir + "/logs/netns.log");
  }
  if (!StartClients(plan, ports->ports, tls, shaper.get(), fed)) return 2;
  if (!WaitAllListening(plan, fed, interrupted)) return 1;
  PrintStartBanner(plan, ports->ports);
  WatchUntilEnd(plan, fed, interrupted, clock, start);
  const double wall = absl::ToDoubleSeconds(clock.Now() - start);
  if (shaper) shaper->Teardown();  // the namespaces and their veth pairs
  return Finish(plan, fed, wall);
}

}  // namespace fedberry::sim
