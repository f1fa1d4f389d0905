#include "fulfillsync/common/printable.hpp"

#include <gtest/gtest.h>

namespace fulfillsync::text {
namespace {

TEST(Printable, ValidTextIsKeptAsItIs) {
  EXPECT_EQ(printable(""), "");
  EXPECT_EQ(printable("A-1001 Genève 東京 🙂 back\\slash"), "A-1001 Genève 東京 🙂 back\\slash");
}

TEST(Printable, BytesThatAreNotUtf8AreEscaped) {
  EXPECT_EQ(printable("Gen\xE8ve"), "Gen\\xe8ve");  // Latin-1
  EXPECT_EQ(printable("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(printable("\xC0\xAF"), "\\xc0\\xaf");            // an overlong '/'
  EXPECT_EQ(printable("\xED\xA0\x80"), "\\xed\\xa0\\x80");   // a surrogate
  EXPECT_EQ(printable("\xF4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(printable("ok\xE2\x82"), "ok\\xe2\\x82");        // cut short
  EXPECT_EQ(printable("\xE2\x82\xAC"), "\xE2\x82\xAC");      // the euro sign, whole
}

TEST(Printable, ControlCharactersAreEscaped) {
  EXPECT_EQ(printable("a\nb\tc\r"), "a\\x0ab\\x09c\\x0d");
  EXPECT_EQ(printable("\x1b[2J"), "\\x1b[2J");  // a terminal escape sequence
  EXPECT_EQ(printable(std::string_view("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(printable("\x7f"), "\\x7f");
  EXPECT_EQ(printable("\xC2\x85"), "\\xc2\\x85");  // NEL, a C1 control
}

}  // namespace
}  // namespace fulfillsync::text
