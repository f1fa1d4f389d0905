#pragma once
// Every error body the sandbox sends, one builder per shape the provider uses.
#include <string_view>

#include "fulfillsync/sandbox/http_types.hpp"
#include "fulfillsync/sandbox/validation.hpp"

namespace fulfillsync::sandbox {

// ASP.NET problem details: type, title, status, detail, instance. `with_errors` adds an empty
// `errors` object (the shape of the older 404s of /receiving).
HttpResponse problem(int status, std::string_view detail, std::string_view instance, bool with_errors = false);

// Problem details of a validation failure with `errors`: field name to messages.
HttpResponse validation_problem(int status, const Validation& validation, std::string_view instance);

// The 422 of PUT /return/{id} from 2026-01: details, errors[], message, stackTrace.
HttpResponse return_update_failure(const Validation& validation);

// Production's answer to a duplicate reference_id: 422 {"": ["Cannot insert order with existing ReferenceId"]}.
HttpResponse duplicate_reference(std::string_view what);

// Production's 429 with x-retry-after (seconds) and x-remaining-calls 0.
HttpResponse rate_limited(int retry_after_seconds);

// RFC 6749 section 5.2 error of the token endpoint.
HttpResponse oauth_error(int status, std::string_view error, std::string_view description);

}  // namespace fulfillsync::sandbox
