#include "server/round/client_registry.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "absl/strings/match.h"

namespace fedberry::server::client_registry_test {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1'000'000);

ClientRecord Board(const std::string& name, uint64_t samples = 10) {
  ClientRecord c;
  c.name = name;
  c.num_samples = samples;
  c.joined = kStart;
  c.last_seen = kStart;
  return c;
}

TEST(ClientRegistry, IssuesUnguessableIdsInSequence) {
  ClientRegistry registry(10);
  const std::string a = registry.Add(Board("a"));
  const std::string b = registry.Add(Board("b"));
  EXPECT_TRUE(absl::StartsWith(a, "c0001-")) << a;
  EXPECT_TRUE(absl::StartsWith(b, "c0002-")) << b;
  EXPECT_EQ(a.size(), 6u + 32u);  // 128 random bits in hex
  EXPECT_NE(a.substr(6), b.substr(6));
  EXPECT_EQ(*registry.NameOf(a), "a");
  auto unknown = registry.NameOf("c0003-forged");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(unknown.status().message(), "join"));
}

TEST(ClientRegistry, IsBoundedButAlwaysLetsAKnownNameIn) {
  ClientRegistry registry(2);
  registry.Add(Board("a"));
  registry.Add(Board("b"));
  const absl::Status full = registry.CheckRoom("c");
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(full.message(), "--max_clients")) << full;
  EXPECT_TRUE(registry.CheckRoom("a").ok());  // a board restarting
}

TEST(ClientRegistry, ARestoredIdIsNeverIssuedAgain) {
  ClientRegistry registry(10);
  registry.Restore("c0041-00ff", Board("old"));
  EXPECT_TRUE(absl::StartsWith(registry.Add(Board("new")), "c0042-"));
  EXPECT_EQ(registry.IdsNamed("old"), std::vector<std::string>{"c0041-00ff"});
}

// The checkpoint's copy: ids and declarations come back; each restored
// board counts as having polled but not yet heard by this server.
TEST(ClientRegistry, RestoresWhatItsSnapshotKeptAndWhatAdmitTakes) {
  ClientRegistry registry(10);
  ClientRecord gateway = Board("gateway", 40);
  gateway.boards = 4;
  gateway.client_version = "0.1.0";
  const std::string g = registry.Add(gateway);
  const std::string old = registry.Add(Board("old"));
  const std::vector<RegisteredClient> kept = registry.Snapshot();
  ASSERT_EQ(kept.size(), 2u);
  ClientRegistry restored(10);
  restored.Add(Board("forgotten"));
  const absl::Time now = kStart + absl::Hours(1);
  restored.RestoreFrom(
      kept, now, [](const RegisteredClient& c) { return c.name != "old"; });
  ASSERT_EQ(restored.size(), 1);
  const ClientRecord* r = restored.Find(g);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->boards, 4u);
  EXPECT_EQ(r->num_samples, 40u);
  EXPECT_EQ(r->client_version, "0.1.0");
  EXPECT_EQ(r->last_seen, now);
  EXPECT_TRUE(r->polled);
  EXPECT_FALSE(r->heard);
  EXPECT_EQ(restored.Find(old), nullptr);
}

TEST(ClientRegistry, ForgetsJoinsThatNeverAskedForATaskUnlessKept) {
  ClientRegistry registry(10);
  const std::string silent = registry.Add(Board("silent"));
  const std::string kept = registry.Add(Board("kept"));
  const std::string asked = registry.Add(Board("asked"));
  registry.At(asked).polled = true;
  const absl::Duration liveness = absl::Minutes(2);
  const auto keep = [&kept](const std::string& id) { return id == kept; };
  EXPECT_EQ(registry.Prune(kStart + absl::Minutes(1), liveness, keep), 0);
  EXPECT_EQ(registry.Prune(kStart + absl::Minutes(3), liveness, keep), 1);
  EXPECT_EQ(registry.Find(silent), nullptr);
  EXPECT_NE(registry.Find(kept), nullptr);
  EXPECT_NE(registry.Find(asked), nullptr);
}

TEST(ClientRegistry, AvailableBoardsAskedAndWereHeardRecently) {
  ClientRegistry registry(10);
  const std::string fresh = registry.Add(Board("fresh"));
  const std::string stale = registry.Add(Board("stale"));
  registry.Add(Board("never asked"));
  registry.At(fresh).polled = true;
  registry.At(fresh).last_seen = kStart + absl::Minutes(3);
  registry.At(stale).polled = true;
  EXPECT_EQ(registry.Available(kStart + absl::Minutes(4), absl::Minutes(2)),
            std::vector<std::string>{fresh});
  // Still owed DONE: asked, heard since, not told; a restored board only
  // once it asks again.
  EXPECT_EQ(registry.AwaitingDone(kStart + absl::Minutes(2)), 1);
  registry.At(fresh).told_done = true;
  EXPECT_EQ(registry.AwaitingDone(kStart), 1);  // stale, heard at kStart
  registry.At(stale).heard = false;
  EXPECT_EQ(registry.AwaitingDone(kStart), 0);
  EXPECT_EQ(registry.samples(), 30u);
}

}  // namespace
}  // namespace fedberry::server::client_registry_test
