// The device agent: joins the server, then loops pull task -> pull model ->
// train -> push update until the server says the job is done. Every RPC has a
// deadline. When the server is unreachable it retries with capped
// exponential backoff and jitter, logging each wait; when the server no
// longer knows it (a restarted server) it joins again. This file is the
// loop; its parts are the join (client/agent_join.h), what it reports
// (client/agent_reports.h: heartbeats, the update, evaluations) and its data
// moves (client/agent_data_moves.h).
// Thread-safety: Run() on one thread; Stop() from any thread.
#ifndef FEDBERRY_CLIENT_CLIENT_AGENT_H_
#define FEDBERRY_CLIENT_CLIENT_AGENT_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "client/agent_data_moves.h"
#include "client/agent_join.h"
#include "client/agent_reports.h"
#include "client/backoff.h"
#include "client/local_trainer.h"
#include "client/round_meter.h"
#include "client/secagg_board.h"
#include "fedberry/v1/federation.grpc.pb.h"
#include "secagg/session_messages.h"

namespace fedberry::client {

struct AgentOptions {
  std::string name;  // stable per board: a restart replaces it
  v1::DeviceInfo device;
  absl::Duration rpc_timeout = absl::Seconds(60);   // join, pull, push
  absl::Duration poll_timeout = absl::Seconds(15);  // GetTask long poll
  BackoffOptions backoff;
  uint64_t seed = 0;  // jitter seed
  // Give up after this long without reaching the server (0: never).
  absl::Duration give_up_after = absl::ZeroDuration();
  // Per-round /proc readings sent with each update (may be null: then only
  // RPC bytes and throughput are sent). Must outlive the agent.
  runtime::ResourceMonitor* monitor = nullptr;
  // The memory-pressure watchdog's totals (pauses, seconds paused), reported
  // per round (may be empty: those fields stay absent).
  std::function<std::pair<uint32_t, double>()> watchdog_totals;
  // Trusted clusters only: let the server move some of this board's
  // training samples to other boards, and train on theirs.
  bool allow_data_moves = false;
  // How long a receiver keeps asking for a move's samples through server
  // failures (a restarted server waits for the sender to send them again).
  absl::Duration data_move_wait = absl::Minutes(2);
  // Where plan model files are cached (client::ModelFileCache).
  std::string model_cache_dir;
  // Non-empty: refuse any plan whose model file has another SHA-256.
  std::string required_model_sha256;
  // How long a board whose data does not fit the job's plan waits before
  // asking for the plan again (a new job may fit).
  absl::Duration unfit_wait = absl::Minutes(1);
  // This board's condition, sent with every task poll (may be empty: none
  // sent). A non-empty `declined` asks the server to leave it out of rounds
  // for now (client/eligibility.h).
  std::function<v1::BoardCondition()> condition;
  // Paces the progress heartbeats, the waits between attempts and the
  // give-up and data-move deadlines; times data moves. Must outlive the
  // agent.
  Clock* clock = &Clock::Real();
  // Called when a call fails UNAVAILABLE: OK when the server would accept
  // this board's transport (the fault is the network's), PermissionDenied
  // saying why it refuses it (security::ProbeTransport). Empty: not asked.
  std::function<absl::Status()> probe_transport;
  // Where securely aggregated rounds' session states are kept, so a
  // restored board never masks twice (created when missing).
  std::string secagg_state_dir = "secagg";
  // Called before each stage's message leaves (1 advertise keys .. 4
  // unmask); a test instrument, empty in fedberry-client.
  std::function<void(uint64_t round, int stage)> secagg_before_stage;
  // Under mutual TLS, the board's fleet key and CA files (SecAggCalls).
  std::string secagg_key_file;
  std::string secagg_ca_file;
  // Wraps the board's key signer (a test instrument); may be empty.
  std::function<std::unique_ptr<secagg::KeySigner>(
      std::unique_ptr<secagg::KeySigner>)>
      secagg_wrap_signer;
  // Shown each session's plain words before masking (a test instrument);
  // may be empty.
  SecAggWordsHook secagg_on_words;
};

class ClientAgent {
 public:
  ClientAgent(AgentOptions options, LocalTrainer& trainer,
              std::unique_ptr<v1::Federation::StubInterface> stub);

