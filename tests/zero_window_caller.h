// A hostile caller for tests: a raw HTTP/2 connection that announces a zero
// receive window (so the server can send it no message), keeps answering
// pings and settings (so keepalive never ends it), and opens gRPC streams
// it will never read. gRPC's own client cannot do this: its window grows
// to megabytes whether or not the application reads.
#ifndef FEDBERRY_TESTS_ZERO_WINDOW_CALLER_H_
#define FEDBERRY_TESTS_ZERO_WINDOW_CALLER_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"

namespace fedberry::testing {

class ZeroWindowCaller {
 public:
  enum class End { kOpen, kReset, kTrailers };

  // Connects to "127.0.0.1:port" and announces a zero stream window.
  static absl::StatusOr<std::unique_ptr<ZeroWindowCaller>> Connect(
      const std::string& address) {
    const size_t colon = address.rfind(':');
    int port = 0;
    if (colon == std::string::npos ||
        !absl::SimpleAtoi(address.substr(colon + 1), &port)) {
      return absl::InvalidArgumentError("not host:port: " + address);
    }
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, address.substr(0, colon).c_str(), &to.sin_addr);
    if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to)) {
      if (fd >= 0) close(fd);
      return absl::UnavailableError("cannot connect to " + address);
    }
    auto caller =
        std::unique_ptr<ZeroWindowCaller>(new ZeroWindowCaller(fd, address));
    caller->Send("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
    // SETTINGS_ENABLE_PUSH = 0, SETTINGS_INITIAL_WINDOW_SIZE = 0.
    caller->SendFrame(kSettings, 0, 0,
                      std::string("\x00\x02\x00\x00\x00\x00"
                                  "\x00\x04\x00\x00\x00\x00",
                                  12));
    caller->reader_ = std::thread([c = caller.get()] { c->Read(); });
    return caller;
  }

  ~ZeroWindowCaller() {
    stop_ = true;
    shutdown(fd_, SHUT_RDWR);
    reader_.join();
    close(fd_);
  }

  // Opens a stream calling `path` (e.g. "/fedberry.v1.Federation/
  // PullModelFile") with one serialized request; returns its id.
  int Open(const std::string& path, const std::string& request) {
    std::string headers;
    for (const auto& [name, value] :
         {std::pair<std::string, std::string>{":method", "POST"},
          {":scheme", "http"},
          {":path", path},
          {":authority", authority_},
          {"content-type", "application/grpc"},
          {"te", "trailers"}}) {
      headers += '\0';  // a literal field, not indexed, with a new name
      headers += HpackString(name) + HpackString(value);
    }
    std::string message(5, '\0');  // gRPC framing: uncompressed, length
    for (int i = 0; i < 4; ++i) {
      message[1 + i] = static_cast<char>((request.size() >> (24 - 8 * i)));
    }
    message += request;
    absl::MutexLock lock(&mu_);
    const int stream = next_stream_;
    next_stream_ += 2;
    ends_[stream] = End::kOpen;
    SendFrameLocked(kHeaders, kEndHeaders, stream, headers);
    SendFrameLocked(kData, kEndStream, stream, message);
    return stream;
  }

  // How `stream` ended, once it has or `timeout` passed (then kOpen).
  End WaitForEnd(int stream, absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto ended = [&] { return ends_[stream] != End::kOpen || closed_; };
    mu_.AwaitWithTimeout(absl::Condition(&ended), timeout);
    return ends_[stream];
  }

 private:
  static constexpr uint8_t kData = 0, kHeaders = 1, kRstStream = 3,
                           kSettings = 4, kPing = 6, kGoAway = 7;
  static constexpr uint8_t kEndStream = 1, kAck = 1, kEndHeaders = 4;

  ZeroWindowCaller(int fd, std::string authority)
      : fd_(fd), authority_(std::move(authority)) {}

  // A string as HPACK writes it without Huffman coding: a 7-bit prefix
  // length, then the bytes.
  static std::string HpackString(const std::string& s) {
    std::string out;
    size_t n = s.size();
    if (n < 127) {
      out += static_cast<char>(n);
    } else {
      out += static_cast<char>(127);
      for (n -= 127; n >= 128; n >>= 7) out += static_cast<char>(n % 128 + 128);
      out += static_cast<char>(n);
    }
    return out + s;
  }

  void Send(const std::string& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      ssize_t n =
          send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;
      sent += static_cast<size_t>(n);
    }
  }

  void SendFrame(uint8_t type, uint8_t flags, int stream,
                 const std::string& payload) {
    absl::MutexLock lock(&mu_);
    SendFrameLocked(type, flags, stream, payload);
  }

  void SendFrameLocked(uint8_t type, uint8_t flags, int stream,
                       const std::string& payload)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    std::string frame(9, '\0');
    const size_t n = payload.size();
    frame[0] = static_cast<char>(n >> 16);
    frame[1] = static_cast<char>(n >> 8);
    frame[2] = static_cast<char>(n);
    frame[3] = static_cast<char>(type);
    frame[4] = static_cast<char>(flags);
    for (int i = 0; i < 4; ++i) {
      frame[5 + i] = static_cast<char>(stream >> (24 - 8 * i));
    }
    Send(frame + payload);
  }

  bool ReadExactly(std::string& into, size_t n) {
    into.resize(n);
    size_t got = 0;
    while (got < n && !stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      ssize_t r = recv(fd_, into.data() + got, n - got, 0);
      if (r <= 0) return false;
      got += static_cast<size_t>(r);
    }
    return got == n;
  }

  // Answers settings and pings, records how streams end; never grants a
  // window.
  void Read() {
    std::string header, payload;
    while (ReadExactly(header, 9)) {
      const auto b = [&](int i) { return static_cast<uint8_t>(header[i]); };
      const size_t n = (size_t{b(0)} << 16) | (size_t{b(1)} << 8) | b(2);
      const uint8_t type = b(3), flags = b(4);
      const int stream = static_cast<int>(((uint32_t{b(5)} & 0x7f) << 24) |
                                          (uint32_t{b(6)} << 16) |
                                          (uint32_t{b(7)} << 8) | b(8));
      if (!ReadExactly(payload, n)) break;
      if (type == kSettings && !(flags & kAck)) {
        SendFrame(kSettings, kAck, 0, "");
      } else if (type == kPing && !(flags & kAck)) {
        SendFrame(kPing, kAck, 0, payload);
      } else if (type == kRstStream ||
                 (type == kHeaders && (flags & kEndStream))) {
        absl::MutexLock lock(&mu_);
        ends_[stream] = type == kRstStream ? End::kReset : End::kTrailers;
      } else if (type == kGoAway) {
        break;
      }
    }
    absl::MutexLock lock(&mu_);
    closed_ = true;
  }

  const int fd_;
  const std::string authority_;
  std::thread reader_;
  std::atomic<bool> stop_{false};
  absl::Mutex mu_;
  int next_stream_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<int, End> ends_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace fedberry::testing

#endif  // FEDBERRY_TESTS_ZERO_WINDOW_CALLER_H_
