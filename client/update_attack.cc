#include "client/update_attack.h"

#include <ATen/ATen.h>

#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace fedberry::client {

absl::StatusOr<std::optional<UpdateAttack>> ParseUpdateAttack(
    absl::string_view spec) {
  if (spec.empty()) return std::nullopt;
  const auto refuse = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "--attack='", spec,
        "': expected scale:F or signflip[:F] with a finite, non-zero F"));
  };
  absl::string_view rest = spec;
  double sign = 1;
  if (absl::ConsumePrefix(&rest, "signflip")) {
    sign = -1;
    if (rest.empty()) return UpdateAttack{-1, std::string(spec)};
    if (!absl::ConsumePrefix(&rest, ":")) return refuse();
  } else if (!absl::ConsumePrefix(&rest, "scale:")) {
    return refuse();
  }
  double factor = 0;
  if (!absl::SimpleAtod(rest, &factor) || !std::isfinite(factor) ||
      factor == 0) {
    return refuse();
  }
  return UpdateAttack{sign * factor, std::string(spec)};
}

absl::Status ApplyUpdateAttack(const UpdateAttack& attack,
                               const runtime::NamedTensors& global,
                               runtime::NamedTensors* model) {
  if (model->size() != global.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("attack: trained model has ", model->size(),
                     " tensors, the global model ", global.size()));
  }
  for (size_t i = 0; i < model->size(); ++i) {
    runtime::NamedTensor& t = (*model)[i];
    if (!t.tensor.is_floating_point()) continue;
    if (global[i].name != t.name ||
        !global[i].tensor.sizes().equals(t.tensor.sizes())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "attack: tensor '", t.name, "' differs from the global model's"));
    }
    t.tensor = global[i].tensor + attack.factor * (t.tensor - global[i].tensor);
  }
  return absl::OkStatus();
}

}  // namespace fedberry::client
