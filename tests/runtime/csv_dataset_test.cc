#include "runtime/csv_dataset.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/testing/read_all.h"
#include "tests/test_files.h"

namespace fedberry::runtime::csv_dataset_test {
namespace {

using ::fedberry::testing::TempDir;

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// Cache files (".fedberry-<key>.rows") in `dir`.
std::vector<std::string> CacheFiles(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.find(".fedberry-") != std::string::npos && name.size() > 5 &&
        name.substr(name.size() - 5) == ".rows") {
      out.push_back(name);
    }
  }
  return out;
}

using ::fedberry::runtime::testing::ReadAll;
using ::fedberry::runtime::testing::Samples;

std::unique_ptr<Dataset> OpenOk(const std::string& file,
                                const DataBinding& binding = {},
                                const DataOpenOptions& options = {}) {
  auto data = OpenCsvDataset(file, binding, options);
  EXPECT_TRUE(data.ok()) << data.status();
  return data.ok() ? *std::move(data) : nullptr;
}

// The error message of a failed open (empty if it opened).
std::string OpenError(const std::string& file, const DataBinding& binding = {},
                      const DataOpenOptions& options = {}) {
  auto data = OpenCsvDataset(file, binding, options);
  if (data.ok()) return "";
  EXPECT_EQ(data.status().code(), absl::StatusCode::kInvalidArgument)
      << data.status();
  return std::string(data.status().message());
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(CsvDataset, ReadsRowsWithTheLastColumnAsLabel) {
  TempDir dir;
  const std::string file = dir / "rows.csv";
  WriteText(file, "a,b,label\n1,2,0\n3.5,-4,2\n5e2, 6 ,1\n");
  auto data = OpenOk(file);
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(data->size(), 3);
  EXPECT_EQ(data->sample_shape(), std::vector<int64_t>{2});
  EXPECT_EQ(data->label_count(), 3);  // largest label 2, plus one
  EXPECT_EQ(data->lendable(), nullptr);
  Samples s = ReadAll(*data);
  EXPECT_EQ(s.inputs, (std::vector<float>{1, 2, 3.5f, -4, 500, 6}));
  EXPECT_EQ(s.labels, (std::vector<float>{0, 2, 1}));
  EXPECT_TRUE(Contains(data->Describe(), "3 rows, 2 features, label \"label\""))
      << data->Describe();
}

TEST(CsvDataset, ReadsChosenRowsInAnyOrder) {
  TempDir dir;
  const std::string file = dir / "rows.csv";
  WriteText(file, "x,y\n10,0\n20,1\n30,0\n");
  auto data = OpenOk(file);
  ASSERT_NE(data, nullptr);
  const int64_t rows[] = {2, 0, 2};
  float inputs[3], labels[3];
  data->Read(rows, 3, inputs, labels);
  EXPECT_EQ(std::vector<float>(inputs, inputs + 3),
            (std::vector<float>{30, 10, 30}));
  EXPECT_EQ(std::vector<float>(labels, labels + 3),
            (std::vector<float>{0, 0, 0}));
}

TEST(CsvDataset, SelectsColumnsByNameAndNeverParsesOthers) {
  TempDir dir;
  const std::string file = dir / "people.csv";
  // "name" is text (one value quoted with a comma and a newline), "id" is
  // unselected too; features come in the binding's order.
  WriteText(file,
            "id,name,height,target,weight\n"
            "a1,\"Smith, Jo\",170,1,60\n"
            "a2,\"multi\nline\",180,0,80\n"
            "a3,plain,,2,90\n"
            "n/a,x,160,1,55\n");
  DataBinding b;
  b.label_column = "target";
  b.feature_columns = {"weight", "height"};
  // Line 4 leaves "height" empty: refused, naming that column.
  std::string error = OpenError(file, b);
  EXPECT_TRUE(Contains(error,
                       "people.csv line 5, column \"height\": the "
                       "value is empty"))
      << error;

  WriteText(file,
            "id,name,height,target,weight\n"
            "a1,\"Smith, Jo\",170,1,60\n"
            "a2,\"multi\nline\",180,0,80\n"
            "n/a,x,160,1,55\n");
  auto data = OpenOk(file, b);
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(data->size(), 3);
  Samples s = ReadAll(*data);
  EXPECT_EQ(s.inputs, (std::vector<float>{60, 170, 80, 180, 55, 160}));
  EXPECT_EQ(s.labels, (std::vector<float>{1, 0, 1}));
  EXPECT_EQ(data->label_count(), 2);
}

TEST(CsvDataset, NormalisesPerFeatureOrWithOneValue) {
  TempDir dir;
  const std::string file = dir / "n.csv";
  WriteText(file, "a,b,y\n2,10,0\n4,30,1\n");
  DataBinding b;
  b.mean = {1, 20};
  b.std = {2, 10};
  auto data = OpenOk(file, b);
  ASSERT_NE(data, nullptr);
  Samples s = ReadAll(*data);
  EXPECT_EQ(s.inputs, (std::vector<float>{0.5f, -1, 1.5f, 1}));
  EXPECT_EQ(s.labels, (std::vector<float>{0, 1}));  // labels untouched

  b.mean = {2};
  b.std = {4};
  data = OpenOk(file, b);
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(ReadAll(*data).inputs, (std::vector<float>{0, 2, 0.5f, 7}));

  b.mean = {1, 2, 3};
  std::string error = OpenError(file, b);
  EXPECT_TRUE(Contains(error, "n.csv")) << error;
  EXPECT_TRUE(Contains(error, "mean has 3 values")) << error;
  b.mean = {};
  b.std = {0};
  EXPECT_TRUE(Contains(OpenError(file, b), "not a positive number"));
}

TEST(CsvDataset, RegressionTakesAnyFiniteTarget) {
  TempDir dir;
  const std::string file = dir / "r.csv";
  WriteText(file, "x,price\n1,-2.25\n2,1e3\n");
  DataBinding b;
  b.task = TaskKind::kRegression;
  auto data = OpenOk(file, b);
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(data->label_count(), 0);
  EXPECT_EQ(ReadAll(*data).labels, (std::vector<float>{-2.25f, 1000}));
  EXPECT_TRUE(Contains(data->Describe(), "regression target \"price\""))
      << data->Describe();
}

TEST(CsvDataset, ClassLabelsMayBeWrittenAsWholeFloats) {
  TempDir dir;
  const std::string file = dir / "c.csv";
  WriteText(file, "x,y\n1,3.0\n2, 4 \n3,\"1\"\n");
  auto data = OpenOk(file);
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(ReadAll(*data).labels, (std::vector<float>{3, 4, 1}));
  EXPECT_EQ(data->label_count(), 5);
}

struct BadRowCase {
  const char* name;
  const char* csv;
  TaskKind task;
  const char* message;  // the whole message after the file name
};

class CsvBadRow : public ::testing::TestWithParam<BadRowCase> {};

TEST_P(CsvBadRow, NamesFileLineAndColumn) {
  TempDir dir;
  const std::string file = dir / "rows.csv";
  WriteText(file, GetParam().csv);
  DataBinding b;
  b.task = GetParam().task;
  const std::string error = OpenError(file, b);
  EXPECT_EQ(error, absl::StrCat(file, " ", GetParam().message));
  // Nothing is left behind by a refused file.
  EXPECT_TRUE(CacheFiles(dir.path()).empty());
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()),
                          std::filesystem::directory_iterator()),
            1);
}

