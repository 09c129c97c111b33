// RoundCoordinator: Updates and results: failed or non-finite aggregations, the
// update bound, declared sizes, adds outside the lock, names, restores and
// shutdown.
#include "tests/server/testing/round_coordinator_fixture.h"

namespace fedberry::server::round_coordinator_test {
namespace {

// A strategy whose aggregation fails (a full disk under a robust rule's
// spill file, say).
class FailingStrategy : public Strategy {
 public:
  const std::string& name() const override { return name_; }
  absl::StatusOr<std::unique_ptr<RoundAggregator>> BeginRound(
      std::shared_ptr<const NamedTensors>) override {
    return std::make_unique<Aggregator>();
  }

 private:
  struct Aggregator : RoundAggregator {
    absl::Status Add(const NamedTensors&, double) override {
      ++n;
      return absl::OkStatus();
    }
    int updates() const override { return n; }
    absl::StatusOr<NamedTensors> Result() override {
      return absl::InternalError("the spill file is short");
    }
    int n = 0;
  };
  std::string name_ = "failing";
};

TEST_F(RoundCoordinatorTest, AFailedAggregationSaysSoInTheReport) {
  strategy_ = std::make_unique<FailingStrategy>();
  Make(2);
  std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_TRUE(Submit(Header(a, Task(a), 5), Model(1, 1)).ok());
  ASSERT_TRUE(Submit(Header(b, Task(b), 5), Model(1, 1)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0].refused_result,
            "aggregation failed: the spill file is short");
  EXPECT_FALSE(reports_[0].eval.has_value());
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(0, 0)));
}

TEST_F(RoundCoordinatorTest, FinitePoisonIsRefusedByTheUpdateBound) {
  max_update_ratio_ = 10;
  Make(2);
  std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  auto ta = Task(a), tb = Task(b);
  const absl::Status poisoned = Submit(Header(a, ta, 5), Model(1e38f, 1e38f));
  EXPECT_EQ(poisoned.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(poisoned.message().find("max_update_ratio"), std::string::npos)
      << poisoned;
  // The refusal changed nothing: a's honest update still counts once.
  CloseWithHonestUpdates(a, ta, b, tb);
}

TEST_F(RoundCoordinatorTest, ANonFiniteResultIsRefusedAndTheModelKept) {
  // The bound is off (the fixture's default): the last line of defence
  // must hold by itself.
  Make(2, /*rounds=*/2);
  std::string a, b;
  ASSERT_NO_FATAL_FAILURE(CloseOnAModelThatEvaluatesToNaN(a, b));
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_FALSE(reports_[0].eval.has_value());
  // The job goes on from the model it had.
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(0, 0)));
  ASSERT_TRUE(coordinator_->RunOnce());
  auto ta = Task(a);
  auto tb = Task(b);
  EXPECT_EQ(ta.round(), 2u);
  CloseWithHonestUpdates(a, ta, b, tb);
}

