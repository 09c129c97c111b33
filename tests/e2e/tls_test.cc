// Transport security end to end, with real processes and certificates made
// by the fedberry-pki tool, as docs/guide/mutual-tls.md walks through it:
// a job over mutual TLS completes, and each way a board can be refused
// (foreign CA, expired certificate, no certificate, a name its certificate
// does not list, a revoked board without a server restart, a server name
// that does not match, plaintext to TLS and the reverse) stops the board
// with exit status 77 and a message saying what to fix, while the server
// logs the peer and the reason and keeps serving.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "sim/process.h"
#include "tests/run_command.h"
#include "tests/test_files.h"

namespace fedberry::tls_test {
namespace {

using sim::Process;
using testing::RunCommand;
const std::string kBin = FEDBERRY_BIN_DIR;
constexpr int kRefusedExit = 77;

void SleepMs(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// Polls until the process ends or `ms` pass.
std::optional<sim::ExitInfo> WaitFor(Process& p, int ms) {
  for (int waited = 0; waited <= ms; waited += 10) {
    if (auto e = p.Poll()) return e;
    SleepMs(10);
  }
  return std::nullopt;
}

class Tls : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::WriteTinyDataset(dir_ / "data", 400);
    Pki("init --dir=" + Fleet());
    Pki("server localhost --san=DNS:localhost,IP:127.0.0.1 --dir=" + Fleet());
    for (const char* b : {"board-1", "board-2", "board-3"}) {
      Pki(std::string("board ") + b + " --dir=" + Fleet());
    }
    // A CA no one told the server about, and a board it signed.
    Pki("init --dir=" + (dir_ / "rogue"));
    Pki("board board-1 --dir=" + (dir_ / "rogue"));
  }

  void TearDown() override {
    if (server_) {
      server_->Signal(SIGTERM);
      WaitFor(*server_, 20000);
    }
  }

  std::string Fleet() { return dir_ / "fleet"; }

  std::string Pki(const std::string& args, int expect = 0) {
    int code = -1;
    std::string out = RunCommand(kBin + "/fedberry-pki " + args, &code);
    EXPECT_EQ(code, expect) << "fedberry-pki " << args << "\n" << out;
    return out;
  }

