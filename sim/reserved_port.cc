#include "sim/reserved_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace fedberry::sim {

absl::StatusOr<ReservedPort> ReservedPort::On(const std::string& host) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot reserve a port on '", host, "': not an IPv4 address"));
  }
  // Not inherited by the processes the simulator spawns.
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrCat("cannot reserve a port: socket: ", std::strerror(errno)));
  }
  const int on = 1;
  socklen_t len = sizeof(addr);
  if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) != 0 ||
      bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int error = errno;
    close(fd);
    return absl::InternalError(absl::StrCat("cannot reserve a port on ", host,
                                            ": ", std::strerror(error)));
  }
  return ReservedPort(fd, ntohs(addr.sin_port));
}

ReservedPort::ReservedPort(ReservedPort&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), port_(other.port_) {}

ReservedPort& ReservedPort::operator=(ReservedPort&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    port_ = other.port_;
  }
  return *this;
}

ReservedPort::~ReservedPort() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace fedberry::sim