// --overlap_evaluation: boards train round 2 while round 1's model is
// evaluated; round 1 is reported (and persisted with its figures) when its
// evaluation ends, before round 2; the last round is evaluated before DONE.
TEST_F(RoundCoordinatorTest,
       AnOverlappedEvaluationRunsWhileTheNextRoundTrains) {
  overlap_evaluation_ = true;
  absl::Notification full_started, release;
  std::vector<int64_t> asked;  // max_samples of each evaluation, in order
  absl::Mutex asked_mu;
  evaluation_gate_ = [&](int64_t max_samples) {
    bool first_full = false;
    {
      absl::MutexLock lock(&asked_mu);
      asked.push_back(max_samples);
      first_full = max_samples == 0 && !full_started.HasBeenNotified();
    }
    if (first_full) {
      full_started.Notify();
      release.WaitForNotification();
    }
  };
  Make(2, /*rounds=*/2);
  std::vector<FederationSnapshot> snapshots;  // the driver's and the eval's
  absl::Mutex snapshots_mu;
  coordinator_->SetSnapshotSink([&](const FederationSnapshot& s) {
    absl::MutexLock lock(&snapshots_mu);
    snapshots.push_back(s);
  });
  const std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  auto ta = Task(a), tb = Task(b);
  ASSERT_TRUE(Submit(Header(a, ta, 5), Model(1, 1)).ok());
  ASSERT_TRUE(Submit(Header(b, tb, 5), Model(3, 3)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());  // closes round 1
  full_started.WaitForNotification();
  // Round 1's model is published before its evaluation ends, and round 2
  // trains from it meanwhile.
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(2, 2)));
  EXPECT_TRUE(reports_.empty());
  ASSERT_TRUE(coordinator_->RunOnce());  // opens round 2
  ta = Task(a);
  tb = Task(b);
  ASSERT_EQ(ta.action(), v1::GetTaskResponse::TRAIN);
  EXPECT_EQ(ta.round(), 2u);
  ASSERT_TRUE(Submit(Header(a, ta, 5), Model(4, 4)).ok());
  ASSERT_TRUE(Submit(Header(b, tb, 5), Model(6, 6)).ok());
  // Closing round 2 waits for round 1's evaluation.
  std::thread closer([&] { coordinator_->RunOnce(); });
  release.Notify();
  closer.join();
  EXPECT_TRUE(coordinator_->done());
  EXPECT_EQ(Task(a).action(), v1::GetTaskResponse::DONE);
  ASSERT_EQ(reports_.size(), 2u);
  EXPECT_EQ(reports_[0].round, 1u);
  ASSERT_TRUE(reports_[0].eval.has_value());
  EXPECT_DOUBLE_EQ(reports_[0].eval->accuracy, 0.75);
  EXPECT_EQ(reports_[1].round, 2u);
  ASSERT_TRUE(reports_[1].eval.has_value());
  // Round 1: a probe, then the whole set; the last round: the whole set.
  EXPECT_EQ(asked, (std::vector<int64_t>{kEvaluationProbeSamples, 0, 0}));
  // Persisted at round 1's close without its figures, again once they
  // came, then at round 2's close with both rounds' figures.
  ASSERT_EQ(snapshots.size(), 3u);
  EXPECT_EQ(snapshots[0].next_round, 2u);
  EXPECT_FALSE(snapshots[0].history.at(0).eval.has_value());
  EXPECT_EQ(snapshots[1].next_round, 2u);
  EXPECT_TRUE(snapshots[1].history.at(0).eval.has_value());
  ASSERT_EQ(snapshots[2].history.size(), 2u);
  EXPECT_TRUE(snapshots[2].history[0].eval.has_value());
  EXPECT_TRUE(snapshots[2].history[1].eval.has_value());
}

TEST_F(RoundCoordinatorTest, AnOverlappedRoundWhoseProbeIsNotFiniteIsRefused) {
  overlap_evaluation_ = true;
  Make(2, /*rounds=*/2);
  std::string a, b;
  ASSERT_NO_FATAL_FAILURE(CloseOnAModelThatEvaluatesToNaN(a, b));
  // Refused at the probe: reported at once, nothing left to evaluate.
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_NE(reports_[0].refused_result.find("on the first 10 samples"),
            std::string::npos)
      << reports_[0].refused_result;
  EXPECT_EQ(evaluations_, 1);
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(0, 0)));
}

