#pragma once
// Reading a source row's columns into typed values with a reason for each problem: what the
// mappings of orders, returns and the catalog share (request_mapping.cpp, catalog_mapping.cpp).
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <simdjson.h>

#include "fulfillsync/api/models/encode.hpp"
#include "fulfillsync/common/printable.hpp"
#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/merchant/source_rows.hpp"

namespace fulfillsync::daemon::mapping {

using merchant::Field;

enum class Need { optional, required };

// Reads the columns of one row (or line) into typed values, collecting a reason for each problem:
// "<where>: <column> <what is wrong>, found <value>".
class RowReader {
 public:
  RowReader(std::string where, std::vector<std::string>& problems) : where_(std::move(where)), problems_(problems) {}

  void problem(std::string_view column, std::string_view what) {
    problems_.push_back(fmt::format("{}: {} {}", where_, column, what));
  }

  // Text, with SQLite integers taken as their digits (a zip code stored as a number). Empty text is
  // absent. Lengths are characters as the provider counts them.
  std::optional<std::string> text(std::string_view column, const Field& field, Need need, std::size_t max_length,
                                  std::size_t min_length = 0) {
    if (field.type == Field::Type::real || field.type == Field::Type::blob) {
      problem(column, fmt::format("must be text, found {}", field.describe()));
      return std::nullopt;
    }
    std::string value = field.type == Field::Type::integer ? std::to_string(field.integer) : field.text;
    if (field.is_null() || value.empty()) {
      if (need == Need::required) problem(column, fmt::format("is required, found {}", field.describe()));
      return std::nullopt;
    }
    if (!simdjson::validate_utf8(value.data(), value.size())) {
      problem(column, fmt::format("is not valid UTF-8 text, found {}", field.describe()));
      return std::nullopt;
    }
    const std::size_t length = api::provider_length(value);
    if (length > max_length || length < min_length) {
      problem(column, min_length > 0
                          ? fmt::format("must be {} to {} characters, found {}", min_length, max_length, length)
                          : fmt::format("must be at most {} characters, found {}", max_length, length));
      return std::nullopt;
    }
    return value;
  }

  // An integer, also from text or a real holding one exactly.
  std::optional<std::int64_t> integer(std::string_view column, const Field& field, Need need, std::int64_t min,
                                      std::int64_t max = std::numeric_limits<std::int64_t>::max()) {
    std::optional<std::int64_t> value;
    if (field.type == Field::Type::integer) {
      value = field.integer;
    } else if (field.type == Field::Type::text) {
      std::int64_t parsed = 0;
      const char* end = field.text.data() + field.text.size();
      const auto [ptr, ec] = std::from_chars(field.text.data(), end, parsed);
      if (ec == std::errc() && ptr == end && !field.text.empty()) value = parsed;
    } else if (field.type == Field::Type::real && std::trunc(field.real) == field.real &&
               std::abs(field.real) < 9e15) {
      value = static_cast<std::int64_t>(field.real);
    }
    if (field.is_null() || (field.type == Field::Type::text && field.text.empty())) {
      if (need == Need::required) problem(column, fmt::format("is required, found {}", field.describe()));
      return std::nullopt;
    }
    if (!value) {
      problem(column, fmt::format("must be a whole number, found {}", field.describe()));
    } else if (*value < min) {
      problem(column, fmt::format("must be at least {}, found {}", min, *value));
      value.reset();
    } else if (*value > max) {
      problem(column, fmt::format("must be at most {}, found {}", max, *value));
      value.reset();
    }
    return value;
  }

  // Money as exact decimal text ("12.30"); a number SQLite stored as a real is taken at its shortest
  // exact form.
  std::optional<api::Money> money(std::string_view column, const Field& field) {
    std::string text;
    switch (field.type) {
      case Field::Type::null: return std::nullopt;
      case Field::Type::integer: text = std::to_string(field.integer); break;
      case Field::Type::real: text = std::isfinite(field.real) ? fmt::format("{}", field.real) : ""; break;
      case Field::Type::text: text = field.text; break;
      case Field::Type::blob: break;
    }
    if (!api::Money::is_valid_text(text) || text.find_first_of("eE") != std::string::npos) {
      problem(column, fmt::format("must be a decimal number such as 12.30, found {}", field.describe()));
      return std::nullopt;
    }
    if (text.front() == '-') {
      problem(column, fmt::format("must not be negative, found {}", field.describe()));
      return std::nullopt;
    }
    return api::Money{text};
  }

  std::optional<api::DateTime> date_time(std::string_view column, const Field& field) {
    if (field.is_null()) return std::nullopt;
    const auto when = field.type == Field::Type::text ? timestamps::parse_iso8601(field.text) : std::nullopt;
    // A date the clock cannot hold saturates (timestamps.hpp): sending it would send another date.
    if (when == timestamps::TimePoint::min() || when == timestamps::TimePoint::max()) {
      problem(column, fmt::format("must be a date-time between the years 1678 and 2261, found {}", field.describe()));
      return std::nullopt;
    }
    if (when) return api::DateTime{*when};
    problem(column, fmt::format("must be an ISO 8601 date-time such as 2026-03-01T12:34:56Z, found {}",
                                field.describe()));
    return std::nullopt;
  }

  // Tags as a JSON object of names to text values: {"gift": "yes"}.
  std::optional<std::vector<api::Tag>> tags(std::string_view column, const Field& field) {
    if (field.is_null() || (field.type == Field::Type::text && field.text.empty())) return std::nullopt;
    const std::string_view expected = R"(must be a JSON object of names to text values, such as {"gift": "yes"})";
    if (field.type != Field::Type::text) {
      problem(column, fmt::format("{}, found {}", expected, field.describe()));
      return std::nullopt;
    }
    simdjson::dom::parser parser;
    simdjson::dom::object object;
    if (parser.parse(simdjson::padded_string(field.text)).get(object) != simdjson::SUCCESS) {
      problem(column, fmt::format("{}, found {}", expected, field.describe()));
      return std::nullopt;
    }
    std::vector<api::Tag> tags;
    for (auto [key, value] : object) {
      std::string_view text;
      if (key.empty() || value.get_string().get(text) != simdjson::SUCCESS) {
        problem(column, fmt::format("{}; the tag '{}' is not", expected, text::printable(key)));
        return std::nullopt;
      }
      tags.push_back(api::Tag{std::string(key), std::string(text)});
    }
    return tags;
  }

 private:
  std::string where_;
  std::vector<std::string>& problems_;
};

}  // namespace fulfillsync::daemon::mapping
