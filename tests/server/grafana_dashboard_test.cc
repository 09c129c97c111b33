// deploy/grafana/fedberry.json against what the server really exposes:
// every metric a panel or variable queries is on a rendered /metrics page
// (after rounds with board resources, an evaluation on the boards and
// privacy figures), every label it selects, groups by or puts in a legend
// is on that metric, and the dashboard imports as exported ones do (a
// ${DS_PROMETHEUS} input that every query uses, unique panel ids, only
// Grafana's built-in panels).
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "server/server_metrics.h"
#include "tests/exposition_parser.h"

namespace fedberry::server::grafana_dashboard_test {
namespace {

using nlohmann::json;

constexpr char kDashboard[] =
    FEDBERRY_SOURCE_DIR "/deploy/grafana/fedberry.json";
constexpr char kDatasource[] = "${DS_PROMETHEUS}";

// Labels Prometheus attaches to every scraped series (the scrape job and
// target), which the server never sets itself.
const std::set<std::string> kTargetLabels = {"job", "instance"};

// A metric a query reads and the labels the query needs on it.
struct MetricUse {
  std::string metric;
  std::set<std::string> labels;
};

bool IsIdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':';
}
bool IsIdent(char c) {
  return IsIdentStart(c) || std::isdigit(static_cast<unsigned char>(c));
}

// The metrics of a PromQL expression, each with the labels its selector
// matches on; labels of by/without/on/ignoring clauses count for every
// metric of the expression (the dashboard keeps one grouping per query).
// Enough PromQL for dashboards: selectors, functions, aggregations,
// arithmetic, ranges, Grafana's $variables. Sets `error` on what it cannot
// read.
std::vector<MetricUse> MetricsOf(const std::string& expr, std::string& error) {
  static const std::set<std::string> kGrouping = {
      "by", "without", "on", "ignoring", "group_left", "group_right"};
  // Operators, and aggregations, which may put their grouping before the
  // parenthesis ("sum by (bound) (...)").
  static const std::set<std::string> kKeywords = {
      "and",    "or",    "unless",       "bool",    "offset", "atan2",
      "sum",    "min",   "max",          "avg",     "group",  "stddev",
      "stdvar", "count", "count_values", "bottomk", "topk",   "quantile"};
  std::vector<MetricUse> uses;
  std::set<std::string> grouping;
  size_t i = 0;
  const size_t n = expr.size();
  auto skip_space = [&] {
    while (i < n && std::isspace(static_cast<unsigned char>(expr[i]))) ++i;
  };
  auto read_ident = [&] {
    const size_t start = i;
    while (i < n && IsIdent(expr[i])) ++i;
    return expr.substr(start, i - start);
  };
  auto skip_string = [&] {
    const char quote = expr[i++];
    while (i < n && expr[i] != quote) i += expr[i] == '\\' ? 2 : 1;
    if (i >= n) {
      error = "unterminated string";
      return false;
    }
    ++i;
    return true;
  };
  while (i < n && error.empty()) {
    const char c = expr[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '"' || c == '\'' || c == '`') {
      skip_string();
    } else if (c == '[') {  // a range or subquery: durations, $variables
      const size_t close = expr.find(']', i);
      if (close == std::string::npos) error = "unterminated range";
      i = close + 1;
    } else if (c == '$') {  // a Grafana variable outside a string
      ++i;
      if (i < n && expr[i] == '{') {
        const size_t close = expr.find('}', i);
        if (close == std::string::npos) error = "unterminated ${";
        i = close + 1;
      } else {
        read_ident();
      }
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      while (i < n && (IsIdent(expr[i]) || expr[i] == '.')) ++i;
    } else if (c == '{') {
      error = "a selector without a metric name";
    } else if (IsIdentStart(c)) {
      const std::string word = read_ident();
      skip_space();
      const bool call = i < n && expr[i] == '(';
      if (kGrouping.count(word)) {
        if (!call) continue;  // group_left without labels
        ++i;
        for (;;) {
          skip_space();
          if (i < n && expr[i] == ')') break;
          const std::string label = read_ident();
          if (label.empty()) {
            error = "bad label list after " + word;
            break;
          }
          grouping.insert(label);
          skip_space();
          if (i < n && expr[i] == ',') ++i;
        }
        ++i;
      } else if (kKeywords.count(word) || call) {
        continue;  // an operator, a function or an aggregation
      } else {
        MetricUse use{word, {}};
        if (i < n && expr[i] == '{') {
          ++i;
          for (;;) {
            skip_space();
            if (i < n && expr[i] == '}') break;
            const std::string label = read_ident();
            skip_space();
            while (i < n &&
                   (expr[i] == '=' || expr[i] == '!' || expr[i] == '~')) {
              ++i;
            }
            skip_space();
            if (label.empty() || i >= n || expr[i] != '"' || !skip_string()) {
              if (error.empty()) error = "bad matcher in " + word;
              break;
            }
            use.labels.insert(label);
            skip_space();
            if (i < n && expr[i] == ',') ++i;
          }
          ++i;
        }
        uses.push_back(std::move(use));
      }
    } else {
      ++i;  // an operator or a parenthesis
    }
  }
  for (MetricUse& use : uses)
    use.labels.insert(grouping.begin(), grouping.end());
  return uses;
}

// The labels a Grafana legend format shows ("{{client}} sent").
std::set<std::string> LegendLabels(const std::string& legend) {
  std::set<std::string> labels;
  static const std::regex kLabel(R"(\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\})");
  for (auto it = std::sregex_iterator(legend.begin(), legend.end(), kLabel);
       it != std::sregex_iterator(); ++it) {
    labels.insert((*it)[1]);
  }
  return labels;
}

// What the dashboard queries: every panel target's expr (legend labels
// included) and every variable's label_values().
struct Query {
  std::string where;  // panel title or variable name, for messages
  std::string expr;
  std::set<std::string> extra_labels;  // from the legend or label_values
};

void CollectPanels(const json& panels, std::vector<const json*>& out) {
  for (const json& p : panels) {
    out.push_back(&p);
    if (p.contains("panels")) CollectPanels(p["panels"], out);  // rows
  }
}

std::vector<Query> QueriesOf(const json& dashboard) {
  std::vector<Query> queries;
  std::vector<const json*> panels;
  CollectPanels(dashboard.at("panels"), panels);
  for (const json* p : panels) {
    for (const json& t : p->value("targets", json::array())) {
      queries.push_back({p->value("title", ""), t.value("expr", ""),
                         LegendLabels(t.value("legendFormat", ""))});
    }
  }
  static const std::regex kLabelValues(
      R"(^\s*label_values\((.*),\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*$)");
  for (const json& v : dashboard.at("templating").at("list")) {
    if (v.value("type", "") != "query") continue;
    const json& q = v.at("query");
    const std::string text =
        q.is_string() ? q.get<std::string>() : q.value("query", std::string());
    std::smatch m;
    if (std::regex_match(text, m, kLabelValues)) {
      queries.push_back({"variable " + v.value("name", ""), m[1], {m[2]}});
    } else {
      queries.push_back({"variable " + v.value("name", ""), "", {}});
    }
  }
  return queries;
}

// What is wrong with `queries` against the rendered pages: unknown
// metrics, labels the metric does not carry, unreadable queries.
std::vector<std::string> Problems(const std::vector<Query>& queries,
                                  const std::vector<testing::Exposition>& pages,
                                  std::set<std::string>* metrics_used) {
  // Every family's label names, over all pages.
  std::map<std::string, std::set<std::string>> labels_of;
  for (const testing::Exposition& page : pages) {
    for (const testing::Sample& s : page.samples) {
      std::set<std::string>& labels = labels_of[s.name];
      for (const auto& [k, v] : s.labels) labels.insert(k);
    }
  }
  std::vector<std::string> problems;
  for (const Query& q : queries) {
    std::string error;
    const std::vector<MetricUse> uses = MetricsOf(q.expr, error);
    if (!error.empty() || uses.empty()) {
      problems.push_back(q.where + ": cannot read '" + q.expr + "'" +
                         (error.empty() ? ": no metric" : ": " + error));
      continue;
    }
    for (MetricUse use : uses) {
      use.labels.insert(q.extra_labels.begin(), q.extra_labels.end());
      if (metrics_used) metrics_used->insert(use.metric);
      auto it = labels_of.find(use.metric);
      if (it == labels_of.end()) {
        problems.push_back(q.where + ": " + use.metric +
                           " is not on the server's page");
        continue;
      }
      for (const std::string& label : use.labels) {
        if (!kTargetLabels.count(label) && !it->second.count(label)) {
          problems.push_back(q.where + ": " + use.metric + " has no label '" +
                             label + "'");
        }
      }
    }
  }
  return problems;
}

// Three boards' round, as the server reports it: resources of every kind,
// device facts, an evaluation on the boards and privacy figures.
RoundReport Round(uint64_t round, bool regression) {
  RoundReport r;
  r.round = round;
  r.selected = 4;
  r.participants = 3;
  r.dropped = 1;
  r.stragglers = 1;
  r.rejected = round == 2 ? 1 : 0;
  r.round_seconds = 41.5;
  r.makespan_seconds = 39;
  r.aggregation_seconds = 0.31;
  r.eval_seconds = 2.2;
  runtime::EvalResult eval;
  eval.samples = 10000;
  eval.mean_loss = 0.62;
  eval.regression = regression;
  if (regression) {
    eval.rmse = 0.41;
    eval.mae = 0.3;
  } else {
    eval.accuracy = 0.78;
  }
  r.eval = eval;
  BoardEvalSummary b;
  b.asked = 3;
  b.boards = 2;
  b.declined = 1;
  b.combined = eval;
  b.combined.samples = 1200;
  b.min = 0.7;
  b.median = 0.75;
  b.max = 0.8;
  b.seconds = 6.5;
  r.board_eval = b;
  PrivacyFigures dp;
  dp.epsilon = 0.8 * static_cast<double>(round);
  dp.delta = 1e-5;
  dp.steps = static_cast<int64_t>(round);
  dp.sampling_rate = 0.5;
  dp.noise_multiplier = 1.1;
  dp.clip = 0.7;
  dp.clipped_fraction = 0.25;
  r.privacy = dp;
  for (int i = 1; i <= 3; ++i) {
    ClientRoundReport c;
    c.client_id = "id-" + std::to_string(i);
    c.client_name = "pi-0" + std::to_string(i);
    c.num_samples = 20000;
    c.metrics.set_train_seconds(35 + i);
    c.metrics.set_train_loss(0.7 - 0.01 * i);
    v1::ResourceMetrics& m = c.resources;
    m.set_wall_seconds(38);
    m.set_cpu_seconds(120);
    m.set_cpu_utilization(3.2);
    m.set_samples_per_second(540);
    m.set_rss_bytes(150u << 20);
    m.set_peak_rss_bytes(190u << 20);
    m.set_round_peak_rss_bytes(170u << 20);
    m.set_rpc_sent_bytes(250000);
    m.set_rpc_received_bytes(250000);
    m.set_interface_rx_bytes(310000);
    m.set_interface_tx_bytes(290000);
    m.set_watchdog_pauses(i == 3 ? 2 : 0);
    m.set_paused_seconds(i == 3 ? 4.5 : 0);
    c.device.set_architecture("aarch64");
    c.device.set_cores(4);
    c.device.set_total_memory_bytes(uint64_t{1} << 30);
    c.device.set_cpu_model("Cortex-A53");
    c.device.set_kernel("6.1.0-rpi7-rpi-v8");
    r.clients.push_back(std::move(c));
  }
  return r;
}

// The /metrics page of a gateway three rounds into a job.
testing::Exposition Page(bool regression) {
  ServerMetrics metrics;
  for (uint64_t round = 1; round <= 3; ++round) {
    metrics.Record(Round(round, regression));
  }
  StreamLimiter::CutOffs cut;
  cut.stalled = 1;
  JobStatus status{true, 4, 30, 3, {}, {}};
  BoardRow board;  // what the fleet page's rows add to the page
  board.name = "pi-1";
  board.client_version = "0.1.0";
  board.condition.set_soc_celsius(58.5);
  board.condition.set_throttled(0);
  status.boards.push_back(board);
  for (const char* bound : {"streams", "updates", "headers"}) {
    status.stream_bounds.push_back({bound, 2, 0, cut});
  }
  testing::Exposition page = testing::ParseExposition(metrics.Render(status));
  EXPECT_EQ(page.error, "");
  return page;
}

json ReadDashboard() {
  std::ifstream in(kDashboard);
  EXPECT_TRUE(in) << kDashboard;
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());  // throws on invalid JSON: the test fails
}

