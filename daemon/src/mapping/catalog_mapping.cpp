#include "fulfillsync/daemon/mapping/catalog_mapping.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>
#include <simdjson.h>

#include "fulfillsync/common/json_writer.hpp"
#include "fulfillsync/common/printable.hpp"
#include "mapping/row_reader.hpp"

namespace fulfillsync::daemon {

using namespace merchant;
using mapping::Need;
using mapping::RowReader;

namespace {

constexpr std::int64_t kInt32Max = 2147483647;
// The provider's bounds (those the sandbox enforces, as the production API documents them).
constexpr double kMaxWeight = 1e6;
constexpr double kMaxCustomsValue = 1e9;
constexpr std::string_view kStatuses[] = {"Active", "Inactive"};
constexpr std::string_view kWeightUnits[] = {"oz", "lb", "g", "kg"};
constexpr std::string_view kDimensionUnits[] = {"in", "cm", "mm", "ft", "m"};

// A number from INTEGER, REAL or decimal text, within [0, max].
std::optional<double> number(RowReader& r, std::string_view column, const Field& field, double max) {
  std::optional<double> value;
  switch (field.type) {
    case Field::Type::null: return std::nullopt;
    case Field::Type::integer: value = static_cast<double>(field.integer); break;
    case Field::Type::real: value = field.real; break;
    case Field::Type::text: {
      if (field.text.empty()) return std::nullopt;
      double parsed = 0;
      const char* end = field.text.data() + field.text.size();
      const auto [ptr, ec] = std::from_chars(field.text.data(), end, parsed);
      if (ec == std::errc() && ptr == end) value = parsed;
      break;
    }
    case Field::Type::blob: break;
  }
  if (!value || !std::isfinite(*value)) {
    r.problem(column, fmt::format("must be a number, found {}", field.describe()));
    return std::nullopt;
  }
  if (*value < 0 || *value > max) {
    r.problem(column, fmt::format("must be between 0 and {}, found {}", max, field.describe()));
    return std::nullopt;
  }
  return value;
}

// Text that must be one of `allowed`.
template <std::size_t N>
std::optional<std::string> one_of(RowReader& r, std::string_view column, const Field& field,
                                  const std::string_view (&allowed)[N]) {
  auto text = r.text(column, field, Need::optional, 20);
  if (text && std::find(std::begin(allowed), std::end(allowed), *text) == std::end(allowed)) {
    std::string listed;
    for (const std::string_view value : allowed) listed += fmt::format("{}{}", listed.empty() ? "" : ", ", value);
    r.problem(column, fmt::format("must be one of {}, found {}", listed, field.describe()));
    return std::nullopt;
  }
  return text;
}

// customs.value: decimal text, an integer before 2026-07 (a fraction is refused, never rounded),
// as the JSON number to send.
std::optional<std::string> customs_value(RowReader& r, const Field& field, api::ApiVersion version) {
  const auto money = r.money("customs_value", field);
  if (!money) return std::nullopt;
  const std::string& text = money->text;
  if (const auto parsed = number(r, "customs_value", Field::of(text), kMaxCustomsValue); !parsed) return std::nullopt;
  const std::size_t point = text.find('.');
  const bool whole = point == std::string::npos || text.find_first_not_of('0', point + 1) == std::string::npos;
  if (version < api::ApiVersion::v2026_07) {
    if (!whole) {
      r.problem("customs_value", fmt::format("must be a whole number before API version 2026-07 (api.version is {}), "
                                             "found {}",
                                             api::to_string(version), field.describe()));
      return std::nullopt;
    }
    return text.substr(0, point);
  }
  return whole ? text.substr(0, point) : text;
}

void write_variant(json::JsonWriter& w, const VariantRow& variant, api::ApiVersion version,
                   std::vector<std::string>& problems) {
  const std::string where =
      variant.sku.type == Field::Type::text ? fmt::format("{} sku '{}'", kVariantsTable, text::printable(variant.sku.text))
                                            : std::string(kVariantsTable);
  RowReader r(where, problems);
  const auto sku = r.text("sku", variant.sku, Need::required, 100, 1);
  if (sku && variant.rows_with_sku > 1) {
    r.problem("sku", fmt::format("must be unique among the merchant's variants, found in {} rows", variant.rows_with_sku));
  }
  const auto name = r.text("name", variant.name, Need::required, 400, 1);
  const auto gtin = r.text("gtin", variant.gtin, Need::optional, 14);
  const auto upc = r.text("upc", variant.upc, Need::optional, 12);
  const auto status = one_of(r, "status", variant.status, kStatuses);
  const auto weight = number(r, "weight", variant.weight, kMaxWeight);
  const auto weight_unit = one_of(r, "weight_unit", variant.weight_unit, kWeightUnits);
  const auto length = number(r, "length", variant.length, kMaxWeight);
  const auto width = number(r, "width", variant.width, kMaxWeight);
  const auto height = number(r, "height", variant.height, kMaxWeight);
  const auto dimension_unit = one_of(r, "dimension_unit", variant.dimension_unit, kDimensionUnits);
  const auto country = r.text("customs_country_of_origin", variant.customs_country_of_origin, Need::optional, 2, 2);
  const auto hs_code = r.text("customs_hs_tariff_code", variant.customs_hs_tariff_code, Need::optional, 20);
  const auto description = r.text("customs_description", variant.customs_description, Need::optional, 500);
  const auto value = customs_value(r, variant.customs_value, version);
  const auto currency = r.text("customs_currency", variant.customs_currency, Need::optional, 3, 3);
  const auto is_lot = r.integer("is_lot", variant.is_lot, Need::optional, 0, 1);
  const auto shelf_life = r.integer("minimum_shelf_life_days", variant.minimum_shelf_life_days, Need::optional, 0, 3650);

  w.begin_object().field("sku", sku.value_or("")).field("name", name.value_or(""));
  if (gtin) w.field("gtin", *gtin);
  if (upc) w.field("upc", *upc);
  if (status) w.field("status", *status);
  if (weight) w.key("weight").begin_object().field("weight", *weight).field("unit", weight_unit.value_or("oz")).end_object();
  if (length || width || height) {
    w.key("dimension").begin_object();
    if (length) w.field("length", *length);
    if (width) w.field("width", *width);
    if (height) w.field("height", *height);
    w.field("unit", dimension_unit.value_or("in")).end_object();
  }
  if (country || hs_code || description || value || currency) {
    w.key("customs").begin_object();
    if (country) w.field("country_code_of_origin", *country);
    if (hs_code) w.field("hs_tariff_code", *hs_code);
    if (description) w.field("description", *description);
    if (value) w.key("value").raw_number(*value);
    if (currency) w.field("currency", *currency);
    w.end_object();
  }
  if (is_lot || shelf_life) {
    w.key("lot_information").begin_object();
    if (is_lot) w.field("is_lot", *is_lot == 1);
    if (shelf_life) w.field("minimum_shelf_life_days", *shelf_life);
    w.end_object();
  }
  w.end_object();
}

// A body's members, each as minified JSON, in its order.
using Members = std::vector<std::pair<std::string, std::string>>;

std::optional<Members> members_of(simdjson::dom::element element) {
  simdjson::dom::object object;
  if (element.get_object().get(object) != simdjson::SUCCESS) return std::nullopt;
  Members members;
  for (auto [key, value] : object) members.emplace_back(std::string(key), simdjson::minify(value));
  return members;
}

const std::string* member(const Members& members, std::string_view key) {
  const auto found = std::find_if(members.begin(), members.end(), [&](const auto& m) { return m.first == key; });
  return found == members.end() ? nullptr : &found->second;
}

// A product body read back: its own members, and its variants' members by SKU in its order.
struct ReadProduct {
  Members fields;
  std::vector<std::pair<std::string, Members>> variants;
};

std::optional<ReadProduct> read_product(simdjson::dom::parser& parser, std::string_view body) {
  simdjson::dom::element root;
  if (parser.parse(simdjson::padded_string(body)).get(root) != simdjson::SUCCESS) return std::nullopt;
  auto fields = members_of(root);
  if (!fields) return std::nullopt;
  ReadProduct product;
  for (auto& [key, value] : *fields) {
    if (key != "variants") product.fields.emplace_back(std::move(key), std::move(value));
  }
  simdjson::dom::array variants;
  if (root["variants"].get_array().get(variants) != simdjson::SUCCESS) return std::nullopt;
  for (simdjson::dom::element variant : variants) {
    std::string_view sku;
    auto members = members_of(variant);
    if (!members || variant["sku"].get_string().get(sku) != simdjson::SUCCESS) return std::nullopt;
    product.variants.emplace_back(std::string(sku), std::move(*members));
  }
  return product;
}

// The members of `after` that `base` lacks or holds otherwise, as an object ("" when none).
// Members named in `by_member` are objects compared member by member in turn.
std::string changed_members(simdjson::dom::parser& parser, const Members& base, const Members& after,
                            std::initializer_list<std::string_view> by_member = {}) {
  json::JsonWriter w;
  bool any = false;
  w.begin_object();
  for (const auto& [key, value] : after) {
    const std::string* before = member(base, key);
    if (before != nullptr && *before == value) continue;
    if (before != nullptr && std::find(by_member.begin(), by_member.end(), key) != by_member.end()) {
      // Both are objects the mapping wrote; each read with a parser of its own document.
      simdjson::dom::parser inner;
      simdjson::dom::element old_element, new_element;
      if (inner.parse(simdjson::padded_string(*before)).get(old_element) == simdjson::SUCCESS) {
        const auto old_members = members_of(old_element);
        if (parser.parse(simdjson::padded_string(value)).get(new_element) == simdjson::SUCCESS) {
          const auto new_members = members_of(new_element);
          if (old_members && new_members) {
            const std::string inner_changed = changed_members(inner, *old_members, *new_members);
            if (!inner_changed.empty()) {
              w.key(key).raw_value(inner_changed);
              any = true;
            }
            continue;
          }
        }
      }
    }
    w.key(key).raw_value(value);
    any = true;
  }
  w.end_object();
  return any ? w.take() : std::string();
}

}  // namespace

ProductBody product_body(const ProductRow& row, api::ApiVersion version) {
  std::vector<std::string> problems;
  RowReader r(std::string(kProductsTable), problems);
  const auto name = r.text("name", row.name, Need::required, 400, 1);
  const auto type = r.text("type", row.type, Need::optional, 50);
  const auto taxonomy = r.integer("taxonomy_id", row.taxonomy_id, Need::optional, 0, kInt32Max);
  if (row.lines.empty()) r.problem("variants", fmt::format("must be at least one row of {}, found none", kVariantsTable));
  json::JsonWriter w;
  w.begin_object().field("name", name.value_or(""));
  if (type) w.field("type", *type);
  if (taxonomy) w.field("taxonomy_id", *taxonomy);
  w.key("variants").begin_array();
  for (const VariantRow& variant : row.lines) write_variant(w, variant, version, problems);
  w.end_array().end_object();
  if (!problems.empty()) {
    std::string reason;
    for (const std::string& problem : problems) reason += fmt::format("{}{}", reason.empty() ? "" : "; ", problem);
    return {.body = std::nullopt, .problems = text::printable(reason)};
  }
  return {.body = w.take(), .problems = {}};
}

std::optional<ProductChanges> product_changes(std::string_view base, std::string_view after) {
  simdjson::dom::parser base_parser, after_parser, scratch;
  const auto before = read_product(base_parser, base);
  const auto now = read_product(after_parser, after);
  if (!before || !now) return std::nullopt;
  ProductChanges changes;
  changes.product_patch = changed_members(scratch, before->fields, now->fields);
  std::map<std::string_view, const Members*> old_variants;
  for (const auto& [sku, members] : before->variants) old_variants.emplace(sku, &members);
  std::set<std::string_view> kept;
  for (const auto& [sku, members] : now->variants) {
    const auto found = old_variants.find(sku);
    if (found == old_variants.end()) {
      json::JsonWriter w;
      w.begin_object();
      for (const auto& [key, value] : members) w.key(key).raw_value(value);
      w.end_object();
      changes.new_variants.emplace_back(sku, w.take());
      continue;
    }
    kept.insert(sku);
    std::string changed = changed_members(scratch, *found->second, members, {"customs", "lot_information"});
    if (!changed.empty()) changes.changed_variants.emplace_back(sku, std::move(changed));
  }
  for (const auto& [sku, members] : before->variants) {
    if (!kept.contains(sku)) changes.removed_skus.push_back(sku);
  }
  return changes;
}

std::string encode_versions(const ProductVersions& versions) {
  json::JsonWriter w;
  w.begin_object().key("base").raw_value(versions.base).key("after");
  if (versions.after.empty()) w.null();
  else w.raw_value(versions.after);
  w.end_object();
  return w.take();
}

std::optional<ProductVersions> decode_versions(std::string_view body) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(simdjson::padded_string(body)).get(root) != simdjson::SUCCESS) return std::nullopt;
  simdjson::dom::element base, after;
  if (root["base"].get(base) != simdjson::SUCCESS || root["after"].get(after) != simdjson::SUCCESS) return std::nullopt;
  return ProductVersions{.base = simdjson::minify(base), .after = after.is_null() ? "" : simdjson::minify(after)};
}

std::vector<std::string> variant_skus(std::string_view body) {
  simdjson::dom::parser parser;
  std::vector<std::string> skus;
  if (const auto product = read_product(parser, body)) {
    for (const auto& [sku, members] : product->variants) skus.push_back(sku);
  }
  return skus;
}

std::string removed_variants_note(const std::vector<std::string>& skus) {
  std::string listed;
  for (const std::string& sku : skus) listed += fmt::format("{}'{}'", listed.empty() ? "" : ", ", text::printable(sku));
  return fmt::format("variants removed at the merchant are kept at the provider (the daemon never deletes one): {}",
                     listed);
}

std::string with_variant_id(std::int64_t id, std::string_view changed) {
  // `changed` is an object with at least one member: `{"name":...}`.
  return fmt::format("{{\"id\":{},{}", id, changed.substr(1));
}

}  // namespace fulfillsync::daemon
