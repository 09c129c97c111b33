#include "secagg/wire_messages.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace fedberry::secagg {
namespace {

template <size_t N>
std::string Bytes(const std::array<uint8_t, N>& a) {
  return std::string(a.begin(), a.end());
}

template <size_t N>
absl::Status Fill(const std::string& bytes, const char* what,
                  std::array<uint8_t, N>& out) {
  if (bytes.size() != N) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be ", N, " bytes, not ", bytes.size()));
  }
  std::copy(bytes.begin(), bytes.end(), out.begin());
  return absl::OkStatus();
}

}  // namespace

v1::SecAggTask ToProto(const BoardTaskSettings& s) {
  v1::SecAggTask task;
  task.set_session(s.config.session);
  task.set_board(s.board);
  task.set_cohort(static_cast<uint32_t>(s.config.cohort));
  task.set_neighbours(static_cast<uint32_t>(s.config.neighbours));
  task.set_threshold(static_cast<uint32_t>(s.config.threshold));
  task.set_bits(static_cast<uint32_t>(s.config.bits));
  task.set_vector_length(s.config.vector_length);
  task.set_graph_seed(Bytes(s.config.graph_seed));
  task.set_clip(s.clip);
  task.set_weight_cap(s.weight_cap);
  task.set_count_clipped(s.count_clipped);
  return task;
}

absl::StatusOr<BoardTaskSettings> FromProto(const v1::SecAggTask& task) {
  BoardTaskSettings s;
  s.config.session = task.session();
  s.config.round = 0;  // the caller sets the task's round
  // Counts above int's range are refused by CheckSessionConfig once cut.
  auto count = [](uint32_t v) {
    return static_cast<int>(std::min<uint32_t>(v, 1u << 30));
  };
  s.config.cohort = count(task.cohort());
  s.config.neighbours = count(task.neighbours());
  s.config.threshold = count(task.threshold());
  s.config.bits = count(task.bits());
  s.config.vector_length = task.vector_length();
  FEDBERRY_RETURN_IF_ERROR(
      Fill(task.graph_seed(), "secagg graph_seed", s.config.graph_seed));
  s.board = task.board();
  if (s.board >= static_cast<uint32_t>(s.config.cohort)) {
    return absl::InvalidArgumentError(absl::StrCat("secagg board ", s.board,
                                                   " is outside the cohort of ",
                                                   s.config.cohort));
  }
  if (!std::isfinite(task.clip()) || task.clip() <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "secagg clip must be finite and positive, not ", task.clip()));
  }
  if (task.weight_cap() == 0) {
    return absl::InvalidArgumentError("secagg weight_cap must be positive");
  }
  s.clip = task.clip();
  s.weight_cap = task.weight_cap();
  s.count_clipped = task.count_clipped();
  return s;
}

v1::SecAggKeys ToProto(const KeyAdvertisement& ad) {
  v1::SecAggKeys keys;
  keys.set_board(ad.board);
  keys.set_transport_public(Bytes(ad.transport_public));
  keys.set_mask_public(Bytes(ad.mask_public));
  keys.set_signature(std::string(ad.signature.begin(), ad.signature.end()));
  return keys;
}

absl::StatusOr<KeyAdvertisement> FromProto(const v1::SecAggKeys& keys) {
  KeyAdvertisement ad;
  ad.board = keys.board();
  FEDBERRY_RETURN_IF_ERROR(Fill(
      keys.transport_public(), "secagg transport_public", ad.transport_public));
  FEDBERRY_RETURN_IF_ERROR(
      Fill(keys.mask_public(), "secagg mask_public", ad.mask_public));
  if (keys.signature().size() > kMaxSignatureBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("secagg signature of ", keys.signature().size(),
                     " bytes; at most ", kMaxSignatureBytes));
  }
  if (keys.certificate().size() > kMaxCertificateBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("secagg certificate of ", keys.certificate().size(),
                     " bytes; at most ", kMaxCertificateBytes));
  }
  ad.signature.assign(keys.signature().begin(), keys.signature().end());
  return ad;
}

v1::SecAggShareBox ToProto(const ShareCiphertext& box) {
  v1::SecAggShareBox out;
  out.set_sender(box.sender);
  out.set_receiver(box.receiver);
  out.set_box(std::string(box.box.begin(), box.box.end()));
  return out;
}

absl::StatusOr<ShareCiphertext> FromProto(const v1::SecAggShareBox& box) {
  if (box.box().size() > kMaxShareBoxBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("secagg share box of ", box.box().size(),
                     " bytes; at most ", kMaxShareBoxBytes));
  }
  ShareCiphertext out;
  out.sender = box.sender();
  out.receiver = box.receiver();
  out.box.assign(box.box().begin(), box.box().end());
  return out;
}

v1::SecAggShare ToProto(const UnmaskShare& share) {
  v1::SecAggShare out;
  out.set_owner(share.owner);
  out.set_mask_key(share.kind == ShareKind::kMaskKey);
  out.set_index(share.share.index);
  out.set_secret_size(share.share.secret_size);
  for (uint64_t v : share.share.values) out.add_values(v);
  return out;
}

absl::StatusOr<UnmaskShare> FromProto(const v1::SecAggShare& share) {
  if (static_cast<size_t>(share.values_size()) > kMaxShareValues) {
    return absl::InvalidArgumentError(
        absl::StrCat("secagg share of ", share.values_size(),
                     " values; at most ", kMaxShareValues));
  }
  UnmaskShare out;
  out.owner = share.owner();
  out.kind = share.mask_key() ? ShareKind::kMaskKey : ShareKind::kSelfMaskSeed;
  out.share.index = share.index();
  out.share.secret_size = share.secret_size();
  out.share.values.assign(share.values().begin(), share.values().end());
  return out;
}

std::string WordBytes(absl::Span<const uint32_t> words) {
  std::string bytes;
  bytes.reserve(words.size() * 4);
  for (uint32_t w : words) {
    for (int b = 0; b < 4; ++b)
      bytes.push_back(static_cast<char>(w >> (8 * b)));
  }
  return bytes;
}

}  // namespace fedberry::secagg
