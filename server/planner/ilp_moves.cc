// The data-move planner on GLPK (IlpMoves in data_moves.h): the
// mixed-integer program the header describes, bounded by greedy's makespan
// and falling back to greedy's plan, which it never makes worse.
// Thread-safety: pure functions (each call builds its own GLPK problem).
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/planner/data_moves.h"
#include "server/planner/move_model.h"

#ifdef FEDBERRY_HAVE_GLPK
#include "server/planner/glpk_mip.h"
#endif

namespace fedberry::server::planner {
#ifdef FEDBERRY_HAVE_GLPK
namespace {

struct Solved {
  std::vector<uint64_t> samples;
  bool timed_out = false;  // GLPK's best when its budget ran out
};

// H_i: most units client i can send; K_i: most it can receive (what all
// other opted-in clients can send); wait_max: the largest U can be.
struct MoveLimits {
  std::vector<double> most_out, most_in;
  double wait_max = 0;
};

MoveLimits Limits(const MoveRequest& r) {
  const size_t n = r.clients.size();
  const double unit = static_cast<double>(r.unit);
  const double bytes = static_cast<double>(r.bytes_per_sample);
  MoveLimits lim{std::vector<double>(n, 0), std::vector<double>(n, 0), 0};
  double all_out = 0;
  for (size_t i = 0; i < n; ++i) {
    const MoveClient& c = r.clients[i];
    if (!c.allows_moves) continue;
    lim.most_out[i] =
        static_cast<double>((c.samples - KeepAtLeast(r, i)) / r.unit);
    all_out += lim.most_out[i];
    lim.wait_max = std::max(lim.wait_max, lim.most_out[i] * unit * bytes *
                                              c.upload_seconds_per_byte);
  }
  for (size_t i = 0; i < n; ++i) {
    if (r.clients[i].allows_moves) lim.most_in[i] = all_out - lim.most_out[i];
  }
  return lim;
}

// Columns: 1 = T, 2 = U, then per client units out, units in, receiver.
constexpr int kT = 1, kU = 2;
int OutCol(int i) { return 3 + 3 * i; }
int InCol(int i) { return 4 + 3 * i; }
int RecvCol(int i) { return 5 + 3 * i; }

// Bounds column `col` to [0, hi]; to 0 when it can take nothing.
void BoundColumn(glp_prob* p, int col, double hi) {
  if (hi > 0) {
    glp_set_col_bnds(p, col, GLP_DB, 0.0, hi);
  } else {
    glp_set_col_bnds(p, col, GLP_FX, 0.0, 0.0);
  }
}

void AddColumns(glp_prob* p, const MoveLimits& lim, double greedy_makespan) {
  const int n = static_cast<int>(lim.most_out.size());
  glp_add_cols(p, 2 + 3 * n);
  // No plan slower than greedy's is of use: the bound prunes the search.
  glp_set_col_bnds(p, kT, GLP_DB, 0.0,
                   greedy_makespan + 2 * MakespanTolerance(greedy_makespan));
  glp_set_obj_coef(p, kT, 1.0);
  BoundColumn(p, kU, lim.wait_max);
  for (int i = 0; i < n; ++i) {
    glp_set_col_kind(p, OutCol(i), GLP_IV);
    glp_set_col_kind(p, InCol(i), GLP_IV);
    glp_set_col_kind(p, RecvCol(i), GLP_BV);
    BoundColumn(p, OutCol(i), lim.most_out[i]);
    BoundColumn(p, InCol(i), lim.most_in[i]);
    if (lim.most_in[i] == 0) glp_set_col_bnds(p, RecvCol(i), GLP_FX, 0.0, 0.0);
  }
}

// The program's rows, and its matrix as GLPK loads it (triplets counted
// from 1).
class Rows {
 public:
  explicit Rows(glp_prob* p) : p_(p) {}
  int Add(int type, double lo, double hi) {
    const int row = glp_add_rows(p_, 1);
    glp_set_row_bnds(p_, row, type, lo, hi);
    return row;
  }
  void Put(int row, int col, double v) {
    if (v == 0) return;
    ia_.push_back(row);
    ja_.push_back(col);
    ar_.push_back(v);
  }
  void Load() {
    glp_load_matrix(p_, static_cast<int>(ia_.size()) - 1, ia_.data(),
                    ja_.data(), ar_.data());
  }

