#include "server/html_report.h"

#include <filesystem>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/atomic_write.h"
#include "server/svg_chart.h"

namespace fedberry::server {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::string MiB(const std::optional<uint64_t>& v) {
  return v ? absl::StrFormat("%.1f", *v / kMiB) : "&ndash;";
}

// One series per client of `value(row)` against the round.
template <typename F>
std::vector<Series> PerClient(const JobRecord& record, F value,
                              const std::string& suffix = "",
                              bool dashed = false) {
  std::vector<Series> out;
  for (const std::string& name : record.client_names) {
    Series s;
    s.name = name + suffix;
    s.dashed = dashed;
    for (const ClientRow& c : record.clients) {
      if (c.client != name) continue;
      if (std::optional<double> v = value(c)) s.points.push_back({c.round, *v});
    }
    out.push_back(std::move(s));
  }
  return out;
}

bool AnyPoints(const std::vector<Series>& series) {
  for (const auto& s : series) {
    if (!s.points.empty()) return true;
  }
  return false;
}

std::string Figure(const std::string& id, const std::string& svg,
                   const std::string& caption) {
  return absl::StrCat("<figure id=\"", id, "\">\n", svg, "<figcaption>",
                      caption, "</figcaption>\n</figure>\n");
}

// A chart's title and axis labels; the rest as ChartOptions has it.
ChartOptions Chart(const std::string& title, const std::string& x_label,
                   const std::string& y_label) {
  ChartOptions o;
  o.title = title;
  o.x_label = x_label;
  o.y_label = y_label;
  return o;
}

// One series of a round's `figure` against the round, for the rounds that
// have it.
Series PerRound(const JobRecord& record, const std::string& name,
                std::optional<double> RoundRow::*figure, bool dashed = false) {
  Series s{name, {}, dashed};
  for (const RoundRow& r : record.rounds) {
    if (const std::optional<double>& v = r.*figure) {
      s.points.push_back({r.round, *v});
    }
  }
  return s;
}

// A client's reading in `unit`s; nothing when the board took none.
template <typename T>
std::optional<double> InUnits(const std::optional<T>& v, double unit) {
  if (!v) return std::nullopt;
  return *v / unit;
}

// Asynchronous rounds: versions published over time, and how stale each
// version's updates were. Nothing for a synchronous job.
std::string VersionPlots(const JobRecord& record) {
  Series versions{"versions published", {}, false};
  Series mean{"mean staleness", {}, false};
  Series max{"max staleness", {}, true};
  for (const RoundRow& r : record.rounds) {
    if (!r.updates) continue;
    versions.points.push_back(
        {r.elapsed_seconds, static_cast<double>(r.round)});
    mean.points.push_back(
        {static_cast<double>(r.round), r.staleness_mean.value_or(0)});
    max.points.push_back({static_cast<double>(r.round),
                          static_cast<double>(r.staleness_max.value_or(0))});
  }
  if (versions.points.empty()) return "";
  const ChartOptions over_time =
      Chart("Model versions over time", "seconds since the first round opened",
            "version");
  const ChartOptions staleness = Chart("Staleness of each version's updates",
                                       "version", "versions behind");
  return Figure("plot-versions", LineChart(over_time, {versions}),
                "Asynchronous rounds: each version is published once its "
                "buffer holds --async_buffer updates.") +
         Figure("plot-staleness", LineChart(staleness, {mean, max}),
                "Versions published between a board's pull and its push, "
                "over the updates each version was made of (a stale update "
                "weighs less: --staleness_weight).");
}

// Differential privacy: epsilon spent by each round, beside the accuracy
// it bought. Nothing when the job ran without DP.
std::string PrivacyBudgetPlot(const JobRecord& record) {
  Series epsilon{"epsilon spent", {}, false};
  Series clipped{"updates clipped (share)", {}, true};
  double delta = 0;
  for (const RoundRow& r : record.rounds) {
    if (!r.dp_epsilon) continue;
    epsilon.points.push_back({static_cast<double>(r.round), *r.dp_epsilon});
    if (r.dp_clipped_fraction) {
      clipped.points.push_back(
          {static_cast<double>(r.round), *r.dp_clipped_fraction});
    }
    delta = r.dp_delta.value_or(0);
  }
  if (epsilon.points.empty()) return "";
  return Figure(
      "plot-privacy-budget",
      LineChart(Chart("Privacy budget spent", "round", "epsilon"),
                {epsilon, clipped}),
      absl::StrFormat(
          "Differential privacy spent so far after each round: epsilon at "
          "delta %g (RDP accountant; every round attempt counts), and the "
          "share of the round's updates that reached the clip bound.",
          delta));
}

// Secure aggregation: each round's session, the boards it started with and
// those whose masked inputs its sum counts. Nothing without it.
std::string SecAggPlot(const JobRecord& record) {
  Series started{"boards started", {}, false};
  Series survived{"boards counted in the sum", {}, false};
  double bytes = 0;
  for (const RoundRow& r : record.rounds) {
    if (!r.secagg_started || !r.secagg_survived) continue;
    const double round = static_cast<double>(r.round);
    started.points.push_back({round, static_cast<double>(*r.secagg_started)});
    survived.points.push_back({round, static_cast<double>(*r.secagg_survived)});
    bytes += r.secagg_bytes_up.value_or(0);
  }
  if (started.points.empty()) return "";
  return Figure(
      "plot-secagg",
      LineChart(Chart("Secure aggregation", "round", "boards"),
                {started, survived}),
      absl::StrFormat(
          "SecAgg+: the gateway learned only each round's sum. Boards that "
          "began each round's session and those whose masked inputs the "
          "unmasked sum counts; the boards sent %.1f MiB in all sessions.",
          bytes / (1024.0 * 1024.0)));
}

// The model's figure against the job's wall time (elapsed_seconds), so
// runs with different rounds (planners, partial participation) compare by
// time. Nothing when the rounds do not carry the time or the figure.
std::string ProgressOverTimePlot(const JobRecord& record, bool regression) {
  Series figure{regression ? "test RMSE" : "test accuracy", {}, false};
  for (const RoundRow& r : record.rounds) {
    const std::optional<double>& y = regression ? r.test_rmse : r.test_accuracy;
    if (y && r.elapsed_seconds > 0) {
      figure.points.push_back({r.elapsed_seconds, *y});
    }
  }
  if (figure.points.empty()) return "";
  const ChartOptions o = Chart(
      regression ? "Test RMSE over time" : "Test accuracy over time",
      "seconds since the first round opened", regression ? "RMSE" : "accuracy");
  return Figure("plot-progress-time", LineChart(o, {figure}),
                "The global model's figure at each round's close, against "
                "the job's wall time: runs compare by time, whatever their "
                "rounds.");
}

// Evaluation on the boards: the combined figure per round with its spread
// (and the server's own beside it), and each board's figure for the last
// round the boards evaluated. Nothing when the job had none.
std::string BoardEvalPlots(const JobRecord& record) {
  const std::string what = record.regression ? "RMSE" : "accuracy";
  const Series combined =
      PerRound(record, "boards (weighted by samples)", &RoundRow::boards_eval);
  if (combined.points.empty()) return "";
  std::vector<Series> series = {
      combined,
      PerRound(record, "lowest board", &RoundRow::boards_eval_min, true),
      PerRound(record, "highest board", &RoundRow::boards_eval_max, true)};
  const Series personal =
      PerRound(record, "personalised", &RoundRow::boards_eval_personalized);
  const Series server = PerRound(
      record, "server, test split",
      record.regression ? &RoundRow::test_rmse : &RoundRow::test_accuracy,
      true);
  if (!personal.points.empty()) series.push_back(personal);
  if (!server.points.empty()) series.push_back(server);
  std::string html = Figure(
      "plot-boards-eval",
      LineChart(
          Chart(absl::StrCat("Boards' ", what, " per round"), "round", what),
          series),
      absl::StrCat("The global model's ", what,
                   " on the samples each board holds out (never trained "
                   "on), combined weighted by samples, with the lowest and "
                   "highest board."));
  const int last = static_cast<int>(combined.points.back().first);
  std::vector<std::string> boards;
  BarLayer figures{what, {}};
  for (const BoardEvalRow& b : record.board_evals) {
    if (b.round != last) continue;
    boards.push_back(b.client);
    figures.values.push_back(b.figure);
  }
  const ChartOptions per = Chart(
      absl::StrCat("Each board's ", what, ", round ", last), "board", what);
  html += Figure("plot-boards-eval-per-board",
                 StackedBarChart(per, boards, {figures}),
                 absl::StrCat("The model of round ", last,
                              " on each board's held-out samples."));
  return html;
}

// The page up to the first heading: the title and the inline style sheet.
std::string PageHead(const std::string& title) {
  return absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>fedberry report: ",
      XmlEscape(title),
      "</title>\n<style>\n"
      "body{font-family:sans-serif;margin:16px;color:#222}\n"
      "h1{font-size:22px}h2{font-size:17px;margin-top:28px}\n"
      "table{border-collapse:collapse;font-size:13px}\n"
      "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}\n"
      "th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}\n"
      ".plots{display:flex;flex-wrap:wrap;gap:12px}\n"
      "figure{margin:0;border:1px solid #ddd;padding:6px}\n"
      "figcaption{font-size:12px;color:#555;max-width:560px}\n"
      ".note{font-size:12px;color:#555}\n"
      "</style>\n</head>\n<body>\n<h1>fedberry job report</h1>\n");
}

