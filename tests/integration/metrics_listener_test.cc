// The operators' HTTP listener (/metrics, /healthz, the fleet page) against
// hostile callers on real loopback sockets: idle sockets and slowloris
// connections do not starve the pages, a huge body is refused unread, only
// GET and HEAD are served, and no byte a caller or a board sent comes back
// raw in a response or a log line.
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/notification.h"
#include "base/log_text.h"
#include "base/testing/simulated_clock.h"
#include "server/fleet/fleet_status.h"
#include "server/fleet/refused_joins.h"
#include "server/metrics_http_server.h"
#include "tests/raw_http.h"

namespace fedberry::server::metrics_listener_test {
namespace {

using testing::BodyOf;
using testing::Get;
using testing::RawHttp;
using testing::StatusOf;

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

// A fleet of two boards and whatever `refused` holds, for the page and its
// JSON.
MetricsHandlers Handlers(const RefusedJoins* refused = nullptr) {
  const auto fleet = [refused] {
    FleetStatus f;
    f.now = kNow;
    f.job_id = "job";
    f.state = "training";
    for (const char* name : {"pi-a", "pi-b"}) {
      BoardRow row;
      row.name = name;
      row.last_seen = kNow;
      f.boards.push_back(row);
    }
    if (refused != nullptr) {
      for (BoardRow& row : refused->Rows()) f.boards.push_back(row);
    }
    return f;
  };
  return {
      [] { return JobStatus{true, 2, 5, 2, {}, {}}; },
      [](const JobStatus&) { return std::string("fedberry_job_running 1\n"); },
      [fleet] { return FleetPage(fleet()); },
      [fleet] { return FleetJson(fleet()); }};
}

std::unique_ptr<MetricsHttpServer> StartListener(
    MetricsHandlers handlers = Handlers()) {
  auto http = MetricsHttpServer::Start("127.0.0.1:0", std::move(handlers));
  EXPECT_TRUE(http.ok()) << http.status();
  return http.ok() ? *std::move(http) : nullptr;
}

// A slowloris: a request head it never finishes, one more header byte at
// a time at an attacker's pace, until stopped.
class Slowloris {
 public:
  explicit Slowloris(int port) : http_(port) {
    http_.Send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-a: ");
    thread_ = std::thread([this] {
      while (!stop_.WaitForNotificationWithTimeout(absl::Milliseconds(500))) {
        if (!http_.Send("a")) return;  // the server cut it off
      }
    });
  }
  ~Slowloris() {
    stop_.Notify();
    thread_.join();
  }

 private:
  RawHttp http_;
  absl::Notification stop_;
  std::thread thread_;
};

TEST(MetricsListener, IdleAndSlowConnectionsDoNotStarveThePages) {
  auto http = StartListener();
  ASSERT_NE(http, nullptr);
  const int port = http->port();
  // They come first, so a listener that gives each connection a thread of
  // a small pool gives them all its threads.
  std::vector<std::unique_ptr<Slowloris>> slow;
  for (int i = 0; i < 2; ++i) slow.push_back(std::make_unique<Slowloris>(port));
  std::vector<std::unique_ptr<RawHttp>> idle;
  for (int i = 0; i < 8; ++i) {
    idle.push_back(std::make_unique<RawHttp>(port));
    ASSERT_TRUE(idle.back()->connected());
  }
  for (const char* path : {"/", "/api/fleet.json", "/metrics", "/healthz"}) {
    // The client's patience: a starved request gets no answer in it.
    const std::string response = Get(port, path, absl::Seconds(5));
    std::cout << path << " with 2 slowloris and 8 idle sockets open: "
              << (response.empty() ? "no answer within 5 s"
                                   : response.substr(0, response.find('\r')))
              << "\n";
    EXPECT_EQ(StatusOf(response), 200) << path;
  }
}

// The kernel's peak resident set of this process (the listener runs in it),
// from /proc/self/status, in KiB; ResetPeak() starts a new peak.
int64_t PeakRssKib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  int64_t kib = -1;
  while (std::getline(status, line)) {
    if (absl::StartsWith(line, "VmHWM:")) {
      std::string digits;
      for (char c : line) {
        if (c >= '0' && c <= '9') digits += c;
      }
      if (!absl::SimpleAtoi(digits, &kib)) kib = -1;
    }
  }
  return kib;
}

bool ResetPeak() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.close();
  return static_cast<bool>(clear);
}

