// The executable's sgemm_ (runtime/fast_sgemm.cc) against a naive triple
// loop, called directly and through LibTorch, whose calls must reach it.
#include "runtime/fast_sgemm.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <random>
#include <vector>

extern "C" void sgemm_(const char* transa, const char* transb, const int* m,
                       const int* n, const int* k, const float* alpha,
                       const float* a, const int* lda, const float* b,
                       const int* ldb, const float* beta, float* c,
                       const int* ldc);

namespace fedberry::runtime::fast_sgemm_test {
namespace {

// Column-major element (i, j) of op(X), X stored with leading dimension ld.
float At(const std::vector<float>& x, int ld, char trans, int i, int j) {
  return trans == 'N' ? x[i + j * ld] : x[j + i * ld];
}

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

TEST(FastSgemm, MatchesNaiveProductForEveryTransposeAndLeadingDimension) {
  const int m = 7, n = 5, k = 9, pad = 3;
  for (char ta : {'N', 'T', 'n', 't'}) {
    for (char tb : {'N', 'T', 'n', 't'}) {
      const char ua = std::toupper(ta), ub = std::toupper(tb);
      // Column-major storage: op(A) is m x k, so A is m x k or k x m.
      const int lda = (ua == 'N' ? m : k) + pad;
      const int ldb = (ub == 'N' ? k : n) + pad;
      const int ldc = m + pad;
      const auto a = Random(size_t(lda) * (ua == 'N' ? k : m), 1);
      const auto b = Random(size_t(ldb) * (ub == 'N' ? n : k), 2);
      auto c = Random(size_t(ldc) * n, 3);
      const auto c0 = c;
      const float alpha = 1.5f, beta = -0.5f;
      const uint64_t calls = FastSgemmCalls();
      sgemm_(&ta, &tb, &m, &n, &k, &alpha, a.data(), &lda, b.data(), &ldb,
             &beta, c.data(), &ldc);
      EXPECT_EQ(FastSgemmCalls(), calls + 1);
      for (int j = 0; j < n; ++j) {
        for (int i = 0; i < ldc; ++i) {
          if (i >= m) {  // padding rows are left alone
            EXPECT_EQ(c[i + j * ldc], c0[i + j * ldc]);
            continue;
          }
          double want = beta * double(c0[i + j * ldc]);
          for (int p = 0; p < k; ++p) {
            want += alpha * double(At(a, lda, ua, i, p)) *
                    double(At(b, ldb, ub, p, j));
          }
          EXPECT_NEAR(c[i + j * ldc], want, 1e-4)
              << ta << tb << " (" << i << ", " << j << ")";
        }
      }
    }
  }
  EXPECT_EQ(FastSgemmFallbacks(), 0u);
}

TEST(FastSgemm, EmptyInnerDimensionScalesCByBeta) {
  const int m = 2, n = 2, k = 0, ld = 2;
  const float alpha = 1, beta = 2;
  std::vector<float> a(2), b(2), c = {1, 2, 3, 4};
  sgemm_("N", "N", &m, &n, &k, &alpha, a.data(), &ld, b.data(), &ld, &beta,
         c.data(), &ld);
  EXPECT_EQ(c, (std::vector<float>{2, 4, 6, 8}));
  const float zero = 0;
  c = {NAN, 1, 2, 3};
  sgemm_("N", "N", &m, &n, &k, &alpha, a.data(), &ld, b.data(), &ld, &zero,
         c.data(), &ld);
  EXPECT_EQ(c, (std::vector<float>{0, 0, 0, 0}));
}

// Shapes of LeNet-5's linear layers at batch 32, forward (x W^T) and the two
// backward products, plus an addmm with alpha and beta and an mm into an
// output full of NaN (beta 0: C must not be read).
TEST(FastSgemm, LibTorchMatrixProductsReachItAndAreRight) {
  torch::manual_seed(5);
  torch::set_num_threads(1);
  const uint64_t calls = FastSgemmCalls();
  auto check = [](const torch::Tensor& got, const torch::Tensor& want) {
    EXPECT_TRUE(torch::allclose(got, want.to(torch::kFloat), 1e-4, 1e-4))
        << (got - want).abs().max().item<double>();
  };
  const auto x = torch::randn({32, 400});
  const auto w = torch::randn({120, 400});
  const auto g = torch::randn({32, 120});
  check(torch::mm(x, w.t()), torch::mm(x.to(torch::kDouble),
                                       w.t().to(torch::kDouble)));
  check(torch::mm(g, w), torch::mm(g.to(torch::kDouble), w.to(torch::kDouble)));
  check(torch::mm(g.t(), x),
        torch::mm(g.t().to(torch::kDouble), x.to(torch::kDouble)));
  const auto bias = torch::randn({32, 120});
  check(torch::addmm(bias, x, w.t(), /*beta=*/0.5, /*alpha=*/2),
        torch::addmm(bias.to(torch::kDouble), x.to(torch::kDouble),
                     w.t().to(torch::kDouble), 0.5, 2));
  auto out = torch::full({32, 120}, NAN);
  torch::mm_out(out, x, w.t());
  EXPECT_FALSE(out.isnan().any().item<bool>());
  check(out, torch::mm(x.to(torch::kDouble), w.t().to(torch::kDouble)));
  EXPECT_GE(FastSgemmCalls(), calls + 5);
  EXPECT_EQ(FastSgemmFallbacks(), 0u);
}

// A training step of a linear layer (forward, backward, SGD) goes through it.
TEST(FastSgemm, LinearLayerTrainingStepReachesIt) {
  torch::manual_seed(6);
  torch::nn::Linear fc(84, 10);
  torch::optim::SGD sgd(fc->parameters(), torch::optim::SGDOptions(0.1));
  const uint64_t calls = FastSgemmCalls();
  auto loss = torch::nn::functional::cross_entropy(
      fc->forward(torch::randn({32, 84})), torch::randint(0, 10, {32}));
  loss.backward();
  sgd.step();
  EXPECT_GE(FastSgemmCalls(), calls + 2);  // forward and weight gradient
}

}  // namespace
}  // namespace fedberry::runtime::fast_sgemm_test
