// A binary's flags as one table. Each row names a flag, its type, its
// default, its help text and the field of the binary's config it fills:
//
//   FEDBERRY_FLAG(double, max_samples_ratio, 10, fleet.max_samples_ratio,
//                 "A board may declare at most ...")
//
// A table is a .inc file of such rows, expanded twice with FEDBERRY_FLAG
// defined for the purpose: once into the flags' definitions
// (FEDBERRY_DEFINE_FLAG, in the binary that parses them) and once into
// FlagRows (FEDBERRY_FLAG_ROW, in a library without the flags, so that
// fedberry-sim can write a child's command line). From the rows come the
// config a parsed command line gives (ReadFlags), the config no flag gives
// (FlagDefaults), a config written back as a command line (AppendFlagArgs)
// and what the docs and man pages say of each flag (FlagDoc). The flag's
// name is spelled once, in its row.
//
// The type column is the flag's C++ type when the field has that type too
// (bool, int, double, uint32_t, uint64_t, std::string, absl::Duration), or
// a conversion: a struct naming the flag's type (`Flag`), the field's
// (`Field`), its name in the docs (`kName`) and the two ways between them
// (`Parse`, `Unparse`; see CommaList). Default expressions and type names in
// a table are written as at global scope (fully qualified), since the
// definitions are expanded there.
// Thread-safety: rows are immutable once made; ReadFlags reads flags as
// absl::GetFlag does.
#ifndef FEDBERRY_BASE_FLAG_TABLE_H_
#define FEDBERRY_BASE_FLAG_TABLE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/flag.h"
#include "absl/flags/marshalling.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace fedberry::base {

// What the reference says of a flag, as --help says it.
struct FlagDoc {
  std::string name;
  std::string type;          // "int", "duration", "list", ...
  std::string default_text;  // absl::UnparseFlag of the default
  std::string help;
};

// A comma-separated list in a string flag ("a,b"; empty: none).
struct CommaList {
  using Flag = std::string;
  using Field = std::vector<std::string>;
  static constexpr char kName[] = "list";
  static absl::StatusOr<Field> Parse(const Flag& text);
  static Flag Unparse(const Field& items);
};

// The table's type column: a plain type, the field's as well as the flag's.
template <typename T, typename = void>
struct FlagKind {
  using Flag = T;
  using Field = T;
  static constexpr bool kConverts = false;
  static absl::StatusOr<Field> Parse(const Flag& value) { return value; }
};
// ... or a conversion, which names both types.
template <typename T>
struct FlagKind<T, std::void_t<typename T::Flag>> : T {
  static constexpr bool kConverts = true;
};

// The flag's C++ type for a type column (what ABSL_FLAG defines).
template <typename Type>
using FlagTypeOf = typename FlagKind<Type>::Flag;

// The type column's name in the docs.
template <typename Type>
std::string FlagTypeName() {
  if constexpr (FlagKind<Type>::kConverts) {
    return Type::kName;
  } else if constexpr (std::is_same_v<Type, bool>) {
    return "bool";
  } else if constexpr (std::is_same_v<Type, int>) {
    return "int";
  } else if constexpr (std::is_same_v<Type, double>) {
    return "double";
  } else if constexpr (std::is_same_v<Type, uint32_t>) {
    return "uint32";
  } else if constexpr (std::is_same_v<Type, uint64_t>) {
    return "uint64";
  } else if constexpr (std::is_same_v<Type, std::string>) {
    return "string";
  } else {
    static_assert(std::is_same_v<Type, absl::Duration>,
                  "a type column the docs cannot name");
    return "duration";
  }
}

// `value` as the text a flag of type T parses back to it (absl::UnparseFlag;
// named with its type, since absl/time's deprecated UnparseFlag(Duration)
// would otherwise be taken).
template <typename T>
std::string FlagText(const T& value) {
  return absl::UnparseFlag<T>(value);
}

// This program's flag `name` of type T, as parsed. Internal when the
// program defines no such flag, or one of another type (a table expanded in
// a binary that did not link its definitions).
const absl::CommandLineFlag* FindProgramFlag(absl::string_view name);
template <typename T>
absl::StatusOr<T> ParsedFlagValue(absl::string_view name) {
  const absl::CommandLineFlag* flag = FindProgramFlag(name);
  if (flag == nullptr) {
    return absl::InternalError(
        absl::StrCat("this program defines no flag --", name));
  }
  auto value = flag->TryGet<T>();
  if (!value.has_value()) {
    return absl::InternalError(
        absl::StrCat("--", name, " is not of the type its table says"));
  }
  return *std::move(value);
}

// One row of a table: a flag and the field of `Config` it fills.
template <typename Config>
class FlagRow {
 public:
  // The row of flag `name` of type column `Type`, whose value is
  // `access(config)`, a reference to the field (FEDBERRY_FLAG_ROW makes
  // `access` from the row's field).
  template <typename Type, typename Access>
  static FlagRow Of(const char* name, const FlagTypeOf<Type>& default_value,
                    const char* help, Access access);

  const FlagDoc& doc() const { return doc_; }
  const std::string& name() const { return doc_.name; }

