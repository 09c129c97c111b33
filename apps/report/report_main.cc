// fedberry-report: turns a job's output folder into one self-contained HTML
// page with plots.
#include <cstdio>
#include <string>

#include "absl/flags/flag.h"
#include "base/command_line.h"
#include "server/html_report.h"

ABSL_FLAG(std::string, input, "",
          "A job's output folder (holds rounds.jsonl and clients.jsonl).");
ABSL_FLAG(std::string, output, "",
          "The HTML page to write (default: <input>/report.html).");

int main(int argc, char** argv) {
  fedberry::ParseCommandLine(
      argc, argv,
      "fedberry report: draws a job's figures (accuracy, loss, round time, "
      "per-client CPU, memory, network, pauses) into one self-contained HTML "
      "page.\nUsage: fedberry-report --input=fedberry-sim-out "
      "--output=report.html",
      "report_main");
  const std::string input = absl::GetFlag(FLAGS_input);
  if (input.empty()) {
    std::fprintf(stderr,
                 "fedberry-report: --input=<job output folder> is "
                 "required (see --help)\n");
    return 2;
  }
  std::string output = absl::GetFlag(FLAGS_output);
  if (output.empty()) output = input + "/report.html";
  absl::Status s = fedberry::server::WriteHtmlReport(input, output);
  if (!s.ok()) {
    std::fprintf(stderr, "fedberry-report: %s\n",
                 std::string(s.message()).c_str());
    return 1;
  }
  std::printf("fedberry-report: wrote %s\n", output.c_str());
  return 0;
}
