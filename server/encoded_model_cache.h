// The global model as pulls send it: encoded once per model and encoding,
// and shared by every pull of it. Without it each pull of an FP16 job held
// a half-size copy of the model for as long as it streamed, and every pull
// encoded the model again.
// Thread-safe.
#ifndef FEDBERRY_SERVER_ENCODED_MODEL_CACHE_H_
#define FEDBERRY_SERVER_ENCODED_MODEL_CACHE_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "fedberry/v1/federation.pb.h"
#include "runtime/model.h"
#include "runtime/update_encoding.h"

namespace fedberry::server {

class EncodedModelCache {
 public:
  using Encoded = std::vector<runtime::EncodedTensor>;

  // `model` encoded as `encoding`: the copy made for an earlier pull of the
  // same model object when there is one. InvalidArgument as
  // runtime::EncodeModelTensors.
  absl::StatusOr<std::shared_ptr<const Encoded>> Get(
      const std::shared_ptr<const runtime::NamedTensors>& model,
      v1::Encoding encoding);

 private:
  // Two: a round's model and the next one while late pulls of the last
  // round finish. Entries of models gone are dropped first.
  static constexpr size_t kEntries = 2;
  struct Entry {
    std::weak_ptr<const runtime::NamedTensors> model;
    v1::Encoding encoding;
    std::shared_ptr<const Encoded> encoded;
  };
  absl::Mutex mu_;  // held while encoding: concurrent first pulls wait
  std::vector<Entry> entries_ ABSL_GUARDED_BY(mu_);  // oldest first
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ENCODED_MODEL_CACHE_H_
