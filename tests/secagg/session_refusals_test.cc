// What the two sides of a SecAgg+ session refuse: tampered or misattributed
// signatures, tampered or misrouted share boxes, a second masked input (also
// from a board restored from its saved state), an unmask request for both
// of a neighbour's shares or for a board that is not a neighbour, and the
// server's checks on who sends what when.
#include <gtest/gtest.h>

#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/secagg/session_harness.h"

namespace fedberry::secagg::session_refusals_test {
namespace {

using testing::SessionRun;
using testing::TestConfig;

// A status with `want`'s code whose message holds `text`; a macro so a
// failure names the caller's line.
#define EXPECT_REFUSED(expr, want, text)                           \
  do {                                                             \
    const absl::Status refused_status = (expr);                    \
    EXPECT_EQ(refused_status.code(), absl::StatusCode::want)       \
        << refused_status;                                         \
    EXPECT_TRUE(absl::StrContains(refused_status.message(), text)) \
        << refused_status;                                         \
  } while (0)

// A board of 0..n-1 that is not `board`'s neighbour nor itself.
uint32_t NonNeighbour(const NeighbourGraph& graph, uint32_t board) {
  for (uint32_t b = 0; b < static_cast<uint32_t>(graph.size()); ++b) {
    if (b != board && !graph.Adjacent(board, b)) return b;
  }
  ADD_FAILURE() << "board " << board << " neighbours everyone";
  return board;
}

TEST(SessionRefusalsTest, ServerRefusesTamperedSignatures) {
  SessionRun run(TestConfig(6, 4, 2, 24, 32, 11), 11);
  absl::StatusOr<KeyAdvertisement> ad = run.board(2).AdvertiseKeys();
  ASSERT_TRUE(ad.ok()) << ad.status();
  KeyAdvertisement bad = *ad;
  bad.signature[0] ^= 1;
  EXPECT_REFUSED(run.server().AcceptAdvertisement(bad), kPermissionDenied,
                 "advertisement of board 2 is refused");
  bad = *ad;  // a key swapped under the genuine signature
  bad.mask_public[5] ^= 1;
  EXPECT_REFUSED(run.server().AcceptAdvertisement(bad), kPermissionDenied,
                 "board 2");
  bad = *ad;  // board 1 signing board 2's keys
  absl::StatusOr<std::vector<uint8_t>> other =
      run.signer(1).Sign(AdvertisementSigningBytes(run.server().config(), *ad));
  ASSERT_TRUE(other.ok());
  bad.signature = *other;
  EXPECT_REFUSED(run.server().AcceptAdvertisement(bad), kPermissionDenied,
                 "board 2");
  // Refusals are not recorded: the genuine one still counts, once.
  EXPECT_TRUE(run.server().AcceptAdvertisement(*ad).ok());
  EXPECT_REFUSED(run.server().AcceptAdvertisement(*ad), kAlreadyExists,
                 "already advertised");
}

TEST(SessionRefusalsTest, BoardRefusesATamperedNeighbourAdvertisement) {
  SessionRun run(TestConfig(6, 4, 2, 24, 32, 12), 12);
  ASSERT_TRUE(run.Advertise().ok());
  std::vector<KeyAdvertisement> ads = run.to_share[0];
  ASSERT_FALSE(ads.empty());
  ads[0].transport_public[0] ^= 1;
  EXPECT_REFUSED(
      run.board(0).ShareKeys(ads).status(), kPermissionDenied,
      absl::StrCat("refused the advertisement of board ", ads[0].board));
  EXPECT_EQ(run.board(0).stage(), BoardStage::kAdvertised);
  // Another board's advertisement among them: not a neighbour.
  ads = run.to_share[0];
  const uint32_t stranger = NonNeighbour(run.server().graph(), 0);
  ads.push_back(ads[0]);
  ads.back().board = stranger;
  EXPECT_REFUSED(run.board(0).ShareKeys(ads).status(), kInvalidArgument,
                 "not its neighbour");
  EXPECT_TRUE(run.board(0).ShareKeys(run.to_share[0]).ok());
}

TEST(SessionRefusalsTest, BoardRefusesTamperedOrMisroutedShareBoxes) {
  SessionRun run(TestConfig(6, 4, 2, 24, 32, 13), 13);
  ASSERT_TRUE(run.Advertise().ok());
  ASSERT_TRUE(run.ShareKeys().ok());
  std::vector<ShareCiphertext> boxes = run.inbound[3];
  ASSERT_FALSE(boxes.empty());
  boxes[0].box[20] ^= 0x40;
  EXPECT_REFUSED(
      run.board(3).MaskInput(run.update(3), boxes).status(), kDataLoss,
      absl::StrCat("refused the share box from board ", boxes[0].sender));
  EXPECT_EQ(run.board(3).stage(), BoardStage::kSharedKeys);
  // A box for board 3 handed to another neighbour of its sender.
  const ShareCiphertext for3 = run.inbound[3][0];
  uint32_t other = 0;
  for (uint32_t n : run.server().graph().Of(for3.sender)) {
    if (n != 3) other = n;
  }
  std::vector<ShareCiphertext> theirs = run.inbound[other];
  for (ShareCiphertext& c : theirs) {
    if (c.sender == for3.sender) c.box = for3.box;
  }
  EXPECT_REFUSED(run.board(other).MaskInput(run.update(other), theirs).status(),
                 kDataLoss, "failed authentication");
  // A box naming another receiver is refused before it is opened.
  boxes = run.inbound[3];
  boxes[0].receiver = other;
  EXPECT_REFUSED(run.board(3).MaskInput(run.update(3), boxes).status(),
                 kInvalidArgument, "addressed to it");
  EXPECT_TRUE(run.board(3).MaskInput(run.update(3), run.inbound[3]).ok());
}

TEST(SessionRefusalsTest, ServerChecksShareBoxRouting) {
  SessionRun run(TestConfig(6, 4, 2, 24, 32, 14), 14);
  ASSERT_TRUE(run.Advertise().ok());
  absl::StatusOr<ShareKeysMessage> m = run.board(0).ShareKeys(run.to_share[0]);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->boxes.size(), 4u);
  const uint32_t stranger = NonNeighbour(run.server().graph(), 0);
  ShareKeysMessage bad = *m;
  bad.boxes[1].receiver = stranger;
  EXPECT_REFUSED(run.server().AcceptShareKeys(bad), kInvalidArgument,
                 absl::StrCat("to board ", stranger));
  bad = *m;
  bad.boxes[1].sender = 4;
  EXPECT_REFUSED(run.server().AcceptShareKeys(bad), kInvalidArgument,
                 "from board 4");
  bad = *m;
  bad.boxes.pop_back();
  EXPECT_REFUSED(run.server().AcceptShareKeys(bad), kInvalidArgument,
                 "sent 3 share boxes for its 4 live neighbours");
  bad = *m;
  bad.boxes[2] = bad.boxes[1];
  EXPECT_REFUSED(run.server().AcceptShareKeys(bad), kInvalidArgument, "once");
  bad = *m;
  bad.boxes[0].box.pop_back();
  EXPECT_REFUSED(run.server().AcceptShareKeys(bad), kInvalidArgument, "bytes");
  EXPECT_TRUE(run.server().AcceptShareKeys(*m).ok());
  EXPECT_REFUSED(run.server().AcceptShareKeys(*m), kAlreadyExists,
                 "already shared");
}

TEST(SessionRefusalsTest, RestoredBoardRefusesToMaskAgain) {
  SessionRun run(TestConfig(6, 4, 2, 24, 64, 21), 21);
  ASSERT_TRUE(run.Advertise().ok());
  ASSERT_TRUE(run.ShareKeys().ok());
  BoardSession& board = run.board(1);
  const std::vector<uint8_t> before = board.Serialize();
  absl::StatusOr<MaskedInput> y =
      board.MaskInput(run.update(1), run.inbound[1]);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_REFUSED(board.MaskInput(run.update(1), run.inbound[1]).status(),
                 kFailedPrecondition, "it has sent its masked input");
  absl::StatusOr<BoardSession> restored = BoardSession::Restore(
      board.Serialize(), run.random(1), run.signer(1), run.verifier());
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(restored->stage(), BoardStage::kMasked);
  EXPECT_REFUSED(restored->MaskInput(run.update(1), run.inbound[1]).status(),
                 kFailedPrecondition, "it has sent its masked input");
  // Restored before masking, the board masks to the very same words: the
  // saved state holds everything masking needs.
  absl::StatusOr<BoardSession> earlier = BoardSession::Restore(
      before, run.random(1), run.signer(1), run.verifier());
  ASSERT_TRUE(earlier.ok()) << earlier.status();
  absl::StatusOr<MaskedInput> again =
      earlier->MaskInput(run.update(1), run.inbound[1]);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->masked, y->masked);
  // The restored board answers unmask requests from the shares it saved.
  UnmaskRequest request;
  const absl::Span<const uint32_t> near = run.server().graph().Of(1);
  request.survivors.assign(near.begin(), near.end());
  absl::StatusOr<UnmaskResponse> a = restored->Unmask(request);
  absl::StatusOr<UnmaskResponse> b = board.Unmask(request);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  ASSERT_EQ(a->shares.size(), near.size());
  for (size_t i = 0; i < near.size(); ++i) {
    EXPECT_EQ(a->shares[i].share.values, b->shares[i].share.values);
  }
}

