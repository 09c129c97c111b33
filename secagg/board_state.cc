#include "secagg/board_state.h"

#include <string>

#include "absl/strings/str_format.h"

namespace fedberry::secagg {
namespace {

constexpr uint8_t kStateMagic[8] = {'F', 'B', 'S', 'A', 'B', 'S', 0, 1};
// A secret of 32 bytes is 5 chunks of 7; no share needs more values.
constexpr uint32_t kSecretBytes = 32;
constexpr uint32_t kShareValues = 5;

class StateWriter {
 public:
  void U8(uint8_t v) { out_.push_back(v); }
  void U32(uint32_t v) { Little(v, 4); }
  void U64(uint64_t v) { Little(v, 8); }
  void Bytes(absl::Span<const uint8_t> b) {
    out_.insert(out_.end(), b.begin(), b.end());
  }
  void PutShare(const Share& s) {
    U32(s.index);
    U32(s.secret_size);
    U32(static_cast<uint32_t>(s.values.size()));
    for (uint64_t v : s.values) U64(v);
  }
  std::vector<uint8_t> Take() { return std::move(out_); }

 private:
  void Little(uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) {
      out_.push_back(static_cast<uint8_t>(v >> 8 * i));
    }
  }
  std::vector<uint8_t> out_;
};

// Reads fields in order; after the first short read every read fails, so
// callers check ok() once at the end.
class StateReader {
 public:
  explicit StateReader(absl::Span<const uint8_t> in) : in_(in) {}
  uint8_t U8() { return static_cast<uint8_t>(Little(1)); }
  uint32_t U32() { return static_cast<uint32_t>(Little(4)); }
  uint64_t U64() { return Little(8); }
  void Bytes(absl::Span<uint8_t> out) {
    if (!Have(out.size())) return;
    std::copy_n(in_.begin() + pos_, out.size(), out.begin());
    pos_ += out.size();
  }
  void GetShare(Share& s) {
    s.index = U32();
    s.secret_size = U32();
    const uint32_t count = U32();
    if (count != kShareValues || s.secret_size != kSecretBytes) ok_ = false;
    if (!ok_) return;
    s.values.resize(count);
    for (uint64_t& v : s.values) v = U64();
  }
  bool ok() const { return ok_; }
  bool done() const { return ok_ && pos_ == in_.size(); }
  void Fail() { ok_ = false; }

 private:
  bool Have(size_t n) {
    if (!ok_ || in_.size() - pos_ < n) ok_ = false;
    return ok_;
  }
  uint64_t Little(int bytes) {
    if (!Have(bytes)) return 0;
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | in_[pos_ + i];
    pos_ += bytes;
    return v;
  }
  absl::Span<const uint8_t> in_;
  size_t pos_ = 0;
  bool ok_ = true;
};

void PutConfig(StateWriter& w, const SessionConfig& c) {
  w.U32(static_cast<uint32_t>(c.session.size()));
  w.Bytes(absl::MakeConstSpan(
      reinterpret_cast<const uint8_t*>(c.session.data()), c.session.size()));
  w.U64(c.round);
  w.U32(static_cast<uint32_t>(c.cohort));
  w.U32(static_cast<uint32_t>(c.neighbours));
  w.U32(static_cast<uint32_t>(c.threshold));
  w.U32(static_cast<uint32_t>(c.bits));
  w.U64(c.vector_length);
  w.Bytes(c.graph_seed);
}

void GetConfig(StateReader& r, SessionConfig& c) {
  const uint32_t size = r.U32();
  if (size > 1024) r.Fail();
  if (!r.ok()) return;
  std::vector<uint8_t> id(size);
  r.Bytes(absl::MakeSpan(id));
  c.session.assign(id.begin(), id.end());
  c.round = r.U64();
  c.cohort = static_cast<int>(r.U32() & 0x7fffffff);
  c.neighbours = static_cast<int>(r.U32() & 0x7fffffff);
  c.threshold = static_cast<int>(r.U32() & 0x7fffffff);
  c.bits = static_cast<int>(r.U32() & 0x7fffffff);
  c.vector_length = r.U64();
  r.Bytes(absl::MakeSpan(c.graph_seed));
}

}  // namespace

