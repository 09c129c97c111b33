// Helpers for the pki tests: a StatusOr assertion shaped like newer
// Abseil's (absent from Abseil 20220623), file modes and contents.
#ifndef FEDBERRY_TESTS_PKI_PKI_TEST_UTIL_H_
#define FEDBERRY_TESTS_PKI_PKI_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <string>

#define FEDBERRY_PKI_CONCAT_INNER(a, b) a##b
#define FEDBERRY_PKI_CONCAT(a, b) FEDBERRY_PKI_CONCAT_INNER(a, b)
// ASSERT_OK_AND_ASSIGN(auto x, F()): fails the test (and returns) unless
// F() is OK, then moves its value into x.
#define ASSERT_OK_AND_ASSIGN(lhs, expr)                       \
  auto FEDBERRY_PKI_CONCAT(status_or_, __LINE__) = (expr);    \
  ASSERT_TRUE(FEDBERRY_PKI_CONCAT(status_or_, __LINE__).ok()) \
      << FEDBERRY_PKI_CONCAT(status_or_, __LINE__).status();  \
  lhs = *std::move(FEDBERRY_PKI_CONCAT(status_or_, __LINE__))
#define EXPECT_OK(expr)                                             \
  do {                                                              \
    const auto& status_for_expect_ok = (expr);                      \
    EXPECT_TRUE(status_for_expect_ok.ok()) << status_for_expect_ok; \
  } while (false)

namespace fedberry::testing {

// The permission bits of `path`; -1 when it does not exist.
inline int ModeOf(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return -1;
  return static_cast<int>(st.st_mode & 07777);
}

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

inline void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// Sets the process umask for the scope (mode bits are what the tests check).
class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : old_(::umask(mask)) {}
  ~ScopedUmask() { ::umask(old_); }

 private:
  mode_t old_;
};

}  // namespace fedberry::testing

#endif  // FEDBERRY_TESTS_PKI_PKI_TEST_UTIL_H_
