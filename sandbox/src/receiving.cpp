// Warehouse receiving orders (WROs) and unidentified receiving orders (UROs, 2026-07).
#include <algorithm>

#include "fulfillsync/sandbox/handlers.hpp"
#include "fulfillsync/sandbox/render.hpp"
#include "fulfillsync/sandbox/sandbox.hpp"

namespace fulfillsync::sandbox {
namespace {

constexpr std::string_view kPackageTypes[] = {"Package", "Pallet", "FloorLoadedContainer"};
constexpr std::string_view kBoxPackagingTypes[] = {"EverythingInOneBox", "OneSkuPerBox", "MultipleSkuPerBox"};

template <std::size_t N>
bool one_of(const std::string_view (&values)[N], std::string_view value) {
  return std::find(std::begin(values), std::end(values), value) != std::end(values);
}

ReceivingOrder* owned_wro(Call& call, Id id) {
  auto found = call.store.receiving_orders.find(id);
  if (found == call.store.receiving_orders.end() || found->second.merchant_id != call.principal.merchant_id) return nullptr;
  return &found->second;
}

UnidentifiedReceivingOrder* owned_uro(Call& call) {
  const auto id = param_id(call, 0);
  if (!id) return nullptr;
  auto found = call.store.unidentified_receiving_orders.find(*id);
  if (found == call.store.unidentified_receiving_orders.end() || found->second.merchant_id != call.principal.merchant_id) {
    return nullptr;
  }
  return &found->second;
}

// Validation of POST /receiving answers 400 before 2026-07 and 422 from it.
HttpResponse receiving_invalid(const Call& call, const Validation& validation) {
  return validation_problem(call.version >= Version::v2026_07 ? 422 : 400, validation, call.path());
}

void read_boxes(Call& call, ObjectReader& r, ReceivingOrder& wro, Validation& validation) {
  const bool modern = call.version >= Version::v2026_07;
  // From 2026-07 boxes, box_items and tracking_number may not be null.
  const auto boxes = r.array("boxes", modern, modern ? 1 : 0);
  if (!boxes) return;
  const auto read_box = [&](ObjectReader& b, const std::string&) {
    WroBox box;
    if (auto tracking = b.string("tracking_number", {.required = modern, .min_length = modern ? 1u : 0u, .max_length = 100})) {
      box.tracking_number = std::string(*tracking);
    }
    const auto items = b.array("box_items", modern, modern ? 1 : 0);
    if (items) {
      const auto read_item = [&](ObjectReader& i, const std::string& item_path) {
        WroLine line;
        // inventory_id was required before 2026-07; from it a sku may name the item instead.
        const auto inventory_id = i.integer("inventory_id", {.required = !modern, .min = 1, .max = INT64_MAX});
        const auto sku = modern ? i.string("sku", {.max_length = 100}) : std::nullopt;
        const InventoryItem* item = nullptr;
        if (inventory_id) {
          auto found = call.store.inventory.find(*inventory_id);
          if (found != call.store.inventory.end() && found->second.merchant_id == call.principal.merchant_id) {
            item = &found->second;
          } else {
            validation.add(i.path("inventory_id"), "Inventory item " + std::to_string(*inventory_id) + " does not exist.");
          }
        } else if (sku) {
          const Merchant& merchant = call.merchant();
          if (auto variant = merchant.variant_by_sku.find(std::string(*sku)); variant != merchant.variant_by_sku.end()) {
            if (const Variant* v = call.store.find_variant(variant->second)) item = &call.store.inventory.at(v->inventory_id);
          }
          if (item == nullptr) validation.add(i.path("sku"), "No variant has sku '" + std::string(*sku) + "'.");
        } else if (modern) {
          validation.add(item_path, "A box item needs an inventory_id or a sku.");
        }
        if (auto quantity = i.integer("quantity", {.required = true, .min = 1, .max = 1000000})) {
          line.expected = static_cast<int>(*quantity);
        }
        if (auto lot = i.string("lot_number", {.max_length = 100})) line.lot_number = std::string(*lot);
        line.lot_date = i.date_time("lot_date");
        if (item != nullptr) {
          line.inventory_id = item->id;
          line.sku = item->sku;
        }
        box.line_indexes.push_back(wro.lines.size());
        wro.lines.push_back(std::move(line));
      };
      for_each_object(*items, b.path("box_items"), validation, "Each box item must be an object.", read_item);
    }
    wro.boxes.push_back(std::move(box));
  };
  for_each_object(*boxes, r.path("boxes"), validation, "Each box must be an object.", read_box);
}

std::string render(Call& call, const ReceivingOrder& wro, bool with_history) {
  JsonWriter w;
  write_receiving_order(w, call.store, wro, call.version, with_history);
  return w.take();
}

}  // namespace

HttpResponse create_receiving(Call& call) {
  Validation validation;
  const auto object = body_object(call, validation);
  if (!object) return receiving_invalid(call, validation);
  const bool modern = call.version >= Version::v2026_07;
  ObjectReader r(*object, "", validation);
  ReceivingOrder wro;
  wro.merchant_id = call.principal.merchant_id;
  if (auto center = r.object("fulfillment_center", true)) {
    ObjectReader c(*center, "fulfillment_center", validation);
    if (auto id = c.integer("id", {.required = true, .min = 1})) {
      if (call.store.find_fulfillment_center(static_cast<int>(*id)) == nullptr) {
        validation.add("fulfillment_center.id", "Fulfillment center " + std::to_string(*id) + " does not exist.");
      }
      wro.fulfillment_center_id = static_cast<int>(*id);
    }
  }
  if (auto type = r.string("package_type", {.required = true})) {
    if (!one_of(kPackageTypes, *type)) validation.add("package_type", "package_type must be Package, Pallet or FloorLoadedContainer.");
    wro.package_type = std::string(*type);
  }
  if (auto type = r.string("box_packaging_type", {.required = true})) {
    if (!one_of(kBoxPackagingTypes, *type)) {
      validation.add("box_packaging_type", "box_packaging_type must be EverythingInOneBox, OneSkuPerBox or MultipleSkuPerBox.");
    }
    wro.box_packaging_type = std::string(*type);
  }
  if (auto when = r.date_time("expected_arrival_date", true)) wro.expected_arrival_date = *when;
  if (auto po = r.string("purchase_order_number", {.max_length = 100})) wro.purchase_order_number = std::string(*po);
  if (modern) {
    if (auto freight = r.object("freight")) {
      ObjectReader f(*freight, "freight", validation);
      Freight value;
      value.carrier = std::string(f.string("carrier", {.max_length = 100}).value_or(""));
      value.bol_number = std::string(f.string("bol_number", {.max_length = 100}).value_or(""));
      value.container_number = std::string(f.string("container_number", {.max_length = 100}).value_or(""));
      value.vessel_name = std::string(f.string("vessel_name", {.max_length = 100}).value_or(""));
      value.freight_forwarder = std::string(f.string("freight_forwarder", {.max_length = 100}).value_or(""));
      value.notes = std::string(f.string("notes", {.max_length = 1000}).value_or(""));
      wro.freight = std::move(value);
    }
    if (auto destination = r.integer("final_destination_fulfillment_center_id", {.min = 1})) {
      if (call.store.find_fulfillment_center(static_cast<int>(*destination)) == nullptr) {
        validation.add("final_destination_fulfillment_center_id",
                       "Fulfillment center " + std::to_string(*destination) + " does not exist.");
      }
      wro.final_destination_fulfillment_center_id = static_cast<int>(*destination);
    }
  }
  read_boxes(call, r, wro, validation);
  if (!validation.ok()) return receiving_invalid(call, validation);

  wro.id = call.store.next.receiving++;
  wro.insert_date = call.now;
  wro.last_updated_date = call.now;
  wro.history.emplace_back(WroStatus::awaiting, call.now);
  for (const auto& line : wro.lines) {
    auto item = call.store.inventory.find(line.inventory_id);
    if (item == call.store.inventory.end()) continue;
    auto& lots = item->second.lots;
    auto lot = std::find_if(lots.begin(), lots.end(), [&](const LotLevel& l) {
      return l.location_id == wro.fulfillment_center_id && l.lot_number == line.lot_number;
    });
    if (lot == lots.end()) {
      LotLevel level;
      level.location_id = wro.fulfillment_center_id;
      level.lot_number = line.lot_number;
      level.lot_date = line.lot_date;
      lots.push_back(level);
      lot = lots.end() - 1;
    }
    lot->awaiting += line.expected;
  }
  call.merchant().receiving_ids.push_back(wro.id);
  call.sandbox.simulator().schedule(wro);
  const ReceivingOrder& stored = call.store.receiving_orders.emplace(wro.id, std::move(wro)).first->second;
  ++call.sandbox.stats().creates["receiving_orders"];
  return json_response(201, render(call, stored, false));
}

HttpResponse get_receiving(Call& call) {
  const auto id = param_id(call, 0);
  const ReceivingOrder* wro = id ? owned_wro(call, *id) : nullptr;
  if (wro == nullptr) return not_found(call, "Receiving order " + std::string(call.params[0]));
  return json_response(200, render(call, *wro, true));
}

HttpResponse set_external_sync(Call& call) {
  Validation validation;
  const auto object = body_object(call, validation);
  if (!object) return validation_problem(400, validation, call.path());
  ObjectReader r(*object, "", validation);
  const auto flag = r.boolean("is_external_sync", true);
  std::vector<Id> ids;
  if (auto list = r.array("ids", true, 1)) {
    std::size_t index = 0;
    for (auto value : *list) {
      std::int64_t id = 0;
      if (value.get_int64().get(id) != simdjson::SUCCESS) validation.add(r.index_path("ids", index), "An id must be an integer.");
      ids.push_back(id);
      ++index;
    }
  }
  if (!validation.ok()) return validation_problem(400, validation, call.path());
  for (Id id : ids) {
    if (owned_wro(call, id) == nullptr) return not_found(call, "Receiving order " + std::to_string(id));
  }
  for (Id id : ids) {
    ReceivingOrder& wro = *owned_wro(call, id);
    wro.is_external_sync = *flag;
    wro.external_sync_timestamp = *flag ? std::optional<TimePoint>(call.now) : std::nullopt;
  }
  // "Response: a WRO": the first one named (all of them are flagged).
  JsonWriter w;
  write_receiving_order(w, call.store, *owned_wro(call, ids.front()), call.version, false);
  return json_response(200, w.take());
}

HttpResponse receiving_distributions(Call& call) {
  const auto id = param_id(call, 0);
  if (!id) {
    Validation validation;
    validation.add("id", "The receiving order id must be a positive integer.");
    if (call.version >= Version::v2026_07) return problem(400, validation.first(), call.path());
    return validation_problem(400, validation, call.path());
  }
  const ReceivingOrder* wro = owned_wro(call, *id);
  if (wro == nullptr) return not_found(call, "Receiving order " + std::string(call.params[0]));
  // Stock received at a hub is distributed to the final destination; otherwise it stays.
  const int destination = wro->final_destination_fulfillment_center_id.value_or(wro->fulfillment_center_id);
  JsonWriter w;
  w.begin_array();
  for (const auto& line : wro->lines) {
    w.begin_object().key("fulfillment_center");
    write_fulfillment_center_ref(w, call.store, destination);
    w.field("inventory_id", line.inventory_id)
        .field("sku", line.sku)
        .field("expected_quantity", line.expected)
        .field("distributed_quantity", line.stowed)
        .end_object();
  }
  w.end_array();
  return json_response(200, w.take());
}

HttpResponse list_unidentified_receiving(Call& call) {
  Validation validation;
  const bool completed = call.query.boolean("isCompleted", validation).value_or(false);
  const auto cursor = call.query.integer("Cursor", 1, 2147483647, validation).value_or(1);
  if (!validation.ok()) return validation_problem(400, validation, call.path());
  std::vector<const UnidentifiedReceivingOrder*> matched;
  for (Id id : call.merchant().unidentified_receiving_ids) {
    const auto& uro = call.store.unidentified_receiving_orders.at(id);
    if (uro.wro_id.has_value() == completed) matched.push_back(&uro);
  }
  constexpr std::size_t kPageSize = 50;
  JsonWriter w;
  w.begin_object().key("items").begin_array();
  for (std::size_t i = static_cast<std::size_t>(cursor - 1) * kPageSize; i < matched.size() && i < static_cast<std::size_t>(cursor) * kPageSize; ++i) {
    write_unidentified_receiving_order(w, call.store, *matched[i], false);
  }
  w.end_array();
  write_cursor_links(w, call, "Cursor", cursor, (matched.size() + kPageSize - 1) / kPageSize, false);
  w.end_object();
  return json_response(200, w.take());
}

HttpResponse get_unidentified_receiving(Call& call) {
  const UnidentifiedReceivingOrder* uro = owned_uro(call);
  if (uro == nullptr) return not_found(call, "Unidentified receiving order " + std::string(call.params[0]));
  JsonWriter w;
  write_unidentified_receiving_order(w, call.store, *uro, true);
  return json_response(200, w.take());
}

HttpResponse associate_unidentified_receiving(Call& call) {
  UnidentifiedReceivingOrder* uro = owned_uro(call);
  if (uro == nullptr) return not_found(call, "Unidentified receiving order " + std::string(call.params[0]));
  Validation validation;
  const auto object = body_object(call, validation);
  if (!object) return validation_problem(422, validation, call.path());
  ObjectReader r(*object, "", validation);
  const auto wro_id = r.integer("receiving_order_id", {.required = true, .min = 1});
  if (wro_id && owned_wro(call, *wro_id) == nullptr) {
    validation.add("receiving_order_id", "Receiving order " + std::to_string(*wro_id) + " does not exist.");
  }
  if (validation.ok() && uro->wro_id && *uro->wro_id != *wro_id) {
    validation.add("receiving_order_id", "Unidentified receiving order " + std::to_string(uro->id) +
                                             " is already linked to receiving order " + std::to_string(*uro->wro_id) + ".");
  }
  if (!validation.ok()) return validation_problem(422, validation, call.path());
  uro->wro_id = *wro_id;
  uro->completed_date = call.now;
  JsonWriter w;
  write_unidentified_receiving_order(w, call.store, *uro, true);
  return json_response(200, w.take());
}

}  // namespace fulfillsync::sandbox
