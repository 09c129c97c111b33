// The server's HTTP side door for operators: GET /metrics answers with the
// Prometheus text page, GET /healthz with a small JSON object saying whether
// a job is running, GET / with the live fleet page and GET /api/fleet.json
// with its data. Built on cpp-httplib (Debian's libcpp-httplib-dev) with
// a two-thread pool so a scrape costs a board-sized gateway little.
// Thread-safety: thread-safe; the handlers run on HTTP threads and must be.
#ifndef FEDBERRY_SERVER_METRICS_HTTP_SERVER_H_
#define FEDBERRY_SERVER_METRICS_HTTP_SERVER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "server/server_metrics.h"

namespace httplib {
class Server;
}

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
  // loopback; port 0 picks a free port) and serves
  // until destroyed. InvalidArgument for a malformed address, Unavailable
  // when it cannot be bound.
  static absl::StatusOr<std::unique_ptr<MetricsHttpServer>> Start(
      const std::string& listen, MetricsHandlers handlers);
  ~MetricsHttpServer();

  // The bound address, e.g. "127.0.0.1:9464".
  const std::string& address() const { return address_; }
  int port() const { return port_; }

 private:
  MetricsHttpServer() = default;

  std::unique_ptr<httplib::Server> http_;
  std::thread thread_;
  std::string address_;
  int port_ = 0;
};

// The JSON body of /healthz for `status`.
std::string HealthJson(const JobStatus& status);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_METRICS_HTTP_SERVER_H_
