// Products and variants, packaging requirements, taxonomy and allergens.
#include <algorithm>
#include <cmath>

#include "fulfillsync/sandbox/handlers.hpp"
#include "fulfillsync/sandbox/render.hpp"
#include "fulfillsync/sandbox/sandbox.hpp"

namespace fulfillsync::sandbox {
namespace {

Product* owned_product(Call& call) {
  const auto id = param_id(call, 0);
  if (!id) return nullptr;
  auto found = call.store.products.find(*id);
  if (found == call.store.products.end() || found->second.merchant_id != call.principal.merchant_id) return nullptr;
  return &found->second;
}

// A variant's members, none nullable in the spec (Variant: `string`, objects): `null` clears none of
// them, and is refused rather than taken for "unchanged".
constexpr std::string_view kVariantMembers[] = {"name", "sku", "gtin", "upc", "status", "customs", "weight",
                                                "dimension", "lot_information", "is_digital"};

// One variant body, for create (`creating`: name and sku required) and patch.
void read_variant(Call& call, ObjectReader& r, Variant& variant, bool creating) {
  Validation& validation = r.validation();
  for (const std::string_view member : kVariantMembers) r.refuse_null(member);
  if (auto name = r.string("name", {.required = creating, .min_length = 1, .max_length = 400})) variant.name = std::string(*name);
  if (auto sku = r.string("sku", {.required = creating, .min_length = 1, .max_length = 100})) {
    const Merchant& merchant = call.merchant();
    auto taken = merchant.variant_by_sku.find(std::string(*sku));
    if (taken != merchant.variant_by_sku.end() && taken->second != variant.id) {
      validation.add(r.path("sku"), "A variant with sku '" + std::string(*sku) + "' already exists.");
    }
    variant.sku = std::string(*sku);
  }
  if (auto gtin = r.string("gtin", {.max_length = 14})) variant.gtin = std::string(*gtin);
  if (auto upc = r.string("upc", {.max_length = 12})) variant.upc = std::string(*upc);
  if (auto status = r.string("status")) {
    if (*status != "Active" && *status != "Inactive") {
      validation.add(r.path("status"), "The field status must be Active or Inactive.");
    } else {
      variant.status = std::string(*status);
    }
  }
  if (auto customs = r.object("customs")) {
    ObjectReader c(*customs, r.path("customs"), validation);
    if (c.present("value")) {
      // An integer (int32) before 2026-07; a number with decimals from 2026-07.
      if (call.version >= Version::v2026_07) {
        if (auto value = c.number("value")) {
          if (*value < 0 || *value > 1e9) validation.add(c.path("value"), "The customs value must be between 0 and 1000000000.");
          variant.customs_value = *value;
        }
      } else if (auto value = c.integer("value", {.min = 0, .max = 1'000'000'000})) {
        variant.customs_value = static_cast<double>(*value);
      }
    }
    if (auto text = c.string("country_code_of_origin", {.max_length = 2})) variant.customs_country_of_origin = std::string(*text);
    if (auto text = c.string("currency", {.max_length = 3})) variant.customs_currency = std::string(*text);
    if (auto text = c.string("description", {.max_length = 500})) variant.customs_description = std::string(*text);
    if (auto text = c.string("hs_tariff_code", {.max_length = 20})) variant.customs_hs_tariff_code = std::string(*text);
  }
  if (auto weight = r.object("weight")) {
    ObjectReader w(*weight, r.path("weight"), validation);
    const auto value = w.number("weight");
    const auto unit = w.string("unit").value_or("oz");
    if (value) {
      if (*value < 0 || *value > 1e6) validation.add(w.path("weight"), "The weight must be between 0 and 1000000.");
      variant.weight_oz = unit == "lb" ? *value * 16 : unit == "g" ? *value / 28.3495 : unit == "kg" ? *value * 35.274 : *value;
    }
  }
  if (auto dimension = r.object("dimension")) {
    ObjectReader d(*dimension, r.path("dimension"), validation);
    // Stored in inches (what `dimension.unit` answers), converted from the unit sent.
    const auto unit = d.string("unit").value_or("in");
    const double per_unit = unit == "in" ? 1 : unit == "cm" ? 1 / 2.54 : unit == "mm" ? 1 / 25.4
                            : unit == "ft" ? 12 : unit == "m" ? 100 / 2.54 : 0;
    if (per_unit == 0) validation.add(d.path("unit"), "The dimension unit must be one of in, cm, mm, ft, m.");
    if (auto v = d.number("length")) variant.length_in = *v * per_unit;
    if (auto v = d.number("width")) variant.width_in = *v * per_unit;
    if (auto v = d.number("height")) variant.height_in = *v * per_unit;
  }
  if (auto digital = r.boolean("is_digital")) variant.is_digital = *digital;
  if (auto lot = r.object("lot_information")) {
    ObjectReader l(*lot, r.path("lot_information"), validation);
    if (auto v = l.boolean("is_lot")) variant.is_lot = *v;
    if (auto v = l.integer("minimum_shelf_life_days", {.min = 0, .max = 3650})) variant.minimum_shelf_life_days = static_cast<int>(*v);
  }
  if (auto packaging = r.integer("packaging_requirement_id", {.min = 0, .max = 3})) {
    variant.packaging_requirement_id = static_cast<int>(*packaging);
  }
}

// Reads an array of variant bodies at the root of the request.
std::optional<std::vector<Variant>> read_variant_array(Call& call, Validation& validation, bool creating,
                                                      const Product* product) {
  const auto root = parse_body(call.sandbox.parser(), call.request.body, validation);
  if (!root) return std::nullopt;
  simdjson::dom::array items;
  if (root->get_array().get(items) != simdjson::SUCCESS || items.size() == 0) {
    validation.add("$", "The request body must be a non-empty array of variants.");
    return std::nullopt;
  }
  std::vector<Variant> variants;
  const auto read_listed_variant = [&](ObjectReader& r, const std::string&) {
    Variant variant;
    if (!creating) {
      const auto id = r.integer("id", {.required = true, .min = 1, .max = INT64_MAX});
      if (!id) return;
      const auto existing = std::find_if(product->variants.begin(), product->variants.end(),
                                         [&](const Variant& v) { return v.id == *id; });
      if (existing == product->variants.end()) {
        validation.add(r.path("id"), "Variant " + std::to_string(*id) + " is not a variant of product " +
                                         std::to_string(product->id) + ".");
        return;
      }
      variant = *existing;
    }
    read_variant(call, r, variant, creating);
    variants.push_back(std::move(variant));
  };
  for_each_object(items, "", validation, "Each variant must be an object.", read_listed_variant);
  if (!validation.ok()) return std::nullopt;
  return variants;
}

void add_channel_metadata(Call& call, Variant& variant) {
  if (call.channel == nullptr) return;
  ChannelMetadata metadata;
  metadata.channel_id = call.channel->id;
  metadata.channel_name = call.channel->name;
  metadata.seller_sku = variant.sku;
  variant.channel_metadata.push_back(std::move(metadata));
}

std::string render_product(Call& call, const Product& product) {
  JsonWriter w;
  write_product(w, call.store, product, call.version);
  return w.take();
}

std::string render_variants(Call& call, const std::vector<const Variant*>& variants) {
  JsonWriter w;
  w.begin_array();
  for (const Variant* variant : variants) write_variant(w, *variant, call.version, on_hand_of(call.store, *variant));
  w.end_array();
  return w.take();
}

}  // namespace

HttpResponse get_product(Call& call) {
  const Product* product = owned_product(call);
  if (product == nullptr) return not_found(call, "Product " + std::string(call.params[0]));
  return json_response(200, render_product(call, *product));
}

HttpResponse create_product(Call& call) {
  Validation validation;
  const auto object = body_object(call, validation);
  if (!object) return validation_problem(400, validation, call.path());
  ObjectReader r(*object, "", validation);
  Product product;
  product.merchant_id = call.principal.merchant_id;
  if (auto name = r.string("name", {.required = true, .min_length = 1, .max_length = 400})) product.name = std::string(*name);
  if (auto type = r.string("type", {.max_length = 50})) product.type = std::string(*type);
  if (auto reference = r.string("reference_id", {.max_length = 300})) product.reference_id = std::string(*reference);
  if (auto taxonomy = r.integer("taxonomy_id")) {
    if (find_taxonomy(*taxonomy) == nullptr) validation.add("taxonomy_id", "Taxonomy " + std::to_string(*taxonomy) + " does not exist.");
    product.taxonomy_id = static_cast<int>(*taxonomy);
  }
  if (auto variants = r.array("variants", true, 1)) {
    std::vector<std::string> skus;
    const auto read_new_variant = [&](ObjectReader& v, const std::string&) {
      Variant variant;
      read_variant(call, v, variant, true);
      if (std::find(skus.begin(), skus.end(), variant.sku) != skus.end()) {
        validation.add(v.path("sku"), "The sku '" + variant.sku + "' appears twice.");
      }
      skus.push_back(variant.sku);
      add_channel_metadata(call, variant);
      product.variants.push_back(std::move(variant));
    };
    for_each_object(*variants, r.path("variants"), validation, "Each variant must be an object.", read_new_variant);
  }
  if (!product.reference_id.empty() && call.merchant().product_by_reference.contains(product.reference_id)) {
    validation.add("reference_id", "A product with reference_id '" + product.reference_id + "' already exists.");
  }
  if (!validation.ok()) return validation_problem(400, validation, call.path());
  product.created_on = call.now;
  const Product& created = call.store.add_product(std::move(product));
  ++call.sandbox.stats().creates["products"];
  return json_response(201, render_product(call, created));
}

HttpResponse list_products(Call& call) {
  Validation validation;
  const auto cursor = call.query.integer("Cursor", 1, 2147483647, validation).value_or(1);
  const auto limit = call.query.integer("Limit", 1, 250, validation).value_or(50);
  const auto search = call.query.get("Search");
  if (!validation.ok()) return validation_problem(400, validation, call.path());
  std::vector<const Product*> matched;
  for (Id id : call.merchant().product_ids) {
    const Product& product = call.store.products.at(id);
    if (search && product.name.find(*search) == std::string::npos &&
        std::none_of(product.variants.begin(), product.variants.end(),
                     [&](const Variant& v) { return v.sku.find(*search) != std::string::npos; })) {
      continue;
    }
    matched.push_back(&product);
  }
  const auto size = static_cast<std::size_t>(limit);
  JsonWriter w;
  w.begin_object().key("items").begin_array();
  for (std::size_t i = static_cast<std::size_t>(cursor - 1) * size; i < matched.size() && i < static_cast<std::size_t>(cursor) * size; ++i) {
    write_product(w, call.store, *matched[i], call.version);
  }
  w.end_array();
  write_cursor_links(w, call, "Cursor", cursor, (matched.size() + size - 1) / size, false);
  w.end_object();
  return json_response(200, w.take());
}

HttpResponse patch_product(Call& call) {
  Product* product = owned_product(call);
  if (product == nullptr) return not_found(call, "Product " + std::string(call.params[0]));
  Validation validation;
  const auto object = body_object(call, validation);
  if (!object) return validation_problem(400, validation, call.path());
  ObjectReader r(*object, "", validation);
  const auto name = r.string("name", {.min_length = 1, .max_length = 400});
  const auto type = r.string("type", {.max_length = 50});
  const auto taxonomy = r.integer("taxonomy_id");
  if (taxonomy && find_taxonomy(*taxonomy) == nullptr) {
    validation.add("taxonomy_id", "Taxonomy " + std::to_string(*taxonomy) + " does not exist.");
  }
  r.refuse_null("taxonomy_id");  // the spec's `taxonomy` is an object, not nullable
  if (!validation.ok()) return validation_problem(400, validation, call.path());
  // `name` and `type` are `string | null`: null clears them.
  if (name) product->name = std::string(*name);
  if (r.null("name")) product->name.clear();
  if (type) product->type = std::string(*type);
  if (r.null("type")) product->type.reset();
  if (taxonomy) product->taxonomy_id = static_cast<int>(*taxonomy);
  product->updated_on = call.now;
  return json_response(200, render_product(call, *product));
}

HttpResponse list_variants(Call& call) {
  const Product* product = owned_product(call);
  if (product == nullptr) return not_found(call, "Product " + std::string(call.params[0]));
  std::vector<const Variant*> variants;
  for (const auto& variant : product->variants) variants.push_back(&variant);
  return json_response(200, render_variants(call, variants));
}

HttpResponse create_variants(Call& call) {
  Product* product = owned_product(call);
  if (product == nullptr) return not_found(call, "Product " + std::string(call.params[0]));
  Validation validation;
  auto variants = read_variant_array(call, validation, true, product);
  if (!variants) return validation_problem(400, validation, call.path());
  // Registered through a throw-away product so ids and inventory items are made in one place.
  Product carrier;
  carrier.merchant_id = product->merchant_id;
  carrier.created_on = call.now;
  for (auto& variant : *variants) add_channel_metadata(call, variant);
  carrier.variants = std::move(*variants);
  Product& registered = call.store.add_product(std::move(carrier));
  Merchant& merchant = call.merchant();
  merchant.product_ids.pop_back();
  std::vector<const Variant*> created;
  const std::size_t first_new = product->variants.size();
  for (auto& variant : registered.variants) {
    variant.product_id = product->id;
    call.store.product_of_variant[variant.id] = product->id;
    product->variants.push_back(variant);
  }
  call.store.products.erase(registered.id);
  for (std::size_t i = first_new; i < product->variants.size(); ++i) created.push_back(&product->variants[i]);
  product->updated_on = call.now;
  return json_response(201, render_variants(call, created));
}

HttpResponse patch_variants(Call& call) {
  Product* product = owned_product(call);
  if (product == nullptr) return not_found(call, "Product " + std::string(call.params[0]));
  Validation validation;
  auto variants = read_variant_array(call, validation, false, product);
  if (!variants) return validation_problem(400, validation, call.path());
  std::vector<const Variant*> updated;
  Merchant& merchant = call.merchant();
  for (auto& changed : *variants) {
    for (auto& variant : product->variants) {
      if (variant.id != changed.id) continue;
      if (variant.sku != changed.sku) {
        merchant.variant_by_sku.erase(variant.sku);
        merchant.variant_by_sku[changed.sku] = variant.id;
      }
      changed.updated_on = call.now;
      variant = std::move(changed);
      if (auto item = call.store.inventory.find(variant.inventory_id); item != call.store.inventory.end()) {
        describe_inventory_item(item->second, variant);
      }
      updated.push_back(&variant);
      break;
    }
  }
  product->updated_on = call.now;
  return json_response(200, render_variants(call, updated));
}

HttpResponse delete_channel_metadata(Call& call) {
  const auto variant_id = param_id(call, 0);
  const auto metadata_id = param_id(call, 1);
  Product* product = nullptr;
  Variant* variant = variant_id ? call.store.find_variant(*variant_id, &product) : nullptr;
  if (variant == nullptr || product->merchant_id != call.principal.merchant_id) {
    return not_found(call, "Variant " + std::string(call.params[0]));
  }
  auto& records = variant->channel_metadata;
  const auto found = std::find_if(records.begin(), records.end(),
                                  [&](const ChannelMetadata& m) { return metadata_id && m.id == *metadata_id; });
  if (found == records.end()) return not_found(call, "Channel metadata " + std::string(call.params[1]));
  records.erase(found);
  variant->updated_on = call.now;
  JsonWriter w;
  write_variant(w, *variant, call.version, on_hand_of(call.store, *variant));
  return json_response(200, w.take());
}

HttpResponse get_packaging_requirements(Call& call) {
  (void)call;
  JsonWriter w;
  w.begin_array();
  const auto requirement = [&](int id, std::string_view name, std::string_view description, std::string_view taxonomy) {
    w.begin_object().field("id", id).field("name", name).field("description", description);
    w.key("applicable_categories").begin_array().begin_object().field("id", 10).key("sub_category_ids")
        .begin_array().value(11).value(12).end_array().end_object().end_array();
    w.key("applicable_packaging_material_types").begin_array()
        .begin_object().field("id", 1).field("name", "Box").end_object()
        .begin_object().field("id", 2).field("name", "Poly Mailer").end_object().end_array();
    w.key("applicable_taxonomy").begin_array().value(taxonomy).end_array().end_object();
  };
  requirement(1, packaging_requirement_name(1), "Wrap each unit in bubble wrap.", "/Electronics");
  requirement(2, packaging_requirement_name(2), "Seal each unit in a poly bag.", "/Apparel");
  requirement(3, packaging_requirement_name(3), "Ship in a box with void fill; never a mailer.", "/Food");
  w.end_array();
  return json_response(200, w.take());
}

HttpResponse get_taxonomy(Call& call) {
  const auto id = param_id(call, 0);
  const TaxonomyNode* node = id ? find_taxonomy(*id) : nullptr;
  if (node == nullptr) return not_found(call, "Taxonomy " + std::string(call.params[0]));
  JsonWriter w;
  w.begin_object().field("id", node->id).field("name", node->name).field("path", node->path);
  if (const TaxonomyNode* parent = find_taxonomy(node->parent)) {  // the root has none (never null)
    w.key("parent").begin_object().field("id", parent->id).field("name", parent->name).field("path", parent->path).end_object();
  }
  w.key("children").begin_array();
  const auto nodes = taxonomy_nodes();
  for (const auto& child : nodes) {
    if (child.parent != node->id) continue;
    const bool has_children = std::any_of(nodes.begin(), nodes.end(),
                                          [&](const TaxonomyNode& n) { return n.parent == child.id; });
    w.begin_object().field("id", child.id).field("name", child.name).field("path", child.path)
        .field("has_children", has_children).end_object();
  }
  w.end_array().end_object();
  return json_response(200, w.take());
}

HttpResponse list_allergens(Call& call) {
  (void)call;
  static constexpr std::string_view kAllergens[] = {
      "Celery", "Cereals containing gluten", "Crustaceans", "Eggs", "Fish", "Lupin", "Milk",
      "Molluscs", "Mustard", "Tree nuts", "Peanuts", "Sesame seeds", "Soybeans", "Sulphur dioxide and sulphites"};
  JsonWriter w;
  w.begin_array();
  int id = 1;
  for (auto name : kAllergens) w.begin_object().field("id", id++).field("name", name).end_object();
  w.end_array();
  return json_response(200, w.take());
}

}  // namespace fulfillsync::sandbox
