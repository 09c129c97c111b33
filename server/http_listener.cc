#include "server/http_listener.h"

#include <microhttpd.h>
#include <netdb.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/log_text.h"

namespace fedberry::server {
namespace {

// How often the loop looks at request heads' deadlines while one is
// pending: nothing signals a deadline passing, least of all a simulated
// clock moved by a test.
constexpr int kDeadlineLookMs = 250;

// A listening socket on host:port, or why not.
absl::StatusOr<int> Listen(const std::string& host, int port, int& family) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = absl::StrCat(port);
  if (const int e = getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
      e != 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", host, ":",
                                               port, ": ", gai_strerror(e)));
  }
  const addrinfo& a = *found;
  family = a.ai_family;
  const int fd = socket(a.ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
                        a.ai_protocol);
  const int on = 1;
  const bool ok =
      fd >= 0 &&
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) == 0 &&
      bind(fd, a.ai_addr, a.ai_addrlen) == 0 && listen(fd, 64) == 0;
  const int error = errno;
  freeaddrinfo(found);
  if (!ok) {
    if (fd >= 0) close(fd);
    return absl::UnavailableError(absl::StrCat(
        "cannot listen on ", host, ":", port, ": ", std::strerror(error)));
  }
  return fd;
}

int BoundPort(int fd) {
  sockaddr_storage address{};
  socklen_t size = sizeof address;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    return -1;
  }
  if (address.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port);
  }
  return ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
}

// The peer's address for a log line.
std::string PeerOf(MHD_Connection* connection) {
  const MHD_ConnectionInfo* info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  char host[NI_MAXHOST] = "?";
  if (info != nullptr && info->client_addr != nullptr) {
    const socklen_t size = info->client_addr->sa_family == AF_INET6
                               ? sizeof(sockaddr_in6)
                               : sizeof(sockaddr_in);
    getnameinfo(info->client_addr, size, host, sizeof host, nullptr, 0,
                NI_NUMERICHOST);
  }
  return host;
}

// A short fixed answer (never an echo of the request), and the connection
// closed after it, since what follows the head is not read.
bool Refuse(MHD_Connection* connection, unsigned int status, const char* text,
            bool allow) {
  MHD_Response* response = MHD_create_response_from_buffer(
      std::strlen(text), const_cast<char*>(text), MHD_RESPMEM_PERSISTENT);
  if (response == nullptr) return false;
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE,
                          "text/plain; charset=utf-8");
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONNECTION, "close");
  if (allow)
    MHD_add_response_header(response, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
  const MHD_Result queued = MHD_queue_response(connection, status, response);
  MHD_destroy_response(response);
  return queued == MHD_YES;
}

// Whether the request announces a body (a length above 0, or chunks).
bool CarriesABody(MHD_Connection* connection) {
  const char* length = MHD_lookup_connection_value(
      connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
  const char* encoding = MHD_lookup_connection_value(
      connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
  return encoding != nullptr ||
         (length != nullptr &&
          std::strspn(length, "0 \t") != std::strlen(length));
}

}  // namespace

// libmicrohttpd's C callbacks, forwarded to the listener.
struct HttpListenerCallbacks {
  static void Log(void*, const char* format, va_list args) {
    char line[512];
    std::vsnprintf(line, sizeof line, format, args);
    absl::string_view text(line);
    while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
    spdlog::debug("metrics listener: {}", base::Printable(text, 256));
  }
  static void Notify(void* self, MHD_Connection* connection, void**,
                     MHD_ConnectionNotificationCode code) {
    auto* listener = static_cast<HttpListener*>(self);
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
      listener->Opened(connection);
    } else {
      listener->Closed(connection);
    }
  }
  static void Completed(void* self, MHD_Connection* connection, void**,
                        MHD_RequestTerminationCode code) {
    if (code == MHD_REQUEST_TERMINATED_COMPLETED_OK) {
      static_cast<HttpListener*>(self)->Answered(connection);
    }
  }
  static MHD_Result Answer(void* self, MHD_Connection* connection,
                           const char* url, const char* method, const char*,
                           const char*, size_t*, void**) {
    return static_cast<HttpListener*>(self)->Respond(connection, url, method)
               ? MHD_YES
               : MHD_NO;
  }
};

HttpListener::HttpListener(std::map<std::string, HttpRoute> routes,
                           const HttpLimits& limits, Clock& clock)
    : routes_(std::move(routes)), limits_(limits), clock_(clock) {}

