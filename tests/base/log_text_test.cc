#include "base/log_text.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace fedberry::base::log_text_test
