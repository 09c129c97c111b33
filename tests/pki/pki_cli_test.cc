// The fedberry-pki binary as an operator runs it: init, a server, boards,
// a revocation; help everywhere; refusals with a message and a non-zero exit.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "pki/fleet_pki.h"
#include "pki/issue_log.h"
#include "tests/pki/pki_test_util.h"
#include "tests/run_command.h"
#include "tests/test_files.h"

namespace fedberry::pki::pki_cli_test {
namespace {

using ::fedberry::testing::ModeOf;
using ::fedberry::testing::ReadText;
using ::fedberry::testing::TempDir;

struct Outcome {
  int code = -1;
  std::string output;  // stdout and stderr
};

class PkiCliTest : public ::testing::Test {
 protected:
  // fedberry-pki `args`, run in the temporary folder.
  Outcome Pki(const std::string& args) {
    Outcome run;
    run.output = ::fedberry::testing::RunCommand(
        absl::StrCat("cd '", dir_.path(), "' && ", FEDBERRY_PKI_BIN, " ", args,
                     " </dev/null"),
        &run.code);
    return run;
  }

  // Runs and expects success.
  std::string Ok(const std::string& args) {
    Outcome run = Pki(args);
    EXPECT_EQ(run.code, 0) << "fedberry-pki " << args << "\n" << run.output;
    return run.output;
  }

  std::string Read(const std::string& file) { return ReadText(dir_ / file); }

  std::string SerialOf(const std::string& crt) {
    absl::StatusOr<CertificateFacts> facts = ReadCertificate(Read(crt));
    EXPECT_TRUE(facts.ok()) << facts.status();
    return facts.ok() ? facts->serial_hex : "";
  }

  TempDir dir_;
};

TEST_F(PkiCliTest, AFleetFromInitToRevoke) {
  std::string out = Ok("init");
  EXPECT_TRUE(absl::StrContains(out, "fleet-ca.key (0600)")) << out;
  out = Ok("server gw --san=DNS:localhost,IP:127.0.0.1");
  EXPECT_TRUE(absl::StrContains(out, "gw: wrote gw.crt and gw.key (0600)"))
      << out;
  EXPECT_TRUE(absl::StrContains(out, "to the server")) << out;
  out = Ok("board board-1");
  EXPECT_TRUE(absl::StrContains(out,
                                "board-1: wrote board-1.crt and board-1.key "
                                "(0600)"))
      << out;
  EXPECT_TRUE(absl::StrContains(out, "copy both and fleet-ca.crt to the board"))
      << out;
  Ok("board board-2");
  out = Ok("revoke board-2");
  EXPECT_TRUE(absl::StrContains(out, "board-2: revoked 1 certificate")) << out;
  EXPECT_TRUE(absl::StrContains(out, "CRL number 2")) << out;

  for (const char* file : {"fleet-ca.crt", "revoked.crl", "issued.tsv",
                           "gw.crt", "board-1.crt", "board-2.crt"}) {
    EXPECT_EQ(ModeOf(dir_ / file), 0644) << file;
  }
  for (const char* key :
       {"fleet-ca.key", "gw.key", "board-1.key", "board-2.key"}) {
    EXPECT_EQ(ModeOf(dir_ / key), 0600) << key;
  }
  const std::string ca = Read("fleet-ca.crt");
  for (const char* name : {"gw", "board-1", "board-2"}) {
    SCOPED_TRACE(name);
    const std::string crt = Read(absl::StrCat(name, ".crt"));
    EXPECT_OK(
        CheckKeyMatchesCertificate(crt, Read(absl::StrCat(name, ".key"))));
    EXPECT_OK(VerifyCertificate(crt, ca, absl::Now()));
  }
  ASSERT_OK_AND_ASSIGN(CertificateFacts gw, ReadCertificate(Read("gw.crt")));
  EXPECT_EQ(gw.dns_names, std::vector<std::string>{"localhost"});
  EXPECT_EQ(gw.ip_names, std::vector<std::string>{"127.0.0.1"});

  ASSERT_OK_AND_ASSIGN(CrlFacts crl, ReadCrl(Read("revoked.crl"), ca));
  EXPECT_EQ(crl.number, 2u);
  const auto listed = [&](const std::string& serial) {
    return std::find(crl.revoked_serials.begin(), crl.revoked_serials.end(),
                     serial) != crl.revoked_serials.end();
  };
  EXPECT_TRUE(listed(SerialOf("board-2.crt")));
  EXPECT_FALSE(listed(SerialOf("board-1.crt")));

  ASSERT_OK_AND_ASSIGN(std::vector<IssueRecord> log,
                       ParseIssueLog(Read("issued.tsv")));
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[0].name, "gw");
  EXPECT_EQ(log[0].role, Role::kServer);
  EXPECT_FALSE(log[1].revoked_at.has_value());
  EXPECT_TRUE(log[2].revoked_at.has_value());
  EXPECT_EQ(log[2].serial_hex, SerialOf("board-2.crt"));

