#include "fulfillsync/common/timestamps.hpp"

#include <gtest/gtest.h>

namespace fulfillsync::timestamps {
namespace {

using namespace std::chrono;

TimePoint at(int y, unsigned mo, unsigned d, int h = 0, int mi = 0, int s = 0, int ms = 0) {
  return sys_days{year{y} / month{mo} / day{d}} + hours{h} + minutes{mi} + seconds{s} + milliseconds{ms};
}

TEST(SandboxTimestamps, ParsesTheApiFormatWithOffsetAndMilliseconds) {
  EXPECT_EQ(parse_iso8601("2026-03-01T12:34:56.789+00:00"), at(2026, 3, 1, 12, 34, 56, 789));
}

TEST(SandboxTimestamps, ParsesZuluAndLowerCaseSeparators) {
  EXPECT_EQ(parse_iso8601("2026-03-01T12:34:56Z"), at(2026, 3, 1, 12, 34, 56));
  EXPECT_EQ(parse_iso8601("2026-03-01t12:34:56z"), at(2026, 3, 1, 12, 34, 56));
  EXPECT_EQ(parse_iso8601("2026-03-01 12:34:56Z"), at(2026, 3, 1, 12, 34, 56));
}

TEST(SandboxTimestamps, AppliesPositiveAndNegativeOffsets) {
  EXPECT_EQ(parse_iso8601("2026-03-01T12:00:00+02:00"), at(2026, 3, 1, 10));
  EXPECT_EQ(parse_iso8601("2026-03-01T12:00:00-05:30"), at(2026, 3, 1, 17, 30));
  EXPECT_EQ(parse_iso8601("2026-03-01T12:00:00+0200"), at(2026, 3, 1, 10));
  EXPECT_EQ(parse_iso8601("2026-03-01T12:00:00+02"), at(2026, 3, 1, 10));
  EXPECT_EQ(parse_iso8601("2026-01-01T01:00:00+02:00"), at(2025, 12, 31, 23));
}

TEST(SandboxTimestamps, ReadsFractionsOfAnyLength) {
  EXPECT_EQ(parse_iso8601("2026-03-01T00:00:00.5Z"), at(2026, 3, 1, 0, 0, 0, 500));
  EXPECT_EQ(parse_iso8601("2026-03-01T00:00:00.123456Z"), at(2026, 3, 1) + microseconds{123456});
  EXPECT_EQ(parse_iso8601("2026-03-01T00:00:00.1234567891234Z"), at(2026, 3, 1) + nanoseconds{123456789});
}

TEST(SandboxTimestamps, DateOnlyAndMissingOffsetMeanUtc) {
  EXPECT_EQ(parse_iso8601("2026-03-01"), at(2026, 3, 1));
  EXPECT_EQ(parse_iso8601("2026-03-01T08:09"), at(2026, 3, 1, 8, 9));
  EXPECT_EQ(parse_iso8601("2026-03-01T08:09:10"), at(2026, 3, 1, 8, 9, 10));
}

TEST(SandboxTimestamps, AcceptsLeapDaysOnlyInLeapYears) {
  EXPECT_TRUE(parse_iso8601("2024-02-29T00:00:00Z"));
  EXPECT_TRUE(parse_iso8601("2000-02-29T00:00:00Z"));
  EXPECT_FALSE(parse_iso8601("2026-02-29T00:00:00Z"));
  EXPECT_FALSE(parse_iso8601("1900-02-29T00:00:00Z"));
}

TEST(SandboxTimestamps, RefusesMalformedText) {
  for (const char* text : {"", "2026", "2026-3-1", "2026-13-01", "2026-00-10", "2026-04-31", "2026-03-01T24:00:00Z",
                           "2026-03-01T12:60:00Z", "2026-03-01T12:00:60Z", "2026-03-01T12:00:00+25:00",
                           "2026-03-01T12:00:00Zjunk", "2026-03-01T12:00:00.Z", "2026-03-01X12:00:00Z",
                           "2026-03-01T12", "2026-03-01T12:00:00+0", "not a date", "2026-03-01T12:00:00 Z"}) {
    EXPECT_FALSE(parse_iso8601(text)) << text;
  }
}

TEST(SandboxTimestamps, DatesBeyondTheClockSaturate) {
  EXPECT_EQ(parse_iso8601("9999-12-31T23:59:59Z"), TimePoint::max());
  EXPECT_EQ(parse_iso8601("2999-01-01"), TimePoint::max());
  EXPECT_EQ(parse_iso8601("0001-01-01T00:00:00Z"), TimePoint::min());
  EXPECT_LT(*parse_iso8601("2262-01-01T00:00:00Z"), TimePoint::max());
  // Found by fuzz/sandbox_requests: formatting the earliest time point used to overflow.
  EXPECT_EQ(format_iso8601(TimePoint::min()), "1677-09-21T00:12:43.145+00:00");
  EXPECT_EQ(format_iso8601(TimePoint::max()), "2262-04-11T23:47:16.854+00:00");
}

TEST(SandboxTimestamps, FormatsWithMillisecondsAndUtcOffset) {
  EXPECT_EQ(format_iso8601(at(2026, 3, 1, 12, 34, 56, 789)), "2026-03-01T12:34:56.789+00:00");
  EXPECT_EQ(format_iso8601(at(2026, 3, 1, 1, 2, 3, 4)), "2026-03-01T01:02:03.004+00:00");
  EXPECT_EQ(format_iso8601_z(at(2026, 3, 1, 12, 34, 56, 789)), "2026-03-01T12:34:56.789Z");
}

TEST(SandboxTimestamps, FormatsOtherPrecisionsTruncating) {
  const TimePoint when = at(2026, 3, 1, 12, 34, 56) + microseconds{789999};
  EXPECT_EQ(format_iso8601(when, Precision::seconds), "2026-03-01T12:34:56+00:00");
  EXPECT_EQ(format_iso8601(when, Precision::milliseconds), "2026-03-01T12:34:56.789+00:00");
  EXPECT_EQ(format_iso8601(when, Precision::microseconds), "2026-03-01T12:34:56.789999+00:00");
}

TEST(SandboxTimestamps, FormatsTimesBeforeTheEpoch) {
  EXPECT_EQ(format_iso8601(at(1969, 12, 31, 23, 59, 59, 500)), "1969-12-31T23:59:59.500+00:00");
}

TEST(SandboxTimestamps, RoundTripsThroughFormatAndParse) {
  for (TimePoint when : {at(2026, 3, 1, 12, 34, 56, 789), at(1999, 12, 31, 23, 59, 59, 999), at(2024, 2, 29)}) {
    EXPECT_EQ(parse_iso8601(format_iso8601(when)), when);
    EXPECT_EQ(parse_iso8601(format_iso8601_z(when)), when);
  }
}

TEST(SandboxTimestamps, HttpDatesAreImfFixdateInWholeSeconds) {
  EXPECT_EQ(format_http_date(at(1994, 11, 6, 8, 49, 37, 999)), "Sun, 06 Nov 1994 08:49:37 GMT");
  EXPECT_EQ(format_http_date(at(2026, 11, 23, 0, 0, 5)), "Mon, 23 Nov 2026 00:00:05 GMT");
  EXPECT_EQ(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"), at(1994, 11, 6, 8, 49, 37));
  EXPECT_EQ(parse_http_date(format_http_date(at(2028, 2, 29, 23, 59, 59))), at(2028, 2, 29, 23, 59, 59));
  for (const char* bad : {"", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
                          "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 31 Feb 1994 08:49:37 GMT",
                          "Xyz, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Now 1994 08:49:37 GMT",
                          "Sun, 06 Nov 1994 08:49:3x GMT"}) {
    EXPECT_FALSE(parse_http_date(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace fulfillsync::timestamps
