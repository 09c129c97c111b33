// Identity under mutual TLS, on a real in-process server and real TLS
// channels over loopback: a board's identity is its certificate, so it
// cannot join under another board's name nor act with another board's
// client id; a revoked board is cut off from its next call without a
// restart; and handshakes the server cannot accept (no certificate, a
// foreign CA, an expired certificate) fail in the handshake.
#include <ATen/ATen.h>
#include <arpa/inet.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_credentials_options.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <regex>

#include "client/identity_refusal.h"
#include "pki/fleet_pki.h"
#include "proto/wire.h"
#include "runtime/model_zoo.h"
#include "runtime/tensor_codec.h"
#include "security/board_certificate_verifier.h"
#include "security/tls_probe.h"
#include "security/transport.h"
#include "server/federation_server.h"
#include "tests/test_files.h"

namespace fedberry::mutual_tls_test {
namespace {

using runtime::NamedTensors;

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

class MutualTls : public ::testing::Test {
 protected:
  void SetUp() override {
    const absl::Time now = absl::Now();
    valid_ = {now - absl::Hours(1), now + absl::Hours(24)};
    auto ca = pki::MakeCa("test fleet CA", valid_);
    ASSERT_TRUE(ca.ok()) << ca.status();
    ca_ = *ca;
    Write(dir_ / "ca.crt", ca_.cert_pem);
    auto server = pki::IssueCertificate(
        ca_.cert_pem, ca_.key_pem, pki::Role::kServer, "localhost",
        {"DNS:localhost", "IP:127.0.0.1"}, valid_);
    ASSERT_TRUE(server.ok()) << server.status();
    Write(dir_ / "server.crt", server->cert_pem);
    Write(dir_ / "server.key", server->key_pem);
    for (const char* name : {"board-1", "board-2"}) IssueBoard(name, valid_);
    Write(dir_ / "revoked.txt", "# nobody yet\n");

    auto transport = security::MakeServerTransport(
        {"127.0.0.1:0",
         {dir_ / "server.crt", dir_ / "server.key", dir_ / "ca.crt"},
         dir_ / "revoked.txt",
         false},
        absl::Now());
    ASSERT_TRUE(transport.ok()) << transport.status();
    transport_ = *std::move(transport);
    at::manual_seed(5);
    auto net = runtime::MakeImageModel("mlp");
    ASSERT_TRUE(net.ok());
    server::ServerOptions o;
    o.listen = "127.0.0.1:0";
    o.coordinator.rounds = 1;
    o.coordinator.min_clients_per_round = 2;
    o.coordinator.min_clients_to_start = 2;
    o.coordinator.train.set_model("mlp");
    o.max_poll = absl::Milliseconds(300);
    o.credentials = transport_.credentials;
    o.access = transport_.access;
    auto s =
        server::FederationServer::Start(o, (*net)->State(), nullptr, nullptr);
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = *std::move(s);
  }

  void IssueBoard(const std::string& name, const pki::Validity& validity) {
    auto board = pki::IssueCertificate(ca_.cert_pem, ca_.key_pem,
                                       pki::Role::kBoard, name, {}, validity);
    ASSERT_TRUE(board.ok()) << board.status();
    Write(dir_ / (name + ".crt"), board->cert_pem);
    Write(dir_ / (name + ".key"), board->key_pem);
  }

  // A stub for board `name`, through the same code path as fedberry-client.
  std::unique_ptr<v1::Federation::Stub> StubFor(const std::string& name) {
    auto t = security::MakeClientTransport(
        {server_->address(),
         {dir_ / "ca.crt", dir_ / (name + ".crt"), dir_ / (name + ".key"), ""},
         false},
        wire::ClientChannelArguments(), absl::Now());
    EXPECT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->certificate_name, name);
    return v1::Federation::NewStub(t->channel);
  }

  // A stub with PEM material handed straight to gRPC, bypassing the
  // board's own checks: what a misconfigured or hostile peer would send.
  std::unique_ptr<v1::Federation::Stub> RawStub(const std::string& cert_pem,
                                                const std::string& key_pem) {
    using grpc::experimental::IdentityKeyCertPair;
    std::vector<IdentityKeyCertPair> pairs;
    if (!cert_pem.empty()) pairs.push_back({key_pem, cert_pem});
    auto provider =
        std::make_shared<grpc::experimental::StaticDataCertificateProvider>(
            ca_.cert_pem, pairs);
    grpc::experimental::TlsChannelCredentialsOptions options;
    options.set_certificate_provider(provider);
    options.watch_root_certs();
    if (!pairs.empty()) options.watch_identity_key_cert_pairs();
    auto channel = grpc::CreateCustomChannel(
        server_->address(), grpc::experimental::TlsCredentials(options),
        wire::ClientChannelArguments());
    return v1::Federation::NewStub(channel);
  }

