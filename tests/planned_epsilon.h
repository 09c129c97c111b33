// What fedberry-dp says a job spends, for end-to-end tests that check a
// server's logged epsilon against it.
#ifndef FEDBERRY_TESTS_PLANNED_EPSILON_H_
#define FEDBERRY_TESTS_PLANNED_EPSILON_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "tests/run_command.h"

namespace fedberry::testing {

// fedberry-dp's epsilon (in `bin`) after `steps` rounds of (q, z) at delta
// 1e-5; -1 when it printed none.
inline double PlannedEpsilon(const std::string& bin, double q, double z,
                             int64_t steps) {
  int code = 0;
  const std::string out =
      RunCommand(absl::StrCat(bin, "/fedberry-dp epsilon --sampling_rate=", q,
                              " --noise_multiplier=", z, " --steps=", steps,
                              " --delta=1e-5"),
                 &code);
  EXPECT_EQ(code, 0) << out;
  const size_t at = out.rfind("epsilon=");
  EXPECT_NE(at, std::string::npos) << out;
  return at == std::string::npos ? -1 : std::stod(out.substr(at + 8));
}

}  // namespace fedberry::testing

#endif  // FEDBERRY_TESTS_PLANNED_EPSILON_H_
