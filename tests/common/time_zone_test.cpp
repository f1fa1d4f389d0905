// Wall-clock times read in IANA zones from the system's zoneinfo. Expected instants are Python's
// zoneinfo (fold=0) over the same tzdata.
#include "fulfillsync/common/time_zone.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace fulfillsync::timestamps {
namespace {

using namespace std::chrono;
using namespace std::chrono_literals;

TimeZone zone(std::string_view name) {
  std::string why;
  auto found = TimeZone::locate(name, why);
  EXPECT_TRUE(found) << why;
  return found ? *found : TimeZone::utc();
}

// `wall` ("2026-03-29T02:30:00", no offset) in `zone`, as the contract's UTC form.
std::string instant(const TimeZone& zone, std::string_view wall) {
  const auto parsed = parse_iso8601(wall, zone);
  return parsed ? format_iso8601_z(*parsed) : "(no time)";
}

TEST(TimeZoneTest, UtcReadsNoFileAndChangesNothing) {
  const TimeZone utc = TimeZone::utc();
  EXPECT_EQ(utc.name(), "UTC");
  EXPECT_EQ(instant(utc, "2026-03-29 02:30:00"), "2026-03-29T02:30:00.000Z");
  std::string why;
  ASSERT_TRUE(TimeZone::locate("UTC", why));
  EXPECT_EQ(TimeZone::locate("UTC", why)->name(), "UTC");
}

TEST(TimeZoneTest, NaiveTimesAreReadInTheZoneAndOthersKeepTheirOffset) {
  const TimeZone berlin = zone("Europe/Berlin");
  EXPECT_EQ(instant(berlin, "2026-01-15T12:00:00"), "2026-01-15T11:00:00.000Z");
  EXPECT_EQ(instant(berlin, "2026-07-15 12:00:00"), "2026-07-15T10:00:00.000Z");  // SQLite's form
  EXPECT_EQ(instant(berlin, "2026-07-15T12:00:00.250"), "2026-07-15T10:00:00.250Z");
  EXPECT_EQ(instant(berlin, "2026-07-15"), "2026-07-14T22:00:00.000Z");  // a date alone: local midnight
  EXPECT_EQ(instant(berlin, "2026-07-15T12:00:00Z"), "2026-07-15T12:00:00.000Z");
  EXPECT_EQ(instant(berlin, "2026-07-15T12:00:00-05:00"), "2026-07-15T17:00:00.000Z");
  EXPECT_EQ(instant(berlin, "yesterday"), "(no time)");
  EXPECT_EQ(instant(zone("Asia/Kolkata"), "2026-07-15T12:00:00"), "2026-07-15T06:30:00.000Z");
  EXPECT_EQ(berlin.offset_at(*parse_iso8601("2026-07-15T12:00:00Z")), 2h);
  EXPECT_EQ(berlin.offset_at(*parse_iso8601("2026-12-15T12:00:00Z")), 1h);
}

// Clocks put forward skip an hour: a wall time in it keeps the offset of before the change. Clocks
// put back repeat one: the earlier instant.
TEST(TimeZoneTest, ASkippedOrRepeatedWallTimeTakesTheOffsetOfBeforeTheChange) {
  const TimeZone berlin = zone("Europe/Berlin");
  EXPECT_EQ(instant(berlin, "2026-03-29T01:59:59"), "2026-03-29T00:59:59.000Z");
  EXPECT_EQ(instant(berlin, "2026-03-29T02:30:00"), "2026-03-29T01:30:00.000Z");  // skipped
  EXPECT_EQ(instant(berlin, "2026-03-29T03:00:00"), "2026-03-29T01:00:00.000Z");
  EXPECT_EQ(instant(berlin, "2026-10-25T01:59:59"), "2026-10-24T23:59:59.000Z");
  EXPECT_EQ(instant(berlin, "2026-10-25T02:00:00"), "2026-10-25T00:00:00.000Z");  // repeated: the first
  EXPECT_EQ(instant(berlin, "2026-10-25T02:30:00"), "2026-10-25T00:30:00.000Z");
  EXPECT_EQ(instant(berlin, "2026-10-25T03:00:00"), "2026-10-25T02:00:00.000Z");

  const TimeZone new_york = zone("America/New_York");
  EXPECT_EQ(instant(new_york, "2026-03-08T02:30:00"), "2026-03-08T07:30:00.000Z");
  EXPECT_EQ(instant(new_york, "2026-11-01T01:30:00"), "2026-11-01T05:30:00.000Z");
}

// After the file's last transition (2037 in Debian's files; every year in a "slim" file) the POSIX
// rule at its end decides, in the southern hemisphere too, where summer spans the new year.
TEST(TimeZoneTest, TheRuleAfterTheLastTransitionDecides) {
  const TimeZone berlin = zone("Europe/Berlin");
  EXPECT_EQ(instant(berlin, "2100-07-01T12:00:00"), "2100-07-01T10:00:00.000Z");
  EXPECT_EQ(instant(berlin, "2100-03-28T02:30:00"), "2100-03-28T01:30:00.000Z");
  EXPECT_EQ(instant(berlin, "2100-10-31T02:30:00"), "2100-10-31T00:30:00.000Z");
  const TimeZone sydney = zone("Australia/Sydney");
  EXPECT_EQ(instant(sydney, "2050-01-15T12:00:00"), "2050-01-15T01:00:00.000Z");
  EXPECT_EQ(instant(sydney, "2050-07-15T12:00:00"), "2050-07-15T02:00:00.000Z");
  EXPECT_EQ(instant(sydney, "2050-04-03T02:30:00"), "2050-04-02T15:30:00.000Z");  // repeated
  EXPECT_EQ(instant(sydney, "2050-10-02T02:30:00"), "2050-10-01T16:30:00.000Z");  // skipped
}

class ZoneDirectory : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = std::filesystem::temp_directory_path() /
          ("fulfillsync-tz-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir / "Test");
    const char* previous = std::getenv("TZDIR");
    if (previous != nullptr) saved = previous;
    ::setenv("TZDIR", dir.c_str(), 1);
  }
  void TearDown() override {
    if (saved) ::setenv("TZDIR", saved->c_str(), 1);
    else ::unsetenv("TZDIR");
    std::filesystem::remove_all(dir);
  }
  void write(const std::string& name, const std::string& bytes) {
    std::ofstream(dir / name, std::ios::binary) << bytes;
  }

