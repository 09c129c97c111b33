// Builds a page in the Prometheus text exposition format (version 0.0.4):
// metric families with their # HELP and # TYPE lines, samples grouped under
// their family, label values escaped. Families appear in the order they were
// first added.
// Thread-safety: not thread-safe; build one page per scrape.
#ifndef FEDBERRY_SERVER_PROMETHEUS_TEXT_H_
#define FEDBERRY_SERVER_PROMETHEUS_TEXT_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace fedberry::server {

using Labels = std::vector<std::pair<std::string, std::string>>;

class PrometheusText {
 public:
  enum class Type { kGauge, kCounter };

  // Adds one sample of family `name` (a counter's name ends in _total).
  // The first call for a family fixes its type and help text.
  void Add(const std::string& name, Type type, const std::string& help,
           const Labels& labels, double value);
  void Gauge(const std::string& name, const std::string& help, double value,
             const Labels& labels = {}) {
    Add(name, Type::kGauge, help, labels, value);
  }
  void Counter(const std::string& name, const std::string& help, double value,
               const Labels& labels = {}) {
    Add(name, Type::kCounter, help, labels, value);
  }

  // The page: every family's HELP, TYPE and samples.
  std::string Render() const;

  // The content type to serve the page with.
  static constexpr const char* kContentType =
      "text/plain; version=0.0.4; charset=utf-8";

 private:
  struct Family {
    Type type;
    std::string help;
    std::vector<std::string> samples;  // rendered sample lines
  };
  std::vector<std::string> order_;
  std::map<std::string, Family> families_;
};

// A value as the exposition format writes it ("NaN", "+Inf", integers
// without a fraction).
std::string FormatPrometheusValue(double value);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_PROMETHEUS_TEXT_H_
