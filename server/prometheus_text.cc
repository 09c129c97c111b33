#include "server/prometheus_text.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace fedberry::server {
namespace {

std::string Escape(const std::string& s, bool quote) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && quote) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string FormatPrometheusValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    return absl::StrFormat("%.0f", value);
  }
  return absl::StrFormat("%.17g", value);
}

void PrometheusText::Add(const std::string& name, Type type,
                         const std::string& help, const Labels& labels,
                         double value) {
  auto [it, inserted] = families_.try_emplace(name, Family{type, help, {}});
  if (inserted) order_.push_back(name);
  std::string line = name;
  if (!labels.empty()) {
    line += '{';
    for (size_t i = 0; i < labels.size(); ++i) {
      if (i > 0) line += ',';
      absl::StrAppend(&line, labels[i].first, "=\"",
                      Escape(labels[i].second, true), "\"");
    }
    line += '}';
  }
  absl::StrAppend(&line, " ", FormatPrometheusValue(value));
  it->second.samples.push_back(std::move(line));
}

std::string PrometheusText::Render() const {
  std::string out;
  for (const std::string& name : order_) {
    const Family& f = families_.at(name);
    absl::StrAppend(&out, "# HELP ", name, " ", Escape(f.help, false), "\n",
                    "# TYPE ", name, " ",
                    f.type == Type::kCounter ? "counter" : "gauge", "\n");
    for (const std::string& s : f.samples) absl::StrAppend(&out, s, "\n");
  }
  return out;
}

}  // namespace fedberry::server
