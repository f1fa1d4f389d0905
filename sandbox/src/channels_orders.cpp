// Channels, orders and shipments: POST/GET /order, cancel, timeline, batch tracking upload.
#include <algorithm>
#include <strings.h>

#include "fulfillsync/sandbox/handlers.hpp"
#include "fulfillsync/sandbox/render.hpp"
#include "fulfillsync/sandbox/sandbox.hpp"

namespace fulfillsync::sandbox {
namespace {

using simdjson::dom::element_type;

// An order line as validated, before any product is created for it.
struct PendingLine {
  OrderLine line;
  bool create_product = false;
};

void validate_recipient(ObjectReader& order, Validation& validation, std::string& name) {
  const auto recipient = order.object("recipient", true);
  if (!recipient) return;
  ObjectReader r(*recipient, "recipient", validation);
  if (auto text = r.string("name", {.required = true, .min_length = 1})) name = std::string(*text);
  r.string("email");
  r.string("phone_number");
  const auto address = r.object("address", true);
  if (!address) return;
  ObjectReader a(*address, "recipient.address", validation);
  a.string("address1", {.required = true, .min_length = 1});
  a.string("address2");
  a.string("city", {.required = true, .min_length = 1});
  a.string("company_name");
  a.string("country", {.required = true, .min_length = 2});
  a.string("state");
  a.string("zip_code");
}

void validate_tags(ObjectReader& reader, Validation& validation) {
  const auto tags = reader.array("tags");
  if (!tags) return;
  for_each_object(*tags, reader.path("tags"), validation, "The field {} must be an object with name and value.",
                  [](ObjectReader& t, const std::string&) {
                    t.string("name", {.required = true, .min_length = 1});
                    t.string("value");
                  });
}

std::vector<PendingLine> read_order_lines(Call& call, ObjectReader& order, Validation& validation) {
  std::vector<PendingLine> lines;
  const auto products = order.array("products", true, 1);
  if (!products) return lines;
  Merchant& merchant = call.merchant();
  const auto read_line = [&](ObjectReader& p, const std::string& path) {
    PendingLine pending;
    OrderLine& line = pending.line;
    const auto id = p.integer("id", {.min = 1, .max = INT64_MAX});
    const auto reference = p.string("reference_id", {.min_length = 1, .max_length = 300});
    const auto name = p.string("name", {.max_length = 400});
    if (auto quantity = p.integer("quantity", {.required = true, .min = 1, .max = 1000000})) {
      line.quantity = static_cast<int>(*quantity);
    }
    line.external_line_id = p.integer("external_line_id", {.min = INT64_MIN, .max = INT64_MAX});
    if (auto uom = p.string("quantity_unit_of_measure_code", {.max_length = 20})) line.unit_of_measure = *uom;
    line.unit_price = p.number("unit_price");
    if (auto sku = p.string("sku", {.max_length = 400})) line.sku = *sku;
    if (!id && !reference && !p.present("id") && !p.present("reference_id")) {
      validation.add(path, "Each product needs an id or a reference_id.");
      return;
    }
    if (id) {
      auto product = call.store.products.find(*id);
      if (product == call.store.products.end() || product->second.merchant_id != call.principal.merchant_id ||
          product->second.variants.empty()) {
        validation.add(p.path("id"), "Product " + std::to_string(*id) + " does not exist.");
        return;
      }
      const Variant& variant = product->second.variants.front();
      line.product_id = product->second.id;
      line.inventory_id = variant.inventory_id;
      line.name = product->second.name;
      line.sku = variant.sku;
      line.reference_id = reference ? std::string(*reference) : product->second.reference_id;
    } else if (reference) {
      line.reference_id = std::string(*reference);
      Product* product = nullptr;
      const Variant* variant = nullptr;
      if (auto found = merchant.product_by_reference.find(line.reference_id); found != merchant.product_by_reference.end()) {
        product = &call.store.products.at(found->second);
        variant = &product->variants.front();
      } else if (auto by_sku = merchant.variant_by_sku.find(line.reference_id); by_sku != merchant.variant_by_sku.end()) {
        variant = call.store.find_variant(by_sku->second, &product);
      }
      if (variant != nullptr) {
        line.product_id = product->id;
        line.inventory_id = variant->inventory_id;
        line.name = variant->name;
        line.sku = variant->sku;
      } else if (!name || name->empty()) {
        validation.add(p.path("name"), "The product name is required when no product with reference_id '" +
                                           line.reference_id + "' exists.");
        return;
      } else {
        line.name = std::string(*name);
        if (line.sku.empty()) line.sku = line.reference_id;
        pending.create_product = true;
      }
    }
    lines.push_back(std::move(pending));
  };
  for_each_object(*products, order.path("products"), validation, "The field {} must be an object.", read_line);
  return lines;
}

// Where the service sends an order it may place itself: the center in the recipient's state,
// else the first with stock for every line, else the first.
int choose_location(Store& store, const std::vector<OrderLine>& lines, std::string_view state) {
  for (const auto& center : store.fulfillment_centers()) {
    if (!state.empty() && strcasecmp(center.state.c_str(), std::string(state).c_str()) == 0) return center.id;
  }
  for (const auto& center : store.fulfillment_centers()) {
    bool stocked = !lines.empty();
    for (const auto& line : lines) {
      auto item = store.inventory.find(line.inventory_id);
      std::int64_t available = 0;
      if (item != store.inventory.end()) {
        for (const auto& lot : item->second.lots) {
          if (lot.location_id == center.id) available += lot.fulfillable();
        }
      }
      if (available < line.quantity) stocked = false;
    }
    if (stocked) return center.id;
  }
  return store.fulfillment_centers().front().id;
}

Order* owned_order(Call& call, std::size_t param_index) {
  const auto id = param_id(call, param_index);
  if (!id) return nullptr;
  Order* order = call.store.find_order(*id);
  if (order == nullptr || order->merchant_id != call.principal.merchant_id) return nullptr;
  return order;
}

std::string render_order(Call& call, const Order& order) {
  JsonWriter w(2048);
  write_order(w, call.store, order, call.version);
  return w.take();
}

bool any_tracking(const Order& order) {
  return std::any_of(order.shipments.begin(), order.shipments.end(), [](const Shipment& s) { return has_tracking(s); });
}

bool tracking_fully_uploaded(const Order& order) {
  bool any = false;
  for (const auto& shipment : order.shipments) {
    if (!has_tracking(shipment)) continue;
    any = true;
    if (!shipment.is_tracking_uploaded) return false;
  }
  return any;
}

std::optional<TimePoint> last_tracking_update(const Order& order) {
  std::optional<TimePoint> latest;
  for (const auto& shipment : order.shipments) {
    if (shipment.last_tracking_update_at && (!latest || *shipment.last_tracking_update_at > *latest)) {
      latest = shipment.last_tracking_update_at;
    }
  }
  return latest;
}

}  // namespace

HttpResponse list_channels(Call& call) {
  Validation validation;
  const auto per_page = call.query.integer("RecordsPerPage", 1, 250, validation).value_or(50);
  const auto cursor = call.query.integer("Cursor", 1, 2147483647, validation).value_or(1);
  if (!validation.ok()) return validation_problem(400, validation, call.path());
  std::vector<const Channel*> visible;
  for (int id : call.merchant().channel_ids) {
    const Channel* channel = call.store.find_channel(id);
    // An OAuth application sees its own channel; a personal token sees the merchant's.
    if (call.principal.application == "pat" || channel->id == call.principal.channel_id) visible.push_back(channel);
  }
  const auto size = static_cast<std::size_t>(per_page);
  const std::size_t pages = (visible.size() + size - 1) / size;
  JsonWriter w;
  w.begin_object().key("items").begin_array();
  for (std::size_t i = static_cast<std::size_t>(cursor - 1) * size; i < visible.size() && i < static_cast<std::size_t>(cursor) * size; ++i) {
    write_channel(w, *visible[i]);
  }
  w.end_array();
  write_cursor_links(w, call, "Cursor", cursor, pages, false);
  w.end_object();
  return json_response(200, w.take());
}

HttpResponse create_order(Call& call) {
  Validation validation;
  const auto object = body_object(call, validation);
  if (!object) return validation_problem(400, validation, call.path());
  ObjectReader r(*object, "", validation);
  Order order;
  order.merchant_id = call.principal.merchant_id;
  order.channel_id = call.channel->id;
  if (auto reference = r.string("reference_id", {.required = true, .min_length = 1, .max_length = 300})) {
    order.reference_id = std::string(*reference);
  }
  if (auto text = r.string("order_number", {.max_length = 400})) order.order_number = std::string(*text);
  if (auto text = r.string("gift_message", {.max_length = 500})) order.gift_message = std::string(*text);
  if (auto text = r.string("origin_platform_program", {.max_length = 100})) order.origin_platform_program = std::string(*text);
  if (auto text = r.string("sales_channel", {.max_length = 100})) order.sales_channel = std::string(*text);
  if (auto text = r.string("shipping_method", {.required = true, .min_length = 1, .max_length = 100})) {
    order.shipping_method = std::string(*text);
  }
  if (auto type = r.string("type")) {
    if (*type != "DTC" && *type != "DropShip" && *type != "B2B") {
      validation.add("type", "The field type must be one of DTC, DropShip, B2B.");
    } else {
      order.type = std::string(*type);
    }
  }
  order.purchase_date = r.date_time("purchase_date");
  const auto location_id = r.integer("location_id");
  if (location_id && call.store.find_fulfillment_center(static_cast<int>(*location_id)) == nullptr) {
    validation.add("location_id", "Fulfillment center " + std::to_string(*location_id) + " does not exist.");
  }
  validate_recipient(r, validation, order.recipient_name);
  if (auto financials = r.object("financials")) {
    ObjectReader f(*financials, "financials", validation);
    if (f.number("total_price")) order.total_price = raw_number_text(call.request.body, {"financials", "total_price"});
  }
  if (auto retailer = r.object("retailer_program_data")) {
    // The spec types these three as date-times; anything else is refused rather than echoed.
    ObjectReader data(*retailer, "retailer_program_data", validation);
    for (const auto key : {"delivery_date", "doNotShipBeforeDate", "shipByDate"}) data.date_time(key);
  }
  order.retailer_program_data_json = r.raw("retailer_program_data", element_type::OBJECT);
  order.shipping_terms_json = r.raw("shipping_terms", element_type::OBJECT);
  validate_tags(r, validation);
  order.tags_json = r.raw("tags", element_type::ARRAY);
  auto pending = read_order_lines(call, r, validation);
  if (!validation.ok()) return validation_problem(400, validation, call.path());

  Merchant& merchant = call.merchant();
  if (merchant.order_by_reference.contains(order.reference_id)) {
    ++call.sandbox.stats().duplicates_refused;
    return duplicate_reference("order");
  }
  simdjson::dom::element recipient;
  if (object->at_key("recipient").get(recipient) == simdjson::SUCCESS) order.recipient_json = simdjson::minify(recipient);
  std::string_view state;
  if ((*object)["recipient"]["address"]["state"].get_string().get(state) != simdjson::SUCCESS) state = {};

  for (auto& [line, create_product] : pending) {
    if (create_product) {
      // The service creates a product for a reference it has not seen, named as sent.
      Product product;
      product.merchant_id = merchant.id;
      product.name = line.name;
      product.reference_id = line.reference_id;
      product.created_on = call.now;
      Variant variant;
      variant.name = line.name;
      variant.sku = line.sku;
      product.variants.push_back(std::move(variant));
      const Product& created = call.store.add_product(std::move(product));
      line.product_id = created.id;
      line.inventory_id = created.variants.front().inventory_id;
      ++call.sandbox.stats().creates["products"];
    }
    order.lines.push_back(std::move(line));
  }
  const bool known_method = std::any_of(merchant.shipping_methods.begin(), merchant.shipping_methods.end(),
                                        [&](const std::string& m) { return strcasecmp(m.c_str(), order.shipping_method.c_str()) == 0; });
  if (!known_method) merchant.shipping_methods.push_back(order.shipping_method);

  order.created = call.now;
  order.last_update = call.now;
  Shipment shipment;
  shipment.location_id = location_id ? static_cast<int>(*location_id) : choose_location(call.store, order.lines, state);
  shipment.created = call.now;
  shipment.last_update_at = call.now;
  shipment.estimated_fulfillment_date = call.now + std::chrono::hours(24);
  order.shipments.push_back(std::move(shipment));
  const Order& stored = call.sandbox.simulator().place_order(call.store, std::move(order));
  ++call.sandbox.stats().creates["orders"];
  return json_response(201, render_order(call, stored));
}

HttpResponse list_orders(Call& call) {
  Validation validation;
  const auto window = read_page_window(call, validation, "Page", "Limit", 50, 250);
  const auto ids = call.query.integer_list("IDs", validation);
  const auto references = call.query.list("ReferenceIds");
  const bool filter_references = call.query.get("ReferenceIds").has_value();
  const auto start = call.query.date_time("StartDate", validation);
  const auto end = call.query.date_time("EndDate", validation);
  const auto updated_start = call.query.date_time("LastUpdateStartDate", validation);
  const auto updated_end = call.query.date_time("LastUpdateEndDate", validation);
  const auto tracking_start = call.query.date_time("LastTrackingUpdateStartDate", validation);
  const auto tracking_end = call.query.date_time("LastTrackingUpdateEndDate", validation);
  const auto with_tracking = call.query.boolean("HasTracking", validation);
  const auto uploaded = call.query.boolean("IsTrackingUploaded", validation);
  bool newest_first = false;
  if (const auto sort = call.query.get("SortOrder")) {
    if (strcasecmp(std::string(*sort).c_str(), "Newest") == 0 || strcasecmp(std::string(*sort).c_str(), "Desc") == 0) {
      newest_first = true;
    } else if (strcasecmp(std::string(*sort).c_str(), "Oldest") != 0 && strcasecmp(std::string(*sort).c_str(), "Asc") != 0) {
      validation.add("SortOrder", "The value '" + std::string(*sort) + "' is not valid for SortOrder (Newest, Oldest).");
    }
  }
  if (!validation.ok()) return validation_problem(400, validation, call.path());

  const Merchant& merchant = call.merchant();
  std::vector<Id> candidates;
  if (ids) {
    candidates = *ids;
  } else if (filter_references) {
    for (const auto& reference : references) {
      if (auto found = merchant.order_by_reference.find(reference); found != merchant.order_by_reference.end()) {
        candidates.push_back(found->second);
      }
    }
  }
  const bool from_lists = ids || filter_references;
  if (from_lists) {
    std::sort(candidates.begin(), candidates.end());
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  }
  const bool unfiltered = !from_lists && !start && !end && !updated_start && !updated_end && !tracking_start &&
                          !tracking_end && !with_tracking && !uploaded && call.channel == nullptr;
  const auto keep = [&](const Order& order) {
    if (order.merchant_id != call.principal.merchant_id) return false;
    if (filter_references && ids &&
        std::find(references.begin(), references.end(), order.reference_id) == references.end()) {
      return false;
    }
    if (call.channel != nullptr && order.channel_id != call.channel->id) return false;
    if (start && order.created < *start) return false;
    if (end && order.created > *end) return false;
    if (updated_start && order.last_update < *updated_start) return false;
    if (updated_end && order.last_update > *updated_end) return false;
    if (with_tracking && any_tracking(order) != *with_tracking) return false;
    if (uploaded && tracking_fully_uploaded(order) != *uploaded) return false;
    if (tracking_start || tracking_end) {
      const auto latest = last_tracking_update(order);
      if (!latest) return false;
      if (tracking_start && *latest < *tracking_start) return false;
      if (tracking_end && *latest > *tracking_end) return false;
    }
    return true;
  };

  const std::vector<Id>& source = from_lists ? candidates : merchant.order_ids;
  std::vector<const Order*> page;
  std::size_t total = 0;
  const std::size_t first = window->first();
  const auto limit = static_cast<std::size_t>(window->limit);
  if (unfiltered) {
    // Every order of the merchant: the page is a slice, no scan needed.
    total = source.size();
    for (std::size_t i = first; i < total && i < first + limit; ++i) {
      const std::size_t at = newest_first ? total - 1 - i : i;
      page.push_back(call.store.find_order(source[at]));
    }
  } else {
    const auto visit = [&](Id id) {
      const Order* order = call.store.find_order(id);
      if (order == nullptr || !keep(*order)) return;
      if (total >= first && total < first + limit) page.push_back(order);
      ++total;
    };
    if (newest_first) {
      for (auto it = source.rbegin(); it != source.rend(); ++it) visit(*it);
    } else {
      for (Id id : source) visit(id);
    }
  }
  JsonWriter w(page.size() * 2048 + 16);
  w.begin_array();
  for (const Order* order : page) write_order(w, call.store, *order, call.version);
  w.end_array();
  HttpResponse response = json_response(200, w.take());
  set_page_headers(call, response, *window, total, "Page");
  return response;
}

HttpResponse get_order(Call& call) {
  const Order* order = owned_order(call, 0);
  if (order == nullptr) return not_found(call, "Order " + std::string(call.params[0]));
  return json_response(200, render_order(call, *order));
}

HttpResponse cancel_order(Call& call) {
  Order* order = owned_order(call, 0);
  if (order == nullptr) return not_found(call, "Order " + std::string(call.params[0]));
  for (const auto& shipment : order->shipments) {
    if (stage_shipped(shipment.stage)) {
      return problem(422,
                     "Order " + std::to_string(order->id) + " cannot be cancelled: shipment " +
                         std::to_string(shipment.id) + " has already shipped (" +
                         std::string(stage_detail_name(shipment.stage)) + ").",
                     call.path());
    }
  }
  // Cancelling a cancelled order is a no-op that answers the same, so a client may repeat it.
  for (auto& shipment : order->shipments) {
    if (shipment.stage == Stage::cancelled) continue;
    std::string why;
    Simulator::move_shipment(call.store, *order, shipment, Stage::cancelled, call.now, why);
  }
  order->status = OrderStatus::cancelled;
  ++order->cancels_processed;
  JsonWriter w(2048);
  w.begin_object().key("order");
  write_order(w, call.store, *order, call.version);
  w.field("status", "Success").end_object();
  return json_response(200, w.take());
}

HttpResponse shipment_timeline(Call& call) {
  const Order* order = owned_order(call, 0);
  if (order == nullptr) return not_found(call, "Order " + std::string(call.params[0]));
  const auto shipment_id = param_id(call, 1);
  for (const auto& shipment : order->shipments) {
    if (shipment_id && shipment.id == *shipment_id) {
      JsonWriter w;
      write_timeline(w, shipment);
      return json_response(200, w.take());
    }
  }
  return not_found(call, "Shipment " + std::string(call.params[1]) + " of order " + std::to_string(order->id));
}

HttpResponse batch_update_tracking_upload(Call& call) {
  Validation validation;
  const auto object = body_object(call, validation);
  if (!object) return validation_problem(400, validation, call.path());
  ObjectReader r(*object, "", validation);
  const auto flag = r.boolean("is_tracking_uploaded", true);
  const auto ids = r.array("shipment_ids", true, 1);
  std::vector<Id> shipment_ids;
  if (ids) {
    std::size_t index = 0;
    for (auto value : *ids) {
      std::int64_t id = 0;
      if (value.type() != element_type::INT64 || value.get_int64().get(id) != simdjson::SUCCESS) {
        validation.add(r.index_path("shipment_ids", index), "The shipment id must be an integer.");
      }
      shipment_ids.push_back(id);
      ++index;
    }
  }
  if (!validation.ok()) return validation_problem(400, validation, call.path());
  ++call.sandbox.stats().tracking_upload_requests;
  JsonWriter w;
  w.begin_object().key("results").begin_array();
  std::size_t successful = 0;
  for (Id id : shipment_ids) {
    Order* order = nullptr;
    Shipment* shipment = call.store.find_shipment(id, &order);
    w.begin_object().field("shipmentId", id);
    if (shipment == nullptr) {
      w.field("isSuccess", false).key("error").begin_object().field("code", "NotFound")
          .field("message", "Shipment " + std::to_string(id) + " was not found.").end_object();
    } else if (order->merchant_id != call.principal.merchant_id) {
      w.field("isSuccess", false).key("error").begin_object().field("code", "Forbidden")
          .field("message", "Shipment " + std::to_string(id) + " belongs to another merchant.").end_object();
    } else {
      shipment->is_tracking_uploaded = *flag;
      if (*flag) ++shipment->tracking_upload_marks;
      ++successful;
      w.field("isSuccess", true);  // `error` is an object: only failed items have one
    }
    w.end_object();
  }
  w.end_array();
  w.key("summary").begin_object()
      .field("total", shipment_ids.size())
      .field("successful", successful)
      .field("failed", shipment_ids.size() - successful)
      .end_object();
  w.end_object();
  return json_response(200, w.take());
}

}  // namespace fulfillsync::sandbox
