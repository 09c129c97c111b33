#include "apps/server/serving.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "apps/server/secagg_settings.h"
#include "apps/server/server_checks.h"
#include "apps/server/server_options.h"
#include "base/atomic_write.h"
#include "base/clock.h"
#include "base/log_text.h"
#include "base/status_macros.h"
#include "checkpoint/torch_archive.h"
#include "runtime/torchscript_model.h"
#include "runtime/trainer.h"
#include "runtime/training_plan.h"
#include "security/transport.h"
#include "server/federation_checkpoint.h"
#include "server/fleet/fleet_status.h"
#include "server/fleet_view.h"
#include "server/privacy/dp_options.h"
#include "server/privacy/local_privacy_budget.h"
#include "server/privacy/privacy_budget.h"
#include "server/round/cohort_selection.h"
#include "server/server_metrics.h"

namespace fedberry::apps {
namespace {

absl::Status SaveModel(const runtime::NamedTensors& model,
                       const std::string& path) {
  std::string bytes;
  try {
    torch::serialize::OutputArchive archive;
    for (const auto& t : model) archive.write(t.name, t.tensor);
    archive.save_to([&bytes](const void* data, size_t n) {
      bytes.append(static_cast<const char*>(data), n);
      return n;
    });
  } catch (const std::exception& e) {
    return absl::InternalError(
        absl::StrCat("cannot save the global model to ", path, ": ", e.what()));
  }
  return base::WriteFileAtomically(base::FileSystem::Default(), path, bytes);
}

// --weights: the named tensors of a global_model.pt into `model`. Every
// tensor of the model must be there with its shape. InvalidArgument (or
// NotFound) naming the file and the tensor.
absl::Status LoadWeights(const std::string& path, runtime::Model& model) {
  if (path.empty()) return absl::OkStatus();
  absl::StatusOr<std::string> bytes =
      base::FileSystem::Default().ReadFile(path);
  if (!bytes.ok()) {
    return absl::NotFoundError(
        absl::StrCat("--weights: ", bytes.status().message()));
  }
  runtime::NamedTensors weights = model.State();
  FEDBERRY_RETURN_IF_ERROR(checkpoint::ArchiveFromBytes(
      *bytes, path, [&](torch::serialize::InputArchive& archive) {
        for (auto& t : weights) {
          torch::Tensor read;
          archive.read(t.name, read);
          if (!read.sizes().equals(t.tensor.sizes())) {
            throw std::runtime_error(
                absl::StrCat("tensor ", t.name, " has another shape"));
          }
          t.tensor = read.to(t.tensor.dtype());
        }
      }));
  FEDBERRY_RETURN_IF_ERROR(model.LoadState(weights));
  spdlog::info("weights of {} tensors from {}", weights.size(), path);
  return absl::OkStatus();
}

// The federation state to continue from (`resume`), checked against the
// job's plan; nullopt for a new job.
absl::StatusOr<std::optional<server::FederationSnapshot>> ResumeFrom(
    checkpoint::CheckpointStore& store, const v1::TrainingPlan& plan) {
  auto loaded = store.LoadLatest();
  if (!loaded.ok()) {
    if (!absl::IsNotFound(loaded.status())) {  // not merely none yet
      spdlog::warn("starting a new job: {}", loaded.status().ToString());
    }
    return std::nullopt;
  }
  for (const auto& s : loaded->skipped) {
    spdlog::warn("skipped checkpoint: {}", std::string(s.message()));
  }
  auto decoded = server::DecodeFederationCheckpoint(*loaded);
  if (!decoded.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot resume: ", decoded.status().ToString()));
  }
  if (absl::Status same = server::CheckSamePlan(*decoded, plan); !same.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot resume: ", same.message()));
  }
  spdlog::info(
      "resuming the job from checkpoint {}: {} rounds done, next round {}, "
      "{} registered clients",
      loaded->name, decoded->snapshot.history.size(),
      decoded->snapshot.next_round, decoded->snapshot.clients.size());
  return std::move(decoded->snapshot);
}

// The server's evaluation on the plan's held-out data; empty without any.
server::Evaluator MakeEvaluator(server::JobPlan& job) {
  if (!job.eval) return nullptr;
  spdlog::info("evaluation set: {}", job.eval->Describe());
  return [model = std::shared_ptr<runtime::Model>(std::move(job.model)),
          eval = std::shared_ptr<runtime::Dataset>(std::move(job.eval)),
          objective = *job.objective](
             const runtime::NamedTensors& state,
             int64_t max_samples) -> absl::StatusOr<runtime::EvalResult> {
    if (absl::Status s = model->LoadState(state); !s.ok()) return s;
    return runtime::Evaluate(*model, *eval, objective, /*batch_size=*/100,
                             max_samples);
  };
}

// Saves each snapshot as the newest federation checkpoint; a failure is
// logged and the job goes on (a restart would redo the round).
server::SnapshotSink CheckpointSink(checkpoint::CheckpointStore* store,
                                    v1::TrainingPlan plan) {
  return [store,
          plan = std::move(plan)](const server::FederationSnapshot& snapshot) {
    auto files = server::EncodeFederationCheckpoint(snapshot, plan);
    auto saved = files.ok() ? store->Save(*files)
                            : absl::StatusOr<std::string>(files.status());
    if (saved.ok()) {
      spdlog::info("federation state after round {} saved as {}",
                   snapshot.next_round - 1, *saved);
    } else {
      spdlog::error("federation checkpoint after round {} failed: {}",
                    snapshot.next_round - 1, saved.status().ToString());
    }
  };
}

// Each round into the metrics files, the /metrics figures and the log.
server::ReportSink RoundSink(server::MetricsLog* log,
                             std::shared_ptr<server::ServerMetrics> figures,
                             int rounds) {
  return [log, rounds, figures](const server::RoundReport& r) {
    log->Write(r);
    figures->Record(r);
    if (r.round == 0) return;  // evaluate-only: the coordinator said it
    const std::string round = rounds > 0
                                  ? absl::StrCat(r.round, "/", rounds)
                                  : absl::StrCat(r.round, " (the parent's)");
    if (!r.refused_result.empty()) {
      spdlog::warn(
          "round {} done without a new model: {} of {} clients, its result "
          "was refused ({}); the global model stays as it was, {:.2f} s",
          round, r.participants, r.selected,
          base::Printable(r.refused_result, 300), r.round_seconds);
    } else if (r.eval && r.eval->regression) {
      spdlog::info(
          "round {} done: {} of {} clients, test RMSE {:.4f}, MAE {:.4f}, "
          "loss {:.4f}, {:.2f} s",
          round, r.participants, r.selected, r.eval->rmse, r.eval->mae,
          r.eval->mean_loss, r.round_seconds);
    } else if (r.eval) {
      spdlog::info(
          "round {} done: {} of {} clients, test accuracy {:.4f}, loss "
          "{:.4f}, {:.2f} s",
          round, r.participants, r.selected, r.eval->accuracy,
          r.eval->mean_loss, r.round_seconds);
    } else {
      spdlog::info("round {} done: {} of {} clients, {:.2f} s", round,
                   r.participants, r.selected, r.round_seconds);
    }
    if (r.privacy) {
      spdlog::info(
          "round {} privacy: epsilon {:.4g} at delta {:g} spent over {} "
          "round(s); {:.0f}% of its updates clipped",
          round, r.privacy->epsilon, r.privacy->delta, r.privacy->steps,
          100 * r.privacy->clipped_fraction);
    }
    if (r.version) {
      spdlog::info(
          "version {} published: {} updates, staleness mean {:.2f}, max {}",
          r.round, r.version->updates, r.version->staleness_mean,
          r.version->staleness_max);
    }
  };
}

// What watches a serving server: descriptors, the revocation list, and
// the /metrics endpoint when `transport.metrics_listen` names one, within
// its connection caps.
absl::Status StartWatches(Serving& serving,
                          std::shared_ptr<server::ServerMetrics> figures,
                          const TransportConfig& transport,
                          const server::FleetJob& job) {
  // Each board holds a descriptor: say when they near the limit, since
  // gRPC then refuses connections without a word.
  serving.fd_watch = std::make_unique<runtime::FdUsageWatch>(
      runtime::FdLimitSystem::Real(),
      [](const std::string& what) { spdlog::error("{}", what); });
  serving.fd_sampler = std::make_unique<runtime::PeriodicSampler>(
      absl::Seconds(1), [w = serving.fd_watch.get()] { w->Check(); });
  // A revoked board is refused from its next call on, without a restart.
  if (security::RevocationList* revoked = serving.revoked.get()) {
    serving.revocation_watch = std::make_unique<runtime::PeriodicSampler>(
        absl::Seconds(2), [revoked] { revoked->Refresh(); });
  }
  const std::string& metrics_listen = transport.metrics_listen;
  if (metrics_listen.empty()) return absl::OkStatus();
  server::HttpLimits limits;
  limits.max_connections = transport.metrics_max_connections;
  limits.max_connections_per_ip = transport.metrics_max_connections_per_ip;
  if (limits.max_connections < 1 || limits.max_connections_per_ip < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--metrics_max_connections (", limits.max_connections,
                     ") and --metrics_max_connections_per_ip (",
                     limits.max_connections_per_ip, ") must be at least 1"));
  }
  server::FederationServer* federation = serving.server.get();
  const auto fleet = [federation, figures, job] {
    return server::FleetOf(federation->coordinator(), *figures, job,
                           Clock::Real().Now());
  };
  auto metrics_http = server::MetricsHttpServer::Start(
      metrics_listen,
      {[federation] { return federation->Status(); },
       [figures](const server::JobStatus& s) { return figures->Render(s); },
       [fleet] { return server::FleetPage(fleet()); },
       [fleet] { return server::FleetJson(fleet()); }},
      limits);
  if (!metrics_http.ok()) {
    return absl::UnavailableError(std::string(metrics_http.status().message()));
  }
  serving.metrics_http = *std::move(metrics_http);
  spdlog::info(
      "fleet page on http://{0}/ (data: /api/fleet.json), metrics on "
      "/metrics, health on /healthz",
      serving.metrics_http->address());
  return absl::OkStatus();
}

// The job's plan into the server's settings: model, parameter count,
// encodings; and a gateway's upstream sink.
void ApplyPlan(server::JobPlan& job, server::UpstreamSink upstream_sink,
               server::ServerOptions& options) {
  server::CoordinatorOptions& c = options.coordinator;
  // Evaluation on the boards is the job's: every board holds out the same
  // share, chosen with the job's seed.
  if (c.board_eval.holdout_fraction > 0) {
    job.plan.set_eval_holdout_fraction(c.board_eval.holdout_fraction);
    job.plan.set_eval_holdout_seed(c.seed);
    job.plan.set_personalize_steps(
        static_cast<uint32_t>(c.board_eval.personalize_steps));
  }
  c.board_eval.regression = job.plan.task() == "regression";
  c.board_eval.own_loss = job.plan.loss() == "model";
  c.upstream = static_cast<bool>(upstream_sink);
  c.upstream_sink = std::move(upstream_sink);
  c.train.set_model(job.plan.model_name());
  // Model::State lists parameters first: the server optimizers step those.
  c.strategy.parameter_count = static_cast<int>(job.model->Parameters().size());
  c.update_encoding = job.plan.update_encoding();
  c.topk_fraction = job.plan.topk_fraction();
  c.model_encoding = job.plan.model_encoding();
  c.trainable_tensors.assign(job.plan.trainable_tensors().begin(),
                             job.plan.trainable_tensors().end());
  options.plan = {job.plan, job.model_file};
}

// Differential privacy when the flags ask for it: Poisson cohorts and the
// privacy budget in the coordinator's options.
absl::Status ApplyPrivacy(const ServerConfig& config,
                          const runtime::NamedTensors& model,
                          server::CoordinatorOptions& c) {
  const server::DpOptions dp = DpOptionsOf(config);
  if (!dp.enabled()) return absl::OkStatus();
  FEDBERRY_RETURN_IF_ERROR(server::CheckDpOptions(dp, c.strategy.name, model,
                                                  c.strategy.parameter_count));
  FEDBERRY_RETURN_IF_ERROR(CheckDpCombination(config));
  std::shared_ptr<server::RoundBudget> budget =
      dp.local ? std::shared_ptr<server::RoundBudget>(
                     std::make_shared<server::LocalPrivacyBudget>(dp))
               : std::make_shared<server::PrivacyBudget>(dp);
  if (const std::string why = budget->EndsBefore(); !why.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the privacy budget allows no round: ", why));
  }
  c.selection =
      std::make_shared<const server::PoissonCohorts>(dp.sampling_rate);
  c.budget = std::move(budget);
  spdlog::info(
      "{}differential privacy: {} {:g}, noise multiplier {:g}, sampling "
      "rate {:g}, delta {:g}{}",
      dp.local ? "local " : "",
      dp.adaptive_clip ? absl::StrCat("adaptive clip towards quantile ",
                                      dp.target_quantile, " from")
                       : std::string("clip"),
      dp.clip, dp.noise_multiplier, dp.sampling_rate, dp.delta,
      dp.target_epsilon > 0
          ? absl::StrCat(", target epsilon ", dp.target_epsilon)
          : "");
  return absl::OkStatus();
}

// The job's plan, the checked command line, the asynchronous rounds and
// differential privacy into `options`.
absl::Status ApplySettings(server::JobPlan& job, const ServerConfig& config,
                           server::UpstreamSink upstream_sink,
                           server::ServerOptions& options) {
  ApplyPlan(job, std::move(upstream_sink), options);
  FEDBERRY_RETURN_IF_ERROR(CheckServerOptions(config));
  FEDBERRY_RETURN_IF_ERROR(ApplyMode(config, options.coordinator));
  FEDBERRY_RETURN_IF_ERROR(ApplySecAgg(config, options.coordinator));
  FEDBERRY_RETURN_IF_ERROR(
      ApplyPrivacy(config, job.model->State(), options.coordinator));
  if (options.coordinator.planning.data_moves) {
    spdlog::warn(
        "data moves are on: training samples of clients that allow it may "
        "move between them through this server (trusted clusters only)");
  }
  return absl::OkStatus();
}

// Each board holds one descriptor: as many as the system lets this server.
void RaiseDescriptorLimit() {
  if (auto raised = runtime::RaiseFdLimit(); raised.ok()) {
    spdlog::info("{}; each board holds one descriptor", raised->Describe());
  } else {
    spdlog::warn("{}", std::string(raised.status().message()));
  }
}

}  // namespace

