// Asynchronous rounds' bookkeeping (--mode=async, FedBuff): which board
// trains on which version of the model, the versions still worth keeping,
// and the buffer of updates the next version is made of.
//
// Round r (version r, the job's r-th publication) opens on version r - 1.
// A board asks for work and, while fewer than max_concurrency boards
// train, is handed a task on the open round at once: it pulls that round's
// model and trains. Its push may come rounds later; its staleness is the
// rounds opened since, and beyond max_staleness the update is refused. The
// round closes (version r is published) once its buffer holds `buffer`
// updates; tasks not yet pushed carry over to the next round.
//
// Thread-compatible: the round coordinator's lock guards it.
#ifndef FEDBERRY_SERVER_ROUND_BUFFERED_VERSIONS_H_
#define FEDBERRY_SERVER_ROUND_BUFFERED_VERSIONS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/model.h"
#include "server/round/round_types.h"
#include "server/round/staleness.h"

namespace fedberry::server {

struct AsyncOptions {
  int buffer = 10;  // updates per version (--async_buffer, K)
  StalenessWeighting weighting = StalenessWeighting::kPolynomial;
  int max_staleness = 10;   // rounds an update may lag (--max_staleness)
  int max_concurrency = 0;  // boards training at once; 0: no bound
};

// InvalidArgument naming the flag that is out of range.
absl::Status CheckAsyncOptions(const AsyncOptions& options);

// A board's task: the round whose model it pulled.
struct AsyncTask {
  uint64_t round = 0;
  std::string task_id;
  // Its data order: a board that trains twice on one version does not
  // send the same update twice.
  uint64_t seed = 0;
  bool claimed = false;  // its update is being added to the buffer
};

class BufferedVersions {
 public:
  // `seed` names the tasks and draws their data orders.
  BufferedVersions(AsyncOptions options, uint64_t seed);

  const AsyncOptions& options() const { return options_; }

  // Round `round` opens on `global`. Models no task can still use (older
  // than max_staleness) are forgotten, and so are tasks on them: their
  // pushes are refused as stale. Updates a buffer carries into a new round
  // (a restarted site gateway's, whose parent handed down another model)
  // move with their base: `global` + (update - the old round's model).
  void Open(uint64_t round,
            std::shared_ptr<const runtime::NamedTensors> global);
  uint64_t open_round() const { return open_round_; }

  // `id`'s task; null when it has none.
  const AsyncTask* Find(const std::string& id) const;
  // A task on the open round for `id` when a training slot is free (it
  // replaces one the board gave up); null when max_concurrency boards
  // train.
  const AsyncTask* Assign(const std::string& id);
  // The model `task` pulled.
  std::shared_ptr<const runtime::NamedTensors> ModelOf(
      const AsyncTask& task) const;

  // FailedPrecondition when `id` holds no task of `round` (with reason
  // kReasonStaleUpdate when its task expired), InvalidArgument for another
  // task id.
  absl::Status Check(const std::string& id, uint64_t round,
                     const std::string& task_id) const;
  // The buffer holds (or is adding) the updates that close the round: a
  // push waits for the next one.
  bool Full() const;
  // Claims `id`'s update for the buffer and returns its staleness.
  // FailedPrecondition with reason kReasonStaleUpdate when it is staler
  // than max_staleness (its task is dropped); AlreadyExists while claimed.
  absl::StatusOr<int> Claim(const std::string& id);
  void Unclaim(const std::string& id);
  // The claimed update is in the buffer (as `added`: rebased and
  // weighted, kept for the checkpoint): its task is done.
  void Accept(const std::string& id, int staleness, runtime::NamedTensors added,
              uint64_t samples);
  // `id` gave its task up (refused, declined, silent, retired).
  void Drop(const std::string& id);
  // A board that joined again under a new id keeps its task.
  void Rename(const std::string& old_id, const std::string& id);

  // Boards training (tasks not yet pushed) and their ids.
  int training() const;
  std::vector<std::string> TrainingIds() const;
  int buffered() const { return static_cast<int>(buffer_.size()); }
  // The open round's buffer as it closes; starts the next one's.
  VersionFigures TakeFigures();

  // What the checkpoint keeps, and a restarted server's resumption of it,
  // before it opens its round again (open_round() is then the newest
  // round a kept model belongs to).
  AsyncState State() const;
  void Restore(AsyncState state);
  // The open round's updates so far, in the order added: a restored
  // round's sum adds them again.
  const std::vector<AsyncState::Buffered>& buffer() const { return buffer_; }

 private:
  absl::Status StaleStatus(uint64_t pulled) const;

  const AsyncOptions options_;
  uint64_t open_round_ = 0;
  // Models by the round that pulled them (round r: version r - 1).
  std::map<uint64_t, std::shared_ptr<const runtime::NamedTensors>> models_;
  std::map<std::string, AsyncTask> tasks_;  // by board id
  // Boards whose task Open expired, and the round it was on: their push is
  // refused as stale (bounded by the registry: one entry per board).
  std::map<std::string, uint64_t> expired_;
  std::vector<AsyncState::Buffered> buffer_;
  int claimed_ = 0;
  // In the checkpoint: a restarted server hands out the tasks (ids, data
  // orders) an uninterrupted one would have.
  std::mt19937_64 rng_;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_BUFFERED_VERSIONS_H_
