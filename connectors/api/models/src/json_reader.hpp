#pragma once
// The decoding machinery every model decoder uses: typed reads of one JSON value with errors as
// values, the field-path bookkeeping, money as exact text, nullable fields, arrays, and objects
// walked field by field (one pass, any order, unknown fields skipped).
//
// A reader returns false on failure after recording the message; each enclosing level prepends its
// key or index while unwinding, so the success path pays nothing for paths.
#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fulfillsync/api/models/api_version.hpp"
#include "fulfillsync/api/models/result.hpp"
#include "fulfillsync/api/models/scalars.hpp"

namespace fulfillsync::api::detail {

namespace od = simdjson::ondemand;

class Reader {
 public:
  explicit Reader(ApiVersion version) : version_(version) {}
  ApiVersion version() const { return version_; }

  // Records the failure of the value being read. Always returns false.
  bool fail(std::string message);
  // "expected <what>, found <the value's text>"; `error` from simdjson decides the wording.
  bool fail_type(simdjson::error_code error, std::string_view expected, od::value& value);
  // A structural error from simdjson (truncated or malformed body).
  bool fail_syntax(simdjson::error_code error);
  bool fail_missing(std::string_view key);

  // Prepend a path segment to the recorded failure. Always return false.
  bool at_key(std::string_view key);
  bool at_index(std::size_t index);

  JsonError take_error();

 private:
  ApiVersion version_;
  std::string message_;
  std::vector<std::string> reversed_path_;  // innermost segment first
};

// The field's key without unescaping when it has no escapes (all the API's keys).
bool read_key(Reader& reader, od::field& field, std::string_view& key);

// Reads every field of an object: `on_field(key, value)` returns false on failure.
template <typename OnField>
bool read_object(Reader& reader, od::value& value, OnField&& on_field) {
  od::object object;
  if (auto error = value.get_object().get(object)) return reader.fail_type(error, "an object", value);
  for (auto maybe_field : object) {
    od::field field;
    if (auto error = std::move(maybe_field).get(field)) return reader.fail_syntax(error);
    std::string_view key;
    if (!read_key(reader, field, key)) return false;
    if (!on_field(key, field.value())) return reader.at_key(key);
  }
  return true;
}

bool read(Reader& reader, od::value& value, std::string& out);
bool read(Reader& reader, od::value& value, std::int64_t& out);
bool read(Reader& reader, od::value& value, std::int32_t& out);
bool read(Reader& reader, od::value& value, bool& out);
bool read(Reader& reader, od::value& value, double& out);
// The exact number text; a string holding a decimal number is accepted too.
bool read(Reader& reader, od::value& value, Money& out);
bool read(Reader& reader, od::value& value, DateTime& out);

// The one place null is handled: `present()` runs unless the value is null.
// (The type peek first: simdjson's is_null() is for values below the root only, and the root of
// a body is never null here because decode() refuses scalar documents.)
template <typename Present>
bool unless_null(Reader& reader, od::value& value, Present&& present) {
  od::json_type type;
  if (auto error = value.type().get(type)) return reader.fail_syntax(error);
  if (type != od::json_type::null) return present();
  bool is_null = false;  // the peek saw an `n`; this checks the literal is really `null`
  if (auto error = value.is_null().get(is_null)) return reader.fail_syntax(error);
  return is_null || reader.fail_type(simdjson::INCORRECT_TYPE, "null", value);
}

// Nullable: null leaves the optional empty.
template <typename T>
bool read(Reader& reader, od::value& value, std::optional<T>& out) {
  out.reset();
  return unless_null(reader, value, [&] { return read(reader, value, out.emplace()); });
}

// A string, or an integer kept as its text (identifiers whose type the spec leaves open); nullable.
bool read_string_or_integer(Reader& reader, od::value& value, std::optional<std::string>& out);

// Arrays; null reads as empty (the spec's `T[] | null`).
template <typename T>
bool read(Reader& reader, od::value& value, std::vector<T>& out) {
  out.clear();
  return unless_null(reader, value, [&] {
    od::array array;
    if (auto error = value.get_array().get(array)) return reader.fail_type(error, "an array", value);
    std::size_t index = 0;
    for (auto maybe_element : array) {
      od::value element;
      if (auto error = std::move(maybe_element).get(element)) return reader.fail_syntax(error);
      if (!read(reader, element, out.emplace_back())) return reader.at_index(index);
      ++index;
    }
    return true;
  });
}

// Required fields: a decoder reads them through `read_field(index, ...)`, which notes that the key was
// seen, and calls check() once the object is done.
template <std::size_t N>
class RequiredKeys {
 public:
  RequiredKeys(Reader& reader, const std::string_view (&keys)[N]) : reader_(reader), keys_(keys) {}

  template <typename T>
  bool read_field(std::size_t index, od::value& value, T& out) {
    seen_ |= 1u << index;
    return read(reader_, value, out);
  }
  bool check() const {
    for (std::size_t i = 0; i < N; ++i) {
      if (!(seen_ & (1u << i))) return reader_.fail_missing(keys_[i]);
    }
    return true;
  }

 private:
  Reader& reader_;
  const std::string_view (&keys_)[N];
  unsigned seen_ = 0;
};

}  // namespace fulfillsync::api::detail
