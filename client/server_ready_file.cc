#include "client/server_ready_file.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"

namespace fedberry::client {

absl::Status WaitForServerReadyFile(const std::string& path,
                                    absl::Duration timeout,
                                    const std::function<bool()>& stopped,
                                    Clock& clock, absl::Duration poll) {
  const absl::Time give_up = timeout > absl::ZeroDuration()
                                 ? clock.Now() + timeout
                                 : absl::InfiniteFuture();
  while (true) {
    // The server writes the file whole and renames it into place; empty
    // is not there yet.
    struct stat st;
    if (stat(path.c_str(), &st) == 0 && st.st_size > 0) {
      return absl::OkStatus();
    }
    if (stopped()) {
      return absl::CancelledError(
          absl::StrCat("stopped while waiting for ", path));
    }
    if (clock.Now() >= give_up) {
      return absl::DeadlineExceededError(absl::StrCat(
          "the server's ready file ", path, " did not appear within ",
          absl::FormatDuration(timeout)));
    }
    clock.SleepFor(poll);
  }
}

}  // namespace fedberry::client
