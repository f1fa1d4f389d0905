#pragma once
// Decoding response bodies into models with simdjson On-Demand.
//
//   Decoded<OrderPage> page = decode<OrderPage>(body, ApiVersion::v2026_01);
//   if (!page) log(page.error().to_string());   // items[3].shipments[0].last_update_at: expected ...
//
// Unknown fields are skipped; fields the daemon relies on (ids, statuses, `last_update_at`) are
// required; every modelled field must have its documented type or be null. Each thread keeps one
// parser, so calls are cheap after the first and safe from any number of threads.
#include <string>
#include <string_view>

#include "fulfillsync/api/models/api_version.hpp"
#include "fulfillsync/api/models/channel.hpp"
#include "fulfillsync/api/models/estimate.hpp"
#include "fulfillsync/api/models/inventory.hpp"
#include "fulfillsync/api/models/order.hpp"
#include "fulfillsync/api/models/receiving.hpp"
#include "fulfillsync/api/models/result.hpp"
#include "fulfillsync/api/models/return_order.hpp"
#include "fulfillsync/api/models/shipment.hpp"

namespace fulfillsync::api {

// T is one of: Order, CreatedOrder, OrderPage, ShipmentTimeline, TrackingUploadResponse, EstimateResponse,
// ReturnOrder, ReturnList, LotLevels, InventoryItem, Variant, VariantList, Product, ProductList, ChannelList,
// ReceivingOrder. The body is copied once into a padded buffer.
template <typename T>
Decoded<T> decode(std::string_view body, ApiVersion version);

// The same without the copy when `body` has SIMDJSON_PADDING (64) spare bytes of capacity, as a
// transport can arrange with `body.reserve(content_length + 64)`.
template <typename T>
Decoded<T> decode(const std::string& body, ApiVersion version);

template <typename T>
Decoded<T> decode(const char* body, ApiVersion version) {
  return decode<T>(std::string_view(body), version);
}

}  // namespace fulfillsync::api
