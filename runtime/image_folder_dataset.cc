#include "runtime/image_folder_dataset.h"

#include <stb/stb_image.h>
#include <stb/stb_image_resize.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "runtime/binding_values.h"
#include "runtime/row_cache.h"

namespace fedberry::runtime {
namespace {

namespace fs = std::filesystem;

// Bump when the record layout changes: old caches then get another key.
constexpr char kImageCacheFormat[] = "fedberry image rows 1";
constexpr int64_t kMaxSide = 16384;
constexpr size_t kClassesShown = 8;

struct ImageFile {
  std::string path;
  std::string name;
  int64_t size = 0;
  int64_t mtime_ns = 0;
};

struct ClassFolder {
  std::string name;
  std::vector<ImageFile> files;
};

bool IsImageName(const std::string& name) {
  const size_t dot = name.rfind('.');
  if (dot == std::string::npos) return false;
  const std::string ext = absl::AsciiStrToLower(name.substr(dot + 1));
  return ext == "png" || ext == "jpg" || ext == "jpeg";
}

// Names (not starting with '.') of `dir`'s entries that pass `keep`, in
// byte-wise order (std::string compares as unsigned bytes).
absl::StatusOr<std::vector<std::string>> ListNames(
    const std::string& dir, bool (*keep)(const fs::directory_entry&)) {
  std::error_code ec;
  std::vector<std::string> names;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.' || !keep(*it)) continue;
    names.push_back(std::move(name));
  }
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot list ", dir, ": ", ec.message()));
  }
  std::sort(names.begin(), names.end());
  return names;
}

absl::StatusOr<std::vector<ClassFolder>> ListClasses(const std::string& dir,
                                                     const std::string& spec) {
  FEDBERRY_ASSIGN_OR_RETURN(std::vector<std::string> class_names,
                            ListNames(dir, [](const fs::directory_entry& e) {
                              std::error_code ec;
                              return e.is_directory(ec);  // follows symlinks
                            }));
  std::vector<ClassFolder> classes;
  for (std::string& name : class_names) {
    ClassFolder c;
    c.name = std::move(name);
    const std::string folder = absl::StrCat(dir, "/", c.name);
    FEDBERRY_ASSIGN_OR_RETURN(
        std::vector<std::string> files,
        ListNames(folder, [](const fs::directory_entry& e) {
          std::error_code ec;
          return e.is_regular_file(ec) &&
                 IsImageName(e.path().filename().string());
        }));
    for (std::string& file : files) {
      ImageFile f;
      f.path = absl::StrCat(folder, "/", file);
      f.name = std::move(file);
      struct stat st;
      if (stat(f.path.c_str(), &st) != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            spec, ": cannot read ", f.path, ": ", std::strerror(errno)));
      }
      f.size = static_cast<int64_t>(st.st_size);
      f.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 +
                   st.st_mtim.tv_nsec;
      c.files.push_back(std::move(f));
    }
    classes.push_back(std::move(c));
  }
  return classes;
}

// Decodes `path` to `channels` channels, resizes it to width x height and
// writes it channel-planar (C, H, W) into `out`.
absl::Status DecodeImage(const std::string& path, const std::string& spec,
                         int channels, int height, int width,
                         std::vector<uint8_t>& interleaved,
                         std::vector<uint8_t>& out) {
  int w = 0, h = 0, in_file = 0;
  // desired_channels forces C: stb replicates gray into RGB and turns RGB
  // into luminance.
  std::unique_ptr<stbi_uc, void (*)(void*)> pixels(
      stbi_load(path.c_str(), &w, &h, &in_file, channels), stbi_image_free);
  if (pixels == nullptr) {
    const char* reason = stbi_failure_reason();
    return absl::InvalidArgumentError(absl::StrCat(
        spec, ": image ", path,
        " does not decode: ", reason != nullptr ? reason : "unknown reason"));
  }
  const uint8_t* src = pixels.get();
  if (w != width || h != height) {
    interleaved.resize(static_cast<size_t>(width) * height * channels);
    if (!stbir_resize_uint8(pixels.get(), w, h, 0, interleaved.data(), width,
                            height, 0, channels)) {
      return absl::InvalidArgumentError(
          absl::StrCat(spec, ": cannot resize image ", path, " from ", w, "x",
                       h, " to ", width, "x", height));
    }
    src = interleaved.data();
  }
  const size_t plane = static_cast<size_t>(width) * height;
  for (size_t p = 0; p < plane; ++p) {
    for (int c = 0; c < channels; ++c) {
      out[c * plane + p] = src[p * channels + c];
    }
  }
  return absl::OkStatus();
}

