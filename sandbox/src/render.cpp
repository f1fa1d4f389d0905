#include "fulfillsync/sandbox/render.hpp"

#include <algorithm>
#include <cmath>

namespace fulfillsync::sandbox {
namespace {

std::string iso(TimePoint when) { return timestamps::format_iso8601(when); }

void write_measurements(JsonWriter& w, double length, double width, double depth, double weight_oz) {
  w.begin_object()
      .field("depth_in", depth)
      .field("length_in", length)
      .field("total_weight_oz", weight_oz)
      .field("width_in", width)
      .end_object();
}

// The stored recipient is a minified object; a shipment's recipient adds full_name.
void write_recipient_with_full_name(JsonWriter& w, const Order& order) {
  const std::string& recipient = order.recipient_json;
  if (recipient.size() < 2 || recipient.back() != '}') {
    w.raw_value(recipient);
    return;
  }
  std::string out = recipient.substr(0, recipient.size() - 1);
  if (out.size() > 1) out += ",";
  out += "\"full_name\":";
  json::append_quoted(out, order.recipient_name);
  out += "}";
  w.raw_value(out);
}

}  // namespace

std::int64_t on_hand_of(Store& store, const Variant& variant) {
  const auto item = store.inventory.find(variant.inventory_id);
  return item == store.inventory.end() ? 0 : item->second.on_hand();
}

void write_time(JsonWriter& w, std::string_view key, const std::optional<TimePoint>& when) {
  w.key(key);
  if (when) {
    w.value(iso(*when));
  } else {
    w.null();
  }
}

void write_time_if_known(JsonWriter& w, std::string_view key, const std::optional<TimePoint>& when) {
  if (when) w.field(key, iso(*when));
}

void write_channel(JsonWriter& w, const Channel& channel) {
  w.begin_object()
      .field("id", channel.id)
      .field("name", channel.name)
      .field("application_name", channel.application_name)
      .key("scopes")
      .begin_array();
  for (auto name : scope_names(channel.scopes)) w.value(name);
  w.end_array().end_object();
}

void write_fulfillment_center_ref(JsonWriter& w, Store& store, int id) {
  const FulfillmentCenter* center = store.find_fulfillment_center(id);
  w.begin_object().field("id", id).field("name", center ? center->name : std::string()).end_object();
}

void write_shipment(JsonWriter& w, Store& store, const Order& order, const Shipment& shipment, Version version) {
  double weight = 0, length = 0, width = 0, depth = 0;
  for (const auto& line : order.lines) {
    auto item = store.inventory.find(line.inventory_id);
    if (item == store.inventory.end()) continue;
    weight += item->second.weight_oz * line.quantity;
    length = std::max(length, item->second.length_in);
    width = std::max(width, item->second.width_in);
    depth += item->second.height_in * line.quantity;
  }
  w.begin_object()
      .field("id", shipment.id)
      .field("order_id", shipment.order_id)
      .field("reference_id", order.reference_id);
  if (version == Version::v2025_07) w.field("store_order_id", order.reference_id);
  w.field("created_date", iso(shipment.created));
  write_time_if_known(w, "actual_fulfillment_date", shipment.actual_fulfillment_date);
  w.field("estimated_fulfillment_date", iso(shipment.estimated_fulfillment_date));
  w.field("estimated_fulfillment_date_status",
          shipment.stage == Stage::allocated ? "AwaitingInventoryAllocation"
          : stage_shipped(shipment.stage)    ? "FulfilledOnTime"
                                             : "PendingOnTime");
  write_time_if_known(w, "delivery_date", shipment.delivery_date);
  w.field("last_update_at", iso(shipment.last_update_at));
  write_time_if_known(w, "last_tracking_update_at", shipment.last_tracking_update_at);
  w.field("gift_message", order.gift_message.value_or(""));
  w.field("insurance_value", 0).field("invoice_amount", 0).field("invoice_currency_code", "USD");
  w.field("is_tracking_uploaded", shipment.is_tracking_uploaded);
  w.key("location");
  write_fulfillment_center_ref(w, store, shipment.location_id);
  w.key("measurements");
  write_measurements(w, length, width, depth, weight);
  w.field("package_material_type", "Unknown").key("parent_cartons").begin_array().end_array();
  w.key("products").begin_array();
  for (const auto& line : order.lines) {
    w.begin_object()
        .field("id", line.product_id)
        .field("name", line.name)
        .field("reference_id", line.reference_id)
        .field("sku", line.sku)
        .key("inventory_items")
        .begin_array()
        .begin_object()
        .field("id", line.inventory_id)
        .field("is_dangerous_goods", false)
        .field("lot", line.lot_number)
        .field("name", line.name)
        .field("quantity", line.quantity)
        .field("quantity_committed", shipment.stage == Stage::cancelled ? 0 : line.quantity)
        .key("serial_numbers")
        .begin_array()
        .end_array()
        .end_object()
        .end_array()
        .end_object();
  }
  w.end_array();
  w.key("recipient");
  write_recipient_with_full_name(w, order);
  w.field("require_signature", false).field("ship_option", ship_option_for(order.shipping_method));
  w.field("status", stage_status(shipment.stage));
  w.key("status_details").begin_array();
  if (const auto detail = stage_detail_id(shipment.stage)) {
    w.begin_object()
        .field("description", stage_detail_name(shipment.stage))
        .null_field("exception_fulfillment_center_id")
        .key("extra_information")
        .begin_object()
        .key("validation_messages")
        .begin_array()
        .end_array()
        .end_object()
        .field("id", *detail)
        .null_field("inventory_id")
        .field("name", stage_detail_name(shipment.stage))
        .end_object();
  }
  w.end_array();
  // Not null before shipping (the spec types it as an object): left out until there is tracking.
  if (has_tracking(shipment)) {
    const std::string number = tracking_number(shipment);
    w.key("tracking").begin_object()
        .field("bol", "")
        .field("carrier", "USPS")
        .field("carrier_service", "Ground Advantage")
        .field("pro_number", "")
        .field("scac", "USPS")
        .field("shipping_date", iso(*shipment.actual_fulfillment_date))
        .field("tracking_number", number)
        .field("tracking_url", "https://tools.usps.com/go/TrackConfirmAction?tLabels=" + number)
        .end_object();
  }
  w.end_object();
}

void write_order(JsonWriter& w, Store& store, const Order& order, Version version) {
  const Channel* channel = store.find_channel(order.channel_id);
  w.begin_object().field("id", order.id);
  w.key("channel").begin_object().field("id", order.channel_id).field("name", channel ? channel->name : "").end_object();
  w.field("created_date", iso(order.created));
  w.key("financials").begin_object().key("total_price");
  if (order.total_price) {
    w.raw_number(*order.total_price);
  } else {
    w.value(0);
  }
  w.end_object();
  w.field("gift_message", order.gift_message);
  w.field("order_number", order.order_number ? *order.order_number : order.reference_id);
  w.key("products").begin_array();
  for (const auto& line : order.lines) {
    w.begin_object();
    w.key("external_line_id");
    if (line.external_line_id) {
      w.value(*line.external_line_id);
    } else {
      w.null();
    }
    w.field("gtin", "").field("id", line.product_id).field("quantity", line.quantity);
    w.field("quantity_unit_of_measure_code", line.unit_of_measure.empty() ? "EA" : line.unit_of_measure);
    w.field("reference_id", line.reference_id).field("sku", line.sku);
    // A number, never null: left out when the order line did not carry a price.
    if (line.unit_price) w.field("unit_price", *line.unit_price);
    w.field("upc", "").end_object();
  }
  w.end_array();
  write_time(w, "purchase_date", order.purchase_date);
  w.key("recipient").raw_value(order.recipient_json);
  w.field("reference_id", order.reference_id);
  // An object, never null: left out when the order was created without one.
  if (order.retailer_program_data_json) w.key("retailer_program_data").raw_value(*order.retailer_program_data_json);
  w.key("shipments").begin_array();
  for (const auto& shipment : order.shipments) write_shipment(w, store, order, shipment, version);
  w.end_array();
  w.field("shipping_method", order.shipping_method);
  w.key("shipping_terms");
  if (order.shipping_terms_json) {
    w.raw_value(*order.shipping_terms_json);
  } else {
    w.begin_object().field("carrier_type", "Parcel").field("payment_term", "Prepaid").end_object();
  }
  w.field("status", order_status_name(order.status));
  w.key("tags");
  if (order.tags_json) {
    w.raw_value(*order.tags_json);
  } else {
    w.null();
  }
  w.field("type", order.type).end_object();
}

void write_timeline(JsonWriter& w, const Shipment& shipment) {
  w.begin_array();
  for (const auto& entry : shipment.timeline) {
    const Stage stage = entry.stage;
    const std::string name = stage == Stage::allocated   ? "Allocated"
                             : stage == Stage::cancelled ? "Cancelled"
                                                         : std::string(stage_detail_name(stage));
    std::string text = stage == Stage::allocated
                           ? "Allocated to fulfillment center " + std::to_string(shipment.location_id)
                           : "Shipment " + std::to_string(shipment.id) + " is " + std::string(stage_status(stage));
    if (stage != Stage::allocated && stage_detail_id(stage)) text += " (" + name + ")";
    w.begin_object()
        .field("log_type_id", stage_detail_id(stage).value_or(stage == Stage::cancelled ? 900 : 10))
        .field("log_type_name", name)
        .field("log_type_text", text)
        .key("metadata")
        .begin_object()
        .field("shipment_id", std::to_string(shipment.id))
        .end_object()
        .field("timestamp", iso(entry.at))
        .end_object();
  }
  w.end_array();
}

void write_return(JsonWriter& w, Store& store, const ReturnOrder& ret, ReturnForm form, Version version) {
  const Channel* channel = store.find_channel(ret.channel_id);
  const bool detail = form == ReturnForm::detail;
  w.begin_object().field("id", ret.id);
  w.key("channel").begin_object().field("id", ret.channel_id).field("name", channel ? channel->name : "").end_object();
  write_time(w, "completed_date", ret.completed_date);
  w.field("customer_name", ret.customer_name);
  w.key("fulfillment_center");
  write_fulfillment_center_ref(w, store, ret.fulfillment_center_id);
  w.field("insert_date", iso(ret.insert_date));
  w.key("inventory").begin_array();
  for (const auto& line : ret.lines) {
    w.begin_object().field("id", line.inventory_id).field("name", line.name).field("quantity", line.quantity);
    w.key("action_requested")
        .begin_object()
        .field("action", line.requested_action)
        .field("action_type", line.requested_action)
        .field("instructions", "")
        .end_object();
    w.key("action_taken").begin_array();
    if (line.quantity_processed > 0) {
      w.begin_object().field("action", line.requested_action).field("action_reason", "Customer return");
      if (version >= Version::v2026_01) w.null_field("image_url");
      w.field("quantity_processed", line.quantity_processed).end_object();
    }
    w.end_array();
    if (detail) {
      w.field("sku", line.sku).key("lot_information").begin_object();
      write_time_if_known(w, "expiration", line.lot_date);
      w.field("minimumShelfLife", 0).field("number", line.lot_number).end_object();
    }
    w.end_object();
  }
  w.end_array();
  if (detail) {
    w.key("invoice").begin_object().field("amount", 0).field("currency_code", "USD").end_object();
  } else {
    w.field("invoice_amount", 0);
  }
  w.key("original_shipment_id");
  if (ret.original_shipment_id) {
    w.value(*ret.original_shipment_id);
  } else {
    w.null();
  }
  w.field("reference_id", ret.reference_id).field("return_type", ret.return_type);
  w.field("status", return_status_name(ret.status));
  w.field("store_order_id", ret.store_order_id).field("tracking_number", ret.tracking_number);
  w.key("transactions").begin_array();
  if (ret.status == ReturnStatus::completed) {
    w.begin_object().field("amount", 0).field("transaction_type", "ReturnProcessingFee").end_object();
  }
  w.end_array();
  if (detail) {
    write_time_if_known(w, "arrived_date", ret.arrived_date);
    write_time(w, "awaiting_arrival_date", ret.insert_date);
    write_time_if_known(w, "cancelled_date", ret.cancelled_date);
    write_time_if_known(w, "processing_date", ret.processing_date);
    std::optional<std::string> shipment_tracking;
    if (ret.original_shipment_id) {
      if (const Shipment* shipment = store.find_shipment(*ret.original_shipment_id); shipment && has_tracking(*shipment)) {
        shipment_tracking = tracking_number(*shipment);
      }
    }
    if (shipment_tracking) w.field("shipment_tracking_number", *shipment_tracking);
    w.key("status_history").begin_array();
    for (const auto& [status, at] : ret.history) {
      w.begin_object().field("status", return_status_name(status)).field("timestamp", iso(at)).end_object();
    }
    w.end_array();
    w.key("tags");
    if (ret.tags_json) {
      w.raw_value(*ret.tags_json);
    } else {
      w.null();
    }
  }
  w.end_object();
}

void write_variant(JsonWriter& w, const Variant& v, Version version, std::int64_t on_hand) {
  w.begin_object()
      .field("id", v.id)
      .field("name", v.name)
      .field("sku", v.sku)
      .field("gtin", v.gtin)
      .field("upc", v.upc)
      .field("status", v.status)
      .field("created_on", iso(v.created_on))
      .field("updated_on", iso(v.updated_on))
      .field("is_digital", v.is_digital)
      .field("is_image_uploaded", false);
  w.key("additional_hazmat_attributes").begin_object()
      .field("charge_state_percentage", 0).field("container_metal", false).field("container_type", "")
      .field("lithium_battery_packaging", "").field("lithium_battery_type", "").field("magnet", false)
      .field("net_volume", 0).field("net_weight", 0).end_object();
  w.key("associated_bundles").begin_array().end_array();
  w.key("bundle_definition").begin_array().end_array();
  w.key("barcodes").begin_array();
  if (!v.upc.empty()) w.begin_object().null_field("sticker_url").field("value", v.upc).end_object();
  w.end_array();
  w.key("channel_metadata").begin_array();
  for (const auto& m : v.channel_metadata) {
    w.begin_object()
        .field("channel_id", m.channel_id)
        .field("channel_name", m.channel_name)
        .field("currency", "USD")
        .field("id", m.id)
        .field("is_inventory_sync_enabled", true)
        .null_field("legacy_product_id")
        .field("platform", "API")
        .field("platform_identifier", std::to_string(v.id))
        .field("platform_inventory_item_id", std::to_string(v.inventory_id))
        .field("price", m.price)
        .field("seller_sku", m.seller_sku)
        .end_object();
  }
  w.end_array();
  w.key("customs").begin_object()
      .field("country_code_of_origin", v.customs_country_of_origin)
      .field("currency", v.customs_currency)
      .field("description", v.customs_description)
      .field("hs_tariff_code", v.customs_hs_tariff_code)
      .field("is321_eligible", false);
  // An integer before 2026-07, a number with decimals from it.
  if (version >= Version::v2026_07) {
    w.field("value", v.customs_value);
  } else {
    w.field("value", static_cast<std::int64_t>(std::llround(v.customs_value)));
  }
  w.end_object();
  w.key("dimension").begin_object()
      .field("height", v.height_in).field("is_locked", false).field("length", v.length_in)
      .field("source", "Merchant").field("unit", "in").field("width", v.width_in).end_object();
  w.key("fulfillment_settings").begin_object()
      .field("dangerous_goods", false).field("is_bpm_parcel", false).field("is_case_pick", false)
      .field("msds_url", "").field("requires_prop65", false)
      .key("serial_scan").begin_object().field("exact_character_length", 0).field("is_enabled", false)
      .field("prefix", "").field("suffix", "").end_object()
      .end_object();
  w.key("inventory").begin_object().field("inventory_id", v.inventory_id).field("on_hand_qty", on_hand).end_object();
  w.key("lot_information").begin_object()
      .field("is_lot", v.is_lot).field("minimum_shelf_life_days", v.minimum_shelf_life_days).end_object();
  w.key("merge_children").begin_array().end_array();
  w.key("packaging_material_type").begin_object().field("id", 1).field("name", "Box").end_object();
  w.key("packaging_requirement").begin_object().field("id", v.packaging_requirement_id)
      .field("name", packaging_requirement_name(v.packaging_requirement_id)).end_object();
  w.key("return_preferences").begin_object().field("instructions", "")
      .key("primary_action").begin_object().field("id", 1).field("name", "Restock").end_object()
      .key("backup_action").begin_object().field("id", 2).field("name", "Quarantine").end_object()
      .key("return_to_sender_primary_action").begin_object().field("id", 1).field("name", "Restock").end_object()
      .key("return_to_sender_backup_action").begin_object().field("id", 3).field("name", "Dispose").end_object()
      .end_object();
  w.key("reviews_pending").begin_array().end_array();
  w.key("weight").begin_object().field("unit", "oz").field("weight", v.weight_oz).end_object();
  w.end_object();
}

void write_product(JsonWriter& w, Store& store, const Product& product, Version version) {
  w.begin_object()
      .field("id", product.id)
      .field("name", product.name.empty() ? std::nullopt : std::optional<std::string>(product.name))
      .field("type", product.type)
      .field("user_id", product.merchant_id)
      .field("created_on", iso(product.created_on));
  write_time(w, "updated_on", product.updated_on);
  // The product's node of GET /taxonomy/{id} and its parent; id 0 is "not categorised".
  const TaxonomyNode* node = find_taxonomy(product.taxonomy_id);
  const TaxonomyNode* parent = node ? find_taxonomy(node->parent) : nullptr;
  w.key("taxonomy").begin_object().field("id", product.taxonomy_id)
      .field("name", node ? node->name : std::string_view("Uncategorized"))
      .field("parent_id", parent ? parent->id : 0)
      .field("parent_name", parent ? parent->name : std::string_view("Root"))
      .field("path", node ? node->path : std::string_view("/")).end_object();
  w.key("variants").begin_array();
  for (const auto& variant : product.variants) write_variant(w, variant, version, on_hand_of(store, variant));
  w.end_array().end_object();
}

void write_inventory_item(JsonWriter& w, const InventoryItem& item) {
  w.begin_object()
      .field("inventory_id", item.id)
      .field("user_id", item.merchant_id)
      .field("name", item.name)
      .field("sku", item.sku)
      .field("barcode", item.barcode)
      .field("is_case", item.is_case)
      .field("is_lot", item.is_lot);
  w.key("dimensions").begin_object().field("height", item.height_in).field("is_locked", false)
      .field("length", item.length_in).field("unit", "in").field("validated", true).field("width", item.width_in)
      .end_object();
  w.key("variant").begin_object()
      .key("hazmat").begin_object().field("is_hazmat", false).field("validated", true).end_object()
      .field("is_active", item.is_active).field("is_bundle", false).field("is_digital", item.is_digital).end_object();
  w.key("weight").begin_object().field("unit", "oz").field("value", item.weight_oz).end_object();
  w.end_object();
}

void write_lot_levels(JsonWriter& w, Store& store, const InventoryItem& item) {
  w.begin_object()
      .field("inventory_id", item.id)
      .field("name", item.name)
      .field("sku", item.sku)
      .key("lots")
      .begin_array();
  // One entry per lot number, with its per-location breakdown; empty levels are left out, so a
  // lot at zero everywhere is not listed.
  std::vector<std::string> lot_numbers;
  for (const auto& lot : item.lots) {
    if (lot.empty()) continue;
    if (std::find(lot_numbers.begin(), lot_numbers.end(), lot.lot_number) == lot_numbers.end()) {
      lot_numbers.push_back(lot.lot_number);
    }
  }
  for (const auto& number : lot_numbers) {
    std::int64_t awaiting = 0, committed = 0, fulfillable = 0, transfer = 0, on_hand = 0;
    std::optional<TimePoint> lot_date;
    for (const auto& lot : item.lots) {
      if (lot.lot_number != number || lot.empty()) continue;
      awaiting += lot.awaiting;
      committed += lot.committed;
      fulfillable += lot.fulfillable();
      transfer += lot.internal_transfer;
      on_hand += lot.on_hand;
      if (lot.lot_date) lot_date = lot.lot_date;
    }
    w.begin_object().field("lot_number", number);
    write_time_if_known(w, "lot_date", lot_date);
    w.field("awaiting_quantity", awaiting)
        .field("committed_quantity", committed)
        .field("fulfillable_quantity", fulfillable)
        .field("internal_transfer_quantity", transfer)
        .field("on_hand_quantity", on_hand)
        .key("locations")
        .begin_array();
    for (const auto& lot : item.lots) {
      if (lot.lot_number != number || lot.empty()) continue;
      const FulfillmentCenter* center = store.find_fulfillment_center(lot.location_id);
      w.begin_object()
          .field("location_id", lot.location_id)
          .field("name", center ? center->name : "")
          .field("awaiting_quantity", lot.awaiting)
          .field("committed_quantity", lot.committed)
          .field("fulfillable_quantity", lot.fulfillable())
          .field("internal_transfer_quantity", lot.internal_transfer)
          .field("on_hand_quantity", lot.on_hand)
          .end_object();
    }
    w.end_array().end_object();
  }
  w.end_array().end_object();
}

void write_receiving_order(JsonWriter& w, Store& store, const ReceivingOrder& wro, Version version, bool with_history) {
  w.begin_object()
      .field("id", wro.id)
      .field("box_labels_uri", "https://sandbox.test/receiving/" + std::to_string(wro.id) + "/labels.pdf")
      .field("box_packaging_type", wro.box_packaging_type)
      .field("package_type", wro.package_type)
      .field("expected_arrival_date", iso(wro.expected_arrival_date))
      .field("insert_date", iso(wro.insert_date))
      .field("last_updated_date", iso(wro.last_updated_date));
  write_time(w, "external_sync_timestamp", wro.external_sync_timestamp);
  w.field("is_external_sync", wro.is_external_sync);
  const FulfillmentCenter* c = store.find_fulfillment_center(wro.fulfillment_center_id);
  w.key("fulfillment_center").begin_object().field("id", wro.fulfillment_center_id);
  if (c != nullptr) {
    w.field("name", c->name).field("address1", c->address1).field("address2", c->address2).field("city", c->city)
        .field("state", c->state).field("zip_code", c->zip_code).field("country", c->country)
        .field("email", c->email).field("phone_number", c->phone_number).field("timezone", c->timezone);
  }
  w.end_object();
  w.key("inventory_quantities").begin_array();
  for (const auto& line : wro.lines) {
    w.begin_object()
        .field("inventory_id", line.inventory_id)
        .field("sku", line.sku)
        .field("expected_quantity", line.expected)
        .field("received_quantity", line.received)
        .field("stowed_quantity", line.stowed)
        .end_object();
  }
  w.end_array();
  w.field("purchase_order_number", wro.purchase_order_number);
  w.field("status", wro_status_name(wro.status));
  if (with_history) {
    w.key("status_history").begin_array();
    int entry_id = 1;
    for (const auto& [status, at] : wro.history) {
      w.begin_object().field("id", entry_id++).field("status", wro_status_name(status)).field("timestamp", iso(at)).end_object();
    }
    w.end_array();
  }
  if (version >= Version::v2026_07) {
    w.key("freight");
    if (wro.freight) {
      const Freight& f = *wro.freight;
      w.begin_object().field("carrier", f.carrier).field("bol_number", f.bol_number)
          .field("container_number", f.container_number).field("vessel_name", f.vessel_name)
          .field("freight_forwarder", f.freight_forwarder).field("notes", f.notes).end_object();
    } else {
      w.null();
    }
    w.key("final_destination_fulfillment_center_id");
    if (wro.final_destination_fulfillment_center_id) {
      w.value(*wro.final_destination_fulfillment_center_id);
    } else {
      w.null();
    }
  }
  w.end_object();
}

void write_unidentified_receiving_order(JsonWriter& w, Store& store, const UnidentifiedReceivingOrder& uro,
                                        bool with_attachments) {
  w.begin_object().field("id", uro.id);
  w.key("fulfillment_center");
  write_fulfillment_center_ref(w, store, uro.fulfillment_center_id);
  w.field("arrived_date", iso(uro.arrived_date)).field("tracking_number", uro.tracking_number).field("notes", uro.notes);
  w.field("is_completed", uro.wro_id.has_value());
  w.key("receiving_order_id");
  if (uro.wro_id) {
    w.value(*uro.wro_id);
  } else {
    w.null();
  }
  write_time(w, "completed_date", uro.completed_date);
  if (with_attachments) {
    w.key("attachments").begin_array();
    int index = 1;
    for (const auto& name : uro.attachment_names) {
      w.begin_object()
          .field("id", index)
          .field("file_name", name)
          .field("url", "https://sandbox.test/uro/" + std::to_string(uro.id) + "/" + name)
          .end_object();
      ++index;
    }
    w.end_array();
  }
  w.end_object();
}

}  // namespace fulfillsync::sandbox
