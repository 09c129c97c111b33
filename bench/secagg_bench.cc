// What secure aggregation (SecAgg+) costs a board and the gateway, per
// round, for cohorts of 10, 50 and 200 boards and a LeNet-5 update (61,706
// values plus the weight word), with 10% of the boards dropping after they
// shared their keys (the gateway then rebuilds their pair masks): each
// stage's CPU time per board and at the gateway, and the bytes a board
// sends per stage against the 246,824 bytes of a plain float32 update.
// Everything runs in this one process on this machine's CPU (not a
// board's); the boards' keys are unsigned here, and one signature and its
// K checks are timed apart. Plain figures, no assertions.
//
// Usage: secagg_bench [N ...]   (default: 10 50 200)
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "pki/fleet_pki.h"
#include "pki/signatures.h"
#include "secagg/board_session.h"
#include "secagg/parameters.h"
#include "secagg/random_source.h"
#include "secagg/server_session.h"
#include "secagg/unsigned_keys.h"

namespace fedberry::secagg {
namespace {

constexpr uint64_t kLeNetValues = 61706;
constexpr int kStages = 4;
const char* const kStageNames[kStages] = {"advertise", "share", "mask",
                                          "unmask"};

// This thread's CPU time, in seconds.
double CpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

void Must(const absl::Status& s, const char* what) {
  if (s.ok()) return;
  std::fprintf(stderr, "secagg_bench: %s: %s\n", what, s.ToString().c_str());
  std::exit(1);
}

template <typename T>
T Must(absl::StatusOr<T> v, const char* what) {
  Must(v.status(), what);
  return *std::move(v);
}

struct Figures {
  double board_seconds[kStages] = {};  // summed over the boards that ran it
  int board_runs[kStages] = {};
  double server_seconds[kStages] = {};  // the gateway's closes and Finish
  uint64_t bytes_up[kStages] = {};
};

void RunCohort(int n) {
  const SecAggParameters p = Must(ChooseParameters(n), "parameters");
  SessionConfig config;
  config.session = "bench";
  config.round = 1;
  config.cohort = n;
  config.neighbours = p.neighbours;
  config.threshold = p.threshold;
  config.bits = 32;
  config.vector_length = kLeNetValues + 1;
  Must(OsRandom().Fill(absl::MakeSpan(config.graph_seed)), "seed");
  UnsignedKeys keys;
  std::vector<BoardSession> boards;
  for (int b = 0; b < n; ++b) {
    boards.push_back(
        Must(BoardSession::Create(config, b, OsRandom(), keys, keys), "board"));
  }
  ServerSession server = Must(ServerSession::Create(config, keys), "server");
  std::vector<uint32_t> words(config.vector_length);
  Must(OsRandom().Fill(absl::MakeSpan(reinterpret_cast<uint8_t*>(words.data()),
                                      words.size() * 4)),
       "words");
  // 10% drop after sharing their keys: no masked input from them.
  std::set<uint32_t> dropped;
  for (int b = 0; b < n / 10; ++b) dropped.insert(static_cast<uint32_t>(b));
  Figures f;
  auto board_time = [&](int stage, auto&& step) {
    const double t = CpuSeconds();
    step();
    f.board_seconds[stage] += CpuSeconds() - t;
    ++f.board_runs[stage];
  };
  auto server_time = [&](int stage, auto&& step) {
    const double t = CpuSeconds();
    step();
    f.server_seconds[stage] += CpuSeconds() - t;
  };
  for (int b = 0; b < n; ++b) {
    KeyAdvertisement ad;
    board_time(0, [&] { ad = Must(boards[b].AdvertiseKeys(), "advertise"); });
    server_time(0, [&] { Must(server.AcceptAdvertisement(ad), "accept ad"); });
  }
  std::map<uint32_t, std::vector<KeyAdvertisement>> to_share;
  server_time(0,
              [&] { to_share = Must(server.CloseAdvertiseKeys(), "close 0"); });
  for (int b = 0; b < n; ++b) {
    ShareKeysMessage m;
    board_time(1, [&] { m = Must(boards[b].ShareKeys(to_share[b]), "share"); });
    server_time(1, [&] { Must(server.AcceptShareKeys(m), "accept share"); });
  }
  std::map<uint32_t, std::vector<ShareCiphertext>> inbound;
  server_time(1, [&] { inbound = Must(server.CloseShareKeys(), "close 1"); });
  for (int b = 0; b < n; ++b) {
    if (dropped.count(b) > 0) continue;
    MaskedInput y;
    board_time(
        2, [&] { y = Must(boards[b].MaskInput(words, inbound[b]), "mask"); });
    server_time(2, [&] { Must(server.AcceptMaskedInput(y), "accept masked"); });
  }
  std::map<uint32_t, UnmaskRequest> requests;
  server_time(2,
              [&] { requests = Must(server.CloseMaskedInput(), "close 2"); });
  for (int b = 0; b < n; ++b) {
    if (dropped.count(b) > 0) continue;
    UnmaskResponse r;
    board_time(3, [&] { r = Must(boards[b].Unmask(requests[b]), "unmask"); });
    server_time(3, [&] { Must(server.AcceptUnmask(r), "accept unmask"); });
  }
  AggregateResult result;
  server_time(3, [&] { result = Must(server.Finish(), "finish"); });
  std::printf("n=%d K=%d t=%d dropped=%zu counted=%zu\n", n, p.neighbours,
              p.threshold, dropped.size(), result.counted.size());
  std::printf("  %-10s %14s %14s %16s\n", "stage", "board_cpu_ms",
              "gateway_cpu_ms", "bytes_up/board");
  uint64_t total = 0;
  for (int s = 0; s < kStages; ++s) {
    const double per_board = f.board_seconds[s] / f.board_runs[s] * 1e3;
    const uint64_t bytes = result.counts.bytes_up[s] / f.board_runs[s];
    total += bytes;
    std::printf("  %-10s %14.2f %14.1f %16llu\n", kStageNames[s], per_board,
                f.server_seconds[s] * 1e3,
                static_cast<unsigned long long>(bytes));
  }
  std::printf(
      "  bytes up per board: %llu (plain float32 update: %llu, x%.3f)\n",
      static_cast<unsigned long long>(total),
      static_cast<unsigned long long>(kLeNetValues * 4),
      static_cast<double>(total) / (kLeNetValues * 4));
}

// One fleet-key signature and K checks of one: what signed keys add.
void SignatureCost(int k) {
  const absl::Time now = absl::Now();
  const pki::Validity v{now - absl::Hours(1), now + absl::Hours(1)};
  const pki::Issued ca = Must(pki::MakeCa("bench CA", v), "ca");
  const pki::Issued board =
      Must(pki::IssueCertificate(ca.cert_pem, ca.key_pem, pki::Role::kBoard,
                                 "board", {}, v),
           "board certificate");
  const std::string bytes(100, 'k');
  double t = CpuSeconds();
  const std::string signature =
      Must(pki::SignWithKey(board.key_pem, bytes), "sign");
  const double sign_ms = (CpuSeconds() - t) * 1e3;
  t = CpuSeconds();
  for (int i = 0; i < k; ++i) {
    Must(pki::VerifySignature(board.cert_pem, bytes, signature), "verify");
  }
  std::printf(
      "signed keys: one ECDSA P-256 signature %.2f ms, %d checks "
      "%.2f ms (per board and round)\n",
      sign_ms, k, (CpuSeconds() - t) * 1e3);
}

}  // namespace
}  // namespace fedberry::secagg

int main(int argc, char** argv) {
  std::vector<int> cohorts;
  for (int i = 1; i < argc; ++i) cohorts.push_back(std::atoi(argv[i]));
  if (cohorts.empty()) cohorts = {10, 50, 200};
  std::printf(
      "secagg_bench: SecAgg+ over a LeNet-5 update (%llu words), "
      "this machine's CPU, one process\n",
      static_cast<unsigned long long>(fedberry::secagg::kLeNetValues + 1));
  for (int n : cohorts) fedberry::secagg::RunCohort(n);
  fedberry::secagg::SignatureCost(40);
  return 0;
}
