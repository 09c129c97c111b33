// Where a server's rounds come from. A server runs its own job's rounds
// (OwnRounds: 1..rounds of its plan, each with its own data order), or, as
// a site gateway, the rounds its parent hands down (UpstreamRounds: the
// parent's model, config and numbering; each closed round's mean goes back
// up). The round coordinator opens, closes and publishes rounds the same
// way whichever source it has; a new kind of round is a new source.
#ifndef FEDBERRY_SERVER_ROUND_ROUND_SOURCE_H_
#define FEDBERRY_SERVER_ROUND_ROUND_SOURCE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "fedberry/v1/federation.pb.h"
#include "runtime/model.h"
#include "server/round/round_types.h"

namespace fedberry::server {

// Tiers: a round handed down by the parent of a site gateway
// (fedberry-server --upstream), which the gateway runs with its own boards.
struct UpstreamRound {
  uint64_t round = 0;   // the parent's round number
  std::string task_id;  // the parent's task for this gateway
  uint32_t total_rounds = 0;
  v1::TrainConfig train;  // what the parent asked: the boards train that
  std::shared_ptr<const runtime::NamedTensors> global;  // the parent's model
  // One cohort draw only (a root under differential privacy): an attempt
  // that ends without a result ends the offer instead of drawing again,
  // which would raise each board's chance to take part above the root's q.
  bool draw_once = false;
};

// What a site gateway's round gives its parent: the weighted mean of its
// boards' models and their weights summed, so FedAvg over the tiers equals
// FedAvg over every board.
struct UpstreamResult {
  std::string upstream_task_id;
  absl::StatusOr<runtime::NamedTensors> mean;  // error: no result
  uint64_t weight = 0;
  v1::TrainMetrics metrics;  // its boards' figures, weighted means
  int participants = 0;
};
using UpstreamSink = std::function<void(UpstreamResult)>;

// Thread-safe.
class RoundSource {
 public:
  // The round to open: its number, the model it starts from, what its
  // boards train, and the job's rounds as boards are told.
  struct Opening {
    uint64_t round = 0;
    std::shared_ptr<const runtime::NamedTensors> global;
    v1::TrainConfig train;
    uint32_t total_rounds = 0;
  };

  virtual ~RoundSource() = default;
  // The round to open when the server's next round is `round` and its
  // model `global`; nullopt when none is ready yet.
  virtual std::optional<Opening> Next(
      uint64_t round,
      const std::shared_ptr<const runtime::NamedTensors>& global) = 0;
  // The job's rounds as boards are told (0 until known).
  virtual uint32_t total_rounds() const = 0;
  // The job is over once `next_round` would open.
  virtual bool EndsBefore(uint64_t next_round) const = 0;
  // A round's whole evaluation may run while `round` + 1 trains: a next
  // round follows, and nobody waits for this one's figures.
  virtual bool MayOverlap(uint64_t round) const = 0;
  // A closed round's report and published model (null: refused). Called
  // on the driver's thread without the coordinator's lock.
  virtual void Closed(
      const RoundReport& report,
      const std::shared_ptr<const runtime::NamedTensors>& model) {}
  // A round attempt that drew its cohort ended without a result: drawn too
  // small to run, or given up at its deadline (`report`: its round and
  // size). Called under the coordinator's lock.
  virtual void Abandoned(const RoundReport& report) {}
};

// The server's own job: rounds 1..`rounds` training `train`, each seeded
// from `seed` and its number.
class OwnRounds final : public RoundSource {
 public:
  OwnRounds(int rounds, v1::TrainConfig train, uint64_t seed)
      : rounds_(rounds), train_(std::move(train)), seed_(seed) {}
  std::optional<Opening> Next(
      uint64_t round,
      const std::shared_ptr<const runtime::NamedTensors>& global) override;
  uint32_t total_rounds() const override;
  bool EndsBefore(uint64_t next_round) const override;
  bool MayOverlap(uint64_t round) const override;

 private:
  const int rounds_;
  const v1::TrainConfig train_;
  const uint64_t seed_;
};

// A site gateway's rounds: each its parent offers, run once; its result
// goes to `sink`. The job ends when the parent says DONE (the coordinator's
// Shutdown), never by a count.
class UpstreamRounds final : public RoundSource {
 public:
  explicit UpstreamRounds(UpstreamSink sink) : sink_(std::move(sink)) {}
  // The round to run next; it replaces an offer not yet run.
  // InvalidArgument for an offer without a model or whose model does not
  // fit `model`'s layout (the gateway's own plan).
  absl::Status Offer(UpstreamRound round, const runtime::NamedTensors& model);
  std::optional<Opening> Next(
      uint64_t round,
      const std::shared_ptr<const runtime::NamedTensors>& global) override;
  uint32_t total_rounds() const override;
  bool EndsBefore(uint64_t) const override { return false; }
  bool MayOverlap(uint64_t) const override { return false; }
  // Hands the round's weighted mean (or why there is none) to the sink.
  void Closed(
      const RoundReport& report,
      const std::shared_ptr<const runtime::NamedTensors>& model) override;
  // An offer drawn once ends here: the sink hears that it has no result.
  void Abandoned(const RoundReport& report) override;

 private:
  const UpstreamSink sink_;
  mutable absl::Mutex mu_;
  std::optional<UpstreamRound> offer_ ABSL_GUARDED_BY(mu_);
  uint32_t total_rounds_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_ROUND_ROUND_SOURCE_H_
