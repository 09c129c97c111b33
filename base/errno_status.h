// One status for a failed POSIX call naming a file, so every module reports
// ENOSPC, EACCES or EIO with the same code and callers can branch on it.
// Thread-safety: thread-safe (a pure function).
#ifndef FEDBERRY_BASE_ERRNO_STATUS_H_
#define FEDBERRY_BASE_ERRNO_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace fedberry::base {

// The canonical status for a failed POSIX file call: NotFound (ENOENT),
// ResourceExhausted (ENOSPC, EDQUOT), PermissionDenied (EACCES, EPERM,
// EROFS), DataLoss (EIO), else Internal; the message is "<what> <path>:
// <strerror>".
absl::Status ErrnoStatus(int err, absl::string_view what,
                         const std::string& path);

}  // namespace fedberry::base

#endif  // FEDBERRY_BASE_ERRNO_STATUS_H_
