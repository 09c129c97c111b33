// The server's HTTP side door for operators: GET /metrics answers with the
// Prometheus text page, GET /healthz with a small JSON object saying whether
// a job is running, GET / with the live fleet page and GET /api/fleet.json
// with its data. Served by an HttpListener (libmicrohttpd, one polling
// thread, bounded in connections, bytes and time), so a scrape costs a
// board-sized gateway little and no caller can starve or blow it up.
// Thread-safety: thread-safe; the handlers run on the listener's thread.
#ifndef FEDBERRY_SERVER_METRICS_HTTP_SERVER_H_
#define FEDBERRY_SERVER_METRICS_HTTP_SERVER_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "base/clock.h"
#include "server/http_listener.h"
#include "server/server_metrics.h"

namespace fedberry::server {

struct MetricsHandlers {
  std::function<JobStatus()> status;                  // for /healthz
  std::function<std::string(const JobStatus&)> page;  // for /metrics
  // The live fleet page (/) and its data (/api/fleet.json); both empty:
  // not served.
  std::function<std::string()> fleet_page;
  std::function<std::string()> fleet_json;
};

class MetricsHttpServer {
 public:
  // Listens on `listen` ("host:port", or a port alone or ":port" for
  // loopback; port 0 picks a free port) and serves within `limits` until
  // destroyed; `clock` times request heads and must outlive the server.
  // InvalidArgument for a malformed address or limits, Unavailable when it
  // cannot be bound.
  static absl::StatusOr<std::unique_ptr<MetricsHttpServer>> Start(
      const std::string& listen, MetricsHandlers handlers,
      const HttpLimits& limits = HttpLimits(), Clock& clock = Clock::Real());

  // The bound address, e.g. "127.0.0.1:9464".
  const std::string& address() const { return address_; }
  int port() const { return port_; }

 private:
  MetricsHttpServer() = default;

  std::unique_ptr<HttpListener> http_;
  std::string address_;
  int port_ = 0;
};

// The JSON body of /healthz for `status`.
std::string HealthJson(const JobStatus& status);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_METRICS_HTTP_SERVER_H_