class ImageFolderDataset : public Dataset {
 public:
  int64_t size() const override { return size_; }
  const std::vector<int64_t>& sample_shape() const override { return shape_; }
  int64_t label_count() const override {
    return static_cast<int64_t>(class_names_.size());
  }
  void Read(const int64_t* rows, int64_t n, float* inputs,
            float* labels) const override {
    const int64_t channels = shape_[0];
    const int64_t plane = shape_[1] * shape_[2];
    for (int64_t i = 0; i < n; ++i) {
      const int64_t row = kept_.empty() ? rows[i] : kept_[rows[i]];
      const uint8_t* px = cache_->record_u8(row);
      float* out = inputs + i * channels * plane;
      for (int64_t c = 0; c < channels; ++c) {
        const float mean = mean_[c], std = std_[c];
        for (int64_t j = 0; j < plane; ++j) {
          out[c * plane + j] = (px[c * plane + j] / 255.0f - mean) / std;
        }
      }
      labels[i] = static_cast<float>(ClassOf(row));
    }
  }
  std::string Describe() const override { return describe_; }

 private:
  friend absl::StatusOr<std::unique_ptr<Dataset>>
  runtime::OpenImageFolderDataset(const std::string&, const DataBinding&,
                                  const DataOpenOptions&);

  // The steps of OpenImageFolderDataset, in order. `spec` is "images:DIR".
  // The classes' names and row ranges; InvalidArgument without images.
  absl::Status SetClasses(const std::vector<ClassFolder>& classes,
                          const std::string& spec);
  // The cache found at one of `places`, else built at the first writable
  // one from the decoded images; true when built.
  absl::StatusOr<bool> LoadCache(const std::vector<std::string>& places,
                                 uint64_t key,
                                 const std::vector<ClassFolder>& classes,
                                 const std::string& spec);
  // This board's rows; the shard's words for Describe().
  absl::StatusOr<std::string> Partition(const PartitionSpec* partition,
                                        const std::string& spec);
  void SetDescription(const std::string& dir, const std::string& name,
                      const std::string& beside, bool partitioned,
                      const std::string& shard, bool built);

  // Rows are sorted by class, so a class is a range of rows.
  int64_t ClassOf(int64_t row) const {
    return std::upper_bound(starts_.begin(), starts_.end(), row) -
           starts_.begin() - 1;
  }

  std::unique_ptr<RowCache> cache_;
  std::vector<std::string> class_names_;
  std::vector<int64_t> starts_;  // class k: rows [starts_[k], starts_[k+1])
  std::vector<int64_t> kept_;    // partitioned only; empty: every row
  int64_t size_ = 0;
  std::vector<int64_t> shape_;
  std::vector<float> mean_, std_;  // one per channel
  std::string describe_;
};

// The task, the input shape and the normalisation an image folder needs.
absl::Status CheckImageBinding(const DataBinding& binding,
                               const std::string& spec) {
  if (binding.task != TaskKind::kClassification) {
    return absl::InvalidArgumentError(
        absl::StrCat(spec,
                     " holds classes (one folder each): the task must be "
                     "classification"));
  }
  const std::vector<int64_t>& shape = binding.input_shape;
  if (shape.size() != 3 || (shape[0] != 1 && shape[0] != 3) || shape[1] < 1 ||
      shape[2] < 1 || shape[1] > kMaxSide || shape[2] > kMaxSide) {
    return absl::InvalidArgumentError(absl::StrCat(
        spec, " needs --input_shape=C,H,W (C 1 or 3, H and W 1 to ", kMaxSide,
        "); the plan says ",
        shape.empty() ? std::string("none") : absl::StrJoin(shape, ",")));
  }
  return CheckNormalisation(binding, spec);
}

