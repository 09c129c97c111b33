#include "sim/emulated_fleet.h"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "client/backoff.h"
#include "fedberry/v1/federation.grpc.pb.h"
#include "proto/wire.h"

namespace fedberry::sim {
namespace {

// Runs callbacks at a time, on one thread: retries and re-polls wait here
// instead of holding a thread each.
class Timer {
 public:
  explicit Timer(Clock& clock) : clock_(clock), thread_([this] { Loop(); }) {}
  ~Timer() {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    thread_.join();
  }
  void At(absl::Time when, std::function<void()> f) {
    absl::MutexLock lock(&mu_);
    queue_.emplace(when, std::move(f));
  }

 private:
  void Loop() {
    absl::MutexLock lock(&mu_);
    while (!stop_) {
      const absl::Time now = clock_.Now();
      if (!queue_.empty() && queue_.begin()->first <= now) {
        std::function<void()> f = std::move(queue_.begin()->second);
        queue_.erase(queue_.begin());
        mu_.Unlock();
        f();
        mu_.Lock();
        continue;
      }
      const absl::Time until =
          queue_.empty()
              ? now + absl::Milliseconds(50)
              : std::min(queue_.begin()->first, now + absl::Milliseconds(50));
      clock_.AwaitWithDeadline(mu_, absl::Condition(&stop_), until);
    }
  }
  Clock& clock_;
  absl::Mutex mu_;
  std::multimap<absl::Time, std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

// One task's model as pulled: each chunk is kept once, by the first board
// that reads it, and every board of the task pushes from here.
struct TaskModel {
  absl::Mutex mu;
  std::map<std::pair<uint32_t, uint64_t>, v1::ModelChunk> chunks
      ABSL_GUARDED_BY(mu);
};

struct Fleet {
  explicit Fleet(const FleetOptions& o)
      : options(o), clock(*o.clock), timer(clock) {}
  const FleetOptions options;
  Clock& clock;
  Timer timer;
  std::atomic<int> joined{0}, heard_done{0}, gave_up{0}, finished{0};
  std::atomic<uint64_t> polls{0}, pulls{0}, pulls_busy{0}, pushes{0}, busy{0},
      refused{0}, bytes_pushed{0};
  absl::Mutex mu;
  std::map<std::string, std::shared_ptr<TaskModel>> models ABSL_GUARDED_BY(mu);

  std::shared_ptr<TaskModel> ModelOf(const std::string& task_id) {
    absl::MutexLock lock(&mu);
    auto& m = models[task_id];
    if (!m) m = std::make_shared<TaskModel>();
    if (models.size() > 4) models.erase(models.begin());  // old tasks
    return m;
  }
};

// A gRPC deadline: gRPC's real time, whatever the fleet's clock.
void SetDeadline(grpc::ClientContext& context, absl::Duration d) {
  context.set_deadline(absl::ToChronoTime(absl::Now() + d));
}

class Board;

class PullReactor final : public grpc::ClientReadReactor<v1::ModelChunk> {
 public:
  PullReactor(Board* board, std::shared_ptr<TaskModel> model)
      : board_(board), model_(std::move(model)) {}
  grpc::ClientContext context;
  v1::PullModelRequest request;
  void OnReadDone(bool ok) override {
    if (!ok) return;
    {
      absl::MutexLock lock(&model_->mu);
      model_->chunks.try_emplace({chunk_.tensor_index(), chunk_.offset()},
                                 chunk_);
    }
    StartRead(&chunk_);
  }
  void OnDone(const grpc::Status& status) override;
  void Begin() {
    StartRead(&chunk_);
    StartCall();
  }