int ExitCodeOf(const absl::Status& s) {
  return absl::IsUnavailable(s) || absl::IsAlreadyExists(s) ? 3 : 2;
}

// Resumes from the checkpoints, checks the settings, wires the
// coordinator's options, sinks and transport, and starts serving.
absl::StatusOr<std::unique_ptr<Serving>> StartServing(
    server::JobPlan job, const ServerConfig& config,
    server::ServerOptions options, server::UpstreamSink upstream_sink,
    std::string script_source) {
  auto serving = std::make_unique<Serving>();
  const bool upstream = static_cast<bool>(upstream_sink);
  FEDBERRY_RETURN_IF_ERROR(
      ApplySettings(job, config, std::move(upstream_sink), options));
  checkpoint::StoreOptions store_options;
  store_options.keep = config.output.checkpoint_keep;
  serving->store = std::make_unique<checkpoint::CheckpointStore>(
      config.output.dir + "/checkpoints", base::FileSystem::Default(),
      store_options);
  serving->plan = job.plan;
  serving->script_source = std::move(script_source);
  // An evaluate-only job continues no training job and leaves no
  // checkpoint one would continue.
  const bool evaluate_only = options.coordinator.evaluate_only;
  if (config.output.resume && !evaluate_only) {
    FEDBERRY_ASSIGN_OR_RETURN(options.restore,
                              ResumeFrom(*serving->store, job.plan));
  }
  FEDBERRY_RETURN_IF_ERROR(LoadWeights(config.plan.weights, *job.model));
  FEDBERRY_ASSIGN_OR_RETURN(
      serving->metrics,
      server::MetricsLog::Open(config.output.dir,
                               options.restore
                                   ? options.restore->history
                                   : std::vector<server::RoundReport>{}));
  const runtime::NamedTensors initial = job.model->State();
  server::Evaluator evaluator = MakeEvaluator(job);
  FEDBERRY_ASSIGN_OR_RETURN(
      security::ServerTransport transport,
      security::MakeServerTransport(config.transport.transport,
                                    Clock::Real().Now()));
  serving->revoked = std::move(transport.revoked);
  options.credentials = transport.credentials;
  options.access = transport.access;
  if (!evaluate_only) {
    options.snapshot_sink = CheckpointSink(serving->store.get(), job.plan);
  }
  server::MetricsLog* log = serving->metrics.get();
  options.coordinator.refused_board_sink = [log](const std::string& name,
                                                 const std::string& reason) {
    log->WriteRefusedBoard(name, reason);
  };
  serving->rounds = upstream ? 0 : options.coordinator.rounds;
  auto figures = std::make_shared<server::ServerMetrics>();
  RaiseDescriptorLimit();
  auto started = server::FederationServer::Start(
      options, initial, evaluator, RoundSink(log, figures, serving->rounds));
  if (!started.ok()) {
    return absl::UnavailableError(std::string(started.status().message()));
  }
  serving->server = *std::move(started);
  // Scripts wait for this file to find the port: whole or absent.
  FEDBERRY_RETURN_IF_ERROR(base::WriteFileAtomically(
      base::FileSystem::Default(), config.output.dir + "/server.addr",
      absl::StrCat(serving->server->address(), "\n")));
  spdlog::info(
      "fedberry-server listening on {}, {} ({}, output {})",
      serving->server->address(), transport.description,
      upstream ? absl::StrCat("a site gateway of ", config.gateway.link.server,
                              ", ", job.plan.model_name())
               : absl::StrCat(options.coordinator.rounds, " rounds of ",
                              options.coordinator.train.model()),
      config.output.dir);
  FEDBERRY_RETURN_IF_ERROR(
      StartWatches(*serving, figures, config.transport,
                   {options.coordinator.job_id, job.plan.model_name(),
                    options.coordinator.strategy.name}));
  return serving;
}

