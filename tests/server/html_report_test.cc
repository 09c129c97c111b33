// The report generator on a recorded output folder (tests/data/sim-job,
// from `fedberry-sim --clients=4 --rounds=3`): the page is self-contained
// and holds every plot with its data drawn, plus the tables.
#include "server/html_report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <regex>

#include "server/job_record.h"
#include "server/svg_chart.h"
#include "tests/test_files.h"

namespace fedberry::server::html_report_test {
namespace {

const std::string kJob = std::string(FEDBERRY_TEST_DATA) + "/sim-job";

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t p = text.find(what); p != std::string::npos;
       p = text.find(what, p + 1)) {
    ++n;
  }
  return n;
}

// The text of <figure id="id"> ... </figure>.
std::string FigureText(const std::string& html, const std::string& id) {
  const size_t start = html.find("<figure id=\"" + id + "\">");
  if (start == std::string::npos) return "";
  const size_t end = html.find("</figure>", start);
  return html.substr(start, end - start);
}

TEST(JobRecord, ReadsTheRecordedJob) {
  auto record = ReadJobRecord(kJob);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->rounds.size(), 3u);
  EXPECT_EQ(record->clients.size(), 12u);
  EXPECT_EQ(record->client_names.size(), 4u);
  EXPECT_EQ(record->devices.size(), 4u);
  auto summaries = SummarizeClients(*record);
  ASSERT_EQ(summaries.size(), 4u);
  for (const auto& s : summaries) {
    EXPECT_EQ(s.rounds, 3);
    EXPECT_GT(s.mean_cpu_utilization.value_or(0), 0);
    EXPECT_GT(s.peak_rss_bytes.value_or(0), 0u);
    EXPECT_FALSE(s.watchdog_pauses.has_value());
  }
}

TEST(JobRecord, MissingFolderAndBrokenLinesAreClearErrors) {
  EXPECT_TRUE(absl::IsNotFound(ReadJobRecord("/nonexistent/job").status()));
  testing::TempDir dir;
  std::ofstream(dir / "rounds.jsonl")
      << "{\"round\":1}\nnot json\n{\"round\":2}\n";
  auto broken = ReadJobRecord(dir.path());
  EXPECT_TRUE(absl::IsDataLoss(broken.status())) << broken.status();
  EXPECT_NE(broken.status().message().find("line 2"), std::string::npos);
  // A torn last line (a crashed job) is skipped.
  std::ofstream(dir / "rounds.jsonl") << "{\"round\":1}\n{\"rou";
  auto torn = ReadJobRecord(dir.path());
  ASSERT_TRUE(torn.ok()) << torn.status();
  EXPECT_EQ(torn->rounds.size(), 1u);
}

TEST(HtmlReport, PageHoldsEveryPlotAndIsSelfContained) {
  testing::TempDir dir;
  ASSERT_TRUE(WriteHtmlReport(kJob, dir / "report.html").ok());
  std::ifstream in(dir / "report.html");
  const std::string html((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("</html>"), std::string::npos);
  // Self-contained: nothing fetched, nothing scripted.
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));
  EXPECT_EQ(Count(html, "<svg"), static_cast<int>(ReportPlotIds().size()));
  EXPECT_EQ(Count(html, "<svg"), Count(html, "</svg>"));

  for (const std::string& id : ReportPlotIds()) {
    SCOPED_TRACE(id);
    const std::string fig = FigureText(html, id);
    ASSERT_FALSE(fig.empty());
    EXPECT_NE(fig.find("<svg"), std::string::npos);
    EXPECT_NE(fig.find("<figcaption>"), std::string::npos);
  }
  // Drawn data: one line per series, one bar segment per part and round.
  EXPECT_EQ(Count(FigureText(html, "plot-accuracy"), "class=\"series\""), 1);
  EXPECT_EQ(Count(FigureText(html, "plot-loss"), "class=\"series\""), 2);
  EXPECT_GE(Count(FigureText(html, "plot-round-time"), "class=\"bar\""), 3 * 3);
  for (const char* id : {"plot-cpu", "plot-memory"}) {
    const std::string fig = FigureText(html, id);
    EXPECT_EQ(Count(fig, "class=\"series\""), 4) << id;
    EXPECT_EQ(Count(fig, "<circle"), 12) << id;  // 4 clients x 3 rounds
  }
  EXPECT_EQ(Count(FigureText(html, "plot-network"), "class=\"series\""), 8);
  // No watchdog yet: the pauses plot says so instead of drawing zeros.
  EXPECT_NE(FigureText(html, "plot-pauses").find("class=\"empty\""),
            std::string::npos);
  EXPECT_EQ(Count(FigureText(html, "plot-pauses"), "<circle"), 0);
  // Tables: one row per client (plus the header).
  const size_t clients = html.find("<table id=\"clients\">");
  ASSERT_NE(clients, std::string::npos);
  EXPECT_EQ(
      Count(html.substr(clients, html.find("</table>", clients) - clients),
            "<tr>"),
      5);
  EXPECT_NE(html.find("<table id=\"devices\">"), std::string::npos);
}

TEST(SvgChart, EscapesTextAndDrawsEmptyCharts) {
  ChartOptions o;
  o.title = "a<b & \"c\"";
  const std::string svg = LineChart(o, {});
  EXPECT_NE(svg.find("a&lt;b &amp; &quot;c&quot;"), std::string::npos);
  EXPECT_NE(svg.find("class=\"empty\""), std::string::npos);
  const std::string bars = StackedBarChart(o, {"1", "2"}, {{"x", {1, 2}}});
  EXPECT_EQ(Count(bars, "class=\"bar\""), 2);
}

