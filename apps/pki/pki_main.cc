// fedberry-pki: the fleet's certificate authority for mutual TLS. Keeps a
// folder (pki/fleet_folder.h) with the fleet CA, one certificate and key per
// server or board, a CRL and an issue log.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/internal/parse.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "base/command_line.h"
#include "pki/fleet_folder.h"
#include "pki/fleet_pki.h"

ABSL_FLAG(std::string, dir, ".",
          "The fleet folder: fleet-ca.crt, fleet-ca.key, revoked.crl, "
          "issued.tsv and the NAME.crt/NAME.key pairs.");
ABSL_FLAG(std::string, ca_name, "fedberry fleet CA",
          "init: the CA's common name (1 to 64 bytes).");
ABSL_FLAG(int, days, -1,
          "Validity in days; -1: the command's default (init 3650, server "
          "and board 825); 0: already expired (to test a refusal). A "
          "certificate never outlives the CA.");
ABSL_FLAG(std::vector<std::string>, san, {},
          "server: subjectAltName entries, comma-separated DNS:<host name> "
          "or IP:<IPv4 or IPv6 address>; empty: DNS:NAME. Clients check the "
          "name or address they dial against these.");
ABSL_FLAG(int, crl_days, 365,
          "init, revoke, crl: days until the CRL's next update; run "
          "`fedberry-pki crl` before then (a server that checks the CRL "
          "refuses every board once it has passed).");
ABSL_FLAG(bool, force, false,
          "init: replace an existing fleet CA (its certificates stop "
          "verifying); server, board: replace an existing NAME.key.");

