#include "server/planner/data_moves.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

#ifdef FEDBERRY_HAVE_GLPK
#include "server/planner/glpk_mip.h"
#endif

namespace fedberry::server::planner {
namespace {

// Counts up to 2^53 are exact in a double (GLPK's and the cost model's type).
constexpr uint64_t kMaxTotalSamples = uint64_t{1} << 53;

// Makespans closer than this are the same: the cost model sums doubles in
// different orders for different plans.
double Tolerance(double makespan) { return 1e-9 * std::max(1.0, makespan); }

// What client i trains at least: a whole unit of its own when it holds one,
// so no sender is left with nothing to train (a board with no samples has no
// update to send, and the round would wait for it).
uint64_t KeepAtLeast(const MoveRequest& r, size_t i) {
  return std::min(r.clients[i].samples, r.unit);
}

uint64_t Out(const MoveRequest& r, const std::vector<uint64_t>& x, size_t i) {
  const uint64_t held = r.clients[i].samples;
  return x[i] < held ? held - x[i] : 0;
}

uint64_t In(const MoveRequest& r, const std::vector<uint64_t>& x, size_t i) {
  const uint64_t held = r.clients[i].samples;
  return x[i] > held ? x[i] - held : 0;
}

// U: how long the slowest sender takes to upload what it sends.
double SenderWait(const MoveRequest& r, const std::vector<uint64_t>& x) {
  const double bytes = static_cast<double>(r.bytes_per_sample);
  double wait = 0;
  for (size_t j = 0; j < r.clients.size() && j < x.size(); ++j) {
    if (const uint64_t out = Out(r, x, j); out > 0) {
      wait = std::max(wait, static_cast<double>(out) * bytes *
                                r.clients[j].upload_seconds_per_byte);
    }
  }
  return wait;
}

// t_i for client i training x_i samples when the slowest sender needs
// `wait` seconds. Every makespan here goes through this one function, so
// the planners' numbers and MoveMakespan's agree to the last bit.
double ClientSeconds(const MoveRequest& r, const std::vector<uint64_t>& x,
                     size_t i, double wait) {
  const MoveClient& c = r.clients[i];
  if (x[i] == 0 && c.samples == 0) return 0;  // takes no part
  const double bytes = static_cast<double>(r.bytes_per_sample);
  const double train = static_cast<double>(r.epochs) *
                       static_cast<double>(x[i]) * c.seconds_per_sample;
  if (const uint64_t in = In(r, x, i); in > 0) {
    return c.fixed_seconds + wait +
           static_cast<double>(in) * bytes * c.download_seconds_per_byte +
           train;
  }
  return c.fixed_seconds +
         static_cast<double>(Out(r, x, i)) * bytes * c.upload_seconds_per_byte +
         train;
}

// The makespan of a plan, and how many clients finish within tolerance of
// it (what the greedy search lowers when the makespan itself is tied).
struct Span {
  double makespan = 0;
  int at_makespan = 0;
  double receiver_seconds = 0;  // greedy: the receiving client's finish
};

// Fills `times` (resized to the clients) and returns the span.
Span Measure(const MoveRequest& r, const std::vector<uint64_t>& x,
             std::vector<double>& times) {
  const size_t n = r.clients.size();
  const double wait = SenderWait(r, x);
  times.resize(n);
  Span s;
  for (size_t i = 0; i < n; ++i) {
    times[i] = ClientSeconds(r, x, i, wait);
    s.makespan = std::max(s.makespan, times[i]);
  }
  const double tol = Tolerance(s.makespan);
  for (size_t i = 0; i < n; ++i) s.at_makespan += times[i] >= s.makespan - tol;
  return s;
}

// Whether greedy candidate `a` beats `b`: a clearly smaller makespan, else
// fewer clients at it, else the receiver that then finishes earlier (else
// the first unit would go to the first client and every later one follow
// it, piling the data on one receiver that soon cannot take more without
// the round waiting for it).
bool Better(const Span& a, const Span& b) {
  const double tol = Tolerance(b.makespan);
  if (a.makespan < b.makespan - tol) return true;
  if (a.makespan > b.makespan + tol) return false;
  if (a.at_makespan != b.at_makespan) return a.at_makespan < b.at_makespan;
  if (a.receiver_seconds != b.receiver_seconds) {
    return a.receiver_seconds < b.receiver_seconds;
  }
  return a.makespan < b.makespan;
}

std::vector<uint64_t> Held(const MoveRequest& r) {
  std::vector<uint64_t> x;
  x.reserve(r.clients.size());
  for (const MoveClient& c : r.clients) x.push_back(c.samples);
  return x;
}

// The greedy local search (see GreedyMoves), without the clean-up.
std::vector<uint64_t> GreedyCounts(const MoveRequest& r) {
  const size_t n = r.clients.size();
  const uint64_t unit = r.unit;
  std::vector<uint64_t> x = Held(r);
  std::vector<double> times, scratch;
  Span now = Measure(r, x, times);
  uint64_t total = 0;
  for (uint64_t h : x) total += h;
  // Every accepted step lowers (makespan, clients at it), so no plan repeats
  // and this bound is never reached; it only guards against float surprises.
  const uint64_t max_steps = (total / unit + 1) * n;
  for (uint64_t step = 0; step < max_steps; ++step) {
    // The client that finishes last. If any client at the makespan cannot
    // shed a unit, sending from the others cannot shorten the round.
    const double tol = Tolerance(now.makespan);
    size_t from = n;
    bool stuck = false;
    for (size_t i = 0; i < n; ++i) {
      if (times[i] < now.makespan - tol) continue;
      if (!r.clients[i].allows_moves || x[i] < KeepAtLeast(r, i) + unit) {
        stuck = true;
      }
      if (from == n || times[i] > times[from]) from = i;
    }
    if (stuck || from == n) break;
    // One unit to each other opted-in client; keep the best. x is net, so a
    // unit out of a receiver just lowers what it receives.
    size_t to = n;
    Span best;
    x[from] -= unit;
    for (size_t j = 0; j < n; ++j) {
      if (j == from || !r.clients[j].allows_moves) continue;
      x[j] += unit;
      Span s = Measure(r, x, scratch);
      s.receiver_seconds = scratch[j];
      x[j] -= unit;
      if (to == n || Better(s, best)) {
        to = j;
        best = s;
      }
    }
    x[from] += unit;
    if (to == n) break;
    const bool shorter = best.makespan < now.makespan - tol;
    const bool fewer_last =
        best.makespan <= now.makespan && best.at_makespan < now.at_makespan;
    if (!shorter && !fewer_last) break;
    x[from] -= unit;
    x[to] += unit;
    now = Measure(r, x, times);
  }
  return x;
}

// Moves units back from receivers to senders while the makespan stays at
// most what it is: a plan may move data that buys nothing (the ILP only
// minimises the makespan; greedy may unload a client that was tied with one
// it could not help), and every sample moved costs bandwidth and exposure.
void MoveBackUnneeded(const MoveRequest& r, std::vector<uint64_t>& x) {
  const size_t n = r.clients.size();
  const uint64_t unit = r.unit;
  std::vector<double> times;
  const double limit = Measure(r, x, times).makespan;
  for (bool moved = true; moved;) {
    moved = false;
    for (size_t s = 0; s < n; ++s) {
      for (size_t d = 0; d < n; ++d) {
        while (Out(r, x, s) >= unit && In(r, x, d) >= unit) {
          x[s] += unit;
          x[d] -= unit;
          if (Measure(r, x, times).makespan > limit) {
            x[s] -= unit;
            x[d] += unit;
            break;
          }
          moved = true;
        }
      }
    }
  }
}

uint64_t SamplesMoved(const MovePlan& plan) {
  uint64_t moved = 0;
  for (const DataMove& m : plan.moves) moved += m.samples;
  return moved;
}

MovePlan MakeMovePlan(const MoveRequest& r, std::vector<uint64_t> x,
                      std::string planner) {
  MovePlan plan;
  plan.samples = std::move(x);
  plan.moves = PairMoves(r, plan.samples);
  plan.makespan = MoveMakespan(r, plan.samples);
  plan.planner = std::move(planner);
  return plan;
}

absl::Status CheckTime(const MoveClient& c, const char* what, double v) {
  if (std::isfinite(v) && v >= 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "client ", c.id, ": ", what, " is ", v, "; need a finite value >= 0"));
}

#ifdef FEDBERRY_HAVE_GLPK
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
                   greedy_makespan + 2 * Tolerance(greedy_makespan));
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
#endif

}  // namespace