  out = Ok("list");
  EXPECT_TRUE(absl::StrContains(out, "NAME")) << out;
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    if (absl::StartsWith(line, "board-1 ")) {
      EXPECT_TRUE(absl::StrContains(line, SerialOf("board-1.crt"))) << line;
      EXPECT_TRUE(absl::StrContains(line, log[1].sha256_fingerprint)) << line;
      EXPECT_TRUE(absl::EndsWith(line, "valid")) << line;
    }
    if (absl::StartsWith(line, "board-2 ")) {
      EXPECT_TRUE(absl::StrContains(line, "revoked 20")) << line;
    }
  }
}

TEST_F(PkiCliTest, HelpExitsZeroForTheToolAndEveryCommand) {
  for (const char* help : {"--help", "-help", "-h"}) {
    Outcome run = Pki(help);
    EXPECT_EQ(run.code, 0) << run.output;
    EXPECT_TRUE(absl::StrContains(run.output, "board NAME")) << run.output;
  }
  Outcome full = Pki("--helpfull");
  EXPECT_EQ(full.code, 0) << full.output;
  EXPECT_TRUE(absl::StrContains(full.output, "crl_days")) << full.output;

  struct Expect {
    const char* command;
    const char* usage;
    std::vector<const char*> flags;
    std::vector<const char*> not_flags;
  };
  for (const Expect& e : std::vector<Expect>{
           {"init",
            "fedberry-pki init",
            {"--dir", "--ca_name", "--force"},
            {"--san"}},
           {"server",
            "fedberry-pki server NAME",
            {"--san", "--days"},
            {"--ca_name"}},
           {"board",
            "fedberry-pki board NAME",
            {"--days", "--dir"},
            {"--san", "--ca_name"}},
           {"revoke",
            "fedberry-pki revoke NAME",
            {"--dir", "--crl_days"},
            {"--days"}},
           {"crl", "fedberry-pki crl", {"--crl_days"}, {"--days"}},
           {"list", "fedberry-pki list", {"--dir"}, {"--days"}},
       }) {
    SCOPED_TRACE(e.command);
    for (const std::string& args : {absl::StrCat(e.command, " --help"),
                                    absl::StrCat("--help ", e.command),
                                    absl::StrCat(e.command, " some-name -h")}) {
      Outcome run = Pki(args);
      EXPECT_EQ(run.code, 0) << args << "\n" << run.output;
      EXPECT_TRUE(absl::StrContains(run.output, e.usage)) << run.output;
      for (const char* flag : e.flags) {
        EXPECT_TRUE(absl::StrContains(run.output, flag)) << run.output;
      }
      for (const char* flag : e.not_flags) {
        EXPECT_FALSE(absl::StrContains(run.output, flag)) << run.output;
      }
    }
  }
  // Per-command defaults.
  EXPECT_TRUE(absl::StrContains(Pki("board --help").output, "825"));
  EXPECT_TRUE(absl::StrContains(Pki("init --help").output, "3650"));
}

TEST_F(PkiCliTest, UsageErrorsExitTwo) {
  for (const char* args :
       {"", "frobnicate", "board", "server", "revoke", "board a b",
        "list extra", "board b --san=DNS:x", "init --days=-5"}) {
    SCOPED_TRACE(args);
    Outcome run = Pki(args);
    EXPECT_EQ(run.code, 2) << run.output;
    EXPECT_TRUE(absl::StrContains(run.output, "Usage: ")) << run.output;
  }
  Outcome unknown = Pki("frobnicate");
  EXPECT_TRUE(absl::StrContains(unknown.output, "frobnicate"))
      << unknown.output;
  Outcome bad_flag = Pki("list --no_such_flag");
  EXPECT_NE(bad_flag.code, 0) << bad_flag.output;
}

