#include "tests/secagg/session_harness.h"

#include <gtest/gtest.h>

#include "secagg/quantise.h"

namespace fedberry::secagg::testing {

SessionConfig TestConfig(int n, int neighbours, int threshold, int bits,
                         uint64_t length, uint64_t seed) {
  SessionConfig config;
  config.session = "job-7/secagg";
  config.round = 3;
  config.cohort = n;
  config.neighbours = neighbours;
  config.threshold = threshold;
  config.bits = bits;
  config.vector_length = length;
  SeededRandom random(seed);
  EXPECT_TRUE(random.Fill(absl::MakeSpan(config.graph_seed)).ok());
  return config;
}

SessionRun::SessionRun(const SessionConfig& config, uint64_t seed)
    : config_(config) {
  absl::StatusOr<Quantiser> quantiser =
      Quantiser::Create(1.0, config.bits, config.cohort);
  EXPECT_TRUE(quantiser.ok()) << quantiser.status();
  SeededRandom floats(seed);
  for (int b = 0; b < config.cohort; ++b) {
    randoms_.push_back(std::make_unique<SeededRandom>(seed * 1000 + b + 1));
    signers_.push_back(std::make_unique<HmacSigner>(kFleetSecret, b));
    absl::StatusOr<BoardSession> board = BoardSession::Create(
        config, b, *randoms_.back(), *signers_.back(), verifier_);
    EXPECT_TRUE(board.ok()) << board.status();
    boards_.push_back(*std::move(board));
    std::vector<float> values(config.vector_length);
    for (float& v : values) {
      uint8_t byte[2];
      EXPECT_TRUE(floats.Fill(absl::MakeSpan(byte)).ok());
      v = static_cast<float>((byte[0] | byte[1] << 8) / 32767.5 - 1.0);
    }
    absl::StatusOr<std::vector<uint32_t>> q =
        quantiser.ok() ? quantiser->Quantise(values)
                       : absl::StatusOr<std::vector<uint32_t>>(
                             std::vector<uint32_t>(config.vector_length));
    EXPECT_TRUE(q.ok()) << q.status();
    updates_.push_back(*std::move(q));
  }
  absl::StatusOr<ServerSession> server =
      ServerSession::Create(config, verifier_);
  EXPECT_TRUE(server.ok()) << server.status();
  server_ = std::make_unique<ServerSession>(*std::move(server));
}

bool SessionRun::Speaks(uint32_t b, const std::set<uint32_t>& silent) {
  if (silent.count(b) > 0) gone_.insert(b);
  return gone_.count(b) == 0;
}

absl::Status SessionRun::Advertise(const std::set<uint32_t>& silent) {
  for (uint32_t b = 0; b < boards_.size(); ++b) {
    if (!Speaks(b, silent)) continue;
    absl::StatusOr<KeyAdvertisement> ad = boards_[b].AdvertiseKeys();
    if (!ad.ok()) return ad.status();
    if (absl::Status s = server_->AcceptAdvertisement(*ad); !s.ok()) return s;
  }
  absl::StatusOr<std::map<uint32_t, std::vector<KeyAdvertisement>>> out =
      server_->CloseAdvertiseKeys();
  if (!out.ok()) return out.status();
  to_share = *std::move(out);
  return absl::OkStatus();
}

absl::Status SessionRun::ShareKeys(const std::set<uint32_t>& silent) {
  for (uint32_t b = 0; b < boards_.size(); ++b) {
    if (!Speaks(b, silent)) continue;
    absl::StatusOr<ShareKeysMessage> m = boards_[b].ShareKeys(to_share[b]);
    if (!m.ok()) return m.status();
    if (absl::Status s = server_->AcceptShareKeys(*m); !s.ok()) return s;
  }
  absl::StatusOr<std::map<uint32_t, std::vector<ShareCiphertext>>> out =
      server_->CloseShareKeys();
  if (!out.ok()) return out.status();
  inbound = *std::move(out);
  return absl::OkStatus();
}

absl::Status SessionRun::MaskInputs(const std::set<uint32_t>& silent) {
  for (uint32_t b = 0; b < boards_.size(); ++b) {
    if (!Speaks(b, silent)) continue;
    absl::StatusOr<MaskedInput> y =
        boards_[b].MaskInput(updates_[b], inbound[b]);
    if (!y.ok()) return y.status();
    if (absl::Status s = server_->AcceptMaskedInput(*y); !s.ok()) return s;
    masked[b] = *std::move(y);
  }
  absl::StatusOr<std::map<uint32_t, UnmaskRequest>> out =
      server_->CloseMaskedInput();
  if (!out.ok()) return out.status();
  requests = *std::move(out);
  return absl::OkStatus();
}

absl::StatusOr<AggregateResult> SessionRun::Unmask(
    const std::set<uint32_t>& silent) {
  for (uint32_t b = 0; b < boards_.size(); ++b) {
    if (!Speaks(b, silent)) continue;
    absl::StatusOr<UnmaskResponse> r = boards_[b].Unmask(requests[b]);
    if (!r.ok()) return r.status();
    if (absl::Status s = server_->AcceptUnmask(*r); !s.ok()) return s;
  }
  return server_->Finish();
}

absl::StatusOr<AggregateResult> SessionRun::Run(
    const std::map<uint32_t, int>& silent_from) {
  std::set<uint32_t> silent[kStageCount];
  for (const auto& [b, stage] : silent_from) silent[stage].insert(b);
  if (absl::Status s = Advertise(silent[0]); !s.ok()) return s;
  if (absl::Status s = ShareKeys(silent[1]); !s.ok()) return s;
  if (absl::Status s = MaskInputs(silent[2]); !s.ok()) return s;
  return Unmask(silent[3]);
}

std::vector<uint32_t> SessionRun::PlainSum(
    const std::vector<uint32_t>& boards) const {
  const uint64_t modulus = uint64_t{1} << config_.bits;
  std::vector<uint32_t> sum(config_.vector_length, 0);
  for (uint32_t b : boards) {
    for (size_t i = 0; i < sum.size(); ++i) {
      sum[i] =
          static_cast<uint32_t>((sum[i] + uint64_t{updates_[b][i]}) % modulus);
    }
  }
  return sum;
}

}  // namespace fedberry::secagg::testing