// SIGHUP re-reads the revocation list.
void ReloadRevoked(security::RevocationList* revoked) {
  if (revoked == nullptr) {
    spdlog::info("SIGHUP: no --revoked file to re-read");
    return;
  }
  spdlog::info("SIGHUP: re-reading {}", revoked->path());
  (void)revoked->Reload();
}

// Stops serving and writes the final model (and the trained TorchScript
// module). Returns the exit code.
int Finish(Serving& serving, const ServerConfig& config, bool signalled) {
  serving.server->Stop();
  const std::string& output = config.output.dir;
  server::RoundCoordinator& coordinator = serving.server->coordinator();
  const auto history = coordinator.history();
  if (absl::Status s =
          SaveModel(*coordinator.global_model(), output + "/global_model.pt");
      !s.ok()) {
    spdlog::error("{}", std::string(s.message()));
    return 1;
  }
  if (config.board_eval.evaluate_only) {
    spdlog::info(
        "evaluate-only job ended; the boards' figures are in "
        "{}/rounds.jsonl and clients.jsonl",
        output);
    return signalled ? 130 : 0;
  }
  spdlog::info("job ended after {} rounds{}; {} model in {}/global_model.pt",
               history.size(),
               serving.rounds > 0 ? absl::StrCat(" of ", serving.rounds) : "",
               serving.rounds > 0 ? "global" : "this gateway's last", output);
  if (serving.plan.model_format() == runtime::kTorchScriptFormat) {
    // The user's module with the trained weights: torch.jit.load() in Python.
    const std::string script = output + "/global_model.script.pt";
    if (absl::Status s = runtime::SaveTorchScriptWithState(
            serving.script_source, *coordinator.global_model(), script);
        s.ok()) {
      spdlog::info("the trained TorchScript module is in {}", script);
    } else {
      spdlog::error("{}", std::string(s.message()));
    }
  }
  return signalled ? 130 : 0;
}

}  // namespace fedberry::apps