absl::StatusOr<std::unique_ptr<HttpListener>> HttpListener::Start(
    const std::string& host, int port, std::map<std::string, HttpRoute> routes,
    const HttpLimits& limits, Clock& clock) {
  if (limits.max_connections < 1 || limits.max_connections_per_ip < 1 ||
      limits.request_timeout < absl::Seconds(1) ||
      limits.idle_timeout < absl::Seconds(1) ||
      limits.max_request_head_bytes < 4096) {
    return absl::InvalidArgumentError(absl::StrCat(
        "HTTP limits: connections (", limits.max_connections, ", ",
        limits.max_connections_per_ip,
        " per address) must be at least 1, timeouts at least 1s and the "
        "request head bound at least 4096 bytes"));
  }
  int family = AF_INET;
  absl::StatusOr<int> fd = Listen(host, port, family);
  if (!fd.ok()) return fd.status();
  auto listener = std::unique_ptr<HttpListener>(
      new HttpListener(std::move(routes), limits, clock));
  HttpListener* self = listener.get();
  listener->port_ = BoundPort(*fd);
  listener->stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  unsigned int flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
  if (family == AF_INET6) flags |= MHD_USE_IPv6;
  listener->daemon_ = MHD_start_daemon(
      flags, 0, nullptr, nullptr, &HttpListenerCallbacks::Answer, self,
      MHD_OPTION_EXTERNAL_LOGGER, &HttpListenerCallbacks::Log, self,
      MHD_OPTION_LISTEN_SOCKET, *fd, MHD_OPTION_CONNECTION_LIMIT,
      static_cast<unsigned int>(limits.max_connections),
      MHD_OPTION_PER_IP_CONNECTION_LIMIT,
      static_cast<unsigned int>(limits.max_connections_per_ip),
      MHD_OPTION_CONNECTION_TIMEOUT,
      static_cast<unsigned int>(absl::ToInt64Seconds(limits.idle_timeout)),
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, limits.max_request_head_bytes,
      MHD_OPTION_NOTIFY_CONNECTION, &HttpListenerCallbacks::Notify, self,
      MHD_OPTION_NOTIFY_COMPLETED, &HttpListenerCallbacks::Completed, self,
      MHD_OPTION_END);
  if (listener->daemon_ == nullptr || listener->stop_fd_ < 0 ||
      listener->port_ <= 0) {
    if (listener->daemon_ == nullptr) close(*fd);
    return absl::UnavailableError(absl::StrCat(
        "cannot serve HTTP on ", host, ":", port, " (libmicrohttpd refused)"));
  }
  listener->thread_ = std::thread([self] { self->Loop(); });
  return listener;
}

HttpListener::~HttpListener() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    while (write(stop_fd_, &one, sizeof one) < 0 && errno == EINTR) {
    }
    thread_.join();
  }
  if (daemon_ != nullptr) MHD_stop_daemon(daemon_);  // closes the socket
  if (stop_fd_ >= 0) close(stop_fd_);
}

void HttpListener::Loop() {
  const MHD_DaemonInfo* info =
      MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_EPOLL_FD);
  pollfd fds[2] = {{info->epoll_fd, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
  for (;;) {
    int wait_ms = waiting_.empty() ? -1 : kDeadlineLookMs;
    MHD_UNSIGNED_LONG_LONG mhd_ms = 0;
    if (MHD_get_timeout(daemon_, &mhd_ms) == MHD_YES) {
      const int capped =
          static_cast<int>(std::min<MHD_UNSIGNED_LONG_LONG>(mhd_ms, INT_MAX));
      wait_ms = wait_ms < 0 ? capped : std::min(wait_ms, capped);
    }
    if (poll(fds, 2, wait_ms) < 0 && errno != EINTR) {
      spdlog::error("metrics listener: poll failed: {}", std::strerror(errno));
      return;
    }
    if (fds[1].revents != 0) return;
    MHD_run(daemon_);
    CutLateHeads();
  }
}

void HttpListener::CutLateHeads() {
  const absl::Time now = clock_.Now();
  for (auto& [connection, waiting] : waiting_) {
    if (waiting.fd < 0 || now - waiting.since < limits_.request_timeout) {
      continue;
    }
    spdlog::debug(
        "metrics listener: closed the connection of {}: its request was not "
        "all in after {}",
        PeerOf(connection), absl::FormatDuration(limits_.request_timeout));
    // The descriptor stays libmicrohttpd's to close; a shut socket reads
    // as closed, so its next turn ends the connection.
    shutdown(waiting.fd, SHUT_RDWR);
    waiting.fd = -1;
  }
}

void HttpListener::Opened(MHD_Connection* connection) {
  const MHD_ConnectionInfo* info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
  waiting_[connection] = {info != nullptr ? info->connect_fd : -1,
                          clock_.Now()};
}

void HttpListener::Closed(MHD_Connection* connection) {
  waiting_.erase(connection);
}

void HttpListener::Answered(MHD_Connection* connection) { Opened(connection); }

bool HttpListener::Respond(MHD_Connection* connection, const char* url,
                           const char* method) {
  waiting_.erase(connection);  // its head is in
  const bool get = std::strcmp(method, MHD_HTTP_METHOD_GET) == 0;
  if (!get && std::strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
    return Refuse(connection, MHD_HTTP_METHOD_NOT_ALLOWED,
                  "only GET and HEAD are served\n", /*allow=*/true);
  }
  if (CarriesABody(connection)) {
    return Refuse(connection, MHD_HTTP_CONTENT_TOO_LARGE,
                  "a request may carry no body\n", /*allow=*/false);
  }
  const auto route = routes_.find(url);
  if (route == routes_.end()) {
    return Refuse(connection, MHD_HTTP_NOT_FOUND, "not found\n",
                  /*allow=*/false);
  }
  const HttpAnswer answer = route->second();
  MHD_Response* response = MHD_create_response_from_buffer(
      answer.body.size(), const_cast<char*>(answer.body.data()),
      MHD_RESPMEM_MUST_COPY);
  if (response == nullptr) return false;
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE,
                          answer.content_type.c_str());
  for (const auto& [name, value] : answer.headers) {
    MHD_add_response_header(response, name.c_str(), value.c_str());
  }
  const MHD_Result queued =
      MHD_queue_response(connection, MHD_HTTP_OK, response);
  MHD_destroy_response(response);
  return queued == MHD_YES;
}

}  // namespace fedberry::server
