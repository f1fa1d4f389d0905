#include "json_reader.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include <fmt/format.h>

namespace fulfillsync::api::detail {
namespace {

// raw_json_token() runs up to the next token, so it may end in whitespace.
std::string_view trimmed_token(od::value& value) {
  std::string_view token = value.raw_json_token();
  while (!token.empty() &&
         (token.back() == ' ' || token.back() == '\n' || token.back() == '\r' || token.back() == '\t')) {
    token.remove_suffix(1);
  }
  return token;
}

// What the error message shows of an offending value: scalars as written, containers by kind.
std::string describe(od::value& value) {
  std::string_view token = trimmed_token(value);
  if (token.empty()) return "nothing";
  if (token.front() == '{') return "an object";
  if (token.front() == '[') return "an array";
  constexpr std::size_t kMaxShown = 60;
  if (token.size() > kMaxShown) return std::string(token.substr(0, kMaxShown)) + "...";
  return std::string(token);
}

bool read_string_or_integer(Reader& reader, od::value& value, std::string& out) {
  od::json_type type;
  if (auto error = value.type().get(type)) return reader.fail_syntax(error);
  if (type == od::json_type::number) {
    std::int64_t number = 0;
    if (auto error = value.get_int64().get(number)) return reader.fail_type(error, "a string or an integer", value);
    out = std::to_string(number);
    return true;
  }
  std::string_view text;
  if (auto error = value.get_string().get(text)) return reader.fail_type(error, "a string or an integer", value);
  out.assign(text);
  return true;
}

}  // namespace

bool Reader::fail(std::string message) {
  message_ = std::move(message);
  reversed_path_.clear();
  return false;
}

bool Reader::fail_type(simdjson::error_code error, std::string_view expected, od::value& value) {
  switch (error) {
    case simdjson::INCORRECT_TYPE:
    case simdjson::NUMBER_ERROR: {
      // simdjson calls an integer too big for 64 bits a type error; say what it is.
      const std::string found = describe(value);
      const bool integer_text = found.find_first_not_of("-0123456789") == std::string::npos;
      const bool wanted_integer = expected.find("integer") != std::string_view::npos;
      return fail("expected " + std::string(expected) + ", found " + found +
                  (integer_text && wanted_integer ? " (out of range)" : ""));
    }
    case simdjson::NUMBER_OUT_OF_RANGE:
      return fail("expected " + std::string(expected) + ", found " + describe(value) + " (out of range)");
    default:
      return fail_syntax(error);
  }
}

bool Reader::fail_syntax(simdjson::error_code error) {
  return fail(std::string("malformed JSON: ") + simdjson::error_message(error));
}

bool Reader::fail_missing(std::string_view key) {
  fail("missing required field");
  return at_key(key);
}

bool Reader::at_key(std::string_view key) {
  reversed_path_.emplace_back(key);
  return false;
}

bool Reader::at_index(std::size_t index) {
  reversed_path_.push_back(fmt::format("[{}]", index));
  return false;
}

JsonError Reader::take_error() {
  JsonError error;
  for (auto segment = reversed_path_.rbegin(); segment != reversed_path_.rend(); ++segment) {
    if (!error.path.empty() && segment->front() != '[') error.path.push_back('.');
    error.path += *segment;
  }
  error.message = std::move(message_);
  return error;
}

bool read_key(Reader& reader, od::field& field, std::string_view& key) {
  const char* start = field.key().raw();
  const char* end = start;
  while (*end != '"' && *end != '\\') ++end;  // stage 1 guarantees the closing quote
  if (*end == '"') {
    key = std::string_view(start, static_cast<std::size_t>(end - start));
    return true;
  }
  if (auto error = field.unescaped_key().get(key)) return reader.fail_syntax(error);
  return true;
}

// A string value's text. Strings without escapes (nearly all) are taken straight from the input
// instead of being copied through simdjson's unescaping buffer first.
simdjson::error_code string_text(od::value& value, std::string_view& text) {
  const std::string_view token = trimmed_token(value);
  if (token.size() >= 2 && token.front() == '"' && token.back() == '"' &&
      std::memchr(token.data() + 1, '\\', token.size() - 2) == nullptr) {
    text = token.substr(1, token.size() - 2);
    return simdjson::SUCCESS;
  }
  return value.get_string().get(text);
}

bool read(Reader& reader, od::value& value, std::string& out) {
  std::string_view text;
  if (auto error = string_text(value, text)) return reader.fail_type(error, "a string", value);
  out.assign(text);
  return true;
}

bool read(Reader& reader, od::value& value, std::int64_t& out) {
  if (auto error = value.get_int64().get(out)) return reader.fail_type(error, "an integer", value);
  return true;
}

bool read(Reader& reader, od::value& value, std::int32_t& out) {
  std::int64_t wide = 0;
  if (auto error = value.get_int64().get(wide)) return reader.fail_type(error, "a 32-bit integer", value);
  if (wide < std::numeric_limits<std::int32_t>::min() || wide > std::numeric_limits<std::int32_t>::max()) {
    return reader.fail_type(simdjson::NUMBER_OUT_OF_RANGE, "a 32-bit integer", value);
  }
  out = static_cast<std::int32_t>(wide);
  return true;
}

bool read(Reader& reader, od::value& value, bool& out) {
  if (auto error = value.get_bool().get(out)) return reader.fail_type(error, "a boolean", value);
  return true;
}

bool read(Reader& reader, od::value& value, double& out) {
  if (auto error = value.get_double().get(out)) return reader.fail_type(error, "a number", value);
  return true;
}

bool read(Reader& reader, od::value& value, Money& out) {
  od::json_type type;
  if (auto error = value.type().get(type)) return reader.fail_syntax(error);
  std::string_view text;
  if (type == od::json_type::number) {
    text = trimmed_token(value);
  } else if (type == od::json_type::string) {
    if (auto error = value.get_string().get(text)) return reader.fail_syntax(error);
  } else {
    return reader.fail_type(simdjson::INCORRECT_TYPE, "a decimal amount", value);
  }
  if (!Money::is_valid_text(text)) return reader.fail_type(simdjson::INCORRECT_TYPE, "a decimal amount", value);
  out.text.assign(text);
  return true;
}

namespace {

// The years a nanosecond system_clock can hold (it overflows in 2262). timestamps::parse_iso8601
// does not check this itself, so out-of-range years are refused here first.
bool within_clock_range(std::string_view text) {
  if (text.size() < 4) return true;  // the parser refuses it anyway
  int year = 0;
  for (char c : text.substr(0, 4)) {
    if (c < '0' || c > '9') return true;
    year = year * 10 + (c - '0');
  }
  return year >= 1678 && year <= 2261;
}

}  // namespace

bool read(Reader& reader, od::value& value, DateTime& out) {
  std::string_view text;
  if (auto error = string_text(value, text)) return reader.fail_type(error, "a date-time", value);
  if (!within_clock_range(text)) return reader.fail_type(simdjson::NUMBER_OUT_OF_RANGE, "a date-time", value);
  const auto parsed = timestamps::parse_iso8601(text);
  if (!parsed) return reader.fail_type(simdjson::INCORRECT_TYPE, "a date-time", value);
  out.at = *parsed;
  return true;
}

bool read_string_or_integer(Reader& reader, od::value& value, std::optional<std::string>& out) {
  out.reset();
  return unless_null(reader, value, [&] { return read_string_or_integer(reader, value, out.emplace()); });
}

}  // namespace fulfillsync::api::detail
