#include "fulfillsync/common/time_zone.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

#include <fmt/format.h>

namespace fulfillsync::timestamps {
namespace {

using namespace std::chrono;

constexpr std::int64_t kSecondsPerDay = 86400;
// No zone's offset reaches a day (RFC 8536 allows -25:59 to 25:59 in practice: keep them under 26 hours).
constexpr std::int32_t kMaxOffset = 26 * 3600;

std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

int year_of(std::int64_t utc_seconds) {
  return static_cast<int>(year_month_day{sys_days{days{floor_div(utc_seconds, kSecondsPerDay)}}}.year());
}

std::int64_t days_from_civil(int y, unsigned m, unsigned d) {
  return sys_days{year{y} / month{m} / day{d}}.time_since_epoch().count();
}

// The bytes of a TZif file, big-endian integers taken from the front.
class Bytes {
 public:
  explicit Bytes(std::string_view data) : data_(data) {}
  bool skip(std::size_t count) {
    if (count > data_.size()) return false;
    data_.remove_prefix(count);
    return true;
  }
  bool integer(int size, std::int64_t& out) {
    if (static_cast<std::size_t>(size) > data_.size()) return false;
    std::uint64_t value = 0;
    for (int i = 0; i < size; ++i) value = value << 8 | static_cast<unsigned char>(data_[static_cast<std::size_t>(i)]);
    data_.remove_prefix(static_cast<std::size_t>(size));
    // Sign-extend from `size` bytes.
    const int shift = 64 - 8 * size;
    out = static_cast<std::int64_t>(value << shift) >> shift;
    return true;
  }
  std::string_view rest() const { return data_; }

 private:
  std::string_view data_;
};

// --- POSIX TZ rules (RFC 8536 section 3.3, POSIX.1-2017 section 8.3) ---------------------------

class RuleText {
 public:
  explicit RuleText(std::string_view text) : text_(text) {}
  bool done() const { return pos_ == text_.size(); }
  bool consume(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) return ++pos_, true;
    return false;
  }
  bool peek_digit_or_sign() const {
    return pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-' || (text_[pos_] >= '0' && text_[pos_] <= '9'));
  }
  // `std`/`dst`: three or more letters, or <...> of letters, digits, + and -.
  bool name() {
    if (consume('<')) {
      const std::size_t close = text_.find('>', pos_);
      if (close == std::string_view::npos || close - pos_ < 3) return false;
      pos_ = close + 1;
      return true;
    }
    const std::size_t start = pos_;
    while (pos_ < text_.size() && ((text_[pos_] >= 'A' && text_[pos_] <= 'Z') || (text_[pos_] >= 'a' && text_[pos_] <= 'z'))) ++pos_;
    return pos_ - start >= 3;
  }
  bool number(int min, int max, int& out) {
    const std::size_t start = pos_;
    long value = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9' && pos_ - start < 4) {
      value = value * 10 + (text_[pos_++] - '0');
    }
    if (pos_ == start || value < min || value > max) return false;
    out = static_cast<int>(value);
    return true;
  }
  // [+-]hh[:mm[:ss]], hours up to `max_hours`, as seconds.
  bool time(int max_hours, std::int32_t& out) {
    const bool negative = consume('-');
    if (!negative) consume('+');
    int h = 0, m = 0, s = 0;
    if (!number(0, max_hours, h)) return false;
    if (consume(':') && (!number(0, 59, m) || (consume(':') && !number(0, 59, s)))) return false;
    out = (negative ? -1 : 1) * (h * 3600 + m * 60 + s);
    return true;
  }
  bool date(TimeZone::Rule::Date& out) {
    using Kind = TimeZone::Rule::Date::Kind;
    if (consume('J')) {
      out.kind = Kind::julian_no_leap;
      if (!number(1, 365, out.day)) return false;
    } else if (consume('M')) {
      out.kind = Kind::month_week_day;
      if (!number(1, 12, out.month) || !consume('.') || !number(1, 5, out.week) || !consume('.') ||
          !number(0, 6, out.day)) {
        return false;
      }
    } else {
      out.kind = Kind::zero_based;
      if (!number(0, 365, out.day)) return false;
    }
    out.time = 7200;
    return !consume('/') || time(167, out.time);
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

// Nothing for a footer this reader does not understand.
std::optional<TimeZone::Rule> parse_rule(std::string_view text) {
  RuleText in(text);
  TimeZone::Rule rule;
  std::int32_t posix = 0;  // POSIX offsets count west of Greenwich
  if (!in.name() || !in.time(24, posix)) return std::nullopt;
  rule.standard = -posix;
  if (in.done()) return rule;
  if (!in.name()) return std::nullopt;
  std::int32_t daylight = rule.standard + 3600;
  if (in.peek_digit_or_sign()) {
    if (!in.time(24, posix)) return std::nullopt;
    daylight = -posix;
  }
  rule.daylight = daylight;
  // A zone with DST and no rule leaves the dates to the implementation: not one TZif writes.
  if (!in.consume(',') || !in.date(rule.start) || !in.consume(',') || !in.date(rule.end) || !in.done()) {
    return std::nullopt;
  }
  return rule;
}

// Local seconds since the epoch at which `date` falls in `y`.
std::int64_t local_seconds(const TimeZone::Rule::Date& date, int y) {
  using Kind = TimeZone::Rule::Date::Kind;
  std::int64_t day_number = 0;
  switch (date.kind) {
    case Kind::julian_no_leap: {
      const bool leap = year{y}.is_leap();
      day_number = days_from_civil(y, 1, 1) + date.day - 1 + (leap && date.day >= 60 ? 1 : 0);
      break;
    }
    case Kind::zero_based: day_number = days_from_civil(y, 1, 1) + date.day; break;
    case Kind::month_week_day: {
      const auto first = sys_days{year{y} / month{static_cast<unsigned>(date.month)} / day{1}};
      const unsigned first_weekday = weekday{first}.c_encoding();
      const unsigned wanted = static_cast<unsigned>(date.day);
      std::int64_t d = 1 + (wanted + 7 - first_weekday) % 7 + 7 * (date.week - 1);
      const auto month_end = static_cast<unsigned>((year{y} / month{static_cast<unsigned>(date.month)} / std::chrono::last).day());
      while (d > static_cast<std::int64_t>(month_end)) d -= 7;  // week 5: the last such day
      day_number = first.time_since_epoch().count() + d - 1;
      break;
    }
  }
  return day_number * kSecondsPerDay + date.time;
}

// The rule's transitions of the years `first`..`last`, in order; at one instant only the last counts.
std::vector<TimeZone::Transition> rule_transitions(const TimeZone::Rule& rule, int first, int last) {
  std::vector<TimeZone::Transition> out;
  for (int y = first; y <= last; ++y) {
    out.push_back({local_seconds(rule.start, y) - rule.standard, *rule.daylight});
    out.push_back({local_seconds(rule.end, y) - *rule.daylight, rule.standard});
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.at < b.at; });
  std::vector<TimeZone::Transition> unique;
  for (const auto& t : out) {
    if (!unique.empty() && unique.back().at == t.at) unique.back() = t;
    else unique.push_back(t);
  }
  return unique;
}

// The zone's file, checked to be a plain relative name (no way out of the zoneinfo directory).
std::optional<std::filesystem::path> zone_file(std::string_view name) {
  if (name.empty() || name.front() == '/' || name.back() == '/') return std::nullopt;
  for (char c : name) {
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '/' || c == '_' ||
          c == '-' || c == '+')) {
      return std::nullopt;
    }
  }
  if (name.find("//") != std::string_view::npos) return std::nullopt;
  const char* dir = std::getenv("TZDIR");
  return std::filesystem::path(dir != nullptr && *dir != '\0' ? dir : "/usr/share/zoneinfo") / std::string(name);
}

}  // namespace

