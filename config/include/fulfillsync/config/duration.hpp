#pragma once
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace fulfillsync::config {

// "250ms", "30s", "5m", "1h", "2d", or a sum of them such as "1m30s". A bare number has no unit and
// is refused: "30" could mean seconds or milliseconds.
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

// The shortest form parse_duration reads back: "1m30s", "250ms", "0s".
std::string format_duration(std::chrono::milliseconds duration);

}  // namespace fulfillsync::config
