// fedberry-dp: plans a differential-privacy budget before a job runs: the
// epsilon a job spends (epsilon), or the noise multiplier a target epsilon
// needs (noise), with the accountant the server uses (privacy/).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/internal/parse.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/command_line.h"
#include "privacy/rdp_accountant.h"

// Strings, parsed here, so that a missing flag and a malformed number are
// both usage errors that name the flag (exit status 2).
ABSL_FLAG(std::string, sampling_rate, "",
          "epsilon, noise (required): q, the probability with which each "
          "available board joins a round, in [0, 1] (the server's --fraction "
          "under DP).");
ABSL_FLAG(std::string, noise_multiplier, "",
          "epsilon (required): z >= 0; the noise on the sum of the clipped "
          "updates has standard deviation z x the clip norm.");
ABSL_FLAG(std::string, steps, "",
          "epsilon, noise (required): the number of rounds, a whole number "
          ">= 0; every round counts, also one whose cohort fell below the "
          "quorum.");
ABSL_FLAG(std::string, delta, "",
          "epsilon, noise (required): delta in (0, 1), well below 1 / the "
          "number of boards (e.g. 1e-5).");
ABSL_FLAG(std::string, target_epsilon, "",
          "noise (required): the epsilon the job may spend, > 0.");
ABSL_FLAG(std::vector<std::string>, orders, {},
          "epsilon, noise: the Rényi orders to account at, comma-separated, "
          "each above 1; empty: dp_accounting's default grid, the one the "
          "server uses (e.g. TF Privacy's compute_dp_sgd_privacy uses "
          "1.25,1.5,1.75,2,2.25,2.5,3,3.5,4,4.5,5,6,...,63,128,256,512).");

