// Helpers for tests that need files: a fresh temporary folder per test and
// writers for small IDX files (plain or gzip).
#ifndef FEDBERRY_TESTS_TEST_FILES_H_
#define FEDBERRY_TESTS_TEST_FILES_H_

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fedberry::testing {

// A temporary folder removed at destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "fedberry-test-XXXXXX")
            .string();
    path_ = mkdtemp(tmpl.data());
  }
  // Kept when the test failed, so the logs its messages point to are there.
  ~TempDir() {
    if (::testing::Test::HasFailure()) {
      std::fprintf(stderr, "kept %s for the failed test\n", path_.c_str());
      return;
    }
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const {
    return path_ + "/" + name;
  }

 private:
  std::string path_;
};

// Lines of the text file at `path` that contain `needle` (0 for a missing
// file).
inline int CountLines(const std::string& path, const std::string& needle) {
  std::ifstream in(path);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) n += line.find(needle) != std::string::npos;
  return n;
}

// The bytes of an IDX file of unsigned bytes with the given dims.
inline std::string IdxBytes(const std::vector<int64_t>& dims,
                            const std::vector<uint8_t>& data) {
  std::string out = {0, 0, 0x08, static_cast<char>(dims.size())};
  for (int64_t d : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) {
      out.push_back(static_cast<char>((d >> shift) & 0xff));
    }
  }
  out.append(data.begin(), data.end());
  return out;
}

inline void WriteFile(const std::string& path, const std::string& bytes,
                      bool gzip) {
  if (gzip) {
    gzFile f = gzopen(path.c_str(), "wb");
    gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(f);
  } else {
    std::ofstream(path, std::ios::binary) << bytes;
  }
}

// Writes a tiny image data set (rows images of h x w, labels i % 10, pixel
// values derived from the row) as the four Fashion-MNIST file names in dir.
inline void WriteTinyDataset(const std::string& dir, int64_t rows,
                             int64_t h = 28, int64_t w = 28) {
  std::filesystem::create_directories(dir);
  for (const char* split : {"train", "t10k"}) {
    std::vector<uint8_t> images(rows * h * w), labels(rows);
    for (int64_t r = 0; r < rows; ++r) {
      labels[r] = static_cast<uint8_t>(r % 10);
      for (int64_t j = 0; j < h * w; ++j) {
        // A class-dependent stripe makes the task learnable.
        images[r * h * w + j] =
            static_cast<uint8_t>((j % w) / 3 == labels[r] ? 200 : (r + j) % 50);
      }
    }
    WriteFile(dir + "/" + split + "-images-idx3-ubyte.gz",
              IdxBytes({rows, h, w}, images), true);
    WriteFile(dir + "/" + split + "-labels-idx1-ubyte.gz",
              IdxBytes({rows}, labels), true);
  }
}

}  // namespace fedberry::testing

#endif  // FEDBERRY_TESTS_TEST_FILES_H_
