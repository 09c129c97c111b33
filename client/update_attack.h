// A test-only poisoned update, for measuring robust aggregation against
// misbehaving boards (fedberry-client --attack, fedberry-sim --attackers):
// the board trains honestly, then sends global + factor * (trained - global)
// instead of its trained model. `scale:F` multiplies the update by F,
// `signflip` reverses it (factor -1) and `signflip:F` reverses and scales it.
// Thread-safety: plain values and pure functions.
#ifndef FEDBERRY_CLIENT_UPDATE_ATTACK_H_
#define FEDBERRY_CLIENT_UPDATE_ATTACK_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/model.h"

namespace fedberry::client {

struct UpdateAttack {
  double factor = 1;
  std::string spec;  // as given, for the log
};

// "" -> no attack; otherwise `scale:F` or `signflip[:F]` with a finite,
// non-zero F; anything else is InvalidArgument naming the spec.
absl::StatusOr<std::optional<UpdateAttack>> ParseUpdateAttack(
    absl::string_view spec);

// `model` (trained from `global`, same layout) turned into the attack's
// update: each floating tensor becomes global + factor * (model - global) in
// new storage (the trainer's parameters are not touched); other tensors are
// kept. InvalidArgument when the layouts differ.
absl::Status ApplyUpdateAttack(const UpdateAttack& attack,
                               const runtime::NamedTensors& global,
                               runtime::NamedTensors* model);

}  // namespace fedberry::client

#endif  // FEDBERRY_CLIENT_UPDATE_ATTACK_H_
