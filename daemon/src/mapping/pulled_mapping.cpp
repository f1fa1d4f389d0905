#include "fulfillsync/daemon/mapping/pulled_mapping.hpp"

#include <algorithm>
#include <set>
#include <tuple>

#include "fulfillsync/common/json_writer.hpp"

namespace fulfillsync::daemon {
namespace {

std::string text_of(const api::DateTime& when) { return timestamps::format_iso8601_z(when.at); }

std::optional<std::string> text_of(const std::optional<api::DateTime>& when) {
  if (!when) return std::nullopt;
  return text_of(*when);
}

std::optional<std::string> money_of(const std::optional<api::Money>& amount) {
  if (!amount) return std::nullopt;
  return amount->text;
}

// Items of a shipment: every inventory item of every product, in the provider's order. A product
// without inventory items is one item of its own.
std::vector<merchant::ShipmentItemRecord> items_of(const api::Shipment& shipment) {
  std::vector<merchant::ShipmentItemRecord> items;
  for (const auto& product : shipment.products) {
    const merchant::ShipmentItemRecord base{.product_id = product.id,
                                            .product_reference_id = product.reference_id,
                                            .sku = product.sku,
                                            .product_name = product.name};
    if (product.inventory_items.empty()) {
      items.push_back(base);
      items.back().line_number = static_cast<int>(items.size());
      continue;
    }
    for (const auto& inventory : product.inventory_items) {
      merchant::ShipmentItemRecord item = base;
      item.line_number = static_cast<int>(items.size()) + 1;
      item.inventory_id = inventory.id;
      item.lot = inventory.lot;
      item.expiration_date = text_of(inventory.expiration_date);
      item.quantity = inventory.quantity;
      item.quantity_committed = inventory.quantity_committed;
      item.serial_numbers = inventory.serial_numbers;
      items.push_back(std::move(item));
    }
  }
  return items;
}

std::optional<merchant::TrackingRecord> tracking_of(const api::Shipment& shipment) {
  if (!shipment.tracking || !shipment.tracking->tracking_number || shipment.tracking->tracking_number->empty()) {
    return std::nullopt;
  }
  const api::Tracking& tracking = *shipment.tracking;
  return merchant::TrackingRecord{.tracking_number = *tracking.tracking_number,
                                  .carrier = tracking.carrier,
                                  .carrier_service = tracking.carrier_service,
                                  .tracking_url = tracking.tracking_url,
                                  .scac = tracking.scac,
                                  .bol = tracking.bol,
                                  .pro_number = tracking.pro_number,
                                  .shipping_date = text_of(tracking.shipping_date),
                                  .last_tracking_update_at = text_of(shipment.last_tracking_update_at)};
}

}  // namespace

std::optional<timestamps::TimePoint> last_change_of(const api::Order& order) {
  std::optional<timestamps::TimePoint> latest;
  if (order.created_date) latest = order.created_date->at;
  for (const auto& shipment : order.shipments) {
    if (!latest || shipment.last_update_at.at > *latest) latest = shipment.last_update_at.at;
  }
  return latest;
}

std::optional<merchant::OrderStatusRecord> order_status_of(const api::Order& order) {
  const auto changed = last_change_of(order);
  if (!order.reference_id || !changed) return std::nullopt;
  return merchant::OrderStatusRecord{.reference_id = *order.reference_id,
                                     .remote_id = order.id,
                                     .status = order.status,
                                     .as_of = timestamps::format_iso8601_z(*changed)};
}

std::vector<merchant::ShipmentRecord> shipments_of(const api::Order& order) {
  std::vector<merchant::ShipmentRecord> records;
  records.reserve(order.shipments.size());
  for (const auto& shipment : order.shipments) {
    merchant::ShipmentRecord record{.shipment_id = shipment.id,
                                    .order_id = shipment.order_id.value_or(order.id),
                                    .order_reference_id = order.reference_id,
                                    .status = shipment.status,
                                    .created_date = text_of(shipment.created_date),
                                    .actual_fulfillment_date = text_of(shipment.actual_fulfillment_date),
                                    .estimated_fulfillment_date = text_of(shipment.estimated_fulfillment_date),
                                    .delivery_date = text_of(shipment.delivery_date),
                                    .last_update_at = text_of(shipment.last_update_at),
                                    .invoice_amount = money_of(shipment.invoice_amount),
                                    .invoice_currency_code = shipment.invoice_currency_code,
                                    .is_tracking_uploaded = shipment.is_tracking_uploaded.value_or(false),
                                    .tracking = tracking_of(shipment),
                                    .items = items_of(shipment)};
    // The latest detail says where the shipment is (201 InTransit, 303 OutOfStock, ...).
    if (!shipment.status_details.empty()) {
      record.status_detail_id = shipment.status_details.back().id;
      record.status_detail_name = shipment.status_details.back().name;
    }
    if (shipment.location) {
      record.location_id = shipment.location->id;
      record.location_name = shipment.location->name;
    }
    record.ship_option = shipment.ship_option;
    records.push_back(std::move(record));
  }
  return records;
}

std::optional<merchant::ReturnStatusRecord> return_status_of(const api::ReturnOrder& order) {
  if (!order.reference_id) return std::nullopt;
  merchant::ReturnStatusRecord record{.reference_id = *order.reference_id,
                                      .remote_id = order.id,
                                      .status = order.status,
                                      .as_of = {},  // below
                                      .arrived_at = text_of(order.arrived_date),
                                      .processing_at = text_of(order.processing_date),
                                      .completed_at = text_of(order.completed_date),
                                      .cancelled_at = text_of(order.cancelled_date)};
  // The latest of its dates orders one answer against another.
  std::optional<timestamps::TimePoint> latest;
  const auto consider = [&](const std::optional<api::DateTime>& when) {
    if (when && (!latest || when->at > *latest)) latest = when->at;
  };
  for (const auto& when : {order.insert_date, order.awaiting_arrival_date, order.arrived_date, order.processing_date,
                           order.completed_date, order.cancelled_date}) {
    consider(when);
  }
  json::JsonWriter history;
  history.begin_array();
  for (const auto& change : order.status_history) {
    consider(change.timestamp);
    history.begin_object().field("status", change.status).field("timestamp", text_of(change.timestamp)).end_object();
  }
  record.status_history_json = history.end_array().take();
  record.as_of = latest ? timestamps::format_iso8601_z(*latest) : std::string("1970-01-01T00:00:00.000Z");

  json::JsonWriter actions;
  actions.begin_array();
  for (const auto& line : order.inventory) {
    for (const auto& taken : line.action_taken) {
      actions.begin_object()
          .field("inventory_id", line.id)
          .field("sku", line.sku)
          .field("action", taken.action)
          .field("action_reason", taken.action_reason)
          .field("quantity_processed", taken.quantity_processed)
          .end_object();
    }
  }
  record.actions_taken_json = actions.end_array().take();
  return record;
}

std::vector<merchant::LotRecord> lots_of(const api::LotLevels& levels) {
  const auto quantities_of = [](const api::LotQuantities& q) {
    return merchant::LotQuantitiesRecord{.awaiting = q.awaiting_quantity.value_or(0),
                                         .committed = q.committed_quantity.value_or(0),
                                         .fulfillable = q.fulfillable_quantity.value_or(0),
                                         .internal_transfer = q.internal_transfer_quantity.value_or(0),
                                         .on_hand = q.on_hand_quantity.value_or(0)};
  };
  std::vector<merchant::LotRecord> records;
  for (const auto& lot : levels.lots) {
    const std::string number = lot.lot_number.value_or("");
    if (lot.locations.empty()) {
      records.push_back(
          {.lot_number = number, .lot_date = text_of(lot.lot_date), .quantities = quantities_of(lot.quantities)});
      continue;
    }
    for (const auto& location : lot.locations) {
      records.push_back({.lot_number = number,
                         .lot_date = text_of(lot.lot_date),
                         .location_id = location.location_id.value_or(0),
                         .location_name = location.name,
                         .quantities = quantities_of(location.quantities)});
    }
  }
  // The provider might list a lot twice; the table holds one row per lot and location.
  std::stable_sort(records.begin(), records.end(), [](const auto& a, const auto& b) {
    return std::tie(a.lot_number, a.location_id) < std::tie(b.lot_number, b.location_id);
  });
  records.erase(std::unique(records.begin(), records.end(),
                            [](const auto& a, const auto& b) {
                              return a.lot_number == b.lot_number && a.location_id == b.location_id;
                            }),
                records.end());
  return records;
}

std::vector<merchant::TimelineEntryRecord> timeline_of(const api::ShipmentTimeline& timeline) {
  std::vector<merchant::TimelineEntryRecord> records;
  records.reserve(timeline.size());
  for (const auto& entry : timeline) {
    json::JsonWriter metadata;
    metadata.begin_object();
    for (const auto& [name, value] : entry.metadata) metadata.field(name, value);
    records.push_back({.timestamp = text_of(entry.timestamp),
                       .log_type_id = entry.log_type_id,
                       .log_type_name = entry.log_type_name,
                       .log_type_text = entry.log_type_text,
                       .metadata_json = metadata.end_object().take()});
  }
  return records;
}

std::vector<merchant::VariantStockRecord> variant_stock_of(const api::ProductList& page, int& without_sku) {
  std::vector<merchant::VariantStockRecord> records;
  std::set<std::string_view> seen;
  for (const api::Product& product : page.items) {
    for (const api::Variant& variant : product.variants) {
      if (!variant.sku || variant.sku->empty()) {
        ++without_sku;
        continue;
      }
      if (!seen.insert(*variant.sku).second) continue;
      const auto inventory = variant.inventory.value_or(api::VariantInventory{});
      records.push_back({.sku = *variant.sku,
                         .product_id = product.id,
                         .variant_id = variant.id,
                         .inventory_id = inventory.inventory_id,
                         .on_hand_qty = inventory.on_hand_qty,
                         .product_name = product.name,
                         .variant_name = variant.name,
                         .status = variant.status});
    }
  }
  return records;
}

}  // namespace fulfillsync::daemon