 private:
  Board* board_;
  std::shared_ptr<TaskModel> model_;
  v1::ModelChunk chunk_;
};

class PushReactor final : public grpc::ClientWriteReactor<v1::UpdateChunk> {
 public:
  PushReactor(Board* board, std::shared_ptr<TaskModel> model,
              v1::UpdateHeader header)
      : board_(board), model_(std::move(model)), header_(std::move(header)) {
    *message_.mutable_header() = header_;
  }
  grpc::ClientContext context;
  v1::PushUpdateResponse response;
  uint64_t bytes = 0;
  void Begin() {
    StartWrite(&message_);
    StartCall();
  }
  // The server's go-ahead (initial metadata) admits the push; the chunks
  // wait for it and for the header's write. Without it the push was
  // refused, and OnDone says why.
  void OnReadInitialMetadataDone(bool ok) override {
    if (!ok || !wire::HasPushTurn(context.GetServerInitialMetadata())) return;
    WriteNextWhenBoth(/*header_written=*/false);
  }
  void OnWriteDone(bool ok) override {
    if (!ok) return;  // the call failed; OnDone says why
    if (next_ == 0) {
      WriteNextWhenBoth(/*header_written=*/true);
      return;
    }
    WriteNext();
  }
  void OnDone(const grpc::Status& status) override;

 private:
  void WriteNextWhenBoth(bool header_written) {
    {
      absl::MutexLock lock(&mu_);
      (header_written ? header_written_ : admitted_) = true;
      if (!header_written_ || !admitted_) return;
    }
    WriteNext();
  }
  void WriteNext() {
    absl::MutexLock lock(&model_->mu);
    auto it =
        next_ == 0 ? model_->chunks.begin() : model_->chunks.upper_bound(last_);
    if (it == model_->chunks.end()) {
      StartWritesDone();
      return;
    }
    last_ = it->first;
    ++next_;
    *message_.mutable_chunk() = it->second;
    bytes += it->second.data().size();
    StartWrite(&message_);
  }

  Board* board_;
  std::shared_ptr<TaskModel> model_;
  absl::Mutex mu_;
  bool header_written_ ABSL_GUARDED_BY(mu_) = false;
  bool admitted_ ABSL_GUARDED_BY(mu_) = false;
  const v1::UpdateHeader header_;  // kept for a retry
  v1::UpdateChunk message_;
  std::pair<uint32_t, uint64_t> last_{};
  int next_ = 0;
};

// A real board's backoff (0.5 s doubling, with jitter), capped sooner.
client::BackoffOptions BoardBackoff() {
  client::BackoffOptions o;
  o.max = absl::Seconds(16);
  return o;
}

class Board {
 public:
  Board(Fleet& fleet, int index)
      : fleet_(fleet),
        name_(absl::StrCat(fleet.options.name_prefix, "-", index)),
        backoff_(BoardBackoff(), static_cast<uint64_t>(index)) {
    grpc::ChannelArguments args = wire::ClientChannelArguments();
    // A connection of its own, as a real board has.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    // No bandwidth probe: it grows each connection's windows and buffers
    // to megabytes after a 4.8 MB pull, which 10,000 boards in one process
    // cannot afford (a run was killed by the kernel at 21 GB).
    args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
    stub_ = v1::Federation::NewStub(grpc::CreateCustomChannel(
        fleet.options.server, grpc::InsecureChannelCredentials(), args));
  }

  void Join() {
    join_request_.set_client_name(name_);
    join_request_.set_num_samples(fleet_.options.num_samples);
    join_request_.mutable_device()->set_architecture("emulated");
    join_request_.mutable_device()->set_cores(1);
    stub_->async()->Join(NewCall(), &join_request_, &join_response_,
                         [this](grpc::Status s) {
                           if (!s.ok()) return Retry(s, [this] { Join(); });
                           Succeeded();
                           id_ = join_response_.client_id();
                           ++fleet_.joined;
                           Poll();
                         });
  }

  void Pulled(const grpc::Status& s, std::shared_ptr<TaskModel> model) {
    if (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      ++fleet_.pulls_busy;
    }
    if (!s.ok()) return Retry(s, [this] { Poll(); });
    ++fleet_.pulls;
    v1::UpdateHeader header;
    header.set_client_id(id_);
    header.set_round(task_.round());
    header.set_task_id(task_.task_id());
    header.set_num_samples(fleet_.options.num_samples);
    header.mutable_metrics()->set_train_loss(1.0);
    header.mutable_metrics()->set_steps(1);
    Push(std::move(model), std::move(header));
  }

