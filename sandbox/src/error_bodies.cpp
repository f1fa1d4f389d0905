#include "fulfillsync/sandbox/error_bodies.hpp"

#include <string>

#include "fulfillsync/common/json_writer.hpp"

namespace fulfillsync::sandbox {
namespace {

std::string_view title_of(int status) {
  switch (status) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    default: return "Error";
  }
}

std::string_view type_of(int status) {
  switch (status) {
    case 400: return "https://tools.ietf.org/html/rfc9110#section-15.5.1";
    case 401: return "https://tools.ietf.org/html/rfc9110#section-15.5.2";
    case 403: return "https://tools.ietf.org/html/rfc9110#section-15.5.4";
    case 404: return "https://tools.ietf.org/html/rfc9110#section-15.5.5";
    case 405: return "https://tools.ietf.org/html/rfc9110#section-15.5.6";
    case 409: return "https://tools.ietf.org/html/rfc9110#section-15.5.10";
    case 413: return "https://tools.ietf.org/html/rfc9110#section-15.5.14";
    case 422: return "https://tools.ietf.org/html/rfc9110#section-15.5.21";
    case 500: return "https://tools.ietf.org/html/rfc9110#section-15.6.1";
    default: return "about:blank";
  }
}

void write_errors(json::JsonWriter& w, const Validation& validation) {
  w.key("errors").begin_object();
  for (const auto& [field, messages] : validation.errors()) {
    w.key(field).begin_array();
    for (const auto& message : messages) w.value(message);
    w.end_array();
  }
  w.end_object();
}

HttpResponse respond(int status, std::string body, std::string_view content_type = "application/problem+json; charset=utf-8") {
  HttpResponse response;
  response.status = status;
  response.content_type = std::string(content_type);
  response.body = std::move(body);
  return response;
}

}  // namespace

HttpResponse problem(int status, std::string_view detail, std::string_view instance, bool with_errors) {
  json::JsonWriter w;
  w.begin_object()
      .field("type", type_of(status))
      .field("title", title_of(status))
      .field("status", status)
      .field("detail", detail)
      .field("instance", instance);
  if (with_errors) w.key("errors").begin_object().end_object();
  w.end_object();
  return respond(status, w.take());
}

HttpResponse validation_problem(int status, const Validation& validation, std::string_view instance) {
  json::JsonWriter w;
  w.begin_object()
      .field("type", type_of(status))
      .field("title", "One or more validation errors occurred.")
      .field("status", status)
      .field("detail", validation.first())
      .field("instance", instance);
  write_errors(w, validation);
  w.end_object();
  return respond(status, w.take());
}

HttpResponse return_update_failure(const Validation& validation) {
  json::JsonWriter w;
  w.begin_object().field("details", validation.first()).key("errors").begin_array();
  for (const auto& [field, messages] : validation.errors()) {
    for (const auto& message : messages) {
      w.begin_object().field("field", field).field("message", message).end_object();
    }
  }
  w.end_array().field("message", "Validation failed").null_field("stackTrace").end_object();
  return respond(422, w.take(), "application/json; charset=utf-8");
}

HttpResponse duplicate_reference(std::string_view what) {
  json::JsonWriter w;
  w.begin_object().key("").begin_array();
  w.value("Cannot insert " + std::string(what) + " with existing ReferenceId");
  w.end_array().end_object();
  return respond(422, w.take(), "application/json; charset=utf-8");
}

HttpResponse rate_limited(int retry_after_seconds) {
  json::JsonWriter w;
  w.begin_object()
      .field("statusCode", 429)
      .field("message", "Rate limit is exceeded. Try again in " + std::to_string(retry_after_seconds) + " seconds.")
      .end_object();
  HttpResponse response = respond(429, w.take(), "application/json; charset=utf-8");
  response.set_header("x-retry-after", std::to_string(retry_after_seconds));
  response.set_header("x-remaining-calls", "0");
  return response;
}

HttpResponse oauth_error(int status, std::string_view error, std::string_view description) {
  json::JsonWriter w;
  w.begin_object().field("error", error).field("error_description", description).end_object();
  HttpResponse response = respond(status, w.take(), "application/json; charset=utf-8");
  response.set_header("cache-control", "no-store");
  return response;
}

}  // namespace fulfillsync::sandbox
