#include "server/round/board_messages.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/log_text.h"
#include "server/fleet/board_state.h"
#include "server/input_checks.h"

namespace fedberry::server {

ClientRecord RecordOfJoin(const v1::JoinRequest& request, absl::Time now) {
  ClientRecord record;
  record.name = request.client_name();
  record.num_samples = request.num_samples();
  record.device = request.device();
  record.joined = now;
  record.last_seen = now;
  record.allow_data_moves = request.allow_data_moves();
  record.sample_bytes = request.sample_bytes();
  record.boards = request.boards();
  record.client_version = base::Printable(request.client_version(), 64);
  return record;
}

std::string JoinedLine(const ClientRecord& record, const std::string& id) {
  return absl::StrCat("client '", record.name, "' joined as ", id, " (",
                      record.num_samples, " samples, ", record.device.cores(),
                      " cores, ", base::Printable(record.device.architecture()),
                      record.allow_data_moves ? ", allows data moves" : "",
                      record.boards > 0 ? absl::StrCat(", a gateway for ",
                                                       record.boards, " boards")
                                        : "",
                      ")");
}

void NoteHeartbeat(ClientRecord& record, const v1::HeartbeatRequest& request,
                   uint64_t round) {
  // A released board is paused too: it is away, and comes back.
  const auto paused = [](v1::HeartbeatRequest::State s) {
    return s == v1::HeartbeatRequest::PAUSED ||
           s == v1::HeartbeatRequest::RELEASED;
  };
  const v1::HeartbeatRequest::State was = record.state;
  record.state = request.state();
  record.steps_planned = request.steps_planned();
  record.steps_done = std::min(request.steps_done(), request.steps_planned());
  if (record.state == v1::HeartbeatRequest::RELEASED &&
      was != v1::HeartbeatRequest::RELEASED) {
    spdlog::warn(
        "round {}: client {} released its memory under lasting pressure "
        "(checkpointed; it rejoins and resumes when its supervisor restarts "
        "it)",
        round, record.name);
  } else if (paused(record.state) != paused(was)) {
    spdlog::info("round {}: client {} {}", round, record.name,
                 paused(record.state)
                     ? "paused its training under memory pressure"
                     : "resumed its training");
  }
}

bool NoteCondition(ClientRecord& record, const v1::BoardCondition& untrusted) {
  v1::BoardCondition condition = SanitizeCondition(untrusted);
  const bool was = !record.condition.declined().empty();
  const bool declines = !condition.declined().empty();
  record.condition = std::move(condition);
  if (declines != was) {
    spdlog::info("client {} {}{}", record.name,
                 declines ? "declines rounds: " : "takes rounds again",
                 record.condition.declined());
  }
  return declines;
}

BoardRow RowOf(const ClientRecord& record, const BoardPart& part,
               bool heard_recently, bool evaluating) {
  BoardFacts facts;
  facts.heard_recently = heard_recently;
  facts.training = part.training;
  facts.update_refused = part.update_refused;
  facts.evaluating = evaluating;
  facts.declining = !record.condition.declined().empty();
  facts.heartbeat = record.state;
  BoardRow row;
  row.name = record.name;
  row.state = StateOf(facts);
  row.last_seen = record.last_seen;
  row.round = part.round.value_or(record.last_round);
  if (facts.training) {
    row.steps_done = record.steps_done;
    row.steps_planned = record.steps_planned;
  }
  row.client_version = record.client_version;
  row.architecture = record.device.architecture();
  row.boards = record.boards;
  row.condition = record.condition;
  row.last_refusal = record.last_refusal;
  return row;
}

}  // namespace fedberry::server
