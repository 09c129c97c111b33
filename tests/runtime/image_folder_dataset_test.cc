#include "runtime/image_folder_dataset.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
// Declarations only: Debian's libstb.so holds the implementations.
#include <stb/stb_image_write.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/testing/read_all.h"
#include "tests/test_files.h"

namespace fedberry::runtime::image_folder_dataset_test {
namespace {

using ::fedberry::testing::TempDir;

// A w x h PNG of `channels` (1 gray, 3 RGB) with every pixel `pixel`.
void WritePng(const std::string& path, int w, int h,
              const std::vector<uint8_t>& pixel) {
  std::filesystem::create_directories(
      std::filesystem::path(path).parent_path());
  const int channels = static_cast<int>(pixel.size());
  std::vector<uint8_t> data;
  for (int i = 0; i < w * h; ++i) {
    data.insert(data.end(), pixel.begin(), pixel.end());
  }
  ASSERT_NE(
      stbi_write_png(path.c_str(), w, h, channels, data.data(), w * channels),
      0)
      << path;
}

void WriteText(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(
      std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

DataBinding Shape(int64_t c, int64_t h, int64_t w) {
  DataBinding b;
  b.input_shape = {c, h, w};
  return b;
}

using ::fedberry::runtime::testing::ReadAll;
using ::fedberry::runtime::testing::Samples;

std::unique_ptr<Dataset> OpenOk(const std::string& dir,
                                const DataBinding& binding,
                                const DataOpenOptions& options = {}) {
  auto data = OpenImageFolderDataset(dir, binding, options);
  EXPECT_TRUE(data.ok()) << data.status();
  return data.ok() ? *std::move(data) : nullptr;
}

std::string OpenError(
    const std::string& dir, const DataBinding& binding,
    absl::StatusCode code = absl::StatusCode::kInvalidArgument) {
  auto data = OpenImageFolderDataset(dir, binding, {});
  if (data.ok()) return "";
  EXPECT_EQ(data.status().code(), code) << data.status();
  return std::string(data.status().message());
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// 4x4 gray images whose pixels are their folder's first letter.
void WriteClasses(const std::string& root,
                  const std::vector<std::pair<std::string, int>>& classes) {
  for (const auto& [name, count] : classes) {
    std::filesystem::create_directories(root + "/" + name);
    for (int i = 0; i < count; ++i) {
      WritePng(absl::StrCat(root, "/", name, "/img", i, ".png"), 4, 4,
               {static_cast<uint8_t>(name[0])});
    }
  }
}

TEST(ImageFolderDataset, ClassesAreSortedFolderNames) {
  TempDir dir;
  // Byte-wise order: "Zebra" < "cat" < "dog" (upper case sorts first).
  WriteClasses(dir.path(), {{"dog", 2}, {"cat", 3}, {"Zebra", 1}});
  // Skipped: a dot-folder, a top-level file, non-image files, dot-files.
  WritePng(dir / ".hidden/x.png", 4, 4, {1});
  WriteText(dir / "README.txt", "not a class");
  WriteText(dir / "cat/notes.txt", "not an image");
  WritePng(dir / "cat/.thumb.png", 4, 4, {1});
  auto data = OpenOk(dir.path(), Shape(1, 4, 4));
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(data->size(), 6);
  EXPECT_EQ(data->label_count(), 3);
  EXPECT_EQ(data->sample_shape(), (std::vector<int64_t>{1, 4, 4}));
  EXPECT_EQ(data->lendable(), nullptr);
  Samples s = ReadAll(*data);
  EXPECT_EQ(s.labels, (std::vector<float>{0, 1, 1, 1, 2, 2}));
  // Every image's pixels are its folder's first letter.
  const std::string first_letters = "Zcccdd";
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 16; ++j) {
      ASSERT_FLOAT_EQ(s.inputs[i * 16 + j],
                      static_cast<uint8_t>(first_letters[i]) / 255.0f)
          << i << " " << j;
    }
  }
  EXPECT_TRUE(Contains(data->Describe(),
                       absl::StrCat("images ", dir.path(),
                                    ": 6 images, 3 "
                                    "classes (Zebra, cat, dog), 1x4x4")))
      << data->Describe();
}

TEST(ImageFolderDataset, AcceptsJpegAndUpperCaseExtensions) {
  TempDir dir;
  std::filesystem::create_directories(dir / "a");
  const std::vector<uint8_t> gray(8 * 8, 128);
  ASSERT_NE(
      stbi_write_jpg((dir / "a/one.JPG").c_str(), 8, 8, 1, gray.data(), 95), 0);
  ASSERT_NE(
      stbi_write_jpg((dir / "a/two.jpeg").c_str(), 8, 8, 1, gray.data(), 95),
      0);
  WritePng(dir / "a/three.PNG", 8, 8, {128});
  WritePng(dir / "a/four.gif", 8, 8, {128});  // wrong extension: skipped
  auto data = OpenOk(dir.path(), Shape(1, 8, 8));
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(data->size(), 3);
  for (float v : ReadAll(*data).inputs)
    EXPECT_NEAR(v, 128 / 255.0f, 3 / 255.0f);
}

TEST(ImageFolderDataset, ResizesToTheInputShape) {
  TempDir dir;
  WritePng(dir / "only/big.png", 40, 30, {200});
  WritePng(dir / "only/small.png", 2, 3, {50});
  auto data = OpenOk(dir.path(), Shape(1, 5, 6));
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(data->sample_shape(), (std::vector<int64_t>{1, 5, 6}));
  Samples s = ReadAll(*data);
  ASSERT_EQ(s.inputs.size(), 2u * 30);
  // A uniform image stays uniform whatever the resize.
  for (int j = 0; j < 30; ++j) {
    EXPECT_NEAR(s.inputs[j], 200 / 255.0f, 1 / 255.0f) << j;
    EXPECT_NEAR(s.inputs[30 + j], 50 / 255.0f, 1 / 255.0f) << j;
  }
}

TEST(ImageFolderDataset, ChannelsAreForcedAndPlanar) {
  TempDir dir;
  WritePng(dir / "c/gray.png", 3, 2, {100});
  WritePng(dir / "c/rgb.png", 3, 2, {255, 0, 0});
  // Three channels: gray is replicated; channel-planar, so each plane of
  // 3x2 values holds one channel.
  auto rgb = OpenOk(dir.path(), Shape(3, 2, 3));
  ASSERT_NE(rgb, nullptr);
  Samples s = ReadAll(*rgb);
  ASSERT_EQ(s.inputs.size(), 2u * 18);
  for (int j = 0; j < 18; ++j) EXPECT_FLOAT_EQ(s.inputs[j], 100 / 255.0f);
  for (int j = 0; j < 6; ++j) {
    EXPECT_FLOAT_EQ(s.inputs[18 + j], 1.0f);       // red plane
    EXPECT_FLOAT_EQ(s.inputs[18 + 6 + j], 0.0f);   // green plane
    EXPECT_FLOAT_EQ(s.inputs[18 + 12 + j], 0.0f);  // blue plane
  }
  // One channel: RGB becomes stb's luminance (77 r + 150 g + 29 b) >> 8.
  auto gray = OpenOk(dir.path(), Shape(1, 2, 3));
  ASSERT_NE(gray, nullptr);
  s = ReadAll(*gray);
  ASSERT_EQ(s.inputs.size(), 2u * 6);
  for (int j = 0; j < 6; ++j) {
    EXPECT_FLOAT_EQ(s.inputs[j], 100 / 255.0f);
    EXPECT_FLOAT_EQ(s.inputs[6 + j], 76 / 255.0f);
  }
}

TEST(ImageFolderDataset, NormalisesPerChannel) {
  TempDir dir;
  WritePng(dir / "c/rgb.png", 2, 2, {255, 51, 0});
  DataBinding b = Shape(3, 2, 2);
  b.mean = {0.5f, 0.2f, 0.0f};
  b.std = {0.5f, 0.1f, 2.0f};
  auto data = OpenOk(dir.path(), b);
  ASSERT_NE(data, nullptr);
  Samples s = ReadAll(*data);
  for (int j = 0; j < 4; ++j) {
    EXPECT_FLOAT_EQ(s.inputs[j], 1.0f);
    EXPECT_NEAR(s.inputs[4 + j], 0.0f, 1e-6);
    EXPECT_FLOAT_EQ(s.inputs[8 + j], 0.0f);
  }
  b.mean = {0.5f};
  b.std = {0.25f};
  data = OpenOk(dir.path(), b);
  ASSERT_NE(data, nullptr);
  EXPECT_FLOAT_EQ(ReadAll(*data).inputs[0], 2.0f);
  EXPECT_FLOAT_EQ(ReadAll(*data).inputs[8], -2.0f);
  b.mean = {0.1f, 0.2f};
  EXPECT_TRUE(Contains(OpenError(dir.path(), b), "one per channel (3)"));
}

TEST(ImageFolderDataset, CorruptImageIsNamed) {
  TempDir dir;
  WritePng(dir / "cat/good.png", 4, 4, {1});
  WriteText(dir / "cat/bad.png", "this is not a png");
  const std::string error = OpenError(dir.path(), Shape(1, 4, 4));
  EXPECT_TRUE(Contains(error, dir / "cat/bad.png does not decode: ")) << error;
  // stb's reason follows.
  EXPECT_GT(error.size(), error.find("does not decode: ") + 17) << error;
  // No cache is left behind by the failed build.
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(e.path().filename().string().find(".fedberry-"),
              std::string::npos);
  }
}

TEST(ImageFolderDataset, EmptyClassFolderCountsNoImagesIsAnError) {
  TempDir dir;
  std::filesystem::create_directories(dir / "a");
  std::filesystem::create_directories(dir / "b");
  WriteText(dir / "b/readme.md", "no images here");
  EXPECT_TRUE(Contains(OpenError(dir.path(), Shape(1, 4, 4)),
                       "has no images (.png, .jpg, .jpeg) in its 2 class "
                       "folders"));
  WritePng(dir / "b/x.png", 4, 4, {7});
  auto data = OpenOk(dir.path(), Shape(1, 4, 4));
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(data->label_count(), 2);
  EXPECT_EQ(ReadAll(*data).labels, std::vector<float>{1});

  TempDir empty;
  EXPECT_TRUE(Contains(OpenError(empty.path(), Shape(1, 4, 4)),
                       "has no class folders"));
  EXPECT_TRUE(Contains(
      OpenError(empty / "missing", Shape(1, 4, 4), absl::StatusCode::kNotFound),
      "does not exist"));
}

TEST(ImageFolderDataset, NeedsAChannelsHeightWidthShape) {
  TempDir dir;
  WritePng(dir / "a/x.png", 4, 4, {7});
  DataBinding b;
  EXPECT_EQ(OpenError(dir.path(), b),
            absl::StrCat("images:", dir.path(),
                         " needs --input_shape=C,H,W (C 1 or 3, H and W 1 to "
                         "16384); the plan says none"));
  b.input_shape = {28, 28};
  EXPECT_TRUE(Contains(OpenError(dir.path(), b), "the plan says 28,28"));
  b.input_shape = {2, 8, 8};
  EXPECT_TRUE(Contains(OpenError(dir.path(), b), "needs --input_shape=C,H,W"));
  b.input_shape = {1, 0, 8};
  EXPECT_TRUE(Contains(OpenError(dir.path(), b), "needs --input_shape=C,H,W"));
  b = Shape(1, 4, 4);
  b.task = TaskKind::kRegression;
  EXPECT_TRUE(
      Contains(OpenError(dir.path(), b), "the task must be classification"));
}

TEST(ImageFolderDataset, SecondOpenReusesTheCacheAChangeRebuildsIt) {
  TempDir dir;
  WriteClasses(dir.path(), {{"a", 2}, {"b", 1}});
  auto first = OpenOk(dir.path(), Shape(1, 4, 4));
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(Contains(first->Describe(), ", built)")) << first->Describe();
  std::vector<std::string> caches;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    caches.push_back(e.path().filename().string());
  }
  std::sort(caches.begin(), caches.end());
  // Beside the class folders, one uint8 record per image: 16 bytes each.
  ASSERT_EQ(caches.size(), 3u);
  EXPECT_EQ(caches[0].rfind(".fedberry-", 0), 0u) << caches[0];
  const auto cache_size = std::filesystem::file_size(dir / caches[0]);
  EXPECT_LT(cache_size, 64u + 3 * 16 + 200);

