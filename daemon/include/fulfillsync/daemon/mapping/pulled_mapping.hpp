#pragma once
// From what the provider answers to what the pull jobs write to the merchant's result tables
// (merchant/pulled_records.hpp). Pure functions: bad remote data is kept as absent fields, never a
// throw.
#include <optional>
#include <string>
#include <vector>

#include "fulfillsync/api/models/inventory.hpp"
#include "fulfillsync/api/models/order.hpp"
#include "fulfillsync/api/models/return_order.hpp"
#include "fulfillsync/api/models/shipment.hpp"
#include "fulfillsync/merchant/pulled_records.hpp"

namespace fulfillsync::daemon {

// When the order last changed at the provider: its latest shipment update, else its creation.
// Nothing when it carries neither.
std::optional<timestamps::TimePoint> last_change_of(const api::Order& order);

// The order's status, when it carries a reference id and a date to order updates by.
std::optional<merchant::OrderStatusRecord> order_status_of(const api::Order& order);
std::vector<merchant::ShipmentRecord> shipments_of(const api::Order& order);

// The return's progress, when it carries a reference id.
std::optional<merchant::ReturnStatusRecord> return_status_of(const api::ReturnOrder& order);

// One row per lot and location; a lot held nowhere in particular is listed at location 0.
std::vector<merchant::LotRecord> lots_of(const api::LotLevels& levels);

std::vector<merchant::TimelineEntryRecord> timeline_of(const api::ShipmentTimeline& timeline);

// The SKU map's rows of one page of the product list: one per variant with a SKU, each SKU once
// (the first listed). `without_sku` counts the variants left out for having none (blank counts as none).
std::vector<merchant::VariantStockRecord> variant_stock_of(const api::ProductList& page, int& without_sku);

}  // namespace fulfillsync::daemon
