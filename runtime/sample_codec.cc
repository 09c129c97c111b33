#include "runtime/sample_codec.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace fedberry::runtime {

uint64_t SampleBytes(const ImageDataset& data) {
  return static_cast<uint64_t>(data.height * data.width) + 1;
}

absl::StatusOr<SampleChunker> SampleChunker::Make(const ImageDataset& data,
                                                  const SampleStreamRef& ref) {
  const int64_t pixels = data.height * data.width;
  if (data.rows <= 0 || pixels <= 0 ||
      data.pixels.size() != static_cast<size_t>(data.rows * pixels) ||
      data.labels.size() != static_cast<size_t>(data.rows)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot send move ", ref.move_id, ": ", data.rows, " samples of ",
        data.height, "x", data.width, " with ", data.pixels.size(),
        " pixel and ", data.labels.size(), " label bytes"));
  }
  return SampleChunker(data, ref);
}

bool SampleChunker::Next(v1::SampleChunk& chunk) {
  if (next_ >= data_.rows) return false;
  const int64_t pixels = data_.height * data_.width;
  const int64_t n = std::min(kSamplesPerChunk, data_.rows - next_);
  chunk.set_client_id(ref_.client_id);
  chunk.set_round(ref_.round);
  chunk.set_task_id(ref_.task_id);
  chunk.set_move_id(ref_.move_id);
  chunk.set_height(static_cast<uint32_t>(data_.height));
  chunk.set_width(static_cast<uint32_t>(data_.width));
  chunk.set_offset(static_cast<uint64_t>(next_));
  chunk.set_pixels(data_.pixels.data() + next_ * pixels,
                   static_cast<size_t>(n * pixels));
  chunk.set_labels(data_.labels.data() + next_, static_cast<size_t>(n));
  first_ = next_;
  next_ += n;
  return true;
}

absl::Status EncodeSamples(
    const ImageDataset& data, const SampleStreamRef& ref,
    const std::function<bool(const v1::SampleChunk&)>& write) {
  absl::StatusOr<SampleChunker> chunker = SampleChunker::Make(data, ref);
  if (!chunker.ok()) return chunker.status();
  v1::SampleChunk chunk;
  while (chunker->Next(chunk)) {
    if (!write(chunk)) {
      return absl::CancelledError(absl::StrCat("the stream of move ",
                                               ref.move_id, " broke at sample ",
                                               chunker->first()));
    }
  }
  return absl::OkStatus();
}

absl::Status SampleAssembler::Add(const v1::SampleChunk& chunk) {
  if (chunk.client_id() != ref_.client_id || chunk.round() != ref_.round ||
      chunk.task_id() != ref_.task_id || chunk.move_id() != ref_.move_id) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sample chunk of client ", chunk.client_id(), " round ", chunk.round(),
        " task '", chunk.task_id(), "' move '", chunk.move_id(),
        "' in the stream of client ", ref_.client_id, " round ", ref_.round,
        " task '", ref_.task_id, "' move '", ref_.move_id, "'"));
  }
  const int64_t h = chunk.height(), w = chunk.width();
  if (h <= 0 || w <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "move ", ref_.move_id, ": sample chunk has image shape ", h, "x", w));
  }
  if (data_.rows > 0 && (h != data_.height || w != data_.width)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "move ", ref_.move_id, ": sample chunk changes the image shape from ",
        data_.height, "x", data_.width, " to ", h, "x", w));
  }
  if (chunk.offset() != received()) {
    return absl::InvalidArgumentError(
        absl::StrCat("move ", ref_.move_id, ": sample chunk at offset ",
                     chunk.offset(), ", expected ", received()));
  }
  const uint64_t n = chunk.labels().size();
  if (n == 0 || chunk.pixels().size() != n * static_cast<uint64_t>(h * w)) {
    return absl::InvalidArgumentError(
        absl::StrCat("move ", ref_.move_id, ": sample chunk has ", n,
                     " labels and ", chunk.pixels().size(), " pixel bytes; ", h,
                     "x", w, " images need ", n * h * w));
  }
  if (received() + n > expected_) {
    return absl::InvalidArgumentError(
        absl::StrCat("move ", ref_.move_id, " holds ", expected_,
                     " samples; the stream sent ", received() + n));
  }
  data_.height = h;
  data_.width = w;
  data_.rows += static_cast<int64_t>(n);
  data_.pixels.insert(data_.pixels.end(), chunk.pixels().begin(),
                      chunk.pixels().end());
  data_.labels.insert(data_.labels.end(), chunk.labels().begin(),
                      chunk.labels().end());
  return absl::OkStatus();
}

absl::StatusOr<ImageDataset> SampleAssembler::Finish() {
  if (received() != expected_) {
    return absl::InvalidArgumentError(
        absl::StrCat("move ", ref_.move_id, " holds ", expected_,
                     " samples; the stream ended after ", received()));
  }
  return std::move(data_);
}

}  // namespace fedberry::runtime
