#pragma once
// What an operation handler gets: the request, its version and caller, the path parameters, and
// the sandbox; plus the few response helpers every handler uses.
#include <string>
#include <string_view>
#include <vector>

#include "fulfillsync/common/json_writer.hpp"
#include "fulfillsync/sandbox/auth.hpp"
#include "fulfillsync/sandbox/error_bodies.hpp"
#include "fulfillsync/sandbox/http_types.hpp"
#include "fulfillsync/sandbox/query.hpp"
#include "fulfillsync/sandbox/store.hpp"

namespace fulfillsync::sandbox {

class Sandbox;

struct Call {
  Sandbox& sandbox;
  Store& store;
  const HttpRequest& request;
  Version version;
  Principal principal;
  std::vector<std::string_view> params;  // path parameters in order
  Query query;
  TimePoint now;
  // The channel of `service_channel_id` when one was sent and belongs to the caller's merchant.
  const Channel* channel = nullptr;

  Merchant& merchant() { return store.merchant(principal.merchant_id); }
  std::string_view path() const { return request.path(); }
};

using Handler = HttpResponse (*)(Call&);

HttpResponse json_response(int status, std::string body);
// The request body as a JSON object; otherwise records why under "$".
std::optional<simdjson::dom::object> body_object(Call& call, Validation& validation);
HttpResponse not_found(const Call& call, std::string_view what);
// A path parameter as an id; nothing when it is not a positive integer.
std::optional<Id> param_id(const Call& call, std::size_t index);

// One pager for Page/Limit lists (GET /order): validates the two parameters, and sets
// page-number, total-pages and next-page.
struct PageWindow {
  std::int64_t page = 1;
  std::int64_t limit = 50;
  std::size_t first() const { return static_cast<std::size_t>((page - 1) * limit); }
};
std::optional<PageWindow> read_page_window(const Call& call, Validation& validation, std::string_view page_name,
                                           std::string_view limit_name, std::int64_t default_limit,
                                           std::int64_t max_limit);
void set_page_headers(const Call& call, HttpResponse& response, const PageWindow& window, std::size_t total,
                      std::string_view page_name);

// The `{items, next, prev[, first, last]}` lists: `cursor` is a 1-based page number, links are
// relative URIs of the same query with the cursor replaced.
void write_cursor_links(json::JsonWriter& w, const Call& call, std::string_view cursor_name, std::int64_t cursor,
                        std::size_t total_pages, bool with_first_last);

}  // namespace fulfillsync::sandbox
