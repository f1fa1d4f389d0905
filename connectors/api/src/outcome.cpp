#include "fulfillsync/api/outcome.hpp"

#include <charconv>

#include <fmt/format.h>

namespace fulfillsync::api {

std::string_view to_string(OutcomeKind kind) {
  switch (kind) {
    case OutcomeKind::success: return "success";
    case OutcomeKind::rejected: return "rejected";
    case OutcomeKind::duplicate_reference: return "duplicate_reference";
    case OutcomeKind::throttled: return "throttled";
    case OutcomeKind::unauthorized: return "unauthorized";
    case OutcomeKind::forbidden: return "forbidden";
    case OutcomeKind::ambiguous: return "ambiguous";
    case OutcomeKind::not_sent: return "not_sent";
  }
  return "unknown";
}

std::chrono::milliseconds retry_after_of(const HttpResponse& response, std::chrono::milliseconds fallback) {
  for (const char* name : {"x-retry-after", "retry-after"}) {
    const auto value = response.header(name);
    if (!value) continue;
    double seconds = 0;
    const auto [end, error] = std::from_chars(value->data(), value->data() + value->size(), seconds);
    if (error == std::errc{} && end != value->data() && seconds >= 0 && seconds < 86400) {
      return std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
    }
  }
  return fallback;
}

Outcome classify(TransportResult result) {
  Outcome outcome;
  if (auto* failure = std::get_if<TransportError>(&result)) {
    outcome.kind = failure->stage == TransportError::Stage::sent ? OutcomeKind::ambiguous : OutcomeKind::not_sent;
    outcome.detail = failure->what;
    outcome.certificate_refused = failure->certificate_refused;
    return outcome;
  }
  outcome.response = std::move(std::get<HttpResponse>(result));
  const int status = outcome.status = outcome.response.status;
  if (status >= 200 && status < 300) {
    outcome.kind = OutcomeKind::success;
    return outcome;
  }
  outcome.error = decode_api_error(outcome.response.body);
  outcome.detail = fmt::format("HTTP {}: {}", status, outcome.error.summary());
  if (status == 429) {
    outcome.kind = OutcomeKind::throttled;
    outcome.retry_after = retry_after_of(outcome.response, std::chrono::seconds(10));
  } else if (status == 401) {
    outcome.kind = OutcomeKind::unauthorized;
  } else if (status == 403) {
    outcome.kind = OutcomeKind::forbidden;
  } else if (status == 422 && outcome.error.is_duplicate_reference()) {
    outcome.kind = OutcomeKind::duplicate_reference;
  } else if (status == 408 || status >= 500 || (status == 422 && outcome.error.raw)) {
    // A 422 is also how a duplicate create is refused: one whose body cannot be read may be that.
    outcome.kind = OutcomeKind::ambiguous;
  } else {
    // Other 4xx (400, 404, 409, 422, ...) are definitive for this request as written. Other 1xx/3xx
    // answers are not something this API sends; they are treated as refusals too, never as success.
    outcome.kind = OutcomeKind::rejected;
  }
  return outcome;
}

}  // namespace fulfillsync::api
