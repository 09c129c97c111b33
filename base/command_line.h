// Command-line parsing shared by every fedberry binary: Abseil flags, with
// the help of the binary's own flags only, and `--help` (also --helpfull,
// --helpshort, --version) answered with exit status 0, as shell and systemd
// tooling expect. (Abseil 20220623 exits 1 after printing help.) Unknown
// flags and bad values still end the program with a non-zero status.
// Not thread-safe: call once, first thing in main().
#ifndef FEDBERRY_BASE_COMMAND_LINE_H_
#define FEDBERRY_BASE_COMMAND_LINE_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace fedberry {

// Sets `usage` as the program's usage message, parses argv and returns the
// positional arguments (argv[0] first). `main_file` is a part of the path of
// the source file that defines the binary's flags (e.g. "server_main"):
// --help lists the flags of files whose path contains it.
std::vector<char*> ParseCommandLine(int argc, char** argv,
                                    absl::string_view usage,
                                    absl::string_view main_file);
// The same, for a binary whose flags are defined in several files: --help
// lists the flags of files whose path contains any of `flag_files`.
std::vector<char*> ParseCommandLine(int argc, char** argv,
                                    absl::string_view usage,
                                    std::vector<std::string> flag_files);

}  // namespace fedberry

#endif  // FEDBERRY_BASE_COMMAND_LINE_H_
