// A small HTTP/1.1 listener for operators' pages that no caller can starve
// or blow up: it serves GET and HEAD of fixed paths and nothing else, takes
// no request body, bounds each request's line and headers in bytes and in
// time, and caps connections in total and per address. Built on GNU
// libmicrohttpd (Debian's libmicrohttpd12), driven by one thread of its own
// that polls every connection (epoll): an idle or slow connection holds a
// slot, never a thread, so it cannot keep another caller waiting.
// Thread-safety: Start and the destructor from one thread. Routes run on
// the listener's thread, one at a time; they must be safe to run beside
// whatever else the program does.
#ifndef FEDBERRY_SERVER_HTTP_LISTENER_H_
#define FEDBERRY_SERVER_HTTP_LISTENER_H_

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/clock.h"

struct MHD_Daemon;
struct MHD_Connection;

namespace fedberry::server {

struct HttpLimits {
  // Connections open at once, in all and from one address; a connection
  // beyond either is closed as soon as it is accepted.
  int max_connections = 64;
  int max_connections_per_ip = 16;
  // A request's line and headers must all be in within this long of the
  // connection opening (or of the previous answer, on a kept-alive
  // connection), or the connection is closed: a slowloris sending a byte
  // a second holds its slot this long at most.
  absl::Duration request_timeout = absl::Seconds(10);
  // A connection that moves no byte for this long is closed (libmicrohttpd
  // counts it on the real clock, in whole seconds).
  absl::Duration idle_timeout = absl::Seconds(30);
  // A connection's request line and headers and libmicrohttpd's buffers
  // for them; beyond it the answer is 414 (line) or 431 (headers).
  size_t max_request_head_bytes = 16 << 10;
};

// What a route answers: 200 with this body.
struct HttpAnswer {
  std::string content_type;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};
using HttpRoute = std::function<HttpAnswer()>;

class HttpListener {
 public:
  // Listens on `host` (a name or an address; IPv4 or IPv6) and `port` (0:
  // a free one) and answers a GET or HEAD of a path in `routes` (exactly;
  // a query is ignored) with its answer, any other path with 404, any
  // other method with 405 (Allow: GET, HEAD) and any request that carries
  // a body with 413, before reading it. `clock` times request heads and
  // must outlive the listener. InvalidArgument for limits below 1 (or a
  // head bound under 4 KiB); Unavailable when it cannot listen there.
  static absl::StatusOr<std::unique_ptr<HttpListener>> Start(
      const std::string& host, int port,
      std::map<std::string, HttpRoute> routes, const HttpLimits& limits,
      Clock& clock);
  ~HttpListener();
  HttpListener(const HttpListener&) = delete;
  HttpListener& operator=(const HttpListener&) = delete;

  int port() const { return port_; }

 private:
  struct Waiting {  // a connection whose request head is not all in
    int fd;
    absl::Time since;
  };

  HttpListener(std::map<std::string, HttpRoute> routes,
               const HttpLimits& limits, Clock& clock);
  void Loop();
  // Shuts the socket of each connection whose request head is late; the
  // loop's next turn sees it closed and libmicrohttpd ends it.
  void CutLateHeads();

  // libmicrohttpd's callbacks (http_listener.cc), on the loop's thread.
  friend struct HttpListenerCallbacks;
  void Opened(MHD_Connection* connection);
  void Closed(MHD_Connection* connection);
  // An answer went out: the connection's next request head is timed anew.
  void Answered(MHD_Connection* connection);
  // Queues the answer to a request whose head is in; false: none could be.
  bool Respond(MHD_Connection* connection, const char* url, const char* method);

  const std::map<std::string, HttpRoute> routes_;
  const HttpLimits limits_;
  Clock& clock_;
  MHD_Daemon* daemon_ = nullptr;
  int stop_fd_ = -1;  // an eventfd: written once to end the loop
  int port_ = 0;
  // Touched only on the loop's thread (libmicrohttpd calls back on it), and
  // by the destructor once the loop has ended.
  std::map<MHD_Connection*, Waiting> waiting_;
  std::thread thread_;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_HTTP_LISTENER_H_
