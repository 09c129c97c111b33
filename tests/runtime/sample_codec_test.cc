#include "runtime/sample_codec.h"

#include <gtest/gtest.h>

#include <vector>

namespace fedberry::runtime::sample_codec_test {
namespace {

ImageDataset Samples(int64_t rows, int64_t h = 3, int64_t w = 2) {
  ImageDataset d;
  d.rows = rows;
  d.height = h;
  d.width = w;
  for (int64_t i = 0; i < rows * h * w; ++i) d.pixels.push_back(i * 7 % 251);
  for (int64_t i = 0; i < rows; ++i) d.labels.push_back(i % 10);
  return d;
}

const SampleStreamRef kRef{"c1", 4, "r4-t", "r4-t-m1"};

std::vector<v1::SampleChunk> Encode(const ImageDataset& d) {
  std::vector<v1::SampleChunk> chunks;
  EXPECT_TRUE(EncodeSamples(d, kRef, [&](const v1::SampleChunk& c) {
                chunks.push_back(c);
                return true;
              }).ok());
  return chunks;
}

TEST(SampleCodec, RoundTripsAcrossChunks) {
  const ImageDataset d = Samples(2 * kSamplesPerChunk + 5);
  auto chunks = Encode(d);
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[1].offset(), static_cast<uint64_t>(kSamplesPerChunk));
  EXPECT_EQ(chunks[0].move_id(), "r4-t-m1");
  SampleAssembler a(kRef, d.rows);
  for (const auto& c : chunks) ASSERT_TRUE(a.Add(c).ok());
  auto out = a.Finish();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->rows, d.rows);
  EXPECT_EQ(out->height, 3);
  EXPECT_EQ(out->width, 2);
  EXPECT_EQ(out->pixels, d.pixels);
  EXPECT_EQ(out->labels, d.labels);
  EXPECT_EQ(SampleBytes(d), 7u);
}

TEST(SampleCodec, EncodeRefusesInconsistentSamplesAndReportsABrokenStream) {
  ImageDataset bad = Samples(3);
  bad.labels.pop_back();
  auto s =
      EncodeSamples(bad, kRef, [](const v1::SampleChunk&) { return true; });
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  s = EncodeSamples(Samples(3), kRef,
                    [](const v1::SampleChunk&) { return false; });
  EXPECT_TRUE(absl::IsCancelled(s)) << s;
}

void ExpectRefused(const v1::SampleChunk& chunk, const std::string& needle,
                   uint64_t expected = 4) {
  SampleAssembler a(kRef, expected);
  absl::Status s = a.Add(chunk);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(s.message().find(needle), std::string::npos) << s.message();
  EXPECT_EQ(a.received(), 0u);
}

TEST(SampleCodec, AssemblerRefusesChunksThatDoNotBelongOrDoNotAddUp) {
  const v1::SampleChunk good = Encode(Samples(4))[0];
  v1::SampleChunk c = good;
  c.set_client_id("c2");
  ExpectRefused(c, "client c2");
  c = good;
  c.set_move_id("r4-t-m2");
  ExpectRefused(c, "move 'r4-t-m2'");
  c = good;
  c.set_round(3);
  ExpectRefused(c, "round 3");
  c = good;
  c.set_task_id("other");
  ExpectRefused(c, "task 'other'");
  c = good;
  c.set_offset(1);
  ExpectRefused(c, "offset 1");
  c = good;
  c.set_height(0);
  ExpectRefused(c, "image shape 0x2");
  c = good;
  c.mutable_pixels()->pop_back();
  ExpectRefused(c, "pixel bytes");
  ExpectRefused(good, "holds 3 samples", 3);
}

TEST(SampleCodec, AssemblerRefusesAShapeChangeAndAShortStream) {
  auto chunks = Encode(Samples(kSamplesPerChunk + 1));
  SampleAssembler a(kRef, kSamplesPerChunk + 1);
  ASSERT_TRUE(a.Add(chunks[0]).ok());
  v1::SampleChunk c = chunks[1];
  c.set_height(2);
  c.set_width(3);
  absl::Status s = a.Add(c);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(s.message().find("changes the image shape"), std::string::npos);
  auto out = a.Finish();
  EXPECT_TRUE(absl::IsInvalidArgument(out.status())) << out.status();
  EXPECT_NE(out.status().message().find("ended after 1024"), std::string::npos)
      << out.status();
}

}  // namespace
}  // namespace fedberry::runtime::sample_codec_test
