// POST /order:estimate: deterministic prices from weight, destination and shipping method.
#include <cmath>
#include <strings.h>

#include "fulfillsync/sandbox/handlers.hpp"
#include "fulfillsync/sandbox/render.hpp"

namespace fulfillsync::sandbox {
namespace {

struct Rate {
  std::string_view method;
  double base;
  double per_pound;
};
// Unknown (merchant-defined) methods are priced as Standard, which is what they map to by default.
constexpr Rate kRates[] = {{"Standard", 4.50, 0.90}, {"Expedited", 8.00, 1.40}, {"2-Day", 12.00, 1.90},
                           {"Overnight", 24.00, 3.20}};

const Rate& rate_for(std::string_view method) {
  for (const auto& rate : kRates) {
    if (rate.method.size() == method.size() && strncasecmp(rate.method.data(), method.data(), method.size()) == 0) {
      return rate;
    }
  }
  return kRates[0];
}

// 2 in the center's state, 5 elsewhere in its country, 8 abroad.
int zone(const FulfillmentCenter& center, std::string_view country, std::string_view state) {
  if (strcasecmp(std::string(country).c_str(), center.country.c_str()) != 0) return 8;
  return strcasecmp(std::string(state).c_str(), center.state.c_str()) == 0 ? 2 : 5;
}

}  // namespace

HttpResponse estimate_order(Call& call) {
  Validation validation;
  const auto object = body_object(call, validation);
  if (!object) return validation_problem(400, validation, call.path());
  ObjectReader r(*object, "", validation);
  std::string country, state;
  if (const auto address = r.object("address", true)) {
    ObjectReader a(*address, "address", validation);
    a.string("address1");
    a.string("city");
    if (auto text = a.string("country", {.required = true, .min_length = 2})) country = std::string(*text);
    if (auto text = a.string("state")) state = std::string(*text);
    a.string("zip_code");
  }
  double weight_oz = 0;
  if (const auto products = r.array("products", true, 1)) {
    const auto weigh_line = [&](ObjectReader& p, const std::string& path) {
      const auto quantity = p.integer("quantity", {.required = true, .min = 1, .max = 1000000});
      const bool has_id = p.present("id");
      const bool has_reference = p.present("reference_id");
      if (has_id == has_reference) {
        validation.add(path, "Each product needs exactly one of id and reference_id.");
        return;
      }
      const Variant* variant = nullptr;
      Merchant& merchant = call.merchant();
      if (has_id) {
        const auto id = p.integer("id", {.min = 1, .max = INT64_MAX});
        auto product = id ? call.store.products.find(*id) : call.store.products.end();
        if (product == call.store.products.end() || product->second.merchant_id != merchant.id) {
          if (id) validation.add(p.path("id"), "Product " + std::to_string(*id) + " does not exist.");
          return;
        }
        variant = &product->second.variants.front();
      } else if (const auto reference = p.string("reference_id", {.min_length = 1})) {
        auto found = merchant.product_by_reference.find(std::string(*reference));
        if (found != merchant.product_by_reference.end()) {
          variant = &call.store.products.at(found->second).variants.front();
        } else if (auto sku = merchant.variant_by_sku.find(std::string(*reference)); sku != merchant.variant_by_sku.end()) {
          variant = call.store.find_variant(sku->second);
        } else {
          validation.add(p.path("reference_id"), "No product has reference_id '" + std::string(*reference) + "'.");
          return;
        }
      }
      if (variant != nullptr && quantity) weight_oz += variant->weight_oz * static_cast<double>(*quantity);
    };
    for_each_object(*products, r.path("products"), validation, "The field {} must be an object.", weigh_line);
  }
  std::vector<std::string> methods;
  if (const auto requested = r.array("shipping_methods")) {
    std::size_t index = 0;
    for (auto item : *requested) {
      std::string_view method;
      if (item.get_string().get(method) != simdjson::SUCCESS || method.empty()) {
        validation.add(r.index_path("shipping_methods", index), "A shipping method must be a non-empty string.");
      } else {
        methods.emplace_back(method);
      }
      ++index;
    }
  } else {
    methods = call.merchant().shipping_methods;
  }
  if (!validation.ok()) return validation_problem(400, validation, call.path());

  // The center nearest by zone, first by id on a tie.
  const FulfillmentCenter* center = &call.store.fulfillment_centers().front();
  for (const auto& candidate : call.store.fulfillment_centers()) {
    if (zone(candidate, country, state) < zone(*center, country, state)) center = &candidate;
  }
  const int distance = zone(*center, country, state);
  const double pounds = std::ceil(std::max(weight_oz, 1.0) / 16.0);
  JsonWriter w;
  w.begin_object().key("estimates").begin_array();
  for (const auto& method : methods) {
    const Rate& rate = rate_for(method);
    const double price = std::round((rate.base + rate.per_pound * pounds) * (1.0 + 0.1 * distance) * 100.0) / 100.0;
    w.begin_object()
        .field("estimated_currency_code", "USD")
        .field("estimated_price", price)
        .key("fulfillment_center").begin_object().field("id", center->id).field("name", center->name).end_object()
        .field("shipping_method", method)
        .field("total_weight_oz", weight_oz)
        .end_object();
  }
  w.end_array().end_object();
  return json_response(200, w.take());
}

}  // namespace fulfillsync::sandbox
