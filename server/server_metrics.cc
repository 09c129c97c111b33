#include "server/server_metrics.h"

#include "server/prometheus_text.h"
#include "server/round_coordinator.h"

namespace fedberry::server {
namespace {

template <typename T>
void Accumulate(std::optional<T>& total, bool has, T value) {
  if (has) total = total.value_or(T{}) + value;
}

// A metric family with a client's reading, if it sent one.
struct OptionalReading {
  const char* name;
  PrometheusText::Type type;
  const char* help;
  std::optional<double> value;
};

std::optional<double> AsDouble(const std::optional<uint64_t>& v) {
  if (!v) return std::nullopt;
  return static_cast<double>(*v);
}

// The job's state at scrape time.
void AddJob(const JobStatus& status, PrometheusText& p) {
  p.Gauge("fedberry_job_running", "1 while the federated job runs, else 0.",
          status.running ? 1 : 0);
  p.Gauge("fedberry_job_rounds", "Rounds the job is configured to run.",
          status.rounds);
  p.Gauge("fedberry_current_round",
          "The round being collected (or next to open).",
          static_cast<double>(status.current_round));
  p.Gauge("fedberry_registered_clients", "Clients registered with the server.",
          status.registered_clients);
}

// The server's evaluation of the latest global model.
void AddTestEval(const runtime::EvalResult& eval, PrometheusText& p) {
  if (eval.regression) {
    p.Gauge("fedberry_test_rmse",
            "Held-out root mean squared error of the latest global "
            "model (regression).",
            eval.rmse);
    p.Gauge("fedberry_test_mae",
            "Held-out mean absolute error of the latest global model "
            "(regression).",
            eval.mae);
  } else {
    p.Gauge("fedberry_test_accuracy_ratio",
            "Held-out accuracy of the latest global model (0..1).",
            eval.accuracy);
  }
  p.Gauge("fedberry_test_loss",
          "Held-out mean loss of the latest global model.", eval.mean_loss);
}

// The last completed round's times and evaluation.
void AddLastRound(const RoundReport& last, PrometheusText& p) {
  p.Gauge("fedberry_last_round", "Number of the last completed round.",
          static_cast<double>(last.round));
  p.Gauge("fedberry_last_round_duration_seconds",
          "Wall time of the last completed round, open to close.",
          last.round_seconds);
  p.Gauge("fedberry_last_round_aggregation_seconds",
          "Time the last round spent aggregating updates.",
          last.aggregation_seconds);
  p.Gauge("fedberry_last_round_evaluation_seconds",
          "Time the last round spent evaluating the global model.",
          last.eval_seconds);
  p.Gauge("fedberry_last_round_participants",
          "Updates accepted in the last completed round.", last.participants);
  if (last.eval) AddTestEval(*last.eval, p);
}

// The board's facts, when it sent them.
void AddClientDevice(const std::string& name, const v1::DeviceInfo& device,
                     PrometheusText& p) {
  if (device.ByteSizeLong() == 0) return;
  p.Gauge("fedberry_client_info",
          "The board's facts as labels (value always 1).", 1,
          {{"client", name},
           {"architecture", device.architecture()},
           {"cpu_model", device.cpu_model()},
           {"kernel", device.kernel()},
           {"cores", std::to_string(device.cores())}});
  if (device.total_memory_bytes() > 0) {
    p.Gauge("fedberry_client_memory_total_bytes", "The board's total memory.",
            static_cast<double>(device.total_memory_bytes()),
            {{"client", name}});
  }
}

}  // namespace

JobStatus StatusOf(const RoundCoordinator& coordinator) {
  JobStatus s;
  s.running = !coordinator.done();
  s.current_round = coordinator.current_round();
  s.rounds = static_cast<int>(coordinator.total_rounds());
  s.registered_clients = coordinator.registered_clients();
  s.boards = coordinator.Boards();
  return s;
}

void ServerMetrics::AddBoardEval(PrometheusText& p) const {
  const BoardEvalSummary& b = *last_board_eval_;
  p.Gauge("fedberry_boards_eval_round",
          "The round whose model the boards evaluated last.",
          static_cast<double>(last_board_eval_round_));
  if (b.combined.regression) {
    p.Gauge("fedberry_boards_eval_rmse",
            "Root mean squared error of that model on the boards' held-out "
            "samples, weighted by samples (regression).",
            b.combined.rmse);
    p.Gauge("fedberry_boards_eval_mae",
            "Mean absolute error of that model on the boards' held-out "
            "samples (regression).",
            b.combined.mae);
  } else {
    p.Gauge("fedberry_boards_eval_accuracy_ratio",
            "Accuracy of that model on the boards' held-out samples, "
            "weighted by samples (0..1).",
            b.combined.accuracy);
  }
  p.Gauge("fedberry_boards_eval_loss",
          "Mean loss of that model on the boards' held-out samples.",
          b.combined.mean_loss);
  p.Gauge("fedberry_boards_eval_samples",
          "Held-out samples that evaluation covered.",
          static_cast<double>(b.combined.samples));
  p.Gauge("fedberry_boards_eval_boards", "Boards that reported figures.",
          b.boards);
  p.Gauge("fedberry_boards_eval_declined", "Boards that declined.", b.declined);
}

void ServerMetrics::AddPrivacy(const PrivacyFigures& d, PrometheusText& p) {
  p.Gauge("fedberry_dp_epsilon",
          "Differential privacy spent so far: epsilon at fedberry_dp_delta.",
          d.epsilon);
  p.Gauge("fedberry_dp_delta", "The delta epsilon is stated at.", d.delta);
  p.Gauge("fedberry_dp_steps", "Round attempts charged to the budget.",
          static_cast<double>(d.steps));
  p.Gauge("fedberry_dp_noise_multiplier",
          "Noise standard deviation over the clip bound.", d.noise_multiplier);
  p.Gauge("fedberry_dp_sampling_rate",
          "Each available board's chance to join a round.", d.sampling_rate);
  p.Gauge("fedberry_dp_clip", "L2 bound on each board's update.", d.clip);
  p.Gauge("fedberry_dp_clipped_ratio",
          "Share of the last round's updates that reached the bound.",
          d.clipped_fraction);
}

void ServerMetrics::AddSecAgg(const SecAggFigures& s, PrometheusText& p) {
  p.Gauge("fedberry_secagg_boards_started",
          "Boards in the last round's secure-aggregation session.", s.started);
  p.Gauge("fedberry_secagg_boards_survived",
          "Boards whose masked input the last round's unmasked sum counts.",
          s.survived);
  p.Gauge("fedberry_secagg_threshold",
          "Shares needed to unmask (t) in the last round's session.",
          s.threshold);
  p.Gauge("fedberry_secagg_neighbours",
          "Each board's neighbours (K) in the last round's session.",
          s.neighbours);
  static constexpr const char* kStages[] = {"advertise_keys", "share_keys",
                                            "masked_input", "unmask"};
  for (int i = 0; i < 4; ++i) {
    const Labels stage = {{"stage", kStages[i]}};
    p.Gauge("fedberry_secagg_dropped",
            "Boards the last round's session lost "
            "at each stage.",
            s.dropped_by_stage[i], stage);
    p.Gauge("fedberry_secagg_stage_seconds",
            "How long each stage of the last round's session took.",
            s.seconds_by_stage[i], stage);
    p.Gauge("fedberry_secagg_bytes_up",
            "Bytes the boards sent in each stage of the last round's session.",
            static_cast<double>(s.bytes_up_by_stage[i]), stage);
  }
}

void ServerMetrics::AddVersion(uint64_t version, const VersionFigures& v,
                               PrometheusText& p) {
  p.Gauge("fedberry_model_version",
          "Asynchronous rounds: the latest published model version.",
          static_cast<double>(version));
  p.Gauge("fedberry_version_updates", "Updates folded into the latest version.",
          v.updates);
  p.Gauge("fedberry_version_staleness_mean",
          "Mean staleness (versions between pull and push) of the latest "
          "version's updates.",
          v.staleness_mean);
  p.Gauge("fedberry_version_staleness_max",
          "Largest staleness among the latest version's updates.",
          v.staleness_max);
}

void ServerMetrics::Record(const RoundReport& report) {
  absl::MutexLock lock(&mu_);
  ++rounds_completed_;
  rounds_refused_ += report.refused_result.empty() ? 0 : 1;
  accepted_ += static_cast<uint64_t>(report.participants);
  rejected_ += static_cast<uint64_t>(report.rejected);
  dropped_ += static_cast<uint64_t>(report.dropped);
  stragglers_ += static_cast<uint64_t>(report.stragglers);
  declined_ += static_cast<uint64_t>(report.declined);
  last_ = report;
  last_->clients.clear();  // kept per client below
  if (report.board_eval) {
    last_board_eval_ = *report.board_eval;
    last_board_eval_->per_board.clear();
    last_board_eval_round_ = report.round;
  }
  for (const ClientRoundReport& c : report.clients) {
    ClientFigures& f = clients_[c.client_name];
    const v1::ResourceMetrics& r = c.resources;
    if (c.device.ByteSizeLong() > 0) f.device = c.device;
    ++f.rounds;
    f.train_seconds += c.metrics.train_seconds();
    f.train_loss = c.metrics.train_loss();
    Accumulate(f.cpu_seconds, r.has_cpu_seconds(), r.cpu_seconds());
    Accumulate(f.rpc_sent, r.has_rpc_sent_bytes(), r.rpc_sent_bytes());
    Accumulate(f.rpc_received, r.has_rpc_received_bytes(),
               r.rpc_received_bytes());
    Accumulate(f.net_rx, r.has_interface_rx_bytes(), r.interface_rx_bytes());
    Accumulate(f.net_tx, r.has_interface_tx_bytes(), r.interface_tx_bytes());
    Accumulate<uint64_t>(f.pauses, r.has_watchdog_pauses(),
                         r.watchdog_pauses());
    Accumulate(f.paused_seconds, r.has_paused_seconds(), r.paused_seconds());
    // Latest readings: a round without one keeps the older figure out of
    // the page rather than stale-but-current-looking.
    f.cpu_utilization = r.has_cpu_utilization()
                            ? std::optional<double>(r.cpu_utilization())
                            : std::nullopt;
    f.samples_per_second = r.has_samples_per_second()
                               ? std::optional<double>(r.samples_per_second())
                               : std::nullopt;
    f.rss = r.has_rss_bytes() ? std::optional<uint64_t>(r.rss_bytes())
                              : std::nullopt;
    f.peak_rss = r.has_peak_rss_bytes()
                     ? std::optional<uint64_t>(r.peak_rss_bytes())
                     : std::nullopt;
  }
}

void ServerMetrics::RenderBoards(const JobStatus& status, PrometheusText& p) {
  std::map<std::string, int> by_state;
  for (BoardState s : kBoardStates) by_state[BoardStateName(s)] = 0;
  for (const BoardRow& b : status.boards) ++by_state[BoardStateName(b.state)];
  for (const auto& [state, n] : by_state) {
    p.Gauge("fedberry_boards", "Boards by what they do now (the fleet page).",
            n, {{"state", state}});
  }
  for (const BoardRow& b : status.boards) {
    const Labels l = {{"client", b.name}};
    if (!b.client_version.empty()) {
      p.Gauge("fedberry_client_version_info",
              "The release a board's client said it runs (value always 1).", 1,
              {{"client", b.name}, {"version", b.client_version}});
    }
    if (b.condition.has_soc_celsius()) {
      p.Gauge("fedberry_client_soc_celsius",
              "The board's SoC temperature at its last task poll.",
              b.condition.soc_celsius(), l);
    }
    if (b.condition.has_throttled()) {
      p.Gauge("fedberry_client_throttled_flags",
              "The board firmware's throttled flags at its last task poll.",
              b.condition.throttled(), l);
    }
  }
}

void ServerMetrics::Glance(std::vector<BoardRow>& rows) const {
  absl::MutexLock lock(&mu_);
  for (BoardRow& row : rows) {
    auto f = clients_.find(row.name);
    if (f == clients_.end()) continue;
    row.samples_per_second = f->second.samples_per_second;
    row.peak_rss_bytes = f->second.peak_rss;
    if (f->second.pauses) {
      row.watchdog_pauses = static_cast<uint32_t>(*f->second.pauses);
    }
  }
}

void ServerMetrics::RenderStreamBounds(const JobStatus& status,
                                       PrometheusText& p) {
  for (const StreamBoundStatus& b : status.stream_bounds) {
    const Labels bound = {{"bound", b.bound}};
    p.Gauge("fedberry_streams_active",
            "Streams running, by bound (streams: model and sample, updates: "
            "update pushes, headers: pushes awaiting their header).",
            b.active, bound);
    p.Gauge("fedberry_streams_waiting", "Streams waiting their turn, by bound.",
            b.waiting, bound);
    const std::pair<const char*, int64_t> reasons[] = {
        {"stalled", b.cut_offs.stalled},
        {"overdue", b.cut_offs.overdue},
        {"caller_share", b.cut_offs.caller_share}};
    for (const auto& [reason, n] : reasons) {
      p.Counter("fedberry_streams_cut_off_total",
                "Streams cut off (stalled: moved nothing for "
                "--stream_stall_time; overdue: past --max_stream_time) or "
                "refused because their caller held its share "
                "(caller_share: --max_streams_per_caller).",
                static_cast<double>(n),
                {{"bound", b.bound}, {"reason", reason}});
    }
  }
}

void ServerMetrics::AddTotals(PrometheusText& p) const {
  p.Counter("fedberry_rounds_completed_total", "Rounds aggregated.",
            static_cast<double>(rounds_completed_));
  p.Counter("fedberry_rounds_refused_total",
            "Rounds whose result was refused (not finite, or the aggregation "
            "failed); the global model stayed as it was.",
            static_cast<double>(rounds_refused_));
  p.Counter("fedberry_updates_accepted_total",
            "Client updates folded into a global model.",
            static_cast<double>(accepted_));
  p.Counter("fedberry_updates_rejected_total",
            "Client updates refused as bad, late or duplicate.",
            static_cast<double>(rejected_));
  p.Counter("fedberry_clients_dropped_total",
            "Selected clients whose round closed without their update.",
            static_cast<double>(dropped_));
  p.Counter("fedberry_stragglers_total",
            "Selected clients still training when a round closed at its "
            "deadline.",
            static_cast<double>(stragglers_));
  p.Counter("fedberry_board_declines_total",
            "Boards that sat a round out by their own decision (heat, "
            "throttling, memory pressure, schedule, too little data).",
            static_cast<double>(declined_));
}

void ServerMetrics::AddClient(const std::string& name, const ClientFigures& f,
                              PrometheusText& p) {
  using Type = PrometheusText::Type;
  const Labels l = {{"client", name}};
  AddClientDevice(name, f.device, p);
  p.Counter("fedberry_client_rounds_total",
            "Rounds whose update from this client was accepted.",
            static_cast<double>(f.rounds), l);
  p.Counter("fedberry_client_train_seconds_total",
            "Wall time this client spent training.", f.train_seconds, l);
  p.Gauge("fedberry_client_train_loss",
          "Mean training loss of the client's latest round.", f.train_loss, l);
  // Readings a board may not send: absent from the page until one came.
  const OptionalReading readings[] = {
      {"fedberry_client_cpu_seconds_total", Type::kCounter,
       "User + system CPU time of the client process in its rounds.",
       f.cpu_seconds},
      {"fedberry_client_cpu_utilization_ratio", Type::kGauge,
       "CPU seconds per wall second in the latest round (1 = one core busy).",
       f.cpu_utilization},
      {"fedberry_client_samples_per_second", Type::kGauge,
       "Training throughput in the latest round.", f.samples_per_second},
      {"fedberry_client_resident_memory_bytes", Type::kGauge,
       "Resident set size (VmRSS) at the end of the latest round.",
       AsDouble(f.rss)},
      {"fedberry_client_peak_resident_memory_bytes", Type::kGauge,
       "Peak resident set size (VmHWM) of the client process.",
       AsDouble(f.peak_rss)},
      {"fedberry_client_rpc_sent_bytes_total", Type::kCounter,
       "Serialized RPC payload the client sent in its rounds.",
       AsDouble(f.rpc_sent)},
      {"fedberry_client_rpc_received_bytes_total", Type::kCounter,
       "Serialized RPC payload the client received in its rounds.",
       AsDouble(f.rpc_received)},
      {"fedberry_client_network_receive_bytes_total", Type::kCounter,
       "Bytes received on the board's non-loopback interfaces during its "
       "rounds.",
       AsDouble(f.net_rx)},
      {"fedberry_client_network_transmit_bytes_total", Type::kCounter,
       "Bytes sent on the board's non-loopback interfaces during its rounds.",
       AsDouble(f.net_tx)},
      {"fedberry_client_watchdog_pauses_total", Type::kCounter,
       "Times the memory watchdog paused training.", AsDouble(f.pauses)},
      {"fedberry_client_paused_seconds_total", Type::kCounter,
       "Time training spent paused by the memory watchdog.", f.paused_seconds},
  };
  for (const OptionalReading& r : readings) {
    if (r.value) p.Add(r.name, r.type, r.help, l, *r.value);
  }
}

std::string ServerMetrics::Render(const JobStatus& status) const {
  PrometheusText p;
  AddJob(status, p);
  RenderStreamBounds(status, p);
  RenderBoards(status, p);

  absl::MutexLock lock(&mu_);
  AddTotals(p);
  if (last_) AddLastRound(*last_, p);
  if (last_board_eval_) AddBoardEval(p);
  if (last_ && last_->privacy) AddPrivacy(*last_->privacy, p);
  if (last_ && last_->secagg) AddSecAgg(*last_->secagg, p);
  if (last_ && last_->version) AddVersion(last_->round, *last_->version, p);
  for (const auto& [name, f] : clients_) AddClient(name, f, p);
  return p.Render();
}

}  // namespace fedberry::server
