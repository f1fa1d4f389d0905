#include "fulfillsync/config/duration.hpp"

#include <gtest/gtest.h>

namespace fulfillsync::config {
namespace {

using namespace std::chrono_literals;

TEST(DurationTest, ReadsEachUnitAndSums) {
  EXPECT_EQ(parse_duration("250ms"), 250ms);
  EXPECT_EQ(parse_duration("30s"), 30s);
  EXPECT_EQ(parse_duration("5m"), 5min);
  EXPECT_EQ(parse_duration("1h"), 1h);
  EXPECT_EQ(parse_duration("2d"), 48h);
  EXPECT_EQ(parse_duration("1m30s"), 90s);
  EXPECT_EQ(parse_duration("0s"), 0ms);
}

TEST(DurationTest, RefusesWhatIsNotADuration) {
  EXPECT_EQ(parse_duration(""), std::nullopt);
  EXPECT_EQ(parse_duration("30"), std::nullopt);  // no unit
  EXPECT_EQ(parse_duration("s"), std::nullopt);
  EXPECT_EQ(parse_duration("5 m"), std::nullopt);
  EXPECT_EQ(parse_duration("-5s"), std::nullopt);
  EXPECT_EQ(parse_duration("1.5s"), std::nullopt);
  EXPECT_EQ(parse_duration("3weeks"), std::nullopt);
  EXPECT_EQ(parse_duration("99999999999999999d"), std::nullopt);
}

TEST(DurationTest, FormatsWhatParsesBack) {
  EXPECT_EQ(format_duration(90s), "1m30s");
  EXPECT_EQ(format_duration(250ms), "250ms");
  EXPECT_EQ(format_duration(0ms), "0s");
  EXPECT_EQ(format_duration(10min), "10m");
  for (std::chrono::milliseconds d : {1ms, 1500ms, 3601000ms, 86400001ms}) EXPECT_EQ(parse_duration(format_duration(d)), d);
}

}  // namespace
}  // namespace fulfillsync::config
