#pragma once
// Orders: the create request the daemon sends (`POST /order`) and the order the API answers (create,
// list page, single read).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fulfillsync/api/models/parts.hpp"
#include "fulfillsync/api/models/scalars.hpp"
#include "fulfillsync/api/models/shipment.hpp"

namespace fulfillsync::api {

struct Financials {
  std::optional<Money> total_price{};
  friend bool operator==(const Financials&, const Financials&) = default;
};

struct ShippingTerms {
  std::optional<std::string> carrier_type{}, payment_term{};
  friend bool operator==(const ShippingTerms&, const ShippingTerms&) = default;
};

// An address of a B2B or drop-ship order, e.g. of type `MarkFor`.
struct RetailerAddress {
  Address address{};  // its fields sit beside `type` in the JSON
  std::optional<std::string> type{};
  friend bool operator==(const RetailerAddress&, const RetailerAddress&) = default;
};

struct RetailerProgramData {
  std::vector<RetailerAddress> addresses{};
  std::optional<std::string> customer_ticket_number{}, department{}, mark_for_store{}, purchase_order_number{};
  std::optional<std::string> retailer_program_type{};
  std::optional<DateTime> delivery_date{};
  std::optional<DateTime> do_not_ship_before_date{};  // `doNotShipBeforeDate`
  std::optional<DateTime> ship_by_date{};             // `shipByDate`
  friend bool operator==(const RetailerProgramData&, const RetailerProgramData&) = default;
};

// A line of an order create request: a product by `id` or by `reference_id` (then with `name`
// when the provider may not know the product yet).
struct OrderLineRequest {
  std::optional<std::int64_t> id{};
  std::optional<std::string> reference_id{}, name{};
  std::int64_t quantity = 0;
  std::optional<std::int64_t> external_line_id{};
  std::optional<std::string> quantity_unit_of_measure_code{};
  friend bool operator==(const OrderLineRequest&, const OrderLineRequest&) = default;
};

struct OrderCreateRequest {
  std::string reference_id{};     // 1 to 300 characters, unique per merchant
  std::string shipping_method{};  // at least 1 character
  std::vector<OrderLineRequest> products{};
  Recipient recipient{};
  std::optional<Financials> financials{};
  std::optional<std::string> gift_message{}, order_number{}, origin_platform_program{}, sales_channel{};
  std::optional<std::int32_t> location_id{};
  std::optional<DateTime> purchase_date{};
  std::optional<RetailerProgramData> retailer_program_data{};
  std::optional<ShippingTerms> shipping_terms{};
  std::optional<std::vector<Tag>> tags{};
  std::optional<std::string> type{};  // `DTC`, `DropShip`, `B2B`
  friend bool operator==(const OrderCreateRequest&, const OrderCreateRequest&) = default;
};

struct OrderProduct {
  std::optional<std::int64_t> id{}, external_line_id{}, quantity{};
  std::optional<std::string> reference_id{}, sku{}, gtin{}, upc{}, quantity_unit_of_measure_code{};
  std::optional<Money> unit_price{};
};

struct Order {
  std::int64_t id = 0;
  // Present in every order body; null for orders that another channel created without one.
  std::optional<std::string> reference_id{};
  std::string status{};  // `Processing`, `Exception`, `PartiallyFulfilled`, `Fulfilled`, `Cancelled`, `ImportReview`
  std::optional<IdName> channel{};
  std::optional<DateTime> created_date{}, purchase_date{};
  std::optional<Financials> financials{};
  std::optional<std::string> gift_message{}, order_number{}, shipping_method{}, type{};
  std::vector<OrderProduct> products{};
  std::optional<Recipient> recipient{};
  std::optional<RetailerProgramData> retailer_program_data{};
  std::vector<Shipment> shipments{};
  std::optional<ShippingTerms> shipping_terms{};
  std::vector<Tag> tags{};
};

// What the daemon keeps of a create's answer, which echoes the whole order: the rest of it is skipped,
// not decoded (nor its types checked).
struct CreatedOrder {
  std::int64_t id = 0;
  std::optional<std::string> reference_id{};
  std::string status{};
  std::optional<DateTime> created_date{};
};

// The body of `GET /order`: a bare array (paging is in the headers).
using OrderPage = std::vector<Order>;

}  // namespace fulfillsync::api
