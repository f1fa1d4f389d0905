#include "fulfillsync/api/models/api_error.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cctype>

namespace fulfillsync::api {
namespace {

namespace od = simdjson::ondemand;

constexpr std::size_t kMaxRawBody = 4096;

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

bool contains_case_insensitive(std::string_view haystack, std::string_view needle) {
  return std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
         }) != haystack.end();
}

// A string, or a number or boolean as its text; nothing for null, objects and arrays.
std::optional<std::string> scalar_text(od::value& value) {
  od::json_type type;
  if (value.type().get(type) != simdjson::SUCCESS) return std::nullopt;
  if (type == od::json_type::string) {
    std::string_view text;
    if (value.get_string().get(text) != simdjson::SUCCESS) return std::nullopt;
    return std::string(text);
  }
  if (type == od::json_type::number || type == od::json_type::boolean) {
    return std::string(trimmed(value.raw_json_token()));
  }
  return std::nullopt;
}

// The members of one error entry that name the field and say what is wrong with it.
FieldError read_error_entry(od::value& value, std::string_view default_field) {
  FieldError entry{std::string(default_field), ""};
  if (auto text = scalar_text(value)) {
    entry.message = std::move(*text);
    return entry;
  }
  od::object object;
  if (value.get_object().get(object) != simdjson::SUCCESS) return entry;
  for (auto maybe_field : object) {
    od::field field;
    std::string_view key;
    if (std::move(maybe_field).get(field) != simdjson::SUCCESS || field.unescaped_key().get(key) != simdjson::SUCCESS)
      break;
    std::string name(key);
    auto text = scalar_text(field.value());
    if (!text) continue;
    if (name == "field" || name == "propertyName" || name == "property" || name == "name" || name == "key") {
      entry.field = std::move(*text);
    } else if (name == "message" || name == "errorMessage" || name == "error" || name == "detail" ||
               (name == "code" && entry.message.empty())) {
      entry.message = std::move(*text);
    }
  }
  return entry;
}

// `errors` (or any member) holding field errors: an object of field to message(s), an array of
// messages or of entries, or one message.
void read_errors(od::value& value, std::string_view field_name, std::vector<FieldError>& out) {
  od::json_type type;
  if (value.type().get(type) != simdjson::SUCCESS) return;
  if (type == od::json_type::object) {
    od::object object;
    if (value.get_object().get(object) != simdjson::SUCCESS) return;
    for (auto maybe_field : object) {
      od::field field;
      std::string_view key;
      if (std::move(maybe_field).get(field) != simdjson::SUCCESS || field.unescaped_key().get(key) != simdjson::SUCCESS)
        return;
      const std::string name(key);
      read_errors(field.value(), name, out);
    }
  } else if (type == od::json_type::array) {
    od::array array;
    if (value.get_array().get(array) != simdjson::SUCCESS) return;
    for (auto maybe_element : array) {
      od::value element;
      if (std::move(maybe_element).get(element) != simdjson::SUCCESS) return;
      FieldError entry = read_error_entry(element, field_name);
      if (!entry.message.empty() || !entry.field.empty()) out.push_back(std::move(entry));
    }
  } else if (auto text = scalar_text(value)) {
    out.push_back(FieldError{std::string(field_name), std::move(*text)});
  }
}

bool is_array(od::value& value) {
  od::json_type type;
  return value.type().get(type) == simdjson::SUCCESS && type == od::json_type::array;
}

// Fills `error` from a JSON object body; false when the body is not one.
bool read_error_body(std::string_view body, ApiError& error) {
  simdjson::padded_string padded(body);
  od::parser parser;
  od::document document;
  od::object object;
  if (parser.iterate(padded).get(document) != simdjson::SUCCESS ||
      document.get_object().get(object) != simdjson::SUCCESS) {
    return false;
  }
  std::optional<std::string> title, detail, details, message;
  for (auto maybe_field : object) {
    od::field field;
    std::string_view key;
    if (std::move(maybe_field).get(field) != simdjson::SUCCESS || field.unescaped_key().get(key) != simdjson::SUCCESS) {
      return false;
    }
    const std::string name(key);
    od::value& value = field.value();
    if (name == "title") {
      title = scalar_text(value);
    } else if (name == "detail") {
      detail = scalar_text(value);
    } else if (name == "details") {
      details = scalar_text(value);
    } else if (name == "message" || name == "Message") {
      message = scalar_text(value);
    } else if (name == "type" || name == "code") {
      if (auto text = scalar_text(value)) error.code = std::move(*text);
    } else if (name == "status" || name == "statusCode") {
      std::int64_t status = 0;
      if (value.get_int64().get(status) == simdjson::SUCCESS && status >= 100 && status <= 599) {
        error.status = static_cast<int>(status);
      }
    } else if (name == "errors") {
      read_errors(value, "", error.field_errors);
    } else if (name == "error") {
      // A batch item's `{code, message}`, or a plain message.
      FieldError entry = read_error_entry(value, "");
      if (!entry.message.empty() && !message) message = std::move(entry.message);
    } else if (is_array(value)) {
      // ModelState-style bodies: `{"": ["Cannot insert order with existing ReferenceId"]}`.
      read_errors(value, name, error.field_errors);
    }
  }
  if (detail) {
    error.message = std::move(*detail);
  } else if (message) {
    error.message = std::move(*message);
  } else if (title) {
    error.message = std::move(*title);
  } else if (details) {
    error.message = std::move(*details);
  } else if (!error.field_errors.empty()) {
    error.message = error.field_errors.front().message;
  }
  return !error.message.empty() || !error.field_errors.empty() || error.code;
}

}  // namespace

bool ApiError::is_duplicate_reference() const {
  constexpr std::string_view kDuplicate = "existing ReferenceId";
  if (contains_case_insensitive(message, kDuplicate)) return true;
  return std::ranges::any_of(field_errors,
                             [&](const FieldError& e) { return contains_case_insensitive(e.message, kDuplicate); });
}

std::string ApiError::summary() const {
  // Problem details often repeat a field error as their `detail`, as "field: message" (the
  // provider's validation answers) or as the message alone: it is said once, as the field error.
  const bool repeated = std::ranges::any_of(field_errors, [&](const FieldError& e) {
    return message == e.message || (!e.field.empty() && message == e.field + ": " + e.message);
  });
  std::string out = repeated ? "" : message;
  for (const FieldError& e : field_errors) {
    if (!out.empty()) out += "; ";
    if (!e.field.empty()) out += e.field + ": ";
    out += e.message;
  }
  if (out.empty() && raw && !trimmed(*raw).empty()) out = "unrecognised error body: " + raw->substr(0, 200);
  if (out.empty()) out = "empty error body";
  return out;
}

ApiError decode_api_error(std::string_view body) noexcept {
  ApiError error;
  try {
    if (read_error_body(body, error)) return error;
  } catch (...) {
    // Only allocation can throw here; fall through to the raw text.
  }
  error = ApiError{};
  error.raw = std::string(body.substr(0, kMaxRawBody));
  error.message = std::string(trimmed(body.substr(0, std::min<std::size_t>(body.find('\n'), 200))));
  return error;
}

}  // namespace fulfillsync::api
