// fedberry-client's command line from a ClientConfig: the flags that
// ClientConfigFromFlags (client_flags.h) reads back into the same config,
// written from the client's flag table (client_flag_table.h). fedberry-sim
// builds its emulated boards' command lines with it. No flags are defined
// or read here, and no LibTorch is needed.
// Thread-safety: pure functions.
#ifndef FEDBERRY_CLIENT_CLIENT_ARGS_H_
#define FEDBERRY_CLIENT_CLIENT_ARGS_H_

#include <string>
#include <vector>

#include "client/client_config.h"

namespace fedberry::client {

// --server's default.
inline constexpr char kDefaultServer[] = "127.0.0.1:50051";
// --partition_seed's default: every board of a job must use the same.
inline constexpr uint64_t kDefaultPartitionSeed = 42;
// --max_temperature's default. A Pi 3 B+ throttles from 60 C and
// hard-limits at 80 C; a PC's sensors say nothing of a board, and an
// emulated fleet must not sit out on them.
#if defined(__aarch64__) || defined(__arm__)
inline constexpr double kDefaultMaxTemperature = 70;
#else
inline constexpr double kDefaultMaxTemperature = 0;
#endif

// Where the data's derived files go without --cache_dir:
// <checkpoint_dir>/cache, else $TMPDIR/fedberry-cache.
std::string DefaultCacheDir(const std::string& checkpoint_dir);
// Where CRIU dumps go without --criu_dir: <checkpoint_dir>/criu.
std::string DefaultCriuDir(const std::string& checkpoint_dir);

// The config that fedberry-client's flags give when none is set: each field
// the table names at its flag's default, but for data.cache_dir and
// criu_dir, left empty: the client picks them from its checkpoint_dir
// (DefaultCacheDir, DefaultCriuDir) once that is known.
ClientConfig ClientFlagDefaults();

// `--name=value` for each of the client's flags whose value in `config`,
// written as the flag parses it, is not the flag's default, so parsing the
// result gives `config` back; in the table's order (client_flags.inc).
// --cache_dir and --criu_dir are given only when they differ from the folders
// the client would pick for `config.checkpoint_dir` (empty: the client picks).
// Not flags, so not written: data.edit_idx_shard, eligibility.time_zone and
// watchdog_options.release_enabled.
std::vector<std::string> ClientArgsFrom(const ClientConfig& config);

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_CLIENT_ARGS_H_
