#pragma once
// The two ways the API pages its lists, written once for every pull:
//  - page numbers (GET /order): `Page`/`Limit`, with `page-number`, `total-pages` and `next-page`
//    headers telling whether another page exists;
//  - cursors (GET /channel, /return, /product): the body's `next` link.
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "fulfillsync/api/client.hpp"
#include "fulfillsync/api/url.hpp"

namespace fulfillsync::api {

class PageNumberPager {
 public:
  // `request` is the first page's request without Page and Limit.
  PageNumberPager(Call call, ApiRequest request, int limit);
  PageNumberPager(ApiClient& client, ApiRequest request, int limit)
      : PageNumberPager(call_of(client), std::move(request), limit) {}

  // The next page's outcome, or nothing after the last page. After a failed outcome the walk ends;
  // the caller decides whether to start over.
  boost::asio::awaitable<std::optional<Outcome>> next();
  int page() const { return page_; }

 private:
  Call call_;
  ApiRequest request_;
  int limit_;
  int page_ = 0;
  bool done_ = false;
};

class CursorPager {
 public:
  CursorPager(Call call, ApiRequest request);
  CursorPager(ApiClient& client, ApiRequest request) : CursorPager(call_of(client), std::move(request)) {}

  // The next page's outcome, or nothing once the previous page had no `next` link (see follow()).
  boost::asio::awaitable<std::optional<Outcome>> next();

  // The `next` link of the page just decoded: where next() goes, or the end when empty.
  void follow(const std::optional<std::string>& next_link);

 private:
  Call call_;
  ApiRequest request_;
  Query base_query_;
  bool started_ = false;
  bool done_ = false;
};

}  // namespace fulfillsync::api
