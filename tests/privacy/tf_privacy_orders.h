// The Rényi orders of TF Privacy's compute_dp_sgd_privacy
// (tensorflow_privacy/privacy/analysis/compute_dp_sgd_privacy_lib.py), at
// which the golden epsilons of its test_compute_dp_sgd_privacy were
// computed (tests/privacy/rdp_test.cc).
#ifndef FEDBERRY_TESTS_PRIVACY_TF_PRIVACY_ORDERS_H_
#define FEDBERRY_TESTS_PRIVACY_TF_PRIVACY_ORDERS_H_

#include <vector>

namespace fedberry::privacy {

inline std::vector<double> TfPrivacyOrders() {
  std::vector<double> orders = {1.25, 1.5, 1.75, 2.0, 2.25,
                                2.5,  3.0, 3.5,  4.0, 4.5};
  for (int order = 5; order < 64; ++order) orders.push_back(order);
  for (double order : {128.0, 256.0, 512.0}) orders.push_back(order);
  return orders;
}

}  // namespace fedberry::privacy

#endif  // FEDBERRY_TESTS_PRIVACY_TF_PRIVACY_ORDERS_H_