TEST(SessionRefusalsTest, DamagedSavedStateIsDataLoss) {
  SessionRun run(TestConfig(6, 4, 2, 24, 16, 22), 22);
  ASSERT_TRUE(run.Advertise().ok());
  ASSERT_TRUE(run.ShareKeys().ok());
  ASSERT_TRUE(run.board(2).MaskInput(run.update(2), run.inbound[2]).ok());
  const std::vector<uint8_t> bytes = run.board(2).Serialize();
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    const std::vector<uint8_t> shorter(bytes.begin(), bytes.begin() + cut);
    EXPECT_EQ(BoardSession::Restore(shorter, run.random(2), run.signer(2),
                                    run.verifier())
                  .status()
                  .code(),
              absl::StatusCode::kDataLoss)
        << cut;
  }
  std::vector<uint8_t> longer = bytes;
  longer.push_back(0);
  EXPECT_REFUSED(BoardSession::Restore(longer, run.random(2), run.signer(2),
                                       run.verifier())
                     .status(),
                 kDataLoss, "trailing");
  std::vector<uint8_t> other = bytes;
  other[7] = 2;  // another format version
  EXPECT_REFUSED(
      BoardSession::Restore(other, run.random(2), run.signer(2), run.verifier())
          .status(),
      kDataLoss, "version-1");
}