// The class folders of `dir`; NotFound when it does not exist,
// InvalidArgument when it is no folder or has no class folders.
absl::StatusOr<std::vector<ClassFolder>> ImageClassesOf(
    const std::string& dir, const std::string& spec) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    return absl::NotFoundError(
        absl::StrCat(spec, ": ", dir, " does not exist"));
  }
  if (!fs::is_directory(dir, ec)) {
    return absl::InvalidArgumentError(
        absl::StrCat(spec, ": ", dir, " is not a folder"));
  }
  FEDBERRY_ASSIGN_OR_RETURN(std::vector<ClassFolder> classes,
                            ListClasses(dir, spec));
  if (classes.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        spec,
        " has no class folders: it needs one sub-folder of images per "
        "class"));
  }
  return classes;
}

// The key changes with any file added, removed, renamed or rewritten, and
// with the shape the images are resized to.
uint64_t ImageCacheKey(const fs::path& canonical,
                       const std::vector<int64_t>& shape,
                       const std::vector<ClassFolder>& classes) {
  RowCacheKey k;
  k.Add(kImageCacheFormat)
      .Add(canonical.string())
      .Add(shape[0])  // channels, height, width
      .Add(shape[1])
      .Add(shape[2]);
  k.Add(static_cast<int64_t>(classes.size()));
  for (const ClassFolder& c : classes) {
    k.Add(c.name).Add(static_cast<int64_t>(c.files.size()));
    for (const ImageFile& f : c.files)
      k.Add(f.name).Add(f.size).Add(f.mtime_ns);
  }
  return k.Digest();
}

absl::Status ImageFolderDataset::SetClasses(
    const std::vector<ClassFolder>& classes, const std::string& spec) {
  starts_.push_back(0);
  for (const ClassFolder& c : classes) {
    class_names_.push_back(c.name);
    starts_.push_back(starts_.back() + static_cast<int64_t>(c.files.size()));
  }
  if (starts_.back() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        spec, " has no images (.png, .jpg, .jpeg) in its ", classes.size(),
        classes.size() == 1 ? " class folder" : " class folders"));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> ImageFolderDataset::LoadCache(
    const std::vector<std::string>& places, uint64_t key,
    const std::vector<ClassFolder>& classes, const std::string& spec) {
  const int channels = static_cast<int>(shape_[0]);
  const int height = static_cast<int>(shape_[1]);
  const int width = static_cast<int>(shape_[2]);
  const int64_t values = int64_t{channels} * height * width;
  const int64_t total = starts_.back();
  cache_ = FindRowCache(places, key, [&](const RowCache& c) {
    return c.type() == RowValueType::kUint8 &&
           c.values_per_record() == values && c.rows() == total;
  });
  if (cache_ != nullptr) return false;
  absl::StatusOr<RowCacheWriter> writer =
      OpenRowCacheWriter(places, key, values, RowValueType::kUint8);
  if (!writer.ok()) {
    return base::WithPrefix(writer.status(), absl::StrCat(spec, ": "));
  }
  writer->set_metadata(
      EncodeRowCacheFields({{"format", kImageCacheFormat},
                            {"shape", absl::StrJoin(shape_, ",")},
                            {"classes", absl::StrJoin(class_names_, "\n")}}));
  std::vector<uint8_t> interleaved, planar(values);
  for (const ClassFolder& c : classes) {
    for (const ImageFile& f : c.files) {
      FEDBERRY_RETURN_IF_ERROR(DecodeImage(f.path, spec, channels, height,
                                           width, interleaved, planar));
      FEDBERRY_RETURN_IF_ERROR(writer->Append(planar.data()));
    }
  }
  FEDBERRY_RETURN_IF_ERROR(writer->Finish());
  FEDBERRY_ASSIGN_OR_RETURN(cache_, RowCache::Open(writer->path(), key));
  return true;
}

