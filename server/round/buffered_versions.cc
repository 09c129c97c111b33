#include "server/round/buffered_versions.h"

#include <algorithm>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/log_text.h"
#include "proto/wire.h"

namespace fedberry::server {

absl::Status CheckAsyncOptions(const AsyncOptions& options) {
  if (options.buffer < 1 || options.max_staleness < 0 ||
      options.max_concurrency < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "asynchronous rounds need --async_buffer >= 1 (got ", options.buffer,
        "), --max_staleness >= 0 (got ", options.max_staleness,
        ") and --max_concurrency >= 0 (got ", options.max_concurrency,
        "; 0: no bound)"));
  }
  return absl::OkStatus();
}

BufferedVersions::BufferedVersions(AsyncOptions options, uint64_t seed)
    : options_(std::move(options)), rng_(seed) {}

void BufferedVersions::Open(
    uint64_t round, std::shared_ptr<const runtime::NamedTensors> global) {
  if (round != open_round_ && !buffer_.empty()) {
    if (auto old = models_.find(open_round_); old != models_.end()) {
      for (AsyncState::Buffered& b : buffer_) {
        b.update = Rebase(b.update, *old->second, *global, 1.0);
      }
    }
  }
  open_round_ = round;
  models_[round] = std::move(global);
  // A task on a round older than this can only be refused as stale.
  const uint64_t oldest = round > static_cast<uint64_t>(options_.max_staleness)
                              ? round - options_.max_staleness
                              : 0;
  for (auto it = tasks_.begin(); it != tasks_.end();) {
    if (it->second.round >= oldest || it->second.claimed) {
      ++it;
      continue;
    }
    expired_[it->first] = it->second.round;
    it = tasks_.erase(it);
  }
  for (auto it = models_.begin(); it != models_.end();) {
    const uint64_t r = it->first;
    const bool used = r == round || std::any_of(tasks_.begin(), tasks_.end(),
                                                [r](const auto& t) {
                                                  return t.second.round == r;
                                                });
    it = used ? std::next(it) : models_.erase(it);
  }
}

absl::Status BufferedVersions::StaleStatus(uint64_t pulled) const {
  return wire::WithReason(
      absl::FailedPreconditionError(absl::StrCat(
          "stale update: trained on the model of round ", pulled, ", ",
          open_round_ - pulled, " versions behind round ", open_round_,
          " (--max_staleness=", options_.max_staleness,
          "); it is not counted: ask for a task to pull the latest model")),
      wire::kReasonStaleUpdate);
}

const AsyncTask* BufferedVersions::Find(const std::string& id) const {
  auto it = tasks_.find(id);
  return it == tasks_.end() ? nullptr : &it->second;
}

const AsyncTask* BufferedVersions::Assign(const std::string& id) {
  tasks_.erase(id);
  expired_.erase(id);
  if (options_.max_concurrency > 0 && training() >= options_.max_concurrency) {
    return nullptr;
  }
  AsyncTask task;
  task.round = open_round_;
  task.task_id = absl::StrFormat("a%d-%08x", open_round_,
                                 static_cast<uint32_t>(rng_() & 0xffffffff));
  task.seed = rng_();
  return &(tasks_[id] = std::move(task));
}

std::shared_ptr<const runtime::NamedTensors> BufferedVersions::ModelOf(
    const AsyncTask& task) const {
  auto it = models_.find(task.round);
  return it == models_.end() ? nullptr : it->second;
}

absl::Status BufferedVersions::Check(const std::string& id, uint64_t round,
                                     const std::string& task_id) const {
  if (auto e = expired_.find(id); e != expired_.end() && e->second == round) {
    return StaleStatus(round);
  }
  const AsyncTask* task = Find(id);
  if (task == nullptr || task->round != round) {
    return absl::FailedPreconditionError(
        absl::StrCat("client ", base::Printable(id), " holds no task on round ",
                     round, " (the server runs round ", open_round_,
                     "; ask for a task to pull the latest model)"));
  }
  if (task_id != task->task_id) {
    return absl::InvalidArgumentError(
        absl::StrCat("task id '", base::Printable(task_id),
                     "' is not this client's task on round ", round));
  }
  return absl::OkStatus();
}

