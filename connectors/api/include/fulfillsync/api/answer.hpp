#pragma once
// A call's answer with its body read as a model: what every operation of the Provider returns.
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "fulfillsync/api/models/decode.hpp"
#include "fulfillsync/api/outcome.hpp"

namespace fulfillsync::api {

// What became of one call, and its body read as T when the call succeeded. A body that does not read
// is a value here too: `unreadable` says why, and the outcome is kept whole (its kind, status and
// headers), because the caller decides by them whether to retry, back off or look up.
template <typename T>
struct Answer {
  Outcome outcome{};
  std::optional<T> value{};               // set when the call succeeded and its body reads as T
  std::optional<JsonError> unreadable{};  // the call succeeded, but its body does not read as T

  bool ok() const { return value.has_value(); }
  explicit operator bool() const { return ok(); }
  T& operator*() { return *value; }
  const T& operator*() const { return *value; }
  T* operator->() { return &*value; }
  const T* operator->() const { return &*value; }

  // Why there is no value: what became of the call, or what is wrong with its body.
  std::string why() const { return unreadable ? unreadable->to_string() : outcome.detail; }

  // The same answer with its value passed through `f` (e.g. to the caller's own record of it).
  template <typename F>
  auto map(F&& f) && -> Answer<std::invoke_result_t<F, T&&>> {
    Answer<std::invoke_result_t<F, T&&>> mapped{std::move(outcome), std::nullopt, std::move(unreadable)};
    if (value) mapped.value = std::forward<F>(f)(std::move(*value));
    return mapped;
  }
};

// `outcome` with its body decoded as T when it succeeded.
template <typename T>
Answer<T> read_answer(Outcome outcome, ApiVersion version) {
  Answer<T> answer{std::move(outcome)};
  if (!answer.outcome.ok()) return answer;
  auto decoded = decode<T>(answer.outcome.response.body, version);
  if (decoded) {
    answer.value = std::move(*decoded);
  } else {
    answer.unreadable = decoded.error();
  }
  return answer;
}

}  // namespace fulfillsync::api
