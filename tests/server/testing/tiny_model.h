// A one-tensor model for the round core's tests: "w", two values equal to
// `w`, so an aggregate's result reads as one number.
#ifndef FEDBERRY_TESTS_SERVER_TINY_MODEL_H_
#define FEDBERRY_TESTS_SERVER_TINY_MODEL_H_

#include <ATen/ATen.h>

#include <memory>

#include "runtime/model.h"

namespace fedberry::server {

inline std::shared_ptr<const runtime::NamedTensors> TinyModel(float w) {
  return std::make_shared<const runtime::NamedTensors>(
      runtime::NamedTensors{{"w", at::full({2}, w)}});
}

}  // namespace fedberry::server

#endif  // FEDBERRY_TESTS_SERVER_TINY_MODEL_H_
