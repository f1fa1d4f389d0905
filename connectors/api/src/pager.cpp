#include "fulfillsync/api/pager.hpp"

#include <charconv>

namespace fulfillsync::api {
namespace asio = boost::asio;

namespace {

int header_int(const HttpResponse& response, std::string_view name, int fallback) {
  const auto value = response.header(name);
  int number = fallback;
  if (value) std::from_chars(value->data(), value->data() + value->size(), number);
  return number;
}

}  // namespace

PageNumberPager::PageNumberPager(Call call, ApiRequest request, int limit)
    : call_(std::move(call)), request_(std::move(request)), limit_(limit) {}

asio::awaitable<std::optional<Outcome>> PageNumberPager::next() {
  if (done_) co_return std::nullopt;
  ++page_;
  ApiRequest request = request_;
  request.query.emplace_back("Page", std::to_string(page_));
  request.query.emplace_back("Limit", std::to_string(limit_));
  Outcome outcome = co_await call_(std::move(request));
  if (!outcome.ok()) {
    done_ = true;
    co_return outcome;
  }
  // `next-page` is present when another page exists; `total-pages` says the same for providers
  // that leave it out.
  const bool more = outcome.response.header("next-page").has_value() ||
                    header_int(outcome.response, "page-number", page_) < header_int(outcome.response, "total-pages", 0);
  done_ = !more;
  co_return outcome;
}

CursorPager::CursorPager(Call call, ApiRequest request)
    : call_(std::move(call)), request_(std::move(request)), base_query_(request_.query) {}

asio::awaitable<std::optional<Outcome>> CursorPager::next() {
  if (done_) co_return std::nullopt;
  started_ = true;
  done_ = true;  // until follow() hands over the next link
  Outcome outcome = co_await call_(request_);
  co_return outcome;
}

void CursorPager::follow(const std::optional<std::string>& next_link) {
  if (!started_ || !next_link || next_link->empty()) {
    done_ = true;
    return;
  }
  // The link carries the cursor and the filters; whatever the first request had that the link
  // does not repeat is kept.
  Query query = query_of_link(*next_link);
  for (const auto& parameter : base_query_) {
    bool repeated = false;
    for (const auto& given : query) repeated = repeated || given.first == parameter.first;
    if (!repeated) query.push_back(parameter);
  }
  request_.query = std::move(query);
  done_ = false;
}

}  // namespace fulfillsync::api
