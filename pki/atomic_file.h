// Whole-file reads and atomic replacement for the fleet folder: a reader (or
// a crash) sees the old file or the new one, never a torn one, and a private
// key never exists, not even as the temporary, with a mode wider than asked.
// The leveldb SetCurrentFile pattern: write NAME.tmp, fsync, rename over
// NAME, fsync the directory; remove the temporary on failure.
// Thread-safety: safe to call from several threads, but two writers of the
// same path race on its temporary; serialise them (FleetFolder locks).
#ifndef FEDBERRY_PKI_ATOMIC_FILE_H_
#define FEDBERRY_PKI_ATOMIC_FILE_H_

#include <sys/types.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fedberry::pki {

// The bytes of the file at `path`. NotFound when missing; PermissionDenied,
// DataLoss (EIO) or Internal naming the file otherwise.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path);

// Replaces (or creates) `path` with `data` and exactly `mode` whatever the
// umask: `path`.tmp is created fresh (O_EXCL, after removing a stale one)
// with `mode` at open() time, fchmod-ed to `mode`, written, fsynced and
// renamed over `path`; then the directory is fsynced. Errors name the file:
// PermissionDenied, ResourceExhausted (ENOSPC), DataLoss (EIO), Internal.
absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view data, mode_t mode);

}  // namespace fedberry::pki

#endif  // FEDBERRY_PKI_ATOMIC_FILE_H_
