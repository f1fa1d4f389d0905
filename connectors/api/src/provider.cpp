#include "fulfillsync/api/provider.hpp"

#include <algorithm>
#include <cassert>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fulfillsync/api/models/encode.hpp"

namespace fulfillsync::api {
namespace asio = boost::asio;

namespace {

// The most a lookup's one page holds: the provider's page limit.
constexpr const char* kLookupLimit = "250";
// Channels a page while choosing one.
constexpr const char* kChannelsPerPage = "50";

// A lookup: `filter` is a comma-separated list, all of it on one page.
template <typename Id>
ApiRequest lookup(const char* route, const char* filter, std::span<const Id> ids, Priority priority) {
  return {.method = "GET",
          .route = route,
          .path = route,
          .query = {{filter, fmt::format("{}", fmt::join(ids, ","))}, {"Limit", kLookupLimit}},
          .priority = priority};
}

// A create or a cancel: sent once (a lost answer is looked up, not resent) and naming the channel.
ApiRequest sending(std::string route, std::string path, std::string body, BeforeSend before_send) {
  return {.method = "POST",
          .route = std::move(route),
          .path = std::move(path),
          .body = std::move(body),
          .priority = Priority::push,
          .idempotent = false,
          .with_channel = true,
          .before_send = std::move(before_send)};
}

ApiRequest pull(std::string route, std::string path, Query query = {}) {
  return {.method = "GET",
          .route = std::move(route),
          .path = std::move(path),
          .query = std::move(query),
          .priority = Priority::pull,
          .with_channel = true};
}

}  // namespace

OrderPages::OrderPages(Call call, ApiRequest request, int page_size, ApiVersion version)
    : pager_(std::move(call), std::move(request), page_size), version_(version) {}

asio::awaitable<std::optional<Answer<OrderPage>>> OrderPages::next() {
  std::optional<Outcome> outcome = co_await pager_.next();
  if (!outcome) co_return std::nullopt;
  co_return read_answer<OrderPage>(std::move(*outcome), version_);
}

ReturnPages::ReturnPages(Call call, ApiRequest request, ApiVersion version)
    : pager_(std::move(call), std::move(request)), version_(version) {}

asio::awaitable<std::optional<Answer<ReturnList>>> ReturnPages::next() {
  std::optional<Outcome> outcome = co_await pager_.next();
  if (!outcome) co_return std::nullopt;
  Answer<ReturnList> page = read_answer<ReturnList>(std::move(*outcome), version_);
  if (page) pager_.follow(page->next);
  co_return page;
}

ProductPages::ProductPages(Call call, ApiRequest request, ApiVersion version)
    : pager_(std::move(call), std::move(request)), version_(version) {}

asio::awaitable<std::optional<Answer<ProductList>>> ProductPages::next() {
  std::optional<Outcome> outcome = co_await pager_.next();
  if (!outcome) co_return std::nullopt;
  Answer<ProductList> page = read_answer<ProductList>(std::move(*outcome), version_);
  if (page) {
    pager_.follow(page->next);
    next_link_ = page->next.value_or("");
  }
  co_return page;
}

Provider::Provider(ApiClient& client)
    : Provider(call_of(client), parse_api_version(client.options().version).value_or(ApiVersion::v2026_07)) {}

Provider::Provider(Call call, ApiVersion version) : call_(std::move(call)), version_(version) {}

template <typename T>
asio::awaitable<Answer<T>> Provider::read(ApiRequest request) {
  Outcome outcome = co_await call_(std::move(request));
  co_return read_answer<T>(std::move(outcome), version_);
}

asio::awaitable<Answer<CreatedOrder>> Provider::create_order(std::string body, BeforeSend before_send) {
  ApiRequest request = sending("/order", "/order", std::move(body), std::move(before_send));
  co_return co_await read<CreatedOrder>(std::move(request));
}

asio::awaitable<Answer<ReturnOrder>> Provider::create_return(std::string body, BeforeSend before_send) {
  ApiRequest request = sending("/return", "/return", std::move(body), std::move(before_send));
  co_return co_await read<ReturnOrder>(std::move(request));
}

asio::awaitable<Outcome> Provider::cancel_order(std::int64_t order_id, BeforeSend before_send) {
  ApiRequest request =
      sending("/order/{orderId}:cancel", fmt::format("/order/{}:cancel", order_id), {}, std::move(before_send));
  co_return co_await call_(std::move(request));
}

asio::awaitable<Answer<TrackingUploadResponse>> Provider::mark_tracking_uploaded(
    std::span<const std::int64_t> shipment_ids) {
  TrackingUploadRequest upload{.is_tracking_uploaded = true,
                               .shipment_ids = {shipment_ids.begin(), shipment_ids.end()}};
  auto encoded = encode(upload, version_);
  assert(encoded && "a list of ids always encodes");
  ApiRequest request{.method = "POST",
                     .route = "/shipment:batchUpdateTrackingUpload",
                     .path = "/shipment:batchUpdateTrackingUpload",
                     .body = std::move(*encoded),
                     .priority = Priority::mark,
                     // Marking twice is harmless at the provider, but each shipment is marked once:
                     // an unclear answer is looked up, not resent.
                     .idempotent = false};
  co_return co_await read<TrackingUploadResponse>(std::move(request));
}

namespace {

// A write to the catalog: at push priority, naming the channel; `idempotent` when sending it again
// sets the same fields.
ApiRequest catalog_write(std::string method, std::string route, std::string path, std::string body,
                         bool idempotent, BeforeSend before_send) {
  return {.method = std::move(method),
          .route = std::move(route),
          .path = std::move(path),
          .body = std::move(body),
          .priority = Priority::push,
          .idempotent = idempotent,
          .with_channel = true,
          .before_send = std::move(before_send)};
}

}  // namespace

asio::awaitable<Answer<Product>> Provider::create_product(std::string body, BeforeSend before_send) {
  ApiRequest request = catalog_write("POST", "/product", "/product", std::move(body), false, std::move(before_send));
  co_return co_await read<Product>(std::move(request));
}

asio::awaitable<Outcome> Provider::update_product(std::int64_t product_id, std::string body,
                                                  BeforeSend before_send) {
  ApiRequest request = catalog_write("PATCH", "/product/{productId}", fmt::format("/product/{}", product_id),
                                     std::move(body), true, std::move(before_send));
  co_return co_await call_(std::move(request));
}

asio::awaitable<Answer<VariantList>> Provider::create_variants(std::int64_t product_id, std::string body,
                                                               BeforeSend before_send) {
  ApiRequest request = catalog_write("POST", "/product/{productId}/variants",
                                     fmt::format("/product/{}/variants", product_id), std::move(body), false,
                                     std::move(before_send));
  co_return co_await read<VariantList>(std::move(request));
}

asio::awaitable<Outcome> Provider::update_variants(std::int64_t product_id, std::string body,
                                                   BeforeSend before_send) {
  ApiRequest request = catalog_write("PATCH", "/product/{productId}/variants",
                                     fmt::format("/product/{}/variants", product_id), std::move(body), true,
                                     std::move(before_send));
  co_return co_await call_(std::move(request));
}

asio::awaitable<Outcome> Provider::product(std::int64_t product_id, BeforeSend before_send) {
  ApiRequest request{.method = "GET",
                     .route = "/product/{productId}",
                     .path = fmt::format("/product/{}", product_id),
                     .priority = Priority::push,
                     .before_send = std::move(before_send)};
  co_return co_await call_(std::move(request));
}

asio::awaitable<Answer<VariantList>> Provider::product_variants(std::int64_t product_id, BeforeSend before_send) {
  ApiRequest request{.method = "GET",
                     .route = "/product/{productId}/variants",
                     .path = fmt::format("/product/{}/variants", product_id),
                     .priority = Priority::push,
                     .before_send = std::move(before_send)};
  co_return co_await read<VariantList>(std::move(request));
}

asio::awaitable<Answer<ProductList>> Provider::find_products_by_sku(std::string_view sku) {
  ApiRequest request{.method = "GET",
                     .route = "/product",
                     .path = "/product",
                     .query = {{"Search", std::string(sku)}, {"Limit", kLookupLimit}},
                     .priority = Priority::push};
  co_return co_await read<ProductList>(std::move(request));
}

asio::awaitable<Answer<OrderPage>> Provider::find_orders_by_reference(std::span<const std::string> references) {
  ApiRequest request = lookup("/order", "ReferenceIds", references, Priority::push);
  co_return co_await read<OrderPage>(std::move(request));
}

asio::awaitable<Answer<ReturnList>> Provider::find_returns_by_reference(std::span<const std::string> references) {
  ApiRequest request = lookup("/return", "ReferenceIds", references, Priority::push);
  co_return co_await read<ReturnList>(std::move(request));
}

asio::awaitable<Answer<OrderPage>> Provider::find_orders_by_id(std::span<const std::int64_t> order_ids,
                                                              Priority priority) {
  ApiRequest request = lookup("/order", "IDs", order_ids, priority);
  co_return co_await read<OrderPage>(std::move(request));
}

asio::awaitable<Answer<ReturnList>> Provider::find_returns_by_id(std::span<const std::int64_t> return_ids) {
  ApiRequest request = lookup("/return", "Ids", return_ids, Priority::push);
  co_return co_await read<ReturnList>(std::move(request));
}

OrderPages Provider::list_orders_changed(timestamps::TimePoint since, int page_size) {
  return {call_, pull("/order", "/order", {{"LastUpdateStartDate", timestamps::format_iso8601_z(since)}}), page_size,
          version_};
}

OrderPages Provider::list_orders_with_tracking_not_uploaded(timestamps::TimePoint since, int page_size) {
  return {call_,
          pull("/order", "/order",
               {{"HasTracking", "true"},
                {"IsTrackingUploaded", "false"},
                {"LastUpdateStartDate", timestamps::format_iso8601_z(since)}}),
          page_size, version_};
}

ReturnPages Provider::list_returns(std::span<const std::int64_t> return_ids, int page_size) {
  return {call_,
          pull("/return", "/return",
               {{"Ids", fmt::format("{}", fmt::join(return_ids, ","))}, {"Limit", std::to_string(page_size)}}),
          version_};
}

ProductPages Provider::list_products(int page_size, std::string_view resume_link) {
  // The link carries the cursor (and the limit it was read with); the page size is kept unless it does.
  Query query = resume_link.empty() ? Query{} : query_of_link(resume_link);
  const bool limited = std::any_of(query.begin(), query.end(), [](const auto& p) { return p.first == "Limit"; });
  if (!limited) query.emplace_back("Limit", std::to_string(page_size));
  return {call_, pull("/product", "/product", std::move(query)), version_};
}

asio::awaitable<Answer<ShipmentTimeline>> Provider::shipment_timeline(std::int64_t order_id,
                                                                     std::int64_t shipment_id) {
  ApiRequest request = pull("/order/{orderId}/shipment/{shipmentId}/timeline",
                            fmt::format("/order/{}/shipment/{}/timeline", order_id, shipment_id));
  co_return co_await read<ShipmentTimeline>(std::move(request));
}

asio::awaitable<Answer<LotLevels>> Provider::lot_levels(std::int64_t inventory_id) {
  ApiRequest request{.method = "GET",
                     .route = "/inventory-level/{inventoryId}/lots",
                     .path = fmt::format("/inventory-level/{}/lots", inventory_id),
                     .priority = Priority::pull};
  co_return co_await read<LotLevels>(std::move(request));
}

asio::awaitable<Answer<std::vector<Channel>>> Provider::channels() {
  ApiRequest request{.method = "GET",
                     .route = "/channel",
                     .path = "/channel",
                     .query = {{"RecordsPerPage", kChannelsPerPage}},
                     .priority = Priority::push};
  CursorPager pager(call_, std::move(request));
  Answer<std::vector<Channel>> all;
  all.value.emplace();
  while (std::optional<Outcome> outcome = co_await pager.next()) {
    Answer<ChannelList> page = read_answer<ChannelList>(std::move(*outcome), version_);
    if (!page) co_return std::move(page).map([](ChannelList&&) { return std::vector<Channel>{}; });
    for (Channel& channel : page->items) all.value->push_back(std::move(channel));
    pager.follow(page->next);
    all.outcome = std::move(page.outcome);
  }
  co_return all;
}

}  // namespace fulfillsync::api