TEST_F(PkiCliTest, InitTwiceRefusesWithoutForce) {
  Ok("init --ca_name='first CA'");
  const std::string first = Read("fleet-ca.crt");
  Outcome again = Pki("init");
  EXPECT_EQ(again.code, 1) << again.output;
  EXPECT_TRUE(absl::StrContains(again.output, "fleet-ca.key exists"))
      << again.output;
  EXPECT_TRUE(absl::StrContains(again.output, "--force")) << again.output;
  EXPECT_EQ(Read("fleet-ca.crt"), first);
  Ok("init --force --ca_name='second CA'");
  ASSERT_OK_AND_ASSIGN(CertificateFacts ca,
                       ReadCertificate(Read("fleet-ca.crt")));
  EXPECT_EQ(ca.common_name, "second CA");
}

TEST_F(PkiCliTest, RefusalsNameWhatWasWrong) {
  Outcome no_ca = Pki("board board-1");
  EXPECT_EQ(no_ca.code, 1) << no_ca.output;
  EXPECT_TRUE(absl::StrContains(no_ca.output, "fedberry-pki init"))
      << no_ca.output;

  Ok("init");
  Outcome unknown = Pki("revoke board-9");
  EXPECT_NE(unknown.code, 0) << unknown.output;
  EXPECT_TRUE(absl::StrContains(unknown.output, "board-9")) << unknown.output;
  EXPECT_TRUE(absl::StrContains(unknown.output, "no certificate was issued"))
      << unknown.output;

  Ok("board board-1");
  const std::string key = Read("board-1.key");
  Outcome twice = Pki("board board-1");
  EXPECT_EQ(twice.code, 1) << twice.output;
  EXPECT_TRUE(absl::StrContains(twice.output, "board-1.key exists"))
      << twice.output;
  EXPECT_EQ(Read("board-1.key"), key);
  Ok("board board-1 --force");
  EXPECT_NE(Read("board-1.key"), key);

  for (const char* args : {"board ../evil", "board fleet-ca", "board -- -x",
                           "server gw --san=gateway"}) {
    SCOPED_TRACE(args);
    Outcome bad = Pki(args);
    EXPECT_EQ(bad.code, 1) << bad.output;
    EXPECT_TRUE(absl::StrContains(bad.output, "fedberry-pki: ")) << bad.output;
  }
  EXPECT_EQ(ModeOf(dir_.path() + "/../evil.key"), -1);
}

TEST_F(PkiCliTest, KeysAre0600WhateverTheUmaskAndDirWorks) {
  Outcome run;
  run.output = ::fedberry::testing::RunCommand(
      absl::StrCat("umask 000 && ", FEDBERRY_PKI_BIN, " init --dir='",
                   dir_ / "fleet", "' && ", FEDBERRY_PKI_BIN,
                   " board b1 --dir='", dir_ / "fleet", "'"),
      &run.code);
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_EQ(ModeOf(dir_ / "fleet/fleet-ca.key"), 0600);
  EXPECT_EQ(ModeOf(dir_ / "fleet/b1.key"), 0600);
  EXPECT_EQ(ModeOf(dir_ / "fleet/b1.crt"), 0644);
  EXPECT_TRUE(absl::StrContains(run.output, dir_ / "fleet/b1.crt"))
      << run.output;
}

TEST_F(PkiCliTest, DaysZeroMakesAnExpiredCertificate) {
  Ok("init");
  Ok("board old --days=0");
  absl::Status s = VerifyCertificate(Read("old.crt"), Read("fleet-ca.crt"),
                                     absl::Now() + absl::Seconds(1));
  EXPECT_TRUE(absl::StrContains(s.message(), "expired")) << s;
}

TEST_F(PkiCliTest, CrlReSignsWithTheNextNumber) {
  Ok("init --crl_days=10");
  std::string out = Ok("crl --crl_days=90");
  EXPECT_TRUE(absl::StrContains(out, "CRL number 2")) << out;
  ASSERT_OK_AND_ASSIGN(CrlFacts crl,
                       ReadCrl(Read("revoked.crl"), Read("fleet-ca.crt")));
  EXPECT_EQ(crl.number, 2u);
  EXPECT_GT(crl.next_update, absl::Now() + absl::Hours(24 * 89));
}

}  // namespace
}  // namespace fedberry::pki::pki_cli_test
