#pragma once
// The outcome of decoding a body or encoding a request: the value, or an error naming the JSON path
// where it went wrong. Bad remote data is a value here, never an exception.
#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace fulfillsync::api {

struct JsonError {
  std::string path{};     // e.g. `items[3].shipments[0].last_update_at`; empty for the whole body
  std::string message{};  // e.g. `expected a date-time, found "yesterday"`

  std::string to_string() const { return path.empty() ? message : path + ": " + message; }
  friend bool operator==(const JsonError&, const JsonError&) = default;
};

template <typename T>
class Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}
  Result(JsonError error) : state_(std::in_place_index<1>, std::move(error)) {}

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok() && "value() of a failed result");
    return std::get<0>(state_);
  }
  const T& value() const& {
    assert(ok() && "value() of a failed result");
    return std::get<0>(state_);
  }
  T&& value() && {
    assert(ok() && "value() of a failed result");
    return std::get<0>(std::move(state_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const JsonError& error() const {
    assert(!ok() && "error() of a successful result");
    return std::get<1>(state_);
  }

 private:
  std::variant<T, JsonError> state_;
};

template <typename T>
using Decoded = Result<T>;
using Encoded = Result<std::string>;

}  // namespace fulfillsync::api
