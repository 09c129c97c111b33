#include "runtime/tensor_codec.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

namespace fedberry::runtime::tensor_codec_test {
namespace {

NamedTensors Sample() {
  at::manual_seed(3);
  return {{"w", at::randn({3, 4})},
          {"b", at::randn({4})},
          {"steps", at::tensor({7}, at::kLong)},
          {"empty", at::zeros({0})}};
}

std::vector<v1::ModelChunk> Encode(const NamedTensors& m, int chunk_bytes,
                                   uint64_t round = 3,
                                   const std::string& task = "t") {
  std::vector<v1::ModelChunk> chunks;
  absl::Status s = EncodeModel(
      m, round, task,
      [&](const v1::ModelChunk& c) {
        chunks.push_back(c);
        return true;
      },
      chunk_bytes);
  EXPECT_TRUE(s.ok()) << s;
  return chunks;
}

absl::StatusOr<NamedTensors> Decode(
    const std::vector<v1::ModelChunk>& chunks,
    std::optional<std::vector<v1::TensorSpec>> expected = std::nullopt) {
  ModelAssembler a(3, "t", std::move(expected));
  for (const auto& c : chunks) {
    if (absl::Status s = a.Add(c); !s.ok()) return s;
  }
  return a.Finish();
}

// A server recycles its staging tensors: a matching RAW tensor is filled in
// place; one of another shape is left and a new one made.
TEST(ModelAssembler, FillsTheTensorsItIsGivenToReuse) {
  const NamedTensors model = Sample();
  at::Tensor spare_w = at::zeros({3, 4});
  at::Tensor spare_b = at::zeros({5});  // not b's shape
  const void* w_bytes = spare_w.data_ptr();
  ModelAssembler a(3, "t", std::nullopt);
  a.Reuse({{"w", spare_w}, {"b", spare_b}});
  spare_w.reset();
  for (const auto& c : Encode(model, 5)) ASSERT_TRUE(a.Add(c).ok());
  auto decoded = a.Finish();
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ((*decoded)[0].tensor.data_ptr(), w_bytes);
  EXPECT_NE((*decoded)[1].tensor.data_ptr(), spare_b.data_ptr());
  for (size_t i = 0; i < model.size(); ++i) {
    EXPECT_TRUE((*decoded)[i].tensor.equal(model[i].tensor)) << model[i].name;
  }
}

void ExpectEqual(const NamedTensors& a, const NamedTensors& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].tensor.scalar_type(), b[i].tensor.scalar_type());
    EXPECT_TRUE(a[i].tensor.equal(b[i].tensor)) << a[i].name;
  }
}

TEST(TensorCodec, RoundTripInOneChunkPerTensor) {
  auto m = Sample();
  auto chunks = Encode(m, 1 << 20);
  EXPECT_EQ(chunks.size(), 4u);
  auto back = Decode(chunks);
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectEqual(m, *back);
}

TEST(TensorCodec, RoundTripInSmallChunks) {
  auto m = Sample();
  auto chunks = Encode(m, 5);  // splits floats across chunk borders
  EXPECT_GT(chunks.size(), 10u);
  for (const auto& c : chunks) EXPECT_LE(c.data().size(), 5u);
  auto specs = SpecsOf(m);
  ASSERT_TRUE(specs.ok());
  auto back = Decode(chunks, *specs);
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectEqual(m, *back);
}

TEST(TensorCodec, RefusesOtherRoundAndTask) {
  auto m = Sample();
  ModelAssembler other_round(4, "t", std::nullopt);
  EXPECT_EQ(other_round.Add(Encode(m, 1 << 20)[0]).code(),
            absl::StatusCode::kFailedPrecondition);
  ModelAssembler other_task(3, "x", std::nullopt);
  EXPECT_EQ(other_task.Add(Encode(m, 1 << 20)[0]).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TensorCodec, RefusesWrongNameAndShape) {
  auto m = Sample();
  auto specs = *SpecsOf(m);
  auto renamed = m;
  renamed[0].name = "v";
  auto s = Decode(Encode(renamed, 1 << 20), specs).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'v'"), std::string::npos);

  auto reshaped = m;
  reshaped[0].tensor = at::zeros({4, 3});
  s = Decode(Encode(reshaped, 1 << 20), specs).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("[4, 3]"), std::string::npos);
}

