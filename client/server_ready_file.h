// Waiting for a server that starts together with its boards.
//
// fedberry-server writes its bound address to <output>/server.addr once it
// listens. A launcher that starts a server and its boards at once
// (fedberry-sim) points each board at that file (--server_ready_file), so
// the boards load LibTorch and their data while the server loads, and dial
// as soon as it listens instead of failing and backing off.
#ifndef FEDBERRY_CLIENT_SERVER_READY_FILE_H_
#define FEDBERRY_CLIENT_SERVER_READY_FILE_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "base/clock.h"

namespace fedberry::client {

// Returns once `path` holds something. DeadlineExceeded when `timeout`
// (> 0; 0: no limit) passes on `clock` first, Cancelled once `stopped`
// says so. Looks every `poll`, sleeping on `clock` in between.
absl::Status WaitForServerReadyFile(
    const std::string& path, absl::Duration timeout,
    const std::function<bool()>& stopped, Clock& clock = Clock::Real(),
    absl::Duration poll = absl::Milliseconds(20));

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_SERVER_READY_FILE_H_
