#include "server/declared_size_bound.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "proto/wire.h"

namespace fedberry::server {

uint64_t SamplesPerBoard(uint64_t declared, uint32_t boards) {
  return declared / std::max<uint64_t>(1, boards);
}

void DeclaredSizeBound::SetFleet(std::vector<uint64_t> per_board) {
  median_ = 0;
  if (max_ratio_ <= 0 || per_board.size() < static_cast<size_t>(kMinBoards)) {
    return;
  }
  auto middle = per_board.begin() + per_board.size() / 2;
  std::nth_element(per_board.begin(), middle, per_board.end());
  median_ = std::max<uint64_t>(1, *middle);
}

uint64_t DeclaredSizeBound::Limit(uint32_t boards) const {
  if (median_ == 0) return std::numeric_limits<uint64_t>::max();
  // In double: ratio x median x boards may pass 2^64.
  const double limit = std::floor(max_ratio_ * static_cast<double>(median_)) *
                       static_cast<double>(std::max<uint32_t>(1, boards));
  return limit >= 1.8e19 ? std::numeric_limits<uint64_t>::max()
                         : static_cast<uint64_t>(limit);
}

absl::Status DeclaredSizeBound::CheckJoin(uint64_t declared,
                                          uint32_t boards) const {
  if (declared <= Limit(boards)) return absl::OkStatus();
  return wire::WithReason(
      absl::FailedPreconditionError(absl::StrCat(
          "not joined: declared ", declared, " samples",
          boards > 0 ? " for its boards" : "", ", more than ", max_ratio_,
          " x the median of ", median_,
          " samples a board of the boards taking part (--max_samples_ratio): "
          "FedAvg weighs updates by their samples, so one declaration cannot "
          "outweigh the fleet. The board may join again later, as the median "
          "moves with the boards that join, or once the job's operator raises "
          "--max_samples_ratio")),
      wire::kReasonSamplesAboveFleet);
}

uint64_t DeclaredSizeBound::Cap(uint64_t declared, uint32_t boards) const {
  return std::min(declared, Limit(boards));
}

}  // namespace fedberry::server