  static absl::StatusOr<std::string> Join(v1::Federation::Stub& stub,
                                          const std::string& name) {
    grpc::ClientContext c;
    wire::SetDeadline(c, absl::Seconds(10));
    v1::JoinRequest request;
    request.set_client_name(name);
    request.set_num_samples(10);
    v1::JoinResponse response;
    absl::Status s = wire::FromGrpcStatus(stub.Join(&c, request, &response));
    if (!s.ok()) return s;
    return response.client_id();
  }

  static absl::Status GetTask(v1::Federation::Stub& stub,
                              const std::string& id) {
    grpc::ClientContext c;
    wire::SetDeadline(c, absl::Seconds(10));
    v1::GetTaskRequest request;
    request.set_client_id(id);
    v1::GetTaskResponse response;
    return wire::FromGrpcStatus(stub.GetTask(&c, request, &response));
  }

  static absl::Status Heartbeat(v1::Federation::Stub& stub,
                                const std::string& id) {
    grpc::ClientContext c;
    wire::SetDeadline(c, absl::Seconds(10));
    v1::HeartbeatRequest request;
    request.set_client_id(id);
    request.set_state(v1::HeartbeatRequest::PAUSED);
    v1::HeartbeatResponse response;
    return wire::FromGrpcStatus(stub.Heartbeat(&c, request, &response));
  }

  static absl::Status PullModel(v1::Federation::Stub& stub,
                                const std::string& id) {
    grpc::ClientContext c;
    wire::SetDeadline(c, absl::Seconds(10));
    v1::PullModelRequest request;
    request.set_client_id(id);
    request.set_round(1);
    auto reader = stub.PullModel(&c, request);
    v1::ModelChunk chunk;
    while (reader->Read(&chunk)) {
    }
    return wire::FromGrpcStatus(reader->Finish());
  }

  static absl::Status Push(v1::Federation::Stub& stub, const std::string& id) {
    grpc::ClientContext c;
    wire::SetDeadline(c, absl::Seconds(10));
    v1::PushUpdateResponse response;
    auto writer = stub.PushUpdate(&c, &response);
    v1::UpdateChunk header;
    header.mutable_header()->set_client_id(id);
    header.mutable_header()->set_round(1);
    header.mutable_header()->set_num_samples(10);
    writer->Write(header);
    writer->WritesDone();
    return wire::FromGrpcStatus(writer->Finish());
  }

