#pragma once
// UTC ISO 8601 date-times as the API writes them (`2026-03-01T12:34:56.789+00:00`), to and from
// std::chrono::system_clock time points.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace fulfillsync::timestamps {

using Clock = std::chrono::system_clock;
using TimePoint = Clock::time_point;

// Parses `YYYY-MM-DD`, optionally followed by `T` (or `t` or a space) and `hh:mm`, `hh:mm:ss` or
// `hh:mm:ss.fraction` (1 to 9 digits, more are truncated to the clock's precision), optionally
// followed by `Z`, `z` or an offset `+hh:mm`, `-hh:mm`, `+hhmm`, `+hh`. A missing offset means UTC
// (the API's filters document no time zone; UTC is what every fulfillsync component sends).
// A date alone is midnight UTC. Returns nothing for anything else, including out-of-range fields
// (month 13, February 30, hour 24, leap second 60) and trailing characters. Valid dates the clock
// cannot hold (after 2262 or before 1677 with a nanosecond system_clock) saturate to
// TimePoint::max() and TimePoint::min().
std::optional<TimePoint> parse_iso8601(std::string_view text);

enum class Precision { seconds, milliseconds, microseconds };

// `2026-03-01T12:34:56.789+00:00` (with Precision::milliseconds, the default); the value is
// truncated towards the past to the precision. Years outside 0000..9999 are not supported.
std::string format_iso8601(TimePoint when, Precision precision = Precision::milliseconds);

// The same with a `Z` suffix instead of `+00:00`.
std::string format_iso8601_z(TimePoint when, Precision precision = Precision::milliseconds);

// HTTP's Date header (RFC 9110 IMF-fixdate): `Sun, 06 Nov 1994 08:49:37 GMT`, whole seconds.
std::string format_http_date(TimePoint when);
// Reads the IMF-fixdate form only (the obsolete RFC 850 and asctime forms are not sent by servers
// today); nothing for anything else.
std::optional<TimePoint> parse_http_date(std::string_view text);

}  // namespace fulfillsync::timestamps
