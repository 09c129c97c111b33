// The server's current figures for its Prometheus endpoint: job state,
// round outcomes and each client's latest and cumulative resource readings
// (from the ResourceMetrics sent with updates). Record() takes every round
// report; Render() writes the exposition page. A reading no client ever
// sent is left out of the page rather than shown as 0.
// Thread-safety: thread-safe (the round driver records, HTTP threads
// render).
#ifndef FEDBERRY_SERVER_SERVER_METRICS_H_
#define FEDBERRY_SERVER_SERVER_METRICS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "server/fleet/fleet_status.h"
#include "server/round/round_types.h"
#include "server/stream_limiter.h"

namespace fedberry::server {

class PrometheusText;
class RoundCoordinator;

// One stream bound's figures at scrape time (see StreamLimiter).
struct StreamBoundStatus {
  std::string bound;  // "streams" (model and sample), "updates", "headers"
  int active = 0;
  int waiting = 0;
  StreamLimiter::CutOffs cut_offs;
};

// What the coordinator (and the server's stream bounds) say about the job
// at scrape time.
struct JobStatus {
  bool running = false;
  uint64_t current_round = 0;
  int rounds = 0;
  int registered_clients = 0;
  std::vector<StreamBoundStatus> stream_bounds;
  std::vector<BoardRow> boards;  // by name
};

// The coordinator's state as a JobStatus.
JobStatus StatusOf(const RoundCoordinator& coordinator);

class ServerMetrics {
 public:
  void Record(const RoundReport& report);
  // The Prometheus text page for the job's state and every figure so far.
  std::string Render(const JobStatus& status) const;
  // Adds each board's latest resource figures (samples/s, peak RSS,
  // watchdog pauses) to its row, matched by name.
  void Glance(std::vector<BoardRow>& rows) const;

 private:
  // The latest evaluation on the boards' gauges.
  void AddBoardEval(PrometheusText& p) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  static void AddPrivacy(const PrivacyFigures& d, PrometheusText& p);
  static void AddSecAgg(const SecAggFigures& s, PrometheusText& p);
  // Asynchronous rounds: the latest version and its staleness.
  static void AddVersion(uint64_t version, const VersionFigures& v,
                         PrometheusText& p);
  static void RenderStreamBounds(const JobStatus& status, PrometheusText& p);
  static void RenderBoards(const JobStatus& status, PrometheusText& p);
  // The counters of rounds and updates over the job.
  void AddTotals(PrometheusText& p) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  struct ClientFigures {
    v1::DeviceInfo device;
    uint64_t rounds = 0;
    double train_seconds = 0;
    double train_loss = 0;
    std::optional<double> cpu_seconds, cpu_utilization, samples_per_second;
    std::optional<uint64_t> rss, peak_rss;
    std::optional<uint64_t> rpc_sent, rpc_received, net_rx, net_tx;
    std::optional<uint64_t> pauses;
    std::optional<double> paused_seconds;
  };
  // One client's figures; a reading it never sent is left out.
  static void AddClient(const std::string& name, const ClientFigures& f,
                        PrometheusText& p);

  mutable absl::Mutex mu_;
  uint64_t rounds_completed_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t rounds_refused_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t accepted_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t rejected_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t stragglers_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t declined_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<RoundReport> last_ ABSL_GUARDED_BY(mu_);
  // The latest evaluation on the boards (not every round has one), and the
  // round it evaluated.
  std::optional<BoardEvalSummary> last_board_eval_ ABSL_GUARDED_BY(mu_);
  uint64_t last_board_eval_round_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, ClientFigures> clients_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_SERVER_METRICS_H_
