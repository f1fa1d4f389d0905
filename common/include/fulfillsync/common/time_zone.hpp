#pragma once
// IANA time zones (Europe/Berlin), read from the system's zoneinfo files (TZif, RFC 8536), for
// reading wall-clock times that carry no offset as instants.
//
// Why not the standard library: GCC 12's libstdc++ has no tzdb (std::chrono::locate_zone came in
// GCC 13), and localtime_r/mktime read the process-wide TZ, which cannot be switched safely while
// other threads run. A TZif file is small and its format fixed; the POSIX TZ rule at its end covers
// the times after its last transition. A zone is immutable once loaded: share it between threads freely.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fulfillsync/common/timestamps.hpp"

namespace fulfillsync::timestamps {

// A wall-clock time in some zone, not yet an instant.
using LocalTime = std::chrono::local_time<TimePoint::duration>;

class TimeZone {
 public:
  // UTC, without reading any file (so the default works where tzdata is not installed).
  static TimeZone utc();
  // The zone `name` ("Europe/Berlin", "America/New_York", "UTC") from $TZDIR or /usr/share/zoneinfo.
  // Nothing, with the reason in `why`, for a name that is no zone or a file that cannot be read.
  static std::optional<TimeZone> locate(std::string_view name, std::string& why);

  const std::string& name() const { return name_; }

  // The instant the wall-clock time `local` names in this zone. Where the zone's clocks are put back
  // (a repeated hour) it is the earlier of the two instants, and where they are put forward (a
  // skipped hour) it is read with the offset of before the change, as if the clock had not been put
  // forward yet: either way the offset in effect just before the change.
  TimePoint to_instant(LocalTime local) const;

  // Seconds east of UTC at `when`.
  std::chrono::seconds offset_at(TimePoint when) const;

  // A change of offset: from `at` (UTC seconds since the epoch) on, local = UTC + `offset`.
  struct Transition {
    std::int64_t at;
    std::int32_t offset;
  };
  // A POSIX TZ rule ("CET-1CEST,M3.5.0,M10.5.0/3"): the offsets after the file's last transition.
  struct Rule {
    struct Date {
      enum class Kind { julian_no_leap, zero_based, month_week_day } kind = Kind::month_week_day;
      int day = 0, month = 0, week = 0;  // Jn: day 1..365; n: day 0..365; Mm.w.d: month, week 1..5, day 0..6
      std::int32_t time = 7200;          // seconds after local midnight, -167h..167h
    };
    std::int32_t standard = 0;
    std::optional<std::int32_t> daylight{};  // none: no DST
    Date start{}, end{};
  };

 private:
  TimeZone() = default;
  // The transitions between `from` and `to` (UTC seconds), after the offset in effect at `from`.
  std::vector<Transition> transitions(std::int64_t from, std::int64_t to, std::int32_t& offset_before) const;

  std::string name_;
  std::int32_t initial_offset_ = 0;  // before the first transition
  std::vector<Transition> table_;     // from the file, in order
  std::optional<Rule> rule_;          // after the table
};

// parse_iso8601(), setting `naive` to whether `text` has neither `Z` nor an offset (it is then read
// as UTC). Defined in timestamps.cpp, beside the parser.
std::optional<TimePoint> parse_iso8601(std::string_view text, bool& naive);

// `text` as parse_iso8601() reads it, except that a time without `Z` or an offset (ISO 8601 with
// `T`, SQLite's `YYYY-MM-DD HH:MM:SS`, a date alone) is a wall-clock time in `zone`.
std::optional<TimePoint> parse_iso8601(std::string_view text, const TimeZone& zone);

}  // namespace fulfillsync::timestamps
