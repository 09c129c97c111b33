#include "server/round/secagg_rounds.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/sha256.h"
#include "secagg/parameters.h"
#include "secagg/random_source.h"
#include "secagg/wire_messages.h"

namespace fedberry::server {
namespace {

using secagg::Stage;

// K and t for a cohort of n: the flags', else the parameter chooser's, never
// above the n - 1 others a board has. A cohort too small for the chooser's
// failure targets gets the complete graph (SecAgg without the "+", every
// board each other's neighbour) and a threshold of half the neighbours plus
// one (each board can lose all but t of its neighbours), with a warning:
// the small fleets fedberry runs on would otherwise get no rounds at all.
std::pair<int, int> NeighboursAndThreshold(const SecAggOptions& options, int n,
                                           uint64_t round) {
  int k = options.neighbours;
  int t = options.threshold;
  if (k == 0 || t == 0) {
    secagg::ParameterOptions chooser;
    chooser.dropout_rate = options.dropout_rate;
    chooser.corrupt_rate = options.corrupt_rate;
    absl::StatusOr<secagg::SecAggParameters> chosen =
        secagg::ChooseParameters(n, chooser);
    if (chosen.ok()) {
      if (k == 0) k = chosen->neighbours;
      if (t == 0) t = chosen->threshold;
    } else {
      if (k == 0) k = n - 1;
      if (t == 0) t = std::min(k, n - 1) / 2 + 1;
      spdlog::warn(
          "round {}: {}; using every board as each other's neighbour with "
          "threshold {} (set --secagg_neighbours and --secagg_threshold to "
          "choose)",
          round, std::string(chosen.status().message()), std::min(t, k));
    }
  }
  k = std::min(k, n - 1);
  return std::make_pair(k, std::min(t, k));
}

absl::StatusOr<std::string> SessionName(uint64_t round) {
  uint8_t bytes[8];
  FEDBERRY_RETURN_IF_ERROR(secagg::OsRandom().Fill(absl::MakeSpan(bytes)));
  return absl::StrCat(
      "round-", round, "-",
      absl::BytesToHexString(absl::string_view(
          reinterpret_cast<const char*>(bytes), sizeof(bytes))));
}

}  // namespace

SecAggRounds::SecAggRounds(RoundContext context, SecAggOptions options,
                           std::unique_ptr<SyncRounds> plain)
    : ctx_(context),
      options_(options),
      plain_(std::move(plain)),
      // The handshake verified each certificate: no CA to check again.
      certified_("", context.job.clock()) {}

void SecAggRounds::Open(const Cohort& cohort, std::mt19937_64& rng,
                        int available, RoundAggregator& sum) {
  plain_->Open(cohort, rng, available, sum);
  session_.reset();
  words_.reset();
  certified_.Clear();
  board_of_.clear();
  keys_for_.clear();
  boxes_for_.clear();
  requests_for_.clear();
  finished_ = false;
  accepted_ = 0;
  refused_.clear();
  advertised_.clear();
  given_up_.clear();
  figures_ = SecAggFigures{};
  sum_ = &sum;
  base_ = ctx_.job.global();
  stage_began_ = opened_ = ctx_.job.clock().Now();
  absl::Status started = StartSession(cohort.members);
  started_ = started.ok();
  if (!started_) GiveUp(started);
}

absl::Status SecAggRounds::StartSession(
    const std::vector<std::string>& members) {
  const int n = static_cast<int>(members.size());
  figures_.started = n;
  if (n < 2) {
    return absl::FailedPreconditionError(absl::StrCat(
        "secure aggregation needs a cohort of at least 2 boards; this one "
        "has ",
        n));
  }
  const auto kt = NeighboursAndThreshold(options_, n, ctx_.job.round());
  // Under differential privacy (the budget shaped the round's bound into
  // its config) boards clip to that L2 bound, which bounds every value too,
  // and weigh 1; the noise goes on the unmasked sum (Finish).
  const double dp_clip = ctx_.job.train().dp_clip();
  const bool dp = dp_clip > 0;
  // A site gateway learns its root's DP from the task: boards that add
  // their own noise would have it clipped by the words' bound.
  if (ctx_.job.train().dp_local_noise_multiplier() > 0) {
    return absl::FailedPreconditionError(
        "secure aggregation does not combine with local DP (the root's "
        "--dp_local): each board's noise would be clipped by the session's "
        "value bound");
  }
  FEDBERRY_ASSIGN_OR_RETURN(
      secagg::UpdateWords words,
      secagg::UpdateWords::Create(*base_, dp ? dp_clip : options_.clip,
                                  options_.bits, static_cast<uint32_t>(n),
                                  /*count_clipped=*/dp));
  secagg::SessionConfig config;
  FEDBERRY_ASSIGN_OR_RETURN(config.session, SessionName(ctx_.job.round()));
  config.round = ctx_.job.round();
  config.cohort = n;
  config.neighbours = kt.first;
  config.threshold = kt.second;
  config.bits = options_.bits;
  config.vector_length = words.vector_length();
  FEDBERRY_RETURN_IF_ERROR(
      secagg::OsRandom().Fill(absl::MakeSpan(config.graph_seed)));
  FEDBERRY_ASSIGN_OR_RETURN(secagg::ServerSession session,
                            secagg::ServerSession::Create(config, Verifier()));
  weight_cap_ = 1;
  for (int i = 0; i < n; ++i) {
    board_of_[members[i]] = static_cast<uint32_t>(i);
    if (dp) continue;  // sample counts play no part
    if (const ClientRecord* c = ctx_.job.clients().Find(members[i])) {
      weight_cap_ = std::max(weight_cap_, c->num_samples);
    }
  }
  figures_.neighbours = kt.first;
  figures_.threshold = kt.second;
  words_.emplace(std::move(words));
  session_.emplace(std::move(session));
  spdlog::info(
      "round {}: secure aggregation (SecAgg+) over {} boards: {} neighbours "
      "each, threshold {}, {} words of {} bits{}",
      config.round, n, kt.first, kt.second, config.vector_length, config.bits,
      dp ? absl::StrCat("; each board clips to L2 norm ", dp_clip,
                        " and weighs 1; the DP noise goes on the sum once")
         : "");
  return absl::OkStatus();
}

std::optional<TrainTask> SecAggRounds::TaskFor(const std::string& id,
                                               const ClientRecord& client) {
  std::optional<TrainTask> task = plain_->TaskFor(id, client);
  auto board = board_of_.find(id);
  if (!task || !session_ || board == board_of_.end()) return std::nullopt;
  // Once its keys are in (or refused), or the key stage closed, a board has
  // no more to train for this round: a board that asks again (restarted,
  // or back after its session's end) waits for the next one.
  if (session_->stage() != secagg::Stage::kAdvertiseKeys ||
      advertised_.count(board->second) > 0 ||
      refused_.count(board->second) > 0) {
    return std::nullopt;
  }
  task->secagg = secagg::ToProto(secagg::BoardTaskSettings{
      session_->config(), board->second, words_->clip(), weight_cap_,
      words_->count_clipped()});
  return task;
}

absl::StatusOr<std::optional<int>> SecAggRounds::Claim(
    const std::string& id,
    const std::shared_ptr<const runtime::NamedTensors>& base) {
  return absl::FailedPreconditionError(absl::StrCat(
      "round ", ctx_.job.round(),
      " is securely aggregated (--secure_aggregation=secagg+): send the "
      "update masked through SecAggStep; the gateway takes no board's update "
      "in the clear"));
}

RoundKind::Renamed SecAggRounds::Rename(const std::string& id,
                                        const std::string& new_id) {
  auto board = board_of_.find(id);
  if (board != board_of_.end()) {
    const uint32_t number = board->second;
    board_of_.erase(board);
    board_of_[new_id] = number;
  }
  return plain_->Rename(id, new_id);
}

absl::StatusOr<v1::SecAggResponse> SecAggRounds::Step(
    const v1::SecAggRequest& request, const std::string& peer_certificate) {
  const std::string& id = request.client_id();
  FEDBERRY_RETURN_IF_ERROR(plain_->CheckTask(
      id, request.round(), request.task_id(), TaskUse::kFollow));
  v1::SecAggResponse response;
  if (!session_) {
    response.set_action(v1::SecAggResponse::ABANDONED);
    response.set_reason(given_up_);
    return response;
  }
  if (request.session() != session_->config().session) {
    return absl::FailedPreconditionError(absl::StrCat(
        "secure-aggregation session '", request.session().substr(0, 64),
        "' is not round ", ctx_.job.round(), "'s"));
  }
  auto board = board_of_.find(id);
  if (board == board_of_.end()) {
    return absl::PermissionDeniedError(
        absl::StrCat("this client is not in round ", ctx_.job.round(),
                     "'s secure-aggregation cohort"));
  }
  if (absl::StatusOr<ClientRecord*> c = ctx_.job.clients().Lookup(id); c.ok()) {
    (*c)->last_seen = ctx_.job.clock().Now();
  }
  if (request.message_case() == v1::SecAggRequest::kAwait) {
    return Await(board->second, request.await());
  }
  return Accept(board->second, request, peer_certificate);
}

absl::Status SecAggRounds::AcceptKeys(uint32_t board,
                                      const v1::SecAggKeys& keys,
                                      const std::string& peer_certificate) {
  FEDBERRY_ASSIGN_OR_RETURN(secagg::KeyAdvertisement ad,
                            secagg::FromProto(keys));
  if (ad.board != board) {
    return absl::PermissionDeniedError(absl::StrCat(
        "board ", board, " sent keys in the name of board ", ad.board));
  }
  if (options_.signed_keys) {
    if (peer_certificate.empty()) {
      return absl::PermissionDeniedError(absl::StrCat(
          "board ", board,
          " sent its keys without a client certificate; "
          "under mutual TLS each board signs them with its fleet key"));
    }
    FEDBERRY_RETURN_IF_ERROR(certified_.Record(board, peer_certificate));
  }
  return session_->AcceptAdvertisement(ad);
}

absl::StatusOr<v1::SecAggResponse> SecAggRounds::Accept(
    uint32_t board, const v1::SecAggRequest& request,
    const std::string& peer_certificate) {
  switch (request.message_case()) {
    case v1::SecAggRequest::kKeys:
      if (absl::Status s = AcceptKeys(board, request.keys(), peer_certificate);
          s.ok()) {
        advertised_.insert(board);
      } else {
        // Refused keys (a signature that does not verify): the board is
        // out, and the stage need not wait for it.
        if (absl::IsPermissionDenied(s)) refused_.insert(board);
        spdlog::warn("round {}: secure aggregation refused board {}'s keys: {}",
                     ctx_.job.round(), board, std::string(s.message()));
        Advance();
        return s;
      }
      break;
    case v1::SecAggRequest::kShareKeys: {
      secagg::ShareKeysMessage message{board, {}};
      for (const v1::SecAggShareBox& box : request.share_keys().boxes()) {
        FEDBERRY_ASSIGN_OR_RETURN(secagg::ShareCiphertext c,
                                  secagg::FromProto(box));
        message.boxes.push_back(std::move(c));
      }
      FEDBERRY_RETURN_IF_ERROR(session_->AcceptShareKeys(message));
      break;
    }
    case v1::SecAggRequest::kMasked: {
      const auto& words = request.masked().words();
      FEDBERRY_RETURN_IF_ERROR(session_->AcceptMaskedInput(
          secagg::MaskedInput{board, {words.begin(), words.end()}}));
      break;
    }
    case v1::SecAggRequest::kUnmask: {
      secagg::UnmaskResponse message{board, {}};
      for (const v1::SecAggShare& share : request.unmask().shares()) {
        FEDBERRY_ASSIGN_OR_RETURN(secagg::UnmaskShare s,
                                  secagg::FromProto(share));
        message.shares.push_back(std::move(s));
      }
      FEDBERRY_RETURN_IF_ERROR(session_->AcceptUnmask(message));
      break;
    }
    default:
      return absl::InvalidArgumentError(
          "a SecAggStep request carries one stage's message or `await`");
  }
  ++accepted_;
  Advance();
  v1::SecAggResponse response;
  response.set_action(v1::SecAggResponse::ACCEPTED);
  return response;
}

v1::SecAggResponse SecAggRounds::Await(uint32_t board, uint32_t stage) const {
  v1::SecAggResponse response;
  const int now = static_cast<int>(session_->stage());
  if (stage < 1 || stage > 3 || static_cast<int>(stage) > now) {
    // A stage not yet begun (or one that never comes: the caller's error
    // shows as a wait that ends with the round).
    response.set_action(v1::SecAggResponse::WAIT);
    response.set_retry_after_ms(200);
    return response;
  }
  auto left_out = [&] {
    response.set_action(v1::SecAggResponse::ABANDONED);
    response.set_reason(
        absl::StrCat("this board is out of the session: its message of stage '",
                     secagg::StageName(static_cast<Stage>(stage - 1)),
                     "' was not counted before the stage closed"));
    return response;
  };
  response.set_action(v1::SecAggResponse::PROCEED);
  if (stage == 1) {
    auto it = keys_for_.find(board);
    if (it == keys_for_.end()) return left_out();
    for (const auto& ad : it->second) {
      v1::SecAggKeys* keys = response.add_neighbour_keys();
      *keys = secagg::ToProto(ad);
      keys->set_certificate(certified_.CertificateOf(ad.board));
    }
  } else if (stage == 2) {
    auto it = boxes_for_.find(board);
    if (it == boxes_for_.end()) return left_out();
    for (const auto& box : it->second) {
      *response.add_inbound() = secagg::ToProto(box);
    }
  } else {
    auto it = requests_for_.find(board);
    if (it == requests_for_.end()) return left_out();
    for (uint32_t b : it->second.survivors) response.add_survivors(b);
    for (uint32_t b : it->second.dropped) response.add_dropped(b);
  }
  return response;
}

void SecAggRounds::Advance() {
  while (session_ && !finished_) {
    const Stage stage = session_->stage();
    const int s = static_cast<int>(stage);
    if (s >= secagg::kStageCount) return;
    const secagg::SessionCounts& counts = session_->counts();
    const int in = s == 0 ? counts.started : counts.survived[s - 1];
    const absl::Time now = ctx_.job.clock().Now();
    const absl::Duration deadline =
        s == 0 ? options_.keys_deadline : options_.stage_deadline;
    const int heard =
        accepted_ + (s == 0 ? static_cast<int>(refused_.size()) : 0);
    if (heard < in && now - stage_began_ < deadline) return;
    figures_.seconds_by_stage[s] = absl::ToDoubleSeconds(now - stage_began_);
    stage_began_ = now;
    spdlog::info(
        "round {}: secure aggregation's stage '{}' closed with {} of {} "
        "boards",
        ctx_.job.round(), secagg::StageName(stage), accepted_, in);
    accepted_ = 0;
    if (absl::Status closed = CloseStage(stage); !closed.ok()) {
      GiveUp(closed);
      return;
    }
    ctx_.job.WorkChanged();
    WakeCohort();
  }
}

void SecAggRounds::WakeCohort() {
  for (const auto& [id, board] : board_of_) ctx_.polls.Wake(WaitKey(id));
}

absl::Status SecAggRounds::CloseStage(Stage stage) {
  switch (stage) {
    case Stage::kAdvertiseKeys: {
      FEDBERRY_ASSIGN_OR_RETURN(keys_for_, session_->CloseAdvertiseKeys());
      return absl::OkStatus();
    }
    case Stage::kShareKeys: {
      FEDBERRY_ASSIGN_OR_RETURN(boxes_for_, session_->CloseShareKeys());
      return absl::OkStatus();
    }
    case Stage::kMaskedInput: {
      FEDBERRY_ASSIGN_OR_RETURN(requests_for_, session_->CloseMaskedInput());
      return absl::OkStatus();
    }
    default:
      return Finish();
  }
}

absl::Status SecAggRounds::Finish() {
  FEDBERRY_ASSIGN_OR_RETURN(secagg::AggregateResult result, session_->Finish());
  const auto counted = static_cast<uint32_t>(result.counted.size());
  double weight_sum = 0;
  if (words_->count_clipped()) {
    // Differential privacy: the unweighted sum of clipped updates goes to
    // the Gaussian sum as a forwarded sum would, and gets its noise there.
    FEDBERRY_ASSIGN_OR_RETURN(secagg::UnmaskedSum sum,
                              words_->DecodeSum(result.sum, counted, *base_));
    FEDBERRY_RETURN_IF_ERROR(
        sum_->AddSum(sum.total, static_cast<int>(counted), sum.clipped));
    weight_sum = sum.weight_sum;
    figures_.weight = counted;
  } else {
    FEDBERRY_ASSIGN_OR_RETURN(secagg::UnmaskedMean mean,
                              words_->Decode(result.sum, counted, *base_));
    figures_.weight = mean.weight_sum * static_cast<double>(weight_cap_);
    FEDBERRY_RETURN_IF_ERROR(sum_->Add(mean.model, figures_.weight));
    weight_sum = mean.weight_sum;
  }
  figures_.survived = static_cast<int>(counted);
  for (int s = 0; s < secagg::kStageCount; ++s) {
    figures_.dropped_by_stage[s] =
        static_cast<int>(result.counts.dropped[s].size());
    figures_.bytes_up_by_stage[s] = result.counts.bytes_up[s];
  }
  finished_ = true;
  // The sum's digest: what the gateway learned, checkable against the
  // boards' own words by a test, without the words themselves.
  spdlog::info(
      "round {}: secure aggregation unmasked the sum of {} of {} boards' "
      "updates (weights summing to {:.4f}; session {}, sum sha256 {})",
      ctx_.job.round(), figures_.survived, figures_.started, weight_sum,
      session_->config().session,
      runtime::Sha256Hex(secagg::WordBytes(result.sum)));
  return absl::OkStatus();
}

void SecAggRounds::GiveUp(const absl::Status& why) {
  given_up_ = absl::StrCat("secure aggregation gave up: ", why.message());
  if (session_) {
    const secagg::SessionCounts& counts = session_->counts();
    for (int s = 0; s < secagg::kStageCount; ++s) {
      figures_.dropped_by_stage[s] = static_cast<int>(counts.dropped[s].size());
      figures_.bytes_up_by_stage[s] = counts.bytes_up[s];
    }
  }
  session_.reset();
  spdlog::warn("round {}: {}", ctx_.job.round(), given_up_);
  ctx_.job.WorkChanged();
  WakeCohort();
}

bool SecAggRounds::Closes(CloseDecision& decision) {
  Advance();
  if (finished_) {
    decision.action = CloseAction::kClose;
    decision.complete = true;
    return true;
  }
  // A session that could not start would fail again at once: the round
  // waits for its key deadline before it starts over.
  if (!given_up_.empty() && !started_ &&
      ctx_.job.clock().Now() - opened_ < options_.keys_deadline) {
    return false;
  }
  if (!given_up_.empty()) {
    decision.action = CloseAction::kAbandon;
    decision.why = given_up_.c_str();
    return true;
  }
  return false;
}

void SecAggRounds::Close(RoundReport& report) {
  plain_->Close(report);  // no board pushed: it counts none
  report.participants = finished_ ? figures_.survived : 0;
  report.dropped = std::max(0, report.dropped - report.participants);
  report.secagg = figures_;
}

}  // namespace fedberry::server