double MoveFinishSeconds(const MoveRequest& r,
                         const std::vector<uint64_t>& samples, size_t i) {
  if (i >= r.clients.size() || i >= samples.size()) return 0;
  return ClientSeconds(r, samples, i, SenderWait(r, samples));
}

double MoveMakespan(const MoveRequest& r,
                    const std::vector<uint64_t>& samples) {
  const double wait = SenderWait(r, samples);
  double m = 0;
  for (size_t i = 0; i < r.clients.size() && i < samples.size(); ++i) {
    m = std::max(m, ClientSeconds(r, samples, i, wait));
  }
  return m;
}

absl::Status ValidateMoveRequest(const MoveRequest& r) {
  if (r.epochs < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("epochs is ", r.epochs, "; need at least 1"));
  }
  if (r.unit == 0) {
    return absl::InvalidArgumentError(
        "unit is 0; moves need a unit of at least 1 sample");
  }
  if (r.bytes_per_sample == 0) {
    return absl::InvalidArgumentError(
        "bytes_per_sample is 0; need the size of one sample on the wire");
  }
  uint64_t total = 0;
  for (const MoveClient& c : r.clients) {
    for (absl::Status s :
         {CheckTime(c, "seconds_per_sample", c.seconds_per_sample),
          CheckTime(c, "fixed_seconds", c.fixed_seconds),
          CheckTime(c, "upload_seconds_per_byte", c.upload_seconds_per_byte),
          CheckTime(c, "download_seconds_per_byte",
                    c.download_seconds_per_byte)}) {
      if (!s.ok()) return s;
    }
    if (c.samples > kMaxTotalSamples - total) {
      return absl::InvalidArgumentError(
          absl::StrCat("clients hold more than 2^53 samples in all (client ",
                       c.id, " holds ", c.samples, ")"));
    }
    total += c.samples;
  }
  return absl::OkStatus();
}