TEST(MetricsListener, AHugePostIsRefusedUnread) {
  auto http = StartListener();
  ASSERT_NE(http, nullptr);
  constexpr size_t kBody = size_t{64} << 20;
  ASSERT_TRUE(ResetPeak()) << "cannot reset VmHWM";
  const int64_t before = PeakRssKib();
  ASSERT_GT(before, 0);
  RawHttp post(http->port());
  ASSERT_TRUE(post.Send(
      absl::StrCat("POST /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                   "application/octet-stream\r\nContent-Length: ",
                   kBody, "\r\n\r\n")));
  // The body streams from one small buffer until the server stops taking
  // it, so the client adds nothing to this process's peak.
  size_t sent = 0;
  std::thread body([&] {
    const std::string chunk(64 << 10, 'x');
    while (sent < kBody && post.Send(chunk)) sent += chunk.size();
  });
  const std::string response = post.ReadResponse(absl::Seconds(60));
  body.join();
  const int64_t grew = PeakRssKib() - before;
  std::cout << "64 MiB POST: "
            << (response.empty() ? "no answer"
                                 : response.substr(0, response.find('\r')))
            << "; body bytes the server took before answering: " << sent
            << "; peak RSS grew by " << grew / 1024 << " MiB\n";
  EXPECT_EQ(StatusOf(response), 405);
  EXPECT_NE(response.find("\r\nAllow: GET, HEAD\r\n"), std::string::npos)
      << response;
  EXPECT_LT(grew, 8 << 10) << "KiB";
  EXPECT_EQ(StatusOf(Get(http->port(), "/metrics")), 200);
}

// Every response is bounded, valid UTF-8, and holds none of the forged
// text's control bytes, no line that starts with its forged log head, and
// no more than a cut of its 100 kB (a board's text may be shown, escaped
// and cut, on one line).
void ExpectClean(const std::string& what, const std::string& response) {
  SCOPED_TRACE(what);
  EXPECT_LE(response.size(), 64u << 10);
  EXPECT_EQ(response.find('\x1b'), std::string::npos);
  EXPECT_EQ(response.find("\n[2026-11-27"), std::string::npos);
  EXPECT_EQ(response.find("\r[2026-11-27"), std::string::npos);
  EXPECT_EQ(response.find(std::string(600, 'y')), std::string::npos);
  EXPECT_EQ(base::ValidUtf8(response, response.size()), response);
}