INSTANTIATE_TEST_SUITE_P(
    Rows, CsvBadRow,
    ::testing::Values(
        BadRowCase{"TooFewValues", "a,b,c\n1,2,0\n4,5\n",
                   TaskKind::kClassification,
                   "line 3: 2 values, but the header has 3 columns (no value "
                   "for column \"c\")"},
        BadRowCase{"TooManyValues", "a,b,c\n1,2,0\n1,2,0,9\n",
                   TaskKind::kClassification,
                   "line 3: 4 values, but the header has 3 columns"},
        BadRowCase{"NotANumber", "a,temp,c\n1,2,0\n1,2,0\n1,abc,0\n",
                   TaskKind::kClassification,
                   "line 4, column \"temp\": \"abc\" is not a number"},
        BadRowCase{"NumberWithTrailingText", "a,b,c\n1,2kg,0\n",
                   TaskKind::kClassification,
                   "line 2, column \"b\": \"2kg\" is not a number"},
        BadRowCase{"NaN", "a,b,c\n1,nan,0\n", TaskKind::kClassification,
                   "line 2, column \"b\": \"nan\" is not a finite number"},
        BadRowCase{"Infinity", "a,b,c\n-inf,1,0\n", TaskKind::kRegression,
                   "line 2, column \"a\": \"-inf\" is not a finite number"},
        BadRowCase{"Overflow", "a,b,c\n1,1e400,0\n", TaskKind::kRegression,
                   "line 2, column \"b\": \"1e400\" is not a finite number"},
        BadRowCase{"BeyondFloat32", "a,b,c\n1,1e39,0\n", TaskKind::kRegression,
                   "line 2, column \"b\": \"1e39\" is outside the float32 "
                   "range"},
        BadRowCase{"EmptyValue", "a,b,c\n1,  ,0\n", TaskKind::kRegression,
                   "line 2, column \"b\": the value is empty"},
        BadRowCase{"FractionalClass", "a,b,y\n1,2,2.5\n",
                   TaskKind::kClassification,
                   "line 2, column \"y\": class label \"2.5\" is not a "
                   "non-negative integer"},
        BadRowCase{"NegativeClass", "a,b,y\n1,2,1\n1,2,-1\n",
                   TaskKind::kClassification,
                   "line 3, column \"y\": class label \"-1\" is not a "
                   "non-negative integer"},
        BadRowCase{"HugeClass", "a,y\n1,1e9\n", TaskKind::kClassification,
                   "line 2, column \"y\": class label \"1e9\" is above "
                   "16777216"},
        // Blank lines, CRLF endings and a quoted field spanning two lines
        // all count as lines.
        BadRowCase{"LinesCountedAcrossBlankCrlfAndQuotedNewlines",
                   "a,b,c\r\n1,2,0\r\n\r\n\"3\",\"4\",\"1\"\r\n"
                   "\"5\",\"6\",\"x\ny\"\r\n7,8,0\r\n9,z,0\r\n",
                   TaskKind::kRegression,
                   "line 5, column \"c\": \"x\\x0ay\" is not a number"},
        BadRowCase{"LineAfterQuotedNewline",
                   "n,a,c\n\"7\n\",1,0\n\n\"8\",oops,0\n",
                   TaskKind::kRegression,
                   "line 5, column \"a\": \"oops\" is not a number"},
        BadRowCase{"UnclosedQuoteHint", "a,b,c\n1,2,0\n\"3,4,0\n5,6,0\n",
                   TaskKind::kRegression,
                   "line 3: 1 value, but the header has 3 columns (no value "
                   "for column \"b\") (a quoted field spans lines: an "
                   "unclosed quote?)"}),
    [](const ::testing::TestParamInfo<BadRowCase>& info) {
      return info.param.name;
    });

