// fedberry-ckpt: lists, verifies and shows the checkpoints in a folder (a
// client's --checkpoint_dir, or a server's <output>/checkpoints).
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "base/command_line.h"
#include "checkpoint/inspect.h"

ABSL_FLAG(bool, json, false, "Print JSON instead of text.");

int main(int argc, char** argv) {
  std::vector<char*> args = fedberry::ParseCommandLine(
      argc, argv,
      "fedberry checkpoint tool: lists, verifies and shows checkpoints.\n"
      "Usage: fedberry-ckpt <list|verify|show> <checkpoint folder> "
      "[checkpoint name] [--json]\n"
      "  list    every checkpoint, newest first: size, checksums valid or "
      "not, round and step\n"
      "  verify  checks every checksum (or one checkpoint's); exit status 1 "
      "when any is corrupt\n"
      "  show    one checkpoint (default: the one a resume would load): "
      "files, checksums, state",
      "ckpt_main");
  if (args.size() < 3 || args.size() > 4) {
    std::fprintf(stderr,
                 "fedberry-ckpt: need a command and a folder, e.g. "
                 "`fedberry-ckpt list /var/lib/fedberry/checkpoints` (see "
                 "--help)\n");
    return 2;
  }
  const std::string command = args[1];
  const std::string folder = args[2];
  const std::string name = args.size() == 4 ? args[3] : "";
  fedberry::checkpoint::CheckpointStore store(folder);
  fedberry::checkpoint::InspectOptions options;
  options.json = absl::GetFlag(FLAGS_json);
  absl::Status s;
  if (command == "list" && name.empty()) {
    s = fedberry::checkpoint::ListCheckpoints(store, options, std::cout);
  } else if (command == "verify") {
    s = fedberry::checkpoint::VerifyCheckpoints(store, name, options,
                                                std::cout);
  } else if (command == "show") {
    s = fedberry::checkpoint::ShowCheckpoint(store, name, options, std::cout);
  } else {
    std::fprintf(stderr, "fedberry-ckpt: unknown command '%s' (see --help)\n",
                 command.c_str());
    return 2;
  }
  if (!s.ok()) {
    std::fprintf(stderr, "fedberry-ckpt: %s\n",
                 std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
