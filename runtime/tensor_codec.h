// Converts model state (NamedTensors) to and from the wire's stream of
// ModelChunk messages. Decoding is strict: the assembler checks every chunk
// against the round, task and tensor specs it expects, and never allocates
// more than the expected model, so a malformed or hostile stream is refused
// with a clear status before it can grow memory.
// Thread-safety: ModelAssembler is not thread-safe; use one per stream.
#ifndef FEDBERRY_RUNTIME_TENSOR_CODEC_H_
#define FEDBERRY_RUNTIME_TENSOR_CODEC_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fedberry/v1/federation.pb.h"
#include "proto/chunking.h"
#include "runtime/model.h"
#include "runtime/update_encoding.h"

namespace fedberry::runtime {

// The spec of each tensor of `state` (name, shape, dtype, raw encoding).
// InvalidArgument for a dtype the wire cannot carry.
absl::StatusOr<std::vector<v1::TensorSpec>> SpecsOf(const NamedTensors& state);

// Cuts encoded tensors into a stream's chunks one at a time, for writers
// that send the next chunk when the last is out (gRPC's callback API).
// `tensors` must outlive the chunker.
class ModelChunker {
 public:
  ModelChunker(const std::vector<EncodedTensor>& tensors, uint64_t round,
               std::string task_id, int chunk_bytes = wire::kChunkBytes);

  // Fills `chunk` with the next one; false when every chunk is out.
  bool Next(v1::ModelChunk& chunk);
  // The tensor the last chunk belonged to (for messages).
  const std::string& tensor_name() const;

 private:
  const std::vector<EncodedTensor>& tensors_;
  const uint64_t round_;
  const std::string task_id_;
  const int64_t chunk_bytes_;
  size_t index_ = 0;    // the tensor the next chunk is cut from
  int64_t offset_ = 0;  // and where in its payload
  size_t last_ = 0;     // the tensor of the last chunk
};

// Encodes a model's tensors for the wire (RAW or FP16; integer ones RAW).
absl::StatusOr<std::vector<EncodedTensor>> EncodeModelTensors(
    const NamedTensors& state, v1::Encoding encoding = v1::ENCODING_RAW);

// Streams `state` as chunks of at most `chunk_bytes` payload bytes, calling
// `sink` for each; stops early (Cancelled) when `sink` returns false.
// Floating tensors travel as `encoding` (RAW or FP16; integer ones RAW).
absl::Status EncodeModel(const NamedTensors& state, uint64_t round,
                         const std::string& task_id,
                         const std::function<bool(const v1::ModelChunk&)>& sink,
                         int chunk_bytes = wire::kChunkBytes,
                         v1::Encoding encoding = v1::ENCODING_RAW);

// The same for tensors already encoded (runtime/update_encoding.h).
absl::Status EncodeTensors(
    const std::vector<EncodedTensor>& tensors, uint64_t round,
    const std::string& task_id,
    const std::function<bool(const v1::ModelChunk&)>& sink,
    int chunk_bytes = wire::kChunkBytes);

// The specs an update of a model of `specs` must follow when boards send
// `encoding`: floating tensors as differences in that encoding, TOPK with
// at most TopKCount(numel, topk_fraction) records (so the stream is bounded
// by the plan, not by what a board announces).
std::vector<v1::TensorSpec> UpdateSpecs(std::vector<v1::TensorSpec> specs,
                                        v1::Encoding encoding,
                                        double topk_fraction);

class ModelAssembler {
 public:
  // `expected` (when given) fixes the names, shapes, dtypes and encodings
  // the stream must carry, in order (for TOPK, nnz is the most records a
  // tensor may have); without it the stream defines them. `reference` is
  // the model differences (TensorSpec.delta) are added to; without it a
  // difference is refused.
  ModelAssembler(uint64_t round, std::string task_id,
                 std::optional<std::vector<v1::TensorSpec>> expected,
                 std::shared_ptr<const NamedTensors> reference = nullptr);

  // Tensors to fill instead of allocating new ones (a server recycling its
  // staging buffers): a RAW tensor whose dtype and shape match the one
  // at its index takes the stream's bytes. Call before the first Add.
  void Reuse(NamedTensors tensors) { reuse_ = std::move(tensors); }

  // Adds the next chunk. InvalidArgument names what is wrong (round, task,
  // order, offset, spec, size); FailedPrecondition for another round's chunk.
  absl::Status Add(const v1::ModelChunk& chunk);

  // The decoded model. InvalidArgument when tensors are missing or partial.
  absl::StatusOr<NamedTensors> Finish();

 private:
  absl::Status StartTensor(const v1::ModelChunk& chunk);

  uint64_t round_;
  std::string task_id_;
  std::optional<std::vector<v1::TensorSpec>> expected_;
  std::shared_ptr<const NamedTensors> reference_;
  NamedTensors reuse_;
  NamedTensors tensors_;
  // The current tensor: its spec, payload size and bytes received. RAW
  // bytes go straight into tensors_.back(); other encodings gather in
  // payload_ and are decoded when complete.
  v1::TensorSpec spec_;
  int64_t size_ = 0;
  std::string payload_;
  int64_t filled_ = 0;
  int64_t declared_count_ = -1;
};

// OK when every floating-point value is finite; InvalidArgument naming the
// first tensor with NaN or Inf otherwise.
absl::Status CheckFinite(const NamedTensors& state);

// Human-readable shape, e.g. [6, 1, 5, 5].
std::string ShapeString(const v1::TensorSpec& spec);

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_TENSOR_CODEC_H_