  // Runs the job. OK when the server said DONE; Cancelled after Stop();
  // Unavailable when give_up_after passed without reaching the server, or
  // when TLS handshakes failed kHandshakeFailuresToStop times in a row;
  // PermissionDenied or Unauthenticated when the server refused this
  // board's identity (see IsIdentityRefusal).
  absl::Status Run();

  // Ends Run() soon: cancels the call in flight and stops training at the
  // next batch.
  void Stop();

  // Tells the server that training of the current task is paused, runs
  // again, or that this board released its memory (`state`). Callable from
  // any thread; does nothing outside a round. Best effort: a failure is
  // logged, never retried.
  void Heartbeat(v1::HeartbeatRequest::State state, absl::Duration paused_for);

  // The least time between two progress heartbeats of a training run.
  static constexpr absl::Duration kProgressEvery = AgentReports::kProgressEvery;

  int rounds_trained() const { return rounds_trained_.load(); }
  const std::string& client_id() const { return join_.client_id(); }

 private:
  absl::Status RunUntilDone();  // Run() without the refusal translation
  // A TRAIN task: the round, and what its failure means. OK: ask for the
  // next task; otherwise the status Run ends with.
  absl::Status TrainTask(const v1::GetTaskResponse& task);
  // After PreparePlan or Join failed with `joined`: waits as the failure
  // asks (unfit_wait for a plan the data does not fit or a client too old,
  // else backoff). OK: join again; otherwise the status Run ends with.
  absl::Status WaitToJoinAgain(const absl::Status& joined);
  absl::StatusOr<v1::GetTaskResponse> GetTask();
  // Logs when the board starts declining rounds, and when it stops.
  void NoteCondition(const v1::BoardCondition& condition);
  absl::Status DoRound(const v1::GetTaskResponse& task);
  // A securely aggregated round's update, masked (client/secagg_board.h):
  // OK also when the session went on without this board.
  absl::Status SendMasked(const v1::GetTaskResponse& task,
                          const runtime::NamedTensors& global,
                          const TrainOutcome& outcome);
  // An EVALUATE task: pull the model, evaluate it on the held-out samples
  // (or decline), report.
  absl::Status DoEvaluation(const v1::GetTaskResponse& task);
  absl::StatusOr<runtime::NamedTensors> PullModel(
      const v1::GetTaskResponse& task);
  // Sleeps up to `d` unless stopped. Returns false when stopped.
  bool Sleep(absl::Duration d);
  // Handles a transport failure: logs, backs off. Returns false to give up.
  bool BackOff(const absl::Status& status, const char* what);
  // Binds a context to this agent so Stop() can cancel it.
  void Track(grpc::ClientContext* context);

  AgentOptions options_;
  LocalTrainer& trainer_;
  std::unique_ptr<v1::Federation::StubInterface> stub_;
  Backoff backoff_;
  // Its parts, built from options_, trainer_ and stub_.
  AgentDataMoves moves_;
  AgentJoin join_;
  AgentReports reports_;
  std::string declined_;  // why the board sat rounds out at the last poll
  std::atomic<bool> stop_{false};
  std::atomic<int> rounds_trained_{0};
  absl::Time unreachable_since_ = absl::InfiniteFuture();
  // TLS handshakes refused in a row (BackOff stops at
  // kHandshakeFailuresToStop).
  int handshake_failures_ = 0;
  absl::Status refusal_;  // why, for Run() to return
  // The task of a round that failed for what it is (an update the server
  // refused, a model that does not load): not trained again, since the
  // same work would fail the same way; the board waits for the next round.
  std::string given_up_task_;
  RoundMeter meter_{options_.monitor};
  uint64_t task_sent_bytes_ = 0;  // of the last GetTask call
  uint64_t task_received_bytes_ = 0;
  absl::Mutex mu_;
  grpc::ClientContext* in_flight_ ABSL_GUARDED_BY(mu_) = nullptr;
};

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_CLIENT_AGENT_H_
