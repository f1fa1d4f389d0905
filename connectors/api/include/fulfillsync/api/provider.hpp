#pragma once
// The provider's operations as the daemon uses them, typed: each builds its request (route, query,
// priority, whether a lost answer may be resent, whether it names the channel), makes the call and
// reads the answer's body, so that no job spells out a route or decodes a body. Every call still
// goes through the client: its rate budget, token, retries and metrics.
//
// Each returns an Answer (the decoded value, or the Outcome and why there is none) or, when the
// body is of no use, the Outcome itself. Nothing here throws on a bad answer.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fulfillsync/api/answer.hpp"
#include "fulfillsync/api/client.hpp"
#include "fulfillsync/api/models/decode.hpp"
#include "fulfillsync/api/pager.hpp"
#include "fulfillsync/common/timestamps.hpp"

namespace fulfillsync::api {

// A walk over the pages of GET /order, one decoded page at a time.
class OrderPages {
 public:
  OrderPages(Call call, ApiRequest request, int page_size, ApiVersion version);

  // The next page, or nothing after the last one. A page that failed ends the walk.
  boost::asio::awaitable<std::optional<Answer<OrderPage>>> next();
  int page() const { return pager_.page(); }

 private:
  PageNumberPager pager_;
  ApiVersion version_;
};

// A walk over the pages of GET /return, following each page's `next` link.
class ReturnPages {
 public:
  ReturnPages(Call call, ApiRequest request, ApiVersion version);

  // The next page, or nothing after the last one. A page that failed or does not read ends the walk.
  boost::asio::awaitable<std::optional<Answer<ReturnList>>> next();

 private:
  CursorPager pager_;
  ApiVersion version_;
};

// A walk over the pages of GET /product, following each page's `next` link. The link of the page
// to come (next_link()) is where a walk interrupted after this page resumes.
class ProductPages {
 public:
  ProductPages(Call call, ApiRequest request, ApiVersion version);

  // The next page, or nothing after the last one. A page that failed or does not read ends the walk.
  boost::asio::awaitable<std::optional<Answer<ProductList>>> next();
  // The `next` link of the page last read: empty after the last page.
  const std::string& next_link() const { return next_link_; }

 private:
  CursorPager pager_;
  ApiVersion version_;
  std::string next_link_;
};

class Provider {
 public:
  // Through `client` (which must outlive this), in its API version.
  explicit Provider(ApiClient& client);
  Provider(Call call, ApiVersion version);

  ApiVersion version() const { return version_; }

  // --- sending (push priority, with the channel; never resent by the client: a lost answer is
  // settled by looking up what the provider has). `before_send` is awaited just before the request
  // first leaves (ApiRequest::before_send).

  // POST /order with `body`, an encoded OrderCreateRequest: what the answer says was created.
  boost::asio::awaitable<Answer<CreatedOrder>> create_order(std::string body, BeforeSend before_send = {});
  // POST /return with `body`, an encoded ReturnCreateRequest.
  boost::asio::awaitable<Answer<ReturnOrder>> create_return(std::string body, BeforeSend before_send = {});
  // POST /order/{orderId}:cancel. Its answer's order is not read: Cancelled is what a cancel leads to.
  boost::asio::awaitable<Outcome> cancel_order(std::int64_t order_id, BeforeSend before_send = {});
  // POST /shipment:batchUpdateTrackingUpload with is_tracking_uploaded (mark priority): each
  // shipment's own result is in the answer.
  boost::asio::awaitable<Answer<TrackingUploadResponse>> mark_tracking_uploaded(
      std::span<const std::int64_t> shipment_ids);

  // --- the catalog (push priority, with the channel). A create is sent once (a lost answer is looked
  // up: find_products_by_sku, product_variants); a PATCH sets fields, so the client may resend it.

  // POST /product with `body`: the product with its variants.
  boost::asio::awaitable<Answer<Product>> create_product(std::string body, BeforeSend before_send = {});
  // PATCH /product/{productId} with `body` (the fields that changed).
  boost::asio::awaitable<Outcome> update_product(std::int64_t product_id, std::string body,
                                                 BeforeSend before_send = {});
  // POST /product/{productId}/variants with `body` (an array of new variants): those created.
  boost::asio::awaitable<Answer<VariantList>> create_variants(std::int64_t product_id, std::string body,
                                                              BeforeSend before_send = {});
  // PATCH /product/{productId}/variants with `body` (an array, each with its id and what changed).
  boost::asio::awaitable<Outcome> update_variants(std::int64_t product_id, std::string body,
                                                  BeforeSend before_send = {});
  // GET /product/{productId}: the product as the provider holds it, its answer's body as it came (the
  // caller reads the members it compares).
  boost::asio::awaitable<Outcome> product(std::int64_t product_id, BeforeSend before_send = {});
  // GET /product/{productId}/variants: what the provider has of a product's variants.
  boost::asio::awaitable<Answer<VariantList>> product_variants(std::int64_t product_id, BeforeSend before_send = {});
  // GET /product?Search=`sku`: products whose name or a SKU contains it (the caller matches exactly).
  boost::asio::awaitable<Answer<ProductList>> find_products_by_sku(std::string_view sku);

  // --- looking up (one page of at most 250; the caller keeps each list within it).

  // GET /order?ReferenceIds= (push priority): what the provider has of orders sent with these references.
  boost::asio::awaitable<Answer<OrderPage>> find_orders_by_reference(std::span<const std::string> references);
  // GET /return?ReferenceIds= (push priority).
  boost::asio::awaitable<Answer<ReturnList>> find_returns_by_reference(std::span<const std::string> references);
  // GET /order?IDs=, at `priority` (that of the job asking).
  boost::asio::awaitable<Answer<OrderPage>> find_orders_by_id(std::span<const std::int64_t> order_ids,
                                                             Priority priority);
  // GET /return?Ids= (push priority).
  boost::asio::awaitable<Answer<ReturnList>> find_returns_by_id(std::span<const std::int64_t> return_ids);

  // --- pulling (pull priority, with the channel).

  // GET /order?LastUpdateStartDate=, `page_size` orders a page.
  OrderPages list_orders_changed(timestamps::TimePoint since, int page_size);
  // GET /order?HasTracking=true&IsTrackingUploaded=false&LastUpdateStartDate=: the provider's own list
  // of orders whose tracking is not marked uploaded.
  OrderPages list_orders_with_tracking_not_uploaded(timestamps::TimePoint since, int page_size);
  // GET /return?Ids=, `page_size` a page.
  ReturnPages list_returns(std::span<const std::int64_t> return_ids, int page_size);
  // GET /product, `page_size` products a page (each with its variants, their inventory ids and
  // stock), from the first page or from `resume_link` (a page's `next` link, ProductPages::next_link).
  ProductPages list_products(int page_size, std::string_view resume_link = {});
  // GET /order/{orderId}/shipment/{shipmentId}/timeline.
  boost::asio::awaitable<Answer<ShipmentTimeline>> shipment_timeline(std::int64_t order_id, std::int64_t shipment_id);
  // GET /inventory-level/{inventoryId}/lots (without the channel). An unknown item answers 404.
  boost::asio::awaitable<Answer<LotLevels>> lot_levels(std::int64_t inventory_id);

  // GET /channel, every page (push priority: nothing is sent until a channel is known). The answer
  // of a page that failed or does not read, when one did.
  boost::asio::awaitable<Answer<std::vector<Channel>>> channels();

 private:
  template <typename T>
  boost::asio::awaitable<Answer<T>> read(ApiRequest request);

  Call call_;
  ApiVersion version_;
};

}  // namespace fulfillsync::api
