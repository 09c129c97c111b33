// A raw HTTP/1.1 caller for tests: it sends exactly the bytes it is given
// (broken request lines, control bytes, an announced body it never sends)
// and reads what comes back until the server closes or the caller's own
// receive timeout ends the wait. A well-behaved client library cannot
// play an idle socket, a slowloris or a lying Content-Length.
#ifndef FEDBERRY_TESTS_RAW_HTTP_H_
#define FEDBERRY_TESTS_RAW_HTTP_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace fedberry::testing {

// One TCP connection to 127.0.0.1:port; closed when destroyed.
class RawHttp {
 public:
  explicit RawHttp(int port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(port));
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ >= 0 &&
        connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
      close(fd_);
      fd_ = -1;
    }
  }
  RawHttp(const RawHttp&) = delete;
  RawHttp& operator=(const RawHttp&) = delete;
  ~RawHttp() {
    if (fd_ >= 0) close(fd_);
  }

  bool connected() const { return fd_ >= 0; }

  // False once the server has closed or reset the connection.
  bool Send(absl::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  // Everything the server sends until it closes, `limit` bytes arrived or
  // nothing came for `timeout` (the caller's patience, not a measurement).
  std::string ReadAll(absl::Duration timeout, size_t limit = 64 << 20) {
    SetReceiveTimeout(timeout);
    std::string got;
    char buffer[16384];
    while (got.size() < limit) {
      const ssize_t n = recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      got.append(buffer, static_cast<size_t>(n));
    }
    return got;
  }

  // One response: reads until its head and Content-Length bytes of body
  // are in (or the server closes, or `timeout` passes with nothing new).
  std::string ReadResponse(absl::Duration timeout) {
    SetReceiveTimeout(timeout);
    std::string got;
    char buffer[16384];
    for (;;) {
      const size_t head_end = got.find("\r\n\r\n");
      if (head_end != std::string::npos &&
          got.size() >= head_end + 4 + ContentLength(got)) {
        break;
      }
      const ssize_t n = recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      got.append(buffer, static_cast<size_t>(n));
    }
    return got;
  }

  // True when the server closed the connection (an orderly end or a
  // reset) before `timeout` passed; bytes it sent first are skipped.
  bool ClosedWithin(absl::Duration timeout) {
    SetReceiveTimeout(timeout);
    char buffer[4096];
    for (;;) {
      const ssize_t n = recv(fd_, buffer, sizeof buffer, 0);
      if (n == 0) return true;
      if (n < 0) return errno != EAGAIN && errno != EWOULDBLOCK;
    }
  }

 private:
  static size_t ContentLength(const std::string& response) {
    const size_t at = response.find("\r\nContent-Length: ");
    if (at == std::string::npos) return 0;
    const size_t from = at + 18;
    size_t length = 0;
    const size_t end = response.find("\r\n", from);
    if (!absl::SimpleAtoi(absl::string_view(response).substr(from, end - from),
                          &length)) {
      return 0;
    }
    return length;
  }

  void SetReceiveTimeout(absl::Duration timeout) {
    timeval tv = absl::ToTimeval(timeout);
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }

  int fd_;
};

// The status code of a raw response ("HTTP/1.1 200 OK..."), 0 if none.
inline int StatusOf(absl::string_view response) {
  int status = 0;
  if (response.size() < 12 || !absl::StartsWith(response, "HTTP/1.") ||
      !absl::SimpleAtoi(response.substr(9, 3), &status)) {
    return 0;
  }
  return status;
}

// The body after the head (empty when there is no head).
inline std::string BodyOf(const std::string& response) {
  const size_t head_end = response.find("\r\n\r\n");
  return head_end == std::string::npos ? "" : response.substr(head_end + 4);
}

// A GET of `path` on a fresh connection, answered within `timeout` or "".
inline std::string Get(int port, const std::string& path,
                       absl::Duration timeout = absl::Seconds(10)) {
  RawHttp http(port);
  if (!http.Send("GET " + path +
                 " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")) {
    return "";
  }
  return http.ReadResponse(timeout);
}

}  // namespace fedberry::testing

#endif  // FEDBERRY_TESTS_RAW_HTTP_H_