TEST(SessionRefusalsTest, UnmaskNeverGivesBothSharesOfANeighbour) {
  SessionRun run(TestConfig(6, 4, 2, 24, 16, 31), 31);
  // Board 5 drops before sharing keys: nobody holds shares of it.
  ASSERT_TRUE(run.Advertise().ok());
  ASSERT_TRUE(run.ShareKeys({5}).ok());
  ASSERT_TRUE(run.MaskInputs().ok());
  const NeighbourGraph& graph = run.server().graph();
  uint32_t board = 0;
  while (!graph.Adjacent(board, 5)) ++board;
  BoardSession& b = run.board(board);
  uint32_t j =
      graph.Of(board)[0] == 5 ? graph.Of(board)[1] : graph.Of(board)[0];
  EXPECT_REFUSED(b.Unmask({{j}, {j}}).status(), kInvalidArgument,
                 absl::StrCat("asks for both shares of board ", j));
  const uint32_t stranger = NonNeighbour(graph, board);
  EXPECT_REFUSED(
      b.Unmask({{stranger}, {}}).status(), kInvalidArgument,
      absl::StrCat("names board ", stranger, ", which is not its neighbour"));
  EXPECT_REFUSED(b.Unmask({{}, {stranger}}).status(), kInvalidArgument,
                 "not its neighbour");
  EXPECT_REFUSED(b.Unmask({{}, {board}}).status(), kInvalidArgument,
                 "itself as dropped");
  EXPECT_REFUSED(b.Unmask({{}, {5}}).status(), kFailedPrecondition,
                 "does not hold");
  EXPECT_EQ(b.stage(), BoardStage::kMasked);
  // The server's request: one share per neighbour that shared, of the kind
  // its fate calls for; then never again.
  const UnmaskRequest& request = run.requests[board];
  absl::StatusOr<UnmaskResponse> response = b.Unmask(request);
  ASSERT_TRUE(response.ok()) << response.status();
  std::set<uint32_t> owners;
  for (const UnmaskShare& s : response->shares) {
    EXPECT_TRUE(owners.insert(s.owner).second) << s.owner;
    EXPECT_EQ(s.kind, ShareKind::kSelfMaskSeed);
    EXPECT_NE(s.owner, 5u);
  }
  EXPECT_EQ(owners.size(), graph.Of(board).size() - 1);
  EXPECT_REFUSED(b.Unmask(request).status(), kFailedPrecondition,
                 "it has sent its unmask shares");
}