TEST(MetricsListener, NoWireStringReachesALogOrAResponseRaw) {
  const std::string forged =
      "x\n[2026-11-27 00:00:00.000] [info] round 3/3 done\x1b[2J\xff\xc0\xaf" +
      std::string(100000, 'y');
  std::string one_line = forged;  // no CR or LF: stays in its header field
  one_line.erase(std::remove(one_line.begin(), one_line.end(), '\n'),
                 one_line.end());
  std::ostringstream captured;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(captured);
  spdlog::default_logger()->sinks().push_back(sink);
  const spdlog::level::level_enum level = spdlog::default_logger()->level();
  spdlog::default_logger()->set_level(spdlog::level::trace);

  // Boards' strings reach the page through the refused joins it lists.
  RefusedJoins refused(1024);
  refused.Refused("pi-c", forged, forged, kNow);
  refused.Refused(one_line.substr(0, 128), "too old", one_line, kNow);
  auto http = StartListener(Handlers(&refused));
  ASSERT_NE(http, nullptr);
  const int port = http->port();
  const std::string head = "HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  const std::vector<std::pair<std::string, std::string>> requests = {
      {"method", forged + " / " + head + "\r\n"},
      {"method on one line", one_line + " / " + head + "\r\n"},
      {"path", "GET /" + one_line + " " + head + "\r\n"},
      {"path with a line break", "GET /" + forged + " " + head + "\r\n"},
      {"escaped path",
       "GET /%1b[2J%0a[2026-11-27%2000:00:00.000]%ff%c0%af " + head + "\r\n"},
      {"query", "GET /metrics?" + one_line + " " + head + "\r\n"},
      {"version", "GET / HTTP/" + one_line + "\r\n\r\n"},
      {"header value", "GET / " + head + "X-Forged: " + one_line + "\r\n\r\n"},
      {"header name", "GET / " + head + one_line + ": 1\r\n\r\n"},
      {"header with a line break",
       "GET / " + head + "X-Forged: " + forged + "\r\n\r\n"},
      {"host", "GET / HTTP/1.1\r\nHost: " + one_line + "\r\n\r\n"},
      {"many headers", "GET / " + head +
                           [] {
                             std::string h;
                             for (int i = 0; i < 2000; ++i)
                               absl::StrAppend(&h, "X-", i, ": \x1b\r\n");
                             return h;
                           }() +
                           "\r\n"},
  };
  for (const auto& [what, request] : requests) {
    RawHttp caller(port);
    caller.Send(request);
    const std::string response = caller.ReadAll(absl::Seconds(10), 1 << 20);
    std::cout << what << ": "
              << base::Printable(response.substr(0, response.find('\r')))
              << " (" << response.size() << " bytes)\n";
    ExpectClean(what, response);
    // And it keeps answering.
    EXPECT_EQ(StatusOf(Get(port, "/healthz")), 200) << what;
  }
  for (const char* path : {"/", "/api/fleet.json"}) {
    const std::string response = Get(port, path);
    EXPECT_EQ(StatusOf(response), 200) << path;
    std::cout << path << " with boards' forged strings: " << response.size()
              << " bytes\n";
    ExpectClean(path, response);
  }
  http.reset();

  spdlog::default_logger()->flush();
  spdlog::default_logger()->set_level(level);
  auto& sinks = spdlog::default_logger()->sinks();
  sinks.erase(std::remove(sinks.begin(), sinks.end(), sink), sinks.end());
  const std::string log = captured.str();
  EXPECT_EQ(log.find('\x1b'), std::string::npos);
  EXPECT_EQ(base::ValidUtf8(log, log.size()), log);
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    EXPECT_LE(line.size(), 4096u) << line.substr(0, 300);
    EXPECT_FALSE(absl::StartsWith(line, "[2026-11-27 00:00:00.000]")) << line;
  }
}

