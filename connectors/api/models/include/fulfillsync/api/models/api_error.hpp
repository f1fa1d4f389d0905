#pragma once
// What an error body says, whatever its shape: ASP.NET problem details (with an `errors` object of
// field to messages), the duplicate-order `{"": ["Cannot insert order with existing ReferenceId"]}`,
// the 2026-01 `PUT /return` shape (`details`, `errors[]`, `message`, `stackTrace`), the 429
// `{"statusCode":429,"message":...}`, a batch item's `{code, message}`, or anything else (kept as text).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fulfillsync::api {

struct FieldError {
  std::string field;  // may be empty (the duplicate-order shape uses "")
  std::string message{};
  friend bool operator==(const FieldError&, const FieldError&) = default;
};

struct ApiError {
  std::string message;  // the best one-line summary the body offers (title, detail, message, ...)
  std::vector<FieldError> field_errors{};
  std::optional<std::string> code{};  // `code` of batch item errors, `type` of problem details
  std::optional<int> status{};        // `status` / `statusCode` when the body carries one
  // The body itself (at most 4 KiB) when it was not a JSON object we understood.
  std::optional<std::string> raw{};

  // The 422 the provider answers to a create whose `reference_id` already exists.
  bool is_duplicate_reference() const;
  // Message and field errors on one line, for logs and the result tables' `last_error`.
  std::string summary() const;
};

// Never fails and never throws: a body that is not JSON, or JSON of an unknown shape, ends up in `raw`.
ApiError decode_api_error(std::string_view body) noexcept;

}  // namespace fulfillsync::api