TimeZone TimeZone::utc() {
  TimeZone zone;
  zone.name_ = "UTC";
  return zone;
}

std::optional<TimeZone> TimeZone::locate(std::string_view name, std::string& why) {
  if (name == "UTC") return utc();
  const auto file = zone_file(name);
  std::error_code error;
  if (!file || !std::filesystem::is_regular_file(*file, error)) {
    why = file ? fmt::format("'{}' is not a time zone: no file {} (IANA names such as Europe/Berlin, from tzdata)",
                             name, file->string())
               : fmt::format("'{}' is not a time zone name (IANA names such as Europe/Berlin)", name);
    return std::nullopt;
  }
  std::ifstream in(*file, std::ios::binary);
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto unreadable = [&](std::string_view what) {
    why = fmt::format("time zone '{}': {} is not a zoneinfo file this reader understands ({})", name, file->string(),
                      what);
    return std::nullopt;
  };
  Bytes bytes(data);
  // The header, then (version 2 and later) a second one whose data has 64-bit times, then the rule.
  std::int64_t counts[6] = {};
  const auto header = [&] {
    if (bytes.rest().substr(0, 4) != "TZif" || !bytes.skip(20)) return false;
    for (auto& count : counts) {
      if (!bytes.integer(4, count) || count < 0) return false;
    }
    return true;
  };
  if (!header()) return unreadable("no TZif header");
  const char version = data[4];
  const auto block_size = [&](int time_size) {
    const auto [isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt] = counts;
    return timecnt * time_size + timecnt + typecnt * 6 + charcnt + leapcnt * (time_size + 4) + isstdcnt + isutcnt;
  };
  int time_size = 4;
  if (version >= '2') {
    if (!bytes.skip(static_cast<std::size_t>(block_size(4))) || !header()) return unreadable("truncated");
    time_size = 8;
  }
  const auto [isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt] = counts;
  if (leapcnt > 0) return unreadable("leap seconds, as in right/ zones: use the zone's plain name");
  if (typecnt == 0) return unreadable("no local time types");

  TimeZone zone;
  zone.name_ = std::string(name);
  std::vector<std::int64_t> times(static_cast<std::size_t>(timecnt));
  for (auto& at : times) {
    if (!bytes.integer(time_size, at)) return unreadable("truncated");
  }
  std::vector<std::int64_t> type_of(static_cast<std::size_t>(timecnt));
  for (auto& type : type_of) {
    if (!bytes.integer(1, type)) return unreadable("truncated");
    type &= 0xff;
    if (type >= typecnt) return unreadable("a transition to no type");
  }
  std::vector<std::int32_t> offsets;
  for (std::int64_t i = 0; i < typecnt; ++i) {
    std::int64_t offset = 0, ignored = 0;
    if (!bytes.integer(4, offset) || !bytes.integer(1, ignored) || !bytes.integer(1, ignored)) {
      return unreadable("truncated");
    }
    if (offset <= -kMaxOffset || offset >= kMaxOffset) return unreadable("an offset of a day or more");
    offsets.push_back(static_cast<std::int32_t>(offset));
  }
  zone.initial_offset_ = offsets.front();  // RFC 8536: type 0 before the first transition
  for (std::size_t i = 0; i < times.size(); ++i) {
    if (i > 0 && times[i] <= times[i - 1]) return unreadable("transitions out of order");
    zone.table_.push_back({times[i], offsets[static_cast<std::size_t>(type_of[i])]});
  }
  if (time_size == 8) {
    if (!bytes.skip(static_cast<std::size_t>(charcnt + isstdcnt + isutcnt))) return unreadable("truncated");
    const std::string_view footer = bytes.rest();
    if (footer.size() < 2 || footer.front() != '\n') return unreadable("no footer");
    const std::size_t end = footer.find('\n', 1);
    if (end == std::string_view::npos) return unreadable("no footer");
    const std::string_view text = footer.substr(1, end - 1);
    if (!text.empty()) {
      zone.rule_ = parse_rule(text);
      if (!zone.rule_) return unreadable(fmt::format("the rule '{}'", text));
      if (!zone.rule_->daylight && zone.table_.empty()) zone.initial_offset_ = zone.rule_->standard;
      if (!zone.rule_->daylight) zone.rule_.reset();  // one offset: the table's last one stands
    }
  }
  return zone;
}

