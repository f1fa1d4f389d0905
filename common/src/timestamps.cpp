#include "fulfillsync/common/timestamps.hpp"

#include "fulfillsync/common/time_zone.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

namespace fulfillsync::timestamps {
namespace {

using namespace std::chrono;

// Reads exactly `count` digits at `pos`, advancing it.
bool read_digits(std::string_view text, std::size_t& pos, int count, int& value) {
  if (pos + static_cast<std::size_t>(count) > text.size()) return false;
  int result = 0;
  for (int i = 0; i < count; ++i) {
    const char c = text[pos + static_cast<std::size_t>(i)];
    if (c < '0' || c > '9') return false;
    result = result * 10 + (c - '0');
  }
  pos += static_cast<std::size_t>(count);
  value = result;
  return true;
}

bool consume(std::string_view text, std::size_t& pos, char expected) {
  if (pos < text.size() && text[pos] == expected) {
    ++pos;
    return true;
  }
  return false;
}

void append_padded(std::string& out, std::int64_t value, int width) {
  char buffer[24];
  int length = 0;
  do {
    buffer[length++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value > 0);
  for (int i = length; i < width; ++i) out.push_back('0');
  while (length > 0) out.push_back(buffer[--length]);
}

// The day of `when` and the time into it. By integer division: floor<days>() overflows near
// TimePoint::min(), where parse_iso8601() puts every earlier date.
std::pair<sys_days, TimePoint::duration> split_day(TimePoint when) {
  constexpr auto kTicksPerDay = duration_cast<TimePoint::duration>(days{1}).count();
  auto day = when.time_since_epoch().count() / kTicksPerDay;
  auto in_day = when.time_since_epoch().count() % kTicksPerDay;
  if (in_day < 0) {
    --day;
    in_day += kTicksPerDay;
  }
  return {sys_days{days{day}}, TimePoint::duration{in_day}};
}

std::string format(TimePoint when, Precision precision, std::string_view suffix) {
  const auto [day, in_day] = split_day(when);
  const year_month_day date{day};
  const hh_mm_ss<microseconds> time{duration_cast<microseconds>(in_day)};
  std::string out;
  out.reserve(32);
  append_padded(out, static_cast<int>(date.year()), 4);
  out.push_back('-');
  append_padded(out, static_cast<unsigned>(date.month()), 2);
  out.push_back('-');
  append_padded(out, static_cast<unsigned>(date.day()), 2);
  out.push_back('T');
  append_padded(out, time.hours().count(), 2);
  out.push_back(':');
  append_padded(out, time.minutes().count(), 2);
  out.push_back(':');
  append_padded(out, time.seconds().count(), 2);
  const auto micros = time.subseconds().count();
  if (precision == Precision::milliseconds) {
    out.push_back('.');
    append_padded(out, micros / 1000, 3);
  } else if (precision == Precision::microseconds) {
    out.push_back('.');
    append_padded(out, micros, 6);
  }
  out.append(suffix);
  return out;
}

}  // namespace

std::optional<TimePoint> parse_iso8601(std::string_view text) {
  bool naive = false;
  return parse_iso8601(text, naive);
}

std::optional<TimePoint> parse_iso8601(std::string_view text, bool& naive) {
  naive = true;
  std::size_t pos = 0;
  int y = 0, mo = 0, d = 0;
  if (!read_digits(text, pos, 4, y) || !consume(text, pos, '-') || !read_digits(text, pos, 2, mo) ||
      !consume(text, pos, '-') || !read_digits(text, pos, 2, d)) {
    return std::nullopt;
  }
  const year_month_day date{year{y}, month{static_cast<unsigned>(mo)}, day{static_cast<unsigned>(d)}};
  if (!date.ok()) return std::nullopt;
  // Whole seconds in 64 bits first: years 0000..9999 fit, while the clock's nanoseconds do not.
  seconds whole = sys_days{date}.time_since_epoch();
  std::int64_t nanos = 0;

  if (pos < text.size()) {
    if (text[pos] != 'T' && text[pos] != 't' && text[pos] != ' ') return std::nullopt;
    ++pos;
    int h = 0, mi = 0, s = 0;
    if (!read_digits(text, pos, 2, h) || !consume(text, pos, ':') || !read_digits(text, pos, 2, mi)) {
      return std::nullopt;
    }
    if (consume(text, pos, ':') && !read_digits(text, pos, 2, s)) return std::nullopt;
    if (h > 23 || mi > 59 || s > 59) return std::nullopt;
    whole += hours{h} + minutes{mi} + seconds{s};

    if (consume(text, pos, '.') || consume(text, pos, ',')) {
      int digits = 0;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
        if (digits < 9) {
          nanos = nanos * 10 + (text[pos] - '0');
          ++digits;
        }
        ++pos;
      }
      if (digits == 0) return std::nullopt;
      for (int i = digits; i < 9; ++i) nanos *= 10;
    }

    if (pos < text.size()) {
      naive = false;
      if (text[pos] == 'Z' || text[pos] == 'z') {
        ++pos;
      } else if (text[pos] == '+' || text[pos] == '-') {
        const bool east = text[pos] == '+';
        ++pos;
        int oh = 0, om = 0;
        if (!read_digits(text, pos, 2, oh)) return std::nullopt;
        if (pos < text.size()) {
          consume(text, pos, ':');
          if (!read_digits(text, pos, 2, om)) return std::nullopt;
        }
        if (oh > 23 || om > 59) return std::nullopt;
        const auto offset = hours{oh} + minutes{om};
        whole -= east ? offset : -offset;
      } else {
        return std::nullopt;
      }
      if (pos != text.size()) return std::nullopt;
    }
  }
  // Beyond what the clock holds (about 1678..2262 with nanoseconds) saturates: "9999-12-31" is
  // a common way to say "no end", and it must stay later than every real time.
  constexpr auto kMax = duration_cast<seconds>(TimePoint::duration::max()) - seconds{1};
  constexpr auto kMin = duration_cast<seconds>(TimePoint::duration::min()) + seconds{1};
  if (whole > kMax) return TimePoint::max();
  if (whole < kMin) return TimePoint::min();
  return TimePoint{duration_cast<TimePoint::duration>(whole) + duration_cast<TimePoint::duration>(nanoseconds{nanos})};
}

std::string format_iso8601(TimePoint when, Precision precision) { return format(when, precision, "+00:00"); }

std::string format_iso8601_z(TimePoint when, Precision precision) { return format(when, precision, "Z"); }

namespace {
constexpr std::array<std::string_view, 7> kWeekdays = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
constexpr std::array<std::string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
}  // namespace

std::string format_http_date(TimePoint when) {
  const auto [day, in_day] = split_day(when);
  const year_month_day date{day};
  const hh_mm_ss<seconds> time{floor<seconds>(in_day)};
  std::string out;
  out.reserve(29);
  out.append(kWeekdays[weekday{day}.c_encoding()]).append(", ");
  append_padded(out, static_cast<unsigned>(date.day()), 2);
  out.push_back(' ');
  out.append(kMonths[static_cast<unsigned>(date.month()) - 1]).push_back(' ');
  append_padded(out, static_cast<int>(date.year()), 4);
  out.push_back(' ');
  append_padded(out, time.hours().count(), 2);
  out.push_back(':');
  append_padded(out, time.minutes().count(), 2);
  out.push_back(':');
  append_padded(out, time.seconds().count(), 2);
  out.append(" GMT");
  return out;
}

std::optional<TimePoint> parse_http_date(std::string_view text) {
  // `Www, DD Mmm YYYY hh:mm:ss GMT`: the weekday is redundant and not checked against the date.
  if (text.size() != 29 || text.substr(3, 2) != ", " || text[7] != ' ' || text[11] != ' ' || text[16] != ' ' ||
      text.substr(25) != " GMT") {
    return std::nullopt;
  }
  if (std::find(kWeekdays.begin(), kWeekdays.end(), text.substr(0, 3)) == kWeekdays.end()) return std::nullopt;
  const auto month = std::find(kMonths.begin(), kMonths.end(), text.substr(8, 3));
  if (month == kMonths.end()) return std::nullopt;
  // The rest is an ISO 8601 date-time in other clothes.
  std::string iso;
  iso.append(text.substr(12, 4)).push_back('-');
  append_padded(iso, month - kMonths.begin() + 1, 2);
  iso.append("-").append(text.substr(5, 2)).append("T").append(text.substr(17, 8)).append("Z");
  return parse_iso8601(iso);
}

}  // namespace fulfillsync::timestamps
