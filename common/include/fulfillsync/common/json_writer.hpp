#pragma once
// A small streaming JSON writer: appends to one std::string, places commas itself, and escapes
// strings per RFC 8259 (control characters as \uXXXX, UTF-8 passed through unchanged).
//
//   JsonWriter w;
//   w.begin_object().field("id", 7).key("tags").begin_array().value("a").end_array().end_object();
//   std::string body = w.take();   // {"id":7,"tags":["a"]}
//
// Misuse (a value where a key is due, unbalanced ends) is a programming error caught by assert.
#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fulfillsync::json {

class JsonWriter {
 public:
  JsonWriter() = default;
  explicit JsonWriter(std::size_t reserve) { out_.reserve(reserve); }

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  // The name of the next member of the enclosing object.
  JsonWriter& key(std::string_view name);

  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(const std::string& text) { return value(std::string_view(text)); }
  JsonWriter& value(bool flag);
  template <std::integral Int>
    requires(!std::same_as<Int, bool> && !std::same_as<Int, char>)
  JsonWriter& value(Int number) {
    if constexpr (std::signed_integral<Int>) {
      return integer(static_cast<std::int64_t>(number));
    } else {
      return unsigned_integer(static_cast<std::uint64_t>(number));
    }
  }
  // Shortest text that reads back to the same double; NaN and infinities become null.
  JsonWriter& value(double number);
  // `text` must already be a valid JSON number (e.g. "12.30" kept exact for money).
  JsonWriter& raw_number(std::string_view text);
  JsonWriter& null();
  // A complete, valid JSON value written verbatim (e.g. an object stored as minified text).
  JsonWriter& raw_value(std::string_view json);

  // Null when empty, the value otherwise.
  template <typename T>
  JsonWriter& value(const std::optional<T>& maybe) {
    return maybe ? value(*maybe) : null();
  }

  template <typename T>
  JsonWriter& field(std::string_view name, const T& v) {
    key(name);
    return value(v);
  }
  JsonWriter& field(std::string_view name, const char* text) { return key(name).value(std::string_view(text)); }
  JsonWriter& null_field(std::string_view name) { return key(name).null(); }

  const std::string& str() const { return out_; }
  std::string take() { return std::move(out_); }
  // True once every opened object and array is closed and something was written.
  bool complete() const { return open_.empty() && !out_.empty(); }
  void clear();

 private:
  JsonWriter& integer(std::int64_t number);
  JsonWriter& unsigned_integer(std::uint64_t number);
  void before_value();

  std::string out_;
  // One entry per open container: kObject when it is an object, plus kNotEmpty once it holds an
  // element (a comma is due before the next one).
  static constexpr unsigned char kObject = 1;
  static constexpr unsigned char kNotEmpty = 2;
  std::vector<unsigned char> open_;
  bool after_key_ = false;
};

// Appends `text` as a quoted, escaped JSON string.
void append_quoted(std::string& out, std::string_view text);

// `text` as a quoted, escaped JSON string.
std::string quoted(std::string_view text);

}  // namespace fulfillsync::json