TEST(GrafanaDashboard, ReadsOnlyMetricsAndLabelsTheServerExposes) {
  const json dashboard = ReadDashboard();
  // A classification and a regression job: their test figures differ.
  const std::vector<testing::Exposition> pages = {Page(false), Page(true)};
  std::set<std::string> used;
  const std::vector<Query> queries = QueriesOf(dashboard);
  for (const std::string& problem : Problems(queries, pages, &used)) {
    ADD_FAILURE() << problem;
  }
  // What the operator asked to see, so a panel cannot silently go.
  for (const char* metric : {"fedberry_job_running",
                             "fedberry_current_round",
                             "fedberry_job_rounds",
                             "fedberry_rounds_completed_total",
                             "fedberry_rounds_refused_total",
                             "fedberry_updates_accepted_total",
                             "fedberry_updates_rejected_total",
                             "fedberry_stragglers_total",
                             "fedberry_clients_dropped_total",
                             "fedberry_test_accuracy_ratio",
                             "fedberry_test_loss",
                             "fedberry_last_round_duration_seconds",
                             "fedberry_last_round_aggregation_seconds",
                             "fedberry_registered_clients",
                             "fedberry_client_samples_per_second",
                             "fedberry_client_peak_resident_memory_bytes",
                             "fedberry_client_cpu_utilization_ratio",
                             "fedberry_client_watchdog_pauses_total",
                             "fedberry_client_network_receive_bytes_total",
                             "fedberry_client_network_transmit_bytes_total",
                             "fedberry_streams_active",
                             "fedberry_streams_waiting",
                             "fedberry_streams_cut_off_total",
                             "fedberry_boards_eval_accuracy_ratio",
                             "fedberry_dp_epsilon",
                             "fedberry_boards",
                             "fedberry_board_declines_total",
                             "fedberry_client_soc_celsius",
                             "fedberry_client_version_info"}) {
    EXPECT_TRUE(used.count(metric)) << "no panel shows " << metric;
  }
}

