#include "server/strategy/update_layout.h"

#include <ATen/ATen.h>

#include "absl/strings/str_cat.h"
#include "runtime/tensor_codec.h"

namespace fedberry::server {

absl::Status CheckUpdateLayout(const runtime::NamedTensors& reference,
                               const runtime::NamedTensors& update) {
  if (update.size() != reference.size()) {
    return absl::InvalidArgumentError(absl::StrCat("update has ", update.size(),
                                                   " tensors; the model has ",
                                                   reference.size()));
  }
  for (size_t i = 0; i < update.size(); ++i) {
    const auto& got = update[i];
    const auto& want = reference[i];
    if (got.name != want.name) {
      return absl::InvalidArgumentError(
          absl::StrCat("update tensor ", i, " is named '", got.name,
                       "'; the model has '", want.name, "'"));
    }
    if (!got.tensor.sizes().equals(want.tensor.sizes())) {
      return absl::InvalidArgumentError(
          absl::StrCat("update tensor '", got.name, "' has shape ",
                       c10::str(got.tensor.sizes()), "; the model has ",
                       c10::str(want.tensor.sizes())));
    }
    if (got.tensor.scalar_type() != want.tensor.scalar_type()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "update tensor '", got.name, "' has dtype ",
          c10::toString(got.tensor.scalar_type()), "; the model has ",
          c10::toString(want.tensor.scalar_type())));
    }
  }
  return runtime::CheckFinite(update);
}

}  // namespace fedberry::server
