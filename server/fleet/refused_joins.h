// Boards refused at the door (an old client release, data that does not
// fit the plan): they never register, yet an operator must see them and
// why. Keeps the latest refusal of each name, at most `capacity` names
// (the oldest refusal goes first), and forgets a name once it joins.
// Thread-safety: thread-safe.
#ifndef FEDBERRY_SERVER_FLEET_REFUSED_JOINS_H_
#define FEDBERRY_SERVER_FLEET_REFUSED_JOINS_H_

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/fleet/fleet_status.h"

namespace fedberry::server {

class RefusedJoins {
 public:
  explicit RefusedJoins(size_t capacity) : capacity_(capacity) {}

  // What is kept of a refused board's reason (bytes of valid UTF-8).
  static constexpr size_t kKeptReasonBytes = 256;

  // `name`, `reason` and `client_version` as the board sent them: each is
  // cut to valid UTF-8 of kShownNameBytes, kKeptReasonBytes and
  // kShownVersionBytes before it is kept (and escaped where shown).
  void Refused(const std::string& name, const std::string& reason,
               const std::string& client_version, absl::Time when);
  void Joined(const std::string& name);
  // A row per refused board, state kRefused, by name.
  std::vector<BoardRow> Rows() const;

 private:
  const size_t capacity_;
  mutable absl::Mutex mu_;
  std::map<std::string, BoardRow> rows_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_FLEET_REFUSED_JOINS_H_