  testing::TempDir dir_;
  pki::Validity valid_;
  pki::Issued ca_;
  security::ServerTransport transport_;
  std::unique_ptr<server::FederationServer> server_;
};

TEST_F(MutualTls, ClientIdsAreUnguessable) {
  auto stub = StubFor("board-1");
  auto id = Join(*stub, "board-1");
  ASSERT_TRUE(id.ok()) << id.status();
  // A sequence number for logs, then 128 random bits.
  EXPECT_TRUE(std::regex_match(*id, std::regex("c[0-9]{4}-[0-9a-f]{32}")))
      << *id;
  auto again = Join(*stub, "board-1");
  ASSERT_TRUE(again.ok());
  EXPECT_NE(id->substr(6), again->substr(6));
}

TEST_F(MutualTls, ABoardCannotJoinUnderAnotherBoardsName) {
  auto stub = StubFor("board-2");
  auto id = Join(*stub, "board-1");
  ASSERT_TRUE(absl::IsPermissionDenied(id.status())) << id.status();
  EXPECT_NE(id.status().message().find("cannot join as 'board-1'"),
            std::string::npos)
      << id.status();
  EXPECT_EQ(server_->coordinator().registered_clients(), 0);
}

TEST_F(MutualTls, ABoardCannotActWithAnotherBoardsClientId) {
  auto board1 = StubFor("board-1");
  auto board2 = StubFor("board-2");
  auto id1 = Join(*board1, "board-1");
  ASSERT_TRUE(id1.ok()) << id1.status();
  ASSERT_TRUE(GetTask(*board1, *id1).ok());
  for (const absl::Status& s :
       {GetTask(*board2, *id1), Heartbeat(*board2, *id1),
        PullModel(*board2, *id1), Push(*board2, *id1)}) {
    EXPECT_TRUE(absl::IsPermissionDenied(s)) << s;
    EXPECT_NE(s.message().find("was not issued to this board's certificate"),
              std::string::npos)
        << s;
  }
  // Its own id still works for board-1.
  EXPECT_TRUE(GetTask(*board1, *id1).ok());
}

TEST_F(MutualTls, ARevokedBoardIsCutOffWithoutARestart) {
  auto stub = StubFor("board-1");
  auto id = Join(*stub, "board-1");
  ASSERT_TRUE(id.ok()) << id.status();
  ASSERT_TRUE(GetTask(*stub, *id).ok());
  Write(dir_ / "revoked.txt", "board-1  # lost on the farm\n");
  ASSERT_TRUE(transport_.revoked->Refresh());
  const absl::Status s = GetTask(*stub, *id);
  EXPECT_TRUE(absl::IsPermissionDenied(s)) << s;
  EXPECT_NE(s.message().find("revoked"), std::string::npos) << s;
  EXPECT_TRUE(client::IsIdentityRefusal(s));
  // Other boards are untouched.
  auto other = StubFor("board-2");
  EXPECT_TRUE(Join(*other, "board-2").ok());
  // Revoking by fingerprint works too, and so does un-revoking.
  auto facts = pki::ReadCertificate(Read(dir_ / "board-2.crt"));
  ASSERT_TRUE(facts.ok());
  Write(dir_ / "revoked.txt", facts->sha256_fingerprint + "\n");
  ASSERT_TRUE(transport_.revoked->Refresh());
  EXPECT_TRUE(absl::IsPermissionDenied(Join(*other, "board-2").status()));
  EXPECT_TRUE(GetTask(*stub, *id).ok());
}

TEST_F(MutualTls, AnUnreadableRevocationListKeepsTheOldOne) {
  Write(dir_ / "revoked.txt", "board-1\n");
  ASSERT_TRUE(transport_.revoked->Refresh());
  Write(dir_ / "revoked.txt", "board-1\nthis is not a name!\n");
  EXPECT_TRUE(transport_.revoked->Refresh());
  auto stub = StubFor("board-1");
  EXPECT_TRUE(absl::IsPermissionDenied(Join(*stub, "board-1").status()));
}

// Each handshake the server cannot accept fails (no call gets through),
// and the board's probe reads the server's alert to say why.
TEST_F(MutualTls, HandshakesTheServerCannotAcceptFailAndSayWhy) {
  const absl::Time now = absl::Now();
  auto rogue_ca = pki::MakeCa("rogue CA", valid_);
  ASSERT_TRUE(rogue_ca.ok());
  auto rogue = pki::IssueCertificate(rogue_ca->cert_pem, rogue_ca->key_pem,
                                     pki::Role::kBoard, "board-1", {}, valid_);
  ASSERT_TRUE(rogue.ok());
  Write(dir_ / "rogue.crt", rogue->cert_pem);
  Write(dir_ / "rogue.key", rogue->key_pem);
  IssueBoard("board-old", {now - absl::Hours(48), now - absl::Hours(24)});
  struct Case {
    std::string label, cert, key, says;
  } cases[] = {
      {"no certificate", "", "", "this board presents none"},
      {"foreign CA", dir_ / "rogue.crt", dir_ / "rogue.key",
       "issued by the fleet CA the server trusts"},
      {"expired", dir_ / "board-old.crt", dir_ / "board-old.key",
       "be valid now"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.label);
    const std::string cert = c.cert.empty() ? "" : Read(c.cert);
    const std::string key = c.key.empty() ? "" : Read(c.key);
    const absl::Status joined = Join(*RawStub(cert, key), "board-1").status();
    EXPECT_TRUE(absl::IsUnavailable(joined)) << joined;
    const security::ClientTlsFiles files{dir_ / "ca.crt", c.cert, c.key, ""};
    const absl::Status why =
        security::ProbeTransport(server_->address(), &files);
    EXPECT_TRUE(absl::IsPermissionDenied(why)) << why;
    EXPECT_NE(why.message().find(c.says), std::string::npos) << why;
  }
  EXPECT_EQ(server_->coordinator().registered_clients(), 0);
  // The server says which certificate it refused and why.
  EXPECT_NE(
      security::CheckBoardCertificate(rogue->cert_pem, dir_ / "ca.crt", now)
          .message()
          .find("refused a TLS handshake from board 'board-1'"),
      std::string::npos);
  EXPECT_NE(security::CheckBoardCertificate(Read(dir_ / "board-old.crt"),
                                            dir_ / "ca.crt", now)
                .message()
                .find("expired"),
            std::string::npos);
  // A server's certificate is not a board's.
  EXPECT_FALSE(security::CheckBoardCertificate(Read(dir_ / "server.crt"),
                                               dir_ / "ca.crt", now)
                   .ok());
  EXPECT_TRUE(security::CheckBoardCertificate(Read(dir_ / "board-1.crt"),
                                              dir_ / "ca.crt", now)
                  .ok());
  // A board that fits passes the probe.
  const security::ClientTlsFiles good{dir_ / "ca.crt", dir_ / "board-1.crt",
                                      dir_ / "board-1.key", ""};
  EXPECT_TRUE(security::ProbeTransport(server_->address(), &good).ok());
  // A server name the certificate does not list, and plaintext to TLS.
  const security::ClientTlsFiles wrong_name{
      dir_ / "ca.crt", dir_ / "board-1.crt", dir_ / "board-1.key",
      "gateway.example"};
  absl::Status name = security::ProbeTransport(server_->address(), &wrong_name);
  EXPECT_TRUE(absl::IsPermissionDenied(name)) << name;
  EXPECT_NE(name.message().find("--tls_server_name"), std::string::npos)
      << name;
  absl::Status plain = security::ProbeTransport(server_->address(), nullptr);
  EXPECT_TRUE(absl::IsPermissionDenied(plain)) << plain;
  EXPECT_NE(plain.message().find("speaks TLS"), std::string::npos) << plain;
  // The board's own check names an expired certificate before it dials.
  auto t = security::MakeClientTransport(
      {server_->address(),
       {dir_ / "ca.crt", dir_ / "board-old.crt", dir_ / "board-old.key", ""},
       false},
      wire::ClientChannelArguments(), now);
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(t.status())) << t.status();
  EXPECT_NE(t.status().message().find("expired"), std::string::npos)
      << t.status();
}

