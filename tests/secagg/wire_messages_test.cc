// secagg/wire_messages.h: each message survives the trip through its
// protobuf, and what comes off the wire with a wrong shape (short keys,
// oversized boxes and signatures, a board outside its cohort, a clip that
// is not a number) is refused naming the field.
#include "secagg/wire_messages.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace fedberry::secagg {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

BoardTaskSettings Settings() {
  BoardTaskSettings s;
  s.config.session = "round-3-00ff";
  s.config.cohort = 6;
  s.config.neighbours = 4;
  s.config.threshold = 3;
  s.config.bits = 32;
  s.config.vector_length = 61707;
  for (size_t i = 0; i < s.config.graph_seed.size(); ++i) {
    s.config.graph_seed[i] = static_cast<uint8_t>(i * 7);
  }
  s.board = 5;
  s.clip = 0.5;
  s.weight_cap = 1000;
  return s;
}

TEST(WireMessages, TaskRoundTrips) {
  auto back = FromProto(ToProto(Settings()));
  ASSERT_TRUE(back.ok()) << back.status();
  const BoardTaskSettings want = Settings();
  EXPECT_EQ(back->config.session, want.config.session);
  EXPECT_EQ(back->config.cohort, 6);
  EXPECT_EQ(back->config.neighbours, 4);
  EXPECT_EQ(back->config.threshold, 3);
  EXPECT_EQ(back->config.bits, 32);
  EXPECT_EQ(back->config.vector_length, 61707u);
  EXPECT_EQ(back->config.graph_seed, want.config.graph_seed);
  EXPECT_EQ(back->board, 5u);
  EXPECT_EQ(back->clip, 0.5);
  EXPECT_EQ(back->weight_cap, 1000u);
}

TEST(WireMessages, TaskRefusesFieldsOutOfRange) {
  v1::SecAggTask task = ToProto(Settings());
  task.set_board(6);
  EXPECT_THAT(FromProto(task).status().message(),
              HasSubstr("secagg board 6 is outside the cohort of 6"));
  task = ToProto(Settings());
  task.set_graph_seed("short");
  EXPECT_THAT(FromProto(task).status().message(),
              HasSubstr("secagg graph_seed must be 32 bytes, not 5"));
  for (double clip : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN(),
                      std::numeric_limits<double>::infinity()}) {
    task = ToProto(Settings());
    task.set_clip(clip);
    EXPECT_THAT(FromProto(task).status().message(),
                HasSubstr("secagg clip must be finite and positive"))
        << clip;
  }
  task = ToProto(Settings());
  task.set_weight_cap(0);
  EXPECT_THAT(FromProto(task).status().message(),
              HasSubstr("secagg weight_cap must be positive"));
}

TEST(WireMessages, KeysRoundTripAndRefuseWrongSizes) {
  KeyAdvertisement ad;
  ad.board = 2;
  ad.transport_public.fill(0x11);
  ad.mask_public.fill(0x22);
  ad.signature = {1, 2, 3};
  auto back = FromProto(ToProto(ad));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->board, 2u);
  EXPECT_EQ(back->transport_public, ad.transport_public);
  EXPECT_EQ(back->mask_public, ad.mask_public);
  EXPECT_THAT(back->signature, ElementsAre(1, 2, 3));

  v1::SecAggKeys keys = ToProto(ad);
  keys.set_mask_public(std::string(31, 'x'));
  EXPECT_THAT(FromProto(keys).status().message(),
              HasSubstr("secagg mask_public must be 32 bytes, not 31"));
  keys = ToProto(ad);
  keys.set_signature(std::string(kMaxSignatureBytes + 1, 's'));
  EXPECT_THAT(FromProto(keys).status().message(),
              HasSubstr("secagg signature of 1025 bytes"));
  keys = ToProto(ad);
  keys.set_certificate(std::string(kMaxCertificateBytes + 1, 'c'));
  EXPECT_THAT(FromProto(keys).status().message(),
              HasSubstr("secagg certificate of 16385 bytes"));
}

TEST(WireMessages, ShareBoxesAndSharesAreBounded) {
  ShareCiphertext box{1, 4, std::vector<uint8_t>(100, 9)};
  auto back = FromProto(ToProto(box));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->sender, 1u);
  EXPECT_EQ(back->receiver, 4u);
  EXPECT_EQ(back->box, box.box);
  v1::SecAggShareBox big = ToProto(box);
  big.set_box(std::string(kMaxShareBoxBytes + 1, 'b'));
  EXPECT_THAT(FromProto(big).status().message(),
              HasSubstr("secagg share box of 4097 bytes"));

  UnmaskShare share;
  share.owner = 3;
  share.kind = ShareKind::kMaskKey;
  share.share.index = 2;
  share.share.secret_size = 32;
  share.share.values = {5, 6, 7, 8};
  auto share_back = FromProto(ToProto(share));
  ASSERT_TRUE(share_back.ok()) << share_back.status();
  EXPECT_EQ(share_back->owner, 3u);
  EXPECT_EQ(share_back->kind, ShareKind::kMaskKey);
  EXPECT_EQ(share_back->share.index, 2u);
  EXPECT_EQ(share_back->share.values, share.share.values);
  v1::SecAggShare many = ToProto(share);
  for (size_t i = 0; i < kMaxShareValues; ++i) many.add_values(i);
  EXPECT_THAT(FromProto(many).status().message(),
              HasSubstr("values; at most 64"));
}

}  // namespace
}  // namespace fedberry::secagg