TEST(CsvDataset, LineNumbersHoldAcrossReadChunks) {
  TempDir dir;
  const std::string file = dir / "long.csv";
  std::string text = "feature_one,feature_two,label\n";
  for (int i = 2; i <= 20000; ++i) {
    absl::StrAppend(&text, i == 15000 ? "1.5,bad" : "1.25,2.5", ",", i % 3,
                    "\n");
  }
  ASSERT_GT(text.size(), 3u * 65536);  // several 64 KiB chunks
  WriteText(file, text);
  EXPECT_EQ(OpenError(file),
            absl::StrCat(file,
                         " line 15000, column \"feature_two\": \"bad\" "
                         "is not a number"));
}

TEST(CsvDataset, SkipsAndCountsBadRowsWhenAsked) {
  TempDir dir;
  const std::string file = dir / "rows.csv";
  WriteText(file,
            "a,temp,y\n"
            "1,2,0\n"
            "1,abc,0\n"
            "3,4\n"
            "5,6,1\n"
            "7,nan,1\n"
            "8,9,1.5\n");
  DataBinding b;
  b.skip_bad_rows = true;
  auto data = OpenOk(file, b);
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(data->size(), 2);
  Samples s = ReadAll(*data);
  EXPECT_EQ(s.inputs, (std::vector<float>{1, 2, 5, 6}));
  EXPECT_EQ(s.labels, (std::vector<float>{0, 1}));
  EXPECT_TRUE(Contains(data->Describe(),
                       "skipped 4 bad rows (first: line 3, column \"temp\": "
                       "\"abc\" is not a number)"))
      << data->Describe();
  // The count survives a reused cache.
  data = OpenOk(file, b);
  ASSERT_NE(data, nullptr);
  EXPECT_TRUE(Contains(data->Describe(), "reused")) << data->Describe();
  EXPECT_TRUE(Contains(data->Describe(), "skipped 4 bad rows"));

  // Without the flag the same file is refused at its first bad row.
  EXPECT_TRUE(Contains(OpenError(file), "rows.csv line 3, column \"temp\""));

  WriteText(file, "a,y\nx,1\n");
  EXPECT_TRUE(Contains(OpenError(file, b), "no good rows"));
}

