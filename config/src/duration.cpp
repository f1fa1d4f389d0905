#include "fulfillsync/config/duration.hpp"

#include <charconv>
#include <cstdint>
#include <limits>

namespace fulfillsync::config {

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::int64_t total_ms = 0;
  const char* pos = text.data();
  const char* const end = text.data() + text.size();
  while (pos < end) {
    std::int64_t amount = 0;
    const auto [after_number, error] = std::from_chars(pos, end, amount);
    if (error != std::errc{} || after_number == pos || amount < 0) return std::nullopt;
    const char* unit_end = after_number;
    while (unit_end < end && *unit_end >= 'a' && *unit_end <= 'z') ++unit_end;
    const std::string_view unit(after_number, static_cast<std::size_t>(unit_end - after_number));
    std::int64_t unit_ms = 0;
    if (unit == "ms") unit_ms = 1;
    else if (unit == "s") unit_ms = 1000;
    else if (unit == "m") unit_ms = 60'000;
    else if (unit == "h") unit_ms = 3'600'000;
    else if (unit == "d") unit_ms = 86'400'000;
    else return std::nullopt;
    if (amount > (std::numeric_limits<std::int64_t>::max() - total_ms) / unit_ms) return std::nullopt;
    total_ms += amount * unit_ms;
    pos = unit_end;
  }
  return std::chrono::milliseconds(total_ms);
}

std::string format_duration(std::chrono::milliseconds duration) {
  std::int64_t ms = duration.count();
  if (ms == 0) return "0s";
  std::string out;
  if (ms < 0) {
    out.push_back('-');
    ms = -ms;
  }
  constexpr std::pair<std::int64_t, const char*> units[] = {
      {86'400'000, "d"}, {3'600'000, "h"}, {60'000, "m"}, {1000, "s"}, {1, "ms"}};
  for (const auto& [size, name] : units) {
    if (ms >= size) {
      out += std::to_string(ms / size);
      out += name;
      ms %= size;
    }
  }
  return out;
}

}  // namespace fulfillsync::config
