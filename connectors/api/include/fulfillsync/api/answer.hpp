#pragma once
// The body of a call's answer as a model: what every job that reads the provider does first.
#include <optional>
#include <string>
#include <utility>

#include "fulfillsync/api/models/decode.hpp"
#include "fulfillsync/api/outcome.hpp"

namespace fulfillsync::api {

// The answer's body decoded as T when the call succeeded; otherwise nothing, and `why` says what
// became of the call or why its body cannot be read.
template <typename T>
std::optional<T> answer_of(const Outcome& outcome, ApiVersion version, std::string& why) {
  if (!outcome.ok()) {
    why = outcome.detail;
    return std::nullopt;
  }
  auto decoded = decode<T>(outcome.response.body, version);
  if (!decoded) {
    why = decoded.error().to_string();
    return std::nullopt;
  }
  return std::move(*decoded);
}

}  // namespace fulfillsync::api
