// The exposition page: families grouped with HELP/TYPE, labels escaped,
// values formatted, and ServerMetrics leaving out readings no board sent.
#include "server/prometheus_text.h"

#include <gtest/gtest.h>

#include "server/server_metrics.h"
#include "tests/exposition_parser.h"

namespace fedberry::server::prometheus_text_test {
namespace {

TEST(PrometheusText, GroupsFamiliesAndEscapesLabels) {
  PrometheusText p;
  p.Gauge("fedberry_a_bytes", "A.", 1, {{"client", "one"}});
  p.Counter("fedberry_b_total", "B.", 2.5);
  p.Gauge("fedberry_a_bytes", "A.", 3, {{"client", "t\"w\\o\nx"}});
  const std::string page = p.Render();
  EXPECT_EQ(page,
            "# HELP fedberry_a_bytes A.\n# TYPE fedberry_a_bytes gauge\n"
            "fedberry_a_bytes{client=\"one\"} 1\n"
            "fedberry_a_bytes{client=\"t\\\"w\\\\o\\nx\"} 3\n"
            "# HELP fedberry_b_total B.\n# TYPE fedberry_b_total counter\n"
            "fedberry_b_total 2.5\n");
  auto parsed = testing::ParseExposition(page);
  ASSERT_EQ(parsed.error, "");
  EXPECT_EQ(parsed.Value("fedberry_a_bytes", {{"client", "t\"w\\o\nx"}}), 3);
}

TEST(PrometheusText, FormatsSpecialValues) {
  EXPECT_EQ(FormatPrometheusValue(0), "0");
  EXPECT_EQ(FormatPrometheusValue(123456789), "123456789");
  EXPECT_EQ(FormatPrometheusValue(0.25), "0.25");
  EXPECT_EQ(FormatPrometheusValue(std::nan("")), "NaN");
  EXPECT_EQ(FormatPrometheusValue(HUGE_VAL), "+Inf");
}

TEST(ExpositionParser, RefusesInvalidPages) {
  EXPECT_NE(testing::ParseExposition("a 1\nb 2\na 3\n").error, "");
  EXPECT_NE(testing::ParseExposition("a{x=1} 1\n").error, "");
  EXPECT_NE(testing::ParseExposition("a one\n").error, "");
  EXPECT_NE(testing::ParseExposition("a 1\na 2\n").error, "");
  EXPECT_NE(testing::ParseExposition("# TYPE a wrong\na 1\n").error, "");
  EXPECT_EQ(testing::ParseExposition("# TYPE a gauge\na{x=\"1\"} 1\n").error,
            "");
}

TEST(ServerMetrics, RendersRoundsAndClientsButNotAbsentReadings) {
  ServerMetrics metrics;
  RoundReport r;
  r.round = 1;
  r.selected = 2;
  r.participants = 2;
  r.round_seconds = 3;
  r.eval = runtime::EvalResult{100, 0.5, 0.8};
  ClientRoundReport a;
  a.client_name = "a";
  a.metrics.set_train_seconds(2);
  a.resources.set_cpu_seconds(1.5);
  a.resources.set_rss_bytes(1000);
  a.resources.set_rpc_sent_bytes(10);
  a.device.set_architecture("aarch64");
  a.device.set_cores(4);
  ClientRoundReport b;
  b.client_name = "b";  // sent no readings at all
  r.clients = {a, b};
  metrics.Record(r);
  r.round = 2;
  r.refused_result = "the aggregate is not finite";
  metrics.Record(r);
  StreamLimiter::CutOffs cut;
  cut.stalled = 3;
  cut.caller_share = 1;
  JobStatus status{true, 3, 5, 2, {{"streams", 32, 7, cut}}, {}};
  auto page = testing::ParseExposition(metrics.Render(status));
  ASSERT_EQ(page.error, "");
  EXPECT_EQ(page.Value("fedberry_job_running"), 1);
  EXPECT_EQ(page.Value("fedberry_rounds_completed_total"), 2);
  EXPECT_EQ(page.Value("fedberry_streams_waiting", {{"bound", "streams"}}), 7);
  EXPECT_EQ(page.Value("fedberry_streams_cut_off_total",
                       {{"bound", "streams"}, {"reason", "stalled"}}),
            3);
  EXPECT_EQ(page.Value("fedberry_streams_cut_off_total",
                       {{"bound", "streams"}, {"reason", "caller_share"}}),
            1);
  EXPECT_EQ(page.Value("fedberry_rounds_refused_total"), 1);
  EXPECT_EQ(page.Value("fedberry_updates_accepted_total"), 4);
  EXPECT_EQ(page.Value("fedberry_test_accuracy_ratio"), 0.8);
  EXPECT_EQ(page.Value("fedberry_client_cpu_seconds_total", {{"client", "a"}}),
            3.0);
  EXPECT_EQ(
      page.Value("fedberry_client_rpc_sent_bytes_total", {{"client", "a"}}),
      20);
  EXPECT_TRUE(std::isnan(
      page.Value("fedberry_client_cpu_seconds_total", {{"client", "b"}})));
  EXPECT_EQ(page.Value("fedberry_client_rounds_total", {{"client", "b"}}), 2);
  EXPECT_FALSE(page.Has("fedberry_client_watchdog_pauses_total"));
  for (const auto& [name, type] : page.types) {
    EXPECT_EQ(name.rfind("fedberry_", 0), 0u) << name;
    if (type == "counter") {
      EXPECT_EQ(name.substr(name.size() - 6), "_total") << name;
    }
    EXPECT_TRUE(page.help.count(name)) << name;
  }
}

}  // namespace
}  // namespace fedberry::server::prometheus_text_test