absl::StatusOr<std::string> ImageFolderDataset::Partition(
    const PartitionSpec* partition, const std::string& spec) {
  const int64_t total = starts_.back();
  if (partition == nullptr) {
    size_ = total;
    return std::string();
  }
  std::vector<uint8_t> labels(total, 0);
  if (partition->kind == PartitionSpec::Kind::kDirichlet) {
    if (class_names_.size() > 256) {
      return absl::InvalidArgumentError(absl::StrCat(
          spec,
          ": a Dirichlet partition needs classification labels below "
          "256; this folder has ",
          class_names_.size(), " classes"));
    }
    for (size_t k = 0; k < class_names_.size(); ++k) {
      std::fill(labels.begin() + starts_[k], labels.begin() + starts_[k + 1],
                static_cast<uint8_t>(k));
    }
  }
  absl::StatusOr<std::vector<int64_t>> kept = PartitionRows(labels, *partition);
  if (!kept.ok())
    return base::WithPrefix(kept.status(), absl::StrCat(spec, ": "));
  kept_ = *std::move(kept);
  size_ = static_cast<int64_t>(kept_.size());
  return ShardText(*partition);
}

void ImageFolderDataset::SetDescription(const std::string& dir,
                                        const std::string& name,
                                        const std::string& beside,
                                        bool partitioned,
                                        const std::string& shard, bool built) {
  std::vector<std::string> shown(
      class_names_.begin(),
      class_names_.begin() + std::min(kClassesShown, class_names_.size()));
  if (class_names_.size() > kClassesShown) shown.push_back("...");
  const std::string cache_name =
      cache_->path() == beside ? name : cache_->path();
  const int64_t total = starts_.back();
  const size_t classes = class_names_.size();
  std::string& d = describe_;
  d = absl::StrCat("images ", dir, ": ");
  if (partitioned) absl::StrAppend(&d, size_, " of ");
  absl::StrAppend(&d, total, total == 1 ? " image" : " images", shard, ", ",
                  classes, classes == 1 ? " class (" : " classes (",
                  absl::StrJoin(shown, ", "), "), ", absl::StrJoin(shape_, "x"),
                  " (cache ", cache_name, built ? ", built)" : ", reused)");
}

}  // namespace

absl::StatusOr<std::unique_ptr<Dataset>> OpenImageFolderDataset(
    const std::string& dir, const DataBinding& binding,
    const DataOpenOptions& options) {
  const std::string spec = absl::StrCat("images:", dir);
  FEDBERRY_RETURN_IF_ERROR(CheckImageBinding(binding, spec));
  const std::vector<int64_t>& shape = binding.input_shape;
  auto data = std::make_unique<ImageFolderDataset>();
  data->shape_ = shape;
  FEDBERRY_ASSIGN_OR_RETURN(data->mean_, PerUnit(binding.mean, 0.0f, shape[0],
                                                 "mean", "channel", spec));
  FEDBERRY_ASSIGN_OR_RETURN(
      data->std_, PerUnit(binding.std, 1.0f, shape[0], "std", "channel", spec));
  FEDBERRY_ASSIGN_OR_RETURN(const std::vector<ClassFolder> classes,
                            ImageClassesOf(dir, spec));
  FEDBERRY_RETURN_IF_ERROR(data->SetClasses(classes, spec));
  std::error_code ec;
  fs::path canonical = fs::canonical(dir, ec);
  if (ec) canonical = fs::absolute(dir, ec);
  const uint64_t key = ImageCacheKey(canonical, shape, classes);
  const std::string name =
      absl::StrCat(".fedberry-", RowCacheKeyHex(key), ".rows");
  std::vector<std::string> places = {absl::StrCat(dir, "/", name)};
  if (!options.cache_dir.empty()) {
    // One fallback folder may serve several image folders.
    places.push_back((fs::path(options.cache_dir) /
                      absl::StrCat(canonical.filename().string(), name))
                         .string());
  }
  FEDBERRY_ASSIGN_OR_RETURN(const bool built,
                            data->LoadCache(places, key, classes, spec));
  FEDBERRY_ASSIGN_OR_RETURN(const std::string shard,
                            data->Partition(options.partition, spec));
  data->SetDescription(dir, name, places[0], options.partition != nullptr,
                       shard, built);
  return data;
}

}  // namespace fedberry::runtime
