// Turns a job's record (its output folder's JSON lines) into one
// self-contained HTML page: summary and device tables and inline SVG plots
// of accuracy and loss per round, round time split into training, waiting,
// aggregation and evaluation, and per-client CPU, memory, network and
// watchdog pauses per round. No script, stylesheet link or network fetch.
// Every plot is a <figure id="plot-..."> (kReportPlotIds), so tests and
// tools can find them.
// Thread-safety: pure functions apart from the file write; thread-safe.
#ifndef FEDBERRY_SERVER_HTML_REPORT_H_
#define FEDBERRY_SERVER_HTML_REPORT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "server/job_record.h"

namespace fedberry::server {

// The ids of the page's plots, in page order.
const std::vector<std::string>& ReportPlotIds();

// The page for `record`; `title` names the job (e.g. its folder).
std::string RenderHtmlReport(const JobRecord& record, const std::string& title);

// Reads `job_dir` and writes the page to `output` (via a temporary file and
// a rename, so a reader never sees half a page). Errors of ReadJobRecord, or
// Internal when the page cannot be written.
absl::Status WriteHtmlReport(const std::string& job_dir,
                             const std::string& output);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_HTML_REPORT_H_