TEST_F(RoundCoordinatorTest, FiguresThatAreNotFiniteAreRefusedOrDropped) {
  Make(2);
  std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  auto ta = Task(a), tb = Task(b);
  auto nan_loss = Header(a, ta, 5);
  nan_loss.mutable_metrics()->set_train_loss(std::nan(""));
  EXPECT_EQ(Submit(nan_loss, Model(1, 1)).code(),
            absl::StatusCode::kInvalidArgument);
  auto bad_accuracy = Header(a, ta, 5);
  bad_accuracy.mutable_metrics()->set_train_accuracy(-3);
  EXPECT_EQ(Submit(bad_accuracy, Model(1, 1)).code(),
            absl::StatusCode::kInvalidArgument);
  // Absurd resource readings do not cost an honest update: they are dropped.
  auto absurd = Header(a, ta, 5);
  absurd.mutable_resources()->set_cpu_utilization(-1e15);
  absurd.mutable_resources()->set_wall_seconds(
      std::numeric_limits<double>::infinity());
  absurd.mutable_resources()->set_cpu_seconds(2.5);
  ASSERT_TRUE(Submit(absurd, Model(1, 1)).ok());
  ASSERT_TRUE(Submit(Header(b, tb, 5), Model(1, 1)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  const auto& clients = reports_.back().clients;
  ASSERT_EQ(clients.size(), 2u);
  EXPECT_FALSE(clients[0].resources.has_cpu_utilization());
  EXPECT_FALSE(clients[0].resources.has_wall_seconds());
  EXPECT_EQ(clients[0].resources.cpu_seconds(), 2.5);
}

// A board that declared 2^40 samples before the fleet had a median (it
// joined first) is weighed against the fleet's bound, 10 x the median; one
// that declares as much once the fleet is there is refused at join.
TEST_F(RoundCoordinatorTest, ADeclaredSizeCannotHijackTheAverage) {
  Make(4);  // whole epochs; the fixture's boards declare 10 samples
  v1::JoinRequest liar;
  liar.set_client_name("liar");
  liar.set_num_samples(uint64_t{1} << 40);
  auto joined = coordinator_->Join(liar);
  ASSERT_TRUE(joined.ok()) << joined.status();  // no fleet to compare yet
  const std::string l = joined->client_id();
  ASSERT_TRUE(coordinator_->GetTask(l, absl::ZeroDuration()).ok());
  std::string a = Join("a"), b = Join("b"), c = Join("c");
  ASSERT_TRUE(coordinator_->RunOnce());
  const auto tl = Task(l);
  const absl::Status hijack =
      Submit(Header(l, tl, uint64_t{1} << 40), Model(0, 0));
  EXPECT_EQ(hijack.code(), absl::StatusCode::kInvalidArgument) << hijack;
  EXPECT_NE(hijack.message().find("at most 100"), std::string::npos) << hijack;
  ASSERT_TRUE(Submit(Header(l, tl, 100), Model(0, 0)).ok());
  for (const std::string& id : {a, b, c}) {
    ASSERT_TRUE(Submit(Header(id, Task(id), 10), Model(13, 13)).ok());
  }
  ASSERT_TRUE(coordinator_->RunOnce());
  // 100 of 130 samples: the most the bound lets one board weigh.
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(3, 3)));
  v1::JoinRequest late = liar;
  late.set_client_name("late-liar");
  const auto refused = coordinator_->Join(late);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("median of 10"), std::string::npos)
      << refused.status();
  late.set_num_samples(100);
  EXPECT_TRUE(coordinator_->Join(late).ok());
}

// The bound is set by boards taking part: 8 joins declaring 100 samples
// that never asked for a task made the median 100, and a real board with
// 15,000 samples was refused.
TEST_F(RoundCoordinatorTest, JoinsThatNeverAskedDoNotSetTheSizeBound) {
  Make(2);
  for (int i = 0; i < 8; ++i) {
    v1::JoinRequest r;
    r.set_client_name(absl::StrCat("silent-", i));
    r.set_num_samples(100);
    ASSERT_TRUE(coordinator_->Join(r).ok());
  }
  EXPECT_FALSE(coordinator_->RunOnce());  // no board asked: nothing opens
  v1::JoinRequest honest;
  honest.set_client_name("honest");
  honest.set_num_samples(15000);
  auto joined = coordinator_->Join(honest);
  EXPECT_TRUE(joined.ok()) << joined.status();
}

TEST_F(RoundCoordinatorTest, AnUpdateWeighsNoMoreThanItsTaskAllows) {
  Make(2);  // whole epochs; each board declared 10 samples at join
  std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  auto ta = Task(a), tb = Task(b);
  const absl::Status huge =
      Submit(Header(a, ta, uint64_t{1} << 63), Model(100, 100));
  EXPECT_EQ(huge.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(huge.message().find("at most 10"), std::string::npos) << huge;
  EXPECT_EQ(Submit(Header(a, ta, 11), Model(1, 1)).code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(Submit(Header(a, ta, 10), Model(1, 1)).ok());
  ASSERT_TRUE(Submit(Header(b, tb, 10), Model(3, 3)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(2, 2)));
}

TEST_F(RoundCoordinatorTest, RejoinAfterPushKeepsTheRoundWaitingForOthers) {
  Make(3);
  std::string a = Join("a"), b = Join("b"), c = Join("c");
  ASSERT_TRUE(coordinator_->RunOnce());
  auto ta = Task(a), tb = Task(b), tc = Task(c);
  ASSERT_TRUE(Submit(Header(a, ta, 5), Model(3, 3)).ok());
  // a crashes after its push and joins again under its name.
  std::string a2 = Join("a");
  EXPECT_EQ(Task(a2).action(), v1::GetTaskResponse::WAIT);  // it reported
  EXPECT_FALSE(coordinator_->RunOnce());  // b and c are still out
  EXPECT_FALSE(coordinator_->RunOnce());
  ASSERT_TRUE(Submit(Header(b, tb, 5), Model(6, 6)).ok());
  EXPECT_FALSE(coordinator_->RunOnce());
  ASSERT_TRUE(Submit(Header(c, tc, 5), Model(9, 9)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0].participants, 3);
  EXPECT_EQ(reports_[0].dropped, 0);
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(6, 6)));
}

