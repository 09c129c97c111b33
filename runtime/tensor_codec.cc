#include "runtime/tensor_codec.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/log_text.h"
#include "base/status_macros.h"

namespace fedberry::runtime {
namespace {

// Both targets (x86-64 gateway, aarch64 Pi) are little-endian, so the raw
// encoding is the tensor's memory as is.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the RAW wire encoding assumes a little-endian host");

// Enum names for messages; a value this build does not know (a hostile or
// newer peer) is named by its number, never as an empty string.
std::string DTypeText(int value) {
  return v1::DType_IsValid(value)
             ? v1::DType_Name(static_cast<v1::DType>(value))
             : absl::StrCat("unknown dtype ", value);
}

std::string EncodingText(int value) {
  return v1::Encoding_IsValid(value)
             ? v1::Encoding_Name(static_cast<v1::Encoding>(value))
             : absl::StrCat("unknown encoding ", value);
}

absl::StatusOr<v1::DType> ToWire(at::ScalarType t) {
  switch (t) {
    case at::kFloat:
      return v1::DTYPE_FLOAT32;
    case at::kLong:
      return v1::DTYPE_INT64;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("dtype ", c10::toString(t), " cannot be sent"));
  }
}

absl::StatusOr<at::ScalarType> FromWire(v1::DType t) {
  switch (t) {
    case v1::DTYPE_FLOAT32:
      return at::kFloat;
    case v1::DTYPE_INT64:
      return at::kLong;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("unsupported wire dtype ", DTypeText(t)));
  }
}

bool SameShape(const v1::TensorSpec& a, const v1::TensorSpec& b) {
  if (a.shape_size() != b.shape_size()) return false;
  for (int i = 0; i < a.shape_size(); ++i) {
    if (a.shape(i) != b.shape(i)) return false;
  }
  return true;
}

}  // namespace

std::string ShapeString(const v1::TensorSpec& spec) {
  return absl::StrCat("[", absl::StrJoin(spec.shape(), ", "), "]");
}

absl::StatusOr<std::vector<v1::TensorSpec>> SpecsOf(const NamedTensors& state) {
  std::vector<v1::TensorSpec> specs;
  specs.reserve(state.size());
  for (const auto& t : state) {
    v1::TensorSpec spec;
    spec.set_name(t.name);
    for (int64_t d : t.tensor.sizes()) spec.add_shape(d);
    FEDBERRY_ASSIGN_OR_RETURN(v1::DType dtype, ToWire(t.tensor.scalar_type()));
    spec.set_dtype(dtype);
    spec.set_encoding(v1::ENCODING_RAW);
    specs.push_back(std::move(spec));
  }
  return specs;
}

ModelChunker::ModelChunker(const std::vector<EncodedTensor>& tensors,
                           uint64_t round, std::string task_id, int chunk_bytes)
    : tensors_(tensors),
      round_(round),
      task_id_(std::move(task_id)),
      chunk_bytes_(std::max(1, chunk_bytes)) {}

bool ModelChunker::Next(v1::ModelChunk& chunk) {
  if (index_ >= tensors_.size()) return false;
  const EncodedTensor& tensor = tensors_[index_];
  const absl::string_view bytes = tensor.payload();
  const int64_t total = static_cast<int64_t>(bytes.size());
  chunk.Clear();
  chunk.set_round(round_);
  chunk.set_task_id(task_id_);
  chunk.set_tensor_index(static_cast<uint32_t>(index_));
  chunk.set_tensor_count(static_cast<uint32_t>(tensors_.size()));
  if (offset_ == 0) *chunk.mutable_spec() = tensor.spec;
  const int64_t n = std::min(chunk_bytes_, total - offset_);
  chunk.set_offset(static_cast<uint64_t>(offset_));
  chunk.set_data(bytes.data() + offset_, static_cast<size_t>(n));
  last_ = index_;
  offset_ += n;
  if (offset_ >= total) {  // an empty tensor still takes one chunk
    ++index_;
    offset_ = 0;
  }
  return true;
}

const std::string& ModelChunker::tensor_name() const {
  static const std::string* const kNone = new std::string;
  return last_ < tensors_.size() ? tensors_[last_].spec.name() : *kNone;
}

absl::StatusOr<std::vector<EncodedTensor>> EncodeModelTensors(
    const NamedTensors& state, v1::Encoding encoding) {
  std::vector<EncodedTensor> tensors;
  tensors.reserve(state.size());
  for (const auto& t : state) {
    FEDBERRY_ASSIGN_OR_RETURN(
        EncodedTensor e, EncodeTensor(t.name, t.tensor, encoding, nullptr));
    tensors.push_back(std::move(e));
  }
  return tensors;
}

