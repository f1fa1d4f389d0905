#include "pull/order_page_writer.hpp"

#include "fulfillsync/daemon/mapping/pulled_mapping.hpp"

namespace fulfillsync::daemon {

PageWritten write_order_page(const PullContext& context, const api::OrderPage& orders) {
  PageWritten written;
  std::vector<merchant::OrderStatusRecord> statuses;
  std::vector<merchant::ShipmentRecord> shipments;
  for (const api::Order& order : orders) {
    if (auto status = order_status_of(order)) statuses.push_back(std::move(*status));
    for (auto& shipment : shipments_of(order)) {
      written.shipment_ids.emplace_back(shipment.order_id, shipment.shipment_id);
      shipments.push_back(std::move(shipment));
    }
    const auto changed = last_change_of(order);
    if (changed && (!written.latest_change || *changed > *written.latest_change)) written.latest_change = changed;
  }
  context.merchant.write_shipments(statuses, shipments);
  written.shipments = static_cast<int>(shipments.size());
  return written;
}

}  // namespace fulfillsync::daemon
