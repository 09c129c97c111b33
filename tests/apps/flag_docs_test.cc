// docs/guide/flags.md against the binaries' flag tables: the guide's tables
// are the tables' rows (name, type, default, help), so a flag added,
// renamed or given another default in its row shows up here until the
// guide says the same. FEDBERRY_WRITE_FLAG_DOCS=1 rewrites the guide.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "apps/server/server_flag_table.h"
#include "apps/sim/sim_flag_table.h"
#include "base/flag_table.h"
#include "client/client_args.h"  // kDefaultMaxTemperature
#include "client/client_flag_table.h"

namespace fedberry::apps::flag_docs_test {
namespace {

constexpr char kGuide[] = FEDBERRY_SOURCE_DIR "/docs/guide/flags.md";

// Usage text as a Markdown code block.
std::string UsageBlock(const std::string& usage) {
  return absl::StrCat("```\n", usage, "\n```\n");
}

// The client's table with the defaults that differ between builds written
// as the guide gives them (client_args.h: --max_temperature is 70 on ARM
// builds, 0 on others), so one guide matches every build's table.
std::vector<base::FlagDoc> ClientFlagDocs() {
  std::vector<base::FlagDoc> docs = base::FlagDocs(client::ClientFlagTable());
  for (base::FlagDoc& doc : docs) {
    if (doc.name == "max_temperature") {
      EXPECT_EQ(doc.default_text,
                absl::StrCat(client::kDefaultMaxTemperature));
      doc.default_text = "70 on ARM builds, 0 on others";
    }
  }
  return docs;
}

// The guide as the tables say it.
std::string FlagsGuide() {
  std::vector<std::string> shared;
  for (const base::FlagDoc& doc : base::FlagDocs(SharedServerFlagTable())) {
    shared.push_back(absl::StrCat("`--", doc.name, "`"));
  }
  return absl::StrCat(
      "# Flags\n\n"
      "Every flag of `fedberry-server`, `fedberry-client` and "
      "`fedberry-sim`: its type, its default and what `--help` says of it. "
      "Each table is its binary's flag table "
      "(`apps/server/server_flags.inc`, `client/client_flags.inc`, "
      "`apps/sim/sim_flags.inc`), "
      "where each flag is declared once; `tests/apps/flag_docs_test.cc` "
      "fails when this page and the tables differ, and "
      "`FEDBERRY_WRITE_FLAG_DOCS=1 build/bin/sim_app_test "
      "--gtest_filter=FlagDocs.*` rewrites it. Durations are written as "
      "`90s`, `1h30m`; a list as `a,b`.\n\n"
      "## fedberry-server\n\n",
      UsageBlock(kServerUsage), "\n",
      base::FlagDocsMarkdown(base::FlagDocs(ServerFlagTable())),
      "\n`fedberry-sim` takes these server flags too and passes them "
      "through to the server it starts: ",
      absl::StrJoin(shared, ", "), ".\n\n## fedberry-client\n\n",
      UsageBlock(client::kClientUsage), "\n",
      base::FlagDocsMarkdown(ClientFlagDocs()),
      "\n`fedberry-emulated-client` takes these flags too, and test "
      "instruments of its own (`--attack`, `--data_fraction`, "
      "`--compute_slowdown`, ...).\n\n## fedberry-sim\n\n",
      UsageBlock(sim::kSimUsage), "\n",
      base::FlagDocsMarkdown(base::FlagDocs(sim::SimFlagTable())),
      "\nIt takes the server flags it passes through too (listed under "
      "`fedberry-server`). Those of its own flags that the server has as "
      "well (`--rounds`, `--lr`, `--planner`, ...) become the server's "
      "flags of the same names; `--min_clients` and `--eval_data` mean "
      "what this table says.\n");
}

TEST(FlagDocs, GuideMatchesTheTables) {
  const std::string expected = FlagsGuide();
  if (std::getenv("FEDBERRY_WRITE_FLAG_DOCS") != nullptr) {
    std::ofstream(kGuide) << expected;
  }
  std::ifstream in(kGuide);
  ASSERT_TRUE(in.good()) << kGuide;
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), expected)
      << kGuide << " differs from the flag tables; rewrite it with "
      << "FEDBERRY_WRITE_FLAG_DOCS=1";
}

// A default the row's conversion refuses would leave its field as the
// config's own: empty where the flag's default is not, or the other way.
template <typename Config>
void ExpectDefaultsReadBack(const base::FlagTable<Config>& table) {
  const Config defaults = base::FlagDefaults(table);
  for (const base::FlagRow<Config>& row : table) {
    EXPECT_EQ(row.Text(defaults).empty(), row.doc().default_text.empty())
        << row.name();
  }
}

TEST(FlagDocs, EveryDefaultReadsBack) {
  ExpectDefaultsReadBack(ServerFlagTable());
  ExpectDefaultsReadBack(client::ClientFlagTable());
  ExpectDefaultsReadBack(sim::SimFlagTable());
}

}  // namespace
}  // namespace fedberry::apps::flag_docs_test
