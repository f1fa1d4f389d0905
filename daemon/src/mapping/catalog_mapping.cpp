#include "fulfillsync/daemon/mapping/catalog_mapping.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <span>

#include <fmt/format.h>
#include <fmt/ranges.h>
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
// A unit the catalog sends, and its size in the unit the provider keeps and answers whatever unit it
// was sent in: ounces for a weight, inches for a dimension, the first of each list (the spec gives
// `unit` as a string; sandbox/README.md).
struct Unit {
  std::string_view name;
  double size;
};
constexpr Unit kWeightUnits[] = {{"oz", 1}, {"lb", 16}, {"g", 1 / 28.349523125}, {"kg", 35.27396195}};
constexpr Unit kDimensionUnits[] = {{"in", 1}, {"cm", 1 / 2.54}, {"mm", 1 / 25.4}, {"ft", 12}, {"m", 100 / 2.54}};

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

std::string_view name_of(std::string_view value) { return value; }
std::string_view name_of(const Unit& unit) { return unit.name; }

// Text that must be one of `allowed` (names, or units by their names).
template <typename T, std::size_t N>
std::optional<std::string> one_of(RowReader& r, std::string_view column, const Field& field, const T (&allowed)[N]) {
  auto text = r.text(column, field, Need::optional, 20);
  const auto named = [&](const T& value) { return name_of(value) == *text; };
  if (text && std::none_of(std::begin(allowed), std::end(allowed), named)) {
    std::string listed;
    for (const T& value : allowed) listed += fmt::format("{}{}", listed.empty() ? "" : ", ", name_of(value));
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

// A product's own members that the spec makes nullable (`name`, `type`: `string | null`): a member
// the merchant cleared is cleared with `null`. No other member the catalog sends is nullable.
constexpr std::string_view kClearable[] = {"name", "type"};
// A variant's objects compared member by member (only the changed members sent) and those sent
// whole when any member changed (their unit with them).
constexpr std::string_view kByMember[] = {"customs", "lot_information"};
constexpr std::string_view kWhole[] = {"weight", "dimension"};
// What a note shows of a value the provider keeps.
constexpr std::size_t kShownValue = 40;

bool is_one_of(std::span<const std::string_view> names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::optional<Members> members_of(simdjson::dom::element element) {
  simdjson::dom::object object;
  if (element.get_object().get(object) != simdjson::SUCCESS) return std::nullopt;
  Members members;
  for (auto [key, value] : object) members.emplace_back(std::string(key), simdjson::minify(value));
  return members;
}

// The members of an object given as JSON text; nothing for any other value.
std::optional<Members> members_of_text(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::element element;
  if (parser.parse(simdjson::padded_string(json)).get(element) != simdjson::SUCCESS) return std::nullopt;
  return members_of(element);
}

std::string object_text(const Members& members) {
  json::JsonWriter w;
  w.begin_object();
  for (const auto& [key, value] : members) w.key(key).raw_value(value);
  w.end_object();
  return w.take();
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

std::optional<ReadProduct> read_product(std::string_view body) {
  simdjson::dom::parser parser;
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

std::string write_product(const Members& fields, const std::vector<Members>& variants) {
  json::JsonWriter w;
  w.begin_object();
  for (const auto& [key, value] : fields) w.key(key).raw_value(value);
  w.key("variants").begin_array();
  for (const Members& variant : variants) w.raw_value(object_text(variant));
  w.end_array().end_object();
  return w.take();
}

// The members of `after` that `base` lacks or holds otherwise, as an object ("" when none).
// Objects named in `by_member` are compared member by member (only their changed members sent);
// those in `whole` are sent whole when one of their members changed.
std::string changed_members(const Members& base, const Members& after,
                            std::span<const std::string_view> by_member = {},
                            std::span<const std::string_view> whole = {}) {
  Members changed;
  for (const auto& [key, value] : after) {
    const std::string* before = member(base, key);
    if (before != nullptr && *before == value) continue;
    const bool nested = is_one_of(by_member, key);
    if (before != nullptr && (nested || is_one_of(whole, key))) {
      const auto old_members = members_of_text(*before);
      const auto new_members = members_of_text(value);
      if (old_members && new_members) {
        std::string inner = changed_members(*old_members, *new_members);
        if (!inner.empty()) changed.emplace_back(key, nested ? std::move(inner) : value);
        continue;
      }
    }
    changed.emplace_back(key, value);
  }
  return changed.empty() ? std::string() : object_text(changed);
}

// The members of `base` that `after` lacks, and those of the objects both hold ("customs.value"),
// each with its value in `base`: what the merchant cleared.
Members cleared_members(const Members& base, const Members& after) {
  Members cleared;
  for (const auto& [key, value] : base) {
    const std::string* now = member(after, key);
    if (now == nullptr) {
      cleared.emplace_back(key, value);
      continue;
    }
    if (*now == value) continue;
    const auto old_members = members_of_text(value);
    const auto new_members = members_of_text(*now);
    if (!old_members || !new_members) continue;
    for (const auto& [inner_key, inner_value] : *old_members) {
      if (member(*new_members, inner_key) == nullptr) {
        cleared.emplace_back(fmt::format("{}.{}", key, inner_key), inner_value);
      }
    }
  }
  return cleared;
}

// `after` with what the provider keeps of `base`: the members `after` lacks (but `clearable`
// ones, which an update clears), and those of the objects both hold; in `base`'s order.
Members with_kept(const Members& base, const Members& after, std::span<const std::string_view> clearable = {}) {
  Members merged;
  for (const auto& [key, value] : base) {
    const std::string* now = member(after, key);
    if (now == nullptr) {
      if (!is_one_of(clearable, key)) merged.emplace_back(key, value);
      continue;
    }
    const auto old_members = *now == value ? std::nullopt : members_of_text(value);
    const auto new_members = old_members ? members_of_text(*now) : std::nullopt;
    merged.emplace_back(key, new_members ? object_text(with_kept(*old_members, *new_members)) : *now);
  }
  for (const auto& [key, value] : after) {
    if (member(base, key) == nullptr) merged.emplace_back(key, value);
  }
  return merged;
}

// How far a number answered in another unit may be from the one sent and still be it: the provider's
// rounding (up to half a hundredth of the unit answered) and its conversion factor's (28.3495 g to the
// ounce is off by a millionth).
constexpr double kAnsweredRounding = 0.005;
constexpr double kConversionTolerance = 1e-5;

// The units of the variant's member `measure` (weight, dimension); none for another.
std::span<const Unit> units_of(std::string_view measure) {
  if (measure == "weight") return kWeightUnits;
  if (measure == "dimension") return kDimensionUnits;
  return {};
}

// The size of the unit `object` names (the unit answered when it names none), in the unit answered.
std::optional<double> unit_size(std::span<const Unit> units, simdjson::dom::object object) {
  std::string_view unit;
  if (object["unit"].get_string().get(unit) != simdjson::SUCCESS) return units.front().size;
  const auto found = std::find_if(units.begin(), units.end(), [&](const Unit& u) { return u.name == unit; });
  return found == units.end() ? std::nullopt : std::optional(found->size);
}

// Whether the weight or dimension the provider holds is the one `after` sends, each number converted
// from `after`'s unit to the one answered: 500 g is answered as 17.64 oz, and is not a change.
bool same_measure(std::string_view measure, simdjson::dom::object held, simdjson::dom::object after) {
  const std::span<const Unit> units = units_of(measure);
  if (units.empty()) return false;
  const auto held_size = unit_size(units, held);
  const auto after_size = unit_size(units, after);
  if (!held_size || !after_size) return false;
  for (auto [key, value] : after) {
    if (key == "unit") continue;
    double sent = 0, answered = 0;
    if (value.get_double().get(sent) != simdjson::SUCCESS ||
        held[key].get_double().get(answered) != simdjson::SUCCESS) {
      return false;
    }
    const double sent_as_answered = sent * *after_size / *held_size;
    if (std::abs(sent_as_answered - answered) > kAnsweredRounding + kConversionTolerance * std::abs(answered)) {
      return false;
    }
  }
  return true;
}

// The members of the object `after` as the object `provider` holds them (see provider_version).
void write_as_provider_holds(json::JsonWriter& w, simdjson::dom::object provider, simdjson::dom::object after) {
  for (auto [key, value] : after) {
    simdjson::dom::element held;
    if (provider.at_key(key).get(held) != simdjson::SUCCESS || held.is_null()) continue;
    simdjson::dom::object held_object, after_object;
    double held_number = 0, after_number = 0;
    const bool objects = held.get_object().get(held_object) == simdjson::SUCCESS &&
                         value.get_object().get(after_object) == simdjson::SUCCESS;
    if (objects && same_measure(key, held_object, after_object)) {
      w.key(key).raw_value(simdjson::minify(value));  // the same weight or size, answered in another unit
    } else if (objects) {
      w.key(key).begin_object();
      write_as_provider_holds(w, held_object, after_object);
      w.end_object();
    } else if (held.get_double().get(held_number) == simdjson::SUCCESS &&
               value.get_double().get(after_number) == simdjson::SUCCESS && held_number == after_number) {
      w.key(key).raw_value(simdjson::minify(value));  // 12 and 12.0 are the same customs value
    } else {
      w.key(key).raw_value(simdjson::minify(held));
    }
  }
}

// A value for a note: its JSON, cut short.
std::string shown(std::string_view json) {
  if (json.size() <= kShownValue) return text::printable(json);
  std::size_t cut = kShownValue - 3;
  while (cut > 0 && (static_cast<unsigned char>(json[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return text::printable(json.substr(0, cut)) + "...";
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
  const auto before = read_product(base);
  const auto now = read_product(after);
  if (!before || !now) return std::nullopt;
  ProductChanges changes;
  Members patch;
  for (const auto& [key, value] : now->fields) {
    const std::string* old = member(before->fields, key);
    if (old == nullptr || *old != value) patch.emplace_back(key, value);
  }
  for (auto& [key, value] : cleared_members(before->fields, now->fields)) {
    if (is_one_of(kClearable, key)) patch.emplace_back(key, "null");
    else changes.kept.push_back({.sku = "", .member = key, .value = std::move(value)});
  }
  if (!patch.empty()) changes.product_patch = object_text(patch);
  std::map<std::string_view, const Members*> old_variants;
  for (const auto& [sku, members] : before->variants) old_variants.emplace(sku, &members);
  std::set<std::string_view> kept;
  for (const auto& [sku, members] : now->variants) {
    const auto found = old_variants.find(sku);
    if (found == old_variants.end()) {
      changes.new_variants.emplace_back(sku, object_text(members));
      continue;
    }
    kept.insert(sku);
    std::string changed = changed_members(*found->second, members, kByMember, kWhole);
    if (!changed.empty()) changes.changed_variants.emplace_back(sku, std::move(changed));
    for (auto& [path, value] : cleared_members(*found->second, members)) {
      changes.kept.push_back({.sku = sku, .member = std::move(path), .value = std::move(value)});
    }
  }
  for (const auto& [sku, members] : before->variants) {
    if (!kept.contains(sku)) changes.removed_skus.push_back(sku);
  }
  return changes;
}

std::optional<std::string> applied_version(std::string_view base, std::string_view after) {
  const auto before = read_product(base);
  const auto now = read_product(after);
  if (!before || !now) return std::nullopt;
  std::map<std::string_view, const Members*> old_variants;
  for (const auto& [sku, members] : before->variants) old_variants.emplace(sku, &members);
  std::vector<Members> variants;
  std::set<std::string_view> present;
  for (const auto& [sku, members] : now->variants) {
    present.insert(sku);
    const auto found = old_variants.find(sku);
    variants.push_back(found == old_variants.end() ? members : with_kept(*found->second, members));
  }
  for (const auto& [sku, members] : before->variants) {
    if (!present.contains(sku)) variants.push_back(members);  // never deleted at the provider
  }
  return write_product(with_kept(before->fields, now->fields, kClearable), variants);
}

std::optional<std::string> provider_version(std::string_view provider_product, std::string_view after) {
  simdjson::dom::parser provider_parser, after_parser;
  simdjson::dom::object provider, wanted;
  if (provider_parser.parse(simdjson::padded_string(provider_product)).get_object().get(provider) !=
          simdjson::SUCCESS ||
      after_parser.parse(simdjson::padded_string(after)).get_object().get(wanted) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  // The provider's variants by SKU (`null` reads as none).
  std::map<std::string_view, simdjson::dom::object> held_variants;
  simdjson::dom::array listed;
  if (provider["variants"].get_array().get(listed) == simdjson::SUCCESS) {
    for (simdjson::dom::element variant : listed) {
      std::string_view sku;
      simdjson::dom::object object;
      if (variant.get_object().get(object) == simdjson::SUCCESS &&
          object["sku"].get_string().get(sku) == simdjson::SUCCESS) {
        held_variants.emplace(sku, object);
      }
    }
  }
  json::JsonWriter w;
  w.begin_object();
  std::set<std::string_view> wanted_skus;
  for (auto [key, value] : wanted) {
    if (key == "variants") continue;
    if (key == "taxonomy_id") {
      // Sent as `taxonomy_id`, answered as the node `taxonomy`.
      std::int64_t node = 0;
      if (provider["taxonomy"]["id"].get_int64().get(node) == simdjson::SUCCESS) w.field("taxonomy_id", node);
      continue;
    }
    simdjson::dom::element held;
    if (provider.at_key(key).get(held) == simdjson::SUCCESS && !held.is_null()) {
      w.key(key).raw_value(simdjson::minify(held));
    }
  }
  w.key("variants").begin_array();
  simdjson::dom::array variants;
  if (wanted["variants"].get_array().get(variants) != simdjson::SUCCESS) return std::nullopt;
  for (simdjson::dom::element variant : variants) {
    std::string_view sku;
    simdjson::dom::object object;
    if (variant.get_object().get(object) != simdjson::SUCCESS ||
        object["sku"].get_string().get(sku) != simdjson::SUCCESS) {
      return std::nullopt;
    }
    wanted_skus.insert(sku);
    const auto held = held_variants.find(sku);
    if (held == held_variants.end()) continue;  // a new variant
    w.begin_object();
    write_as_provider_holds(w, held->second, object);
    w.end_object();
  }
  for (const auto& [sku, object] : held_variants) {
    if (!wanted_skus.contains(sku)) w.begin_object().field("sku", sku).end_object();
  }
  w.end_array().end_object();
  return w.take();
}

std::string encode_versions(const ProductVersions& versions) {
  json::JsonWriter w;
  w.begin_object().key("base");
  if (versions.base.empty()) w.null();
  else w.raw_value(versions.base);
  w.key("after");
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
  return ProductVersions{.base = base.is_null() ? "" : simdjson::minify(base),
                         .after = after.is_null() ? "" : simdjson::minify(after)};
}

std::vector<std::string> variant_skus(std::string_view body) {
  std::vector<std::string> skus;
  if (const auto product = read_product(body)) {
    for (const auto& [sku, members] : product->variants) skus.push_back(sku);
  }
  return skus;
}

std::string provider_keeps_note(const ProductChanges& changes) {
  std::vector<std::string> parts;
  if (!changes.removed_skus.empty()) {
    std::string listed;
    for (const std::string& sku : changes.removed_skus) {
      listed += fmt::format("{}'{}'", listed.empty() ? "" : ", ", text::printable(sku));
    }
    parts.push_back(fmt::format(
        "variants removed at the merchant are kept at the provider (the daemon never deletes one): {}", listed));
  }
  for (const ProductChanges::Kept& kept : changes.kept) {
    const std::string what =
        kept.sku.empty() ? kept.member : fmt::format("{} of variant '{}'", kept.member, text::printable(kept.sku));
    parts.push_back(fmt::format("{} was removed at the shop; the provider keeps {} (the API cannot clear it)", what,
                                shown(kept.value)));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

std::string with_variant_id(std::int64_t id, std::string_view changed) {
  // `changed` is an object with at least one member: `{"name":...}`.
  return fmt::format("{{\"id\":{},{}", id, changed.substr(1));
}

}  // namespace fulfillsync::daemon