absl::Status ValidateMovePlan(const MoveRequest& r,
                              const std::vector<uint64_t>& samples) {
  if (absl::Status s = ValidateMoveRequest(r); !s.ok()) return s;
  if (samples.size() != r.clients.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("plan has ", samples.size(), " entries for ",
                     r.clients.size(), " clients"));
  }
  uint64_t held = 0, planned = 0;
  for (const MoveClient& c : r.clients) held += c.samples;
  for (size_t i = 0; i < samples.size(); ++i) {
    const MoveClient& c = r.clients[i];
    if (!c.allows_moves && samples[i] != c.samples) {
      return absl::InvalidArgumentError(
          absl::StrCat("client ", c.id, " does not allow moves but is planned ",
                       samples[i], " samples instead of its ", c.samples));
    }
    const uint64_t change =
        std::max(samples[i], c.samples) - std::min(samples[i], c.samples);
    if (change % r.unit != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("client ", c.id, " changes by ", change,
                       " samples, not a multiple of the unit of ", r.unit));
    }
    if (samples[i] < KeepAtLeast(r, i)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "client ", c.id, " is planned ", samples[i], " of its ", c.samples,
          " samples; a sender keeps at least one unit (", r.unit,
          ") to train"));
    }
    // Checked entry by entry so that the sum cannot overflow.
    if (samples[i] > held - planned) {
      return absl::InvalidArgumentError(
          absl::StrCat("plan gives out more than the ", held,
                       " samples the clients hold (client ", c.id,
                       " is planned ", samples[i], ")"));
    }
    planned += samples[i];
  }
  if (planned != held) {
    return absl::InvalidArgumentError(absl::StrCat(
        "plan sums to ", planned, " samples, not the ", held, " held"));
  }
  return absl::OkStatus();
}

std::vector<DataMove> PairMoves(const MoveRequest& r,
                                const std::vector<uint64_t>& samples) {
  const size_t n = std::min(r.clients.size(), samples.size());
  std::vector<DataMove> moves;
  size_t s = 0, d = 0;  // one past the current sender / receiver
  uint64_t give = 0, take = 0;
  for (;;) {
    while (give == 0 && s < n) give = Out(r, samples, s++);
    while (take == 0 && d < n) take = In(r, samples, d++);
    if (give == 0 || take == 0) break;
    const uint64_t piece = std::min(give, take);
    moves.push_back({s - 1, d - 1, piece});
    give -= piece;
    take -= piece;
  }
  return moves;
}

MovePlan NoMoves(const MoveRequest& r) {
  return MakeMovePlan(r, Held(r), "none");
}

absl::StatusOr<MovePlan> GreedyMoves(const MoveRequest& r) {
  if (absl::Status s = ValidateMoveRequest(r); !s.ok()) return s;
  std::vector<uint64_t> x = GreedyCounts(r);
  MoveBackUnneeded(r, x);
  MovePlan plan = MakeMovePlan(r, std::move(x), "greedy");
  // Moves that do not shorten the round are not worth making.
  MovePlan none = NoMoves(r);
  if (plan.makespan >= none.makespan - Tolerance(none.makespan)) {
    none.planner = "greedy";
    return none;
  }
  return plan;
}

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
  if (plan.makespan >= greedy->makespan - Tolerance(greedy->makespan) &&
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
