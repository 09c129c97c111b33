// fedberry-server's command line from a ServerConfig: the flags that
// ServerConfigFromFlags (server_flags.h) reads back into the same config.
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

// The config that fedberry-server's flags give when none is set: a plain
// ServerConfig but for --eval_data (Fashion-MNIST's folder) and --listen.
ServerConfig ServerFlagDefaults();

// `--name=value` for each of the server's flags whose value in `config`
// differs from ServerFlagDefaults(), values written as Abseil parses them
// (absl::UnparseFlag), so parsing the result gives `config` back. The
// order is fixed: the flags fedberry-sim passes through come in the order
// it has always given them (the plan, strategy, rounds, async, encodings,
// evaluation on the boards, privacy, trainable, metrics_listen and its
// connection caps), then the rest. `--insecure` is read from transport.transport.insecure (the flag
// sets both it and gateway.link.insecure).
std::vector<std::string> ServerArgsFrom(const ServerConfig& config);

}  // namespace fedberry::apps

#endif  // FEDBERRY_APPS_SERVER_SERVER_ARGS_H_
