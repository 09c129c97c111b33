// How many samples a board may claim against the fleet. FedAvg weighs an
// update by the samples behind it, bounded by what its board declared at
// join; a board may declare up to InputLimits::max_declared_samples (2^40),
// so one liar could outweigh every honest board together (an all-zero model
// pushed with a weight of 2^40 shrank the next global model to 2.7e-8 of
// the last). This bound ties a declaration to the fleet's median
// declaration per board: at most `max_ratio` times it, refused at join and,
// for a board that joined before the fleet had a median, capped when its
// update is weighed. A gateway declares for its boards: its bound is per
// board. With fewer than kMinBoards boards registered there is no median
// to trust, and no bound.
// Thread-safety: not thread-safe (the coordinator holds its lock).
#ifndef FEDBERRY_SERVER_DECLARED_SIZE_BOUND_H_
#define FEDBERRY_SERVER_DECLARED_SIZE_BOUND_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"

namespace fedberry::server {

class DeclaredSizeBound {
 public:
  static constexpr int kMinBoards = 3;

  // `max_ratio` <= 0 turns the bound off.
  explicit DeclaredSizeBound(double max_ratio) : max_ratio_(max_ratio) {}

  // The fleet now: the samples per board each board taking part (one that
  // has asked for a task) speaks for (a board: its declaration; a gateway:
  // its declaration / its boards).
  void SetFleet(std::vector<uint64_t> per_board);

  // OK, or FailedPrecondition with reason kReasonSamplesAboveFleet naming
  // the declaration, the median and the flag, and saying the board may
  // ask again.
  absl::Status CheckJoin(uint64_t declared, uint32_t boards) const;
  // The declaration an update is weighed against: `declared`, at most the
  // bound.
  uint64_t Cap(uint64_t declared, uint32_t boards) const;

  // 0 while there is no bound.
  uint64_t median() const { return median_; }

 private:
  uint64_t Limit(uint32_t boards) const;

  double max_ratio_;
  uint64_t median_ = 0;
};

// A board's samples per board it speaks for.
uint64_t SamplesPerBoard(uint64_t declared, uint32_t boards);

}  // namespace fedberry::server

#endif  // FEDBERRY_SERVER_DECLARED_SIZE_BOUND_H_