bool BufferedVersions::Full() const {
  return buffered() + claimed_ >= options_.buffer;
}

absl::StatusOr<int> BufferedVersions::Claim(const std::string& id) {
  auto it = tasks_.find(id);
  if (it == tasks_.end()) {
    return absl::FailedPreconditionError(
        absl::StrCat("client ", base::Printable(id), " holds no task"));
  }
  if (it->second.claimed) {
    return absl::AlreadyExistsError(absl::StrCat(
        "client ", base::Printable(id), " is already sending its update"));
  }
  const int staleness = static_cast<int>(open_round_ - it->second.round);
  if (staleness > options_.max_staleness) {
    const uint64_t pulled = it->second.round;
    tasks_.erase(it);
    return StaleStatus(pulled);
  }
  it->second.claimed = true;
  ++claimed_;
  return staleness;
}

void BufferedVersions::Unclaim(const std::string& id) {
  auto it = tasks_.find(id);
  if (it == tasks_.end() || !it->second.claimed) return;
  it->second.claimed = false;
  --claimed_;
}

void BufferedVersions::Accept(const std::string& id, int staleness,
                              runtime::NamedTensors added, uint64_t samples) {
  auto it = tasks_.find(id);
  if (it != tasks_.end() && it->second.claimed) --claimed_;
  if (it != tasks_.end()) tasks_.erase(it);
  buffer_.push_back({std::move(added), samples, staleness});
}

void BufferedVersions::Drop(const std::string& id) {
  expired_.erase(id);
  auto it = tasks_.find(id);
  if (it == tasks_.end()) return;
  if (it->second.claimed) --claimed_;
  tasks_.erase(it);
}

void BufferedVersions::Rename(const std::string& old_id,
                              const std::string& id) {
  if (auto e = expired_.find(old_id); e != expired_.end()) {
    expired_[id] = e->second;
    expired_.erase(old_id);
  }
  auto it = tasks_.find(old_id);
  if (it == tasks_.end()) return;
  AsyncTask task = std::move(it->second);
  tasks_.erase(it);
  tasks_[id] = std::move(task);
}

int BufferedVersions::training() const {
  return static_cast<int>(tasks_.size()) - claimed_;
}

std::vector<std::string> BufferedVersions::TrainingIds() const {
  std::vector<std::string> ids;
  for (const auto& [id, task] : tasks_) {
    if (!task.claimed) ids.push_back(id);
  }
  return ids;
}

VersionFigures BufferedVersions::TakeFigures() {
  VersionFigures figures;
  figures.updates = buffered();
  double sum = 0;
  for (const AsyncState::Buffered& b : buffer_) {
    sum += b.staleness;
    figures.staleness_max = std::max(figures.staleness_max, b.staleness);
  }
  figures.staleness_mean = buffer_.empty() ? 0 : sum / buffer_.size();
  buffer_.clear();
  return figures;
}

AsyncState BufferedVersions::State() const {
  AsyncState state;
  for (const auto& [id, task] : tasks_) {
    // A claimed update is not in the buffer yet: a restarted server hands
    // the board its task back, and the push it retries counts.
    state.tasks.push_back({id, task.round, task.task_id, task.seed});
  }
  state.expired = expired_;
  state.models = models_;
  state.buffer = buffer_;
  std::ostringstream rng;
  rng << rng_;
  state.rng = rng.str();
  return state;
}

void BufferedVersions::Restore(AsyncState state) {
  tasks_.clear();
  for (AsyncState::Task& t : state.tasks) {
    tasks_[t.client_id] = {t.round, std::move(t.task_id), t.seed, false};
  }
  expired_ = std::move(state.expired);
  models_ = std::move(state.models);
  buffer_ = std::move(state.buffer);
  open_round_ = models_.empty() ? 0 : models_.rbegin()->first;
  claimed_ = 0;
  if (!state.rng.empty()) {
    std::istringstream rng(state.rng);
    rng >> rng_;
  }
}

}  // namespace fedberry::server
