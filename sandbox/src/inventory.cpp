// Inventory items, lot levels and the inventory history query (2026-01).
#include <algorithm>

#include "fulfillsync/sandbox/handlers.hpp"
#include "fulfillsync/sandbox/render.hpp"

namespace fulfillsync::sandbox {
namespace {

const InventoryItem* owned_item(Call& call) {
  const auto id = param_id(call, 0);
  if (!id) return nullptr;
  auto found = call.store.inventory.find(*id);
  if (found == call.store.inventory.end() || found->second.merchant_id != call.principal.merchant_id) return nullptr;
  return &found->second;
}

constexpr std::string_view kEventTypes[] = {"Receiving", "OrderPick", "Adjustment", "Restock"};

}  // namespace

HttpResponse get_inventory(Call& call) {
  const InventoryItem* item = owned_item(call);
  if (item == nullptr) return not_found(call, "Inventory item " + std::string(call.params[0]));
  JsonWriter w;
  write_inventory_item(w, *item);
  return json_response(200, w.take());
}

HttpResponse get_inventory_lots(Call& call) {
  const InventoryItem* item = owned_item(call);
  if (item == nullptr) return not_found(call, "Inventory item " + std::string(call.params[0]));
  JsonWriter w;
  write_lot_levels(w, call.store, *item);
  return json_response(200, w.take());
}

HttpResponse query_inventory_history(Call& call) {
  Validation validation;
  const auto object = body_object(call, validation);
  if (!object) return validation_problem(400, validation, call.path());
  ObjectReader r(*object, "", validation);
  std::vector<Id> inventory_ids;
  if (auto ids = r.array("inventory_ids")) {
    std::size_t index = 0;
    for (auto value : *ids) {
      std::int64_t id = 0;
      if (value.get_int64().get(id) != simdjson::SUCCESS) {
        validation.add(r.index_path("inventory_ids", index), "An inventory id must be an integer.");
      }
      inventory_ids.push_back(id);
      ++index;
    }
  }
  std::vector<std::string> types;
  if (auto list = r.array("event_types")) {
    std::size_t index = 0;
    for (auto value : *list) {
      std::string_view type;
      if (value.get_string().get(type) != simdjson::SUCCESS ||
          std::find(std::begin(kEventTypes), std::end(kEventTypes), type) == std::end(kEventTypes)) {
        validation.add(r.index_path("event_types", index), "Event types are Receiving, OrderPick, Adjustment, Restock.");
      } else {
        types.emplace_back(type);
      }
      ++index;
    }
  }
  const auto start = r.date_time("start_date");
  const auto end = r.date_time("end_date");
  const auto cursor = r.integer("cursor", {.min = 1}).value_or(1);
  const auto limit = r.integer("limit", {.min = 1, .max = 250}).value_or(100);
  if (!validation.ok()) return validation_problem(400, validation, call.path());

  std::vector<const InventoryEvent*> matched;
  for (const auto& event : call.store.inventory_events) {
    if (event.merchant_id != call.principal.merchant_id) continue;
    if (!inventory_ids.empty() && std::find(inventory_ids.begin(), inventory_ids.end(), event.inventory_id) == inventory_ids.end()) continue;
    if (!types.empty() && std::find(types.begin(), types.end(), event.event_type) == types.end()) continue;
    if (start && event.at < *start) continue;
    if (end && event.at > *end) continue;
    matched.push_back(&event);
  }
  const auto size = static_cast<std::size_t>(limit);
  const auto first = static_cast<std::size_t>(cursor - 1) * size;
  JsonWriter w;
  w.begin_object().key("items").begin_array();
  for (std::size_t i = first; i < matched.size() && i < first + size; ++i) {
    const InventoryEvent& event = *matched[i];
    w.begin_object()
        .field("id", event.id)
        .field("inventory_id", event.inventory_id)
        .field("event_type", event.event_type)
        .field("quantity_change", event.quantity_change)
        .key("location");
    write_fulfillment_center_ref(w, call.store, event.location_id);
    w.field("lot_number", event.lot_number)
        .field("timestamp", timestamps::format_iso8601(event.at))
        .field("reference", event.reference)
        .end_object();
  }
  w.end_array().key("next");
  if (first + size < matched.size()) {
    w.value(cursor + 1);
  } else {
    w.null();
  }
  w.end_object();
  return json_response(200, w.take());
}

}  // namespace fulfillsync::sandbox