// The job in one sentence, then a line for each round that published
// nothing: its figures are the model's before it.
std::string Summary(const JobRecord& record, const std::string& title) {
  double wall = 0;
  for (const RoundRow& r : record.rounds) wall += r.round_seconds;
  // The final figure: accuracy, or RMSE for a regression job.
  std::string final_name = "accuracy";
  std::optional<double> final_figure;
  if (!record.rounds.empty()) {
    final_figure = record.rounds.back().test_accuracy;
    if (record.rounds.back().test_rmse) {
      final_name = "RMSE";
      final_figure = record.rounds.back().test_rmse;
    }
  }
  std::string html = absl::StrFormat(
      "<p id=\"summary\">Job <b>%s</b>: %d rounds, %d clients, final test "
      "%s <b>%s</b>, %.1f s in rounds.</p>\n",
      XmlEscape(title), static_cast<int>(record.rounds.size()),
      static_cast<int>(record.client_names.size()), final_name,
      final_figure ? absl::StrFormat("%.4f", *final_figure) : "&ndash;", wall);
  for (const RoundRow& r : record.rounds) {
    if (r.refused_result.empty()) continue;
    absl::StrAppendFormat(&html,
                          "<p class=\"refused\">Round %d published no new "
                          "model: its result was refused (%s).</p>\n",
                          r.round, XmlEscape(r.refused_result));
  }
  return html;
}