  // A version 2 TZif file with no transitions and one type (`offset`, "CET"): its rule does everything.
  static std::string slim_file(std::int32_t offset, std::string_view rule) {
    std::string block;
    const auto be32 = [&](std::uint32_t v) {
      for (int shift = 24; shift >= 0; shift -= 8) block.push_back(static_cast<char>(v >> shift & 0xff));
    };
    std::string header = "TZif2" + std::string(15, '\0');
    block.clear();
    for (std::uint32_t count : {0u, 0u, 0u, 0u, 1u, 4u}) be32(count);  // isut, isstd, leap, time, type, char
    header += block;
    block.clear();
    be32(static_cast<std::uint32_t>(offset));
    block += std::string("\0\0CET\0", 6);
    return header + block + header + block + "\n" + std::string(rule) + "\n";
  }

  std::filesystem::path dir;
  std::optional<std::string> saved;
};

TEST_F(ZoneDirectory, ASlimFileReadByItsRuleAgreesWithTheFullOne) {
  write("Test/Slim", slim_file(3600, "CET-1CEST,M3.5.0,M10.5.0/3"));
  std::string why;
  const auto slim = TimeZone::locate("Test/Slim", why);
  ASSERT_TRUE(slim) << why;
  ::setenv("TZDIR", "/usr/share/zoneinfo", 1);
  const TimeZone berlin = zone("Europe/Berlin");
  // Every 37 minutes for ten years, across every change of those years.
  for (auto at = sys_days{2020y / 1 / 1}; at < sys_days{2030y / 1 / 1}; at += days{1}) {
    for (auto in_day = 0min; in_day < 24h; in_day += 37min) {
      const LocalTime wall{duration_cast<TimePoint::duration>(at.time_since_epoch() + in_day)};
      ASSERT_EQ(slim->to_instant(wall), berlin.to_instant(wall)) << format_iso8601_z(TimePoint{wall.time_since_epoch()});
    }
  }
}

TEST_F(ZoneDirectory, NamesThatAreNoZoneAreRefusedWithTheReason) {
  write("Test/Garbage", "not a zone file at all");
  write("Test/BadRule", slim_file(3600, "CET-1CEST"));
  std::string why;
  EXPECT_FALSE(TimeZone::locate("Test/Nowhere", why));
  EXPECT_NE(why.find("'Test/Nowhere' is not a time zone"), std::string::npos) << why;
  EXPECT_FALSE(TimeZone::locate("Test", why));  // a directory
  EXPECT_NE(why.find("'Test' is not a time zone"), std::string::npos) << why;
  for (const char* name : {"../Test/Slim", "/etc/passwd", "", "Test/", "Europe Berlin"}) {
    EXPECT_FALSE(TimeZone::locate(name, why)) << name;
    EXPECT_NE(why.find("is not a time zone name"), std::string::npos) << why;
  }
  EXPECT_FALSE(TimeZone::locate("Test/Garbage", why));
  EXPECT_NE(why.find("is not a zoneinfo file this reader understands (no TZif header)"), std::string::npos) << why;
  EXPECT_FALSE(TimeZone::locate("Test/BadRule", why));
  EXPECT_NE(why.find("the rule 'CET-1CEST'"), std::string::npos) << why;
}

}  // namespace
}  // namespace fulfillsync::timestamps