  // Sets the field from this program's parsed flag. InvalidArgument
  // "--name: ..." when the value does not convert to the field's type;
  // Internal as ParsedFlagValue.
  absl::Status Read(Config& config) const { return read_(config); }
  // Sets the field to the flag's default.
  void SetDefault(Config& config) const { set_default_(config); }
  // The field as the flag's text, which the flag parses back to it.
  std::string Text(const Config& config) const { return text_(config); }
  // Whether the field is at the flag's default, compared as Text() writes
  // them ("25%" is at the default 0.25 of a level flag).
  bool AtDefault(const Config& config) const {
    return text_(config) == default_text_;
  }

 private:
  FlagDoc doc_;
  std::string default_text_;  // the default's field, as Text() writes it
  std::function<absl::Status(Config&)> read_;
  std::function<void(Config&)> set_default_;
  std::function<std::string(const Config&)> text_;
};

template <typename Config>
using FlagTable = std::vector<FlagRow<Config>>;

// Reads every row's flag into `config`; the first error, as FlagRow::Read.
template <typename Config>
absl::Status ReadFlags(const FlagTable<Config>& table, Config& config) {
  for (const FlagRow<Config>& row : table) {
    if (absl::Status read = row.Read(config); !read.ok()) return read;
  }
  return absl::OkStatus();
}

// `config` with every row's field at its flag's default.
template <typename Config>
Config FlagDefaults(const FlagTable<Config>& table, Config config = {}) {
  for (const FlagRow<Config>& row : table) row.SetDefault(config);
  return config;
}

// Appends `--name=text` for each row whose field in `config`, as the flag's
// text, is not the flag's default text, in the table's order: a command
// line that ReadFlags reads back to the same fields.
template <typename Config>
void AppendFlagArgs(const FlagTable<Config>& table, const Config& config,
                    std::vector<std::string>& argv) {
  for (const FlagRow<Config>& row : table) {
    if (row.AtDefault(config)) continue;
    argv.push_back(absl::StrCat("--", row.name(), "=", row.Text(config)));
  }
}

// The rows' docs, in the table's order.
template <typename Config>
std::vector<FlagDoc> FlagDocs(const FlagTable<Config>& table) {
  std::vector<FlagDoc> docs;
  for (const FlagRow<Config>& row : table) docs.push_back(row.doc());
  return docs;
}

// `docs` as a Markdown table (flag, type, default, help), one row each in
// their order: docs/guide/flags.md's tables, which a test compares with the
// binaries' tables.
std::string FlagDocsMarkdown(const std::vector<FlagDoc>& docs);

template <typename Config>
template <typename Type, typename Access>
FlagRow<Config> FlagRow<Config>::Of(const char* name,
                                    const FlagTypeOf<Type>& default_value,
                                    const char* help, Access access) {
  using Kind = FlagKind<Type>;
  using Flag = typename Kind::Flag;
  using Field = std::decay_t<decltype(access(std::declval<Config&>()))>;
  // A plain integer may fill a wider field of its signedness
  // (--checkpoint_every_batches, an int, fills an int64_t).
  static_assert(
      std::is_same_v<Field, typename Kind::Field> ||
          (std::is_integral_v<Field> &&
           std::is_same_v<Flag, typename Kind::Field> &&
           std::is_integral_v<Flag> && sizeof(Field) >= sizeof(Flag) &&
           std::is_signed_v<Field> == std::is_signed_v<Flag>),
      "the field's type is not the type column's");
  FlagRow row;
  row.doc_ = {name, FlagTypeName<Type>(), FlagText(default_value), help};
  row.read_ = [name = std::string(name), access](Config& config) {
    absl::StatusOr<Flag> value = ParsedFlagValue<Flag>(name);
    if (!value.ok()) return value.status();
    absl::StatusOr<typename Kind::Field> field = Kind::Parse(*value);
    if (!field.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, ": ", field.status().message()));
    }
    access(config) = *std::move(field);
    return absl::OkStatus();
  };
  // A table's defaults parse (the tests read every table's defaults back).
  row.set_default_ = [default_value, access](Config& config) {
    absl::StatusOr<typename Kind::Field> field = Kind::Parse(default_value);
    if (field.ok()) access(config) = *std::move(field);
  };
  row.text_ = [access](const Config& config) {
    if constexpr (!Kind::kConverts) {
      return FlagText(access(config));  // exact, whatever its width
    } else {
      return FlagText<Flag>(Kind::Unparse(access(config)));
    }
  };
  Config defaults{};
  row.set_default_(defaults);
  row.default_text_ = row.text_(defaults);
  return row;
}

}  // namespace fedberry::base

// A table's row as a FlagRow<Config> (expand a table inside the braces of a
// FlagTable<Config>, with FEDBERRY_FLAG defined as this plus a comma).
#define FEDBERRY_FLAG_ROW(Config, Type, name, default_value, field, help) \
  ::fedberry::base::FlagRow<Config>::Of<Type>(                            \
      #name, default_value, help,                                         \
      [](auto& config) -> auto& { return config.field; })

// A table's row as the flag's definition (expand a table at global scope,
// with FEDBERRY_FLAG defined as this).
#define FEDBERRY_DEFINE_FLAG(Type, name, default_value, help) \
  ABSL_FLAG(::fedberry::base::FlagTypeOf<Type>, name, default_value, help)

#endif  // FEDBERRY_BASE_FLAG_TABLE_H_