 private:
  glp_prob* p_;
  std::vector<int> ia_ = {0}, ja_ = {0};
  std::vector<double> ar_ = {0};
};

// Client i's figures as its rows use them: the samples it holds, seconds
// to train one sample (E*sps_i), to upload one unit (unit*B*upload_i) and
// to download one (unit*B*download_i).
struct UnitCosts {
  double unit, held, train, upload, download;
};

UnitCosts CostsOf(const MoveRequest& r, const MoveClient& c) {
  const double unit = static_cast<double>(r.unit);
  const double bytes = static_cast<double>(r.bytes_per_sample);
  return {unit, static_cast<double>(c.samples),
          static_cast<double>(r.epochs) * c.seconds_per_sample,
          unit * bytes * c.upload_seconds_per_byte,
          unit * bytes * c.download_seconds_per_byte};
}

// Client i as a possible sender (H_i > 0).
void AddSenderRows(int i, double most_out, const UnitCosts& k, Rows& rows) {
  // A receiver sends nothing: out_i + H_i r_i <= H_i.
  const int row = rows.Add(GLP_UP, 0.0, most_out);
  rows.Put(row, OutCol(i), 1.0);
  rows.Put(row, RecvCol(i), most_out);
  // U >= unit * B * upload_i * out_i.
  const int wait = rows.Add(GLP_LO, 0.0, 0.0);
  rows.Put(wait, kU, 1.0);
  rows.Put(wait, OutCol(i), -k.upload);
}

// Client i as a possible receiver (K_i > 0).
void AddReceiverRows(int i, const MoveClient& c, const MoveLimits& lim,
                     const UnitCosts& k, Rows& rows) {
  // Only a receiver receives: in_i - K_i r_i <= 0.
  const int row = rows.Add(GLP_UP, 0.0, 0.0);
  rows.Put(row, InCol(i), 1.0);
  rows.Put(row, RecvCol(i), -lim.most_in[i]);
  // T >= fixed_i + U + unit*B*download_i*in_i + E*sps_i*x_i - M_i(1-r_i)
  // with M_i = fixed_i + wait_max + E*sps_i*held_i, which makes the row
  // T >= U - wait_max (always true) for a non-receiver (in_i = 0).
  // out_i is 0 for a receiver, so x_i = held_i + unit*in_i here.
  const double big = c.fixed_seconds + lim.wait_max + k.train * k.held;
  const int finish = rows.Add(GLP_LO, -lim.wait_max, 0.0);
  rows.Put(finish, kT, 1.0);
  rows.Put(finish, kU, -1.0);
  rows.Put(finish, InCol(i), -(k.download + k.train * k.unit));
  rows.Put(finish, RecvCol(i), -big);
}

// T >= fixed_i + unit*B*upload_i*out_i + E*sps_i*x_i: a non-receiver's
// time, and below a receiver's (out_i = 0, U >= 0). A client that held
// nothing pays fixed_i only if it receives (fixed_i r_i).
void AddFinishRow(int i, const MoveClient& c, const UnitCosts& k, Rows& rows) {
  const int finish = rows.Add(
      GLP_LO, (c.samples > 0 ? c.fixed_seconds : 0) + k.train * k.held, 0.0);
  rows.Put(finish, kT, 1.0);
  rows.Put(finish, OutCol(i), -(k.upload - k.train * k.unit));
  rows.Put(finish, InCol(i), -k.train * k.unit);
  if (c.samples == 0) rows.Put(finish, RecvCol(i), -c.fixed_seconds);
}

void AddRows(const MoveRequest& r, const MoveLimits& lim, Rows& rows) {
  // Units are conserved: sum_i (in_i - out_i) = 0.
  const int balance = rows.Add(GLP_FX, 0.0, 0.0);
  for (int i = 0; i < static_cast<int>(r.clients.size()); ++i) {
    const MoveClient& c = r.clients[i];
    const UnitCosts k = CostsOf(r, c);
    rows.Put(balance, InCol(i), 1.0);
    rows.Put(balance, OutCol(i), -1.0);
    if (lim.most_out[i] > 0) AddSenderRows(i, lim.most_out[i], k, rows);
    if (lim.most_in[i] > 0) AddReceiverRows(i, c, lim, k, rows);
    if (c.samples == 0 && lim.most_in[i] == 0) continue;  // takes no part
    AddFinishRow(i, c, k, rows);
  }
}

// Why GLPK (which returned `ret`) has no plan to read.
absl::Status NoSolution(int ret, int status, double time_limit_seconds) {
  if (ret == GLP_ETMLIM) {
    return absl::UnavailableError(
        absl::StrCat("GLPK found no plan as short as greedy's within its ",
                     time_limit_seconds, " s budget"));
  }
  // Greedy's plan meets the bound on T, so only rounding gets here.
  if (ret == GLP_ENOPFS || status == GLP_NOFEAS) {
    return absl::UnavailableError(
        "GLPK found no plan as short as greedy's (rounding)");
  }
  return absl::UnavailableError(
      absl::StrCat("GLPK returned code ", ret, ", status ", status));
}

// The sample counts of GLPK's solution, checked to be a plan.
absl::StatusOr<std::vector<uint64_t>> Counts(glp_prob* p, const MoveRequest& r,
                                             const MoveLimits& lim) {
  std::vector<uint64_t> samples(r.clients.size());
  for (int i = 0; i < static_cast<int>(r.clients.size()); ++i) {
    const MoveClient& c = r.clients[i];
    const double out = std::round(glp_mip_col_val(p, OutCol(i)));
    const double in = std::round(glp_mip_col_val(p, InCol(i)));
    if (out < 0 || out > lim.most_out[i] || in < 0 || in > lim.most_in[i]) {
      return absl::InternalError(absl::StrCat("GLPK's solution moves ", out,
                                              " units out of and ", in,
                                              " units into client ", c.id));
    }
    samples[i] = c.samples - static_cast<uint64_t>(out) * r.unit +
                 static_cast<uint64_t>(in) * r.unit;
  }
  if (absl::Status s = ValidateMovePlan(r, samples); !s.ok()) {
    return absl::InternalError(
        absl::StrCat("GLPK's solution is not a plan: ", s.message()));
  }
  return samples;
}

// Solves the program in the header; the counts, or an error saying why
// there are none.
absl::StatusOr<Solved> Solve(const MoveRequest& r, double time_limit_seconds,
                             double greedy_makespan) {
  const MoveLimits lim = Limits(r);
  GlpkProblem lp(glp_create_prob());
  glp_prob* p = lp.get();
  glp_set_obj_dir(p, GLP_MIN);
  AddColumns(p, lim, greedy_makespan);
  Rows rows(p);
  AddRows(r, lim, rows);
  rows.Load();
  const int ret = SolveMip(p, time_limit_seconds);
  const int status = glp_mip_status(p);
  if (status != GLP_OPT && status != GLP_FEAS) {
    return NoSolution(ret, status, time_limit_seconds);
  }
  absl::StatusOr<std::vector<uint64_t>> samples = Counts(p, r, lim);
  if (!samples.ok()) return samples.status();
  return Solved{*std::move(samples), status != GLP_OPT};
}

}  // namespace
#endif

absl::StatusOr<MovePlan> IlpMoves(const MoveRequest& r,
                                  double time_limit_seconds) {
  // The greedy plan is both the fallback and the bar the ILP must clear.
  absl::StatusOr<MovePlan> greedy = GreedyMoves(r);
  if (!greedy.ok()) return greedy.status();
  if (r.clients.empty()) {
    greedy->planner = "ilp";
    return greedy;
  }
#ifdef FEDBERRY_HAVE_GLPK
  absl::StatusOr<Solved> solved =
      Solve(r, time_limit_seconds, greedy->makespan);
  if (!solved.ok()) {
    greedy->note =
        absl::StrCat("ilp fell back to greedy: ", solved.status().message());
    return greedy;
  }
  std::vector<uint64_t> x = std::move(solved->samples);
  MoveBackUnneeded(r, x);
  MovePlan plan = MakeMovePlan(r, std::move(x), "ilp");
  if (solved->timed_out) {
    plan.note = absl::StrCat("GLPK ran out of its ", time_limit_seconds,
                             " s budget; this is the best plan it found");
  }
  // GLPK works in floating point; never hand out a plan worse than greedy's.
  if (plan.makespan > greedy->makespan) {
    greedy->note = absl::StrCat("ilp kept the greedy plan: GLPK's makespan ",
                                plan.makespan, " s exceeds greedy's ",
                                greedy->makespan, " s");
    return greedy;
  }
  // As short a round either way: move less data.
  if (plan.makespan >= greedy->makespan - MakespanTolerance(greedy->makespan) &&
      SamplesMoved(*greedy) < SamplesMoved(plan)) {
    greedy->note = absl::StrCat(
        "ilp kept the greedy plan: same makespan, ", SamplesMoved(*greedy),
        " samples moved instead of ", SamplesMoved(plan));
    return greedy;
  }
  return plan;
#else
  (void)time_limit_seconds;
  greedy->note = "ilp fell back to greedy: this build has no GLPK";
  return greedy;
#endif
}

}  // namespace fedberry::server::planner