absl::Status EncodeModel(const NamedTensors& state, uint64_t round,
                         const std::string& task_id,
                         const std::function<bool(const v1::ModelChunk&)>& sink,
                         int chunk_bytes, v1::Encoding encoding) {
  FEDBERRY_ASSIGN_OR_RETURN(std::vector<EncodedTensor> tensors,
                            EncodeModelTensors(state, encoding));
  return EncodeTensors(tensors, round, task_id, sink, chunk_bytes);
}

absl::Status EncodeTensors(
    const std::vector<EncodedTensor>& tensors, uint64_t round,
    const std::string& task_id,
    const std::function<bool(const v1::ModelChunk&)>& sink, int chunk_bytes) {
  ModelChunker chunker(tensors, round, task_id, chunk_bytes);
  v1::ModelChunk chunk;
  while (chunker.Next(chunk)) {
    if (!sink(chunk)) {
      return absl::CancelledError(
          absl::StrCat("model stream was cancelled at tensor '",
                       chunker.tensor_name(), "'"));
    }
  }
  return absl::OkStatus();
}

std::vector<v1::TensorSpec> UpdateSpecs(std::vector<v1::TensorSpec> specs,
                                        v1::Encoding encoding,
                                        double topk_fraction) {
  if (encoding == v1::ENCODING_RAW) return specs;
  for (v1::TensorSpec& s : specs) {
    if (s.dtype() != v1::DTYPE_FLOAT32) continue;
    s.set_encoding(encoding);
    s.set_delta(true);
    if (encoding == v1::ENCODING_TOPK) {
      int64_t numel = 1;
      for (int64_t d : s.shape()) numel *= d;
      s.set_nnz(static_cast<uint64_t>(TopKCount(numel, topk_fraction)));
    }
  }
  return specs;
}

ModelAssembler::ModelAssembler(
    uint64_t round, std::string task_id,
    std::optional<std::vector<v1::TensorSpec>> expected,
    std::shared_ptr<const NamedTensors> reference)
    : round_(round),
      task_id_(std::move(task_id)),
      expected_(std::move(expected)),
      reference_(std::move(reference)) {}

absl::Status ModelAssembler::StartTensor(const v1::ModelChunk& chunk) {
  const size_t index = tensors_.size();
  if (!chunk.has_spec()) {
    return absl::InvalidArgumentError(
        absl::StrCat("first chunk of tensor ", index, " carries no spec"));
  }
  const v1::TensorSpec& spec = chunk.spec();
  if (!v1::Encoding_IsValid(spec.encoding()) ||
      spec.encoding() == v1::ENCODING_UNSPECIFIED) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor '", base::Printable(spec.name()),
        "' uses unsupported encoding ", EncodingText(spec.encoding())));
  }
  if (expected_) {
    const v1::TensorSpec& want = (*expected_)[index];
    if (spec.name() != want.name()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor ", index, " is named '", base::Printable(spec.name()),
          "'; expected '", want.name(), "'"));
    }
    if (!SameShape(spec, want)) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor '", want.name(), "' has shape ",
                       ShapeString(spec), "; expected ", ShapeString(want)));
    }
    if (spec.dtype() != want.dtype()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor '", want.name(), "' has dtype ", DTypeText(spec.dtype()),
          "; expected ", DTypeText(want.dtype())));
    }
    if (spec.encoding() != want.encoding() || spec.delta() != want.delta()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor '", want.name(), "' is encoded ",
          EncodingText(spec.encoding()), spec.delta() ? " (difference)" : "",
          "; the job's plan asks for ", EncodingText(want.encoding()),
          want.delta() ? " (difference)" : ""));
    }
    if (want.encoding() == v1::ENCODING_TOPK && spec.nnz() > want.nnz()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor '", want.name(), "' announces ", spec.nnz(),
          " top-k records; the plan's fraction allows ", want.nnz()));
    }
  }
  FEDBERRY_ASSIGN_OR_RETURN(uint64_t size, PayloadBytes(spec));
  std::vector<int64_t> shape(spec.shape().begin(), spec.shape().end());
  if (spec.delta() && (!reference_ || index >= reference_->size() ||
                       !(*reference_)[index].tensor.sizes().equals(shape))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor '", base::Printable(spec.name()),
        "' is a difference from a global model this stream has not"));
  }
  FEDBERRY_ASSIGN_OR_RETURN(at::ScalarType dtype, FromWire(spec.dtype()));
  const bool raw = spec.encoding() == v1::ENCODING_RAW && !spec.delta();
  at::Tensor into;
  if (raw && index < reuse_.size()) {
    at::Tensor& spare = reuse_[index].tensor;
    if (spare.defined() && spare.scalar_type() == dtype &&
        spare.sizes().equals(shape) && spare.is_contiguous()) {
      into = std::move(spare);
    }
  }
  if (raw && !into.defined()) into = at::empty(shape, dtype);
  tensors_.push_back({spec.name(), std::move(into)});
  spec_ = spec;
  size_ = static_cast<int64_t>(size);
  payload_.clear();
  if (!raw) payload_.resize(size);
  filled_ = 0;
  return absl::OkStatus();
}

