// A board's part in a securely aggregated round (the task carries a
// SecAggTask): instead of pushing its update, it sends the four stages of
// its SecAgg+ session through SecAggStep (secagg/board_session.h), asking
// for each stage's input as the gateway closes the stage before. Its
// update travels only as masked words (secagg/update_words.h).
//
// A board never sends two masked inputs of one session: its session's
// state is written to `state_dir` before the masked input leaves, and a
// board that finds it there (restored from a checkpoint, or by CRIU to an
// earlier point) refuses to mask again.
// Thread-safety: one call at a time; `stop` may be set from any thread.
#ifndef FEDBERRY_CLIENT_SECAGG_BOARD_H_
#define FEDBERRY_CLIENT_SECAGG_BOARD_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "base/file_system.h"
#include "client/local_trainer.h"
#include "fedberry/v1/federation.grpc.pb.h"
#include "runtime/model.h"
#include "secagg/session_messages.h"

namespace fedberry::client {

// Shown a session's name, this board's number and its plain words before
// they are masked: a test instrument that checks the gateway's unmasked sum
// (fedberry-emulated-client --secagg_words_dir); never set in
// fedberry-client.
using SecAggWordsHook =
    std::function<void(const std::string& session, uint32_t board,
                       const std::vector<uint32_t>& words)>;

// What the agent lends a session; all must outlive the call.
struct SecAggCalls {
  v1::Federation::StubInterface* stub = nullptr;
  absl::Duration rpc_timeout = absl::Seconds(60);
  Clock* clock = &Clock::Real();
  base::FileSystem* fs = nullptr;
  // Where sessions' states are kept (created when missing).
  std::string state_dir;
  // Binds a call's context to the agent so its Stop() cancels it.
  std::function<void(grpc::ClientContext*)> track;
  const std::atomic<bool>* stop = nullptr;
  // Called with the round and stage (1..4) before each stage's message
  // leaves; may be empty.
  std::function<void(uint64_t round, int stage)> before_stage;
  // Under mutual TLS: the board's fleet key (--tls_key) signs its keys and
  // the fleet CA (--tls_ca) checks its neighbours' certificates; both
  // empty: keys go unsigned.
  std::string fleet_key_file;
  std::string fleet_ca_file;
  // Wraps the board's signer (a test: one that forges); may be empty.
  std::function<std::unique_ptr<secagg::KeySigner>(
      std::unique_ptr<secagg::KeySigner>)>
      wrap_signer;
  SecAggWordsHook on_words;  // may be empty
};

// Sends `outcome`'s model (trained from `global`) masked, through every
// stage of `task`'s session, as `client_id`; adds the bytes it sent to
// `bytes_sent`. OK once its unmask shares were taken. Aborted when the
// session went on without this board or was given up (the reason);
// FailedPrecondition when this board already masked an input of the
// session; InvalidArgument for a task the board cannot take part in (its
// settings, a model of another size); Cancelled after `stop`; the last
// call's failure.
absl::Status SendMaskedUpdate(const SecAggCalls& calls,
                              const std::string& client_id,
                              const v1::GetTaskResponse& task,
                              const runtime::NamedTensors& global,
                              const TrainOutcome& outcome,
                              uint64_t* bytes_sent);

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_SECAGG_BOARD_H_