std::vector<TimeZone::Transition> TimeZone::transitions(std::int64_t from, std::int64_t to,
                                                        std::int32_t& offset_before) const {
  std::vector<Transition> out;
  const auto after_from =
      std::upper_bound(table_.begin(), table_.end(), from, [](std::int64_t at, const Transition& t) { return at < t.at; });
  offset_before = after_from == table_.begin() ? initial_offset_ : std::prev(after_from)->offset;
  for (auto it = after_from; it != table_.end() && it->at <= to; ++it) out.push_back(*it);
  const std::int64_t table_end = table_.empty() ? std::numeric_limits<std::int64_t>::min() : table_.back().at;
  if (rule_ && to > table_end) {
    // From the year before (a southern summer spans the new year) `from` or the table's end, the later.
    const int first = year_of(std::max(from, table_end)) - 1;
    for (const Transition& t : rule_transitions(*rule_, first, year_of(to) + 1)) {
      if (t.at <= table_end) continue;
      if (t.at <= from) offset_before = t.offset;
      else if (t.at <= to) out.push_back(t);
    }
  }
  return out;
}

seconds TimeZone::offset_at(TimePoint when) const {
  const std::int64_t at = floor<seconds>(when.time_since_epoch()).count();
  std::int32_t offset = 0;
  transitions(at, at, offset);
  return seconds{offset};
}

TimePoint TimeZone::to_instant(LocalTime local) const {
  const std::int64_t wall = floor<seconds>(local.time_since_epoch()).count();
  const auto fraction = local.time_since_epoch() - seconds{wall};
  // Every instant this wall time can name lies within a day of it.
  std::int32_t offset = 0;
  const auto changes = transitions(wall - 2 * kSecondsPerDay, wall + 2 * kSecondsPerDay, offset);
  // The periods between changes in time order: the first that holds the wall time gives the earliest
  // instant. A wall time past one period's end and before the next one's start is one the change
  // skips: it keeps the offset of before the change.
  for (const Transition& change : changes) {
    if (wall - offset < change.at || wall - change.offset < change.at) break;
    offset = change.offset;
  }
  const std::int64_t instant = wall - offset;
  constexpr auto kMax = duration_cast<seconds>(TimePoint::duration::max()).count() - 1;
  constexpr auto kMin = duration_cast<seconds>(TimePoint::duration::min()).count() + 1;
  if (instant > kMax) return TimePoint::max();
  if (instant < kMin) return TimePoint::min();
  return TimePoint{duration_cast<TimePoint::duration>(seconds{instant}) + fraction};
}

std::optional<TimePoint> parse_iso8601(std::string_view text, const TimeZone& zone) {
  bool naive = false;
  const auto parsed = parse_iso8601(text, naive);
  if (!parsed || !naive || *parsed == TimePoint::max() || *parsed == TimePoint::min()) return parsed;
  return zone.to_instant(LocalTime{parsed->time_since_epoch()});
}

}  // namespace fulfillsync::timestamps
