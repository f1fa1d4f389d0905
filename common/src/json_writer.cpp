#include "fulfillsync/common/json_writer.hpp"

#include <cassert>
#include <charconv>
#include <cmath>

namespace fulfillsync::json {

void append_quoted(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  std::size_t run_start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;  // the common case: copied in runs below
    out.append(text.data() + run_start, i - run_start);
    run_start = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        out += "\\u00";
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 0xF]);
    }
  }
  out.append(text.data() + run_start, text.size() - run_start);
  out.push_back('"');
}

std::string quoted(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  append_quoted(out, text);
  return out;
}

void JsonWriter::before_value() {
  if (open_.empty()) {
    assert(out_.empty() && "only one top-level value");
    return;
  }
  unsigned char& top = open_.back();
  if (top & kObject) {
    assert(after_key_ && "an object member needs a key first");
    after_key_ = false;
    return;
  }
  if (top & kNotEmpty) out_.push_back(',');
  top |= kNotEmpty;
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  out_.push_back('{');
  open_.push_back(kObject);
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  assert(!open_.empty() && (open_.back() & kObject) && !after_key_);
  out_.push_back('}');
  open_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  before_value();
  out_.push_back('[');
  open_.push_back(0);
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  assert(!open_.empty() && !(open_.back() & kObject));
  out_.push_back(']');
  open_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  assert(!open_.empty() && (open_.back() & kObject) && !after_key_);
  unsigned char& top = open_.back();
  if (top & kNotEmpty) out_.push_back(',');
  top |= kNotEmpty;
  append_quoted(out_, name);
  out_.push_back(':');
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
  before_value();
  append_quoted(out_, text);
  return *this;
}

JsonWriter& JsonWriter::value(bool flag) {
  before_value();
  out_ += flag ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::integer(std::int64_t number) {
  before_value();
  char buffer[24];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, number);
  out_.append(buffer, result.ptr);
  return *this;
}

JsonWriter& JsonWriter::unsigned_integer(std::uint64_t number) {
  before_value();
  char buffer[24];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, number);
  out_.append(buffer, result.ptr);
  return *this;
}

JsonWriter& JsonWriter::value(double number) {
  if (!std::isfinite(number)) return null();
  before_value();
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, number);
  out_.append(buffer, result.ptr);
  return *this;
}

JsonWriter& JsonWriter::raw_number(std::string_view text) {
  before_value();
  out_.append(text);
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  out_ += "null";
  return *this;
}

JsonWriter& JsonWriter::raw_value(std::string_view json) {
  before_value();
  out_.append(json);
  return *this;
}

void JsonWriter::clear() {
  out_.clear();
  open_.clear();
  after_key_ = false;
}

}  // namespace fulfillsync::json