// Figures a broken or hostile board may report: every chart must end, and
// stay small, whatever they are (an axis loop once ran forever on them).
TEST(SvgChart, EveryChartEndsOnAbsurdFigures) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::nan("");
  const std::vector<std::vector<double>> cases = {
      {-1e15, 50},         {-1e17, -1e17 + 16},
      {1e17, 1e17 + 1},    {1e308, -1e308},
      {inf, -inf, nan, 3}, {5e-324, 0},
      {-1e300, 1e-300},    {42, 42}};
  for (const auto& ys : cases) {
    SCOPED_TRACE(::testing::PrintToString(ys));
    Series series{"s", {}};
    for (size_t i = 0; i < ys.size(); ++i)
      series.points.push_back({i + 1.0, ys[i]});
    Series wide_x{"x", {{-1e308, 1}, {1e308, 2}, {1e17, 3}}};
    const std::string lines = LineChart({}, {series, wide_x});
    EXPECT_LT(lines.size(), 64u << 10);
    EXPECT_LT(Count(lines, "<line"), 80);
    EXPECT_EQ(lines.find("nan"), std::string::npos);
    const std::string bars = StackedBarChart({}, {"a", "b"}, {{"l", ys}});
    EXPECT_LT(bars.size(), 64u << 10);
    EXPECT_EQ(bars.find("inf"), std::string::npos);
  }
}

TEST(HtmlReport, AJobWithAbsurdClientFiguresRenders) {
  testing::TempDir dir;
  {
    std::ofstream rounds(dir / "rounds.jsonl");
    rounds << "{\"round\":1,\"selected\":2,\"participants\":2,"
              "\"round_seconds\":1e308,\"test_accuracy\":null,"
              "\"test_loss\":-1e17}\n"
              "{\"round\":2,\"selected\":2,\"participants\":2,"
              "\"round_seconds\":-1e15,\"test_accuracy\":0.5,"
              "\"test_loss\":1e17}\n";
    std::ofstream clients(dir / "clients.jsonl");
    for (int round = 1; round <= 2; ++round) {
      clients << "{\"round\":" << round
              << ",\"client\":\"a\",\"num_samples\":10,"
                 "\"cpu_utilization\":-1e15,\"rss_bytes\":18446744073709551615,"
                 "\"samples_per_second\":1e308,\"paused_seconds\":-1e300,"
                 "\"rpc_sent_bytes\":0,\"client_wall_seconds\":null}\n"
              << "{\"round\":" << round
              << ",\"client\":\"b\\n<script>\",\"num_samples\":10,"
                 "\"cpu_utilization\":0.9,\"train_seconds\":1e17}\n";
    }
  }
  auto record = ReadJobRecord(dir.path());
  ASSERT_TRUE(record.ok()) << record.status();
  const std::string html = RenderHtmlReport(*record, "absurd");
  EXPECT_LT(html.size(), 1u << 20);
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  for (const std::string& id : ReportPlotIds()) {
    EXPECT_NE(html.find("<figure id=\"" + id + "\">"), std::string::npos) << id;
  }
}

// Rounds that carry the job's wall time get a plot against it; the
// committed sample job, from before they did, gets none.
TEST(HtmlReport, AccuracyOverTimeWhenRoundsCarryTheirElapsedTime) {
  testing::TempDir dir;
  std::ofstream(dir / "rounds.jsonl")
      << "{\"round\":1,\"elapsed_seconds\":4.5,\"test_accuracy\":0.5}\n"
      << "{\"round\":2,\"elapsed_seconds\":9.0,\"test_accuracy\":0.7}\n";
  std::ofstream(dir / "clients.jsonl");
  auto record = ReadJobRecord(dir.path());
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->rounds[1].elapsed_seconds, 9.0);
  const std::string fig =
      FigureText(RenderHtmlReport(*record, "timed"), "plot-progress-time");
  ASSERT_FALSE(fig.empty());
  EXPECT_EQ(Count(fig, "class=\"series\""), 1);
  EXPECT_NE(fig.find("seconds since the first round opened"),
            std::string::npos);
  auto untimed = ReadJobRecord(kJob);
  ASSERT_TRUE(untimed.ok());
  EXPECT_EQ(RenderHtmlReport(*untimed, "old").find("plot-progress-time"),
            std::string::npos);
}

TEST(HtmlReport, ARoundThatPublishedNothingSaysSo) {
  testing::TempDir dir;
  std::ofstream(dir / "rounds.jsonl")
      << "{\"round\":1,\"selected\":2,\"participants\":2}\n"
         "{\"round\":2,\"selected\":2,\"participants\":2,"
         "\"refused_result\":\"aggregation failed: <b>short</b>\"}\n";
  auto record = ReadJobRecord(dir.path());
  ASSERT_TRUE(record.ok()) << record.status();
  ASSERT_EQ(record->rounds.size(), 2u);
  EXPECT_EQ(record->rounds[0].refused_result, "");
  const std::string html = RenderHtmlReport(*record, "refused");
  EXPECT_EQ(Count(html, "class=\"refused\""), 1);
  EXPECT_NE(html.find("Round 2 published no new model: its result was "
                      "refused (aggregation failed: &lt;b&gt;short&lt;/b&gt;)"),
            std::string::npos);
}

}  // namespace
}  // namespace fedberry::server::html_report_test
