// Which of a model's tensors a job trains, and so which travel in updates
// (fedberry-server --trainable, TrainingPlan.trainable_tensors). A frozen
// parameter gets no gradient and no optimizer state on the board, is never
// sent, and the server keeps it as it was in the initial model. Every
// buffer (batch norm statistics) travels: a module in training mode updates
// its statistics whether its parameters train or not, they are small, and
// averaging them is what full training does.
// Tensors are those of Model::State: parameters first, then buffers.
// Thread-safety: immutable once made; safe to share.
#ifndef FEDBERRY_RUNTIME_TRAINABLE_SET_H_
#define FEDBERRY_RUNTIME_TRAINABLE_SET_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fedberry/v1/federation.pb.h"
#include "runtime/model.h"

namespace fedberry::runtime {

// The names of the first `parameter_count` tensors of `state` (the model's
// parameters) that `regex` (ECMAScript) matches whole. InvalidArgument when
// the regex does not compile or matches no parameter; the message names the
// regex and lists the parameters.
absl::StatusOr<std::vector<std::string>> ResolveTrainable(
    const NamedTensors& state, size_t parameter_count,
    const std::string& regex);

class TrainableSet {
 public:
  // Every tensor trains and travels.
  TrainableSet() = default;

  // The set of a model whose Model::State is `state` (its first
  // `parameter_count` tensors are parameters) training `trainable`
  // (parameter names; empty: all). InvalidArgument naming a name that is
  // not a parameter of the model (a board given a plan for another model).
  static absl::StatusOr<TrainableSet> Make(
      const NamedTensors& state, size_t parameter_count,
      const std::vector<std::string>& trainable);
  // The same for `plan`'s trainable_tensors on `model`.
  static absl::StatusOr<TrainableSet> OfPlan(const v1::TrainingPlan& plan,
                                             Model& model);

  // No tensor is frozen.
  bool whole() const { return frozen_ == 0; }
  // Per parameter (Model::Parameters() order): whether it trains; empty
  // when every one does.
  std::vector<bool> TrainingParameters() const;

  // The tensors of a whole model (or its specs) that travel in an update,
  // in order. Tensors share storage with `whole_model`.
  NamedTensors Select(const NamedTensors& whole_model) const;
  std::vector<v1::TensorSpec> Select(
      const std::vector<v1::TensorSpec>& whole_model) const;

  // A whole model of `global`'s layout from `update`, which must carry
  // exactly the travelling tensors (names in order; shapes and values are
  // CheckUpdateLayout's to check): frozen tensors share `global`'s storage.
  // InvalidArgument naming a frozen tensor the update carries or a
  // trainable one it lacks.
  absl::StatusOr<NamedTensors> Complete(const NamedTensors& update,
                                        const NamedTensors& global) const;

  // Replaces the frozen tensors of `model` (of `global`'s layout) with
  // copies of `global`'s, bit for bit: an aggregate of equal values need
  // not round back to them.
  void KeepFrozen(const NamedTensors& global, NamedTensors* model) const;

 private:
  std::vector<bool> travels_;  // per tensor of the model; empty: whole
  size_t parameters_ = 0;
  size_t frozen_ = 0;
};

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_TRAINABLE_SET_H_
