// The admin path /_sandbox/...: inspect and steer the sandbox (documented in sandbox/README.md).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdint>

#include "fulfillsync/sandbox/handlers.hpp"
#include "fulfillsync/sandbox/render.hpp"
#include "fulfillsync/sandbox/sandbox.hpp"

namespace fulfillsync::sandbox {
namespace {

std::string iso(TimePoint when) { return timestamps::format_iso8601(when); }

constexpr std::string_view kInventoryPrefix = "/_sandbox/inventory/";
constexpr std::string_view kLotsSuffix = "/lots";

// An admin request body as a JSON object; otherwise records why under "$".
std::optional<simdjson::dom::object> admin_body(simdjson::dom::parser& parser, const HttpRequest& request,
                                                Validation& validation) {
  const auto root = parse_body(parser, request.body, validation);
  simdjson::dom::object object;
  if (!root) return std::nullopt;
  if (root->get_object().get(object) != simdjson::SUCCESS) {
    validation.add("$", "Expected a JSON object.");
    return std::nullopt;
  }
  return object;
}

HttpResponse admin_orders(Sandbox& sandbox, const Query& query) {
  Validation validation;
  const auto merchant_id = query.integer("merchant_id", 1, INT32_MAX, validation);
  if (!validation.ok()) return validation_problem(400, validation, "/_sandbox/orders");
  JsonWriter w(sandbox.store().order_count() * 256 + 16);
  w.begin_array();
  for (const Order& order : sandbox.store().orders()) {
    if (merchant_id && order.merchant_id != *merchant_id) continue;
    w.begin_object()
        .field("id", order.id)
        .field("reference_id", order.reference_id)
        .field("status", order_status_name(order.status))
        .field("channel_id", order.channel_id)
        .field("merchant_id", order.merchant_id)
        .field("created_date", iso(order.created))
        .field("cancels_processed", order.cancels_processed)
        .key("shipments")
        .begin_array();
    for (const auto& shipment : order.shipments) {
      w.begin_object()
          .field("id", shipment.id)
          .field("status", stage_status(shipment.stage))
          .field("status_detail", stage_detail_name(shipment.stage))
          .field("location_id", shipment.location_id)
          .field("tracking_number", has_tracking(shipment) ? std::optional<std::string>(tracking_number(shipment))
                                                           : std::nullopt)
          .field("is_tracking_uploaded", shipment.is_tracking_uploaded)
          .field("tracking_upload_marks", shipment.tracking_upload_marks)
          .field("last_update_at", iso(shipment.last_update_at))
          .end_object();
    }
    w.end_array().end_object();
  }
  w.end_array();
  return json_response(200, w.take());
}

HttpResponse admin_returns(Sandbox& sandbox) {
  JsonWriter w;
  w.begin_array();
  for (const auto& [id, ret] : sandbox.store().returns) {
    w.begin_object()
        .field("id", ret.id)
        .field("reference_id", ret.reference_id)
        .field("status", return_status_name(ret.status))
        .field("channel_id", ret.channel_id)
        .field("merchant_id", ret.merchant_id)
        .field("fulfillment_center_id", ret.fulfillment_center_id)
        .field("insert_date", iso(ret.insert_date))
        .key("inventory")
        .begin_array();
    for (const auto& line : ret.lines) {
      w.begin_object().field("id", line.inventory_id).field("quantity", line.quantity)
          .field("requested_action", line.requested_action).end_object();
    }
    w.end_array().end_object();
  }
  w.end_array();
  return json_response(200, w.take());
}

HttpResponse set_faults(Sandbox& sandbox, const HttpRequest& request, const Query& query) {
  Validation validation;
  const auto seed = query.integer("seed", 0, INT64_MAX, validation);
  if (!validation.ok()) return validation_problem(400, validation, request.path());
  std::string error;
  auto rules = parse_fault_spec(request.body, error);
  if (!rules) {
    validation.add("faults", error);
    return validation_problem(400, validation, request.path());
  }
  const std::uint64_t effective_seed = seed ? static_cast<std::uint64_t>(*seed) : sandbox.options().fault_seed;
  sandbox.faults().set(std::move(*rules), request.body, effective_seed);
  spdlog::info("faults set (seed {}): {}", effective_seed, request.body.empty() ? "none" : request.body);
  JsonWriter w;
  w.begin_object().field("faults", request.body).field("seed", effective_seed).end_object();
  return json_response(200, w.take());
}

HttpResponse add_token(Sandbox& sandbox, const HttpRequest& request) {
  Validation validation;
  simdjson::dom::parser parser;
  const auto object = admin_body(parser, request, validation);
  if (!object) return validation_problem(400, validation, request.path());
  ObjectReader r(*object, "", validation);
  const auto token = r.string("token", {.required = true, .min_length = 1});
  const auto merchant_id = r.integer("merchant_id", {.min = 1}).value_or(kDefaultMerchantId);
  if (!validation.ok()) return validation_problem(400, validation, request.path());
  Merchant& merchant = sandbox.store().merchant(static_cast<int>(merchant_id));
  sandbox.auth().add_personal_token(std::string(*token), merchant.id, merchant.pat_channel_id);
  JsonWriter w;
  w.begin_object().field("merchant_id", merchant.id).field("channel_id", merchant.pat_channel_id).end_object();
  return json_response(201, w.take());
}

HttpResponse add_oauth_client(Sandbox& sandbox, const HttpRequest& request) {
  Validation validation;
  simdjson::dom::parser parser;
  const auto object = admin_body(parser, request, validation);
  if (!object) return validation_problem(400, validation, request.path());
  ObjectReader r(*object, "", validation);
  OAuthClient client;
  if (auto id = r.string("client_id", {.required = true, .min_length = 1})) client.client_id = std::string(*id);
  if (auto secret = r.string("client_secret", {.required = true, .min_length = 1})) client.client_secret = std::string(*secret);
  client.name = std::string(r.string("name").value_or(client.client_id));
  if (auto uris = r.array("redirect_uris", true, 1)) {
    for (auto uri : *uris) {
      std::string_view text;
      if (uri.get_string().get(text) == simdjson::SUCCESS) client.redirect_uris.emplace_back(text);
    }
  }
  if (auto scopes = r.string("scopes")) {
    std::string unknown;
    if (auto parsed = parse_scope_list(*scopes, unknown)) {
      client.scopes = *parsed;
    } else {
      validation.add("scopes", "Unknown scope '" + unknown + "'.");
    }
  } else {
    client.scopes = all_read_scopes() | all_write_scopes();
  }
  if (!validation.ok()) return validation_problem(400, validation, request.path());
  JsonWriter w;
  w.begin_object().field("client_id", client.client_id).end_object();
  sandbox.auth().add_client(std::move(client));
  return json_response(201, w.take());
}

// Sets the on-hand stock of one lot at one center, so tests can make lots appear, change and
// disappear. The change is recorded as an Adjustment, as the provider's history would show it.
HttpResponse set_lot_stock(Sandbox& sandbox, const HttpRequest& request, std::string_view inventory_id) {
  const std::string_view path = request.path();
  const auto id = parse_int(inventory_id);
  Store& store = sandbox.store();
  const auto found = id ? store.inventory.find(*id) : store.inventory.end();
  if (found == store.inventory.end()) {
    return problem(404, "Inventory item " + std::string(inventory_id) + " was not found.", path);
  }
  InventoryItem& item = found->second;
  Validation validation;
  simdjson::dom::parser parser;
  const auto object = admin_body(parser, request, validation);
  if (!object) return validation_problem(400, validation, path);
  ObjectReader r(*object, "", validation);
  const auto lot_number = r.string("lot_number", {.required = true, .max_length = 100});
  const auto location_id = r.integer("location_id", {.required = true});
  const auto on_hand = r.integer("on_hand", {.required = true, .min = 0});
  const auto lot_date = r.date_time("lot_date");
  const auto merchant_id = r.integer("merchant_id", {.min = 1}).value_or(kDefaultMerchantId);
  if (location_id && store.find_fulfillment_center(static_cast<int>(*location_id)) == nullptr) {
    validation.add("location_id", "No fulfillment center has id " + std::to_string(*location_id) + ".");
  }
  if (!validation.ok()) return validation_problem(400, validation, path);
  if (item.merchant_id != merchant_id) {
    return problem(404, "Inventory item " + std::to_string(item.id) + " is not merchant " +
                            std::to_string(merchant_id) + "'s.", path);
  }

  const int location = static_cast<int>(*location_id);
  auto level = std::find_if(item.lots.begin(), item.lots.end(), [&](const LotLevel& l) {
    return l.location_id == location && l.lot_number == *lot_number;
  });
  if (level == item.lots.end()) {
    LotLevel created;
    created.lot_number = std::string(*lot_number);
    created.location_id = location;
    item.lots.push_back(std::move(created));
    level = item.lots.end() - 1;
  }
  const std::int64_t change = *on_hand - level->on_hand;
  level->on_hand = *on_hand;
  if (lot_date) level->lot_date = lot_date;
  if (change != 0) {
    store.record_inventory_event(item.merchant_id, item.id, "Adjustment",
                                 static_cast<int>(std::clamp<std::int64_t>(change, INT32_MIN, INT32_MAX)), location,
                                 level->lot_number, sandbox.clock().now(), "sandbox admin");
  }
  // Nothing left at this center: the lot is gone from it (and a later set starts without a lot_date).
  if (level->empty()) item.lots.erase(level);
  JsonWriter w;
  write_lot_levels(w, store, item);
  return json_response(200, w.take());
}

// Many orders at once for the memory benchmark: the same orders POST /order would make.
HttpResponse bulk_orders(Sandbox& sandbox, const Query& query) {
  Validation validation;
  const auto count = query.integer("count", 1, 10'000'000, validation);
  if (!count) validation.add("count", "count (1 to 10000000) is required.");
  const auto merchant_id = query.integer("merchant_id", 1, INT32_MAX, validation).value_or(kDefaultMerchantId);
  if (!validation.ok()) return validation_problem(400, validation, "/_sandbox/orders:bulk");
  Store& store = sandbox.store();
  Merchant& merchant = store.merchant(static_cast<int>(merchant_id));
  Id product_id = 0;
  if (auto found = merchant.product_by_reference.find("BULK-SKU"); found != merchant.product_by_reference.end()) {
    product_id = found->second;
  } else {
    Product product;
    product.merchant_id = merchant.id;
    product.name = "Bulk Item";
    product.reference_id = "BULK-SKU";
    product.created_on = sandbox.clock().now();
    Variant variant;
    variant.name = "Bulk Item";
    variant.sku = "BULK-SKU";
    product.variants.push_back(variant);
    product_id = store.add_product(std::move(product)).id;
  }
  const Product& product = store.products.at(product_id);
  const TimePoint now = sandbox.clock().now();
  const Id first = store.next.order;
  for (std::int64_t i = 0; i < *count; ++i) {
    Order order;
    order.merchant_id = merchant.id;
    order.channel_id = merchant.pat_channel_id;
    order.reference_id = "BULK-" + std::to_string(store.next.order);
    order.shipping_method = "Standard";
    order.recipient_name = "Bulk Customer";
    order.recipient_json =
        R"({"name":"Bulk Customer","email":"bulk@example.test","address":{"address1":"1 Main St","city":"Chicago","state":"IL","zip_code":"60601","country":"US"}})";
    order.total_price = "19.99";
    order.created = now;
    order.last_update = now;
    OrderLine line;
    line.product_id = product.id;
    line.inventory_id = product.variants.front().inventory_id;
    line.reference_id = "BULK-SKU";
    line.sku = "BULK-SKU";
    line.name = product.name;
    line.quantity = 1;
    order.lines.push_back(std::move(line));
    Shipment shipment;
    shipment.location_id = 8;
    shipment.created = now;
    shipment.last_update_at = now;
    shipment.estimated_fulfillment_date = now + std::chrono::hours(24);
    order.shipments.push_back(std::move(shipment));
    sandbox.simulator().place_order(store, std::move(order));
  }
  sandbox.stats().creates["orders"] += static_cast<std::uint64_t>(*count);
  JsonWriter w;
  w.begin_object().field("created", *count).field("first_id", first).field("last_id", store.next.order - 1).end_object();
  return json_response(201, w.take());
}

}  // namespace

bool admin_changes_state(const HttpRequest& request) {
  return request.method == "POST" && request.path() != "/_sandbox/faults";
}

HttpResponse handle_admin(Sandbox& sandbox, const HttpRequest& request) {
  const std::string_view path = request.path();
  const std::string_view method = request.method;
  const Query query(request.query());
  if (method == "GET" && path == "/_sandbox/orders") return admin_orders(sandbox, query);
  if (method == "GET" && path == "/_sandbox/returns") return admin_returns(sandbox);
  if (method == "GET" && path == "/_sandbox/stats") return json_response(200, sandbox.stats().to_json());
  if (method == "GET" && path == "/_sandbox/catalog/writes") {
    return json_response(200, sandbox.stats().catalog_writes_json());
  }
  if (method == "GET" && path == "/_sandbox/faults") {
    JsonWriter w;
    w.begin_object().field("faults", sandbox.faults().spec()).field("seed", sandbox.faults().seed()).end_object();
    return json_response(200, w.take());
  }
  if (method == "POST" && path == "/_sandbox/faults") return set_faults(sandbox, request, query);
  if (path == "/_sandbox/clock" || path == "/_sandbox/clock/advance") {
    if (method == "POST" && path == "/_sandbox/clock/advance") {
      Validation validation;
      const auto seconds = query.integer("seconds", 0, 10LL * 365 * 24 * 3600, validation);
      if (!seconds) validation.add("seconds", "seconds (0 to 315360000) is required.");
      if (!validation.ok()) return validation_problem(400, validation, path);
      sandbox.clock().advance(std::chrono::seconds(*seconds));
      sandbox.simulator().advance(sandbox.store(), sandbox.clock().now());
    } else if (method != "GET" || path != "/_sandbox/clock") {
      return problem(405, "Method not allowed.", path);
    }
    JsonWriter w;
    w.begin_object().field("now", timestamps::format_iso8601(sandbox.clock().now()))
        .field("speed", sandbox.clock().speed()).end_object();
    return json_response(200, w.take());
  }
  if (method == "POST" && path == "/_sandbox/reset") {
    sandbox.reset();
    return json_response(200, R"({"reset":true})");
  }
  if (method == "POST" && path == "/_sandbox/tokens") return add_token(sandbox, request);
  if (method == "POST" && path == "/_sandbox/oauth-clients") return add_oauth_client(sandbox, request);
  if (method == "POST" && path == "/_sandbox/orders:bulk") return bulk_orders(sandbox, query);
  if (path.starts_with(kInventoryPrefix) && path.ends_with(kLotsSuffix) &&
      path.size() > kInventoryPrefix.size() + kLotsSuffix.size()) {
    if (method != "POST") return problem(405, "Method not allowed.", path);
    return set_lot_stock(sandbox, request,
                         path.substr(kInventoryPrefix.size(),
                                     path.size() - kInventoryPrefix.size() - kLotsSuffix.size()));
  }
  return problem(404, "No admin operation has this method and path (see sandbox/README.md).", path);
}

}  // namespace fulfillsync::sandbox