  void Pushed(const grpc::Status& s, uint64_t bytes,
              std::shared_ptr<TaskModel> model, v1::UpdateHeader header) {
    if (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      ++fleet_.busy;  // the server takes only so many at once: later
      fleet_.timer.At(fleet_.clock.Now() + backoff_.Next(),
                      [this, model, header] { Push(model, header); });
      return;
    }
    backoff_.Reset();
    if (!s.ok()) {
      ++fleet_.refused;  // late, or the round closed: ask again
      fleet_.timer.At(fleet_.clock.Now() + absl::Milliseconds(200),
                      [this] { Poll(); });
      return;
    }
    ++fleet_.pushes;
    fleet_.bytes_pushed += bytes;
    Poll();
  }

 private:
  grpc::ClientContext* NewCall(absl::Duration deadline = absl::ZeroDuration()) {
    // The previous call's context lives until the next one: a callback may
    // still be returning from it.
    previous_ = std::move(context_);
    context_ = std::make_unique<grpc::ClientContext>();
    SetDeadline(*context_, deadline > absl::ZeroDuration()
                               ? deadline
                               : fleet_.options.rpc_deadline);
    return context_.get();
  }

  // A call went through: the next failure starts a fresh backoff.
  void Succeeded() {
    failing_since_ = absl::InfiniteFuture();
    backoff_.Reset();
  }

  void Poll() {
    task_request_.set_client_id(id_);
    stub_->async()->GetTask(
        NewCall(fleet_.options.poll_deadline), &task_request_, &task_,
        [this](grpc::Status s) {
          ++fleet_.polls;
          if (s.error_code() == grpc::StatusCode::NOT_FOUND) {
            return Join();  // the server forgot this id: join again
          }
          if (!s.ok()) return Retry(s, [this] { Poll(); });
          Succeeded();
          switch (task_.action()) {
            case v1::GetTaskResponse::DONE:
              ++fleet_.heard_done;
              return End();
            case v1::GetTaskResponse::TRAIN:
              return Pull();
            default:
              fleet_.timer.At(
                  fleet_.clock.Now() + absl::Milliseconds(std::max<uint32_t>(
                                           task_.retry_after_ms(), 50)),
                  [this] { Poll(); });
          }
        });
  }

  void Pull() {
    auto* pull = new PullReactor(this, fleet_.ModelOf(task_.task_id()));
    SetDeadline(pull->context, fleet_.options.rpc_deadline);
    pull->request.set_client_id(id_);
    pull->request.set_round(task_.round());
    pull->request.set_task_id(task_.task_id());
    stub_->async()->PullModel(&pull->context, &pull->request, pull);
    pull->Begin();
  }

  void Push(std::shared_ptr<TaskModel> model, v1::UpdateHeader header) {
    auto* push = new PushReactor(this, std::move(model), std::move(header));
    SetDeadline(push->context, fleet_.options.rpc_deadline);
    wire::AddClientId(push->context, id_);
    stub_->async()->PushUpdate(&push->context, &push->response, push);
    push->Begin();
  }

  // A failed call: try again after a pause, or give up after a while.
  void Retry(const grpc::Status& s, std::function<void()> again) {
    const absl::Time now = fleet_.clock.Now();
    if (failing_since_ == absl::InfiniteFuture()) failing_since_ = now;
    if (now - failing_since_ > fleet_.options.give_up_after) {
      std::fprintf(stderr, "fedberry-loadgen: %s gives up: %s\n", name_.c_str(),
                   s.error_message().c_str());
      ++fleet_.gave_up;
      return End();
    }
    fleet_.timer.At(now + backoff_.Next(), std::move(again));
  }

  // Under fleet_.mu, which wakes RunEmulatedFleet's wait for the last.
  void End() {
    absl::MutexLock lock(&fleet_.mu);
    ++fleet_.finished;
  }

