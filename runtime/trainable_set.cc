#include "runtime/trainable_set.h"

#include <ATen/ATen.h>

#include <regex>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace fedberry::runtime {
namespace {

std::string ParameterList(const NamedTensors& state, size_t parameters) {
  std::vector<std::string> names;
  for (size_t i = 0; i < parameters && i < state.size(); ++i) {
    names.push_back(state[i].name);
  }
  return absl::StrJoin(names, ", ");
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ResolveTrainable(
    const NamedTensors& state, size_t parameter_count,
    const std::string& regex) {
  std::regex pattern;
  try {
    pattern = std::regex(regex, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--trainable=", regex, " is not a regular expression: ", e.what()));
  }
  std::vector<std::string> names;
  for (size_t i = 0; i < parameter_count && i < state.size(); ++i) {
    if (std::regex_match(state[i].name, pattern)) {
      names.push_back(state[i].name);
    }
  }
  if (names.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--trainable=", regex,
        " matches no parameter of the model (it must match a whole name); "
        "its parameters are: ",
        ParameterList(state, parameter_count)));
  }
  return names;
}

absl::StatusOr<TrainableSet> TrainableSet::Make(
    const NamedTensors& state, size_t parameter_count,
    const std::vector<std::string>& trainable) {
  TrainableSet set;
  if (trainable.empty()) return set;
  std::set<std::string> wanted(trainable.begin(), trainable.end());
  set.parameters_ = std::min(parameter_count, state.size());
  set.travels_.assign(state.size(), true);
  for (size_t i = 0; i < set.parameters_; ++i) {
    if (wanted.erase(state[i].name) == 0) {
      set.travels_[i] = false;
      ++set.frozen_;
    }
  }
  if (!wanted.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the plan trains '", *wanted.begin(),
                     "', which is no parameter of this model (its parameters: ",
                     ParameterList(state, parameter_count), ")"));
  }
  return set;
}

absl::StatusOr<TrainableSet> TrainableSet::OfPlan(const v1::TrainingPlan& plan,
                                                  Model& model) {
  return Make(
      model.State(), model.Parameters().size(),
      {plan.trainable_tensors().begin(), plan.trainable_tensors().end()});
}

std::vector<bool> TrainableSet::TrainingParameters() const {
  if (whole()) return {};
  return std::vector<bool>(travels_.begin(), travels_.begin() + parameters_);
}

NamedTensors TrainableSet::Select(const NamedTensors& whole_model) const {
  if (whole()) return whole_model;
  NamedTensors out;
  for (size_t i = 0; i < whole_model.size() && i < travels_.size(); ++i) {
    if (travels_[i]) out.push_back(whole_model[i]);
  }
  return out;
}

std::vector<v1::TensorSpec> TrainableSet::Select(
    const std::vector<v1::TensorSpec>& whole_model) const {
  if (whole()) return whole_model;
  std::vector<v1::TensorSpec> out;
  for (size_t i = 0; i < whole_model.size() && i < travels_.size(); ++i) {
    if (travels_[i]) out.push_back(whole_model[i]);
  }
  return out;
}

absl::StatusOr<NamedTensors> TrainableSet::Complete(
    const NamedTensors& update, const NamedTensors& global) const {
  if (whole()) return update;
  NamedTensors out;
  out.reserve(global.size());
  size_t k = 0;  // into update
  for (size_t i = 0; i < global.size(); ++i) {
    const bool travels = i < travels_.size() && travels_[i];
    if (k < update.size() && update[k].name == global[i].name) {
      if (!travels) {
        return absl::InvalidArgumentError(absl::StrCat(
            "update carries '", global[i].name,
            "', which the plan freezes (--trainable): updates carry only "
            "trainable parameters and buffers"));
      }
      out.push_back(update[k++]);
    } else if (travels) {
      return absl::InvalidArgumentError(
          absl::StrCat("update lacks '", global[i].name,
                       "', which the plan trains (--trainable)"));
    } else {
      out.push_back(global[i]);
    }
  }
  if (k < update.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("update carries '", update[k].name,
                     "', which is not a tensor of the model where it stands"));
  }
  return out;
}

void TrainableSet::KeepFrozen(const NamedTensors& global,
                              NamedTensors* model) const {
  for (size_t i = 0;
       i < travels_.size() && i < global.size() && i < model->size(); ++i) {
    if (!travels_[i]) (*model)[i].tensor = global[i].tensor.clone();
  }
}

}  // namespace fedberry::runtime