// The server's evaluation of a regression model, per round.
std::string ErrorPlot(const JobRecord& record) {
  ChartOptions o = Chart("Test error per round", "round", "error");
  o.empty_message = "no server-side evaluation in this job";
  return Figure(
      "plot-error",
      LineChart(o, {PerRound(record, "test RMSE", &RoundRow::test_rmse),
                    PerRound(record, "test MAE", &RoundRow::test_mae, true)}),
      "Root mean squared and mean absolute error of the global "
      "model on the held-out data after each round.");
}

// The server's evaluation of a classifier, per round.
std::string AccuracyPlot(const JobRecord& record) {
  ChartOptions o = Chart("Test accuracy per round", "round", "accuracy");
  o.empty_message = "no server-side evaluation in this job";
  return Figure(
      "plot-accuracy",
      LineChart(o,
                {PerRound(record, "test accuracy", &RoundRow::test_accuracy)}),
      "Accuracy of the global model on the held-out split after each round.");
}

std::string LossPlot(const JobRecord& record) {
  Series train{"mean train loss", {}, true};
  std::map<int, std::pair<double, int>> sums;
  for (const ClientRow& c : record.clients) {
    sums[c.round].first += c.train_loss;
    ++sums[c.round].second;
  }
  for (const auto& [round, s] : sums) {
    train.points.push_back({round, s.first / s.second});
  }
  return Figure(
      "plot-loss",
      LineChart(Chart("Loss per round", "round", "loss"),
                {PerRound(record, "test loss", &RoundRow::test_loss), train}),
      "Held-out loss of the global model, and the clients' mean "
      "training loss in the round.");
}

