// A strict parser of the Prometheus text exposition format (0.0.4) for
// tests: checks HELP/TYPE lines, metric and label names, label escaping,
// values, that a family's samples are contiguous and follow its TYPE, and
// that no series repeats. Returns every sample.
#ifndef FEDBERRY_TESTS_EXPOSITION_PARSER_H_
#define FEDBERRY_TESTS_EXPOSITION_PARSER_H_

#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace fedberry::testing {

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

struct Exposition {
  std::vector<Sample> samples;
  std::map<std::string, std::string> types;  // family -> counter/gauge/...
  std::map<std::string, std::string> help;
  std::string error;  // empty when the page is valid

  // The value of `name` with `labels` (all of them), or NaN.
  double Value(const std::string& name,
               const std::map<std::string, std::string>& labels = {}) const {
    for (const auto& s : samples) {
      if (s.name == name && s.labels == labels) return s.value;
    }
    return std::nan("");
  }
  bool Has(const std::string& name) const {
    for (const auto& s : samples) {
      if (s.name == name) return true;
    }
    return false;
  }
};

inline Exposition ParseExposition(const std::string& text) {
  Exposition out;
  static const std::regex kName("[a-zA-Z_:][a-zA-Z0-9_:]*");
  static const std::regex kLabel("[a-zA-Z_][a-zA-Z0-9_]*");
  std::set<std::string> closed;  // families whose samples ended
  std::set<std::string> series;
  std::string current;
  size_t pos = 0;
  int line_no = 0;
  auto fail = [&](const std::string& why, const std::string& line) {
    out.error =
        "line " + std::to_string(line_no) + ": " + why + ": '" + line + "'";
    return out;
  };
  auto family_of = [&](const std::string& name) {
    // Samples of a counter family may not carry suffixes here: fedberry's
    // counter names include _total in the family name (format 0.0.4).
    return name;
  };
  if (!text.empty() && text.back() != '\n') {
    out.error = "page does not end with a newline";
    return out;
  }
  while (pos < text.size()) {
    const size_t end = text.find('\n', pos);
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.empty()) continue;
    if (line[0] == '#') {
      std::smatch m;
      static const std::regex kMeta("# (HELP|TYPE) ([^ ]+) ?(.*)");
      if (!std::regex_match(line, m, kMeta)) continue;  // a comment
      const std::string name = m[2];
      if (!std::regex_match(name, kName)) return fail("bad metric name", line);
      if (m[1] == "TYPE") {
        static const std::set<std::string> kTypes = {
            "counter", "gauge", "histogram", "summary", "untyped"};
        if (!kTypes.count(m[3])) return fail("unknown type", line);
        if (out.types.count(name)) return fail("second TYPE", line);
        if (closed.count(name) || name == current) {
          return fail("TYPE after the family's samples", line);
        }
        out.types[name] = m[3];
      } else {
        if (out.help.count(name)) return fail("second HELP", line);
        out.help[name] = m[3];
      }
      continue;
    }
    Sample s;
    size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
    s.name = line.substr(0, i);
    if (!std::regex_match(s.name, kName)) return fail("bad metric name", line);
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        size_t eq = line.find('=', i);
        if (eq == std::string::npos) return fail("label without '='", line);
        const std::string key = line.substr(i, eq - i);
        if (!std::regex_match(key, kLabel)) return fail("bad label name", line);
        i = eq + 1;
        if (i >= line.size() || line[i] != '"') {
          return fail("unquoted label value", line);
        }
        ++i;
        std::string value;
        while (i < line.size() && line[i] != '"') {
          if (line[i] == '\\') {
            if (i + 1 >= line.size()) return fail("dangling escape", line);
            const char e = line[i + 1];
            if (e == 'n') {
              value += '\n';
            } else if (e == '\\' || e == '"') {
              value += e;
            } else {
              return fail("bad escape", line);
            }
            i += 2;
          } else {
            value += line[i++];
          }
        }
        if (i >= line.size()) return fail("unterminated label value", line);
        ++i;  // closing quote
        if (s.labels.count(key)) return fail("repeated label", line);
        s.labels[key] = value;
        if (i < line.size() && line[i] == ',') ++i;
      }
      if (i >= line.size()) return fail("unterminated label set", line);
      ++i;  // '}'
    }
    if (i >= line.size() || line[i] != ' ') return fail("no value", line);
    std::string rest = line.substr(i + 1);
    const size_t space = rest.find(' ');
    const std::string value = rest.substr(0, space);  // timestamp ignored
    if (value == "NaN") {
      s.value = std::nan("");
    } else if (value == "+Inf" || value == "-Inf") {
      s.value = value[0] == '+' ? HUGE_VAL : -HUGE_VAL;
    } else {
      char* stop = nullptr;
      s.value = std::strtod(value.c_str(), &stop);
      if (value.empty() || *stop != '\0') return fail("bad value", line);
    }
    const std::string family = family_of(s.name);
    if (family != current) {
      if (closed.count(family)) {
        return fail("family's samples are not contiguous", line);
      }
      if (!current.empty()) closed.insert(current);
      current = family;
    }
    std::string key = s.name;
    for (const auto& [k, v] : s.labels) key += "|" + k + "=" + v;
    if (!series.insert(key).second) return fail("repeated series", line);
    out.samples.push_back(std::move(s));
  }
  return out;
}

}  // namespace fedberry::testing

#endif  // FEDBERRY_TESTS_EXPOSITION_PARSER_H_
