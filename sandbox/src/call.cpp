#include "fulfillsync/sandbox/call.hpp"

#include "fulfillsync/sandbox/sandbox.hpp"

namespace fulfillsync::sandbox {

HttpResponse json_response(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

std::optional<simdjson::dom::object> body_object(Call& call, Validation& validation) {
  const auto root = parse_body(call.sandbox.parser(), call.request.body, validation);
  if (!root) return std::nullopt;
  simdjson::dom::object object;
  if (root->get_object().get(object) != simdjson::SUCCESS) {
    validation.add("$", "The request body must be a JSON object.");
    return std::nullopt;
  }
  return object;
}

HttpResponse not_found(const Call& call, std::string_view what) {
  // The 404s of /receiving keep an empty `errors` before 2026-07.
  const bool with_errors = call.version < Version::v2026_07 && call.path().find("/receiving") != std::string_view::npos;
  return problem(404, std::string(what) + " was not found.", call.path(), with_errors);
}

std::optional<Id> param_id(const Call& call, std::size_t index) {
  if (index >= call.params.size()) return std::nullopt;
  const auto value = parse_int(call.params[index]);
  if (!value || *value <= 0) return std::nullopt;
  return value;
}

std::optional<PageWindow> read_page_window(const Call& call, Validation& validation, std::string_view page_name,
                                           std::string_view limit_name, std::int64_t default_limit,
                                           std::int64_t max_limit) {
  PageWindow window;
  window.limit = default_limit;
  if (auto page = call.query.integer(page_name, 1, 2147483647, validation)) window.page = *page;
  if (auto limit = call.query.integer(limit_name, 1, max_limit, validation)) window.limit = *limit;
  if (!validation.ok()) return std::nullopt;
  return window;
}

void set_page_headers(const Call& call, HttpResponse& response, const PageWindow& window, std::size_t total,
                      std::string_view page_name) {
  const auto limit = static_cast<std::size_t>(window.limit);
  const std::size_t total_pages = (total + limit - 1) / limit;
  response.set_header("page-number", std::to_string(window.page));
  response.set_header("total-pages", std::to_string(total_pages));
  if (static_cast<std::size_t>(window.page) < total_pages) {
    response.set_header("next-page",
                        std::string(call.path()) + "?" + call.query.with(page_name, std::to_string(window.page + 1)));
  }
}

void write_cursor_links(json::JsonWriter& w, const Call& call, std::string_view cursor_name, std::int64_t cursor,
                        std::size_t total_pages, bool with_first_last) {
  const auto link = [&](std::int64_t page) {
    return std::string(call.path()) + "?" + call.query.with(cursor_name, std::to_string(page));
  };
  const auto pages = static_cast<std::int64_t>(total_pages);
  if (cursor < pages) {
    w.field("next", link(cursor + 1));
  } else {
    w.null_field("next");
  }
  if (cursor > 1 && pages > 0) {
    w.field("prev", link(std::min(cursor - 1, pages)));
  } else {
    w.null_field("prev");
  }
  if (with_first_last) {
    w.field("first", link(1));
    w.field("last", link(pages > 0 ? pages : 1));
  }
}

}  // namespace fulfillsync::sandbox