// A server that cannot be reached, or takes the connection and never
// answers (overloaded), is the network's fault: the probe must not call it
// a refusal, or boards would stop instead of backing off.
TEST(TlsProbe, SilenceIsNotARefusal) {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)),
            0);
  ASSERT_EQ(::listen(listener, 4), 0);  // never accepts: the kernel does
  socklen_t len = sizeof(addr);
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  const std::string silent = absl::StrCat("127.0.0.1:", ntohs(addr.sin_port));
  testing::TempDir dir;
  const absl::Time now = absl::Now();
  auto ca = pki::MakeCa("test fleet CA",
                        {now - absl::Hours(1), now + absl::Hours(1)});
  ASSERT_TRUE(ca.ok());
  Write(dir / "ca.crt", ca->cert_pem);
  const security::ClientTlsFiles files{dir / "ca.crt", "", "", ""};
  absl::Status s =
      security::ProbeTransport(silent, &files, absl::Milliseconds(300));
  EXPECT_TRUE(absl::IsUnavailable(s)) << s;
  ::close(listener);
  // Nobody listens any more.
  s = security::ProbeTransport(silent, nullptr, absl::Milliseconds(300));
  EXPECT_TRUE(absl::IsUnavailable(s)) << s;
}

TEST(TransportRules, PlaintextNeedsInsecureBeyondLoopback) {
  security::ServerTransportOptions server;
  server.listen = "0.0.0.0:50051";
  auto refused = security::MakeServerTransport(server, absl::Now());
  EXPECT_TRUE(absl::IsInvalidArgument(refused.status()));
  EXPECT_NE(refused.status().message().find("refusing to serve plaintext"),
            std::string::npos);
  server.insecure = true;
  EXPECT_TRUE(security::MakeServerTransport(server, absl::Now()).ok());
  server.listen = "127.0.0.1:50051";
  server.insecure = false;
  EXPECT_TRUE(security::MakeServerTransport(server, absl::Now()).ok());
  security::ClientTransportOptions client;
  client.server = "gateway:50051";
  EXPECT_TRUE(absl::IsInvalidArgument(
      security::MakeClientTransport(client, {}, absl::Now()).status()));
  client.insecure = true;
  EXPECT_TRUE(security::MakeClientTransport(client, {}, absl::Now()).ok());
  for (const char* loopback : {"127.0.0.1:1", "localhost:2", "[::1]:3"}) {
    EXPECT_TRUE(security::IsLoopbackAddress(loopback)) << loopback;
  }
  for (const char* remote : {"0.0.0.0:1", "10.0.0.7:2", "[::]:3", "gw:4"}) {
    EXPECT_FALSE(security::IsLoopbackAddress(remote)) << remote;
  }
}

}  // namespace
}  // namespace fedberry::mutual_tls_test