absl::Status ModelAssembler::Add(const v1::ModelChunk& chunk) {
  if (chunk.round() != round_) {
    return absl::FailedPreconditionError(
        absl::StrCat("model chunk is for round ", chunk.round(),
                     "; this stream is for round ", round_));
  }
  if (chunk.task_id() != task_id_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model chunk is for task '", base::Printable(chunk.task_id()),
        "'; this stream is for task '", task_id_, "'"));
  }
  const int64_t count = chunk.tensor_count();
  if (declared_count_ < 0) {
    if (expected_ && count != static_cast<int64_t>(expected_->size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model has ", count, " tensors; expected ", expected_->size()));
    }
    declared_count_ = count;
  } else if (count != declared_count_) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor count changed mid-stream from ", declared_count_,
                     " to ", count));
  }
  const int64_t index = chunk.tensor_index();
  const bool current_done = !tensors_.empty() && filled_ == size_;
  if (chunk.offset() == 0 && index == static_cast<int64_t>(tensors_.size()) &&
      (tensors_.empty() || current_done)) {
    if (index >= declared_count_) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor index ", index, " is beyond the declared count ",
                       declared_count_));
    }
    FEDBERRY_RETURN_IF_ERROR(StartTensor(chunk));
  } else if (tensors_.empty() ||
             index != static_cast<int64_t>(tensors_.size()) - 1 ||
             static_cast<int64_t>(chunk.offset()) != filled_) {
    // The next tensor's first chunk before the current one is whole: the
    // current one's payload was short of its spec.
    if (!tensors_.empty() && !current_done && chunk.offset() == 0 &&
        index == static_cast<int64_t>(tensors_.size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor '", tensors_.back().name, "' is short of its spec: ", filled_,
          " of ", size_, " bytes before tensor ", index, " began"));
    }
    // The chunk expected next: the next tensor's first, or more of the
    // current one (none started yet: tensor 0).
    const bool next_tensor = tensors_.empty() || current_done;
    return absl::InvalidArgumentError(
        absl::StrCat("chunk out of order: got tensor ", index, " offset ",
                     chunk.offset(), ", expected tensor ",
                     next_tensor ? tensors_.size() : tensors_.size() - 1,
                     " offset ", next_tensor ? 0 : filled_));
  }
  const int64_t n = static_cast<int64_t>(chunk.data().size());
  if (filled_ + n > size_) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor '", tensors_.back().name, "' receives ",
                     filled_ + n, " bytes; its spec announces ", size_));
  }
  at::Tensor& t = tensors_.back().tensor;
  char* into = t.defined() ? static_cast<char*>(t.data_ptr()) : payload_.data();
  std::memcpy(into + filled_, chunk.data().data(), static_cast<size_t>(n));
  filled_ += n;
  if (!t.defined() && filled_ == size_) {
    const size_t i = tensors_.size() - 1;
    FEDBERRY_ASSIGN_OR_RETURN(
        t, DecodeTensor(spec_, payload_,
                        spec_.delta() ? &(*reference_)[i].tensor : nullptr));
    std::string().swap(payload_);
  }
  return absl::OkStatus();
}

absl::StatusOr<NamedTensors> ModelAssembler::Finish() {
  const int64_t want = declared_count_ < 0 ? (expected_ ? expected_->size() : 0)
                                           : declared_count_;
  if (static_cast<int64_t>(tensors_.size()) != want ||
      (!tensors_.empty() && filled_ != size_)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model stream ended early: ", tensors_.size(), " of ", want,
        " tensors started, the last with ", filled_, " bytes"));
  }
  if (want == 0) {
    return absl::InvalidArgumentError("model stream carried no tensors");
  }
  return std::move(tensors_);
}

namespace {

// One pass over the bits, no temporaries: every update a server takes goes
// through here (at::isfinite(t).all() made a bool tensor, then reduced it).
bool AllFinite(const at::Tensor& t) {
  if (t.scalar_type() == at::kFloat && t.is_contiguous()) {
    const char* data = static_cast<const char*>(t.data_ptr());
    const int64_t n = t.numel();
    uint32_t non_finite = 0;  // all exponent bits set: Inf or NaN
    for (int64_t i = 0; i < n; ++i) {
      uint32_t bits;
      std::memcpy(&bits, data + i * sizeof(float), sizeof(bits));
      non_finite |= static_cast<uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
    }
    return non_finite == 0;
  }
  return at::isfinite(t).all().item<bool>();
}

}  // namespace

absl::Status CheckFinite(const NamedTensors& state) {
  for (const auto& t : state) {
    if (!t.tensor.is_floating_point()) continue;
    if (!AllFinite(t.tensor)) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor '", t.name, "' contains NaN or Inf values"));
    }
  }
  return absl::OkStatus();
}

}  // namespace fedberry::runtime