std::vector<uint8_t> SerializeBoardState(const BoardState& s) {
  StateWriter w;
  w.Bytes(kStateMagic);
  PutConfig(w, s.config);
  w.U32(s.board);
  w.U8(static_cast<uint8_t>(s.stage));
  w.Bytes(s.transport.private_key);
  w.Bytes(s.transport.public_key);
  w.Bytes(s.mask.private_key);
  w.Bytes(s.mask.public_key);
  w.Bytes(s.self_seed);
  w.U32(static_cast<uint32_t>(s.neighbours.size()));
  for (const NeighbourState& n : s.neighbours) {
    w.U32(n.board);
    w.Bytes(n.transport_public);
    w.Bytes(n.mask_public);
    w.U8(n.shared ? 1 : 0);
    if (!n.shared) continue;
    w.PutShare(n.mask_key_share);
    w.PutShare(n.self_seed_share);
  }
  return w.Take();
}

absl::StatusOr<BoardState> ParseBoardState(absl::Span<const uint8_t> bytes) {
  StateReader r(bytes);
  uint8_t magic[sizeof(kStateMagic)] = {};
  r.Bytes(absl::MakeSpan(magic));
  if (!r.ok() || !std::equal(magic, magic + sizeof(magic), kStateMagic)) {
    return absl::DataLossError(
        "secagg board state: not a version-1 board state (magic differs)");
  }
  BoardState s;
  GetConfig(r, s.config);
  s.board = r.U32();
  const uint8_t stage = r.U8();
  r.Bytes(absl::MakeSpan(s.transport.private_key));
  r.Bytes(absl::MakeSpan(s.transport.public_key));
  r.Bytes(absl::MakeSpan(s.mask.private_key));
  r.Bytes(absl::MakeSpan(s.mask.public_key));
  r.Bytes(absl::MakeSpan(s.self_seed));
  const uint32_t count = r.U32();
  if (r.ok() && count > static_cast<uint32_t>(kMaxCohort)) r.Fail();
  for (uint32_t i = 0; r.ok() && i < count; ++i) {
    NeighbourState& n = s.neighbours.emplace_back();
    n.board = r.U32();
    r.Bytes(absl::MakeSpan(n.transport_public));
    r.Bytes(absl::MakeSpan(n.mask_public));
    const uint8_t shared = r.U8();
    if (shared > 1) r.Fail();
    n.shared = shared == 1;
    if (!n.shared) continue;
    r.GetShare(n.mask_key_share);
    r.GetShare(n.self_seed_share);
  }
  if (!r.done()) {
    return absl::DataLossError(absl::StrFormat(
        "secagg board state of %d bytes is cut short, has trailing bytes or "
        "a field out of range",
        bytes.size()));
  }
  if (stage > static_cast<uint8_t>(BoardStage::kUnmasked)) {
    return absl::DataLossError(
        absl::StrFormat("secagg board state: stage %d is unknown", stage));
  }
  s.stage = static_cast<BoardStage>(stage);
  if (absl::Status c = CheckSessionConfig(s.config); !c.ok()) {
    return absl::DataLossError(
        absl::StrCat("secagg board state holds a bad session: ", c.message()));
  }
  if (s.board >= static_cast<uint32_t>(s.config.cohort)) {
    return absl::DataLossError(
        absl::StrFormat("secagg board state: board %d outside a cohort of %d",
                        s.board, s.config.cohort));
  }
  return s;
}

std::vector<uint8_t> EncodeSharePair(const Share& mask_key,
                                     const Share& self_seed) {
  StateWriter w;
  w.PutShare(mask_key);
  w.PutShare(self_seed);
  return w.Take();
}

absl::Status DecodeSharePair(absl::Span<const uint8_t> bytes, Share& mask_key,
                             Share& self_seed) {
  StateReader r(bytes);
  r.GetShare(mask_key);
  r.GetShare(self_seed);
  if (!r.done()) {
    return absl::DataLossError(absl::StrFormat(
        "share box plaintext of %d bytes is not two shares of 32-byte "
        "secrets",
        bytes.size()));
  }
  return absl::OkStatus();
}

}  // namespace fedberry::secagg
