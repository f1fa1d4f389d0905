#pragma once
// What became of one API call, in the terms the sync jobs decide by. Every call ends as exactly one
// of these kinds; the jobs look at nothing else to choose between record, retry and reconcile.
#include <chrono>
#include <string>
#include <string_view>

#include "fulfillsync/api/models/api_error.hpp"
#include "fulfillsync/api/transport.hpp"

namespace fulfillsync::api {

enum class OutcomeKind {
  success,              // 2xx
  rejected,             // 4xx: the provider refused this request as it is; `message` says why
  duplicate_reference,  // 422 "Cannot insert order with existing ReferenceId"
  throttled,            // 429: not executed; wait `retry_after`
  unauthorized,         // 401
  forbidden,            // 403
  ambiguous,            // sent, but no answer or a 5xx: it may or may not have been processed
  not_sent,             // no connection, TLS refused, or the request never fully left
};

std::string_view to_string(OutcomeKind kind);

struct Outcome {
  OutcomeKind kind = OutcomeKind::not_sent;
  int status = 0;         // the HTTP status; 0 when there was no answer
  HttpResponse response;  // the answer, when there was one
  ApiError error;         // what an error answer's body says (message, field errors)
  std::chrono::milliseconds retry_after{0};
  std::string detail;     // a line for logs: the transport failure, or the status and the error summary
  // not_sent because the provider's TLS certificate failed verification: a configuration problem
  // (api.ca_file, api.base_url) that retrying does not mend; `detail` says what to change.
  bool certificate_refused = false;

  bool ok() const { return kind == OutcomeKind::success; }
};

// Sorts a transport result into its outcome.
Outcome classify(TransportResult result);

// How long a 429 asks us to wait: x-retry-after, else Retry-After (seconds), else `fallback`.
std::chrono::milliseconds retry_after_of(const HttpResponse& response, std::chrono::milliseconds fallback);

}  // namespace fulfillsync::api
