// Everything fedberry-client's command line says, parsed and checked once
// (client/client_flags.h), for RunClient (client/run_client.h).
// Thread-safety: a plain value.
#ifndef FEDBERRY_CLIENT_CLIENT_CONFIG_H_
#define FEDBERRY_CLIENT_CLIENT_CONFIG_H_

#include <string>

#include "absl/time/time.h"
#include "client/board_data_options.h"
#include "client/checkpoint_policy.h"
#include "client/eligibility_options.h"
#include "runtime/watchdog.h"
#include "security/transport.h"

namespace fedberry::client {

struct ClientConfig {
  security::ClientTransportOptions transport;  // --server, --tls_*, --insecure
  // --data and the shard; its cache_dir resolved (--cache_dir, else
  // <checkpoint_dir>/cache, else $TMPDIR/fedberry-cache).
  BoardDataOptions data;
  std::string model_sha256;  // empty: any model file
  bool skip_bad_rows = false;
  int threads = 1;
  std::string name;  // empty: the certificate's, else hostname/index
  absl::Duration rpc_timeout = absl::Seconds(60);
  absl::Duration max_backoff = absl::Seconds(30);
  absl::Duration give_up_after = absl::ZeroDuration();  // 0: never
  // How long to wait for a clock that NTP has not set yet
  // (client/clock_check.h); 0: not at all.
  absl::Duration clock_wait = absl::Minutes(15);
  absl::Duration resource_sample_interval;
  bool allow_data_moves = false;
  std::string server_ready_file;  // empty: dial at once
  std::string checkpoint_dir;     // empty: no training checkpoints
  int checkpoint_keep = 3;
  CheckpointPolicy checkpoint;
  EligibilityOptions eligibility;
  bool watchdog = true;
  absl::Duration watchdog_poll_interval = absl::Seconds(1);
  // Parsed when the watchdog or the supervisor runs (else the defaults).
  runtime::WatchdogOptions watchdog_options;
  std::string watchdog_release = "exit";  // exit, criu or off
  std::string criu_dir;                   // resolved: <checkpoint_dir>/criu
  bool supervise = false;
  int supervise_max_restarts = 0;  // 0: no limit
};

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_CLIENT_CONFIG_H_
