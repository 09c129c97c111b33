// fedberry-emulated-client: fedberry-client plus the test instruments the
// simulator and the tests ask of a board (client/testing/): a poisoned
// update (--attack), a slower board with part of its shard
// (--compute_slowdown, --data_fraction) and a board that stops now and then
// (--pause_every, --pause_seconds); and memory readings from files a test
// writes (--memory_readings_dir). Built for fedberry-sim and the tests;
// never installed or packaged.
#include <spdlog/spdlog.h>

#include <cmath>
#include <csignal>
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "client/client_flags.h"
#include "client/run_client.h"
#include "client/testing/fleet_emulation.h"
#include "client/testing/forged_signer.h"
#include "client/testing/update_attack.h"
#include "runtime/dataset.h"
#include "secagg/wire_messages.h"

ABSL_FLAG(std::string, attack, "",
          "Test only, to measure robust aggregation: send poisoned updates, "
          "global + F * (trained - global). scale:F, signflip (F = -1) or "
          "signflip:F (F negated).");
ABSL_FLAG(double, compute_slowdown, 1.0,
          "Fleet emulation: behave like a board this many times slower "
          "(sleeps (k-1)x each round's training time; >= 1).");
ABSL_FLAG(double, data_fraction, 1.0,
          "Fleet emulation: keep only this share of the shard, in (0, 1].");
ABSL_FLAG(int, pause_every, 0,
          "Fleet emulation: on every N-th task trained, stand still for "
          "--pause_seconds before pushing (0: never).");
ABSL_FLAG(double, pause_seconds, 0,
          "Fleet emulation: how long each --pause_every pause lasts (> 0 "
          "with --pause_every).");
ABSL_FLAG(std::string, secagg_kill_at, "",
          "Test only: R:S kills this board (SIGKILL, by itself) in round R "
          "just before it sends its message of secure aggregation's stage S "
          "(1 advertise keys, 2 share keys, 3 masked input, 4 unmask).");
ABSL_FLAG(bool, secagg_forge_signature, false,
          "Test only: this board's secure-aggregation key signature does "
          "not match its certificate (one bit of it flipped).");
ABSL_FLAG(std::string, secagg_words_dir, "",
          "Test only: before masking, this board writes its plain words of "
          "each secure-aggregation session to DIR/<session>.<board>.words "
          "(little-endian uint32), so a test can check the gateway's "
          "unmasked sum.");
ABSL_FLAG(std::string, memory_readings_dir, "",
          "Test only: the memory watchdog reads DIR/meminfo, DIR/pressure "
          "(PSI) and DIR/cgroup (absent: no cgroup) instead of the kernel's "
          "files, so a test pauses and resumes the board by rewriting them.");

namespace fedberry::client {
namespace {

// --data_fraction: part of an IDX shard (other sources cannot be cut).
absl::Status AddDataFraction(const ClientConfig& config,
                             ClientDecorators& decorators) {
  const double fraction = absl::GetFlag(FLAGS_data_fraction);
  if (fraction == 1.0) return absl::OkStatus();
  FEDBERRY_ASSIGN_OR_RETURN(const runtime::DataSpec spec,
                            runtime::ParseDataSpec(config.data.spec));
  if (spec.kind != "idx") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--data_fraction applies to idx data only; --data=", config.data.spec));
  }
  decorators.edit_idx_shard = [fraction](runtime::ImageDataset& shard) {
    return KeepFraction(shard, fraction);
  };
  return absl::OkStatus();
}

// --compute_slowdown.
absl::Status AddSlowdown(ClientDecorators& decorators) {
  const double slowdown = absl::GetFlag(FLAGS_compute_slowdown);
  if (!(slowdown >= 1)) {
    return absl::InvalidArgumentError("--compute_slowdown must be >= 1");
  }
  if (slowdown == 1) return absl::OkStatus();
  spdlog::info("emulating a board {}x slower than this machine", slowdown);
  decorators.trainers.push_back([slowdown](LocalTrainer& inner) {
    return std::make_unique<SlowedTrainer>(inner, slowdown);
  });
  return absl::OkStatus();
}

// --pause_every, --pause_seconds.
absl::Status AddPause(ClientDecorators& decorators) {
  const int every = absl::GetFlag(FLAGS_pause_every);
  const double seconds = absl::GetFlag(FLAGS_pause_seconds);
  if (every < 0 || !(seconds >= 0) || !std::isfinite(seconds) ||
      (every > 0) != (seconds > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--pause_every (>= 0, got ", every, ") and --pause_seconds (>= 0, got ",
        seconds, ") are both set or both 0"));
  }
  if (every == 0) return absl::OkStatus();
  spdlog::info("emulating a board that stops for {} s on every {} task(s)",
               seconds, every);
  const PauseEmulation pause{every, absl::Seconds(seconds)};
  decorators.trainers.push_back([pause](LocalTrainer& inner) {
    return std::make_unique<PausingTrainer>(inner, pause);
  });
  return absl::OkStatus();
}

// --secagg_kill_at=R:S.
absl::Status AddSecAggKill(ClientDecorators& decorators) {
  const std::string spec = absl::GetFlag(FLAGS_secagg_kill_at);
  if (spec.empty()) return absl::OkStatus();
  std::pair<std::string, std::string> parts =
      absl::StrSplit(spec, absl::MaxSplits(':', 1));
  uint64_t round = 0;
  int stage = 0;
  if (!absl::SimpleAtoi(parts.first, &round) ||
      !absl::SimpleAtoi(parts.second, &stage) || round == 0 || stage < 1 ||
      stage > 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("--secagg_kill_at: '", spec,
                     "' is not ROUND:STAGE (round >= 1, "
                     "stage 1 to 4)"));
  }
  spdlog::warn(
      "--secagg_kill_at={}: this board kills itself in round {} "
      "before its secure-aggregation stage {} (test only)",
      spec, round, stage);
  decorators.secagg_before_stage = [round, stage](uint64_t r, int s) {
    if (r != round || s != stage) return;
    spdlog::warn(
        "round {}: killing this board before secure aggregation's "
        "stage {} (--secagg_kill_at)",
        r, s);
    spdlog::default_logger()->flush();
    std::raise(SIGKILL);
  };
  return absl::OkStatus();
}

