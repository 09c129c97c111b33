#include "server/encoded_model_cache.h"

#include <algorithm>
#include <utility>

#include "base/status_macros.h"
#include "runtime/tensor_codec.h"

namespace fedberry::server {
namespace {

bool SameObject(const std::weak_ptr<const runtime::NamedTensors>& a,
                const std::shared_ptr<const runtime::NamedTensors>& b) {
  return !a.owner_before(b) && !b.owner_before(a);
}

}  // namespace

absl::StatusOr<std::shared_ptr<const EncodedModelCache::Encoded>>
EncodedModelCache::Get(
    const std::shared_ptr<const runtime::NamedTensors>& model,
    v1::Encoding encoding) {
  absl::MutexLock lock(&mu_);
  for (const Entry& e : entries_) {
    if (e.encoding == encoding && SameObject(e.model, model)) return e.encoded;
  }
  FEDBERRY_ASSIGN_OR_RETURN(Encoded encoded,
                            runtime::EncodeModelTensors(*model, encoding));
  // The encoded RAW tensors share the model's storage: keep none of a
  // model the coordinator has let go.
  entries_.erase(
      std::remove_if(entries_.begin(), entries_.end(),
                     [](const Entry& e) { return e.model.expired(); }),
      entries_.end());
  if (entries_.size() >= kEntries) entries_.erase(entries_.begin());
  auto shared = std::make_shared<const Encoded>(std::move(encoded));
  entries_.push_back({model, encoding, shared});
  return shared;
}

}  // namespace fedberry::server
