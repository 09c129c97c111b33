// Planner unit tests: uniform, greedy and ILP plans are valid, and greedy and
// ILP match a brute-force optimum on small instances; capacity estimates are
// robust to one noisy round and follow a real slowdown.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "gtest/gtest.h"
#include "server/planner/capacity_estimator.h"
#include "server/planner/ilp_planner.h"
#include "server/planner/round_planner.h"
#include "server/planner/work_plan.h"

namespace fedberry::server::planner::planner_test {
namespace {

ClientCapacity Client(std::string id, double step, double fixed, int64_t lo,
                      int64_t hi) {
  ClientCapacity c;
  c.id = std::move(id);
  c.step_seconds = step;
  c.fixed_seconds = fixed;
  c.min_steps = lo;
  c.max_steps = hi;
  return c;
}

// The smallest makespan over every plan (exhaustive search).
double BruteForceMakespan(const PlanRequest& r) {
  double best = std::numeric_limits<double>::infinity();
  std::vector<int64_t> steps(r.clients.size());
  std::function<void(size_t, int64_t)> go = [&](size_t i, int64_t left) {
    if (i == r.clients.size()) {
      if (left == 0) best = std::min(best, Makespan(r, steps));
      return;
    }
    const ClientCapacity& c = r.clients[i];
    for (int64_t s = c.min_steps; s <= std::min(c.max_steps, left); ++s) {
      steps[i] = s;
      go(i + 1, left - s);
    }
  };
  go(0, r.total_steps);
  return best;
}

Plan MustPlan(const WorkPlanner& p, const PlanRequest& r) {
  auto plan = p.MakePlan(r);
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return {};
  EXPECT_TRUE(ValidatePlan(r, plan->steps).ok())
      << p.name() << ": " << ValidatePlan(r, plan->steps);
  EXPECT_DOUBLE_EQ(plan->makespan, Makespan(r, plan->steps));
  return *plan;
}

TEST(PlannerTest, GlpkIsBuiltIn) {
  // The ILP planner must really solve, not silently run greedy.
  EXPECT_TRUE(IlpPlanner::SolverAvailable());
}

TEST(PlannerTest, UniformSplitsEvenlyAndKeepsTheTotal) {
  PlanRequest r;
  r.total_steps = 10;
  for (int i = 0; i < 3; ++i) r.clients.push_back(Client("c", 1, 0, 1, 100));
  Plan p = MustPlan(UniformPlanner(), r);
  EXPECT_EQ(p.steps, (std::vector<int64_t>{4, 3, 3}));
}

TEST(PlannerTest, UniformRespectsBounds) {
  PlanRequest r;
  r.total_steps = 12;
  r.clients = {Client("a", 1, 0, 1, 2), Client("b", 1, 0, 1, 100),
               Client("c", 1, 0, 5, 100)};
  Plan p = MustPlan(UniformPlanner(), r);
  EXPECT_EQ(p.steps[0], 2);
  EXPECT_EQ(p.steps[0] + p.steps[1] + p.steps[2], 12);
}

TEST(PlannerTest, GreedyGivesTheSlowClientLess) {
  PlanRequest r;
  r.total_steps = 13;
  r.clients = {Client("fast", 1, 0, 1, 100), Client("fast2", 1, 0, 1, 100),
               Client("fast3", 1, 0, 1, 100), Client("slow", 4, 0, 1, 100)};
  Plan g = MustPlan(GreedyPlanner(), r);
  EXPECT_EQ(g.steps, (std::vector<int64_t>{4, 4, 4, 1}));
  EXPECT_DOUBLE_EQ(g.makespan, 4);
  Plan u = MustPlan(UniformPlanner(), r);
  EXPECT_GT(u.makespan, g.makespan);  // uniform: the slow one does 3 -> 12 s
}

TEST(PlannerTest, OneClientTakesEverything) {
  PlanRequest r;
  r.total_steps = 7;
  r.clients = {Client("only", 0.5, 2, 1, 10)};
  for (const WorkPlanner* p : std::initializer_list<const WorkPlanner*>{
           new UniformPlanner, new GreedyPlanner, new IlpPlanner}) {
    Plan plan = MustPlan(*p, r);
    EXPECT_EQ(plan.steps, std::vector<int64_t>{7}) << p->name();
    EXPECT_DOUBLE_EQ(plan.makespan, 5.5);
    delete p;
  }
}

TEST(PlannerTest, ClientWithNoDataGetsNothing) {
  PlanRequest r;
  r.total_steps = 6;
  r.clients = {Client("a", 1, 0, 1, 10), Client("empty", 0.01, 0, 0, 0),
               Client("b", 1, 0, 1, 10)};
  for (const WorkPlanner* p : std::initializer_list<const WorkPlanner*>{
           new UniformPlanner, new GreedyPlanner, new IlpPlanner}) {
    Plan plan = MustPlan(*p, r);
    EXPECT_EQ(plan.steps[1], 0) << p->name();
    EXPECT_DOUBLE_EQ(plan.makespan, 3) << p->name();
    delete p;
  }
}

TEST(PlannerTest, TiesAreBrokenByClientOrder) {
  PlanRequest r;
  r.total_steps = 5;
  r.clients = {Client("a", 1, 0, 0, 10), Client("b", 1, 0, 0, 10)};
  Plan g = MustPlan(GreedyPlanner(), r);
  EXPECT_EQ(g.steps, (std::vector<int64_t>{3, 2}));
  // Same answer every time.
  EXPECT_EQ(MustPlan(GreedyPlanner(), r).steps, g.steps);
  Plan i = MustPlan(IlpPlanner(), r);
  EXPECT_DOUBLE_EQ(i.makespan, 3);
}

TEST(PlannerTest, BoundsBindBeforeSpeed) {
  // The fast client would take everything but is capped at 3.
  PlanRequest r;
  r.total_steps = 8;
  r.clients = {Client("fast", 0.1, 0, 1, 3), Client("slow", 1, 0, 2, 10)};
  for (const WorkPlanner* p : std::initializer_list<const WorkPlanner*>{
           new GreedyPlanner, new IlpPlanner}) {
    Plan plan = MustPlan(*p, r);
    EXPECT_EQ(plan.steps, (std::vector<int64_t>{3, 5})) << p->name();
    delete p;
  }
}

TEST(PlannerTest, WorkNotNeededForTheMakespanStaysNearUniform) {
  // b's transfer (10 s) sets the makespan: b can take only 1 step.
  PlanRequest r;
  r.total_steps = 20;
  r.clients = {Client("a", 0.1, 0, 1, 40), Client("b", 0.1, 10, 1, 40)};
  for (const WorkPlanner* p : std::initializer_list<const WorkPlanner*>{
           new GreedyPlanner, new IlpPlanner}) {
    Plan plan = MustPlan(*p, r);
    EXPECT_NEAR(plan.makespan, 10.1, 1e-9) << p->name();
    EXPECT_EQ(plan.steps, (std::vector<int64_t>{19, 1})) << p->name();
    delete p;
  }
  // c must train 30 slow steps (30 s); a and b share the other 10 steps,
  // all of which fit under 30 s: split evenly, not piled on the fast a.
  r.total_steps = 40;
  r.clients = {Client("a", 0.1, 0, 1, 40), Client("b", 1, 0, 1, 40),
               Client("c", 1, 0, 30, 30)};
  for (const WorkPlanner* p : std::initializer_list<const WorkPlanner*>{
           new GreedyPlanner, new IlpPlanner}) {
    Plan plan = MustPlan(*p, r);
    EXPECT_NEAR(plan.makespan, 30, 1e-9) << p->name();
    EXPECT_EQ(plan.steps, (std::vector<int64_t>{5, 5, 30})) << p->name();
    delete p;
  }
}

TEST(PlannerTest, InvalidRequestsAreRefused) {
  PlanRequest r;
  r.total_steps = 100;
  r.clients = {Client("a", 1, 0, 1, 10)};  // cannot hold 100 steps
  EXPECT_FALSE(GreedyPlanner().MakePlan(r).ok());
  EXPECT_FALSE(IlpPlanner().MakePlan(r).ok());
  EXPECT_FALSE(UniformPlanner().MakePlan(r).ok());
  r.total_steps = 5;
  r.clients[0].step_seconds = -1;
  EXPECT_FALSE(GreedyPlanner().MakePlan(r).ok());
  r.clients[0].step_seconds = 1;
  r.clients[0].min_steps = 11;
  EXPECT_FALSE(GreedyPlanner().MakePlan(r).ok());
}

TEST(PlannerTest, ValidatePlanCatchesBadPlans) {
  PlanRequest r;
  r.total_steps = 4;
  r.clients = {Client("a", 1, 0, 1, 3), Client("b", 1, 0, 1, 3)};
  EXPECT_TRUE(ValidatePlan(r, {2, 2}).ok());
  EXPECT_FALSE(ValidatePlan(r, {1, 2}).ok());  // total
  EXPECT_FALSE(ValidatePlan(r, {4, 0}).ok());  // bounds
  EXPECT_FALSE(ValidatePlan(r, {4}).ok());     // size
}

TEST(PlannerTest, UnknownPlannerNameIsRefused) {
  EXPECT_FALSE(MakePlanner("fastest").ok());
  for (const char* name : {"uniform", "greedy", "ilp"}) {
    auto p = MakePlanner(name);
    ASSERT_TRUE(p.ok()) << name;
    EXPECT_EQ((*p)->name(), name);
  }
}

// Random small instances: greedy and ILP reach the brute-force optimum, the
// ILP is never worse than greedy, uniform is never better than the optimum.
TEST(PlannerTest, GreedyAndIlpMatchBruteForceOnSmallInstances) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> step(0.05, 2.0), fixed(0.0, 3.0);
  std::uniform_int_distribution<int> nclients(1, 4), lo(0, 2), span(0, 6);
  int ilp_solved = 0;
  for (int trial = 0; trial < 300; ++trial) {
    PlanRequest r;
    const int n = nclients(rng);
    int64_t lo_sum = 0, hi_sum = 0;
    for (int i = 0; i < n; ++i) {
      // Some clients share a speed (ties), some hold no data (0..0).
      const bool empty = rng() % 7 == 0;
      const double s = rng() % 4 == 0 ? 0.5 : step(rng);
      const int64_t l = empty ? 0 : lo(rng);
      const int64_t h = empty ? 0 : l + span(rng);
      r.clients.push_back(Client("c" + std::to_string(i), s, fixed(rng), l, h));
      lo_sum += l;
      hi_sum += h;
    }
    r.total_steps =
        lo_sum + static_cast<int64_t>(rng() % (hi_sum - lo_sum + 1));
    const double best = BruteForceMakespan(r);
    Plan g = MustPlan(GreedyPlanner(), r);
    Plan i = MustPlan(IlpPlanner(5.0), r);
    Plan u = MustPlan(UniformPlanner(), r);
    EXPECT_NEAR(g.makespan, best, 1e-9) << "trial " << trial;
    EXPECT_NEAR(i.makespan, best, 1e-9) << "trial " << trial;
    EXPECT_LE(i.makespan, g.makespan) << "trial " << trial;
    EXPECT_GE(u.makespan, best - 1e-9) << "trial " << trial;
    ilp_solved += i.planner == "ilp";
  }
  // The solver, not the fallback, made (nearly) every ILP plan.
  EXPECT_GT(ilp_solved, 290);
}

TEST(PlannerTest, IlpHandlesALargerRoundQuickly) {
  PlanRequest r;
  r.total_steps = 4000;
  for (int i = 0; i < 16; ++i) {
    r.clients.push_back(Client("c" + std::to_string(i), 0.01 * (1 + i % 5),
                               0.2 * (i % 3), 1, 1000));
  }
  Plan g = MustPlan(GreedyPlanner(), r);
  Plan i = MustPlan(IlpPlanner(), r);
  EXPECT_LE(i.makespan, g.makespan);
  EXPECT_LT(g.makespan, MustPlan(UniformPlanner(), r).makespan);
}

TEST(CapacityEstimatorTest, OneNoisyRoundDoesNotSwingTheEstimate) {
  CapacityEstimator e(3);
  EXPECT_FALSE(e.Get("a").has_value());
  CapacityReading r;
  r.samples_per_second = 1000;
  e.Add("a", r);
  e.Add("a", r);
  r.samples_per_second = 50;  // one bad round
  e.Add("a", r);
  ASSERT_TRUE(e.Get("a").has_value());
  EXPECT_DOUBLE_EQ(e.Get("a")->seconds_per_sample, 1.0 / 1000);
  r.samples_per_second = 1000;
  e.Add("a", r);
  EXPECT_DOUBLE_EQ(e.Get("a")->seconds_per_sample, 1.0 / 1000);
}

TEST(CapacityEstimatorTest, FollowsARealSlowdown) {
  CapacityEstimator e(3);
  CapacityReading r;
  r.samples_per_second = 1000;
  for (int i = 0; i < 3; ++i) e.Add("a", r);
  r.samples_per_second = 250;  // the board slowed down and stays slow
  e.Add("a", r);
  EXPECT_DOUBLE_EQ(e.Get("a")->seconds_per_sample, 1.0 / 1000);
  e.Add("a", r);
  EXPECT_DOUBLE_EQ(e.Get("a")->seconds_per_sample, 1.0 / 250);
  r.samples_per_second = 1000;  // and recovers
  e.Add("a", r);
  e.Add("a", r);
  EXPECT_DOUBLE_EQ(e.Get("a")->seconds_per_sample, 1.0 / 1000);
}

TEST(CapacityEstimatorTest, TransferTimePerByte) {
  CapacityEstimator e;
  CapacityReading r;
  r.samples_per_second = 100;
  r.download_seconds = 2;
  r.download_bytes = 1000;
  r.upload_seconds = 1;
  r.upload_bytes = 500;
  e.Add("a", r);
  CapacityReading junk;  // unusable readings change nothing
  junk.samples_per_second = 0;
  junk.download_seconds = -1;
  junk.download_bytes = 1000;
  e.Add("a", junk);
  auto est = e.Get("a");
  ASSERT_TRUE(est.has_value());
  EXPECT_DOUBLE_EQ(est->download_seconds_per_byte, 0.002);
  EXPECT_DOUBLE_EQ(est->upload_seconds_per_byte, 0.002);
  EXPECT_DOUBLE_EQ(est->transfer_seconds(), 3.0);
  EXPECT_EQ(est->readings, 1);
}

TEST(CapacityEstimatorTest, RestoredHistoriesGiveTheSameEstimates) {
  CapacityEstimator e(3);
  CapacityReading r;
  r.download_seconds = 2;
  r.download_bytes = 1000;
  for (double speed : {100.0, 400.0, 200.0, 50.0}) {
    r.samples_per_second = speed;
    e.Add("a", r);
  }
  CapacityEstimator restored(3);
  restored.Restore(e.histories());
  ASSERT_TRUE(restored.Get("a").has_value());
  EXPECT_DOUBLE_EQ(restored.Get("a")->seconds_per_sample,
                   e.Get("a")->seconds_per_sample);
  EXPECT_EQ(restored.Get("a")->readings, 3);
  EXPECT_DOUBLE_EQ(restored.Get("a")->download_seconds_per_byte, 0.002);
  EXPECT_EQ(restored.Get("a")->download_bytes, 1000u);

  // A smaller window keeps the newest readings; junk (from a damaged or
  // hand-edited checkpoint) is dropped as Add would drop it.
  CapacityHistory junk;
  junk.seconds_per_sample = {-1, 0.01, std::nan(""), 0.02, 0.04};
  CapacityEstimator narrow(2);
  narrow.Restore({{"a", e.histories().at("a")}, {"b", junk}});
  EXPECT_DOUBLE_EQ(narrow.Get("a")->seconds_per_sample,
                   (1.0 / 200 + 1.0 / 50) / 2);
  EXPECT_DOUBLE_EQ(narrow.Get("b")->seconds_per_sample, (0.02 + 0.04) / 2);
  EXPECT_EQ(narrow.Get("b")->readings, 2);
  narrow.Restore({});
  EXPECT_FALSE(narrow.Get("a").has_value());
}

TEST(RoundPlannerTest, PlansFromEstimatesAndKeepsTheTotal) {
  RoundPlanOptions o;
  o.planner = "greedy";
  auto planner = RoundPlanner::Create(o);
  ASSERT_TRUE(planner.ok()) << planner.status();
  v1::TrainConfig config;
  config.set_local_steps(20);
  config.set_batch_size(10);
  std::vector<PlannedClient> clients = {
      {"a", 1000}, {"b", 1000}, {"c", 1000}, {"slow", 1000}, {"empty", 0}};
  // Nothing measured: the job's config stays as it is.
  auto first = (*planner)->PlanRound(clients, config);
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(first->steps.empty());
  CapacityReading r;
  r.samples_per_second = 100;
  for (const char* id : {"a", "b", "c"}) (*planner)->estimator().Add(id, r);
  r.samples_per_second = 25;
  (*planner)->estimator().Add("slow", r);
  auto plan = (*planner)->PlanRound(clients, config);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->request.total_steps, 80);  // 20 x the 4 clients with data
  int64_t sum = 0;
  for (const auto& [id, s] : plan->steps) sum += s;
  EXPECT_EQ(sum, 80);
  EXPECT_EQ(plan->steps.at("empty"), 0);
  EXPECT_LT(plan->steps.at("slow"), plan->steps.at("a"));
  EXPECT_LT(plan->plan.makespan,
            UniformPlanner().MakePlan(plan->request)->makespan);
}