// --secagg_forge_signature.
void AddForgedSignature(ClientDecorators& decorators) {
  if (!absl::GetFlag(FLAGS_secagg_forge_signature)) return;
  spdlog::warn(
      "--secagg_forge_signature: this board's key signatures do not "
      "match its certificate (test only)");
  decorators.secagg_wrap_signer = [](std::unique_ptr<secagg::KeySigner> honest)
      -> std::unique_ptr<secagg::KeySigner> {
    return std::make_unique<ForgedSigner>(std::move(honest));
  };
}

// --secagg_words_dir.
void KeepSecAggWords(ClientDecorators& decorators) {
  const std::string dir = absl::GetFlag(FLAGS_secagg_words_dir);
  if (dir.empty()) return;
  spdlog::warn(
      "--secagg_words_dir={}: this board writes its plain secure-aggregation "
      "words there (test only)",
      dir);
  decorators.secagg_on_words = [dir](const std::string& session, uint32_t board,
                                     const std::vector<uint32_t>& words) {
    std::ofstream(absl::StrCat(dir, "/", session, ".", board, ".words"),
                  std::ios::binary)
        << secagg::WordBytes(words);
  };
}

// --memory_readings_dir.
void UseMemoryReadings(ClientDecorators& decorators) {
  const std::string dir = absl::GetFlag(FLAGS_memory_readings_dir);
  if (dir.empty()) return;
  spdlog::warn(
      "--memory_readings_dir={}: the watchdog reads these files, "
      "not the kernel's (test only)",
      dir);
  decorators.memory_readings.meminfo_path = dir + "/meminfo";
  decorators.memory_readings.pressure_path = dir + "/pressure";
  decorators.memory_readings.self_cgroup_path = dir + "/cgroup";
}

// The attack wraps the trainer first, so the slowed board's time includes
// it, as a board that poisons its own update would spend it; a pause comes
// last, after the slowed training, before the push.
absl::StatusOr<ClientDecorators> EmulationFromFlags(
    const ClientConfig& config) {
  ClientDecorators decorators;
  FEDBERRY_RETURN_IF_ERROR(AddDataFraction(config, decorators));
  FEDBERRY_ASSIGN_OR_RETURN(std::optional<UpdateAttack> attack,
                            ParseUpdateAttack(absl::GetFlag(FLAGS_attack)));
  if (attack) {
    spdlog::warn("--attack={}: this board sends poisoned updates (test only)",
                 attack->spec);
    decorators.trainers.push_back([attack = *attack](LocalTrainer& inner) {
      return std::make_unique<AttackingTrainer>(inner, attack);
    });
  }
  FEDBERRY_RETURN_IF_ERROR(AddSlowdown(decorators));
  FEDBERRY_RETURN_IF_ERROR(AddPause(decorators));
  FEDBERRY_RETURN_IF_ERROR(AddSecAggKill(decorators));
  AddForgedSignature(decorators);
  KeepSecAggWords(decorators);
  UseMemoryReadings(decorators);
  return decorators;
}

}  // namespace
}  // namespace fedberry::client

int main(int argc, char** argv) {
  return fedberry::client::ClientMain(
      argc, argv,
      "fedberry-client with test instruments, for fedberry-sim and the "
      "tests (not installed): --attack, --compute_slowdown, "
      "--data_fraction, --pause_every, --pause_seconds, --secagg_kill_at, "
      "--secagg_forge_signature, --secagg_words_dir, "
      "--memory_readings_dir.\nUsage: "
      "fedberry-emulated-client "
      "--server=127.0.0.1:50051 --partition_index=0 --partition_count=4 "
      "--compute_slowdown=4",
      // Its own flags (this file) and fedberry-client's (client_flags.cc).
      "client_", fedberry::client::EmulationFromFlags);
}
