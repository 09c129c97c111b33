// Every sample of a Dataset at once, for tests that compare what a source
// reads with what its files hold.
#ifndef FEDBERRY_RUNTIME_TESTING_READ_ALL_H_
#define FEDBERRY_RUNTIME_TESTING_READ_ALL_H_

#include <numeric>
#include <vector>

#include "runtime/dataset.h"

namespace fedberry::runtime::testing {

struct Samples {
  std::vector<float> inputs;
  std::vector<float> labels;
};

// Every sample of `data`, in order.
inline Samples ReadAll(const Dataset& data) {
  const int64_t values = data.SampleValues();
  std::vector<int64_t> rows(data.size());
  std::iota(rows.begin(), rows.end(), 0);
  Samples s;
  s.inputs.resize(rows.size() * values);
  s.labels.resize(rows.size());
  data.Read(rows.data(), data.size(), s.inputs.data(), s.labels.data());
  return s;
}

}  // namespace fedberry::runtime::testing

#endif  // FEDBERRY_RUNTIME_TESTING_READ_ALL_H_