TEST(GrafanaDashboard, ImportsWithADatasourceInputAndUniquePanelIds) {
  const json dashboard = ReadDashboard();
  ASSERT_TRUE(dashboard.contains("__inputs"));
  bool input = false;
  for (const json& in : dashboard["__inputs"]) {
    input |= in.value("name", "") == "DS_PROMETHEUS" &&
             in.value("type", "") == "datasource" &&
             in.value("pluginId", "") == "prometheus";
  }
  EXPECT_TRUE(input) << "no DS_PROMETHEUS datasource input";
  EXPECT_GE(dashboard.value("schemaVersion", 0), 36);
  EXPECT_TRUE(dashboard.at("id").is_null());  // Grafana assigns it
  EXPECT_FALSE(dashboard.value("uid", "").empty());

  // Built-in panels only: nothing to install beside Grafana.
  const std::set<std::string> kBuiltIn = {
      "row",      "stat", "timeseries", "table",         "gauge",
      "bargauge", "text", "barchart",   "state-timeline"};
  for (const json& r : dashboard.value("__requires", json::array())) {
    if (r.value("type", "") == "panel") {
      EXPECT_TRUE(kBuiltIn.count(r.value("id", ""))) << r.dump();
    }
  }
  std::vector<const json*> panels;
  CollectPanels(dashboard.at("panels"), panels);
  EXPECT_GE(panels.size(), 30u);
  std::set<int> ids;
  auto uses_input = [](const json& holder) {
    return holder.contains("datasource") &&
           holder["datasource"].value("uid", "") == kDatasource;
  };
  for (const json* p : panels) {
    const std::string title = p->value("title", "");
    ASSERT_TRUE(p->contains("id")) << title;
    EXPECT_TRUE(ids.insert(p->at("id").get<int>()).second)
        << "panel id " << p->at("id") << " repeats (" << title << ")";
    EXPECT_TRUE(kBuiltIn.count(p->value("type", ""))) << title;
    const json& grid = p->at("gridPos");
    EXPECT_LE(grid.at("x").get<int>() + grid.at("w").get<int>(), 24) << title;
    if (p->value("type", "") == "row") continue;
    EXPECT_TRUE(uses_input(*p)) << title << " does not use " << kDatasource;
    ASSERT_FALSE(p->value("targets", json::array()).empty()) << title;
    for (const json& t : p->at("targets")) {
      EXPECT_TRUE(uses_input(t)) << title << " " << t.value("refId", "");
    }
  }
  for (const json& v : dashboard.at("templating").at("list")) {
    EXPECT_TRUE(uses_input(v)) << v.value("name", "");
  }
}

