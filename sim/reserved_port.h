// A TCP port held for a server the simulator starts next, so that the
// processes that dial it can start at the same time instead of waiting for
// the server to load and report the port it bound.
//
// The port is bound with SO_REUSEPORT and never listens: gRPC binds its
// listeners with SO_REUSEPORT too (the default on Linux), so the server can
// take the same port, while the kernel hands it to no other program as an
// ephemeral port. A socket that does not listen receives no connections.
// Thread-safety: not thread-safe.
#ifndef FEDBERRY_SIM_RESERVED_PORT_H_
#define FEDBERRY_SIM_RESERVED_PORT_H_

#include <string>

#include "absl/status/statusor.h"

namespace fedberry::sim {

class ReservedPort {
 public:
  // Reserves a free port on `host`, an IPv4 address ("127.0.0.1",
  // "0.0.0.0"). Internal (with the system's reason) when it cannot.
  static absl::StatusOr<ReservedPort> On(const std::string& host);

  ReservedPort(ReservedPort&& other) noexcept;
  ReservedPort& operator=(ReservedPort&& other) noexcept;
  ReservedPort(const ReservedPort&) = delete;
  ReservedPort& operator=(const ReservedPort&) = delete;
  ~ReservedPort();  // frees the port

  int port() const { return port_; }

 private:
  ReservedPort(int fd, int port) : fd_(fd), port_(port) {}
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace fedberry::sim

#endif  // FEDBERRY_SIM_RESERVED_PORT_H_
