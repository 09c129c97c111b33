#include "server/metrics_log.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "tests/test_files.h"

namespace fedberry::server::metrics_log_test {
namespace {

std::vector<std::string> Lines(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

RoundReport Round(uint64_t n) {
  RoundReport r;
  r.round = n;
  r.selected = r.participants = 1;
  ClientRoundReport c;
  c.client_id = "c0001-x";
  c.client_name = "board-1";
  c.num_samples = 10;
  r.clients.push_back(c);
  return r;
}

// What a checkpoint's history holds: the round without its boards.
RoundReport Summary(uint64_t n) {
  RoundReport r = Round(n);
  r.clients.clear();
  return r;
}

TEST(MetricsLog, AResumedJobKeepsItsRefusedBoardsAndRewritesItsRounds) {
  fedberry::testing::TempDir dir;
  const std::string out = dir / "out";
  {
    auto log = MetricsLog::Open(out);
    ASSERT_TRUE(log.ok()) << log.status();
    (*log)->WriteRefusedBoard("board-9", "data has 3 columns; the plan 4");
    (*log)->Write(Round(1));
    (*log)->Write(Round(2));  // past the checkpoint: redone after a restart
  }
  {
    // The checkpoint's history has no per-board entries: round 1's board
    // line is kept from the file.
    auto log = MetricsLog::Open(out, {Summary(1)});
    ASSERT_TRUE(log.ok()) << log.status();
  }
  EXPECT_EQ(Lines(out + "/rounds.jsonl").size(), 1u);
  const auto clients = Lines(out + "/clients.jsonl");
  ASSERT_EQ(clients.size(), 2u);
  EXPECT_NE(clients[0].find("\"plan_refused\""), std::string::npos);
  EXPECT_NE(clients[0].find("board-9"), std::string::npos);
  EXPECT_NE(clients[1].find("\"round\":1"), std::string::npos) << clients[1];

  // A round the checkpoint holds but the file lost is written from its
  // summary; the board lines it had are gone with the file.
  {
    std::ofstream(out + "/rounds.jsonl", std::ios::trunc);
    auto log = MetricsLog::Open(out, {Summary(1)});
    ASSERT_TRUE(log.ok()) << log.status();
  }
  const auto rounds = Lines(out + "/rounds.jsonl");
  ASSERT_EQ(rounds.size(), 1u);
  EXPECT_NE(rounds[0].find("\"round\":1"), std::string::npos) << rounds[0];
  EXPECT_EQ(Lines(out + "/clients.jsonl").size(), 2u);

  // A new job in the same folder starts both files afresh.
  ASSERT_TRUE(MetricsLog::Open(out).ok());
  EXPECT_TRUE(Lines(out + "/clients.jsonl").empty());
  EXPECT_TRUE(Lines(out + "/rounds.jsonl").empty());
}

// Records hold what boards sent: a string that is not UTF-8 (a device
// string cut inside a character, a name from an older server's checkpoint)
// is written with U+FFFD, and neither the round's lines nor the next
// round's are lost. nlohmann's plain dump threw here and aborted the server.
TEST(MetricsLog, WritesEveryLineWhateverBytesABoardsStringsHold) {
  fedberry::testing::TempDir dir;
  const std::string out = dir / "out";
  auto log = MetricsLog::Open(out);
  ASSERT_TRUE(log.ok()) << log.status();
  RoundReport first = Round(1);
  first.clients[0].client_name = "board-\xc3";
  first.clients[0].device.set_hostname(std::string(255, 'h') + "\xc3");
  first.clients[0].device.set_os("\xff\xfe\xed\xa0\x80");
  (*log)->WriteRefusedBoard("board-\x80", "reason \xe2\x82");
  (*log)->Write(first);
  (*log)->Write(Round(2));
  const auto clients = Lines(out + "/clients.jsonl");
  ASSERT_EQ(clients.size(), 3u);
  for (const std::string& line : clients) {
    EXPECT_TRUE(nlohmann::json::accept(line)) << line;
  }
  const nlohmann::json board = nlohmann::json::parse(clients[1]);
  EXPECT_EQ(board.at("client"), "board-\xef\xbf\xbd");
  EXPECT_EQ(board.at("device").at("hostname"),
            std::string(255, 'h') + "\xef\xbf\xbd");
  EXPECT_EQ(Lines(out + "/rounds.jsonl").size(), 2u);
}

}  // namespace
}  // namespace fedberry::server::metrics_log_test
