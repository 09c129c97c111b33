// The flags fedberry-server shares with fedberry-sim (defined once, in
// server_flags_shared.cc, linked by both): the job's settings the simulator
// passes through to the server it starts. ServerConfigFromFlags reads them
// with the server's own; fedberry-sim reads them into its plan's
// ServerConfig and gives them back as flags (server_args.h).
// Thread-safety: call after the command line is parsed, from main's thread.
#ifndef FEDBERRY_APPS_SERVER_SERVER_FLAGS_SHARED_H_
#define FEDBERRY_APPS_SERVER_SERVER_FLAGS_SHARED_H_

#include "apps/server/server_config.h"

namespace fedberry::apps {

// Part of this file's path, for ParseCommandLine's --help.
inline constexpr char kServerSharedFlagsFile[] =
    "apps/server/server_flags_shared";

// Sets the fields of `config` these flags speak for (plan: optimizer to
// feature_columns, trainable and the encodings; rounds: target_updates,
// over_select, quorum; mode; board_eval but its deadline and
// evaluate_only; strategy; dp but clip_learning_rate and
// clipped_count_stddev; transport.metrics_listen and the metrics
// listener's connection caps) and leaves the rest.
void ReadSharedServerFlags(ServerConfig& config);

}  // namespace fedberry::apps

#endif  // FEDBERRY_APPS_SERVER_SERVER_FLAGS_SHARED_H_