// FedAvg whose second Add blocks until released: an add in progress.
class SecondAddBlocks final : public Strategy {
 public:
  explicit SecondAddBlocks(const NamedTensors& model)
      : fedavg_(*MakeStrategy(StrategyOptions{}, model)) {}
  absl::Notification entered, release;

  const std::string& name() const override { return fedavg_->name(); }
  absl::StatusOr<std::unique_ptr<RoundAggregator>> BeginRound(
      std::shared_ptr<const NamedTensors> global) override {
    auto inner = fedavg_->BeginRound(std::move(global));
    if (!inner.ok()) return inner.status();
    return std::make_unique<Sum>(*this, *std::move(inner));
  }

 private:
  class Sum final : public RoundAggregator {
   public:
    Sum(SecondAddBlocks& outer, std::unique_ptr<RoundAggregator> inner)
        : outer_(outer), inner_(std::move(inner)) {}
    absl::Status Add(const NamedTensors& update, double weight) override {
      if (++adds_ == 2) {
        outer_.entered.Notify();
        outer_.release.WaitForNotification();
      }
      return inner_->Add(update, weight);
    }
    int updates() const override { return inner_->updates(); }
    absl::StatusOr<NamedTensors> Result() override { return inner_->Result(); }

   private:
    SecondAddBlocks& outer_;
    std::unique_ptr<RoundAggregator> inner_;
    int adds_ = 0;
  };
  std::unique_ptr<Strategy> fedavg_;
};

TEST_F(RoundCoordinatorTest, AnUpdateIsAddedOutsideTheLockAndTheCloseWaits) {
  auto strategy = std::make_unique<SecondAddBlocks>(Model(0, 0));
  SecondAddBlocks& blocking = *strategy;
  strategy_ = std::move(strategy);
  Make(2);
  std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  auto ta = Task(a), tb = Task(b);
  ASSERT_TRUE(Submit(Header(b, tb, 5), Model(3, 3)).ok());
  std::thread push(
      [&] { EXPECT_TRUE(Submit(Header(a, ta, 5), Model(1, 1)).ok()); });
  blocking.entered.WaitForNotification();
  // a's add is under way: the coordinator still serves, a second push of
  // a is refused as a duplicate, and a board joins.
  EXPECT_TRUE(absl::IsAlreadyExists(Submit(Header(a, ta, 5), Model(9, 9))));
  std::string c = Join("c");
  EXPECT_FALSE(c.empty());
  EXPECT_EQ(Task(b).action(), v1::GetTaskResponse::WAIT);
  // Both selected boards are in: the close starts and waits for a's add.
  absl::Notification closed;
  std::thread driver([&] {
    EXPECT_TRUE(coordinator_->RunOnce());
    closed.Notify();
  });
  EXPECT_FALSE(closed.WaitForNotificationWithTimeout(absl::Milliseconds(200)));
  blocking.release.Notify();
  push.join();
  driver.join();
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0].participants, 2);
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(2, 2)));
}

TEST_F(RoundCoordinatorTest, ABoardThatRejoinsDuringItsAddStaysCounted) {
  auto strategy = std::make_unique<SecondAddBlocks>(Model(0, 0));
  SecondAddBlocks& blocking = *strategy;
  strategy_ = std::move(strategy);
  Make(3);
  std::string a = Join("a"), b = Join("b"), c = Join("c");
  ASSERT_TRUE(coordinator_->RunOnce());
  auto ta = Task(a), tb = Task(b), tc = Task(c);
  ASSERT_TRUE(Submit(Header(b, tb, 5), Model(3, 3)).ok());
  std::thread push(
      [&] { EXPECT_TRUE(Submit(Header(a, ta, 5), Model(6, 6)).ok()); });
  blocking.entered.WaitForNotification();
  std::string a2 = Join("a");  // a restarts while its update is added
  blocking.release.Notify();
  push.join();
  EXPECT_EQ(Task(a2).action(), v1::GetTaskResponse::WAIT);  // it reported
  EXPECT_FALSE(coordinator_->RunOnce());                    // c is out
  ASSERT_TRUE(Submit(Header(c, tc, 5), Model(9, 9)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0].participants, 3);
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(6, 6)));
}

