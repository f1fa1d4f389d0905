#pragma once
// Reading request JSON field by field with the API's rules. Every failure is recorded under the
// field's path (`products[0].quantity`) so one response names every problem at once.
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <simdjson.h>

#include "fulfillsync/common/timestamps.hpp"

namespace fulfillsync::sandbox {

class Validation {
 public:
  void add(std::string field, std::string message);
  bool ok() const { return errors_.empty(); }
  // Field path to messages, in the order first seen.
  const std::vector<std::pair<std::string, std::vector<std::string>>>& errors() const { return errors_; }
  // "field: message" of the first failure.
  std::string first() const;

 private:
  std::vector<std::pair<std::string, std::vector<std::string>>> errors_;
};

struct StringRule {
  bool required = false;
  std::size_t min_length = 0;
  std::size_t max_length = std::numeric_limits<std::size_t>::max();
};

struct IntRule {
  bool required = false;
  std::int64_t min = std::numeric_limits<std::int32_t>::min();
  std::int64_t max = std::numeric_limits<std::int32_t>::max();
};

// Length in Unicode code points (what the API's length limits count), for valid UTF-8.
std::size_t utf8_length(std::string_view text);

// One JSON object being read. Absent and null fields read as nothing (and fail when required).
class ObjectReader {
 public:
  ObjectReader(simdjson::dom::object object, std::string prefix, Validation& validation)
      : object_(object), prefix_(std::move(prefix)), validation_(validation) {}

  std::optional<std::string_view> string(std::string_view key, StringRule rule = {});
  std::optional<std::int64_t> integer(std::string_view key, IntRule rule = {});
  std::optional<double> number(std::string_view key, bool required = false);
  std::optional<bool> boolean(std::string_view key, bool required = false);
  std::optional<timestamps::TimePoint> date_time(std::string_view key, bool required = false);
  std::optional<simdjson::dom::object> object(std::string_view key, bool required = false);
  // An array of at least `min_items` elements.
  std::optional<simdjson::dom::array> array(std::string_view key, bool required = false, std::size_t min_items = 0);
  // The value as minified JSON text, nothing when absent or null. `kind` restricts the type.
  std::optional<std::string> raw(std::string_view key, simdjson::dom::element_type kind);
  bool present(std::string_view key) const;  // present and not null
  bool null(std::string_view key) const;     // present as null
  // A member present as null that the spec does not make nullable: recorded as a validation error.
  void refuse_null(std::string_view key);

  std::string path(std::string_view key) const;
  std::string index_path(std::string_view key, std::size_t index) const;
  Validation& validation() { return validation_; }

 private:
  std::optional<simdjson::dom::element> lookup(std::string_view key, bool required);
  void type_error(std::string_view key, std::string_view expected);

  simdjson::dom::object object_;
  std::string prefix_;
  Validation& validation_;
};

// Reads each item of `items`, the array at `array_path`, as an object under its own path
// (`products[2]`; `[2]` for a top-level array). An item that is not an object is recorded under
// that path with `not_object`, a format string given the path, and skipped.
void for_each_object(simdjson::dom::array items, std::string_view array_path, Validation& validation,
                     std::string_view not_object,
                     const std::function<void(ObjectReader& item, const std::string& item_path)>& read_item);

// The exact text of the number at `path` in `body` (the DOM keeps only a double; money keeps its
// decimals this way), nothing when absent or not a number.
std::optional<std::string> raw_number_text(const std::string& body, std::initializer_list<std::string_view> path);

// Parses a request body; on failure records a `$` error saying why and returns nothing. The
// element lives as long as `parser` is not reused.
std::optional<simdjson::dom::element> parse_body(simdjson::dom::parser& parser, const std::string& body,
                                                 Validation& validation);

}  // namespace fulfillsync::sandbox
