#include "runtime/update_encoding.h"

#include <ATen/ATen.h>

#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/log_text.h"

namespace fedberry::runtime {
namespace {

constexpr int64_t kMaxElements = int64_t{1} << 31;
constexpr size_t kTopKRecord = sizeof(uint32_t) + sizeof(float);

absl::Status Bad(const v1::TensorSpec& spec, const std::string& what) {
  return absl::InvalidArgumentError(
      absl::StrCat("tensor '", base::Printable(spec.name()), "' ", what));
}

absl::StatusOr<int64_t> Elements(const v1::TensorSpec& spec) {
  int64_t numel = 1;
  for (int64_t d : spec.shape()) {
    if (d < 0 || d > kMaxElements) {
      return Bad(spec, absl::StrCat("has invalid dimension ", d));
    }
    numel *= d;
    if (numel > kMaxElements) return Bad(spec, "is too large");
  }
  return numel;
}

}  // namespace

absl::StatusOr<v1::Encoding> ParseEncoding(const std::string& name) {
  if (name == "raw") return v1::ENCODING_RAW;
  if (name == "fp16") return v1::ENCODING_FP16;
  if (name == "int8") return v1::ENCODING_INT8;
  if (name == "topk") return v1::ENCODING_TOPK;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown encoding '", base::Printable(name),
                   "' (known: raw, fp16, int8, topk)"));
}

std::string EncodingName(v1::Encoding encoding) {
  switch (encoding) {
    case v1::ENCODING_RAW:
      return "raw";
    case v1::ENCODING_FP16:
      return "fp16";
    case v1::ENCODING_INT8:
      return "int8";
    case v1::ENCODING_TOPK:
      return "topk";
    default:
      return absl::StrCat("encoding ", static_cast<int>(encoding));
  }
}

int64_t TopKCount(int64_t numel, double fraction) {
  if (numel <= 0) return 0;
  const double k = std::ceil(fraction * static_cast<double>(numel));
  if (!(k >= 1)) return 1;
  return k >= static_cast<double>(numel) ? numel : static_cast<int64_t>(k);
}

absl::string_view EncodedTensor::payload() const {
  if (raw.defined()) {
    return absl::string_view(static_cast<const char*>(raw.data_ptr()),
                             static_cast<size_t>(raw.nbytes()));
  }
  return data;
}

namespace {

// `x` (flat float32) as int8 with one scale, max |x| / 127.
void EncodeInt8(const at::Tensor& x, EncodedTensor& out) {
  const float max = x.numel() ? x.abs().max().item<float>() : 0.0f;
  const float scale = max > 0 ? max / 127.0f : 0.0f;
  out.spec.set_scale(scale);
  const at::Tensor q = scale > 0
                           ? (x / scale).round().clamp(-127, 127).to(at::kChar)
                           : at::zeros({x.numel()}, at::kChar);
  out.data.assign(static_cast<const char*>(q.contiguous().data_ptr()),
                  static_cast<size_t>(q.numel()));
}

// `x` (flat float32) plus `*residual` as its largest records (index, value)
// in index order; what is not sent goes back to `*residual` in `shape`.
void EncodeTopK(const at::Tensor& x, at::IntArrayRef shape,
                double topk_fraction, at::Tensor* residual,
                EncodedTensor& out) {
  at::Tensor u = x;
  if (residual != nullptr && residual->defined()) {
    u = u + residual->to(at::kFloat).contiguous().view({-1});
  }
  const int64_t k = TopKCount(u.numel(), topk_fraction);
  at::Tensor index =
      std::get<1>(u.abs().topk(k, 0, /*largest=*/true, /*sorted=*/false));
  index = std::get<0>(index.sort());
  const at::Tensor kept = u.index_select(0, index);
  out.spec.set_nnz(static_cast<uint64_t>(k));
  out.data.resize(static_cast<size_t>(k) * kTopKRecord);
  const int64_t* idx = index.data_ptr<int64_t>();
  const float* val = kept.data_ptr<float>();
  for (int64_t i = 0; i < k; ++i) {
    const uint32_t at = static_cast<uint32_t>(idx[i]);
    std::memcpy(&out.data[i * kTopKRecord], &at, sizeof(at));
    std::memcpy(&out.data[i * kTopKRecord + sizeof(at)], &val[i],
                sizeof(float));
  }
  if (residual != nullptr) {
    at::Tensor left = u.clone();
    left.index_fill_(0, index, 0.0f);
    *residual = left.view(shape);
  }
}

}  // namespace

absl::StatusOr<EncodedTensor> EncodeTensor(
    const std::string& name, const at::Tensor& value, v1::Encoding encoding,
    const at::Tensor* reference, double topk_fraction, at::Tensor* residual) {
  EncodedTensor out;
  out.spec.set_name(name);
  for (int64_t d : value.sizes()) out.spec.add_shape(d);
  if (value.scalar_type() == at::kFloat) {
    out.spec.set_dtype(v1::DTYPE_FLOAT32);
  } else if (value.scalar_type() == at::kLong) {
    out.spec.set_dtype(v1::DTYPE_INT64);
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor '", name, "' has dtype ", c10::toString(value.scalar_type()),
        ", which cannot be sent"));
  }
  if (!value.is_floating_point() || encoding == v1::ENCODING_RAW) {
    out.spec.set_encoding(v1::ENCODING_RAW);
    out.raw = value.contiguous();
    return out;
  }
  at::NoGradGuard no_grad;
  at::Tensor x = value.detach();
  if (reference != nullptr) {
    if (!reference->sizes().equals(value.sizes())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor '", name, "' has shape ", c10::str(value.sizes()),
          "; the global model's has ", c10::str(reference->sizes())));
    }
    x = x - *reference;
    out.spec.set_delta(true);
  }
  x = x.to(at::kFloat).contiguous().view({-1});
  out.spec.set_encoding(encoding);
  switch (encoding) {
    case v1::ENCODING_FP16: {
      const at::Tensor h = x.to(at::kHalf).contiguous();
      out.data.assign(static_cast<const char*>(h.data_ptr()),
                      static_cast<size_t>(h.nbytes()));
      return out;
    }
    case v1::ENCODING_INT8:
      EncodeInt8(x, out);
      return out;
    case v1::ENCODING_TOPK:
      EncodeTopK(x, value.sizes(), topk_fraction, residual, out);
      return out;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor '", name, "': cannot encode as ", EncodingName(encoding)));
  }
}

