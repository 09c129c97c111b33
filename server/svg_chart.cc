#include "server/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace fedberry::server {
namespace {

constexpr int kLeft = 64, kRight = 16, kTop = 34, kBottom = 64;

struct Axis {
  double lo = 0, hi = 1, step = 0.2;
};

// Beyond this a value is drawn at the edge: the axis's span must stay a
// finite double, whatever a board reported.
constexpr double kMaxMagnitude = 1e300;
// Drawing stops after this many ticks, whatever the axis says.
constexpr int kMaxTicks = 64;

// Ticks at 1, 2 or 5 times a power of ten, about five of them. Any finite
// or non-finite input gives a finite axis with a few ticks.
Axis NiceAxis(double lo, double hi) {
  if (!std::isfinite(lo)) lo = 0;
  if (!std::isfinite(hi)) hi = lo + 1;
  lo = std::clamp(lo, -kMaxMagnitude, kMaxMagnitude);
  hi = std::clamp(hi, -kMaxMagnitude, kMaxMagnitude);
  if (!(hi > lo)) {
    const double pad = lo == 0 ? 1 : std::fabs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  const double raw = (hi - lo) / 5;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (raw <= step) break;
  }
  Axis a;
  a.step = step;
  a.lo = std::floor(lo / step + 1e-9) * step;
  a.hi = std::ceil(hi / step - 1e-9) * step;
  // Where a value is so large that adding a step no longer changes it
  // (|lo| 1e17, step 0.5), the span stands as given.
  if (!(a.hi > a.lo) || !(a.lo + step > a.lo)) {
    a.lo = lo;
    a.hi = hi;
    a.step = hi - lo;
  }
  return a;
}

// Tick values lo, lo + step, ... hi, computed by count rather than by
// repeated addition, so rounding cannot stall or stretch the loop.
std::vector<double> Ticks(const Axis& a) {
  const double n = std::round((a.hi - a.lo) / a.step);
  const int count = std::isfinite(n) ? std::clamp(static_cast<int>(std::min(
                                                      n, double{kMaxTicks})),
                                                  1, kMaxTicks)
                                     : 1;
  std::vector<double> out;
  for (int k = 0; k <= count; ++k) out.push_back(a.lo + k * a.step);
  return out;
}

// A bar's height: negative and non-finite values draw nothing, and huge ones
// stop at the axis's limit.
double Drawable(double v) {
  return std::isfinite(v) ? std::clamp(v, 0.0, kMaxMagnitude) : 0;
}

std::string Num(double v) {
  if (v == 0) return "0";
  const double a = std::fabs(v);
  if (a >= 1e6 || a < 1e-3) return absl::StrFormat("%.2g", v);
  if (a >= 100 || v == std::round(v)) return absl::StrFormat("%.0f", v);
  if (a >= 10) return absl::StrFormat("%.1f", v);
  return absl::StrFormat("%.3g", v);
}

struct Frame {
  int w, h;
  double x0, x1;
  Axis y;
  double X(double x) const {
    // Halves first: x1 - x0 overflows for x values near +-1e308.
    return kLeft + (x1 > x0 ? (x / 2 - x0 / 2) / (x1 / 2 - x0 / 2) : 0.5) *
                       (w - kLeft - kRight);
  }
  double Y(double y) const {
    return kTop + (1 - (y - this->y.lo) / (this->y.hi - this->y.lo)) *
                      (h - kTop - kBottom);
  }
};

std::string Open(const ChartOptions& o) {
  return absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" "
      "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" "
      "aria-label=\"%s\" font-family=\"sans-serif\" font-size=\"11\">\n"
      "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n"
      "<text x=\"%d\" y=\"18\" font-size=\"13\" "
      "font-weight=\"bold\">%s</text>\n",
      o.width, o.height, o.width, o.height, XmlEscape(o.title), o.width,
      o.height, kLeft, XmlEscape(o.title));
}

// Grid, y ticks and axis labels.
std::string Axes(const ChartOptions& o, const Frame& f) {
  std::string s;
  const int plot_bottom = o.height - kBottom;
  for (double v : Ticks(f.y)) {
    const double y = f.Y(v);
    absl::StrAppendFormat(
        &s,
        "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>"
        "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" "
        "fill=\"#444\">%s</text>\n",
        kLeft, y, o.width - kRight, y, kLeft - 6, y + 4, Num(v));
  }
  absl::StrAppendFormat(
      &s,
      "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>\n"
      "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>\n"
      "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#222\">%s</text>\n"
      "<text transform=\"translate(14,%d) rotate(-90)\" text-anchor=\"middle\" "
      "fill=\"#222\">%s</text>\n",
      kLeft, plot_bottom, o.width - kRight, plot_bottom, kLeft, kTop, kLeft,
      plot_bottom, (kLeft + o.width - kRight) / 2, plot_bottom + 30,
      XmlEscape(o.x_label), (kTop + plot_bottom) / 2, XmlEscape(o.y_label));
  return s;
}

std::string Legend(const ChartOptions& o, const std::vector<std::string>& names,
                   const std::vector<bool>& dashed) {
  std::string s;
  int x = kLeft;
  const int y = o.height - 14;
  for (size_t i = 0; i < names.size(); ++i) {
    const int width = 28 + 7 * static_cast<int>(names[i].size());
    if (x + width > o.width - kRight && x > kLeft) break;  // no room left
    absl::StrAppendFormat(
        &s,
        "<g class=\"legend\"><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
        "stroke=\"%s\" stroke-width=\"3\"%s/><text x=\"%d\" y=\"%d\">%s</text>"
        "</g>\n",
        x, y - 4, x + 18, y - 4, ChartColor(i),
        i < dashed.size() && dashed[i] ? " stroke-dasharray=\"5,3\"" : "",
        x + 22, y, XmlEscape(names[i]));
    x += width;
  }
  return s;
}