namespace {

using fedberry::pki::FleetFolder;
using fedberry::pki::IssueRecord;
using fedberry::pki::Role;

constexpr int kMaxDays = 36500;
constexpr char kTool[] = "fedberry-pki";

struct FlagUse {
  const char* name;
  const char* default_text;  // nullptr: the flag's own default
};

struct Command {
  const char* name;
  const char* args;  // "NAME" or ""
  const char* description;
  std::vector<FlagUse> flags;
  int default_days;  // 0: no --days
};

const std::vector<Command>& Commands() {
  static const auto* commands = new std::vector<Command>{
      {"init",
       "",
       "Creates the fleet CA in --dir: fleet-ca.crt (give it to the server "
       "and every board), fleet-ca.key (0600; keep it here, never on a "
       "board), an empty revoked.crl and the issue log issued.tsv.",
       {{"dir", nullptr},
        {"ca_name", nullptr},
        {"days", "3650"},
        {"crl_days", nullptr},
        {"force", nullptr}},
       3650},
      {"server",
       "NAME",
       "Issues NAME.crt and NAME.key (0600) for a server: serverAuth, "
       "subjectAltName from --san (default DNS:NAME).\n"
       "Example: fedberry-pki server gateway "
       "--san=DNS:gateway.local,IP:10.0.0.1",
       {{"dir", nullptr},
        {"san", nullptr},
        {"days", "825"},
        {"force", nullptr}},
       825},
      {"board",
       "NAME",
       "Issues NAME.crt and NAME.key (0600) for a board: clientAuth, "
       "subjectAltName DNS:NAME.\n"
       "Example: for i in $(seq 1 10); do fedberry-pki board board-$i; done",
       {{"dir", nullptr}, {"days", "825"}, {"force", nullptr}},
       825},
      {"revoke",
       "NAME",
       "Revokes every certificate issued to NAME (found in issued.tsv), "
       "re-signs revoked.crl with the next CRL number and marks them revoked "
       "in issued.tsv. Copy revoked.crl to the server afterwards.",
       {{"dir", nullptr}, {"crl_days", nullptr}},
       0},
      {"crl",
       "",
       "Re-signs revoked.crl (next CRL number, fresh next update) from "
       "issued.tsv; run it before the current CRL's next update passes.",
       {{"dir", nullptr}, {"crl_days", nullptr}},
       0},
      {"list",
       "",
       "Lists the issued certificates: name, role, serial, SHA-256 "
       "fingerprint, expiry and whether each is valid, expired or revoked.",
       {{"dir", nullptr}},
       0},
  };
  return *commands;
}

const Command* FindCommand(absl::string_view name) {
  for (const Command& c : Commands()) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

std::string ToolUsage() {
  return absl::StrCat(
      "the fleet's certificate authority for mutual TLS: a fleet CA, server "
      "and board certificates, a revocation list.\n"
      "Usage: fedberry-pki <command> [NAME] [flags]\n"
      "  init          create the fleet CA (fleet-ca.crt, fleet-ca.key), "
      "revoked.crl and issued.tsv in --dir\n"
      "  server NAME   issue NAME.crt and NAME.key for a server (--san)\n"
      "  board NAME    issue NAME.crt and NAME.key for a board\n"
      "  revoke NAME   revoke NAME's certificates; re-sign revoked.crl\n"
      "  crl           re-sign revoked.crl with a fresh next update\n"
      "  list          the issued certificates and their state\n"
      "Run `fedberry-pki <command> --help` for a command's flags.\n"
      "Example: fedberry-pki init && fedberry-pki server gateway "
      "--san=DNS:gateway.local && fedberry-pki board board-1");
}

std::string CommandUsage(const Command& command) {
  std::string out = absl::StrCat("Usage: ", kTool, " ", command.name,
                                 *command.args ? " " : "", command.args);
  for (const FlagUse& use : command.flags) {
    absl::StrAppend(&out, " [--", use.name, "]");
  }
  absl::StrAppend(&out, "\n", command.description, "\n\nFlags:\n");
  for (const FlagUse& use : command.flags) {
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(use.name);
    if (flag == nullptr) continue;
    std::string default_text =
        use.default_text != nullptr ? use.default_text : flag->DefaultValue();
    if (default_text.empty()) default_text = "\"\"";
    absl::StrAppend(&out, "  --", use.name, " (default: ", default_text,
                    ")\n      ", flag->Help(), "\n");
  }
  return out;
}

// --help, -help, -h, --helpshort anywhere before "--": the help of the
// command named first (the tool's when none is), on stdout, exit status 0.
// (--helpfull and --help=substring are left to Abseil.)
bool AnswerHelp(int argc, char** argv) {
  bool help = false;
  const Command* command = nullptr;
  bool positional_seen = false;
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg == "--help" || arg == "-help" || arg == "-h" ||
        arg == "--helpshort" || arg == "-helpshort") {
      help = true;
    } else if (!absl::StartsWith(arg, "-") && !positional_seen) {
      positional_seen = true;
      command = FindCommand(arg);
    }
  }
  if (!help) return false;
  if (command != nullptr) {
    std::cout << CommandUsage(*command);
  } else {
    std::cout << kTool << ": " << ToolUsage() << "\n";
  }
  std::cout.flush();
  return true;
}

int UsageError(const std::string& message, const Command* command) {
  const std::string usage =
      command != nullptr ? CommandUsage(*command) : ToolUsage();
  std::fprintf(stderr, "%s: %s\n\n%s\n", kTool, message.c_str(), usage.c_str());
  return 2;
}

int Failure(const absl::Status& status) {
  std::fprintf(stderr, "%s: %s\n", kTool,
               std::string(status.message()).c_str());
  return 1;
}

std::string Day(absl::Time t) {
  return absl::FormatTime("%Y-%m-%d", t, absl::UTCTimeZone());
}