TEST(TensorCodec, RefusesOutOfOrderMissingAndOversizedChunks) {
  auto m = Sample();
  auto chunks = Encode(m, 8);
  auto swapped = chunks;
  std::swap(swapped[1], swapped[2]);
  EXPECT_EQ(Decode(swapped).status().code(),
            absl::StatusCode::kInvalidArgument);

  auto missing = chunks;
  missing.pop_back();
  missing.pop_back();
  EXPECT_EQ(Decode(missing).status().code(),
            absl::StatusCode::kInvalidArgument);

  auto oversized = chunks;
  oversized[0].set_data(std::string(1000, 'x'));
  EXPECT_EQ(Decode(oversized).status().code(),
            absl::StatusCode::kInvalidArgument);

  auto no_spec = chunks;
  no_spec[0].clear_spec();
  EXPECT_EQ(Decode(no_spec).status().code(),
            absl::StatusCode::kInvalidArgument);

  EXPECT_EQ(Decode({}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(TensorCodec, RefusalsSayWhatWasWrongAndWhatWasExpected) {
  const NamedTensors m = Sample();
  auto specs = SpecsOf(m);
  ASSERT_TRUE(specs.ok());
  auto chunks = Encode(m, 1 << 20);
  // A stream that starts mid-tensor: the expected chunk is tensor 0's first
  // (no unsigned underflow in the message).
  std::vector<v1::ModelChunk> late = {chunks[1]};
  absl::Status s = Decode(late, *specs).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("expected tensor 0 offset 0"), std::string::npos)
      << s;
  EXPECT_EQ(s.message().find("18446744073709551615"), std::string::npos) << s;
  // A payload short of its spec, then the next tensor: said so, not "out
  // of order".
  std::vector<v1::ModelChunk> short_payload = chunks;
  short_payload[0].set_data(short_payload[0].data().substr(0, 4));
  s = Decode(short_payload, *specs).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("is short of its spec: 4 of"), std::string::npos)
      << s;
  // A dtype this build does not know is named by its number.
  std::vector<v1::ModelChunk> odd = chunks;
  odd[0].mutable_spec()->set_dtype(static_cast<v1::DType>(7));
  s = Decode(odd, *specs).status();
  EXPECT_NE(s.message().find("unknown dtype 7"), std::string::npos) << s;
  s = Decode(odd).status();  // no expected layout: the decoder refuses too
  EXPECT_NE(s.message().find("unknown dtype 7"), std::string::npos) << s;
  // Names from the wire are escaped in messages.
  std::vector<v1::ModelChunk> named = chunks;
  named[0].mutable_spec()->set_name("w\n\x1b[31m");
  s = Decode(named, *specs).status();
  EXPECT_EQ(s.message().find('\n'), std::string::npos) << s;
  EXPECT_EQ(s.message().find('\x1b'), std::string::npos) << s;
}

TEST(TensorCodec, CheckFiniteNamesTheTensor) {
  auto m = Sample();
  EXPECT_TRUE(CheckFinite(m).ok());
  m[1].tensor[2] = std::numeric_limits<float>::quiet_NaN();
  auto s = CheckFinite(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'b'"), std::string::npos);
  m[1].tensor[2] = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(CheckFinite(m).ok());
}

// Every value of every layout is looked at: the last of an odd-sized
// float32 tensor, -Inf, the largest finite value (finite), a NaN in a
// non-contiguous view, float64.
TEST(TensorCodec, CheckFiniteSeesEveryValue) {
  at::Tensor t = at::zeros({1001});
  t[1000] = -std::numeric_limits<float>::infinity();
  EXPECT_FALSE(CheckFinite({{"t", t}}).ok());
  t[1000] = std::numeric_limits<float>::max();
  t[0] = -std::numeric_limits<float>::max();
  EXPECT_TRUE(CheckFinite({{"t", t}}).ok());
  at::Tensor wide = at::zeros({4, 6});
  wide[3][1] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(CheckFinite({{"view", wide.t()}}).ok());
  EXPECT_TRUE(CheckFinite({{"view", wide.t().slice(0, 2)}}).ok());
  at::Tensor d = at::zeros({3}, at::kDouble);
  d[2] = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(CheckFinite({{"d", d}}).ok());
}

}  // namespace
}  // namespace fedberry::runtime::tensor_codec_test
