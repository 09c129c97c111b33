// The update encodings: each round-trips within its stated error, top-k's
// error feedback adds up to the dense updates, and a stream that does not
// follow the plan is refused naming what is wrong.
#include "runtime/update_encoding.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstring>

#include "runtime/tensor_codec.h"

namespace fedberry::runtime::update_encoding_test {
namespace {

at::Tensor Random(int64_t n, double scale, uint64_t seed) {
  at::manual_seed(seed);
  return at::randn({n}) * scale;
}

at::Tensor RoundTrip(const at::Tensor& value, v1::Encoding encoding,
                     const at::Tensor* reference, double fraction = 0.1,
                     at::Tensor* residual = nullptr) {
  auto e = EncodeTensor("t", value, encoding, reference, fraction, residual);
  EXPECT_TRUE(e.ok()) << e.status();
  auto d = DecodeTensor(e->spec, e->payload(), reference);
  EXPECT_TRUE(d.ok()) << d.status();
  return *d;
}

TEST(UpdateEncoding, EachEncodingRoundTripsWithinItsError) {
  const at::Tensor global = Random(1000, 1.0, 1);
  const at::Tensor update = global + Random(1000, 0.01, 2);
  const at::Tensor delta = update - global;

  EXPECT_TRUE(RoundTrip(update, v1::ENCODING_RAW, nullptr).equal(update));
  // fp16 of the difference: relative error at most 2^-11 per value.
  at::Tensor fp16 = RoundTrip(update, v1::ENCODING_FP16, &global);
  EXPECT_LE(((fp16 - update).abs() - delta.abs() * std::ldexp(1.0, -11))
                .max()
                .item<float>(),
            1e-6f);
  // int8: at most half a step of max|delta| / 127.
  const float step = delta.abs().max().item<float>() / 127;
  at::Tensor int8 = RoundTrip(update, v1::ENCODING_INT8, &global);
  EXPECT_LE((int8 - update).abs().max().item<float>(), step / 2 + 1e-6f);
  // topk 10%: the 100 largest differences exactly, the rest left at the
  // global model.
  at::Tensor topk = RoundTrip(update, v1::ENCODING_TOPK, &global, 0.1);
  const at::Tensor sent = topk - global;
  EXPECT_EQ((sent != 0).sum().item<int64_t>(), 100);
  const float smallest_sent =
      std::get<0>(delta.abs().topk(100)).min().item<float>();
  EXPECT_TRUE(at::allclose(sent.masked_select(sent != 0),
                           delta.masked_select(sent != 0), 0, 1e-6));
  EXPECT_LE(delta.masked_select(sent == 0).abs().max().item<float>(),
            smallest_sent);
  // Sizes on the wire: 4000 raw, 2000 fp16, 1000 int8, 100 * 8 topk.
  EXPECT_EQ(*PayloadBytes(
                EncodeTensor("t", update, v1::ENCODING_FP16, &global)->spec),
            2000u);
  EXPECT_EQ(EncodeTensor("t", update, v1::ENCODING_TOPK, &global, 0.1)
                ->payload()
                .size(),
            800u);
  // Integer tensors stay RAW whatever was asked.
  const at::Tensor counts = at::tensor({3, 4}, at::kLong);
  auto e = EncodeTensor("n", counts, v1::ENCODING_INT8, nullptr);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->spec.encoding(), v1::ENCODING_RAW);
  EXPECT_FALSE(e->spec.delta());
}

TEST(UpdateEncoding, TopKErrorFeedbackSumsToTheDenseUpdates) {
  const at::Tensor global = at::zeros({50});
  at::Tensor residual;
  at::Tensor dense_total = at::zeros({50});
  at::Tensor sent_total = at::zeros({50});
  for (int round = 0; round < 20; ++round) {
    const at::Tensor update = Random(50, 1.0, 100 + round);
    dense_total += update;
    sent_total += RoundTrip(update, v1::ENCODING_TOPK, &global, 0.1, &residual);
    // What was sent plus what is kept back is exactly what was trained.
    EXPECT_TRUE(at::allclose(sent_total + residual, dense_total, 1e-5, 1e-5))
        << "round " << round;
  }
  // The residual stays bounded: nothing is lost, it is only late.
  EXPECT_LT(residual.abs().max().item<float>(), 10.0f);
}

NamedTensors Model(float w) {
  return {{"w", at::full({2, 3}, w)}, {"n", at::tensor({7}, at::kLong)}};
}

// An encoded update of `model` relative to `global`, as chunks.
std::vector<v1::ModelChunk> Stream(const NamedTensors& model,
                                   const NamedTensors& global,
                                   v1::Encoding encoding, double fraction) {
  std::vector<EncodedTensor> tensors;
  for (size_t i = 0; i < model.size(); ++i) {
    tensors.push_back(*EncodeTensor(model[i].name, model[i].tensor, encoding,
                                    &global[i].tensor, fraction));
  }
  std::vector<v1::ModelChunk> chunks;
  EXPECT_TRUE(EncodeTensors(
                  tensors, 3, "r3-x",
                  [&](const v1::ModelChunk& c) {
                    chunks.push_back(c);
                    return true;
                  },
                  /*chunk_bytes=*/5)
                  .ok());
  return chunks;
}

absl::Status Assemble(const std::vector<v1::ModelChunk>& chunks,
                      const NamedTensors& global, v1::Encoding plan,
                      double fraction, NamedTensors* out = nullptr) {
  ModelAssembler a(3, "r3-x", UpdateSpecs(*SpecsOf(global), plan, fraction),
                   std::make_shared<const NamedTensors>(global));
  for (const auto& c : chunks) {
    if (absl::Status s = a.Add(c); !s.ok()) return s;
  }
  auto done = a.Finish();
  if (done.ok() && out != nullptr) *out = *done;
  return done.status();
}

TEST(UpdateEncoding, AnEncodedStreamAssemblesAcrossChunks) {
  const NamedTensors global = Model(1);
  for (v1::Encoding e :
       {v1::ENCODING_FP16, v1::ENCODING_INT8, v1::ENCODING_TOPK}) {
    SCOPED_TRACE(EncodingName(e));
    NamedTensors got;
    ASSERT_TRUE(
        Assemble(Stream(Model(1.5), global, e, 1.0), global, e, 1.0, &got)
            .ok());
    EXPECT_TRUE(at::allclose(got[0].tensor, at::full({2, 3}, 1.5f)));
    EXPECT_EQ(got[1].tensor.item<int64_t>(), 7);
  }
}

TEST(UpdateEncoding, StreamsThePlanDidNotAskForAreRefused) {
  const NamedTensors global = Model(1);
  auto refused = [&](const std::vector<v1::ModelChunk>& chunks,
                     v1::Encoding plan, double fraction, const char* words) {
    absl::Status s = Assemble(chunks, global, plan, fraction);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_NE(s.message().find(words), std::string::npos)
        << s.message() << " does not say " << words;
  };
  // Another encoding than the plan's, or whole weights instead of a
  // difference.
  refused(Stream(Model(2), global, v1::ENCODING_FP16, 1), v1::ENCODING_INT8, 1,
          "the job's plan asks for ENCODING_INT8");
  std::vector<v1::ModelChunk> raw;
  ASSERT_TRUE(EncodeModel(Model(2), 3, "r3-x", [&](const v1::ModelChunk& c) {
                raw.push_back(c);
                return true;
              }).ok());
  refused(raw, v1::ENCODING_TOPK, 0.5, "is encoded ENCODING_RAW");
  // More top-k records than the plan's fraction allows (6 of 6 > 3 of 6).
  refused(Stream(Model(2), global, v1::ENCODING_TOPK, 1.0), v1::ENCODING_TOPK,
          0.5, "announces 6 top-k records; the plan's fraction allows 3");

  // Top-k indices out of range, repeated or descending; a NaN int8 scale.
  auto edited =
      [&](v1::Encoding e, double fraction,
          const std::function<void(v1::TensorSpec&, std::string&)>& edit) {
        auto enc = EncodeTensor("w", at::tensor({1.f, -2.f, 3.f, 0.5f}), e,
                                nullptr, fraction);
        EXPECT_TRUE(enc.ok());
        v1::TensorSpec spec = enc->spec;
        std::string data(enc->payload());
        edit(spec, data);
        return DecodeTensor(spec, data, nullptr).status();
      };
  auto set_index = [](std::string& data, int record, uint32_t index) {
    std::memcpy(&data[record * 8], &index, sizeof(index));
  };
  absl::Status s = edited(v1::ENCODING_TOPK, 0.5,
                          [&](auto&, auto& d) { set_index(d, 1, 4); });
  EXPECT_NE(s.message().find("indices must ascend below 4"), std::string::npos)
      << s;
  s = edited(v1::ENCODING_TOPK, 0.5, [&](auto&, auto& d) {
    set_index(d, 1, 1);
    set_index(d, 0, 1);
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  s = edited(v1::ENCODING_TOPK, 0.5,
             [](v1::TensorSpec& spec, auto&) { spec.set_nnz(5); });
  EXPECT_NE(s.message().find("announces 5 top-k records for 4 values"),
            std::string::npos)
      << s;
  s = edited(v1::ENCODING_INT8, 0, [](v1::TensorSpec& spec, auto&) {
    spec.set_scale(std::nanf(""));
  });
  EXPECT_NE(s.message().find("int8 scale nan"), std::string::npos) << s;
  s = edited(v1::ENCODING_FP16, 0, [](auto&, std::string& d) { d.pop_back(); });
  EXPECT_NE(s.message().find("carries 7 bytes; its spec announces 8"),
            std::string::npos)
      << s;
  // A difference with no global model to add it to.
  const at::Tensor zeros = at::zeros({2});
  auto delta = EncodeTensor("w", at::ones({2}), v1::ENCODING_FP16, &zeros);
  EXPECT_FALSE(DecodeTensor(delta->spec, delta->payload(), nullptr).ok());
}

}  // namespace
}  // namespace fedberry::runtime::update_encoding_test