std::string Rfc3339(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

int Init(FleetFolder& folder, absl::Duration validity,
         absl::Duration crl_validity, absl::Time now) {
  absl::StatusOr<fedberry::pki::CertificateFacts> ca =
      folder.Init(absl::GetFlag(FLAGS_ca_name), validity, crl_validity,
                  absl::GetFlag(FLAGS_force), now);
  if (!ca.ok()) return Failure(ca.status());
  std::printf(
      "wrote %s, %s (0600), %s and %s for CA '%s' (valid until %s); keep "
      "%s here and off the boards; next: `fedberry-pki server NAME` and "
      "`fedberry-pki board NAME`\n",
      folder.PathOf(fedberry::pki::kCaCertFile).c_str(),
      folder.PathOf(fedberry::pki::kCaKeyFile).c_str(),
      folder.PathOf(fedberry::pki::kCrlFile).c_str(),
      folder.PathOf(fedberry::pki::kIssueLogFile).c_str(),
      ca->common_name.c_str(), Day(ca->not_after).c_str(),
      fedberry::pki::kCaKeyFile);
  return 0;
}

int Issue(FleetFolder& folder, Role role, const std::string& name,
          absl::Duration validity, absl::Time now) {
  const std::vector<std::string> sans = role == Role::kServer
                                            ? absl::GetFlag(FLAGS_san)
                                            : std::vector<std::string>();
  absl::StatusOr<IssueRecord> record =
      folder.Issue(role, name, sans, validity, absl::GetFlag(FLAGS_force), now);
  if (!record.ok()) return Failure(record.status());
  const std::string crt = folder.PathOf(absl::StrCat(name, ".crt"));
  const std::string key = folder.PathOf(absl::StrCat(name, ".key"));
  const std::string ca = folder.PathOf(fedberry::pki::kCaCertFile);
  if (role == Role::kServer) {
    const std::string names =
        sans.empty() ? absl::StrCat("DNS:", name) : absl::StrJoin(sans, ", ");
    std::printf(
        "%s: wrote %s and %s (0600) for %s, valid until %s; copy both, %s and "
        "%s to the server\n",
        name.c_str(), crt.c_str(), key.c_str(), names.c_str(),
        Day(record->not_after).c_str(), ca.c_str(),
        folder.PathOf(fedberry::pki::kCrlFile).c_str());
  } else {
    std::printf(
        "%s: wrote %s and %s (0600), valid until %s; copy both and %s to the "
        "board\n",
        name.c_str(), crt.c_str(), key.c_str(), Day(record->not_after).c_str(),
        ca.c_str());
  }
  return 0;
}

int Revoke(FleetFolder& folder, const std::string& name,
           absl::Duration crl_validity, absl::Time now) {
  absl::StatusOr<fedberry::pki::RevokeResult> result =
      folder.Revoke(name, crl_validity, now);
  if (!result.ok()) return Failure(result.status());
  std::vector<std::string> serials;
  for (const IssueRecord& r : result->newly_revoked) {
    serials.push_back(r.serial_hex);
  }
  const std::string what =
      serials.empty()
          ? absl::StrCat("already revoked (", result->already_revoked,
                         " certificate",
                         result->already_revoked == 1 ? "" : "s", ")")
          : absl::StrCat("revoked ", serials.size(), " certificate",
                         serials.size() == 1 ? "" : "s", " (serial ",
                         absl::StrJoin(serials, ", "), ")");
  std::printf("%s: %s; re-signed %s (CRL number %llu); copy it to the server\n",
              name.c_str(), what.c_str(),
              folder.PathOf(fedberry::pki::kCrlFile).c_str(),
              static_cast<unsigned long long>(result->crl_number));
  return 0;
}

int RefreshCrl(FleetFolder& folder, absl::Duration crl_validity,
               absl::Time now) {
  absl::StatusOr<uint64_t> number = folder.RefreshCrl(crl_validity, now);
  if (!number.ok()) return Failure(number.status());
  std::printf(
      "re-signed %s (CRL number %llu, next update %s); copy it to the "
      "server\n",
      folder.PathOf(fedberry::pki::kCrlFile).c_str(),
      static_cast<unsigned long long>(*number),
      Day(now + crl_validity).c_str());
  return 0;
}

int List(FleetFolder& folder, absl::Time now) {
  absl::StatusOr<std::vector<IssueRecord>> records = folder.List();
  if (!records.ok()) return Failure(records.status());
  int name_width = 4;
  for (const IssueRecord& r : *records) {
    name_width = std::max(name_width, static_cast<int>(r.name.size()));
  }
  std::printf("%-*s  %-6s  %-34s  %-64s  %-20s  %s\n", name_width, "NAME",
              "ROLE", "SERIAL", "SHA256", "NOT_AFTER", "STATE");
  for (const IssueRecord& r : *records) {
    const std::string state =
        r.revoked_at        ? absl::StrCat("revoked ", Rfc3339(*r.revoked_at))
        : r.not_after < now ? std::string("expired")
                            : std::string("valid");
    std::printf("%-*s  %-6s  %-34s  %-64s  %-20s  %s\n", name_width,
                r.name.c_str(),
                std::string(fedberry::pki::RoleName(r.role)).c_str(),
                r.serial_hex.c_str(), r.sha256_fingerprint.c_str(),
                Rfc3339(r.not_after).c_str(), state.c_str());
  }
  // The CRL's own expiry, which would lock every board out, on stderr so the
  // table stays clean for scripts.
  absl::StatusOr<fedberry::pki::CrlFacts> crl = folder.ReadCrlFacts();
  if (!crl.ok()) {
    std::fprintf(stderr, "%s: warning: %s\n", kTool,
                 std::string(crl.status().message()).c_str());
  } else if (crl->next_update < now + absl::Hours(24 * 30)) {
    std::fprintf(stderr,
                 "%s: warning: %s's next update is %s: run `fedberry-pki "
                 "crl` and copy it to the server\n",
                 kTool, folder.PathOf(fedberry::pki::kCrlFile).c_str(),
                 Rfc3339(crl->next_update).c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (AnswerHelp(argc, argv)) return 0;
  std::vector<char*> args =
      fedberry::ParseCommandLine(argc, argv, ToolUsage(), "pki_main");
  if (args.size() < 2) return UsageError("need a command", nullptr);
  const Command* command = FindCommand(args[1]);
  if (command == nullptr) {
    return UsageError(absl::StrCat("unknown command '", args[1], "'"), nullptr);
  }
  const bool takes_name = *command->args != '\0';
  const size_t expected = takes_name ? 3 : 2;
  if (args.size() < expected) {
    return UsageError(absl::StrCat(command->name, " needs a NAME"), command);
  }
  if (args.size() > expected) {
    return UsageError(absl::StrCat(command->name, ": unexpected argument '",
                                   args[expected], "'"),
                      command);
  }
  // A flag that the command ignores is a mistake worth stopping for (e.g.
  // --san on a board). Abseil 20220623 only exposes whether a flag was given
  // through flags_internal, as runtime/command_line.cc uses it too.
  for (const char* flag :
       {"dir", "ca_name", "days", "san", "crl_days", "force"}) {
    bool applies = false;
    for (const FlagUse& use : command->flags) {
      applies = applies || absl::string_view(use.name) == flag;
    }
    if (!applies && absl::flags_internal::WasPresentOnCommandLine(flag)) {
      return UsageError(
          absl::StrCat("--", flag, " does not apply to ", command->name),
          command);
    }
  }
  const int raw_days = absl::GetFlag(FLAGS_days);
  const int days = raw_days == -1 ? command->default_days : raw_days;
  const int crl_days = absl::GetFlag(FLAGS_crl_days);
  if (raw_days < -1 || days > kMaxDays) {
    return UsageError(absl::StrCat("--days must be 0 to ", kMaxDays), command);
  }
  if (crl_days < 1 || crl_days > kMaxDays) {
    return UsageError(absl::StrCat("--crl_days must be 1 to ", kMaxDays),
                      command);
  }
  const absl::Duration validity = absl::Hours(24) * days;
  const absl::Duration crl_validity = absl::Hours(24) * crl_days;
  const absl::Time now = fedberry::Clock::Real().Now();
  FleetFolder folder(absl::GetFlag(FLAGS_dir));
  const std::string name = takes_name ? args[2] : "";
  const absl::string_view c = command->name;
  if (c == "init") return Init(folder, validity, crl_validity, now);
  if (c == "server") return Issue(folder, Role::kServer, name, validity, now);
  if (c == "board") return Issue(folder, Role::kBoard, name, validity, now);
  if (c == "revoke") return Revoke(folder, name, crl_validity, now);
  if (c == "crl") return RefreshCrl(folder, crl_validity, now);
  return List(folder, now);
}
