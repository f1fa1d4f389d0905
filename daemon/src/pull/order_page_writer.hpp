#pragma once
// One `GET /order` page into the merchant database: what pull_shipments' windows and mark_tracking's
// sweep both read.
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "fulfillsync/api/models/order.hpp"
#include "pull/pull_context.hpp"

namespace fulfillsync::daemon {

// Writes the orders of one `GET /order` page (its statuses, shipments, items and tracking) to the
// merchant database in one transaction. Returns the shipments written and the latest change seen.
struct PageWritten {
  int shipments = 0;
  std::optional<timestamps::TimePoint> latest_change;
  std::vector<std::pair<std::int64_t, std::int64_t>> shipment_ids;  // (order id, shipment id)
};
PageWritten write_order_page(const PullContext& context, const api::OrderPage& orders);

}  // namespace fulfillsync::daemon
