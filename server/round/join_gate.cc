#include "server/round/join_gate.h"

#include <spdlog/spdlog.h>

#include "absl/strings/str_cat.h"
#include "base/log_text.h"

namespace fedberry::server {

absl::Status JoinGate::Refusal(const v1::JoinRequest& request) const {
  const std::string name = base::Printable(request.client_name());
  if (!request.plan_error().empty()) {
    // The board bound its data to the plan and failed: it never trains in
    // this job, so it is not registered.
    const std::string reason = base::Printable(request.plan_error(), 1024);
    spdlog::warn("client '{}' cannot take part: {}", name, reason);
    if (refused_sink_) refused_sink_(name, reason);
    return absl::FailedPreconditionError(absl::StrCat(
        "not joined: this board's data does not fit the job's plan (", reason,
        ")"));
  }
  if (absl::Status gateway =
          gateways_.Admit(request.client_name(), request.boards());
      !gateway.ok()) {
    spdlog::warn("refused the join of '{}': {}", name,
                 std::string(gateway.message()));
    return gateway;
  }
  if (absl::Status old = versions_.Admit(request.client_version()); !old.ok()) {
    spdlog::warn("refused the join of '{}': {}", name,
                 std::string(old.message()));
    if (refused_sink_) refused_sink_(name, std::string(old.message()));
    return old;
  }
  if (budget_ != nullptr) {
    if (const std::string why = budget_->Refuses(request); !why.empty()) {
      spdlog::warn("refused the join of '{}': {}", name, why);
      return absl::FailedPreconditionError(absl::StrCat("not joined: ", why));
    }
  }
  return absl::OkStatus();
}

absl::Status JoinGate::Admit(const v1::JoinRequest& request) {
  absl::Status refusal = Refusal(request);
  if (refusal.ok()) {
    refused_.Joined(request.client_name());
  } else {
    refused_.Refused(request.client_name(), std::string(refusal.message()),
                     request.client_version(), clock_.Now());
  }
  return refusal;
}

}  // namespace fedberry::server