// A request head not all in by its deadline (on the listener's clock) is
// cut off, a slowloris and an idle socket alike; a fresh caller is served.
TEST(MetricsListener, ARequestHeadNotInByItsDeadlineIsCutOff) {
  SimulatedClock clock;
  HttpLimits limits;
  limits.request_timeout = absl::Seconds(10);
  auto http =
      MetricsHttpServer::Start("127.0.0.1:0", Handlers(), limits, clock);
  ASSERT_TRUE(http.ok()) << http.status();
  const int port = (*http)->port();
  RawHttp idle(port);
  RawHttp slow(port);
  ASSERT_TRUE(slow.Send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-a: a"));
  // Both are accepted and waiting: a request answered now proves it.
  ASSERT_EQ(StatusOf(Get(port, "/healthz")), 200);
  clock.Advance(absl::Seconds(9));
  ASSERT_TRUE(slow.Send("a"));
  EXPECT_FALSE(idle.ClosedWithin(absl::Milliseconds(600)));
  clock.Advance(absl::Seconds(2));
  // The listener looks at deadlines several times a second; these waits
  // are the test's patience, not a measurement.
  EXPECT_TRUE(idle.ClosedWithin(absl::Seconds(10)));
  EXPECT_TRUE(slow.ClosedWithin(absl::Seconds(10)));
  EXPECT_EQ(StatusOf(Get(port, "/metrics")), 200);
}

// Connections beyond the cap from one address are closed at once, and the
// listener serves again once they go.
TEST(MetricsListener, ConnectionsBeyondTheCapsAreClosedAtOnce) {
  HttpLimits limits;
  limits.max_connections = 8;
  limits.max_connections_per_ip = 3;
  auto http = MetricsHttpServer::Start("127.0.0.1:0", Handlers(), limits);
  ASSERT_TRUE(http.ok()) << http.status();
  const int port = (*http)->port();
  std::vector<std::unique_ptr<RawHttp>> held;
  for (int i = 0; i < 3; ++i) held.push_back(std::make_unique<RawHttp>(port));
  ASSERT_EQ(StatusOf(Get(port, "/healthz")), 0);  // the fourth: closed
  RawHttp fifth(port);
  EXPECT_TRUE(fifth.ClosedWithin(absl::Seconds(10)));
  held.clear();
  // The listener sees them go on its next turn; a new caller may come first.
  std::string answer;
  for (int tries = 0; tries < 50 && StatusOf(answer) != 200; ++tries) {
    answer = Get(port, "/healthz");
  }
  EXPECT_EQ(StatusOf(answer), 200);
  HttpLimits none;
  none.max_connections_per_ip = 0;
  EXPECT_EQ(
      MetricsHttpServer::Start("127.0.0.1:0", Handlers(), none).status().code(),
      absl::StatusCode::kInvalidArgument);
}

// GET and HEAD only, no body, a bounded request line and headers: each
// refusal has its status, before any body is read.
TEST(MetricsListener, OnlyGetAndHeadWithoutABodyAndABoundedHead) {
  auto http = StartListener();
  ASSERT_NE(http, nullptr);
  const int port = http->port();
  const auto ask = [port](const std::string& request) {
    RawHttp caller(port);
    caller.Send(request);
    return caller.ReadAll(absl::Seconds(10));
  };
  const std::string host = " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  const std::string head = ask("HEAD /metrics" + host + "\r\n");
  EXPECT_EQ(StatusOf(head), 200) << head;
  EXPECT_EQ(BodyOf(head), "");
  EXPECT_NE(head.find("Content-Length: 23\r\n"), std::string::npos) << head;
  for (const char* method : {"POST", "PUT", "DELETE", "OPTIONS", "TRACE"}) {
    const std::string answer = ask(std::string(method) + " /metrics" + host +
                                   "Content-Length: 5\r\n\r\nhello");
    EXPECT_EQ(StatusOf(answer), 405) << method;
    EXPECT_NE(answer.find("\r\nAllow: GET, HEAD\r\n"), std::string::npos)
        << answer;
  }
  EXPECT_EQ(StatusOf(ask("GET /metrics" + host + "Content-Length: 1048576" +
                         "\r\n\r\n")),
            413);
  EXPECT_EQ(StatusOf(ask("GET /metrics" + host +
                         "Transfer-Encoding: chunked\r\n\r\n")),
            413);
  EXPECT_EQ(StatusOf(ask("GET /metrics" + host + "Content-Length: 0\r\n\r\n")),
            200);
  EXPECT_EQ(StatusOf(ask("GET /" + std::string(20000, 'a') + host + "\r\n")),
            414);
  EXPECT_EQ(StatusOf(ask("GET /metrics" + host +
                         "X-Big: " + std::string(20000, 'a') + "\r\n\r\n")),
            431);
  EXPECT_EQ(StatusOf(ask("GET /model" + host + "\r\n")), 404);
}

}  // namespace
}  // namespace fedberry::server::metrics_listener_test
