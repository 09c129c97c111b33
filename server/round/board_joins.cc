#include "server/round/board_joins.h"

#include <spdlog/spdlog.h>

#include "base/log_text.h"
#include "base/status_macros.h"
#include "server/round/board_messages.h"

namespace fedberry::server {

absl::StatusOr<std::string> BoardJoins::Add(const v1::JoinRequest& request,
                                            const std::string& caller) {
  JobState& job = parts_.job;
  if (absl::Status bounded = parts_.declared_bound.CheckJoin(
          request.num_samples(), request.boards());
      !bounded.ok()) {
    spdlog::warn("refused the join of '{}': {}",
                 base::Printable(request.client_name()),
                 std::string(bounded.message()));
    return bounded;
  }
  FEDBERRY_RETURN_IF_ERROR(job.clients().CheckRoom(request.client_name()));
  ClientRecord record = RecordOfJoin(request, parts_.job.clock().Now());
  record.caller = caller;
  const std::string id = job.clients().Add(record);
  RetireEarlierIds(request.client_name(), id);
  spdlog::info("{}", JoinedLine(record, id));
  job.WorkChanged();
  return id;
}

void BoardJoins::RetireEarlierIds(const std::string& name,
                                  const std::string& id) {
  JobState& job = parts_.job;
  for (const std::string& old : job.clients().IdsNamed(name)) {
    if (old == id) continue;
    const auto [selected, pushed] = parts_.kind.Rename(old, id);
    job.MoveUpload(old, id, /*keep=*/selected);
    spdlog::info("client '{}' joined again as {}; retiring its old id {}{}",
                 name, id, old,
                 pushed     ? " (its update of the open round stays counted)"
                 : selected ? " (it keeps its place in the open round)"
                            : "");
    parts_.closing.evaluation().Rename(old, id);
    job.clients().Remove(old);
    parts_.polls.Wake(old);  // its poll hears the id is gone
  }
}

}  // namespace fedberry::server
