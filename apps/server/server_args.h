// fedberry-server's command line from a ServerConfig: the flags that
// ServerConfigFromFlags (server_flags.h) reads back into the same config,
// written from the server's flag table (server_flag_table.h).
// fedberry-sim builds the server's and the gateways' command lines with it.
// No flags are defined or read here, and no LibTorch is needed.
// Thread-safety: pure functions.
#ifndef FEDBERRY_APPS_SERVER_SERVER_ARGS_H_
#define FEDBERRY_APPS_SERVER_SERVER_ARGS_H_

#include <string>
#include <vector>

#include "apps/server/server_config.h"

namespace fedberry::apps {

// --listen's default.
inline constexpr char kDefaultServerListen[] = "0.0.0.0:50051";

// The config that fedberry-server's flags give when none is set: each
// field the table names at its flag's default (--eval_data: Fashion-MNIST's
// folder; --listen: kDefaultServerListen), the others a plain
// ServerConfig's.
ServerConfig ServerFlagDefaults();

// `--name=value` for each of the server's flags whose value in `config`,
// written as Abseil parses it (absl::UnparseFlag), is not the flag's
// default, so parsing the result gives `config` back. In the table's order
// (server_flags.inc), the order fedberry-sim has always given them.
// `--insecure` is read from transport.transport.insecure (the flag sets both it
// and gateway.link.insecure).
std::vector<std::string> ServerArgsFrom(const ServerConfig& config);

}  // namespace fedberry::apps

#endif  // FEDBERRY_APPS_SERVER_SERVER_ARGS_H_
