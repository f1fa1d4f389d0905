#pragma once
// The two value types whose JSON text matters beyond its number: money, kept as the exact decimal
// text the provider sent (no binary rounding on its way to the merchant's database), and date-times,
// parsed to a time point.
#include <string>
#include <string_view>

#include "fulfillsync/common/timestamps.hpp"

namespace fulfillsync::api {

// An amount as its exact JSON number text, e.g. "12.30" or "0".
struct Money {
  std::string text{};

  // Whether `text` is a JSON number (RFC 8259), the only form money is read or written in.
  static bool is_valid_text(std::string_view text);
  // Whether we may send it: at most 18 integer digits, 12 decimals and a 2-digit exponent, which
  // the provider's decimal type and every JSON parser on the way (simdjson refuses integers beyond
  // 64 bits) read exactly. Real amounts are far inside.
  static bool is_sendable_text(std::string_view text);
  friend bool operator==(const Money&, const Money&) = default;
};

struct DateTime {
  timestamps::TimePoint at{};

  // ISO 8601 in UTC with as many fraction digits as needed (milliseconds or microseconds), so
  // what the provider sent is re-emitted to the microsecond.
  std::string to_iso8601() const;
  friend bool operator==(const DateTime&, const DateTime&) = default;
};

}  // namespace fulfillsync::api
