#include "client/secagg_board.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "base/atomic_write.h"
#include "base/status_macros.h"
#include "proto/wire.h"
#include "secagg/board_session.h"
#include "secagg/random_source.h"
#include "secagg/unsigned_keys.h"
#include "secagg/update_words.h"
#include "secagg/wire_messages.h"
#include "security/secagg_keys.h"

namespace fedberry::client {
namespace {

// The file a session's state is kept in: its name comes from the gateway,
// so only a plain one is taken.
absl::StatusOr<std::string> StatePath(const std::string& dir,
                                      const std::string& session) {
  const bool plain =
      !session.empty() && session.size() <= 128 &&
      std::all_of(session.begin(), session.end(), [](char c) {
        return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-';
      });
  if (!plain) {
    return absl::InvalidArgumentError(
        "the secure-aggregation session's name must be 1-128 letters, digits "
        "or '-'");
  }
  return absl::StrCat(dir, "/secagg-", session, ".state");
}

class Session {
 public:
  Session(const SecAggCalls& calls, const std::string& client_id,
          const v1::GetTaskResponse& task)
      : calls_(calls) {
    base_.set_client_id(client_id);
    base_.set_round(task.round());
    base_.set_task_id(task.task_id());
    base_.set_session(task.secagg().session());
  }

  // Sends `request`, the message of `stage` (1..4); OK once accepted (or
  // accepted before).
  absl::Status Send(int stage, v1::SecAggRequest request) {
    if (calls_.before_stage) calls_.before_stage(base_.round(), stage);
    FEDBERRY_ASSIGN_OR_RETURN(v1::SecAggResponse r, Call(std::move(request)));
    return r.action() == v1::SecAggResponse::ABANDONED
               ? absl::AbortedError(r.reason())
               : absl::OkStatus();
  }

  // What `stage` needs, once the gateway closed the stage before.
  absl::StatusOr<v1::SecAggResponse> Await(uint32_t stage) {
    v1::SecAggRequest request;
    request.set_await(stage);
    while (true) {
      FEDBERRY_ASSIGN_OR_RETURN(v1::SecAggResponse r, Call(request));
      if (r.action() == v1::SecAggResponse::PROCEED) return r;
      if (r.action() == v1::SecAggResponse::ABANDONED) {
        return absl::AbortedError(r.reason());
      }
      calls_.clock->SleepFor(absl::Milliseconds(
          std::clamp<uint32_t>(r.retry_after_ms(), 50, 2000)));
    }
  }

  uint64_t bytes_sent() const { return bytes_sent_; }

 private:
  absl::StatusOr<v1::SecAggResponse> Call(v1::SecAggRequest request) {
    request.MergeFrom(base_);
    if (calls_.stop != nullptr && calls_.stop->load()) {
      return absl::CancelledError("the client was stopped");
    }
    grpc::ClientContext context;
    wire::SetDeadline(context, calls_.rpc_timeout);
    if (calls_.track) calls_.track(&context);
    v1::SecAggResponse response;
    bytes_sent_ += request.ByteSizeLong();
    absl::Status s = wire::FromGrpcStatus(
        calls_.stub->SecAggStep(&context, request, &response));
    if (calls_.track) calls_.track(nullptr);
    // A retried message that arrived the first time.
    if (absl::IsAlreadyExists(s))
      response.set_action(v1::SecAggResponse::ACCEPTED);
    else
      FEDBERRY_RETURN_IF_ERROR(s);
    return response;
  }

