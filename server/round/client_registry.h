// The boards a server knows: the id each joined under, what it declared,
// when it was last heard from and what it last said it was doing. Ids are
// issued here. Owns no lock: the round coordinator guards it with its own.
// Thread-compatible.
#ifndef FEDBERRY_SERVER_ROUND_CLIENT_REGISTRY_H_
#define FEDBERRY_SERVER_ROUND_CLIENT_REGISTRY_H_

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fedberry/v1/federation.pb.h"

namespace fedberry::server {

struct ClientRecord {
  std::string name;
  uint64_t num_samples = 0;
  v1::DeviceInfo device;
  absl::Time joined;
  absl::Time last_seen;
  // Its last word about its task (a heartbeat, a pull of the task's model,
  // a push), which holds an asynchronous training slot; polls do not.
  absl::Time task_heard = absl::InfinitePast();
  // Who is behind it: its certificate's fingerprint under mutual TLS, else
  // its host; boards of one caller share its slots (TaskLeases).
  std::string caller;
  // It asked for a task since it joined: only such boards are selected
  // (a join alone proves nothing), and boards that never do are pruned.
  bool polled = false;
  bool told_done = false;
  // It asked for a task since this server started; false for a board
  // restored from the checkpoint until it asks again (the end of the job
  // does not wait for one that never comes back).
  bool heard = true;
  // What its last heartbeat of the open round said (PAUSED, RELEASED).
  v1::HeartbeatRequest::State state = v1::HeartbeatRequest::TRAINING;
  bool allow_data_moves = false;
  uint64_t sample_bytes = 0;
  uint32_t boards = 0;         // a gateway's boards; 0 for a board
  std::string client_version;  // as it said at join
  // What its last task poll said of its fitness; a declining board is
  // never selected (Available leaves it out).
  v1::BoardCondition condition;
  uint64_t steps_done = 0;  // its last heartbeat's progress
  uint64_t steps_planned = 0;
  uint64_t last_round = 0;   // the last round its update was accepted in
  std::string last_refusal;  // why its update was last refused

  // Whether it was seen (any message) within `window` before `now`: the
  // liveness test every part of the round core uses.
  bool SeenWithin(absl::Time now, absl::Duration window) const {
    return now - last_seen <= window;
  }
};

// A board as the federation checkpoint keeps it: its id and declarations.
struct RegisteredClient {
  std::string id;
  std::string name;
  uint64_t num_samples = 0;
  bool allow_data_moves = false;
  uint64_t sample_bytes = 0;
  uint32_t boards = 0;  // a site gateway: the boards it speaks for
  std::string client_version;
};

class ClientRegistry {
 public:
  using Clients = std::map<std::string, ClientRecord>;

  explicit ClientRegistry(int max_clients) : max_clients_(max_clients) {}

  // ResourceExhausted when max_clients are registered and none of them is
  // named `name` (a known board restarting is always let in).
  absl::Status CheckRoom(const std::string& name) const;

  // Registers `client` under a fresh id, which it returns: a sequence
  // number for people reading logs, and 128 random bits from the system's
  // CSPRNG, so no caller can act for a board whose id it did not receive
  // (and a server restarted without a checkpoint never hands out an id a
  // board still holds).
  std::string Add(ClientRecord client);
  // Registers `client` under the id it had before a restart.
  void Restore(const std::string& id, ClientRecord client);
  void Remove(const std::string& id);

  // The boards as the checkpoint keeps them.
  std::vector<RegisteredClient> Snapshot() const;
  // Replaces the registry with a checkpoint's boards, those `admit` takes
  // (e.g. not below --min_client_version); each has until liveness from
  // `now` to come back, and counts as having polled (it took part in the
  // job, and often resumes straight into the reopened round).
  void RestoreFrom(const std::vector<RegisteredClient>& boards, absl::Time now,
                   const std::function<bool(const RegisteredClient&)>& admit);

  // Null when `id` is not registered.
  ClientRecord* Find(const std::string& id);
  const ClientRecord* Find(const std::string& id) const;
  // The board registered as `id`; callers have checked it is.
  ClientRecord& At(const std::string& id) { return clients_.at(id); }
  const ClientRecord& At(const std::string& id) const {
    return clients_.at(id);
  }
  // The board registered as `id`; NotFound, telling the caller to join,
  // when none is.
  absl::StatusOr<ClientRecord*> Lookup(const std::string& id);
  absl::StatusOr<const ClientRecord*> Lookup(const std::string& id) const;
  // Its name; NotFound as Lookup.
  absl::StatusOr<std::string> NameOf(const std::string& id) const;
  // The ids registered under `name` (a board that joined again has two
  // until the older retires).
  std::vector<std::string> IdsNamed(const std::string& name) const;
  // The id of board `name` now, known as `id` before: `id` while it is
  // registered, else the id the board joined again under (the last of
  // IdsNamed), else `id`.
  std::string CurrentId(const std::string& id, const std::string& name) const;

  // Forgets boards that joined more than `liveness` before `now` and never
  // asked for a task, except those `keep` keeps; returns how many.
  int Prune(absl::Time now, absl::Duration liveness,
            const std::function<bool(const std::string&)>& keep);
  // Boards that asked for a task, were heard from within `liveness` and
  // do not decline rounds.
  std::vector<std::string> Available(absl::Time now,
                                     absl::Duration liveness) const;
  // The samples each registered client that has asked for a task declared
  // per board it speaks for (the fleet DeclaredSizeBound takes its median
  // of).
  std::vector<uint64_t> DeclaredPerBoard() const;
  // Boards heard from within `liveness` whose last poll declined.
  int Declining(absl::Time now, absl::Duration liveness) const;
  // Boards not yet told DONE that asked for a task since this server
  // started and were heard from since `since`.
  int AwaitingDone(absl::Time since) const;
  // Every board's heartbeat state back to TRAINING (a new task).
  void ResetStates();

  int size() const { return static_cast<int>(clients_.size()); }
  uint64_t samples() const;
  const Clients& all() const { return clients_; }

 private:
  const int max_clients_;
  uint64_t next_ = 1;
  Clients clients_;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_CLIENT_REGISTRY_H_
