#include "sim/reserved_port.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fedberry::sim::reserved_port_test {
namespace {

// A TCP socket on 127.0.0.1:port, with SO_REUSEPORT when `reuse_port` (as
// gRPC's listeners); -1 with errno set when bind fails.
int BindLoopback(int port, bool reuse_port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  const int on = 1;
  if (reuse_port) setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    const int error = errno;
    close(fd);
    errno = error;
    return -1;
  }
  return fd;
}

TEST(ReservedPortTest, TheServerCanTakeThePortAndNoOtherProgram) {
  auto reserved = ReservedPort::On("127.0.0.1");
  ASSERT_TRUE(reserved.ok()) << reserved.status();
  ASSERT_GT(reserved->port(), 0);

  // A program binding without SO_REUSEPORT is refused the port.
  EXPECT_EQ(BindLoopback(reserved->port(), /*reuse_port=*/false), -1);
  EXPECT_EQ(errno, EADDRINUSE);

  // A listener bound as gRPC binds takes it, and connections reach it.
  const int listener = BindLoopback(reserved->port(), /*reuse_port=*/true);
  ASSERT_GE(listener, 0) << std::strerror(errno);
  ASSERT_EQ(listen(listener, 4), 0);
  const int board = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(reserved->port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(board, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0)
      << std::strerror(errno);
  const int accepted = accept(listener, nullptr, nullptr);
  EXPECT_GE(accepted, 0);
  close(accepted);
  close(board);
  close(listener);
}

TEST(ReservedPortTest, AHostThatIsNotAnIpv4AddressIsRefused) {
  auto reserved = ReservedPort::On("gateway.local");
  EXPECT_EQ(reserved.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(reserved.status().message().find("gateway.local"),
            std::string::npos);
}

}  // namespace
}  // namespace fedberry::sim::reserved_port_test