std::string RoundTimePlot(const JobRecord& record) {
  std::vector<std::string> labels;
  BarLayer train{"training", {}}, wait{"waiting", {}}, agg{"aggregation", {}},
      eval{"evaluation", {}};
  for (const RoundRow& r : record.rounds) {
    labels.push_back(std::to_string(r.round));
    // An overlapped evaluation ran during the next round, not this one.
    const double in_round_eval = r.eval_overlapped ? 0 : r.eval_seconds;
    train.values.push_back(r.max_train_seconds);
    agg.values.push_back(r.aggregation_seconds);
    eval.values.push_back(in_round_eval);
    wait.values.push_back(std::max(0.0, r.round_seconds - r.max_train_seconds -
                                            r.aggregation_seconds -
                                            in_round_eval));
  }
  return Figure("plot-round-time",
                StackedBarChart(Chart("Round time split", "round", "seconds"),
                                labels, {train, wait, agg, eval}),
                "Wall time of each round on the server: the slowest "
                "client's training, waiting (model transfer, RPCs, slower "
                "starts), aggregation and evaluation.");
}

// The "Model" section's plots: the global model's figures, then the rounds'
// time.
std::string ModelPlots(const JobRecord& record) {
  bool regression = false;
  for (const RoundRow& r : record.rounds) regression |= r.test_rmse.has_value();
  return absl::StrCat(regression ? ErrorPlot(record) : AccuracyPlot(record),
                      ProgressOverTimePlot(record, regression),
                      BoardEvalPlots(record), PrivacyBudgetPlot(record),
                      SecAggPlot(record), VersionPlots(record),
                      LossPlot(record), RoundTimePlot(record));
}

std::string CpuPlot(const JobRecord& record) {
  ChartOptions o =
      Chart("CPU utilisation per round", "round", "CPU % (100 = one core)");
  o.empty_message = "no CPU readings";
  return Figure(
      "plot-cpu",
      LineChart(o, PerClient(record,
                             [](const ClientRow& c) -> std::optional<double> {
                               if (!c.cpu_utilization) return std::nullopt;
                               return *c.cpu_utilization * 100;
                             })),
      "User + system CPU time of each client process over its round "
      "(/proc/self/stat), per wall second.");
}

std::string MemoryPlot(const JobRecord& record) {
  ChartOptions o = Chart("Peak memory per round", "round", "MiB");
  o.empty_message = "no memory readings";
  return Figure("plot-memory",
                LineChart(o, PerClient(record,
                                       [](const ClientRow& c) {
                                         return InUnits(
                                             c.round_peak_rss_bytes
                                                 ? c.round_peak_rss_bytes
                                                 : c.rss_bytes,
                                             kMiB);
                                       })),
                "Largest resident set size sampled during each client's round "
                "(/proc/self/status VmRSS).");
}

std::string NetworkPlot(const JobRecord& record) {
  ChartOptions o = Chart("Network per round", "round", "KiB");
  o.empty_message = "no network readings";
  const std::vector<Series> received = PerClient(
      record,
      [](const ClientRow& c) { return InUnits(c.rpc_received_bytes, 1024.0); },
      " received");
  const std::vector<Series> sent = PerClient(
      record,
      [](const ClientRow& c) { return InUnits(c.rpc_sent_bytes, 1024.0); },
      " sent", true);
  // Colours pair up: client i received (solid) and sent (dashed) would
  // otherwise get different colours, so interleave them.
  std::vector<Series> both;
  for (size_t i = 0; i < received.size(); ++i) {
    both.push_back(received[i]);
    both.push_back(sent[i]);
  }
  return Figure("plot-network", LineChart(o, both),
                "RPC payload each client received (task, global model; "
                "solid) and sent (update; dashed) in its round.");
}

std::string PausesPlot(const JobRecord& record) {
  ChartOptions o = Chart("Watchdog pauses per round", "round", "pauses");
  o.empty_message =
      "no pause readings: the memory watchdog is not in this build";
  const std::vector<Series> pauses =
      PerClient(record, [](const ClientRow& c) -> std::optional<double> {
        if (!c.watchdog_pauses) return std::nullopt;
        return static_cast<double>(*c.watchdog_pauses);
      });
  return Figure(
      "plot-pauses",
      LineChart(o, AnyPoints(pauses) ? pauses : std::vector<Series>{}),
      "Times the memory-pressure watchdog paused each client's training in "
      "the round.");
}

