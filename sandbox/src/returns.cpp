// Returns: POST /return, GET /return/{id}, GET /return, PUT /return/{id}.
#include <algorithm>
#include <strings.h>

#include "fulfillsync/sandbox/handlers.hpp"
#include "fulfillsync/sandbox/render.hpp"
#include "fulfillsync/sandbox/sandbox.hpp"

namespace fulfillsync::sandbox {
namespace {

using simdjson::dom::element_type;

// The create and update body (PUT replaces the editable fields); lot fields from 2026-01 on PUT.
bool read_return_body(Call& call, simdjson::dom::object object, ReturnOrder& ret, Validation& validation,
                      bool accept_lots) {
  ObjectReader r(object, "", validation);
  if (auto reference = r.string("reference_id", {.required = true, .min_length = 1, .max_length = 50})) {
    ret.reference_id = std::string(*reference);
  }
  if (auto center = r.object("fulfillment_center", true)) {
    ObjectReader c(*center, "fulfillment_center", validation);
    if (auto id = c.integer("id", {.required = true, .min = 1})) {
      if (call.store.find_fulfillment_center(static_cast<int>(*id)) == nullptr) {
        validation.add("fulfillment_center.id", "Fulfillment center " + std::to_string(*id) + " does not exist.");
      }
      ret.fulfillment_center_id = static_cast<int>(*id);
    }
    c.string("name");
  }
  if (auto tracking = r.string("tracking_number", {.max_length = 500})) ret.tracking_number = std::string(*tracking);
  if (auto shipment_id = r.integer("original_shipment_id", {.min = 1})) {
    Order* order = nullptr;
    if (call.store.find_shipment(*shipment_id, &order) == nullptr || order->merchant_id != call.principal.merchant_id) {
      validation.add("original_shipment_id", "Shipment " + std::to_string(*shipment_id) + " does not exist.");
    } else {
      ret.original_shipment_id = *shipment_id;
      ret.store_order_id = order->reference_id;
      ret.customer_name = order->recipient_name;
    }
  }
  ret.tags_json = r.raw("tags", element_type::ARRAY);
  ret.lines.clear();
  if (auto inventory = r.array("inventory", true, 1)) {
    const auto read_line = [&](ObjectReader& l, const std::string&) {
      ReturnLine line;
      if (auto id = l.integer("id", {.required = true, .min = 1, .max = INT64_MAX})) {
        auto found = call.store.inventory.find(*id);
        if (found == call.store.inventory.end() || found->second.merchant_id != call.principal.merchant_id) {
          validation.add(l.path("id"), "Inventory item " + std::to_string(*id) + " does not exist.");
        } else {
          line.inventory_id = *id;
          line.name = found->second.name;
          line.sku = found->second.sku;
        }
      }
      if (auto quantity = l.integer("quantity", {.required = true, .min = 1, .max = 1000000})) {
        line.quantity = static_cast<int>(*quantity);
      }
      if (auto action = l.string("requested_action", {.required = true, .min_length = 1})) {
        line.requested_action = std::string(*action);
      }
      if (accept_lots) {
        if (auto lot = l.string("lot_number", {.max_length = 100})) line.lot_number = std::string(*lot);
        line.lot_date = l.date_time("lot_date");
      }
      ret.lines.push_back(std::move(line));
    };
    for_each_object(*inventory, r.path("inventory"), validation, "The field {} must be an object.", read_line);
  }
  return validation.ok();
}

ReturnOrder* owned_return(Call& call) {
  const auto id = param_id(call, 0);
  if (!id) return nullptr;
  auto found = call.store.returns.find(*id);
  if (found == call.store.returns.end() || found->second.merchant_id != call.principal.merchant_id) return nullptr;
  return &found->second;
}

std::string render(Call& call, const ReturnOrder& ret, ReturnForm form) {
  JsonWriter w;
  write_return(w, call.store, ret, form, call.version);
  return w.take();
}

bool in_list(const std::vector<std::string>& list, std::string_view value) {
  return std::any_of(list.begin(), list.end(), [&](const std::string& item) {
    return item.size() == value.size() && strncasecmp(item.data(), value.data(), value.size()) == 0;
  });
}

}  // namespace

HttpResponse create_return(Call& call) {
  Validation validation;
  const auto object = body_object(call, validation);
  ReturnOrder ret;
  if (!object || !read_return_body(call, *object, ret, validation, false)) {
    return validation_problem(400, validation, call.path());
  }
  const std::string_view source = call.request.header("creationsourceid");
  if (!source.empty()) {
    const auto parsed = parse_int(source);
    if (!parsed || *parsed < INT32_MIN || *parsed > INT32_MAX) {
      validation.add("creationSourceId", "The creationSourceId header must be an int32.");
      return validation_problem(400, validation, call.path());
    }
    ret.creation_source_id = static_cast<int>(*parsed);
  }
  Merchant& merchant = call.merchant();
  if (merchant.return_by_reference.contains(ret.reference_id)) {
    ++call.sandbox.stats().duplicates_refused;
    return duplicate_reference("return");
  }
  ret.id = call.store.next.return_order++;
  ret.merchant_id = merchant.id;
  ret.channel_id = call.channel->id;
  ret.insert_date = call.now;
  ret.history.emplace_back(ReturnStatus::awaiting_arrival, call.now);
  merchant.return_ids.push_back(ret.id);
  merchant.return_by_reference.emplace(ret.reference_id, ret.id);
  call.sandbox.simulator().schedule(ret);
  const ReturnOrder& stored = call.store.returns.emplace(ret.id, std::move(ret)).first->second;
  ++call.sandbox.stats().creates["returns"];
  return json_response(201, render(call, stored, ReturnForm::created));
}

HttpResponse get_return(Call& call) {
  const ReturnOrder* ret = owned_return(call);
  if (ret == nullptr) return not_found(call, "Return " + std::string(call.params[0]));
  return json_response(200, render(call, *ret, ReturnForm::detail));
}

HttpResponse update_return(Call& call) {
  const bool modern = call.version >= Version::v2026_01;
  // 2025-07 carries the channel header; from 2026-01 there is none and validation answers 422.
  const auto fail = [&](const Validation& validation) {
    return modern ? return_update_failure(validation) : validation_problem(400, validation, call.path());
  };
  if (!modern && call.channel == nullptr) {
    Validation validation;
    validation.add("service_channel_id", "The service_channel_id header is required.");
    return fail(validation);
  }
  ReturnOrder* ret = owned_return(call);
  if (ret == nullptr) return not_found(call, "Return " + std::string(call.params[0]));
  Validation validation;
  const auto object = body_object(call, validation);
  ReturnOrder updated = *ret;
  if (!object || !read_return_body(call, *object, updated, validation, modern)) return fail(validation);
  if (updated.reference_id != ret->reference_id) {
    validation.add("reference_id", "reference_id is immutable.");
    return fail(validation);
  }
  if (ret->status != ReturnStatus::awaiting_arrival) {
    validation.add("status", "Return " + std::to_string(ret->id) + " is " + std::string(return_status_name(ret->status)) +
                                 "; only returns awaiting arrival can be updated.");
    return modern ? return_update_failure(validation) : validation_problem(422, validation, call.path());
  }
  *ret = std::move(updated);
  return json_response(200, render(call, *ret, ReturnForm::detail));
}

HttpResponse list_returns(Call& call) {
  Validation validation;
  const auto cursor = call.query.integer("Cursor", 1, 2147483647, validation).value_or(1);
  const auto limit = call.query.integer("Limit", 1, 250, validation).value_or(50);
  const auto ids = call.query.id_list("Ids");
  const auto references = call.query.list("ReferenceIds");
  const auto statuses = call.query.list("Status");
  const auto centers = call.query.id_list("FulfillmentCenterIds");
  const auto tracking = call.query.list("TrackingNumbers");
  const auto shipments = call.query.id_list("OriginalShipmentIds");
  const auto inventory = call.query.id_list("InventoryIds");
  const auto start = call.query.date_time("StartDate", validation);
  const auto end = call.query.date_time("EndDate", validation);
  const auto completed_start = call.query.date_time("CompletedStartDate", validation);
  const auto completed_end = call.query.date_time("CompletedEndDate", validation);
  const auto types = call.query.list("ReturnTypes");
  const auto actions = call.query.list("ReturnActions");
  const auto store_orders = call.query.list("StoreOrderIds");
  bool descending = false;
  if (const auto order = call.query.get("SortOrder")) {
    const std::string text(*order);
    descending = strcasecmp(text.c_str(), "Desc") == 0 || strcasecmp(text.c_str(), "Descending") == 0 ||
                 strcasecmp(text.c_str(), "Newest") == 0;
    if (!descending && strcasecmp(text.c_str(), "Asc") != 0 && strcasecmp(text.c_str(), "Ascending") != 0 &&
        strcasecmp(text.c_str(), "Oldest") != 0) {
      validation.add("SortOrder", "The value '" + text + "' is not valid for SortOrder (Asc, Desc).");
    }
  }
  std::string sort_by = "id";
  if (const auto by = call.query.get("Sortby")) {
    sort_by = std::string(*by);
    for (auto& c : sort_by) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (sort_by != "id" && sort_by != "insertdate" && sort_by != "insert_date" && sort_by != "completeddate" &&
        sort_by != "completed_date" && sort_by != "status") {
      validation.add("Sortby", "The value '" + std::string(*by) + "' is not valid for Sortby (Id, InsertDate, CompletedDate, Status).");
    }
  }
  if (!validation.ok()) return validation_problem(400, validation, call.path());

  const auto contains = [](const auto& list, auto value) { return std::find(list.begin(), list.end(), value) != list.end(); };
  std::vector<const ReturnOrder*> matched;
  for (Id id : call.merchant().return_ids) {
    const ReturnOrder& ret = call.store.returns.at(id);
    if (call.channel != nullptr && ret.channel_id != call.channel->id) continue;
    if (ids && !contains(*ids, ret.id)) continue;
    if (!references.empty() && !contains(references, ret.reference_id)) continue;
    if (!statuses.empty() && !in_list(statuses, return_status_name(ret.status))) continue;
    if (centers && !contains(*centers, static_cast<std::int64_t>(ret.fulfillment_center_id))) continue;
    if (!tracking.empty() && (!ret.tracking_number || !contains(tracking, *ret.tracking_number))) continue;
    if (shipments && (!ret.original_shipment_id || !contains(*shipments, *ret.original_shipment_id))) continue;
    if (inventory && std::none_of(ret.lines.begin(), ret.lines.end(),
                                  [&](const ReturnLine& line) { return contains(*inventory, line.inventory_id); })) {
      continue;
    }
    if (start && ret.insert_date < *start) continue;
    if (end && ret.insert_date > *end) continue;
    if ((completed_start || completed_end) && !ret.completed_date) continue;
    if (completed_start && *ret.completed_date < *completed_start) continue;
    if (completed_end && *ret.completed_date > *completed_end) continue;
    if (!types.empty() && !in_list(types, ret.return_type)) continue;
    if (!actions.empty() && std::none_of(ret.lines.begin(), ret.lines.end(), [&](const ReturnLine& line) {
          return in_list(actions, line.requested_action);
        })) {
      continue;
    }
    if (!store_orders.empty() && (!ret.store_order_id || !contains(store_orders, *ret.store_order_id))) continue;
    matched.push_back(&ret);
  }
  const auto key = [&](const ReturnOrder* ret) -> std::pair<TimePoint, Id> {
    if (sort_by == "insertdate" || sort_by == "insert_date") return {ret->insert_date, ret->id};
    if (sort_by == "completeddate" || sort_by == "completed_date") return {ret->completed_date.value_or(TimePoint{}), ret->id};
    if (sort_by == "status") return {TimePoint{} + std::chrono::seconds(static_cast<int>(ret->status)), ret->id};
    return {TimePoint{}, ret->id};
  };
  std::stable_sort(matched.begin(), matched.end(), [&](const ReturnOrder* a, const ReturnOrder* b) {
    return descending ? key(b) < key(a) : key(a) < key(b);
  });
  const auto size = static_cast<std::size_t>(limit);
  const std::size_t pages = (matched.size() + size - 1) / size;
  JsonWriter w;
  w.begin_object().key("items").begin_array();
  for (std::size_t i = static_cast<std::size_t>(cursor - 1) * size; i < matched.size() && i < static_cast<std::size_t>(cursor) * size; ++i) {
    write_return(w, call.store, *matched[i], ReturnForm::detail, call.version);
  }
  w.end_array();
  write_cursor_links(w, call, "Cursor", cursor, pages, true);
  w.end_object();
  return json_response(200, w.take());
}

}  // namespace fulfillsync::sandbox
