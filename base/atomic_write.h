// One way to replace a file whole: `path`.tmp is written and fsynced, renamed
// over `path`, and the folder fsynced. A reader sees the old file or the new
// one, never part of one, and once this returns OK the new one survives a
// crash or a power cut. Every output file that is rewritten whole (the
// global model, server.addr, the report page, a TorchScript export, the
// metrics files a resumed server rewrites) goes through it.
#ifndef FEDBERRY_BASE_ATOMIC_WRITE_H_
#define FEDBERRY_BASE_ATOMIC_WRITE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "base/file_system.h"

namespace fedberry::base {

// The FileSystem's error, naming `path`, when a step fails; the temporary
// file is removed then and `path` is left as it was.
absl::Status WriteFileAtomically(FileSystem& fs, const std::string& path,
                                 absl::string_view bytes);

}  // namespace fedberry::base

#endif  // FEDBERRY_BASE_ATOMIC_WRITE_H_
