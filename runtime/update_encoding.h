// The wire encodings of one tensor (v1::Encoding): RAW values, FP16, INT8
// with a per-tensor scale, and TOPK records of the largest values. Boards
// encode an update's floating tensors as their difference from the round's
// global model (TensorSpec.delta), where a lossy encoding loses least; the
// server decodes and adds the global model back. TOPK keeps error feedback:
// what a board leaves out is added to its next update, so over rounds the
// sent updates sum to the dense ones. Integer tensors always travel RAW.
// Decoding is strict: a spec or payload that does not fit (size, index out
// of range or out of order, scale not finite) is refused, never guessed.
// Thread-safety: pure functions.
#ifndef FEDBERRY_RUNTIME_UPDATE_ENCODING_H_
#define FEDBERRY_RUNTIME_UPDATE_ENCODING_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fedberry/v1/federation.pb.h"
#include "runtime/model.h"

namespace fedberry::runtime {

// "raw", "fp16", "int8", "topk" (the server's flags) to the wire's enum, and
// back. InvalidArgument for another name.
absl::StatusOr<v1::Encoding> ParseEncoding(const std::string& name);
std::string EncodingName(v1::Encoding encoding);

// TOPK's records in a tensor of `numel` values: ceil(fraction * numel), at
// least 1 and at most numel.
int64_t TopKCount(int64_t numel, double fraction);

struct EncodedTensor {
  v1::TensorSpec spec;
  std::string data;  // the payload; empty when `raw` holds it
  at::Tensor raw;    // RAW: the contiguous tensor, sent as it is
  absl::string_view payload() const;
};

// Encodes `value` as `encoding` (integer tensors: always RAW). With
// `reference` (the global model's tensor) a lossy encoding sends
// value - reference (delta). TOPK adds `*residual` (when given; zeros when
// undefined) to the difference first and leaves in it what was not sent.
// InvalidArgument for a dtype the wire cannot carry or shapes that differ.
absl::StatusOr<EncodedTensor> EncodeTensor(const std::string& name,
                                           const at::Tensor& value,
                                           v1::Encoding encoding,
                                           const at::Tensor* reference,
                                           double topk_fraction = 0.01,
                                           at::Tensor* residual = nullptr);

// The payload size `spec` announces. InvalidArgument for a shape, dtype,
// encoding, scale or record count the decoder refuses.
absl::StatusOr<uint64_t> PayloadBytes(const v1::TensorSpec& spec);

// The tensor of `spec` from its payload; a delta is added to `reference`
// (required then, of the spec's shape). InvalidArgument naming the tensor
// and what is wrong.
absl::StatusOr<at::Tensor> DecodeTensor(const v1::TensorSpec& spec,
                                        absl::string_view payload,
                                        const at::Tensor* reference);

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_UPDATE_ENCODING_H_
