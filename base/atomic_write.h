// One way to replace a file whole: `path`.tmp is written and fsynced, renamed
// over `path`, and the folder fsynced (leveldb's SetCurrentFile pattern). A
// reader sees the old file or the new one, never part of one, and once this
// returns OK the new one survives a crash or a power cut. Every output file
// that is rewritten whole (the global model, server.addr, the report page, a
// TorchScript export, the metrics files a resumed server rewrites, the fleet
// PKI's keys, certificates, CRL and issue log) goes through it.
// Thread-safety: safe to call from several threads, but two writers of the
// same path race on its temporary; serialise them (pki's FleetFolder locks).
#ifndef FEDBERRY_BASE_ATOMIC_WRITE_H_
#define FEDBERRY_BASE_ATOMIC_WRITE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "base/file_system.h"

namespace fedberry::base {

// `options` apply to the temporary, so to the file: with an exact mode (a
// private key's ExactMode(0600)) the file has exactly that mode whatever the
// umask, and is never wider, not even as the temporary: a stale temporary
// is replaced, not reused, and a symlink planted there is not followed.
// The FileSystem's error, naming `path`, when a step fails (PermissionDenied,
// ResourceExhausted for ENOSPC, DataLoss for EIO, ...); the temporary file is
// removed then and `path` is left as it was.
absl::Status WriteFileAtomically(FileSystem& fs, const std::string& path,
                                 absl::string_view bytes,
                                 const NewFileOptions& options = {});

}  // namespace fedberry::base

#endif  // FEDBERRY_BASE_ATOMIC_WRITE_H_