// The checks above can fail: the reader finds metrics and labels where
// dashboards put them, and wrong names are reported.
TEST(GrafanaDashboard, ReportsUnknownMetricsAndLabels) {
  std::string error;
  const auto uses = MetricsOf(
      "sum by (bound, reason) (60 * rate(fedberry_streams_cut_off_total"
      "{instance=~\"$instance\", bound!=\"x}\"}[$__rate_interval])) / "
      "ignoring(reason) group_left fedberry_streams_active offset 5m",
      error);
  ASSERT_EQ(error, "");
  ASSERT_EQ(uses.size(), 2u);
  EXPECT_EQ(uses[0].metric, "fedberry_streams_cut_off_total");
  EXPECT_EQ(uses[0].labels,
            (std::set<std::string>{"bound", "instance", "reason"}));
  EXPECT_EQ(uses[1].metric, "fedberry_streams_active");

  const std::vector<testing::Exposition> pages = {Page(false)};
  const std::vector<Query> bad = {
      {"typo", "fedberry_client_samples_per_secnd{client=~\"$client\"}", {}},
      {"label", "fedberry_client_peak_resident_memory_bytes{board=\"pi\"}", {}},
      {"legend", "fedberry_job_running", {"client"}},
      {"grouping", "sum by (client) (fedberry_rounds_completed_total)", {}},
      {"regression on a classification page", "fedberry_test_rmse", {}},
      {"empty", "", {}},
  };
  const std::vector<std::string> problems = Problems(bad, pages, nullptr);
  EXPECT_EQ(problems.size(), bad.size());
  for (const Query& q : bad) {
    bool found = false;
    for (const std::string& p : problems) found |= p.rfind(q.where, 0) == 0;
    EXPECT_TRUE(found) << q.where;
  }
  const std::vector<Query> good = {
      {"ok",
       "fedberry_client_info{client=\"pi-01\", cpu_model=~\".+\"}",
       {"instance", "kernel"}}};
  EXPECT_TRUE(Problems(good, pages, nullptr).empty());
}

}  // namespace
}  // namespace fedberry::server::grafana_dashboard_test
