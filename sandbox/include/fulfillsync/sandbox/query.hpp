#pragma once
// Query strings: percent-decoding, case-insensitive lookup (as ASP.NET binds them) and the typed
// readers the list filters share, each recording a validation error naming the parameter.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/sandbox/validation.hpp"

namespace fulfillsync::sandbox {

std::string percent_decode(std::string_view text, bool plus_is_space = true);
std::string percent_encode(std::string_view text);

class Query {
 public:
  Query() = default;
  explicit Query(std::string_view raw);

  std::optional<std::string_view> get(std::string_view name) const;  // case-insensitive
  const std::vector<std::pair<std::string, std::string>>& items() const { return items_; }
  // This query with `name` set to `value` (added or replaced), encoded.
  std::string with(std::string_view name, std::string_view value) const;

  std::optional<std::int64_t> integer(std::string_view name, std::int64_t min, std::int64_t max,
                                      Validation& validation) const;
  std::optional<bool> boolean(std::string_view name, Validation& validation) const;
  std::optional<timestamps::TimePoint> date_time(std::string_view name, Validation& validation) const;
  // Comma-separated values; empty entries are skipped.
  std::vector<std::string> list(std::string_view name) const;
  // Comma-separated integers (GET /order `IDs`); a value that is not one is refused (400).
  std::optional<std::vector<std::int64_t>> integer_list(std::string_view name, Validation& validation) const;
  // A comma-separated id filter, typed as a string by the spec: absent gives nullopt; a value that
  // is not a number is no id of anything, so it matches nothing rather than being refused.
  std::optional<std::vector<std::int64_t>> id_list(std::string_view name) const;

 private:
  std::vector<std::pair<std::string, std::string>> items_;
};

// Splits "a,b,,c" into non-empty trimmed parts.
std::vector<std::string> split_list(std::string_view text);
std::optional<std::int64_t> parse_int(std::string_view text);

}  // namespace fulfillsync::sandbox
