// fedberry-client's program, shared with the simulator's test-only client
// (sim/emulated_client_main.cc): both mains are ClientMain with their own
// usage and decorators. RunClient trains until the job ends (or, with
// --supervise, restarts the client after memory releases) and gives the
// process's exit status: 0 done, 2 a bad command line or data, 75 memory
// released (kMemoryReleaseExitCode), 77 refused identity (kRefusedExitCode),
// 130 stopped by a signal, 1 any other failure.
// Thread-safety: call once, from main's thread.
#ifndef FEDBERRY_CLIENT_RUN_CLIENT_H_
#define FEDBERRY_CLIENT_RUN_CLIENT_H_

#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "client/client_config.h"
#include "client/local_trainer.h"
#include "client/secagg_board.h"
#include "runtime/memory_readings.h"
#include "secagg/session_messages.h"

namespace fedberry::client {

// Wraps a trainer (`inner` outlives what it returns).
using TrainerDecorator =
    std::function<std::unique_ptr<LocalTrainer>(LocalTrainer& inner)>;

// What a test-only client adds to fedberry-client: none in fedberry-client.
struct ClientDecorators {
  // Applied to the board's IDX shard once loaded (BoardDataOptions).
  std::function<absl::Status(runtime::ImageDataset&)> edit_idx_shard;
  // Wrap the board's trainer, first innermost; the agent trains the last.
  std::vector<TrainerDecorator> trainers;
  // Where the memory watchdog reads pressure (a test: files it rewrites to
  // pause and resume the board); default the kernel's.
  runtime::MemoryReaderOptions memory_readings;
  // Called before each message of a securely aggregated round (a test:
  // kills the board at a chosen stage); empty: nothing.
  std::function<void(uint64_t round, int stage)> secagg_before_stage;
  // Wraps the board's secure-aggregation key signer (a test: one that
  // forges signatures); empty: nothing.
  std::function<std::unique_ptr<secagg::KeySigner>(
      std::unique_ptr<secagg::KeySigner>)>
      secagg_wrap_signer;
  // Shown each session's plain words before they are masked (a test: keeps
  // them to check the gateway's unmasked sum); empty: nothing.
  SecAggWordsHook secagg_on_words;
};

// The decorators a binary's own flags ask for, once the command line is
// parsed; InvalidArgument naming a bad flag (exit status 2).
using DecoratorsFromFlags =
    std::function<absl::StatusOr<ClientDecorators>(const ClientConfig&)>;

// Runs the board as `config` says; `argv` is the command line, for the
// supervisor to start the client again. The exit status.
int RunClient(int argc, char** argv, const ClientConfig& config,
              const ClientDecorators& decorators);

// A whole main(): tunes the heap, parses the command line (`usage`; --help
// lists the flags of files whose path contains `flags_file`), reads the
// ClientConfig and `decorators` (may be empty), blocks the signals the
// client handles, applies FEDBERRY_KERNELS, then RunClient.
int ClientMain(int argc, char** argv, absl::string_view usage,
               absl::string_view flags_file,
               const DecoratorsFromFlags& decorators);

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_RUN_CLIENT_H_
