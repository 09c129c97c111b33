// Reading a large CSV through the csv: data source: the first open (libcsv
// streams the file into its binary row cache), a second open (the cache is
// reused), and one pass over every row as the trainer reads them (batches of
// 32 in a shuffled order). Prints rows/s, the file and cache sizes and the
// peak RSS, which stays far below the file's size. Asserts nothing.
//
//   /usr/bin/python3 examples/make_sensor_csv.py --out big --boards 1
//       --rows 13500000 --test_rows 10        (one command line)
//   build/bin/csv_bench --csv=big/board-0.csv --label_column=state
//       --feature_columns=temp,vibration,current,voltage,rpm,pressure,humidity,noise
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "runtime/dataset.h"

ABSL_FLAG(std::string, csv, "", "The CSV file.");
ABSL_FLAG(std::string, label_column, "", "Label column (default: last).");
ABSL_FLAG(std::string, feature_columns, "", "Feature columns (default: all).");

namespace {

double PeakRssMiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Opening and reading a large CSV through the csv: data source (rows/s, "
      "cache size, peak RSS).");
  absl::ParseCommandLine(argc, argv);
  using namespace fedberry::runtime;
  const std::string file = absl::GetFlag(FLAGS_csv);
  DataBinding binding;
  binding.label_column = absl::GetFlag(FLAGS_label_column);
  if (!absl::GetFlag(FLAGS_feature_columns).empty()) {
    binding.feature_columns =
        absl::StrSplit(absl::GetFlag(FLAGS_feature_columns), ',');
  }
  const double file_mib = std::filesystem::file_size(file) / 1048576.0;
  std::printf("csv_bench: %s, %.1f MiB\n", file.c_str(), file_mib);
  for (int pass = 0; pass < 2; ++pass) {
    const absl::Time t0 = absl::Now();
    auto data = OpenDataset("csv:" + file, binding);
    const double s = absl::ToDoubleSeconds(absl::Now() - t0);
    if (!data.ok()) {
      std::fprintf(stderr, "csv_bench: %s\n",
                   std::string(data.status().message()).c_str());
      return 1;
    }
    std::printf(
        "open %d: %.2f s, %.0f rows/s, %.1f MiB/s (%s); peak RSS %.1f "
        "MiB\n",
        pass + 1, s, (*data)->size() / s, file_mib / s,
        (*data)->Describe().c_str(), PeakRssMiB());
    if (pass == 1) {
      // One epoch in a shuffled order, 32 rows at a time.
      const int64_t n = (*data)->size();
      std::vector<int64_t> order(n);
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), std::mt19937_64(1));
      const int64_t values = (*data)->SampleValues();
      std::vector<float> x(32 * values), y(32);
      double sum = 0;
      const absl::Time r0 = absl::Now();
      for (int64_t b = 0; b < n; b += 32) {
        const int64_t k = std::min<int64_t>(32, n - b);
        (*data)->Read(order.data() + b, k, x.data(), y.data());
        sum += y[0];
      }
      const double rs = absl::ToDoubleSeconds(absl::Now() - r0);
      std::printf(
          "epoch (shuffled, batches of 32): %.2f s, %.0f rows/s; "
          "peak RSS %.1f MiB (checksum %.0f)\n",
          rs, n / rs, PeakRssMiB(), sum);
    }
  }
  return 0;
}
