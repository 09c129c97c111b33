// The built-in networks, made by name for a plan's input shape and output
// count: the networks a job can use without exporting its own.
// Thread-safety: pure functions.
#ifndef FEDBERRY_RUNTIME_MODEL_ZOO_H_
#define FEDBERRY_RUNTIME_MODEL_ZOO_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/model.h"

namespace fedberry::runtime {

// "lenet5" (LeNet-5 for [C, H, W] images, H and W >= 16; 61k parameters on
// 1x28x28), "resnet8" (a CIFAR-style ResNet-8 with batch norm for [C, H, W]
// images, 78k parameters), "mlp" (inputs-32-outputs, for tests),
// "wide-mlp" (inputs-1536-outputs, ~4.8 MB on 1x28x28, beyond gRPC's 4 MB
// message limit), "tabular-mlp" (inputs-64-64-outputs, for rows of
// features).
std::vector<std::string> ZooModelNames();
bool IsZooModel(const std::string& name);

// A freshly initialised zoo model; weights come from torch's global RNG, so
// callers seed it (torch::manual_seed) for reproducible weights.
// InvalidArgument for an unknown name or a shape the network cannot take.
absl::StatusOr<std::unique_ptr<Model>> MakeZooModel(
    const std::string& name, const std::vector<int64_t>& input_shape,
    int64_t outputs);

// Today's default job: `name` on 1x28x28 images with 10 classes.
absl::StatusOr<std::unique_ptr<Model>> MakeImageModel(const std::string& name);

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_MODEL_ZOO_H_
