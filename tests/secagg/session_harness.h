// An in-process SecAgg+ session for the protocol tests: n BoardSessions and
// a ServerSession, messages passed by value, each stage closed once every
// board that is not told to stay silent has sent. Boards get deterministic
// randomness and fake signers (secagg/testing), and quantised updates made
// from seeded floats, so runs are the same on every host.
#ifndef FEDBERRY_TESTS_SECAGG_SESSION_HARNESS_H_
#define FEDBERRY_TESTS_SECAGG_SESSION_HARNESS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "absl/status/statusor.h"
#include "secagg/board_session.h"
#include "secagg/server_session.h"
#include "secagg/testing/fake_random.h"
#include "secagg/testing/fake_signer.h"

namespace fedberry::secagg::testing {

inline constexpr char kFleetSecret[] = "secagg test fleet";

// A config with a graph seed drawn from `seed`.
SessionConfig TestConfig(int n, int neighbours, int threshold, int bits,
                         uint64_t length, uint64_t seed);

class SessionRun {
 public:
  // Boards and server of `config`; every board's update quantised from
  // floats in [-1, 1] drawn from `seed` (a Quantiser with n summands).
  SessionRun(const SessionConfig& config, uint64_t seed);

  // One stage each: every board not in `silent` sends (a board's refusal
  // is returned), then the server closes the stage. A board silent at a
  // stage has dropped and sends nothing later.
  absl::Status Advertise(const std::set<uint32_t>& silent = {});
  absl::Status ShareKeys(const std::set<uint32_t>& silent = {});
  absl::Status MaskInputs(const std::set<uint32_t>& silent = {});
  absl::StatusOr<AggregateResult> Unmask(const std::set<uint32_t>& silent = {});

  // All four; silent_from[b] = the stage from which board b says nothing.
  absl::StatusOr<AggregateResult> Run(
      const std::map<uint32_t, int>& silent_from = {});

  // The plain sum mod 2^bits of the boards' updates.
  std::vector<uint32_t> PlainSum(const std::vector<uint32_t>& boards) const;

  ServerSession& server() { return *server_; }
  BoardSession& board(uint32_t b) { return boards_[b]; }
  const std::vector<uint32_t>& update(uint32_t b) const { return updates_[b]; }
  RandomSource& random(uint32_t b) { return *randoms_[b]; }
  KeySigner& signer(uint32_t b) { return *signers_[b]; }
  const KeyVerifier& verifier() const { return verifier_; }

  // What the server relayed or asked at the end of each stage.
  std::map<uint32_t, std::vector<KeyAdvertisement>> to_share;
  std::map<uint32_t, std::vector<ShareCiphertext>> inbound;
  std::map<uint32_t, MaskedInput> masked;
  std::map<uint32_t, UnmaskRequest> requests;

 private:
  bool Speaks(uint32_t b, const std::set<uint32_t>& silent);

  SessionConfig config_;
  HmacVerifier verifier_{kFleetSecret};
  std::vector<std::unique_ptr<SeededRandom>> randoms_;
  std::vector<std::unique_ptr<HmacSigner>> signers_;
  std::vector<BoardSession> boards_;
  std::vector<std::vector<uint32_t>> updates_;
  std::set<uint32_t> gone_;  // boards that dropped
  std::unique_ptr<ServerSession> server_;
};

}  // namespace fedberry::secagg::testing

#endif  // FEDBERRY_TESTS_SECAGG_SESSION_HARNESS_H_
