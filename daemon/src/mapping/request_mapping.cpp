#include "fulfillsync/daemon/mapping/request_mapping.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>

#include <fmt/format.h>
#include <simdjson.h>

#include "fulfillsync/api/models/encode.hpp"
#include "fulfillsync/common/printable.hpp"
#include "mapping/row_reader.hpp"

namespace fulfillsync::daemon {

using namespace merchant;
using mapping::Need;
using mapping::RowReader;
namespace {


// The encoder's own checks, as a last line: anything it refuses is a problem of the row too.
template <typename Request>
void check_encodes(const Request& request, std::vector<std::string>& problems) {
  if (!problems.empty()) return;
  const api::Encoded encoded = api::encode(request, api::ApiVersion::v2026_07);
  if (!encoded) problems.push_back("the request cannot be encoded: " + encoded.error().to_string());
}

constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();

std::string line_where(std::string_view table, const Field& line_number) {
  return fmt::format("{} line {}", table,
                     line_number.type == Field::Type::integer ? std::to_string(line_number.integer)
                                                              : line_number.describe());
}

std::optional<api::OrderLineRequest> map_order_line(const OrderLineRow& line, const merchant::SkuMap& skus,
                                                   std::vector<std::string>& problems) {
  RowReader r(line_where(kOrderLinesTable, line.line_number), problems);
  const std::size_t before = problems.size();
  api::OrderLineRequest out;
  out.id = r.integer("product_id", line.product_id, Need::optional, 1);
  out.reference_id = r.text("product_reference_id", line.product_reference_id, Need::optional, 300);
  out.name = r.text("product_name", line.product_name, Need::optional, 400);
  if (line.product_id.is_null() && line.product_reference_id.is_null()) {
    r.problem("product_id", "or product_reference_id is required, found neither");
  } else if (line.product_id.is_null() && out.reference_id && !out.name) {
    r.problem("product_name", "is required when the line names its product by product_reference_id alone");
  }
  out.quantity = r.integer("quantity", line.quantity, Need::required, 1, kInt32Max).value_or(0);
  out.external_line_id = r.integer("external_line_id", line.external_line_id, Need::optional,
                                   std::numeric_limits<std::int64_t>::min());
  out.quantity_unit_of_measure_code = r.text("unit_of_measure", line.unit_of_measure, Need::optional, 100);
  if (problems.size() != before) return std::nullopt;
  // A reference the SKU map holds as its product's only variant goes by the provider's product id
  // (the provider takes a product's first variant for a line naming the product, so a SKU among
  // several stays a reference). The reference is still sent: the shipment's lines carry it back.
  if (!out.id && out.reference_id) {
    if (const auto mapped = skus.find(*out.reference_id); mapped != skus.end() && mapped->second.only_variant) {
      out.id = mapped->second.product_id;
      out.name.reset();
    }
  }
  return out;
}

std::optional<api::ReturnLineRequest> map_return_line(const ReturnLineRow& line, const merchant::SkuMap& skus,
                                                     std::vector<std::string>& problems) {
  RowReader r(line_where(kReturnLinesTable, line.line_number), problems);
  const std::size_t before = problems.size();
  api::ReturnLineRequest out;
  const auto inventory_id = r.integer("inventory_id", line.inventory_id, Need::optional, 1);
  const auto sku = r.text("sku", line.sku, Need::optional, 100);
  if (inventory_id) {
    out.id = *inventory_id;
  } else if (sku) {
    // Through the SKU map (pull_stock): an item the provider does not list cannot come back to it.
    const auto mapped = skus.find(*sku);
    if (mapped == skus.end()) {
      r.problem("sku", fmt::format("is not in the SKU map: the provider's product list held no variant with it "
                                   "at pull_stock's last pass, found {}",
                                   line.sku.describe()));
    } else if (!mapped->second.inventory_id) {
      r.problem("sku", fmt::format("has no inventory id in the SKU map, found {}", line.sku.describe()));
    } else {
      out.id = *mapped->second.inventory_id;
    }
  } else if (problems.size() == before) {
    r.problem("inventory_id", fmt::format("is required, found {}", line.inventory_id.describe()));
  }
  out.quantity = r.integer("quantity", line.quantity, Need::required, 1, kInt32Max).value_or(0);
  out.requested_action = r.text("requested_action", line.requested_action, Need::required, 100);
  if (problems.size() != before) return std::nullopt;
  return out;
}

// The reference id is the key an order or return is found by, at the provider and by people.
// - A blank one is no key, and white space at either end cannot be seen: a person looking the order
//   up types another key. White space is what .NET's Char.IsWhiteSpace counts (the provider's stack),
//   as UTF-8.
// - After an unclear answer the daemon looks it up with the API's comma-separated ReferenceIds
//   filter, which cannot find one that holds a comma: such a row could be created twice.
constexpr std::string_view kWhiteSpace[] = {
    "\t", "\n", "\v", "\f", "\r", " ",
    "\xC2\x85", "\xC2\xA0", "\xE1\x9A\x80",                     // U+0085, U+00A0, U+1680
    "\xE2\x80\x80", "\xE2\x80\x81", "\xE2\x80\x82", "\xE2\x80\x83", "\xE2\x80\x84",  // U+2000..U+200A
    "\xE2\x80\x85", "\xE2\x80\x86", "\xE2\x80\x87", "\xE2\x80\x88", "\xE2\x80\x89", "\xE2\x80\x8A",
    "\xE2\x80\xA8", "\xE2\x80\xA9", "\xE2\x80\xAF", "\xE2\x81\x9F",  // U+2028, U+2029, U+202F, U+205F
    "\xE3\x80\x80"};                                            // U+3000

std::string_view without_white_space(std::string_view text) {
  for (bool trimmed = true; trimmed;) {
    trimmed = false;
    for (std::string_view space : kWhiteSpace) {
      if (text.starts_with(space)) {
        text.remove_prefix(space.size());
        trimmed = true;
      }
      if (text.ends_with(space)) {
        text.remove_suffix(space.size());
        trimmed = true;
      }
    }
  }
  return text;
}

void check_key(RowReader& r, const std::string& reference_id) {
  if (reference_id.empty()) return;  // reported as required, or as not UTF-8
  const std::string_view trimmed = without_white_space(reference_id);
  if (trimmed.empty()) {
    r.problem("reference_id", fmt::format("is blank, found {}", Field::of(reference_id).describe()));
  } else if (trimmed.size() != reference_id.size()) {
    r.problem("reference_id",
              fmt::format("must not begin or end with white space, found {}", Field::of(reference_id).describe()));
  }
  if (reference_id.find(',') != std::string_view::npos) {
    r.problem("reference_id", "must not contain a comma (the API cannot look such an id up, so it cannot be sent "
                              "safely)");
  }
}

}  // namespace

template <typename Request>
std::string Mapped<Request>::reason() const {
  return fmt::format("{}", fmt::join(problems, "; "));
}
template struct Mapped<api::OrderCreateRequest>;
template struct Mapped<api::ReturnCreateRequest>;

bool cancel_requested(const Field& cancel_requested_column) {
  // Read as map_order() reads it, so that a flag it accepts (text '01' too) means the same here.
  std::vector<std::string> ignored;
  RowReader r(std::string(kOrdersTable), ignored);
  return r.integer("cancel_requested", cancel_requested_column, Need::optional, 0, 1) == 1;
}

bool cancel_requested(const OrderRow& row) { return cancel_requested(row.cancel_requested); }

Mapped<api::OrderCreateRequest> map_order(const OrderRow& row, const merchant::SkuMap& skus) {
  Mapped<api::OrderCreateRequest> mapped;
  auto& problems = mapped.problems;
  RowReader r(std::string(kOrdersTable), problems);
  api::OrderCreateRequest out;
  out.reference_id = r.text("reference_id", Field::of(row.reference_id), Need::required, 300, 1).value_or("");
  check_key(r, out.reference_id);
  r.integer("cancel_requested", row.cancel_requested, Need::optional, 0, 1);  // checked only: see cancel_requested()
  out.order_number = r.text("order_number", row.order_number, Need::optional, 400);
  out.shipping_method = r.text("shipping_method", row.shipping_method, Need::required, 400, 1).value_or("");
  if (auto type = r.text("type", row.type, Need::optional, 20)) {
    if (*type == "DTC" || *type == "DropShip" || *type == "B2B") {
      out.type = type;
    } else {
      r.problem("type", fmt::format("must be DTC, DropShip or B2B, found {}", row.type.describe()));
    }
  }
  out.sales_channel = r.text("sales_channel", row.sales_channel, Need::optional, 100);
  out.origin_platform_program = r.text("origin_platform_program", row.origin_platform_program, Need::optional, 100);
  out.gift_message = r.text("gift_message", row.gift_message, Need::optional, 500);
  out.purchase_date = r.date_time("purchase_date", row.purchase_date);
  if (auto location = r.integer("location_id", row.location_id, Need::optional, 1, kInt32Max)) {
    out.location_id = static_cast<std::int32_t>(*location);
  }
  if (auto total = r.money("total_price", row.total_price)) out.financials = api::Financials{.total_price = total};

  api::Address address;
  address.address1 = r.text("address1", row.address1, Need::required, 500);
  address.address2 = r.text("address2", row.address2, Need::optional, 500);
  address.city = r.text("city", row.city, Need::required, 200);
  address.state = r.text("state", row.state, Need::optional, 200);
  address.zip_code = r.text("zip_code", row.zip_code, Need::required, 50);
  address.country = r.text("country", row.country, Need::required, 100, 2);
  address.company_name = r.text("company_name", row.company_name, Need::optional, 500);
  out.recipient.name = r.text("recipient_name", row.recipient_name, Need::required, 500);
  out.recipient.email = r.text("recipient_email", row.recipient_email, Need::optional, 500);
  out.recipient.phone_number = r.text("recipient_phone", row.recipient_phone, Need::optional, 100);
  out.recipient.address = std::move(address);
  out.tags = r.tags("tags", row.tags);

  if (row.lines.empty()) {
    problems.push_back(fmt::format("{}: the order has no lines; at least one product line is required",
                                   kOrderLinesTable));
  }
  for (const OrderLineRow& line : row.lines) {
    if (auto product = map_order_line(line, skus, problems)) out.products.push_back(std::move(*product));
  }
  check_encodes(out, problems);
  if (problems.empty()) mapped.request = std::move(out);
  return mapped;
}

Mapped<api::ReturnCreateRequest> map_return(const ReturnRow& row, const merchant::SkuMap& skus) {
  Mapped<api::ReturnCreateRequest> mapped;
  auto& problems = mapped.problems;
  RowReader r(std::string(kReturnsTable), problems);
  api::ReturnCreateRequest out;
  out.reference_id = r.text("reference_id", Field::of(row.reference_id), Need::required, 50, 1).value_or("");
  check_key(r, out.reference_id);
  out.fulfillment_center.id =
      r.integer("fulfillment_center_id", row.fulfillment_center_id, Need::required, 1).value_or(0);
  out.fulfillment_center.name = r.text("fulfillment_center_name", row.fulfillment_center_name, Need::optional, 200);
  if (auto shipment = r.integer("original_shipment_id", row.original_shipment_id, Need::optional, 1, kInt32Max)) {
    out.original_shipment_id = static_cast<std::int32_t>(*shipment);
  }
  out.tracking_number = r.text("tracking_number", row.tracking_number, Need::optional, 500);
  out.tags = r.tags("tags", row.tags);
  if (row.lines.empty()) {
    problems.push_back(fmt::format("{}: the return has no lines; at least one inventory line is required",
                                   kReturnLinesTable));
  }
  for (const ReturnLineRow& line : row.lines) {
    if (auto item = map_return_line(line, skus, problems)) out.inventory.push_back(std::move(*item));
  }
  check_encodes(out, problems);
  if (problems.empty()) mapped.request = std::move(out);
  return mapped;
}

namespace {

void add_text(std::vector<std::string>& skus, const Field& value) {
  if (value.type == Field::Type::text && !value.text.empty()) skus.push_back(value.text);
}

}  // namespace

std::vector<std::string> skus_named(const OrderRow& row) {
  std::vector<std::string> skus;
  for (const OrderLineRow& line : row.lines) {
    if (line.product_id.is_null()) add_text(skus, line.product_reference_id);
  }
  return skus;
}

std::vector<std::string> skus_named(const ReturnRow& row) {
  std::vector<std::string> skus;
  for (const ReturnLineRow& line : row.lines) {
    if (line.inventory_id.is_null()) add_text(skus, line.sku);
  }
  return skus;
}

}  // namespace fulfillsync::daemon