  friend class PullReactor;
  friend class PushReactor;
  Fleet& fleet_;
  const std::string name_;
  client::Backoff backoff_;
  std::unique_ptr<v1::Federation::Stub> stub_;
  std::unique_ptr<grpc::ClientContext> context_, previous_;
  // One call at a time per board, so each call's messages are members.
  v1::JoinRequest join_request_;
  v1::JoinResponse join_response_;
  v1::GetTaskRequest task_request_;
  v1::GetTaskResponse task_;  // the last task polled
  std::string id_;
  absl::Time failing_since_ = absl::InfiniteFuture();
};

void PullReactor::OnDone(const grpc::Status& status) {
  board_->Pulled(status, model_);
  delete this;
}

void PushReactor::OnDone(const grpc::Status& status) {
  board_->Pushed(status, bytes, model_, header_);
  delete this;
}

}  // namespace

std::string FleetReport::Describe() const {
  return absl::StrFormat(
      "%d boards: %d joined, %d heard DONE, %d gave up; %d polls, %d pulls "
      "(%d told to retry later), %d updates accepted (%.1f MB), %d pushes told "
      "to retry later, %d "
      "refused; %.1f s",
      boards, joined, heard_done, gave_up, polls, pulls, pull_busy_refusals,
      pushes, static_cast<double>(bytes_pushed) / 1e6, busy_refusals,
      other_refusals, absl::ToDoubleSeconds(wall));
}

namespace {

void PrintProgress(const Fleet& fleet, absl::Duration since_start) {
  std::fprintf(stderr,
               "[%6.1fs] %d joined, %llu pulled (%llu pulls told to "
               "retry), %llu updates accepted, %llu retried, %d done\n",
               absl::ToDoubleSeconds(since_start), fleet.joined.load(),
               static_cast<unsigned long long>(fleet.pulls.load()),
               static_cast<unsigned long long>(fleet.pulls_busy.load()),
               static_cast<unsigned long long>(fleet.pushes.load()),
               static_cast<unsigned long long>(fleet.busy.load()),
               fleet.heard_done.load());
}

}  // namespace

absl::StatusOr<FleetReport> RunEmulatedFleet(const FleetOptions& options) {
  if (options.boards < 1 || options.server.empty()) {
    return absl::InvalidArgumentError(
        "an emulated fleet needs a server address and at least one board");
  }
  Clock& clock = *options.clock;
  const absl::Time start = clock.Now();
  Fleet fleet(options);
  std::vector<std::unique_ptr<Board>> boards;
  boards.reserve(options.boards);
  for (int i = 0; i < options.boards; ++i) {
    boards.push_back(std::make_unique<Board>(fleet, i));
  }
  for (auto& b : boards) b->Join();
  const auto all_finished = [&fleet, &options] {
    return fleet.finished.load() >= options.boards;
  };
  absl::Time next_progress = options.progress > absl::ZeroDuration()
                                 ? start + options.progress
                                 : absl::InfiniteFuture();
  while (true) {
    {
      absl::MutexLock lock(&fleet.mu);
      if (clock.AwaitWithDeadline(fleet.mu, absl::Condition(&all_finished),
                                  next_progress)) {
        break;
      }
    }
    next_progress += options.progress;
    PrintProgress(fleet, clock.Now() - start);
  }
  FleetReport report;
  report.boards = options.boards;
  report.joined = fleet.joined;
  report.heard_done = fleet.heard_done;
  report.gave_up = fleet.gave_up;
  report.polls = fleet.polls;
  report.pulls = fleet.pulls;
  report.pull_busy_refusals = fleet.pulls_busy;
  report.pushes = fleet.pushes;
  report.busy_refusals = fleet.busy;
  report.other_refusals = fleet.refused;
  report.bytes_pushed = fleet.bytes_pushed;
  report.wall = clock.Now() - start;
  return report;
}

}  // namespace fedberry::sim
