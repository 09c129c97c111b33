// fedberry-server's two programs: a job's own rounds, and a site gateway
// (tiers) that runs its parent's rounds with its own boards. The
// composition of the server library with the gateway (tiers/) and the
// device agent (client/) is here, not in server/.
// Thread-safety: call once, from main's thread, with shutdown signals
// blocked (BlockShutdownSignals).
#ifndef FEDBERRY_APPS_SERVER_RUN_SERVER_H_
#define FEDBERRY_APPS_SERVER_RUN_SERVER_H_

#include "apps/server/server_config.h"

namespace fedberry::apps {

// Builds the job's plan from `config` and serves it until its rounds end
// or a signal stops it. Returns the exit code: 0, 130 when signalled, 2
// for what the command line or the files get wrong, 3 when the server
// cannot start, 1 when the final model cannot be written.
int RunJob(const ServerConfig& config);

// Joins the parent at config.gateway as one board and serves each of its
// tasks on the parent's plan. Exit codes as RunJob's; 1 also when the
// link to the parent ends before the job does.
int RunGateway(const ServerConfig& config);

}  // namespace fedberry::apps

#endif  // FEDBERRY_APPS_SERVER_RUN_SERVER_H_