TEST(CsvDataset, MissingFileIsNotFound) {
  TempDir dir;
  auto data = OpenCsvDataset(dir / "none.csv", {}, {});
  ASSERT_FALSE(data.ok());
  EXPECT_EQ(data.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Contains(std::string(data.status().message()), "none.csv"));
}

TEST(CsvDataset, EmptyOrHeaderOnlyFilesAreRefused) {
  TempDir dir;
  const std::string file = dir / "e.csv";
  WriteText(file, "");
  EXPECT_TRUE(Contains(OpenError(file), "e.csv is empty")) << OpenError(file);
  WriteText(file, "\n\n  \n");
  EXPECT_TRUE(Contains(OpenError(file), "e.csv is empty"));
  WriteText(file, "a,b,c\n");
  EXPECT_TRUE(Contains(OpenError(file), "e.csv has a header but no rows"))
      << OpenError(file);
  WriteText(file, "a,b,c\n\n\n");
  EXPECT_TRUE(Contains(OpenError(file), "has a header but no rows"));
  WriteText(file, "only\n1\n");
  EXPECT_TRUE(Contains(OpenError(file), "no feature columns"));
  EXPECT_TRUE(CacheFiles(dir.path()).empty());
}

TEST(CsvDataset, UnknownColumnNamesTheHeader) {
  TempDir dir;
  const std::string file = dir / "h.csv";
  WriteText(file, "a,b,y\n1,2,0\n");
  DataBinding b;
  b.label_column = "target";
  std::string error = OpenError(file, b);
  EXPECT_EQ(error, absl::StrCat("csv file ", file,
                                " has no column \"target\"; its header has "
                                "\"a\", \"b\", \"y\""));
  b.label_column = "y";
  b.feature_columns = {"a", "c"};
  EXPECT_TRUE(Contains(OpenError(file, b), "has no column \"c\""));
  b.feature_columns = {"a", "y"};
  EXPECT_TRUE(Contains(OpenError(file, b), "both the label and a feature"));
  b.feature_columns = {"a", "a"};
  EXPECT_TRUE(Contains(OpenError(file, b), "selected twice"));
}

TEST(CsvDataset, DuplicateHeaderNamesAreRefused) {
  TempDir dir;
  const std::string file = dir / "d.csv";
  WriteText(file, "a,b,a,y\n1,2,3,0\n");
  EXPECT_TRUE(Contains(OpenError(file), "names column \"a\" twice"))
      << OpenError(file);
}

TEST(CsvDataset, ByteOrderMarkIsNotPartOfTheFirstName) {
  TempDir dir;
  const std::string file = dir / "bom.csv";
  WriteText(file, "\xEF\xBB\xBFx,y\n1,0\n");
  DataBinding b;
  b.feature_columns = {"x"};
  auto data = OpenOk(file, b);
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(ReadAll(*data).inputs, std::vector<float>{1});
}