namespace {

constexpr char kTool[] = "fedberry-dp";

constexpr char kUsage[] =
    "plans a differential-privacy budget for a federated job.\n"
    "Usage: fedberry-dp <command> [flags]\n"
    "  fedberry-dp epsilon --sampling_rate=Q --noise_multiplier=Z "
    "--steps=T --delta=D\n"
    "      the epsilon T rounds spend; last line: epsilon=<value> "
    "order=<Rényi order>\n"
    "  fedberry-dp noise --sampling_rate=Q --steps=T --delta=D "
    "--target_epsilon=E\n"
    "      the smallest noise multiplier that keeps T rounds within E (to "
    "1e-4 relative, rounded up to 6 digits); last line: "
    "noise_multiplier=<value>\n"
    "What it assumes (the mechanism of a fedberry server under DP):\n"
    "  - Poisson sampling of boards: each round, every available board joins "
    "independently with probability Q;\n"
    "  - each board's update (its difference from the round's global model) "
    "is clipped to L2 norm C;\n"
    "  - Gaussian noise of standard deviation Z x C is added to the sum of "
    "the clipped updates;\n"
    "  - adjacency: add or remove one board with all of its data (user-level "
    "privacy: a board's whole data is what is protected);\n"
    "  - accounting: Rényi DP of the Poisson-subsampled Gaussian mechanism "
    "(Mironov, Talwar, Zhang 2019) at orders 1.1 to 10.9 by 0.1, 11 to 63, "
    "128, 256, 512 and 1024, added over T rounds and converted to "
    "(epsilon, delta) with the improved conversion (Canonne, Kamath, Steinke "
    "2020; Asoodeh et al. 2020), as Google's dp_accounting does.\n"
    "Example: fedberry-dp epsilon --sampling_rate=0.1 --noise_multiplier=1.1 "
    "--steps=50 --delta=1e-5";

int UsageError(const std::string& message) {
  std::fprintf(stderr,
               "%s: %s\nUsage: %s epsilon|noise [flags]; `%s --help` says "
               "what each needs and assumes\n",
               kTool, message.c_str(), kTool, kTool);
  return 2;
}

// The flags of one command, parsed and checked.
struct Plan {
  double sampling_rate = 0;
  double noise_multiplier = 0;
  int64_t steps = 0;
  double delta = 0;
  double target_epsilon = 0;
  std::vector<double> orders;
};

absl::Status FlagError(const char* name, const char* what,
                       const std::string& text) {
  return absl::InvalidArgumentError(
      absl::StrCat("--", name, " must be ", what, ", got '", text, "'"));
}

// The required flag --`name` as a finite number for which in_range holds
// (`range` says what that is); else a message naming the flag.
absl::StatusOr<double> NumberFlag(const char* name, const std::string& text,
                                  bool (*in_range)(double), const char* range) {
  if (!absl::flags_internal::WasPresentOnCommandLine(name)) {
    return absl::InvalidArgumentError(absl::StrCat("--", name, " is required"));
  }
  double value;
  if (!absl::SimpleAtod(text, &value) || !std::isfinite(value) ||
      !in_range(value)) {
    return FlagError(name, range, text);
  }
  return value;
}

absl::Status ReadOrders(std::vector<double>& orders) {
  const std::vector<std::string> texts = absl::GetFlag(FLAGS_orders);
  if (texts.empty()) {
    orders = fedberry::privacy::DefaultOrders();
    return absl::OkStatus();
  }
  for (const std::string& text : texts) {
    double order;
    if (!absl::SimpleAtod(text, &order) || !std::isfinite(order) ||
        !(order > 1)) {
      return FlagError("orders", "a list of numbers above 1", text);
    }
    orders.push_back(order);
  }
  return absl::OkStatus();
}

absl::Status ReadPlan(absl::string_view command, Plan& plan) {
  const bool noise = command == "noise";
  // The other command's flag is a mistake worth stopping for.
  const char* foreign = noise ? "noise_multiplier" : "target_epsilon";
  if (absl::flags_internal::WasPresentOnCommandLine(foreign)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", foreign, " does not apply to ", command));
  }
  absl::StatusOr<double> q = NumberFlag(
      "sampling_rate", absl::GetFlag(FLAGS_sampling_rate),
      [](double v) { return v >= 0 && v <= 1; }, "a number in [0, 1]");
  if (!q.ok()) return q.status();
  plan.sampling_rate = *q;
  if (!noise) {
    absl::StatusOr<double> z = NumberFlag(
        "noise_multiplier", absl::GetFlag(FLAGS_noise_multiplier),
        [](double v) { return v >= 0; }, "a number >= 0");
    if (!z.ok()) return z.status();
    plan.noise_multiplier = *z;
  }
  const std::string steps = absl::GetFlag(FLAGS_steps);
  if (!absl::flags_internal::WasPresentOnCommandLine("steps")) {
    return absl::InvalidArgumentError("--steps is required");
  }
  if (!absl::SimpleAtoi(steps, &plan.steps) || plan.steps < 0) {
    return FlagError("steps", "a whole number >= 0", steps);
  }
  absl::StatusOr<double> delta = NumberFlag(
      "delta", absl::GetFlag(FLAGS_delta),
      [](double v) { return v > 0 && v < 1; }, "a number in (0, 1)");
  if (!delta.ok()) return delta.status();
  plan.delta = *delta;
  if (noise) {
    absl::StatusOr<double> target = NumberFlag(
        "target_epsilon", absl::GetFlag(FLAGS_target_epsilon),
        [](double v) { return v > 0; }, "a number > 0");
    if (!target.ok()) return target.status();
    plan.target_epsilon = *target;
  }
  return ReadOrders(plan.orders);
}

int Failure(const absl::Status& status) {
  std::fprintf(stderr, "%s: %s\n", kTool,
               std::string(status.message()).c_str());
  return 1;
}

// The epsilon `steps` rounds at (q, z) spend, as the server's accountant
// composes them.
absl::StatusOr<fedberry::privacy::PrivacySpent> EpsilonOf(
    double q, double z, int64_t steps, double delta,
    const std::vector<double>& orders) {
  fedberry::privacy::RdpAccountant accountant(orders);
  if (absl::Status s = accountant.Compose(q, z, steps); !s.ok()) return s;
  return accountant.Spent(delta);
}

std::string SpentLine(const fedberry::privacy::PrivacySpent& spent) {
  return absl::StrFormat("epsilon=%.15g order=%.10g", spent.epsilon,
                         spent.order);
}

int Epsilon(const Plan& plan) {
  std::printf(
      "%s epsilon: sampling_rate=%.10g noise_multiplier=%.10g "
      "steps=%lld delta=%.10g\n",
      kTool, plan.sampling_rate, plan.noise_multiplier,
      static_cast<long long>(plan.steps), plan.delta);
  absl::StatusOr<fedberry::privacy::PrivacySpent> spent =
      EpsilonOf(plan.sampling_rate, plan.noise_multiplier, plan.steps,
                plan.delta, plan.orders);
  if (!spent.ok()) return Failure(spent.status());
  if (std::isinf(spent->epsilon)) {
    std::printf(
        "no noise (noise_multiplier 0) on sampled boards: no finite "
        "epsilon\n");
  }
  std::printf("%s\n", SpentLine(*spent).c_str());
  return 0;
}

// `value` in `digits` significant digits, rounded up: a multiplier printed
// lower than the one found could exceed the target.
std::string RoundedUp(double value, int digits) {
  std::string text = absl::StrFormat("%.*g", digits, value);
  double printed = 0;
  if (absl::SimpleAtod(text, &printed) && printed >= value) return text;
  const double unit =
      std::pow(10.0, std::floor(std::log10(value)) - (digits - 1));
  return absl::StrFormat("%.*g", digits, printed + unit);
}

int Noise(const Plan& plan) {
  std::printf(
      "%s noise: sampling_rate=%.10g steps=%lld delta=%.10g "
      "target_epsilon=%.10g\n",
      kTool, plan.sampling_rate, static_cast<long long>(plan.steps), plan.delta,
      plan.target_epsilon);
  absl::StatusOr<double> z = fedberry::privacy::NoiseMultiplierFor(
      plan.sampling_rate, plan.steps, plan.delta, plan.target_epsilon,
      plan.orders);
  if (!z.ok()) return Failure(z.status());
  const std::string printed = *z == 0 ? "0" : RoundedUp(*z, 6);
  double rounded = 0;
  if (!absl::SimpleAtod(printed, &rounded)) rounded = *z;
  // What the printed multiplier spends, so the answer can be checked.
  absl::StatusOr<fedberry::privacy::PrivacySpent> spent = EpsilonOf(
      plan.sampling_rate, rounded, plan.steps, plan.delta, plan.orders);
  if (!spent.ok()) return Failure(spent.status());
  if (*z == 0) {
    std::printf("no round samples a board: no noise is needed\n");
  }
  std::printf("at this multiplier: %s\n", SpentLine(*spent).c_str());
  std::printf("noise_multiplier=%s\n", printed.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> args =
      fedberry::ParseCommandLine(argc, argv, kUsage, "dp_main");
  if (args.size() < 2) return UsageError("need a command: epsilon or noise");
  const std::string command = args[1];
  if (command != "epsilon" && command != "noise") {
    return UsageError(
        absl::StrCat("unknown command '", command, "' (epsilon or noise)"));
  }
  if (args.size() > 2) {
    return UsageError(absl::StrCat("unexpected argument '", args[2], "'"));
  }
  Plan plan;
  if (absl::Status s = ReadPlan(command, plan); !s.ok()) {
    return UsageError(std::string(s.message()));
  }
  return command == "epsilon" ? Epsilon(plan) : Noise(plan);
}