TEST_F(RoundCoordinatorTest, NamesMustBeShortPrintableText) {
  Make(2);
  for (const std::string& name :
       {std::string("evil\n[info] forged line"), std::string("\x1b[31mred"),
        std::string(1 << 20, 'x'), std::string()}) {
    v1::JoinRequest r;
    r.set_client_name(name);
    auto joined = coordinator_->Join(r);
    EXPECT_EQ(joined.status().code(), absl::StatusCode::kInvalidArgument);
    // The refusal quotes at most a short, escaped part of the name.
    EXPECT_LT(joined.status().message().size(), 400u);
    EXPECT_EQ(joined.status().message().find('\n'), std::string::npos);
    EXPECT_EQ(joined.status().message().find('\x1b'), std::string::npos);
  }
  EXPECT_EQ(coordinator_->registered_clients(), 0);
  v1::JoinRequest greedy;
  greedy.set_client_name("greedy");
  greedy.set_num_samples(uint64_t{1} << 62);
  EXPECT_EQ(coordinator_->Join(greedy).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(RoundCoordinatorTest, BoardsThatNeverPollAreNotSelectedAndForgotten) {
  Make(2);
  for (int i = 0; i < 50; ++i) {
    v1::JoinRequest r;
    r.set_client_name(absl::StrCat("ghost-", i));
    ASSERT_TRUE(coordinator_->Join(r).ok());
  }
  std::string a = Join("a"), b = Join("b");
  ASSERT_TRUE(coordinator_->RunOnce());
  auto ta = Task(a);
  ASSERT_EQ(ta.action(), v1::GetTaskResponse::TRAIN);
  ASSERT_TRUE(Submit(Header(a, ta, 5), Model(1, 1)).ok());
  ASSERT_TRUE(Submit(Header(b, Task(b), 5), Model(1, 1)).ok());
  ASSERT_TRUE(coordinator_->RunOnce());
  EXPECT_EQ(reports_.back().selected, 2);
  EXPECT_EQ(coordinator_->registered_clients(), 52);
  clock_.Advance(absl::Minutes(3));  // past the liveness window
  Task(a);
  Task(b);
  ASSERT_TRUE(coordinator_->RunOnce());  // opens round 2, forgets the ghosts
  EXPECT_EQ(coordinator_->registered_clients(), 2);
}

TEST_F(RoundCoordinatorTest, TheRegistryIsBounded) {
  max_clients_ = 2;
  Make(2);
  Join("a");
  Join("b");
  v1::JoinRequest r;
  r.set_client_name("c");
  EXPECT_EQ(coordinator_->Join(r).status().code(),
            absl::StatusCode::kResourceExhausted);
  r.set_client_name("a");  // a known board restarting is always let in
  EXPECT_TRUE(coordinator_->Join(r).ok());
  EXPECT_EQ(coordinator_->registered_clients(), 2);
}

TEST_F(RoundCoordinatorTest,
       CheckpointRecordsRoundTripFiguresThatAreNotFinite) {
  const double inf = std::numeric_limits<double>::infinity();
  FederationSnapshot snapshot;
  snapshot.next_round = 2;
  snapshot.global = std::make_shared<const NamedTensors>(Model(1, 2));
  snapshot.clients.push_back({"c0001-abc", "a", 10, false, 0, 0, ""});
  RoundReport r;
  r.round = 1;
  r.round_seconds = 1e308;
  r.aggregation_seconds = std::nan("");
  r.eval = runtime::EvalResult{10, inf, -inf};
  r.refused_result = "its evaluation is not finite";
  r.eval_overlapped = true;
  r.paused_stragglers = 2;
  r.released_stragglers = 1;
  r.planner = "greedy";
  r.makespan_seconds = 3.5;
  r.elapsed_seconds = 1234.5;
  r.declined = 3;
  r.moved_samples = 40;
  ClientRoundReport c;
  c.client_id = "c0001-abc";
  c.client_name = "a";
  c.num_samples = std::numeric_limits<uint64_t>::max();
  c.metrics.set_train_loss(std::nan(""));
  c.metrics.set_train_accuracy(-inf);
  c.metrics.set_train_seconds(5e-324);
  c.resources.set_cpu_utilization(std::nan(""));
  r.clients.push_back(c);
  snapshot.history.push_back(r);
  snapshot.capacities["a"].seconds_per_sample = {inf, std::nan(""), 0.5};

  checkpoint::LoadedCheckpoint loaded = AsLoaded(snapshot);
  auto decoded = DecodeFederationCheckpoint(loaded);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  const RoundReport& back = decoded->snapshot.history.at(0);
  EXPECT_EQ(back.round_seconds, 1e308);
  EXPECT_TRUE(std::isnan(back.aggregation_seconds));
  ASSERT_TRUE(back.eval.has_value());
  EXPECT_EQ(back.eval->mean_loss, inf);
  EXPECT_EQ(back.eval->accuracy, -inf);
  EXPECT_EQ(back.refused_result, r.refused_result);
  EXPECT_TRUE(back.eval_overlapped);
  EXPECT_EQ(back.paused_stragglers, 2);
  EXPECT_EQ(back.released_stragglers, 1);
  EXPECT_EQ(back.planner, "greedy");
  EXPECT_EQ(back.makespan_seconds, 3.5);
  EXPECT_EQ(back.elapsed_seconds, 1234.5);
  EXPECT_EQ(back.declined, 3);
  EXPECT_EQ(back.moved_samples, 40u);
  const ClientRoundReport& cb = back.clients.at(0);
  EXPECT_EQ(cb.num_samples, std::numeric_limits<uint64_t>::max());
  EXPECT_TRUE(std::isnan(cb.metrics.train_loss()));
  EXPECT_EQ(cb.metrics.train_accuracy(), -inf);
  EXPECT_EQ(cb.metrics.train_seconds(), 5e-324);
  EXPECT_TRUE(std::isnan(cb.resources.cpu_utilization()));
  const auto& sps = decoded->snapshot.capacities.at("a").seconds_per_sample;
  ASSERT_EQ(sps.size(), 3u);
  EXPECT_EQ(sps[0], inf);
  EXPECT_TRUE(std::isnan(sps[1]));
  EXPECT_EQ(sps[2], 0.5);

  // Records written before this fix hold null where a NaN was: they read.
  std::string state = loaded.files["state.json"];
  for (std::string_view token : {"\"NaN\"", "\"Infinity\"", "\"-Infinity\""}) {
    for (size_t p = state.find(token); p != std::string::npos;
         p = state.find(token)) {
      state.replace(p, token.size(), "null");
    }
  }
  loaded.files["state.json"] = state;
  auto old = DecodeFederationCheckpoint(loaded);
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_TRUE(
      std::isnan(old->snapshot.history[0].clients[0].metrics.train_loss()));
}

TEST_F(RoundCoordinatorTest, AJobResumesOnlyUnderTheSamePlan) {
  FederationSnapshot snapshot;
  snapshot.next_round = 3;
  snapshot.global = std::make_shared<NamedTensors>(Model(1, 2));
  const v1::TrainingPlan plan = TestPlan();
  auto decoded = DecodeFederationCheckpoint(AsLoaded(snapshot, plan));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ASSERT_TRUE(decoded->plan.has_value());
  EXPECT_TRUE(CheckSamePlan(*decoded, plan).ok());

  // Another learning rate and optimizer: refused, naming both fields.
  v1::TrainingPlan other = plan;
  other.set_learning_rate(0.01);
  other.set_optimizer("adam");
  absl::Status refused = CheckSamePlan(*decoded, other);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
  for (const char* field :
       {"learning_rate", "optimizer", "ckpt-00000001", "--noresume"}) {
    EXPECT_NE(refused.message().find(field), absl::string_view::npos)
        << refused.message() << " does not name " << field;
  }
  // Another normalisation is another plan too.
  other = plan;
  other.set_input_std(0, 0.5f);
  EXPECT_FALSE(CheckSamePlan(*decoded, other).ok());

  // A checkpoint written before plans were kept resumes by model alone.
  decoded->plan.reset();
  EXPECT_TRUE(CheckSamePlan(*decoded, other).ok());
  other.set_model_name("resnet8");
  refused = CheckSamePlan(*decoded, other);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("resnet8"), absl::string_view::npos)
      << refused.message();
}

TEST_F(RoundCoordinatorTest, TheStrategysStateTravelsWithTheCheckpoint) {
  FederationSnapshot snapshot;
  snapshot.global = std::make_shared<NamedTensors>(Model(1, 2));
  snapshot.strategy_state = {{"m/w", at::full({2, 2}, 0.25f)},
                             {"v/w", at::full({2, 2}, 1e-6f)}};
  auto decoded = DecodeFederationCheckpoint(AsLoaded(snapshot));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  const NamedTensors& state = decoded->snapshot.strategy_state;
  ASSERT_EQ(state.size(), 2u);
  EXPECT_EQ(state[1].name, "v/w");
  EXPECT_TRUE(state[1].tensor.equal(snapshot.strategy_state[1].tensor));
  // Without its strategy file the checkpoint is refused, not half-read.
  checkpoint::LoadedCheckpoint loaded = AsLoaded(snapshot);
  loaded.files.erase("strategy.pt");
  EXPECT_EQ(DecodeFederationCheckpoint(loaded).status().code(),
            absl::StatusCode::kDataLoss);
  // A stateless job writes no strategy file.
  snapshot.strategy_state.clear();
  EXPECT_EQ(AsLoaded(snapshot).files.count("strategy.pt"), 0u);
}

TEST_F(RoundCoordinatorTest,
       OverSelectedRoundsCloseOnTheirTargetAndCountLateOnes) {
  target_updates_ = 2;
  over_select_ = 1.5;  // 3 boards for 2 updates
  Make(1, /*rounds=*/2);
  std::vector<std::string> ids = {Join("a"), Join("b"), Join("c"), Join("d")};
  ASSERT_TRUE(coordinator_->RunOnce());
  std::vector<std::string> selected;
  v1::GetTaskResponse task;
  for (const auto& id : ids) {
    v1::GetTaskResponse t = Task(id);
    if (t.action() == v1::GetTaskResponse::TRAIN) {
      selected.push_back(id);
      task = t;
    }
  }
  ASSERT_EQ(selected.size(), 3u);
  ASSERT_TRUE(Submit(Header(selected[0], task, 1), Model(1, 1)).ok());
  EXPECT_FALSE(coordinator_->RunOnce());  // 1 of the 2 it needs
  ASSERT_TRUE(Submit(Header(selected[1], task, 1), Model(3, 3)).ok());
  EXPECT_TRUE(coordinator_->RunOnce());  // closes without the third
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(2, 2)));
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0].participants, 2);
  EXPECT_EQ(reports_[0].cut_off, 1);
  // The third board's work arrives late: refused, said so, and counted.
  absl::Status late = Submit(Header(selected[2], task, 1), Model(9, 9));
  EXPECT_EQ(late.code(), absl::StatusCode::kFailedPrecondition) << late;
  EXPECT_EQ(wire::ReasonOf(late), wire::kReasonLateUpdate) << late;
  EXPECT_TRUE(SameModel(*coordinator_->global_model(), Model(2, 2)));
  ASSERT_TRUE(coordinator_->RunOnce());  // round 2
  std::vector<std::string> second;
  for (const auto& id : ids) {
    v1::GetTaskResponse t = Task(id);
    if (t.action() == v1::GetTaskResponse::TRAIN) {
      second.push_back(id);
      task = t;
    }
  }
  ASSERT_GE(second.size(), 2u);
  ASSERT_TRUE(Submit(Header(second[0], task, 1), Model(2, 2)).ok());
  ASSERT_TRUE(Submit(Header(second[1], task, 1), Model(2, 2)).ok());
  EXPECT_TRUE(coordinator_->RunOnce());
  ASSERT_EQ(reports_.size(), 2u);
  EXPECT_EQ(reports_[1].late_updates, 1);
}

TEST_F(RoundCoordinatorTest, ShutdownEndsLongPolls) {
  Make(2);
  std::string a = Join("a");
  coordinator_->Shutdown();
  EXPECT_EQ(Task(a).action(), v1::GetTaskResponse::DONE);
  EXPECT_TRUE(coordinator_->done());
}

}  // namespace
}  // namespace fedberry::server::round_coordinator_test