TEST(RoundPlannerTest, EpochModeAndUnmeasuredClients) {
  RoundPlanOptions o;
  o.planner = "ilp";
  o.max_factor = 2;
  auto planner = RoundPlanner::Create(o);
  ASSERT_TRUE(planner.ok());
  v1::TrainConfig config;
  config.set_local_epochs(1);
  config.set_batch_size(10);
  CapacityReading r;
  r.samples_per_second = 100;
  (*planner)->estimator().Add("a", r);
  // "new" has no reading yet: taken to be as fast as the median.
  auto plan = (*planner)->PlanRound({{"a", 95}, {"new", 100}}, config);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->request.total_steps, 20);  // 10 + 10 batches
  EXPECT_EQ(plan->steps.at("a") + plan->steps.at("new"), 20);
  EXPECT_EQ(plan->steps.at("a"), 10);
  for (const auto& c : plan->request.clients) EXPECT_EQ(c.max_steps, 20);
}

TEST(RoundPlannerTest, BadOptionsAreRefused) {
  RoundPlanOptions o;
  o.planner = "nope";
  EXPECT_FALSE(RoundPlanner::Create(o).ok());
  o.planner = "greedy";
  o.max_factor = 0.5;
  EXPECT_FALSE(RoundPlanner::Create(o).ok());
}

}  // namespace
}  // namespace fedberry::server::planner::planner_test