absl::StatusOr<uint64_t> PayloadBytes(const v1::TensorSpec& spec) {
  absl::StatusOr<int64_t> numel = Elements(spec);
  if (!numel.ok()) return numel.status();
  const uint64_t n = static_cast<uint64_t>(*numel);
  const bool floating = spec.dtype() == v1::DTYPE_FLOAT32;
  if (spec.dtype() != v1::DTYPE_FLOAT32 && spec.dtype() != v1::DTYPE_INT64) {
    return Bad(spec, absl::StrCat("has unsupported dtype: unknown dtype ",
                                  static_cast<int>(spec.dtype())));
  }
  if ((spec.encoding() != v1::ENCODING_RAW || spec.delta()) && !floating) {
    return Bad(spec, "is an integer tensor; those travel RAW, whole, only");
  }
  switch (spec.encoding()) {
    case v1::ENCODING_RAW:
      return n * (floating ? 4 : 8);
    case v1::ENCODING_FP16:
      return n * 2;
    case v1::ENCODING_INT8:
      if (!std::isfinite(spec.scale()) || spec.scale() < 0) {
        return Bad(spec, absl::StrCat("has int8 scale ", spec.scale(),
                                      "; need a finite scale >= 0"));
      }
      return n;
    case v1::ENCODING_TOPK:
      if (spec.nnz() > n || (n > 0 && spec.nnz() == 0)) {
        return Bad(spec, absl::StrCat("announces ", spec.nnz(),
                                      " top-k records for ", n, " values"));
      }
      return spec.nnz() * kTopKRecord;
    default:
      return Bad(spec, absl::StrCat("uses unknown encoding ",
                                    static_cast<int>(spec.encoding())));
  }
}

absl::StatusOr<at::Tensor> DecodeTensor(const v1::TensorSpec& spec,
                                        absl::string_view payload,
                                        const at::Tensor* reference) {
  absl::StatusOr<uint64_t> bytes = PayloadBytes(spec);
  if (!bytes.ok()) return bytes.status();
  if (payload.size() != *bytes) {
    return Bad(spec, absl::StrCat("carries ", payload.size(),
                                  " bytes; its spec announces ", *bytes));
  }
  std::vector<int64_t> shape(spec.shape().begin(), spec.shape().end());
  const int64_t numel = *Elements(spec);
  if (spec.encoding() == v1::ENCODING_RAW) {
    at::Tensor t = at::empty(
        shape, spec.dtype() == v1::DTYPE_FLOAT32 ? at::kFloat : at::kLong);
    std::memcpy(t.data_ptr(), payload.data(), payload.size());
    if (!spec.delta()) return t;
  }
  at::Tensor x;
  switch (spec.encoding()) {
    case v1::ENCODING_RAW:
      x = at::empty({numel}, at::kFloat);
      std::memcpy(x.data_ptr(), payload.data(), payload.size());
      break;
    case v1::ENCODING_FP16: {
      at::Tensor h = at::empty({numel}, at::kHalf);
      std::memcpy(h.data_ptr(), payload.data(), payload.size());
      x = h.to(at::kFloat);
      break;
    }
    case v1::ENCODING_INT8: {
      at::Tensor q = at::empty({numel}, at::kChar);
      std::memcpy(q.data_ptr(), payload.data(), payload.size());
      x = q.to(at::kFloat) * spec.scale();
      break;
    }
    case v1::ENCODING_TOPK: {
      x = at::zeros({numel}, at::kFloat);
      float* out = x.data_ptr<float>();
      int64_t last = -1;
      for (uint64_t i = 0; i < spec.nnz(); ++i) {
        uint32_t at;
        float value;
        std::memcpy(&at, payload.data() + i * kTopKRecord, sizeof(at));
        std::memcpy(&value, payload.data() + i * kTopKRecord + sizeof(at),
                    sizeof(value));
        if (static_cast<int64_t>(at) >= numel ||
            static_cast<int64_t>(at) <= last) {
          return Bad(spec, absl::StrCat("has top-k index ", at, " after ", last,
                                        "; indices must ascend below ", numel));
        }
        out[at] = value;
        last = at;
      }
      break;
    }
    default:
      return Bad(spec, "uses an unknown encoding");
  }
  x = x.view(shape);
  if (!spec.delta()) return x;
  if (reference == nullptr || !reference->sizes().equals(x.sizes())) {
    return Bad(spec, "is a difference from a global model this stream has not");
  }
  return (reference->to(at::kFloat) + x).contiguous();
}

}  // namespace fedberry::runtime
