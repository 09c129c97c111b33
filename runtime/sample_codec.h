// Moved training samples on the wire (the data-move mode for trusted
// clusters): a data set's samples as a stream of SampleChunks, and the
// checked reassembly of such a stream. No LibTorch here.
// Thread-safety: SampleAssembler is not thread-safe; the rest is pure.
#ifndef FEDBERRY_RUNTIME_SAMPLE_CODEC_H_
#define FEDBERRY_RUNTIME_SAMPLE_CODEC_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fedberry/v1/federation.pb.h"
#include "runtime/image_dataset.h"

namespace fedberry::runtime {

// What every chunk of one move's stream names.
struct SampleStreamRef {
  std::string client_id;
  uint64_t round = 0;
  std::string task_id;
  std::string move_id;
};

// Samples per chunk: 1024 Fashion-MNIST images are about 800 KB, well
// under gRPC's default message limit.
inline constexpr int64_t kSamplesPerChunk = 1024;

// Bytes one sample of `data` takes on the wire (pixels and label).
uint64_t SampleBytes(const ImageDataset& data);

// Cuts `data`'s samples into a move's chunks one at a time, for writers
// that send the next chunk when the last is out (gRPC's callback API).
// `data` must outlive the chunker.
class SampleChunker {
 public:
  // InvalidArgument when `data` holds no samples or its sizes disagree.
  static absl::StatusOr<SampleChunker> Make(const ImageDataset& data,
                                            const SampleStreamRef& ref);

  // Fills `chunk` with the next one; false when every chunk is out.
  bool Next(v1::SampleChunk& chunk);
  // The first sample of the last chunk (for messages).
  int64_t first() const { return first_; }

 private:
  SampleChunker(const ImageDataset& data, const SampleStreamRef& ref)
      : data_(data), ref_(ref) {}

  const ImageDataset& data_;
  SampleStreamRef ref_;
  int64_t next_ = 0;   // the first sample of the next chunk
  int64_t first_ = 0;  // the first sample of the last chunk
};

// Streams all samples of `data` (at least one) in chunks. Cancelled when
// `write` returns false (the stream broke).
absl::Status EncodeSamples(
    const ImageDataset& data, const SampleStreamRef& ref,
    const std::function<bool(const v1::SampleChunk&)>& write);

// Rebuilds one move's samples from its chunks, refusing anything that does
// not belong to `ref` (round, task, move) or does not add up.
class SampleAssembler {
 public:
  SampleAssembler(SampleStreamRef ref, uint64_t expected_samples)
      : ref_(std::move(ref)), expected_(expected_samples) {}

  // InvalidArgument naming what is wrong: another client, round, task or
  // move, an offset out of order, a zero or changing image shape, pixel or
  // label bytes that do not match the chunk's sample count, more samples
  // than the move holds.
  absl::Status Add(const v1::SampleChunk& chunk);
  // The samples; InvalidArgument when fewer than expected arrived.
  absl::StatusOr<ImageDataset> Finish();

  uint64_t received() const { return static_cast<uint64_t>(data_.rows); }

 private:
  SampleStreamRef ref_;
  uint64_t expected_;
  ImageDataset data_;
};

}  // namespace fedberry::runtime

#endif  // FEDBERRY_RUNTIME_SAMPLE_CODEC_H_
