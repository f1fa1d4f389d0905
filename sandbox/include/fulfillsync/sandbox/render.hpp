#pragma once
// Entities as the API shows them, per version.
#include "fulfillsync/common/json_writer.hpp"
#include "fulfillsync/sandbox/store.hpp"

namespace fulfillsync::sandbox {

using json::JsonWriter;

// A `date-time | null` member: null when unknown.
void write_time(JsonWriter& w, std::string_view key, const std::optional<TimePoint>& when);
// A `date-time` member the spec does not let be null: left out when unknown.
void write_time_if_known(JsonWriter& w, std::string_view key, const std::optional<TimePoint>& when);
void write_channel(JsonWriter& w, const Channel& channel);
void write_order(JsonWriter& w, Store& store, const Order& order, Version version);
void write_shipment(JsonWriter& w, Store& store, const Order& order, const Shipment& shipment, Version version);
void write_timeline(JsonWriter& w, const Shipment& shipment);

enum class ReturnForm { created, detail };
void write_return(JsonWriter& w, Store& store, const ReturnOrder& ret, ReturnForm form, Version version);

void write_product(JsonWriter& w, Store& store, const Product& product, Version version);
void write_variant(JsonWriter& w, const Variant& variant, Version version, std::int64_t on_hand);
std::int64_t on_hand_of(Store& store, const Variant& variant);
void write_inventory_item(JsonWriter& w, const InventoryItem& item);
void write_lot_levels(JsonWriter& w, Store& store, const InventoryItem& item);
void write_receiving_order(JsonWriter& w, Store& store, const ReceivingOrder& wro, Version version,
                           bool with_history);
void write_unidentified_receiving_order(JsonWriter& w, Store& store, const UnidentifiedReceivingOrder& uro,
                                        bool with_attachments);
void write_fulfillment_center_ref(JsonWriter& w, Store& store, int id);

}  // namespace fulfillsync::sandbox
