#include "server/metrics_http_server.h"

#include <map>
#include <nlohmann/json.hpp>
#include <utility>

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

namespace {

std::map<std::string, HttpRoute> RoutesOf(const MetricsHandlers& handlers) {
  std::map<std::string, HttpRoute> routes;
  routes["/metrics"] = [h = handlers] {
    return HttpAnswer{PrometheusText::kContentType, h.page(h.status()), {}};
  };
  routes["/healthz"] = [h = handlers] {
    return HttpAnswer{"application/json", HealthJson(h.status()), {}};
  };
  if (handlers.fleet_json && handlers.fleet_page) {
    // The fleet page draws everything on the server: it may load nothing,
    // run nothing, and be framed by no one.
    routes["/"] = [h = handlers] {
      return HttpAnswer{"text/html; charset=utf-8",
                        h.fleet_page(),
                        {{"Content-Security-Policy",
                          "default-src 'none'; style-src 'unsafe-inline'; "
                          "img-src data:; frame-ancestors 'none'"},
                         {"X-Content-Type-Options", "nosniff"},
                         {"Cache-Control", "no-store"}}};
    };
    routes["/api/fleet.json"] = [h = handlers] {
      return HttpAnswer{"application/json",
                        h.fleet_json(),
                        {{"X-Content-Type-Options", "nosniff"},
                         {"Cache-Control", "no-store"}}};
    };
  }
  return routes;
}

}  // namespace

absl::StatusOr<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::Start(
    const std::string& given, MetricsHandlers handlers,
    const HttpLimits& limits, Clock& clock) {
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

  absl::StatusOr<std::unique_ptr<HttpListener>> http =
      HttpListener::Start(host, port, RoutesOf(handlers), limits, clock);
  if (!http.ok()) {
    if (http.status().code() == absl::StatusCode::kInvalidArgument) {
      return http.status();
    }
    return absl::UnavailableError(absl::StrCat(
        "cannot listen for metrics on ", listen, " (", http.status().message(),
        "; address in use, or not an address of this machine?)"));
  }
  auto server = std::unique_ptr<MetricsHttpServer>(new MetricsHttpServer);
  server->http_ = *std::move(http);
  server->port_ = server->http_->port();
  server->address_ =
      absl::StrCat(host == "0.0.0.0" ? "127.0.0.1" : host, ":", server->port_);
  return server;
}

}  // namespace fedberry::server
