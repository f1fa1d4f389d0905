#include "fulfillsync/common/json_writer.hpp"

#include <cstdint>
#include <limits>

#include <gtest/gtest.h>
#include <simdjson.h>

namespace fulfillsync::json {
namespace {

TEST(SandboxJsonWriter, WritesNestedObjectsAndArraysWithCommas) {
  JsonWriter w;
  w.begin_object()
      .field("id", 7)
      .field("name", "widget")
      .key("tags")
      .begin_array()
      .value("a")
      .value("b")
      .begin_object()
      .end_object()
      .begin_array()
      .end_array()
      .end_array()
      .field("ok", true)
      .null_field("none")
      .end_object();
  EXPECT_EQ(w.str(), R"({"id":7,"name":"widget","tags":["a","b",{},[]],"ok":true,"none":null})");
  EXPECT_TRUE(w.complete());
}

TEST(SandboxJsonWriter, EscapesQuotesBackslashesAndControlCharacters) {
  JsonWriter w;
  w.value(std::string_view("q\"b\\n\n r\r t\t \b \f \x01 \x1f end"));
  EXPECT_EQ(w.str(), R"("q\"b\\n\n r\r t\t \b \f \u0001 \u001f end")");
}

TEST(SandboxJsonWriter, EscapesEmbeddedNul) {
  JsonWriter w;
  w.value(std::string_view("a\0b", 3));
  EXPECT_EQ(w.str(), R"("a\u0000b")");
}

TEST(SandboxJsonWriter, PassesUtf8ThroughUnchanged) {
  JsonWriter w;
  w.value("Zoë – 東京 🚚");
  EXPECT_EQ(w.str(), "\"Zoë – 東京 🚚\"");
  simdjson::dom::parser parser;
  std::string_view back;
  ASSERT_EQ(parser.parse(w.str()).get_string().get(back), simdjson::SUCCESS);
  EXPECT_EQ(back, "Zoë – 東京 🚚");
}

TEST(SandboxJsonWriter, WritesIntegerExtremes) {
  JsonWriter w;
  w.begin_array()
      .value(std::numeric_limits<std::int64_t>::min())
      .value(std::numeric_limits<std::int64_t>::max())
      .value(std::numeric_limits<std::uint64_t>::max())
      .value(0)
      .value(-1)
      .end_array();
  EXPECT_EQ(w.str(), "[-9223372036854775808,9223372036854775807,18446744073709551615,0,-1]");
}

TEST(SandboxJsonWriter, WritesShortestRoundTripDoublesAndNullForNonFinite) {
  JsonWriter w;
  w.begin_array()
      .value(12.3)
      .value(0.1)
      .value(1e21)
      .value(-2.5)
      .value(std::numeric_limits<double>::quiet_NaN())
      .value(std::numeric_limits<double>::infinity())
      .end_array();
  EXPECT_EQ(w.str(), "[12.3,0.1,1e+21,-2.5,null,null]");
}

TEST(SandboxJsonWriter, RawNumberKeepsExactMoneyText) {
  JsonWriter w;
  w.begin_object().key("total_price").raw_number("12.30").key("big").raw_number("12345678901234567890.01").end_object();
  EXPECT_EQ(w.str(), R"({"total_price":12.30,"big":12345678901234567890.01})");
}

TEST(SandboxJsonWriter, RawValueEmbedsPreSerialisedJson) {
  JsonWriter w;
  w.begin_object().key("recipient").raw_value(R"({"name":"x"})").field("n", 1).end_object();
  EXPECT_EQ(w.str(), R"({"recipient":{"name":"x"},"n":1})");
}

TEST(SandboxJsonWriter, OptionalValuesBecomeNullWhenEmpty) {
  JsonWriter w;
  w.begin_object()
      .field("a", std::optional<std::string>())
      .field("b", std::optional<std::string>("x"))
      .field("c", std::optional<int>(3))
      .end_object();
  EXPECT_EQ(w.str(), R"({"a":null,"b":"x","c":3})");
}

TEST(SandboxJsonWriter, EscapesKeys) {
  JsonWriter w;
  w.begin_object().field("", 1).field("a\"b", 2).end_object();
  EXPECT_EQ(w.str(), R"({"":1,"a\"b":2})");
}

TEST(SandboxJsonWriter, OutputParsesBackWithSimdjson) {
  JsonWriter w;
  w.begin_object().field("text", std::string("line1\nline2\x7f\x02")).field("n", 1.5).end_object();
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  ASSERT_EQ(parser.parse(w.str()).get(root), simdjson::SUCCESS);
  std::string_view text;
  ASSERT_EQ(root["text"].get_string().get(text), simdjson::SUCCESS);
  EXPECT_EQ(text, "line1\nline2\x7f\x02");
}

TEST(SandboxJsonWriter, ClearAndTakeStartOver) {
  JsonWriter w;
  w.begin_array().value(1).end_array();
  EXPECT_EQ(w.take(), "[1]");
  w.clear();
  w.value("x");
  EXPECT_EQ(w.str(), "\"x\"");
  EXPECT_EQ(quoted("a\tb"), "\"a\\tb\"");
}

}  // namespace
}  // namespace fulfillsync::json
