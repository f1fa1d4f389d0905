#include "fulfillsync/common/timestamps.hpp"

#include <cstdint>

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

std::string format(TimePoint when, Precision precision, std::string_view suffix) {
  const auto day_start = floor<days>(when);
  const year_month_day date{day_start};
  const auto in_day = duration_cast<microseconds>(when - day_start);
  const hh_mm_ss<microseconds> time{in_day};
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

}  // namespace fulfillsync::timestamps