  const SecAggCalls& calls_;
  v1::SecAggRequest base_;
  uint64_t bytes_sent_ = 0;
};

// The board's words: its change, clipped, weighed and quantised; under
// differential privacy (count_clipped) its trainer has clipped the change
// to the round's L2 bound already, and says whether that shortened it.
absl::StatusOr<std::vector<uint32_t>> Words(const secagg::BoardTaskSettings& s,
                                            const runtime::NamedTensors& global,
                                            const TrainOutcome& outcome) {
  if (outcome.num_samples == 0) {
    return absl::InvalidArgumentError("no samples to weigh the update by");
  }
  FEDBERRY_ASSIGN_OR_RETURN(
      secagg::UpdateWords words,
      secagg::UpdateWords::Create(global, s.clip, s.config.bits,
                                  static_cast<uint32_t>(s.config.cohort),
                                  s.count_clipped));
  if (words.vector_length() != s.config.vector_length) {
    return absl::InvalidArgumentError(absl::StrCat("the session masks ",
                                                   s.config.vector_length,
                                                   " words; this board's "
                                                   "model makes ",
                                                   words.vector_length()));
  }
  const double weight =
      static_cast<double>(std::min(outcome.num_samples, s.weight_cap)) /
      static_cast<double>(s.weight_cap);
  return words.Encode(outcome.model, global, weight,
                      outcome.metrics.update_clipped());
}

// The keys that sign this board's advertisement and check its neighbours':
// the fleet's under mutual TLS, else none.
struct BoardKeys {
  std::unique_ptr<secagg::KeySigner> signer;
  std::unique_ptr<security::CertificateKeyVerifier> certified;  // TLS only
  secagg::UnsignedKeys unsigned_keys;
  const secagg::KeyVerifier& verifier() const {
    if (certified) return *certified;
    return unsigned_keys;
  }
};

absl::StatusOr<std::unique_ptr<BoardKeys>> KeysOf(const SecAggCalls& calls) {
  auto keys = std::make_unique<BoardKeys>();
  if (calls.fleet_key_file.empty()) {
    keys->signer = std::make_unique<secagg::UnsignedKeys>();
  } else {
    FEDBERRY_ASSIGN_OR_RETURN(std::string key,
                              calls.fs->ReadFile(calls.fleet_key_file));
    FEDBERRY_ASSIGN_OR_RETURN(std::string ca,
                              calls.fs->ReadFile(calls.fleet_ca_file));
    keys->signer = std::make_unique<security::FleetKeySigner>(std::move(key));
    keys->certified = std::make_unique<security::CertificateKeyVerifier>(
        std::move(ca), *calls.clock);
  }
  if (calls.wrap_signer)
    keys->signer = calls.wrap_signer(std::move(keys->signer));
  return keys;
}

// The neighbours' keys the gateway relayed; under mutual TLS each one's
// certificate must be a fleet board's before its signature is checked.
absl::StatusOr<std::vector<secagg::KeyAdvertisement>> NeighbourKeys(
    const v1::SecAggResponse& r, security::CertificateKeyVerifier* certified) {
  std::vector<secagg::KeyAdvertisement> neighbours;
  for (const v1::SecAggKeys& k : r.neighbour_keys()) {
    FEDBERRY_ASSIGN_OR_RETURN(secagg::KeyAdvertisement n, secagg::FromProto(k));
    if (certified != nullptr) {
      if (absl::Status s = certified->Record(n.board, k.certificate());
          !s.ok()) {
        return absl::AbortedError(absl::StrCat(
            "the gateway relayed keys this board refuses: ", s.message()));
      }
    }
    neighbours.push_back(std::move(n));
  }
  return neighbours;
}

absl::Status RunStages(const SecAggCalls& calls, secagg::BoardSession& board,
                       security::CertificateKeyVerifier* certified,
                       const std::vector<uint32_t>& words,
                       const std::string& state_path, Session& session) {
  FEDBERRY_ASSIGN_OR_RETURN(secagg::KeyAdvertisement ad, board.AdvertiseKeys());
  v1::SecAggRequest keys;
  *keys.mutable_keys() = secagg::ToProto(ad);
  FEDBERRY_RETURN_IF_ERROR(session.Send(1, std::move(keys)));

  FEDBERRY_ASSIGN_OR_RETURN(v1::SecAggResponse r1, session.Await(1));
  FEDBERRY_ASSIGN_OR_RETURN(std::vector<secagg::KeyAdvertisement> neighbours,
                            NeighbourKeys(r1, certified));
  FEDBERRY_ASSIGN_OR_RETURN(secagg::ShareKeysMessage shares,
                            board.ShareKeys(neighbours));
  v1::SecAggRequest share_keys;
  for (const secagg::ShareCiphertext& box : shares.boxes) {
    *share_keys.mutable_share_keys()->add_boxes() = secagg::ToProto(box);
  }
  FEDBERRY_RETURN_IF_ERROR(session.Send(2, std::move(share_keys)));

  FEDBERRY_ASSIGN_OR_RETURN(v1::SecAggResponse r2, session.Await(2));
  std::vector<secagg::ShareCiphertext> inbound;
  for (const v1::SecAggShareBox& b : r2.inbound()) {
    FEDBERRY_ASSIGN_OR_RETURN(secagg::ShareCiphertext box,
                              secagg::FromProto(b));
    inbound.push_back(std::move(box));
  }
  FEDBERRY_ASSIGN_OR_RETURN(secagg::MaskedInput masked,
                            board.MaskInput(words, inbound));
  // Durable before it leaves: a restored board must know it masked.
  const std::vector<uint8_t> state = board.Serialize();
  FEDBERRY_RETURN_IF_ERROR(base::WriteFileAtomically(
      *calls.fs, state_path,
      absl::string_view(reinterpret_cast<const char*>(state.data()),
                        state.size()),
      base::ExactMode(0600)));
  v1::SecAggRequest input;
  input.mutable_masked()->mutable_words()->Assign(masked.masked.begin(),
                                                  masked.masked.end());
  FEDBERRY_RETURN_IF_ERROR(session.Send(3, std::move(input)));

  FEDBERRY_ASSIGN_OR_RETURN(v1::SecAggResponse r3, session.Await(3));
  secagg::UnmaskRequest request{{r3.survivors().begin(), r3.survivors().end()},
                                {r3.dropped().begin(), r3.dropped().end()}};
  FEDBERRY_ASSIGN_OR_RETURN(secagg::UnmaskResponse unmask,
                            board.Unmask(request));
  v1::SecAggRequest answer;
  for (const secagg::UnmaskShare& s : unmask.shares) {
    *answer.mutable_unmask()->add_shares() = secagg::ToProto(s);
  }
  return session.Send(4, std::move(answer));
}

}  // namespace

absl::Status SendMaskedUpdate(const SecAggCalls& calls,
                              const std::string& client_id,
                              const v1::GetTaskResponse& task,
                              const runtime::NamedTensors& global,
                              const TrainOutcome& outcome,
                              uint64_t* bytes_sent) {
  FEDBERRY_ASSIGN_OR_RETURN(secagg::BoardTaskSettings settings,
                            secagg::FromProto(task.secagg()));
  settings.config.round = task.round();
  FEDBERRY_ASSIGN_OR_RETURN(
      std::string path, StatePath(calls.state_dir, settings.config.session));
  static secagg::UnsignedKeys keys;  // stateless: the restore's stage only
  if (calls.fs->Exists(path)) {
    FEDBERRY_ASSIGN_OR_RETURN(std::string saved, calls.fs->ReadFile(path));
    FEDBERRY_ASSIGN_OR_RETURN(
        secagg::BoardSession restored,
        secagg::BoardSession::Restore(
            absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(saved.data()),
                                saved.size()),
            secagg::OsRandom(), keys, keys));
    if (restored.stage() >= secagg::BoardStage::kMasked) {
      return absl::FailedPreconditionError(
          absl::StrCat("this board already sent its masked input of session ",
                       settings.config.session, " (", path,
                       "); it never masks a second one"));
    }
  }
  FEDBERRY_ASSIGN_OR_RETURN(std::vector<uint32_t> words,
                            Words(settings, global, outcome));
  if (calls.on_words) {
    calls.on_words(settings.config.session, settings.board, words);
  }
  if (!calls.fs->Exists(calls.state_dir)) {
    FEDBERRY_RETURN_IF_ERROR(calls.fs->CreateDir(calls.state_dir));
  }
  FEDBERRY_ASSIGN_OR_RETURN(std::unique_ptr<BoardKeys> own, KeysOf(calls));
  FEDBERRY_ASSIGN_OR_RETURN(
      secagg::BoardSession board,
      secagg::BoardSession::Create(settings.config, settings.board,
                                   secagg::OsRandom(), *own->signer,
                                   own->verifier()));
  Session session(calls, client_id, task);
  absl::Status s =
      RunStages(calls, board, own->certified.get(), words, path, session);
  if (bytes_sent != nullptr) *bytes_sent += session.bytes_sent();
  return s;
}

}  // namespace fedberry::client