// The "Clients" section's plots: each client's resources per round.
std::string ClientPlots(const JobRecord& record) {
  return absl::StrCat(CpuPlot(record), MemoryPlot(record), NetworkPlot(record),
                      PausesPlot(record));
}

// Each client's resources over the job, a row a client.
std::string ClientTable(const JobRecord& record) {
  std::string html =
      "<h2>Resources per client</h2>\n<table id=\"clients\">\n<tr><th>client"
      "</th><th>rounds</th><th>train s</th><th>CPU %</th><th>peak RSS MiB"
      "</th><th>RPC sent MiB</th><th>RPC received MiB</th><th>samples/s</th>"
      "<th>iface rx MiB</th><th>iface tx MiB</th><th>pauses</th></tr>\n";
  for (const ClientSummary& s : SummarizeClients(record)) {
    absl::StrAppendFormat(
        &html,
        "<tr><td>%s</td><td>%d</td><td>%.1f</td><td>%s</td><td>%s</td>"
        "<td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>"
        "</tr>\n",
        XmlEscape(s.client), s.rounds, s.train_seconds,
        s.mean_cpu_utilization
            ? absl::StrFormat("%.0f", *s.mean_cpu_utilization * 100)
            : "&ndash;",
        MiB(s.peak_rss_bytes), MiB(s.rpc_sent_bytes), MiB(s.rpc_received_bytes),
        s.mean_samples_per_second
            ? absl::StrFormat("%.0f", *s.mean_samples_per_second)
            : "&ndash;",
        MiB(s.interface_rx_bytes), MiB(s.interface_tx_bytes),
        s.watchdog_pauses ? std::to_string(*s.watchdog_pauses) : "&ndash;");
  }
  return html + "</table>\n";
}

// Each client's board facts, a row a client.
std::string DeviceTable(const JobRecord& record) {
  std::string html =
      "<h2>Devices</h2>\n<table id=\"devices\">\n<tr><th>client</th><th>"
      "architecture</th><th>cores</th><th>memory MiB</th><th>CPU</th><th>"
      "kernel</th><th>OS</th></tr>\n";
  for (const auto& [name, d] : record.devices) {
    absl::StrAppendFormat(
        &html,
        "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s"
        "</td><td>%s</td></tr>\n",
        XmlEscape(name), XmlEscape(d.architecture),
        d.cores ? std::to_string(*d.cores) : "&ndash;",
        MiB(d.total_memory_bytes), XmlEscape(d.cpu_model), XmlEscape(d.kernel),
        XmlEscape(d.os));
  }
  return html + "</table>\n";
}

constexpr char kPageEnd[] =
    "<p class=\"note\">A dash is a reading the board could not take (it is "
    "absent from clients.jsonl, not zero). Interface counters (/proc/net/dev) "
    "count the whole board's non-loopback traffic; on one machine over "
    "loopback they are not the federation's.</p>\n"
    "</body>\n</html>\n";

}  // namespace

const std::vector<std::string>& ReportPlotIds() {
  static const std::vector<std::string> kIds = {
      "plot-accuracy", "plot-loss",    "plot-round-time", "plot-cpu",
      "plot-memory",   "plot-network", "plot-pauses"};
  return kIds;
}

std::string RenderHtmlReport(const JobRecord& record,
                             const std::string& title) {
  return absl::StrCat(
      PageHead(title), Summary(record, title),
      "<h2>Model</h2>\n<div class=\"plots\">\n", ModelPlots(record),
      "</div>\n<h2>Clients</h2>\n<div class=\"plots\">\n", ClientPlots(record),
      "</div>\n", ClientTable(record), DeviceTable(record), kPageEnd);
}

absl::Status WriteHtmlReport(const std::string& job_dir,
                             const std::string& output) {
  absl::StatusOr<JobRecord> record = ReadJobRecord(job_dir);
  if (!record.ok()) return record.status();
  std::string title = std::filesystem::path(job_dir).filename().string();
  if (title.empty()) title = job_dir;
  const std::string html = RenderHtmlReport(*record, title);
  return base::WriteFileAtomically(base::FileSystem::Default(), output, html);
}

}  // namespace fedberry::server