TEST(SessionRefusalsTest, ServerChecksWhoSendsWhatWhen) {
  SessionRun run(TestConfig(6, 4, 2, 8, 16, 41), 41);
  ServerSession& server = run.server();
  KeyAdvertisement stranger;
  stranger.board = 6;
  EXPECT_REFUSED(server.AcceptAdvertisement(stranger), kInvalidArgument,
                 "board 6 is unknown");
  EXPECT_REFUSED(server.AcceptMaskedInput({0, {}}), kFailedPrecondition,
                 "a 'masked input' message from board 0 while at stage "
                 "'advertise keys'");
  ASSERT_TRUE(run.Advertise({4}).ok());
  EXPECT_REFUSED(server.AcceptShareKeys({4, {}}), kFailedPrecondition,
                 "board 4 dropped before stage 'share keys'");
  ASSERT_TRUE(run.ShareKeys().ok());
  MaskedInput y;
  y.board = 0;
  y.masked.assign(15, 0);
  EXPECT_REFUSED(server.AcceptMaskedInput(y), kInvalidArgument,
                 "has 15 words; the session's vectors have 16");
  y.masked.assign(16, 0);
  y.masked[9] = 256;
  EXPECT_REFUSED(server.AcceptMaskedInput(y), kInvalidArgument,
                 "masked word 9 is 256, not below 2^8");
  ASSERT_TRUE(run.MaskInputs().ok());
  // Unmask shares the board was not asked for: a key share of a survivor.
  absl::StatusOr<UnmaskResponse> r = run.board(0).Unmask(run.requests[0]);
  ASSERT_TRUE(r.ok()) << r.status();
  UnmaskResponse wrong = *r;
  ASSERT_FALSE(wrong.shares.empty());
  wrong.shares[0].kind = ShareKind::kMaskKey;
  EXPECT_REFUSED(server.AcceptUnmask(wrong), kInvalidArgument,
                 "which it was not asked for");
  EXPECT_TRUE(server.AcceptUnmask(*r).ok());
  EXPECT_REFUSED(server.AcceptUnmask(*r), kAlreadyExists, "already sent");
}

// A share of a dropped board's mask key altered on its way back: the key
// it rebuilds is not the advertised one (or the shares disagree), so the
// server refuses to unmask with it.
TEST(SessionRefusalsTest, AlteredMaskKeyShareIsDataLoss) {
  SessionRun run(TestConfig(6, 4, 2, 24, 16, 51), 51);
  ASSERT_TRUE(run.Advertise().ok());
  ASSERT_TRUE(run.ShareKeys().ok());
  ASSERT_TRUE(run.MaskInputs({4}).ok());
  bool altered = false;
  for (auto& [b, request] : run.requests) {
    absl::StatusOr<UnmaskResponse> r = run.board(b).Unmask(request);
    ASSERT_TRUE(r.ok()) << r.status();
    for (UnmaskShare& s : r->shares) {
      if (!altered && s.kind == ShareKind::kMaskKey) {
        s.share.values[0] ^= 1;
        altered = true;
      }
    }
    ASSERT_TRUE(run.server().AcceptUnmask(*r).ok());
  }
  ASSERT_TRUE(altered);
  EXPECT_REFUSED(run.server().Finish().status(), kDataLoss,
                 "dropped board 4's mask key did not rebuild");
  EXPECT_EQ(run.server().stage(), Stage::kAbandoned);
}

}  // namespace
}  // namespace fedberry::secagg::session_refusals_test
