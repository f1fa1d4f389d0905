#include "fulfillsync/sandbox/validation.hpp"

#include <cmath>

#include <fmt/format.h>

namespace fulfillsync::sandbox {

using simdjson::dom::element_type;

void Validation::add(std::string field, std::string message) {
  for (auto& [name, messages] : errors_) {
    if (name == field) {
      messages.push_back(std::move(message));
      return;
    }
  }
  errors_.push_back({std::move(field), {std::move(message)}});
}

std::string Validation::first() const {
  if (errors_.empty()) return {};
  return errors_.front().first + ": " + errors_.front().second.front();
}

std::size_t utf8_length(std::string_view text) {
  std::size_t count = 0;
  for (char c : text) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++count;
  }
  return count;
}

std::string ObjectReader::path(std::string_view key) const {
  if (prefix_.empty()) return std::string(key);
  return prefix_ + "." + std::string(key);
}

std::string ObjectReader::index_path(std::string_view key, std::size_t index) const {
  return path(key) + "[" + std::to_string(index) + "]";
}

bool ObjectReader::present(std::string_view key) const {
  simdjson::dom::element value;
  return object_.at_key(key).get(value) == simdjson::SUCCESS && !value.is_null();
}

bool ObjectReader::null(std::string_view key) const {
  simdjson::dom::element value;
  return object_.at_key(key).get(value) == simdjson::SUCCESS && value.is_null();
}

void ObjectReader::refuse_null(std::string_view key) {
  if (null(key)) validation_.add(path(key), "The field " + path(key) + " cannot be null.");
}

std::optional<simdjson::dom::element> ObjectReader::lookup(std::string_view key, bool required) {
  simdjson::dom::element value;
  if (object_.at_key(key).get(value) != simdjson::SUCCESS || value.is_null()) {
    if (required) validation_.add(path(key), "The " + path(key) + " field is required.");
    return std::nullopt;
  }
  return value;
}

void ObjectReader::type_error(std::string_view key, std::string_view expected) {
  validation_.add(path(key), "The " + path(key) + " field must be " + std::string(expected) + ".");
}

std::optional<std::string_view> ObjectReader::string(std::string_view key, StringRule rule) {
  const auto value = lookup(key, rule.required);
  if (!value) return std::nullopt;
  std::string_view text;
  if (value->get_string().get(text) != simdjson::SUCCESS) {
    type_error(key, "a string");
    return std::nullopt;
  }
  const std::size_t length = utf8_length(text);
  if (length < rule.min_length || length > rule.max_length) {
    std::string message = "The field " + path(key) + " must be a string";
    if (rule.max_length == std::numeric_limits<std::size_t>::max()) {
      message += " with a minimum length of " + std::to_string(rule.min_length) + ".";
    } else if (rule.min_length == 0) {
      message += " with a maximum length of " + std::to_string(rule.max_length) + ".";
    } else {
      message += " with a minimum length of " + std::to_string(rule.min_length) + " and a maximum length of " +
                 std::to_string(rule.max_length) + ".";
    }
    validation_.add(path(key), std::move(message));
    return std::nullopt;
  }
  return text;
}

std::optional<std::int64_t> ObjectReader::integer(std::string_view key, IntRule rule) {
  const auto value = lookup(key, rule.required);
  if (!value) return std::nullopt;
  std::int64_t number = 0;
  if (value->type() != element_type::INT64 || value->get_int64().get(number) != simdjson::SUCCESS) {
    type_error(key, "an integer");
    return std::nullopt;
  }
  if (number < rule.min || number > rule.max) {
    validation_.add(path(key), "The field " + path(key) + " must be between " + std::to_string(rule.min) + " and " +
                                   std::to_string(rule.max) + ".");
    return std::nullopt;
  }
  return number;
}

std::optional<double> ObjectReader::number(std::string_view key, bool required) {
  const auto value = lookup(key, required);
  if (!value) return std::nullopt;
  double number = 0;
  if (!value->is_number() || value->get_double().get(number) != simdjson::SUCCESS || !std::isfinite(number)) {
    type_error(key, "a number");
    return std::nullopt;
  }
  return number;
}

