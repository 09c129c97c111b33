#include "base/log_text.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "nlohmann/json.hpp"

namespace fedberry::base::log_text_test {
namespace {

TEST(Printable, EscapesControlBytesSoNoLineCanBeForged) {
  EXPECT_EQ(Printable("board-1"), "board-1");
  EXPECT_EQ(Printable("a\nb"), "a\\nb");
  EXPECT_EQ(Printable("\x1b[31mred"), "\\x1b[31mred");
  EXPECT_EQ(Printable("say \"hi\""), "say \\\"hi\\\"");
}

TEST(Printable, CutsLongTextAndSaysHowLongItWas) {
  const std::string out = Printable(std::string(1 << 20, 'x'), 8);
  EXPECT_EQ(out, "xxxxxxxx...(1048576 bytes)");
}

TEST(FirstUnprintable, FindsTheFirstControlOrNonAsciiByte) {
  EXPECT_EQ(FirstUnprintable("plain text ~"), absl::string_view::npos);
  EXPECT_EQ(FirstUnprintable("ab\tc"), 2u);
  EXPECT_EQ(FirstUnprintable("x\x7f"), 1u);
  EXPECT_EQ(FirstUnprintable("caf\xc3\xa9"), 3u);
}

// Whether `text` is UTF-8 a JSON writer takes (nlohmann's strict dump).
bool JsonTakes(const std::string& text) {
  try {
    (void)nlohmann::json(text).dump();
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

TEST(ValidUtf8, KeepsWellFormedTextAndReplacesEachBadByte) {
  const std::vector<std::tuple<std::string, std::string>> table = {
      {"board-7", "board-7"},
      {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x8d\x93", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x8d\x93"},
      {"a\x80z", "a\xef\xbf\xbdz"},              // stray continuation
      {"\xc3", "\xef\xbf\xbd"},                  // truncated at the end
      {"\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd"},  // overlong '/'
      {"\xe0\x80\xaf", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},  // overlong
      {"\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},  // surrogate
      {"\xf4\x90\x80\x80",  // above U+10FFFF
       "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
      {"\xff\xfe", "\xef\xbf\xbd\xef\xbf\xbd"},
      {std::string("nul\0ok", 6), std::string("nul\0ok", 6)},
  };
  for (const auto& [in, want] : table) {
    const std::string out = ValidUtf8(in, 1024);
    EXPECT_EQ(out, want) << Printable(in);
    EXPECT_TRUE(JsonTakes(out)) << Printable(in);
    EXPECT_FALSE(JsonTakes(in) && in != out) << Printable(in);
  }
}

// Each multi-byte character placed across every cut: the text is cut
// before it, never inside, and always stays valid.
TEST(ValidUtf8, CutsOnACharacterBoundaryAtEveryLength) {
  for (const std::string character :
       {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x8d\x93"}) {
    for (size_t prefix = 250; prefix <= 257; ++prefix) {
      const std::string text =
          std::string(prefix, 'a') + character + std::string(3, 'z');
      for (size_t cut = 0; cut <= text.size() + 1; ++cut) {
        const std::string out = ValidUtf8(text, cut);
        ASSERT_LE(out.size(), cut);
        ASSERT_TRUE(JsonTakes(out)) << "prefix " << prefix << " cut " << cut;
        // As long as it can be: a whole character is dropped, no more.
        EXPECT_GT(out.size() + character.size(), std::min(cut, text.size()))
            << "prefix " << prefix << " cut " << cut;
        EXPECT_EQ(out, text.substr(0, out.size()));
      }
    }
  }
}

}  // namespace
}  // namespace fedberry::base::log_text_test
