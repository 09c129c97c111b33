#include "server/metrics_http_server.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/prometheus_text.h"

namespace fedberry::server {

std::string HealthJson(const JobStatus& status) {
  nlohmann::json j = {
      {"status", "ok"},
      {"job_running", status.running},
      {"current_round", status.current_round},
      {"rounds", status.rounds},
      {"registered_clients", status.registered_clients},
  };
  return j.dump() + "\n";
}

absl::StatusOr<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::Start(
    const std::string& given, MetricsHandlers handlers) {
  // A port alone binds loopback: the page is for a local Prometheus or an
  // SSH tunnel unless the operator names an address.
  const std::string listen =
      given.find(':') == std::string::npos ? absl::StrCat(":", given) : given;
  const size_t colon = listen.rfind(':');
  int port = -1;
  if (!absl::SimpleAtoi(listen.substr(colon + 1), &port) || port < 0 ||
      port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics address '", listen,
                     "' is not host:port (e.g. 127.0.0.1:9464)"));
  }
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) host = "127.0.0.1";

  auto server = std::unique_ptr<MetricsHttpServer>(new MetricsHttpServer);
  server->http_ = std::make_unique<httplib::Server>();
  httplib::Server& http = *server->http_;
  http.new_task_queue = [] { return new httplib::ThreadPool(2); };
  http.Get("/metrics",
           [h = handlers](const httplib::Request&, httplib::Response& res) {
             res.set_content(h.page(h.status()), PrometheusText::kContentType);
           });
  if (handlers.fleet_json && handlers.fleet_page) {
    // The fleet page draws everything on the server: it may load nothing,
    // run nothing, and be framed by no one.
    http.Get("/",
             [h = handlers](const httplib::Request&, httplib::Response& res) {
               res.set_header("Content-Security-Policy",
                              "default-src 'none'; style-src 'unsafe-inline'; "
                              "img-src data:; frame-ancestors 'none'");
               res.set_header("X-Content-Type-Options", "nosniff");
               res.set_header("Cache-Control", "no-store");
               res.set_content(h.fleet_page(), "text/html; charset=utf-8");
             });
    http.Get("/api/fleet.json",
             [h = handlers](const httplib::Request&, httplib::Response& res) {
               res.set_header("X-Content-Type-Options", "nosniff");
               res.set_header("Cache-Control", "no-store");
               res.set_content(h.fleet_json(), "application/json");
             });
  }
  http.Get("/healthz",
           [h = handlers](const httplib::Request&, httplib::Response& res) {
             res.set_content(HealthJson(h.status()), "application/json");
           });
  if (port == 0) {
    port = http.bind_to_any_port(host);
  } else if (!http.bind_to_port(host, port)) {
    port = -1;
  }
  if (port <= 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen for metrics on ", listen,
                     " (address in use, or not an address of this machine?)"));
  }
  server->port_ = port;
  server->address_ =
      absl::StrCat(host == "0.0.0.0" ? "127.0.0.1" : host, ":", port);
  server->thread_ =
      std::thread([s = server.get()] { s->http_->listen_after_bind(); });
  return server;
}

MetricsHttpServer::~MetricsHttpServer() {
  if (http_) http_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace fedberry::server