  auto second = OpenOk(dir.path(), Shape(1, 4, 4));
  ASSERT_NE(second, nullptr);
  EXPECT_TRUE(Contains(second->Describe(), ", reused)")) << second->Describe();
  EXPECT_EQ(ReadAll(*second).labels, ReadAll(*first).labels);
  EXPECT_EQ(ReadAll(*second).inputs, ReadAll(*first).inputs);

  // Another shape is another cache; so is a new image.
  auto resized = OpenOk(dir.path(), Shape(3, 2, 2));
  ASSERT_NE(resized, nullptr);
  EXPECT_TRUE(Contains(resized->Describe(), ", built)"));
  WritePng(dir / "b/new.png", 4, 4, {9});
  auto grown = OpenOk(dir.path(), Shape(1, 4, 4));
  ASSERT_NE(grown, nullptr);
  EXPECT_TRUE(Contains(grown->Describe(), ", built)")) << grown->Describe();
  EXPECT_EQ(grown->size(), 4);
  EXPECT_EQ(ReadAll(*grown).labels, (std::vector<float>{0, 0, 1, 1}));
}

TEST(ImageFolderDataset, ReusedCacheIsNotDecodedAgain) {
  TempDir dir;
  WritePng(dir / "a/x.png", 4, 4, {40});
  auto first = OpenOk(dir.path(), Shape(1, 4, 4));
  ASSERT_NE(first, nullptr);
  // Same size and mtime, other pixels: only a decode would notice.
  const std::string path = dir / "a/x.png";
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  WritePng(dir / "a/y.png", 4, 4, {90});
  ASSERT_EQ(std::filesystem::file_size(dir / "a/y.png"),
            static_cast<uintmax_t>(st.st_size));
  std::filesystem::rename(dir / "a/y.png", path);
  const struct timespec times[2] = {st.st_atim, st.st_mtim};
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  auto second = OpenOk(dir.path(), Shape(1, 4, 4));
  ASSERT_NE(second, nullptr);
  EXPECT_TRUE(Contains(second->Describe(), ", reused)")) << second->Describe();
  EXPECT_FLOAT_EQ(ReadAll(*second).inputs[0], 40 / 255.0f);
}

TEST(ImageFolderDataset, PartitionsAreDisjointAndCover) {
  TempDir dir;
  // 21 images, each with its own pixel value 1..21; its class is known.
  const std::vector<std::pair<std::string, int>> classes = {
      {"a", 7}, {"b", 5}, {"c", 9}};
  std::map<int, float> class_of_pixel;
  int pixel = 0;
  for (size_t k = 0; k < classes.size(); ++k) {
    for (int i = 0; i < classes[k].second; ++i) {
      ++pixel;
      WritePng(absl::StrCat(dir.path(), "/", classes[k].first, "/", i, ".png"),
               4, 4, {static_cast<uint8_t>(pixel)});
      class_of_pixel[pixel] = static_cast<float>(k);
    }
  }
  for (auto kind :
       {PartitionSpec::Kind::kIid, PartitionSpec::Kind::kDirichlet}) {
    std::multiset<int> seen;
    for (int shard = 0; shard < 3; ++shard) {
      PartitionSpec spec;
      spec.kind = kind;
      spec.index = shard;
      spec.count = 3;
      DataOpenOptions options;
      options.partition = &spec;
      auto data = OpenOk(dir.path(), Shape(1, 4, 4), options);
      ASSERT_NE(data, nullptr);
      EXPECT_EQ(data->label_count(), 3);
      Samples s = ReadAll(*data);
      for (int64_t i = 0; i < data->size(); ++i) {
        const int p = static_cast<int>(std::lround(s.inputs[i * 16] * 255));
        seen.insert(p);
        // The label still matches the image's folder.
        EXPECT_EQ(s.labels[i], class_of_pixel[p]) << p;
      }
      if (kind == PartitionSpec::Kind::kIid) {
        EXPECT_TRUE(Contains(data->Describe(),
                             absl::StrCat(data->size(), " of 21 images (shard ",
                                          shard + 1, " of 3, iid)")))
            << data->Describe();
      }
    }
    // Together the shards hold every image exactly once.
    std::multiset<int> all;
    for (int p = 1; p <= 21; ++p) all.insert(p);
    EXPECT_EQ(seen, all);
  }
}

}  // namespace
}  // namespace fedberry::runtime::image_folder_dataset_test