  // Starts the server with `extra` flags; returns its address.
  std::string StartServer(const std::vector<std::string>& extra, int rounds,
                          int min_clients) {
    std::vector<std::string> argv = {
        kBin + "/fedberry-server",
        "--listen=127.0.0.1:0",
        "--output=" + (dir_ / "out"),
        "--rounds=" + std::to_string(rounds),
        "--min_clients=" + std::to_string(min_clients),
        "--min_clients_to_start=" + std::to_string(min_clients),
        "--local_steps=5",
        "--batch_size=16",
        "--eval_data=",
        "--threads=1"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto p = Process::Spawn(argv, ServerLog());
    EXPECT_TRUE(p.ok()) << p.status();
    server_ = *p;
    for (int i = 0; i < 3000; ++i) {
      std::ifstream f(dir_ / "out/server.addr");
      std::string a;
      if (std::getline(f, a) && !a.empty()) return a;
      if (server_->Poll()) break;
      SleepMs(10);
    }
    ADD_FAILURE() << "the server did not start:\n" << Slurp(ServerLog());
    return "";
  }

  std::vector<std::string> MutualTlsServer() {
    return {"--tls_cert=" + Fleet() + "/localhost.crt",
            "--tls_key=" + Fleet() + "/localhost.key",
            "--client_ca=" + Fleet() + "/fleet-ca.crt",
            "--revoked=" + Fleet() + "/revoked.crl"};
  }

  // The flags of board `name` with the certificate in `pki_dir`.
  std::vector<std::string> Board(const std::string& name,
                                 const std::string& pki_dir) {
    return {"--tls_ca=" + Fleet() + "/fleet-ca.crt",
            "--tls_cert=" + pki_dir + "/" + name + ".crt",
            "--tls_key=" + pki_dir + "/" + name + ".key"};
  }

  Process StartClient(const std::string& address,
                      const std::vector<std::string>& extra,
                      const std::string& log, int index = 0) {
    std::vector<std::string> argv = {
        kBin + "/fedberry-client",
        "--server=" + address,
        "--data=" + (dir_ / "data"),
        "--partition_index=" + std::to_string(index),
        "--partition_count=2",
        "--threads=1",
        "--max_backoff=2s",
        "--give_up_after=120s"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto p = Process::Spawn(argv, log);
    EXPECT_TRUE(p.ok()) << p.status();
    return *p;
  }

  // Runs a board that must be refused: it stops by itself within a minute
  // with exit status 77, and its log contains `says`.
  void ExpectRefused(const std::string& address,
                     const std::vector<std::string>& flags,
                     const std::string& says, const std::string& label) {
    const std::string log = dir_ / ("refused-" + label + ".log");
    Process p = StartClient(address, flags, log);
    auto exit = WaitFor(p, 60000);
    if (!exit) {
      p.Signal(SIGKILL);
      FAIL() << label << ": still running after a minute\n" << Slurp(log);
    }
    EXPECT_EQ(exit->code, kRefusedExit) << label << "\n" << Slurp(log);
    EXPECT_NE(Slurp(log).find(says), std::string::npos)
        << label << ": expected '" << says << "' in\n"
        << Slurp(log);
  }

  std::string ServerLog() { return dir_ / "server.log"; }

  testing::TempDir dir_;
  std::optional<Process> server_;
};

TEST_F(Tls, AJobOverMutualTlsCompletes) {
  const std::string address = StartServer(MutualTlsServer(), 2, 2);
  ASSERT_FALSE(address.empty());
  // No --name: a board joins under its certificate's name.
  Process a =
      StartClient(address, Board("board-1", Fleet()), dir_ / "board-1.log", 0);
  Process b =
      StartClient(address, Board("board-2", Fleet()), dir_ / "board-2.log", 1);
  auto ea = WaitFor(a, 120000), eb = WaitFor(b, 120000);
  ASSERT_TRUE(ea && eb) << Slurp(ServerLog());
  EXPECT_EQ(ea->code, 0) << Slurp(dir_ / "board-1.log");
  EXPECT_EQ(eb->code, 0) << Slurp(dir_ / "board-2.log");
  auto es = WaitFor(*server_, 30000);
  ASSERT_TRUE(es);
  EXPECT_EQ(es->code, 0);
  server_.reset();
  const std::string log = Slurp(ServerLog());
  EXPECT_NE(log.find("mutual TLS"), std::string::npos) << log;
  EXPECT_NE(log.find("client 'board-1' joined"), std::string::npos) << log;
  EXPECT_NE(log.find("client 'board-2' joined"), std::string::npos) << log;
  std::ifstream rounds(dir_ / "out/rounds.jsonl");
  int lines = 0;
  for (std::string line; std::getline(rounds, line); ++lines) {
    EXPECT_EQ(nlohmann::json::parse(line)["participants"].get<int>(), 2);
  }
  EXPECT_EQ(lines, 2);
  // Nothing secret reaches the logs or the job's records.
  const std::string key = Slurp(Fleet() + "/board-1.key");
  ASSERT_FALSE(key.empty());
  for (const std::string& file :
       {ServerLog(), std::string(dir_ / "board-1.log"),
        std::string(dir_ / "out/rounds.jsonl"),
        std::string(dir_ / "out/clients.jsonl")}) {
    EXPECT_EQ(Slurp(file).find("PRIVATE KEY"), std::string::npos) << file;
  }
}

TEST_F(Tls, EachRefusalIsClearOnBothSides) {
  // A long job that waits for two boards: refused boards never complete it.
  const std::string address = StartServer(MutualTlsServer(), 1, 2);
  ASSERT_FALSE(address.empty());

  ExpectRefused(address, Board("board-1", dir_ / "rogue"),
                "does not verify against --tls_ca", "foreign-ca-precheck");
  // The same foreign certificate with a CA bundle that trusts both: the
  // board's own check passes, and the server's handshake refuses it.
  std::ofstream(dir_ / "bundle.crt")
      << Slurp(Fleet() + "/fleet-ca.crt") << Slurp(dir_ / "rogue/fleet-ca.crt");
  ExpectRefused(address,
                {"--tls_ca=" + (dir_ / "bundle.crt"),
                 "--tls_cert=" + (dir_ / "rogue") + "/board-1.crt",
                 "--tls_key=" + (dir_ / "rogue") + "/board-1.key"},
                "does not accept this board's certificate", "foreign-ca");
  // The server's certificate is not from the CA the board trusts.
  ExpectRefused(address,
                {"--tls_ca=" + (dir_ / "rogue") + "/fleet-ca.crt",
                 "--tls_cert=" + (dir_ / "rogue") + "/board-1.crt",
                 "--tls_key=" + (dir_ / "rogue") + "/board-1.key"},
                "--tls_ca is the fleet CA", "foreign-server");
  ExpectRefused(address, {"--tls_ca=" + Fleet() + "/fleet-ca.crt"},
                "this board presents none", "no-certificate");
  ExpectRefused(
      address,
      [&] {
        auto f = Board("board-1", Fleet());
        f.push_back("--name=board-2");
        return f;
      }(),
      "cannot join as 'board-2'", "name-mismatch");
  ExpectRefused(
      address,
      [&] {
        auto f = Board("board-1", Fleet());
        f.push_back("--tls_server_name=gateway.example");
        return f;
      }(),
      "--tls_server_name", "server-name");
  ExpectRefused(address, {"--insecure"}, "the server speaks TLS",
                "plaintext-to-tls");

  // Expired: made with the tool's --days, checked by the board first.
  Pki("board board-old --days=0 --dir=" + Fleet());
  ExpectRefused(address, Board("board-old", Fleet()), "expired", "expired");

  // Revoked while the server runs: no restart.
  Pki("revoke board-3 --dir=" + Fleet());
  for (int i = 0;
       i < 500 && testing::CountLines(ServerLog(), "revocation list") < 1;
       ++i) {
    SleepMs(20);
  }
  ExpectRefused(address, Board("board-3", Fleet()), "revoked", "revoked");

  const std::string log = Slurp(ServerLog());
  EXPECT_NE(log.find("it asked to join as 'board-2'"), std::string::npos)
      << log;
  EXPECT_NE(log.find("'board-3'"), std::string::npos) << log;
  EXPECT_NE(log.find("is revoked by"), std::string::npos) << log;
  EXPECT_NE(log.find("refused a TLS handshake from board 'board-1'"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("does not verify at"), std::string::npos) << log;
  // The server kept serving through all of it.
  EXPECT_FALSE(server_->Poll());
}

// Certificates made with plain openssl (EC P-256, names in CN and
// subjectAltName) work as well as the tool's, and a text revocation list
// of names works as well as a CRL.
TEST_F(Tls, CertificatesMadeWithPlainOpensslWork) {
  const std::string d = dir_ / "openssl";
  std::filesystem::create_directories(d);
  const std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes";
  int code = 0;
  const std::string out = RunCommand(
      "cd " + d + " && openssl req -x509" + ec +
          " -keyout ca.key -out ca.crt -days 30 -subj '/CN=openssl fleet CA'" +
          " && openssl req" + ec +
          " -keyout server.key -out server.csr -subj /CN=localhost"
          " -addext subjectAltName=DNS:localhost,IP:127.0.0.1"
          " && openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key"
          " -CAcreateserial -days 30 -copy_extensions copy -out server.crt" +
          " && for b in board-8 board-9; do openssl req" + ec +
          " -keyout $b.key -out $b.csr -subj /CN=$b"
          " -addext subjectAltName=DNS:$b"
          " && openssl x509 -req -in $b.csr -CA ca.crt -CAkey ca.key"
          " -CAcreateserial -days 30 -copy_extensions copy -out $b.crt; done"
          " && printf 'board-8  # lost\n' > revoked.txt",
      &code);
  if (code == 127) GTEST_SKIP() << "no openssl: " << out;
  ASSERT_EQ(code, 0) << out;
  const std::string address = StartServer(
      {"--tls_cert=" + d + "/server.crt", "--tls_key=" + d + "/server.key",
       "--client_ca=" + d + "/ca.crt", "--revoked=" + d + "/revoked.txt"},
      1, 1);
  ASSERT_FALSE(address.empty());
  auto board = [&](const std::string& name) {
    return std::vector<std::string>{"--tls_ca=" + d + "/ca.crt",
                                    "--tls_cert=" + d + "/" + name + ".crt",
                                    "--tls_key=" + d + "/" + name + ".key"};
  };
  ExpectRefused(address, board("board-8"), "is revoked by the fleet",
                "openssl-revoked");
  Process p = StartClient(address, board("board-9"), dir_ / "board-9.log");
  auto exit = WaitFor(p, 120000);
  ASSERT_TRUE(exit) << Slurp(dir_ / "board-9.log");
  EXPECT_EQ(exit->code, 0) << Slurp(dir_ / "board-9.log");
  EXPECT_NE(Slurp(ServerLog()).find("client 'board-9' joined"),
            std::string::npos)
      << Slurp(ServerLog());
}

TEST_F(Tls, ATlsBoardRefusesAPlaintextServer) {
  const std::string address = StartServer({}, 1, 2);
  ASSERT_FALSE(address.empty());
  ExpectRefused(address, Board("board-1", Fleet()),
                "the server does not speak TLS", "tls-to-plaintext");
}

TEST_F(Tls, PlaintextBeyondLoopbackNeedsInsecure) {
  int code = 0;
  std::string out =
      RunCommand(kBin + "/fedberry-server --listen=0.0.0.0:0 " +
                     "--rounds=1 --eval_data= --output=" + (dir_ / "plain"),
                 &code);
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("refusing to serve plaintext"), std::string::npos) << out;
  out = RunCommand(kBin + "/fedberry-client --server=10.0.0.1:50051 --data=" +
                       (dir_ / "data"),
                   &code);
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("refusing to dial"), std::string::npos) << out;
}

}  // namespace
}  // namespace fedberry::tls_test