TEST(CsvDataset, InputShapeMustHoldTheFeatures) {
  TempDir dir;
  const std::string file = dir / "s.csv";
  WriteText(file, "a,b,c,d,e,f,y\n1,2,3,4,5,6,0\n");
  DataBinding b;
  b.input_shape = {2, 3};
  auto data = OpenOk(file, b);
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(data->sample_shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(ReadAll(*data).inputs, (std::vector<float>{1, 2, 3, 4, 5, 6}));

  b.input_shape = {2, 2};
  EXPECT_EQ(OpenError(file, b),
            absl::StrCat("csv file ", file,
                         ": the input shape 2,2 holds 4 "
                         "values, but 6 feature columns are selected"));
}

TEST(CsvDataset, SecondOpenReusesTheCache) {
  TempDir dir;
  const std::string file = dir / "rows.csv";
  WriteText(file, "x,y\n1,0\n2,1\n");
  auto first = OpenOk(file);
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(Contains(first->Describe(), ", built)")) << first->Describe();
  auto caches = CacheFiles(dir.path());
  ASSERT_EQ(caches.size(), 1u);
  EXPECT_EQ(caches[0].rfind("rows.csv.fedberry-", 0), 0u) << caches[0];
  EXPECT_EQ(caches[0].size(),
            std::string("rows.csv.fedberry-.rows").size() + 16);
  EXPECT_TRUE(Contains(first->Describe(), caches[0])) << first->Describe();

  // Overwrite the CSV with other numbers of the same size and restore its
  // mtime: the key cannot tell, so a reused cache still reads the old
  // values, which shows the second open did not parse the file.
  struct stat st;
  ASSERT_EQ(stat(file.c_str(), &st), 0);
  WriteText(file, "x,y\n7,0\n8,1\n");
  const struct timespec times[2] = {st.st_atim, st.st_mtim};
  ASSERT_EQ(utimensat(AT_FDCWD, file.c_str(), times, 0), 0);
  auto second = OpenOk(file);
  ASSERT_NE(second, nullptr);
  EXPECT_TRUE(Contains(second->Describe(), ", reused)")) << second->Describe();
  EXPECT_EQ(ReadAll(*second).inputs, (std::vector<float>{1, 2}));

  // A changed file (size and mtime) gets a new cache with its values.
  WriteText(file, "x,y\n10,0\n20,1\n30,1\n");
  auto third = OpenOk(file);
  ASSERT_NE(third, nullptr);
  EXPECT_TRUE(Contains(third->Describe(), ", built)")) << third->Describe();
  EXPECT_EQ(ReadAll(*third).inputs, (std::vector<float>{10, 20, 30}));

  // Another column choice is another cache too.
  DataBinding b;
  b.task = TaskKind::kRegression;
  auto fourth = OpenOk(file, b);
  ASSERT_NE(fourth, nullptr);
  EXPECT_TRUE(Contains(fourth->Describe(), ", built)"));
}

TEST(CsvDataset, DamagedCacheIsRebuilt) {
  TempDir dir;
  const std::string file = dir / "rows.csv";
  WriteText(file, "x,y\n1,0\n2,1\n");
  ASSERT_NE(OpenOk(file), nullptr);
  auto caches = CacheFiles(dir.path());
  ASSERT_EQ(caches.size(), 1u);
  std::filesystem::resize_file(dir / caches[0], 70);
  auto data = OpenOk(file);
  ASSERT_NE(data, nullptr);
  EXPECT_TRUE(Contains(data->Describe(), ", built)")) << data->Describe();
  EXPECT_EQ(ReadAll(*data).inputs, (std::vector<float>{1, 2}));
}

// The folder beside the file cannot take a cache when the file is reached
// through /proc/self/fd (no file can be created there, even by root).
TEST(CsvDataset, FallsBackToTheCacheDirWhenBesideIsNotWritable) {
  TempDir dir;
  const std::string real = dir / "rows.csv";
  WriteText(real, "x,y\n1,0\n2,1\n");
  const int fd = open(real.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  const std::string file = absl::StrCat("/proc/self/fd/", fd);

  auto data = OpenCsvDataset(file, {}, {});
  ASSERT_FALSE(data.ok());
  EXPECT_TRUE(Contains(std::string(data.status().message()), "/proc/self/fd/"))
      << data.status();

  DataOpenOptions options;
  options.cache_dir = dir / "cache/sub";  // created on demand
  auto first = OpenOk(file, {}, options);
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(Contains(first->Describe(), dir / "cache/sub/"))
      << first->Describe();
  EXPECT_TRUE(Contains(first->Describe(), ", built)"));
  EXPECT_EQ(CacheFiles(dir / "cache/sub").size(), 1u);
  EXPECT_EQ(ReadAll(*first).inputs, (std::vector<float>{1, 2}));
  auto second = OpenOk(file, {}, options);
  ASSERT_NE(second, nullptr);
  EXPECT_TRUE(Contains(second->Describe(), ", reused)")) << second->Describe();

  // Neither place writable: the error says where it tried.
  WriteText(dir / "plainfile", "x");
  options.cache_dir = dir / "plainfile/cache";
  data = OpenCsvDataset(file, {}, options);
  ASSERT_FALSE(data.ok());
  const std::string error(data.status().message());
  EXPECT_TRUE(Contains(error, "/proc/self/fd/")) << error;
  EXPECT_TRUE(Contains(error, "plainfile/cache/")) << error;
  close(fd);
}

TEST(CsvDataset, IidShardsAreDisjointAndCoverEveryRow) {
  TempDir dir;
  const std::string file = dir / "p.csv";
  std::string text = "index,label\n";
  for (int i = 0; i < 103; ++i) absl::StrAppend(&text, i, ",", i % 4, "\n");
  WriteText(file, text);
  std::multiset<float> seen;
  for (int shard = 0; shard < 3; ++shard) {
    PartitionSpec spec;
    spec.index = shard;
    spec.count = 3;
    spec.seed = 7;
    DataOpenOptions options;
    options.partition = &spec;
    auto data = OpenOk(file, {}, options);
    ASSERT_NE(data, nullptr);
    EXPECT_GE(data->size(), 34);
    EXPECT_LE(data->size(), 35);
    EXPECT_TRUE(Contains(data->Describe(),
                         absl::StrCat(data->size(), " of 103 rows (shard ",
                                      shard + 1, " of 3, iid)")))
        << data->Describe();
    Samples s = ReadAll(*data);
    for (size_t i = 0; i < s.labels.size(); ++i) {
      // Each row still carries its own label.
      EXPECT_EQ(s.labels[i], static_cast<int>(s.inputs[i]) % 4);
      seen.insert(s.inputs[i]);
    }
  }
  std::multiset<float> all;
  for (int i = 0; i < 103; ++i) all.insert(static_cast<float>(i));
  EXPECT_EQ(seen, all);  // disjoint (no repeats) and complete
}

TEST(CsvDataset, DirichletNeedsSmallClassLabels) {
  TempDir dir;
  const std::string file = dir / "p.csv";
  std::string text = "x,y\n";
  for (int i = 0; i < 60; ++i) absl::StrAppend(&text, i, ",", i % 3, "\n");
  WriteText(file, text);
  PartitionSpec spec;
  spec.kind = PartitionSpec::Kind::kDirichlet;
  spec.count = 2;
  DataOpenOptions options;
  options.partition = &spec;
  int64_t total = 0;
  for (int shard = 0; shard < 2; ++shard) {
    spec.index = shard;
    auto data = OpenOk(file, {}, options);
    ASSERT_NE(data, nullptr);
    total += data->size();
    for (float label : ReadAll(*data).labels) EXPECT_LT(label, 3);
  }
  EXPECT_EQ(total, 60);

  DataBinding regression;
  regression.task = TaskKind::kRegression;
  EXPECT_TRUE(Contains(OpenError(file, regression, options),
                       "Dirichlet partition needs classification labels "
                       "below 256"));
  WriteText(file, "x,y\n1,0\n2,300\n");
  EXPECT_TRUE(
      Contains(OpenError(file, {}, options), "below 256 (the largest is 300)"))
      << OpenError(file, {}, options);
}

TEST(CsvDataset, LabelCountIsOverTheKeptRows) {
  TempDir dir;
  const std::string file = dir / "k.csv";
  WriteText(file, "x,y\n1,0\n2,0\n3,0\n4,9\n");
  auto whole = OpenOk(file);
  ASSERT_NE(whole, nullptr);
  EXPECT_EQ(whole->label_count(), 10);
  int64_t max_count = 0;
  for (int shard = 0; shard < 4; ++shard) {
    PartitionSpec spec;
    spec.index = shard;
    spec.count = 4;
    DataOpenOptions options;
    options.partition = &spec;
    auto data = OpenOk(file, {}, options);
    ASSERT_NE(data, nullptr);
    ASSERT_EQ(data->size(), 1);
    const float label = ReadAll(*data).labels[0];
    EXPECT_EQ(data->label_count(), static_cast<int64_t>(label) + 1);
    max_count = std::max(max_count, data->label_count());
  }
  EXPECT_EQ(max_count, 10);
}

}  // namespace
}  // namespace fedberry::runtime::csv_dataset_test