std::optional<bool> ObjectReader::boolean(std::string_view key, bool required) {
  const auto value = lookup(key, required);
  if (!value) return std::nullopt;
  bool flag = false;
  if (value->get_bool().get(flag) != simdjson::SUCCESS) {
    type_error(key, "a boolean");
    return std::nullopt;
  }
  return flag;
}

std::optional<timestamps::TimePoint> ObjectReader::date_time(std::string_view key, bool required) {
  const auto value = lookup(key, required);
  if (!value) return std::nullopt;
  std::string_view text;
  if (value->get_string().get(text) != simdjson::SUCCESS) {
    type_error(key, "an ISO 8601 date-time string");
    return std::nullopt;
  }
  auto when = timestamps::parse_iso8601(text);
  if (!when) type_error(key, "an ISO 8601 date-time string");
  return when;
}

std::optional<simdjson::dom::object> ObjectReader::object(std::string_view key, bool required) {
  const auto value = lookup(key, required);
  if (!value) return std::nullopt;
  simdjson::dom::object inner;
  if (value->get_object().get(inner) != simdjson::SUCCESS) {
    type_error(key, "an object");
    return std::nullopt;
  }
  return inner;
}

std::optional<simdjson::dom::array> ObjectReader::array(std::string_view key, bool required, std::size_t min_items) {
  const auto value = lookup(key, required);
  if (!value) return std::nullopt;
  simdjson::dom::array items;
  if (value->get_array().get(items) != simdjson::SUCCESS) {
    type_error(key, "an array");
    return std::nullopt;
  }
  if (items.size() < min_items) {
    validation_.add(path(key), "The field " + path(key) + " must be an array with a minimum length of " +
                                   std::to_string(min_items) + ".");
    return std::nullopt;
  }
  return items;
}

std::optional<std::string> ObjectReader::raw(std::string_view key, element_type kind) {
  const auto value = lookup(key, false);
  if (!value) return std::nullopt;
  if (value->type() != kind) {
    type_error(key, kind == element_type::ARRAY ? "an array" : kind == element_type::OBJECT ? "an object" : "valid");
    return std::nullopt;
  }
  return simdjson::minify(*value);
}

void for_each_object(simdjson::dom::array items, std::string_view array_path, Validation& validation,
                     std::string_view not_object,
                     const std::function<void(ObjectReader& item, const std::string& item_path)>& read_item) {
  std::size_t index = 0;
  for (auto value : items) {
    const std::string item_path = fmt::format("{}[{}]", array_path, index++);
    simdjson::dom::object object;
    if (value.get_object().get(object) != simdjson::SUCCESS) {
      validation.add(item_path, fmt::format(fmt::runtime(not_object), item_path));
      continue;
    }
    ObjectReader item(object, item_path, validation);
    read_item(item, item_path);
  }
}

std::optional<std::string> raw_number_text(const std::string& body, std::initializer_list<std::string_view> path) {
  static thread_local simdjson::ondemand::parser parser;
  const simdjson::padded_string padded(body);
  simdjson::ondemand::document document;
  if (parser.iterate(padded).get(document) != simdjson::SUCCESS) return std::nullopt;
  simdjson::ondemand::value value;
  auto key = path.begin();
  if (key == path.end() || document.find_field_unordered(*key).get(value) != simdjson::SUCCESS) return std::nullopt;
  for (++key; key != path.end(); ++key) {
    if (value.find_field_unordered(*key).get(value) != simdjson::SUCCESS) return std::nullopt;
  }
  simdjson::ondemand::json_type type;
  if (value.type().get(type) != simdjson::SUCCESS || type != simdjson::ondemand::json_type::number) return std::nullopt;
  std::string_view text = value.raw_json_token();
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n' || text.back() == '\r' || text.back() == '\t')) {
    text.remove_suffix(1);
  }
  return std::string(text);
}

std::optional<simdjson::dom::element> parse_body(simdjson::dom::parser& parser, const std::string& body,
                                                 Validation& validation) {
  simdjson::dom::element root;
  // realloc_if_needed copies into a padded buffer when the string lacks SIMDJSON_PADDING capacity.
  const auto error = parser.parse(body.data(), body.size(), true).get(root);
  if (error != simdjson::SUCCESS) {
    validation.add("$", std::string("The request body is not valid JSON: ") + simdjson::error_message(error));
    return std::nullopt;
  }
  return root;
}

}  // namespace fulfillsync::sandbox
