// Small charts drawn as inline SVG text, for a report that needs no
// JavaScript, stylesheet or network: line charts (one line per series, x is
// numeric, e.g. the round) and stacked bar charts (one bar per category).
// Axes get 1-2-5 ticks; series get colours from a fixed palette and a
// legend. Text is XML-escaped.
// Thread-safety: pure functions, thread-safe.
#ifndef FEDBERRY_SERVER_SVG_CHART_H_
#define FEDBERRY_SERVER_SVG_CHART_H_

#include <string>
#include <utility>
#include <vector>

namespace fedberry::server {

struct ChartOptions {
  std::string title;
  std::string x_label;
  std::string y_label;
  int width = 560;
  int height = 300;
  bool y_from_zero = true;
  // Shown in the plot area when there is nothing to draw.
  std::string empty_message = "no data";
};

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), any order
  bool dashed = false;
};

struct BarLayer {
  std::string name;
  std::vector<double> values;  // one per category; missing ones count 0
};

std::string LineChart(const ChartOptions& options,
                      const std::vector<Series>& series);

std::string StackedBarChart(const ChartOptions& options,
                            const std::vector<std::string>& categories,
                            const std::vector<BarLayer>& layers);

// Escapes &, <, >, " and ' for XML/HTML text and attributes.
std::string XmlEscape(const std::string& text);

// The i-th colour of the palette (cycles).
const char* ChartColor(size_t i);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_SVG_CHART_H_
