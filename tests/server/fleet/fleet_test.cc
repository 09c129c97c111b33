// The fleet page and its JSON: board states as a table, every text from a
// board escaped or encoded, nothing secret, refused boards kept bounded,
// and the version gate.
#include <gtest/gtest.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "base/log_text.h"
#include "proto/wire.h"
#include "server/fleet/board_state.h"
#include "server/fleet/fleet_status.h"
#include "server/fleet/refused_joins.h"
#include "server/fleet/site_gateways.h"
#include "server/fleet/version_gate.h"

namespace fedberry::server::fleet_test {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

TEST(BoardState, FollowsWhatTheServerKnowsInOrder) {
  using HB = v1::HeartbeatRequest;
  struct Case {
    BoardFacts facts;
    BoardState want;
  };
  const Case cases[] = {
      {{}, BoardState::kIdle},
      {{.training = true}, BoardState::kTraining},
      {{.training = true, .heartbeat = HB::PAUSED}, BoardState::kPaused},
      {{.training = true, .heartbeat = HB::RELEASED}, BoardState::kReleased},
      // A paused heartbeat of an earlier task means nothing now.
      {{.heartbeat = HB::PAUSED}, BoardState::kIdle},
      {{.evaluating = true}, BoardState::kEvaluating},
      {{.declining = true}, BoardState::kDeclined},
      {{.training = true, .update_refused = true}, BoardState::kRefused},
      {{.heard_recently = false, .training = true}, BoardState::kGone},
      {{.heard_recently = false, .declining = true}, BoardState::kGone},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(StateOf(c.facts), c.want) << BoardStateName(c.want);
  }
  EXPECT_STREQ(BoardStateName(BoardState::kDeclined), "declined");
}

FleetStatus TwoBoards() {
  FleetStatus fleet;
  fleet.now = kNow;
  fleet.job_id = "job";
  fleet.model = "lenet5";
  fleet.strategy = "fedavg";
  fleet.state = "training";
  fleet.round = 3;
  fleet.total_rounds = 5;
  fleet.accuracy = {{1, 0.5}, {2, 0.75}};
  BoardRow a;
  a.name = "pi-a";
  a.state = BoardState::kTraining;
  a.last_seen = kNow - absl::Seconds(4);
  a.round = 3;
  a.steps_done = 5;
  a.steps_planned = 20;
  a.client_version = "0.2.0";
  a.samples_per_second = 812.5;
  a.peak_rss_bytes = 150 << 20;
  BoardRow b;
  b.name = "<script>alert('x')</script>";
  b.state = BoardState::kDeclined;
  b.last_seen = kNow - absl::Seconds(1);
  b.condition.set_declined("SoC at 71 C <img src=x onerror=alert(1)>");
  b.condition.set_soc_celsius(71.0);
  b.condition.set_throttled(0x50005);
  b.last_refusal = "\"quoted\" & <b>bold</b>";
  fleet.boards = {a, b};
  return fleet;
}

TEST(FleetJson, CarriesTheJobAndEveryBoardsFields) {
  nlohmann::json j = nlohmann::json::parse(FleetJson(TwoBoards()));
  EXPECT_EQ(j.at("round"), 3);
  EXPECT_EQ(j.at("total_rounds"), 5);
  EXPECT_EQ(j.at("state"), "training");
  EXPECT_EQ(j.at("accuracy").size(), 2u);
  ASSERT_EQ(j.at("boards").size(), 2u);
  const nlohmann::json& a = j.at("boards")[0];
  EXPECT_EQ(a.at("name"), "pi-a");
  EXPECT_EQ(a.at("state"), "training");
  EXPECT_EQ(a.at("last_seen"), "2027-01-15T07:59:56+00:00");
  EXPECT_EQ(a.at("round"), 3);
  EXPECT_EQ(a.at("steps_done"), 5);
  EXPECT_EQ(a.at("steps_planned"), 20);
  EXPECT_EQ(a.at("client_version"), "0.2.0");
  EXPECT_EQ(a.at("samples_per_second"), 812.5);
  const nlohmann::json& b = j.at("boards")[1];
  EXPECT_EQ(b.at("name"), "<script>alert('x')</script>");  // data, as sent
  EXPECT_EQ(b.at("state"), "declined");
  EXPECT_EQ(b.at("condition").at("soc_celsius"), 71.0);
  EXPECT_EQ(b.at("condition").at("throttled"), 0x50005);
  EXPECT_FALSE(b.contains("steps_planned"));
}

// Under secure aggregation the page and the JSON carry the last session's
// figures under rounds.jsonl's names; without it, neither mentions one.
TEST(FleetJson, CarriesTheLastSecureAggregationSession) {
  FleetStatus fleet = TwoBoards();
  EXPECT_FALSE(nlohmann::json::parse(FleetJson(fleet)).contains("secagg"));
  EXPECT_EQ(FleetPage(fleet).find("id=\"secagg\""), std::string::npos);
  FleetSecAgg s;
  s.round = 2;
  s.neighbours = 5;
  s.threshold = 3;
  s.started = 6;
  s.survived = 5;
  s.dropped_by_stage = {0, 0, 1, 0};
  s.seconds_by_stage = {8.5, 0.25, 0.5, 0.125};
  s.bytes_up = 3 << 20;
  fleet.secagg = s;
  const nlohmann::json j = nlohmann::json::parse(FleetJson(fleet)).at("secagg");
  EXPECT_EQ(j.at("round"), 2);
  EXPECT_EQ(j.at("secagg_boards_started"), 6);
  EXPECT_EQ(j.at("secagg_boards_survived"), 5);
  EXPECT_EQ(j.at("secagg_neighbours"), 5);
  EXPECT_EQ(j.at("secagg_threshold"), 3);
  EXPECT_EQ(j.at("secagg_dropped_by_stage"), nlohmann::json({0, 0, 1, 0}));
  EXPECT_EQ(j.at("secagg_seconds_by_stage")[0], 8.5);
  EXPECT_EQ(j.at("secagg_bytes_up"), 3 << 20);
  const std::string page = FleetPage(fleet);
  EXPECT_NE(page.find("Secure aggregation, round 2: <b id=\"secagg-counted\">"
                      "5 of 6</b> boards' updates counted (5 neighbours each, "
                      "threshold 3), 3.0 MiB up"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("<tr><td>masked input</td><td class=\"num\">1</td>"
                      "<td class=\"num\">0.50</td></tr>"),
            std::string::npos)
      << page;
}

TEST(FleetJson, ReplacesBytesThatAreNotUtf8InsteadOfFailing) {
  FleetStatus fleet = TwoBoards();
  fleet.boards[0].name = "pi-\xff\xfe";
  const std::string json = FleetJson(fleet);
  nlohmann::json j = nlohmann::json::parse(json);  // valid JSON
  EXPECT_EQ(j.at("boards")[0].at("name").get<std::string>().rfind("pi-", 0),
            0u);
}

TEST(FleetPage, EscapesEveryTextFromABoardAndLoadsNothing) {
  const std::string page = FleetPage(TwoBoards(), 5);
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("<img"), std::string::npos);
  EXPECT_EQ(page.find("<b>bold"), std::string::npos);
  EXPECT_NE(page.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"),
            std::string::npos);
  EXPECT_NE(page.find("declines: SoC at 71 C &lt;img"), std::string::npos);
  // Self-contained: no external asset, and it reloads itself.
  EXPECT_EQ(page.find("src=\"http"), std::string::npos);
  EXPECT_EQ(page.find("href=\"http"), std::string::npos);
  EXPECT_NE(page.find("http-equiv=\"refresh\" content=\"5\""),
            std::string::npos);
  EXPECT_NE(page.find("<svg"), std::string::npos);  // the accuracy chart
  EXPECT_NE(page.find("data-board=\"pi-a\" data-state=\"training\""),
            std::string::npos);
  EXPECT_NE(page.find("5/20 steps (25%)"), std::string::npos);
  EXPECT_NE(page.find("throttled 0x50005"), std::string::npos);
  EXPECT_NE(page.find("2 boards: 1 declined, 1 training"), std::string::npos);
}

TEST(FleetPage, ShowsAThousandRowsOfALargeFleetAndSaysSo) {
  FleetStatus fleet = TwoBoards();
  fleet.boards.resize(2500, fleet.boards[0]);
  const std::string page = FleetPage(fleet, 5);
  size_t rows = 0;
  for (size_t at = page.find("<tr data-board"); at != std::string::npos;
       at = page.find("<tr data-board", at + 1)) {
    ++rows;
  }
  EXPECT_EQ(rows, 1000u);
  EXPECT_NE(page.find("1000 of 2500 boards shown"), std::string::npos);
}

TEST(RefusedJoins, KeepsTheLatestRefusalOfEachNameBounded) {
  RefusedJoins refused(2);
  refused.Refused("a", "too old", "0.1.0", kNow);
  refused.Refused("b", "too old", "", kNow + absl::Seconds(1));
  refused.Refused("a", "still too old", "0.1.1", kNow + absl::Seconds(2));
  refused.Refused("c", "data does not fit", "0.2.0", kNow + absl::Seconds(3));
  std::vector<BoardRow> rows = refused.Rows();
  ASSERT_EQ(rows.size(), 2u);  // b, the oldest refusal, went
  EXPECT_EQ(rows[0].name, "a");
  EXPECT_EQ(rows[0].last_refusal, "still too old");
  EXPECT_EQ(rows[0].client_version, "0.1.1");
  EXPECT_EQ(rows[0].state, BoardState::kRefused);
  EXPECT_EQ(rows[1].name, "c");
  refused.Joined("a");
  ASSERT_EQ(refused.Rows().size(), 1u);
  EXPECT_EQ(refused.Rows()[0].name, "c");
}

// Only the gateways --site_gateways names may declare boards, each within
// its count; a board (0 boards) always may.
TEST(SiteGateways, OnlyListedGatewaysDeclareBoardsWithinTheirCount) {
  absl::StatusOr<SiteGateways> gateways =
      SiteGateways::Parse("shed-gw, barn-gw:50");
  ASSERT_TRUE(gateways.ok()) << gateways.status();
  EXPECT_TRUE(gateways->Admit("board-7", 0).ok());
  EXPECT_TRUE(gateways->Admit("shed-gw", 1000).ok());
  EXPECT_TRUE(gateways->Admit("barn-gw", 50).ok());
  const absl::Status many = gateways->Admit("barn-gw", 51);
  EXPECT_EQ(many.code(), absl::StatusCode::kInvalidArgument) << many;
  EXPECT_NE(many.message().find("at most 50"), std::string::npos) << many;
  // The impostor: a board declaring itself a gateway of 1,000.
  const absl::Status impostor = gateways->Admit("board-7", 1000);
  EXPECT_EQ(impostor.code(), absl::StatusCode::kPermissionDenied) << impostor;
  EXPECT_NE(impostor.message().find("--site_gateways"), std::string::npos);
  EXPECT_EQ(SiteGateways().Admit("shed-gw", 2).code(),
            absl::StatusCode::kPermissionDenied);
  for (const char* bad : {"gw:0", "gw:x", "gw:1:2", ":5", "g\nw"}) {
    absl::StatusOr<SiteGateways> parsed = SiteGateways::Parse(bad);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

// Whatever a refused board sent, what is kept of it is a few hundred bytes
// of valid UTF-8, cut on a character boundary: the name (CheckJoin allows
// 128 bytes), the version (64) and the reason (256).
TEST(RefusedJoins, CutsEveryBoardStringBeforeItIsStored) {
  RefusedJoins refused(4);
  const std::string megabyte = "\x1b[2J\xff" + std::string(1 << 20, 'v');
  refused.Refused(std::string(1 << 20, 'n'), megabyte, megabyte, kNow);
  std::string euros;  // 3 bytes each: 64 bytes hold 21 of them
  for (int i = 0; i < 40; ++i) euros += "\xe2\x82\xac";
  refused.Refused("pi-euro", euros, euros, kNow);
  std::vector<BoardRow> rows = refused.Rows();
  ASSERT_EQ(rows.size(), 2u);
  std::cout << "kept of a 1 MiB refused join: name " << rows[0].name.size()
            << " bytes, version " << rows[0].client_version.size()
            << " bytes, reason " << rows[0].last_refusal.size() << " bytes\n";
  EXPECT_EQ(rows[0].name, std::string(128, 'n'));
  EXPECT_EQ(rows[0].client_version.size(), 64u);
  EXPECT_LE(rows[0].last_refusal.size(), 256u);
  for (const BoardRow& row : rows) {
    for (const std::string* text :
         {&row.name, &row.client_version, &row.last_refusal}) {
      EXPECT_EQ(base::ValidUtf8(*text, text->size()), *text);
    }
  }
  EXPECT_EQ(rows[1].client_version.size(), 63u);  // 21 whole euro signs
  EXPECT_EQ(rows[1].client_version, euros.substr(0, 63));
}

// The page stays bounded whatever its rows hold: each text shown is cut,
// and rows stop once the page is full, saying how many were left out.
TEST(FleetPage, StaysUnderItsSizeBoundWhateverTheRowsHold) {
  FleetStatus fleet = TwoBoards();
  BoardRow row = fleet.boards[1];
  const std::string text(2048, '"');  // each byte escaped into 6
  row.name = text;
  row.client_version = text;
  row.architecture = text;
  row.last_refusal = text;
  row.condition.set_declined(text);
  fleet.boards.assign(1200, row);
  const std::string page = FleetPage(fleet, 5);
  const std::string json = FleetJson(fleet);
  std::cout << "1,200 rows of 2 KiB texts: page " << page.size()
            << " bytes, JSON " << json.size() << " bytes\n";
  EXPECT_LE(page.size(), 640u << 10);
  EXPECT_NE(page.find(" of 1200 boards shown"), std::string::npos);
  EXPECT_LE(json.size(), 1200u * 4096);
  EXPECT_EQ(page.find('\x1b'), std::string::npos);
}

TEST(VersionGate, AdmitsTheMinimumAndNewerAndTellsOlderToUpgrade) {
  EXPECT_TRUE(VersionGate().Admit("").ok());  // no gate
  absl::StatusOr<VersionGate> gate = VersionGate::Parse("0.2.0");
  ASSERT_TRUE(gate.ok());
  EXPECT_EQ(gate->minimum(), "0.2.0");
  EXPECT_TRUE(gate->Admit("0.2.0").ok());
  EXPECT_TRUE(gate->Admit("0.2.0-1").ok());
  EXPECT_TRUE(gate->Admit("0.10.0").ok());
  for (const char* old : {"0.1.9", ""}) {
    absl::Status s = gate->Admit(old);
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << old;
    EXPECT_EQ(wire::ReasonOf(s), wire::kReasonClientTooOld) << old;
    EXPECT_NE(s.message().find("upgrade fedberry-client"), std::string::npos);
  }
  EXPECT_NE(gate->Admit("").message().find("MAJOR.MINOR.PATCH"),
            std::string::npos);
}

// A version that is no release is said to be malformed, with the form
// expected, not "too old, upgrade" (which it was, for each of these).
TEST(VersionGate, AMalformedVersionIsSaidToBeMalformed) {
  absl::StatusOr<VersionGate> gate = VersionGate::Parse("0.2.0");
  ASSERT_TRUE(gate.ok());
  for (const char* malformed :
       {"999999999999999999999.0.0", "v0.1.0", "1.2", "0.10", "garbage",
        "1.2.3.4", "1..2", "\xc3\xa9.1.0"}) {
    absl::Status s = gate->Admit(malformed);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << malformed;
    EXPECT_NE(s.message().find("is malformed: expected MAJOR.MINOR.PATCH"),
              std::string::npos)
        << s;
    EXPECT_EQ(s.message().find("upgrade"), std::string::npos) << s;
    EXPECT_EQ(wire::ReasonOf(s), "") << malformed;
  }
  absl::StatusOr<VersionGate> bad = VersionGate::Parse("latest");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("--min_client_version"),
            std::string::npos);
  EXPECT_NE(bad.status().message().find("latest"), std::string::npos);
}

}  // namespace
}  // namespace fedberry::server::fleet_test
