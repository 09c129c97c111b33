// Data-moves planner unit tests: the cost model by hand-computed numbers,
// request and plan validation, the greedy and ILP planners on cases whose
// answer is known, and both against a brute-force optimum on small
// instances.
#include "server/planner/data_moves.h"

#include <chrono>
#include <cmath>
#include <functional>
#include <iostream>
#include <limits>
#include <random>
#include <string>

#include "gtest/gtest.h"
#include "server/planner/ilp_planner.h"

namespace fedberry::server::planner::data_moves_test {
namespace {

MoveClient Mover(std::string id, uint64_t samples, double sps, double fixed = 0,
                 double up = 0, double down = 0) {
  MoveClient c;
  c.id = std::move(id);
  c.samples = samples;
  c.allows_moves = true;
  c.seconds_per_sample = sps;
  c.fixed_seconds = fixed;
  c.upload_seconds_per_byte = up;
  c.download_seconds_per_byte = down;
  return c;
}

MoveClient Keeper(std::string id, uint64_t samples, double sps,
                  double fixed = 0) {
  MoveClient c = Mover(std::move(id), samples, sps, fixed);
  c.allows_moves = false;
  return c;
}

MoveRequest Request(std::vector<MoveClient> clients, uint64_t unit = 1,
                    int epochs = 1, uint64_t bytes = 1) {
  MoveRequest r;
  r.clients = std::move(clients);
  r.unit = unit;
  r.epochs = epochs;
  r.bytes_per_sample = bytes;
  return r;
}

void ExpectInvalid(const absl::Status& s, const std::string& names) {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(std::string(s.message()).find(names), std::string::npos)
      << "'" << s.message() << "' does not name " << names;
}

// Checks what every plan must satisfy and returns it.
MovePlan Checked(const absl::StatusOr<MovePlan>& plan, const MoveRequest& r) {
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return {};
  EXPECT_TRUE(ValidateMovePlan(r, plan->samples).ok())
      << plan->planner << ": " << ValidateMovePlan(r, plan->samples);
  EXPECT_DOUBLE_EQ(plan->makespan, MoveMakespan(r, plan->samples));
  // The moves are exactly the pairing of the counts, and they add up.
  const std::vector<DataMove> pairs = PairMoves(r, plan->samples);
  EXPECT_EQ(plan->moves.size(), pairs.size());
  std::vector<uint64_t> sent(r.clients.size()), got(r.clients.size());
  for (const DataMove& m : plan->moves) {
    EXPECT_LT(m.from, r.clients.size());
    EXPECT_LT(m.to, r.clients.size());
    if (m.from >= r.clients.size() || m.to >= r.clients.size()) continue;
    EXPECT_NE(m.from, m.to);
    EXPECT_GT(m.samples, 0u);
    EXPECT_EQ(m.samples % r.unit, 0u);
    EXPECT_TRUE(r.clients[m.from].allows_moves) << r.clients[m.from].id;
    EXPECT_TRUE(r.clients[m.to].allows_moves) << r.clients[m.to].id;
    sent[m.from] += m.samples;
    got[m.to] += m.samples;
  }
  for (size_t i = 0; i < r.clients.size() && i < plan->samples.size(); ++i) {
    EXPECT_EQ(r.clients[i].samples - sent[i] + got[i], plan->samples[i])
        << r.clients[i].id;
    EXPECT_TRUE(sent[i] == 0 || got[i] == 0) << r.clients[i].id;
  }
  return *plan;
}

// The smallest makespan over every plan: each opted-in client's count runs
// over held +- whole units, keeping at least min(held, unit), the others
// keep theirs, the total is kept.
double BruteForceMakespan(const MoveRequest& r) {
  uint64_t total = 0;
  for (const MoveClient& c : r.clients) total += c.samples;
  double best = std::numeric_limits<double>::infinity();
  std::vector<uint64_t> x(r.clients.size());
  std::function<void(size_t, uint64_t)> go = [&](size_t i, uint64_t left) {
    if (i == r.clients.size()) {
      if (left == 0) best = std::min(best, MoveMakespan(r, x));
      return;
    }
    const MoveClient& c = r.clients[i];
    if (!c.allows_moves) {
      if (c.samples > left) return;
      x[i] = c.samples;
      go(i + 1, left - c.samples);
      return;
    }
    uint64_t least = c.samples % r.unit;
    if (c.samples >= r.unit) least += r.unit;  // a sender keeps a unit
    for (uint64_t v = least; v <= left; v += r.unit) {
      x[i] = v;
      go(i + 1, left - v);
    }
  };
  go(0, total);
  return best;
}

TEST(DataMovesTest, GlpkIsBuiltIn) {
  // The ILP must really solve, not silently run greedy.
  EXPECT_TRUE(IlpPlanner::SolverAvailable());
}

TEST(DataMovesTest, CostModelByHand) {
  // epochs 2, 10 bytes per sample.
  MoveRequest r = Request({Mover("a", 100, 0.1, 1, 0.01, 0.02),
                           Mover("b", 50, 0.05, 2, 0.001, 0.004),
                           Mover("c", 0, 1, 3), Mover("d", 20, 0.2, 0.5, 0.05)},
                          /*unit=*/1, /*epochs=*/2, /*bytes=*/10);
  // Nobody moves: fixed + 2 * x * sps; c takes no part.
  std::vector<uint64_t> held = {100, 50, 0, 20};
  EXPECT_NEAR(MoveFinishSeconds(r, held, 0), 1 + 20, 1e-12);
  EXPECT_NEAR(MoveFinishSeconds(r, held, 1), 2 + 5, 1e-12);
  EXPECT_EQ(MoveFinishSeconds(r, held, 2), 0);
  EXPECT_NEAR(MoveFinishSeconds(r, held, 3), 0.5 + 8, 1e-12);
  EXPECT_NEAR(MoveMakespan(r, held), 21, 1e-12);
  EXPECT_EQ(MoveFinishSeconds(r, held, 4), 0);  // no such client

  // a sends 20 (20*10*0.01 = 2 s up), d sends 10 (10*10*0.05 = 5 s up), so
  // U = 5; b receives 30 (30*10*0.004 = 1.2 s down) after waiting U.
  std::vector<uint64_t> x = {80, 80, 0, 10};
  EXPECT_NEAR(MoveFinishSeconds(r, x, 0), 1 + 2 + 2 * 80 * 0.1, 1e-12);
  EXPECT_NEAR(MoveFinishSeconds(r, x, 1), 2 + 5 + 1.2 + 2 * 80 * 0.05, 1e-12);
  EXPECT_EQ(MoveFinishSeconds(r, x, 2), 0);
  EXPECT_NEAR(MoveFinishSeconds(r, x, 3), 0.5 + 5 + 2 * 10 * 0.2, 1e-12);
  EXPECT_NEAR(MoveMakespan(r, x), 19, 1e-12);

  // d sends everything: it still pays fixed + its 10 s upload, and b now
  // waits 10 s for it.
  x = {80, 90, 0, 0};
  EXPECT_NEAR(MoveFinishSeconds(r, x, 3), 0.5 + 10, 1e-12);
  EXPECT_NEAR(MoveFinishSeconds(r, x, 1), 2 + 10 + 1.6 + 2 * 90 * 0.05, 1e-12);
  EXPECT_NEAR(MoveMakespan(r, x), 22.6, 1e-12);

  // c held nothing and receives 10 (free download): fixed + U + training.
  x = {100, 50, 10, 10};
  EXPECT_NEAR(MoveFinishSeconds(r, x, 2), 3 + 5 + 2 * 10 * 1, 1e-12);
  EXPECT_NEAR(MoveMakespan(r, x), 28, 1e-12);
  EXPECT_EQ(MoveMakespan(Request({}), {}), 0);
}

TEST(DataMovesTest, InvalidRequestsNameTheProblem) {
  const MoveRequest good = Request({Mover("a", 10, 1), Mover("b", 10, 1)});
  EXPECT_TRUE(ValidateMoveRequest(good).ok());
  MoveRequest r = good;
  r.epochs = 0;
  ExpectInvalid(ValidateMoveRequest(r), "epochs");
  ExpectInvalid(GreedyMoves(r).status(), "epochs");
  ExpectInvalid(IlpMoves(r).status(), "epochs");
  r = good;
  r.unit = 0;
  ExpectInvalid(ValidateMoveRequest(r), "unit");
  r = good;
  r.bytes_per_sample = 0;
  ExpectInvalid(ValidateMoveRequest(r), "bytes_per_sample");
  r = good;
  r.clients[1].seconds_per_sample = -1;
  ExpectInvalid(ValidateMoveRequest(r), "client b: seconds_per_sample is -1");
  ExpectInvalid(GreedyMoves(r).status(), "seconds_per_sample");
  r = good;
  r.clients[0].fixed_seconds = std::nan("");
  ExpectInvalid(ValidateMoveRequest(r), "fixed_seconds");
  r = good;
  r.clients[0].upload_seconds_per_byte =
      std::numeric_limits<double>::infinity();
  ExpectInvalid(ValidateMoveRequest(r), "upload_seconds_per_byte");
  r = good;
  r.clients[0].download_seconds_per_byte = -0.5;
  ExpectInvalid(ValidateMoveRequest(r), "download_seconds_per_byte");
  r = good;
  r.clients[0].samples = uint64_t{1} << 53;
  ExpectInvalid(ValidateMoveRequest(r), "2^53");
}

TEST(DataMovesTest, ValidateMovePlanCatchesBadPlans) {
  MoveRequest r =
      Request({Mover("a", 70, 1), Mover("b", 10, 1), Keeper("k", 5, 1)},
              /*unit=*/32);
  EXPECT_TRUE(ValidateMovePlan(r, {70, 10, 5}).ok());
  EXPECT_TRUE(ValidateMovePlan(r, {38, 42, 5}).ok());
  // a may send 32 but not 64: a sender keeps at least one unit to train.
  ExpectInvalid(ValidateMovePlan(r, {6, 74, 5}),
                "client a is planned 6 of its 70 samples");
  ExpectInvalid(ValidateMovePlan(r, {70, 10}), "2 entries for 3 clients");
  ExpectInvalid(ValidateMovePlan(r, {38, 10, 5}), "sums to 53");
  ExpectInvalid(ValidateMovePlan(r, {70, 9, 5}), "client b changes by 1");
  ExpectInvalid(ValidateMovePlan(r, {38, 10, 37}),
                "client k does not allow moves");
  ExpectInvalid(ValidateMovePlan(r, {37, 43, 5}), "not a multiple of the unit");
  // A client's whole count moves only in whole units: a keeps 70 % 32 = 6.
  ExpectInvalid(ValidateMovePlan(r, {0, 80, 5}), "client a changes by 70");
  ExpectInvalid(ValidateMovePlan(r, {70 + (uint64_t{1} << 63), 10, 5}),
                "more than the 85 samples");
  r.unit = 0;
  ExpectInvalid(ValidateMovePlan(r, {70, 10, 5}), "unit");
}

TEST(DataMovesTest, AVerySlowSenderKeepsAUnitToTrain) {
  // 20x slower than the others, with free transfers: moving all of its 640
  // samples would be fastest, but it would then have nothing to train and
  // no update to send (the round would wait for it).
  const MoveRequest r =
      Request({Mover("slow", 640, 0.02), Mover("f1", 640, 0.001),
               Mover("f2", 640, 0.001)},
              /*unit=*/32);
  for (const MovePlan& p :
       {Checked(GreedyMoves(r), r), Checked(IlpMoves(r), r)}) {
    SCOPED_TRACE(p.planner);
    EXPECT_EQ(p.samples[0], 32u);
    EXPECT_EQ(p.samples[1] + p.samples[2], 3u * 640 - 32);
  }
}

TEST(DataMovesTest, PairMovesWalksSendersAndReceiversInOrder) {
  MoveRequest r =
      Request({Mover("a", 10, 1), Mover("b", 10, 1), Mover("c", 10, 1),
               Mover("d", 10, 1), Mover("e", 10, 1)});
  // Senders a (8) and d (5); receivers b (3) and e (10).
  const std::vector<DataMove> moves = PairMoves(r, {2, 13, 10, 5, 20});
  ASSERT_EQ(moves.size(), 3u);
  EXPECT_EQ(moves[0].from, 0u);
  EXPECT_EQ(moves[0].to, 1u);
  EXPECT_EQ(moves[0].samples, 3u);
  EXPECT_EQ(moves[1].from, 0u);
  EXPECT_EQ(moves[1].to, 4u);
  EXPECT_EQ(moves[1].samples, 5u);
  EXPECT_EQ(moves[2].from, 3u);
  EXPECT_EQ(moves[2].to, 4u);
  EXPECT_EQ(moves[2].samples, 5u);
  EXPECT_TRUE(PairMoves(r, {10, 10, 10, 10, 10}).empty());
}

TEST(DataMovesTest, NoMovesKeepsEverything) {
  MoveRequest r = Request({Mover("a", 40, 1), Keeper("b", 10, 2, 1)});
  MovePlan p = NoMoves(r);
  EXPECT_EQ(p.samples, (std::vector<uint64_t>{40, 10}));
  EXPECT_TRUE(p.moves.empty());
  EXPECT_DOUBLE_EQ(p.makespan, 40);
  EXPECT_EQ(p.planner, "none");
}

TEST(DataMovesTest, EqualSpeedsMoveNothing) {
  // Even with free bandwidth, any unit moved makes its receiver the last.
  MoveRequest r = Request(
      {Mover("a", 40, 0.5, 1), Mover("b", 40, 0.5, 1), Mover("c", 40, 0.5, 1)},
      /*unit=*/4);
  for (const MovePlan& p :
       {Checked(GreedyMoves(r), r), Checked(IlpMoves(r), r)}) {
    EXPECT_TRUE(p.moves.empty()) << p.planner;
    EXPECT_EQ(p.samples, (std::vector<uint64_t>{40, 40, 40})) << p.planner;
    EXPECT_DOUBLE_EQ(p.makespan, 21) << p.planner;
  }
}

TEST(DataMovesTest, SlowClientSendsToFastOne) {
  // Free bandwidth: slow trains x0 s, fast x1/4 s; x0 = 16, x1 = 64 is
  // optimal and a change of 24 is whole units of 4.
  MoveRequest r = Request({Mover("slow", 40, 1), Mover("fast", 40, 0.25)},
                          /*unit=*/4);
  EXPECT_DOUBLE_EQ(NoMoves(r).makespan, 40);
  for (const MovePlan& p :
       {Checked(GreedyMoves(r), r), Checked(IlpMoves(r), r)}) {
    EXPECT_EQ(p.samples, (std::vector<uint64_t>{16, 64})) << p.planner;
    EXPECT_DOUBLE_EQ(p.makespan, 16) << p.planner;
    ASSERT_EQ(p.moves.size(), 1u) << p.planner;
    EXPECT_EQ(p.moves[0].from, 0u);
    EXPECT_EQ(p.moves[0].to, 1u);
    EXPECT_EQ(p.moves[0].samples, 24u);
  }
  EXPECT_EQ(Checked(GreedyMoves(r), r).planner, "greedy");
  EXPECT_EQ(Checked(IlpMoves(r), r).planner, "ilp");

  // With transfer costs the move is smaller but still pays: 8 bytes per
  // sample, slow uploads at 0.05 s/byte (0.4 s/sample), fast downloads at
  // 0.025 s/byte (0.2 s/sample).
  r.bytes_per_sample = 8;
  r.clients[0].upload_seconds_per_byte = 0.05;
  r.clients[1].download_seconds_per_byte = 0.025;
  const double best = BruteForceMakespan(r);
  EXPECT_LT(best, 40);
  MovePlan g = Checked(GreedyMoves(r), r);
  MovePlan i = Checked(IlpMoves(r), r);
  EXPECT_LT(g.makespan, 40);
  EXPECT_NEAR(i.makespan, best, 1e-9);
  EXPECT_LE(i.makespan, g.makespan);
}

TEST(DataMovesTest, TwoEquallySlowClientsBothShedWork) {
  // a and b tie for last: moving from one alone does not shorten the round,
  // but both together do. Optimum: 20 / 20 / 80 (0.25 s each) = 20 s.
  MoveRequest r =
      Request({Mover("a", 40, 1), Mover("b", 40, 1), Mover("c", 40, 0.25)}, 4);
  for (const MovePlan& p :
       {Checked(GreedyMoves(r), r), Checked(IlpMoves(r), r)}) {
    EXPECT_EQ(p.samples, (std::vector<uint64_t>{20, 20, 80})) << p.planner;
    EXPECT_DOUBLE_EQ(p.makespan, 20) << p.planner;
  }
}

TEST(DataMovesTest, ClientsThatDoNotAllowMovesKeepTheirData) {
  // The fastest client has not opted in: it is never paired, though it
  // would be the best receiver; the slow keeper cannot shed its data.
  MoveRequest r =
      Request({Keeper("fast-keeper", 40, 0.01), Mover("slow", 40, 1),
               Mover("fast", 40, 0.25), Keeper("slow-keeper", 10, 1)},
              4);
  for (const MovePlan& p :
       {Checked(GreedyMoves(r), r), Checked(IlpMoves(r), r)}) {
    EXPECT_EQ(p.samples[0], 40u) << p.planner;
    EXPECT_EQ(p.samples[3], 10u) << p.planner;
    EXPECT_EQ(p.samples, (std::vector<uint64_t>{40, 16, 64, 10})) << p.planner;
    for (const DataMove& m : p.moves) {
      EXPECT_NE(m.from, 0u);
      EXPECT_NE(m.to, 0u);
      EXPECT_NE(m.from, 3u);
      EXPECT_NE(m.to, 3u);
    }
  }
  // A keeper that sets the makespan: nothing else is worth moving (an
  // unloaded a would not end the round any sooner).
  r = Request({Mover("a", 40, 1), Keeper("b", 40, 1), Mover("c", 40, 0.25)}, 4);
  for (const MovePlan& p :
       {Checked(GreedyMoves(r), r), Checked(IlpMoves(r), r)}) {
    EXPECT_TRUE(p.moves.empty()) << p.planner;
    EXPECT_DOUBLE_EQ(p.makespan, 40) << p.planner;
  }
}

TEST(DataMovesTest, ClientWithNoData) {
  // An opted-in client with no data can receive (and then pays its fixed
  // cost); one that has not opted in stays out of the round.
  MoveRequest r = Request({Mover("slow", 40, 1), Mover("empty-fast", 0, 0.25),
                           Keeper("empty-keeper", 0, 0.01, 5)},
                          4);
  EXPECT_DOUBLE_EQ(NoMoves(r).makespan, 40);
  for (const MovePlan& p :
       {Checked(GreedyMoves(r), r), Checked(IlpMoves(r), r)}) {
    EXPECT_EQ(p.samples, (std::vector<uint64_t>{8, 32, 0})) << p.planner;
    EXPECT_DOUBLE_EQ(p.makespan, 8) << p.planner;
    EXPECT_EQ(MoveFinishSeconds(r, p.samples, 2), 0) << p.planner;
  }
  // The empty client's fixed cost (30 s) leaves less worth giving it:
  // slow keeps x, empty gets 40 - x: x = 30 + (40 - x) / 4 gives x = 32.
  r.clients[1].fixed_seconds = 30;
  for (const MovePlan& p :
       {Checked(GreedyMoves(r), r), Checked(IlpMoves(r), r)}) {
    EXPECT_EQ(p.samples, (std::vector<uint64_t>{32, 8, 0})) << p.planner;
    EXPECT_DOUBLE_EQ(p.makespan, 32) << p.planner;
  }
  // ... and at 40 s it is not worth it at all.
  r.clients[1].fixed_seconds = 40;
  for (const MovePlan& p :
       {Checked(GreedyMoves(r), r), Checked(IlpMoves(r), r)}) {
    EXPECT_TRUE(p.moves.empty()) << p.planner;
  }
}

TEST(DataMovesTest, OneClientAndNoClients) {
  MoveRequest r = Request({Mover("only", 50, 0.5, 2)}, 5, 2);
  for (const MovePlan& p :
       {Checked(GreedyMoves(r), r), Checked(IlpMoves(r), r)}) {
    EXPECT_EQ(p.samples, std::vector<uint64_t>{50}) << p.planner;
    EXPECT_TRUE(p.moves.empty());
    EXPECT_DOUBLE_EQ(p.makespan, 52);
  }
  MoveRequest none = Request({});
  for (const MovePlan& p :
       {Checked(GreedyMoves(none), none), Checked(IlpMoves(none), none)}) {
    EXPECT_TRUE(p.samples.empty());
    EXPECT_EQ(p.makespan, 0);
  }
}

TEST(DataMovesTest, ExpensiveBandwidthIsNotWorthIt) {
  // One unit of 4 samples takes 4 * 1000 bytes * 0.01 s = 40 s to upload,
  // as long as the slow client's whole round.
  MoveRequest r =
      Request({Mover("slow", 40, 1, 0, 0.01, 0.001), Mover("fast", 40, 0.25)},
              4, 1, 1000);
  MovePlan g = Checked(GreedyMoves(r), r);
  EXPECT_TRUE(g.moves.empty());
  EXPECT_EQ(g.planner, "greedy");
  EXPECT_EQ(g.samples, (std::vector<uint64_t>{40, 40}));
  EXPECT_DOUBLE_EQ(g.makespan, 40);
  MovePlan i = Checked(IlpMoves(r), r);
  EXPECT_TRUE(i.moves.empty());
  EXPECT_DOUBLE_EQ(i.makespan, 40);
  EXPECT_DOUBLE_EQ(BruteForceMakespan(r), 40);
}

TEST(DataMovesTest, ReceiversWaitForTheSlowestSender) {
  // Two senders; a's upload is slow, so unloading a costs both receivers
  // time; b is the better sender though a is slower to train.
  MoveRequest r = Request({Mover("a", 40, 1, 0, 0.2), Mover("b", 40, 0.9),
                           Mover("c", 40, 0.1), Mover("d", 40, 0.1)},
                          4);
  const double best = BruteForceMakespan(r);
  MovePlan i = Checked(IlpMoves(r), r);
  MovePlan g = Checked(GreedyMoves(r), r);
  EXPECT_NEAR(i.makespan, best, 1e-9);
  EXPECT_LE(i.makespan, g.makespan);
  EXPECT_LT(g.makespan, NoMoves(r).makespan);
}

// Random small instances: the ILP reaches the brute-force optimum, greedy is
// never better than it (it is a heuristic here: the wait for the slowest
// sender couples the clients), the ILP is never worse than greedy, and
// neither is worse than moving nothing.
TEST(DataMovesTest, GreedyAndIlpAgainstBruteForce) {
  int trials = 0, greedy_optimal = 0, ilp_solved = 0;
  double worst_greedy_ratio = 1;
  for (unsigned seed : {1u, 2u, 3u, 4u, 5u}) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> sps(0.05, 2.0), fixed(0.0, 3.0),
        wire(0.0, 0.2);
    std::uniform_int_distribution<int> nclients(2, 4), held(0, 12), unit(1, 3),
        epochs(1, 3);
    for (int trial = 0; trial < 60; ++trial, ++trials) {
      MoveRequest r;
      r.unit = unit(rng);
      r.epochs = epochs(rng);
      r.bytes_per_sample = 1 + rng() % 3;
      const int n = nclients(rng);
      for (int i = 0; i < n; ++i) {
        // Some clients share a speed, some hold nothing, some keep their
        // data, some have free bandwidth.
        MoveClient c =
            Mover("c" + std::to_string(i), rng() % 6 == 0 ? 0 : held(rng),
                  rng() % 4 == 0 ? 0.5 : sps(rng), fixed(rng));
        c.allows_moves = rng() % 5 != 0;
        if (rng() % 3 != 0) {
          c.upload_seconds_per_byte = wire(rng);
          c.download_seconds_per_byte = wire(rng);
        }
        r.clients.push_back(c);
      }
      const double best = BruteForceMakespan(r);
      const double tol = 1e-9 * std::max(1.0, best);
      MovePlan none = NoMoves(r);
      MovePlan g = Checked(GreedyMoves(r), r);
      MovePlan i = Checked(IlpMoves(r, 5.0), r);
      const std::string where =
          "seed " + std::to_string(seed) + " trial " + std::to_string(trial);
      EXPECT_NEAR(i.makespan, best, tol) << where;
      EXPECT_GE(g.makespan, best - tol) << where;
      EXPECT_LE(i.makespan, g.makespan) << where;
      EXPECT_LE(g.makespan, none.makespan) << where;
      greedy_optimal += g.makespan <= best + tol;
      if (best > 0)
        worst_greedy_ratio = std::max(worst_greedy_ratio, g.makespan / best);
      ilp_solved += i.note.find("fell back") == std::string::npos;
    }
  }
  // The solver, not the fallback, made every ILP plan.
  EXPECT_EQ(ilp_solved, trials);
  std::cout << "[ figures  ] greedy optimal in " << greedy_optimal << " of "
            << trials << " instances; worst greedy / optimum "
            << worst_greedy_ratio << "\n";
}

TEST(DataMovesTest, SixtyThousandSamplesOnEightClients) {
  // MNIST-sized: 60000 samples of 784 floats, batch (unit) 32, 2 epochs,
  // boards from 1x to 8x slower, 3-10 MB/s links, one fast client not
  // opted in.
  MoveRequest r;
  r.unit = 32;
  r.epochs = 2;
  r.bytes_per_sample = 784 * 4;
  for (int i = 0; i < 8; ++i) {
    MoveClient c = Mover("c" + std::to_string(i), 7500, 0.0005 * (1 + i), 2.0,
                         1e-7 * (1 + i % 3), 1e-7);
    c.allows_moves = i != 1;
    r.clients.push_back(c);
  }
  const auto t0 = std::chrono::steady_clock::now();
  MovePlan g = Checked(GreedyMoves(r), r);
  const auto t1 = std::chrono::steady_clock::now();
  MovePlan i = Checked(IlpMoves(r), r);
  const auto t2 = std::chrono::steady_clock::now();
  const MovePlan none = NoMoves(r);
  EXPECT_LT(g.makespan, none.makespan);
  EXPECT_LE(i.makespan, g.makespan);
  EXPECT_EQ(g.samples[1], 7500u);
  EXPECT_EQ(i.samples[1], 7500u);
  auto ms = [](auto d) {
    return std::chrono::duration<double, std::milli>(d).count();
  };
  std::cout << "[ figures  ] 60000 samples, 8 clients, unit 32: none "
            << none.makespan << " s; greedy " << g.makespan << " s ("
            << g.moves.size() << " moves) in " << ms(t1 - t0) << " ms; "
            << i.planner << " " << i.makespan << " s (" << i.moves.size()
            << " moves) in " << ms(t2 - t1) << " ms (includes greedy)"
            << (i.note.empty() ? "" : "; note: ") << i.note << "\n";
}

}  // namespace
}  // namespace fedberry::server::planner::data_moves_test
