#include "client/agent_join.h"

#include <spdlog/spdlog.h>

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/log_text.h"
#include "base/status_macros.h"
#include "base/version.h"
#include "client/model_file_cache.h"
#include "proto/wire.h"
#include "runtime/training_plan.h"

namespace fedberry::client {

absl::Status AgentJoin::PreparePlan() {
  v1::GetPlanRequest request;
  request.set_client_name(calls_.name);
  v1::GetPlanResponse response;
  grpc::ClientContext context;
  wire::SetDeadline(context, calls_.rpc_timeout);
  calls_.track(&context);
  absl::Status s =
      wire::FromGrpcStatus(calls_.stub->GetPlan(&context, request, &response));
  calls_.track(nullptr);
  FEDBERRY_RETURN_IF_ERROR(s);
  const v1::TrainingPlan& plan = response.plan();
  if (absl::Status valid = runtime::ValidatePlan(plan); !valid.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the server sent a plan this board cannot use: ", valid.message()));
  }
  std::optional<runtime::VerifiedModelFile> model_file;
  if (plan.model_format() != runtime::kBuiltinFormat) {
    if (!calls_.required_model_sha256.empty() &&
        plan.model_sha256() != calls_.required_model_sha256) {
      // The board's own refusal, not the server's: not an identity matter.
      return absl::FailedPreconditionError(absl::StrCat(
          "job '", base::Printable(response.job_id()), "' trains model ",
          base::Printable(plan.model_name()), " with SHA-256 ",
          plan.model_sha256(), "; this board accepts only ",
          calls_.required_model_sha256, " (--model_sha256)"));
    }
    ModelFileCache cache(calls_.model_cache_dir);
    model_file = cache.Find(plan.model_sha256());
    if (model_file) {
      spdlog::info("model file {} is cached", model_file->path());
    } else {
      FEDBERRY_ASSIGN_OR_RETURN(model_file, FetchModelFile(plan));
    }
  } else if (!calls_.required_model_sha256.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job '", base::Printable(response.job_id()), "' trains built-in model ",
        base::Printable(plan.model_name()),
        "; this board accepts only the model file with SHA-256 ",
        calls_.required_model_sha256, " (--model_sha256)"));
  }
  absl::Status bound =
      calls_.trainer->UsePlan(plan, model_file ? &*model_file : nullptr);
  if (!bound.ok()) {
    plan_error_ = std::string(bound.message());
    spdlog::error("this board cannot take part in job '{}': {}",
                  base::Printable(response.job_id()), plan_error_);
    return absl::OkStatus();
  }
  plan_error_.clear();
  spdlog::info("job '{}' plan: {}", base::Printable(response.job_id()),
               runtime::DescribePlan(plan));
  if (calls_.allow_data_moves && calls_.trainer->sample_bytes() == 0) {
    spdlog::warn(
        "--allow_data_moves: this board's data source cannot lend samples "
        "(only idx data can); it joins without data moves");
  }
  return absl::OkStatus();
}

absl::StatusOr<runtime::VerifiedModelFile> AgentJoin::FetchModelFile(
    const v1::TrainingPlan& plan) {
  ModelFileCache cache(calls_.model_cache_dir);
  FEDBERRY_RETURN_IF_ERROR(
      cache.Begin(plan.model_sha256(), plan.model_bytes()));
  v1::PullModelFileRequest request;
  request.set_model_sha256(plan.model_sha256());
  grpc::ClientContext context;
  wire::SetDeadline(context, calls_.rpc_timeout);
  calls_.track(&context);
  auto reader = calls_.stub->PullModelFile(&context, request);
  v1::ModelFileChunk chunk;
  absl::Status appended = absl::OkStatus();
  while (appended.ok() && reader->Read(&chunk)) {
    if (chunk.total_bytes() != plan.model_bytes()) {
      appended = absl::DataLossError(
          absl::StrCat("model file piece says ", chunk.total_bytes(),
                       " bytes in all; the plan says ", plan.model_bytes()));
    } else {
      appended = cache.Append(chunk.offset(), chunk.data());
    }
  }
  if (!appended.ok()) context.TryCancel();
  absl::Status s = wire::FromGrpcStatus(reader->Finish());
  calls_.track(nullptr);
  if (!appended.ok()) return appended;
  FEDBERRY_RETURN_IF_ERROR(s);
  FEDBERRY_ASSIGN_OR_RETURN(runtime::VerifiedModelFile stored, cache.Commit());
  spdlog::info("fetched model file {} ({} bytes, SHA-256 verified)",
               stored.path(), plan.model_bytes());
  return stored;
}

absl::Status AgentJoin::Join() {
  v1::JoinRequest request;
  request.set_client_name(calls_.name);
  *request.mutable_device() = calls_.device;
  const uint64_t samples = calls_.trainer->num_samples();
  const uint32_t boards = calls_.trainer->boards();
  request.set_num_samples(samples);
  request.set_boards(boards);
  request.set_allow_data_moves(calls_.allow_data_moves &&
                               calls_.trainer->sample_bytes() > 0);
  request.set_sample_bytes(calls_.trainer->sample_bytes());
  request.set_plan_error(plan_error_);
  request.set_client_version(std::string(FedberryVersion()));
  v1::JoinResponse response;
  grpc::ClientContext context;
  wire::SetDeadline(context, calls_.rpc_timeout);
  calls_.track(&context);
  absl::Status s =
      wire::FromGrpcStatus(calls_.stub->Join(&context, request, &response));
  calls_.track(nullptr);
  FEDBERRY_RETURN_IF_ERROR(s);
  client_id_ = response.client_id();
  declared_samples_ = samples;
  declared_boards_ = boards;
  spdlog::info("joined job '{}' as {} with {} samples{}", response.job_id(),
               client_id_, samples,
               boards > 0 ? absl::StrCat(" of ", boards, " boards") : "");
  return absl::OkStatus();
}

bool AgentJoin::DeclarationChanged() const {
  return calls_.trainer->num_samples() != declared_samples_ ||
         calls_.trainer->boards() != declared_boards_;
}

}  // namespace fedberry::client