std::string Empty(const ChartOptions& o) {
  return absl::StrFormat(
      "<text class=\"empty\" x=\"%d\" y=\"%d\" text-anchor=\"middle\" "
      "fill=\"#888\">%s</text>\n",
      o.width / 2, o.height / 2, XmlEscape(o.empty_message));
}

}  // namespace

const char* ChartColor(size_t i) {
  static const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                   "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                                   "#bcbd22", "#17becf"};
  return kPalette[i % (sizeof(kPalette) / sizeof(kPalette[0]))];
}

std::string XmlEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string LineChart(const ChartOptions& o,
                      const std::vector<Series>& series) {
  double x0 = std::numeric_limits<double>::infinity(), x1 = -x0;
  double y0 = x0, y1 = -x0;
  for (const Series& s : series) {
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      x0 = std::min(x0, x);
      x1 = std::max(x1, x);
      y0 = std::min(y0, y);
      y1 = std::max(y1, y);
    }
  }
  std::string svg = Open(o);
  if (!std::isfinite(x0)) {
    Frame f{o.width, o.height, 0, 1, NiceAxis(0, 1)};
    absl::StrAppend(&svg, Axes(o, f), Empty(o), "</svg>\n");
    return svg;
  }
  if (o.y_from_zero) y0 = std::min(0.0, y0);
  Frame f{o.width, o.height, x0, x1, NiceAxis(y0, y1)};
  svg += Axes(o, f);
  // X ticks at whole numbers (rounds), thinned to at most ~12 labels.
  const double span = std::round(std::min(x1 - x0, kMaxMagnitude));
  const double every = std::max(1.0, std::floor(span / 12) + 1);
  for (double k = 0; k <= span && k / every <= kMaxTicks; k += every) {
    const double x = x0 + k;
    absl::StrAppendFormat(&svg,
                          "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" "
                          "fill=\"#444\">%s</text>\n",
                          f.X(x), o.height - kBottom + 16, Num(x));
  }
  std::vector<std::string> names;
  std::vector<bool> dashed;
  for (size_t i = 0; i < series.size(); ++i) {
    std::vector<std::pair<double, double>> pts = series[i].points;
    std::sort(pts.begin(), pts.end());
    names.push_back(series[i].name);
    dashed.push_back(series[i].dashed);
    std::string path;
    for (const auto& [x, y] : pts) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      absl::StrAppendFormat(&path, "%s%.1f,%.1f ", path.empty() ? "M" : "L",
                            f.X(x), f.Y(y));
    }
    absl::StrAppendFormat(
        &svg,
        "<g class=\"series\" data-name=\"%s\"><path d=\"%s\" fill=\"none\" "
        "stroke=\"%s\" stroke-width=\"2\"%s/>",
        XmlEscape(series[i].name), path, ChartColor(i),
        series[i].dashed ? " stroke-dasharray=\"5,3\"" : "");
    for (const auto& [x, y] : pts) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      absl::StrAppendFormat(&svg,
                            "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" "
                            "fill=\"%s\"><title>%s: %s</title></circle>",
                            f.X(x), f.Y(y), ChartColor(i),
                            XmlEscape(series[i].name), Num(y));
    }
    svg += "</g>\n";
  }
  absl::StrAppend(&svg, Legend(o, names, dashed), "</svg>\n");
  return svg;
}

std::string StackedBarChart(const ChartOptions& o,
                            const std::vector<std::string>& categories,
                            const std::vector<BarLayer>& layers) {
  std::string svg = Open(o);
  double top = 0;
  for (size_t c = 0; c < categories.size(); ++c) {
    double sum = 0;
    for (const BarLayer& l : layers) {
      if (c < l.values.size()) sum += Drawable(l.values[c]);
    }
    top = std::max(top, sum);
  }
  Frame f{o.width, o.height, 0, 1, NiceAxis(0, top > 0 ? top : 1)};
  svg += Axes(o, f);
  if (categories.empty()) {
    absl::StrAppend(&svg, Empty(o), "</svg>\n");
    return svg;
  }
  const double slot =
      static_cast<double>(o.width - kLeft - kRight) / categories.size();
  const double bar = std::max(2.0, slot * 0.7);
  const size_t every = categories.size() / 15 + 1;
  for (size_t c = 0; c < categories.size(); ++c) {
    const double x = kLeft + slot * c + (slot - bar) / 2;
    double base = 0;
    for (size_t i = 0; i < layers.size(); ++i) {
      const double v =
          c < layers[i].values.size() ? Drawable(layers[i].values[c]) : 0;
      if (v <= 0) continue;
      absl::StrAppendFormat(
          &svg,
          "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
          "height=\"%.1f\" fill=\"%s\"><title>%s %s: %s</title></rect>\n",
          x, f.Y(base + v), bar, f.Y(base) - f.Y(base + v), ChartColor(i),
          XmlEscape(categories[c]), XmlEscape(layers[i].name), Num(v));
      base += v;
    }
    if (c % every == 0) {
      absl::StrAppendFormat(&svg,
                            "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" "
                            "fill=\"#444\">%s</text>\n",
                            x + bar / 2, o.height - kBottom + 16,
                            XmlEscape(categories[c]));
    }
  }
  std::vector<std::string> names;
  for (const BarLayer& l : layers) names.push_back(l.name);
  absl::StrAppend(&svg, Legend(o, names, {}), "</svg>\n");
  return svg;
}

}  // namespace fedberry::server
