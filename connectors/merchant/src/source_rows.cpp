#include "fulfillsync/merchant/source_rows.hpp"

#include <fmt/format.h>

#include "canonical_row.hpp"
#include "fulfillsync/common/printable.hpp"

namespace fulfillsync::merchant {
namespace {

constexpr Column<OrderRow> kOrderColumns[] = {
    {"cancel_requested", &OrderRow::cancel_requested},
    {"order_number", &OrderRow::order_number},
    {"shipping_method", &OrderRow::shipping_method},
    {"type", &OrderRow::type},
    {"sales_channel", &OrderRow::sales_channel},
    {"origin_platform_program", &OrderRow::origin_platform_program},
    {"gift_message", &OrderRow::gift_message},
    {"purchase_date", &OrderRow::purchase_date},
    {"location_id", &OrderRow::location_id},
    {"total_price", &OrderRow::total_price},
    {"recipient_name", &OrderRow::recipient_name},
    {"recipient_email", &OrderRow::recipient_email},
    {"recipient_phone", &OrderRow::recipient_phone},
    {"address1", &OrderRow::address1},
    {"address2", &OrderRow::address2},
    {"city", &OrderRow::city},
    {"state", &OrderRow::state},
    {"zip_code", &OrderRow::zip_code},
    {"country", &OrderRow::country},
    {"company_name", &OrderRow::company_name},
    {"tags", &OrderRow::tags},
};

constexpr Column<OrderLineRow> kOrderLineColumns[] = {
    {"line_number", &OrderLineRow::line_number},
    {"product_id", &OrderLineRow::product_id},
    {"product_reference_id", &OrderLineRow::product_reference_id},
    {"product_name", &OrderLineRow::product_name},
    {"quantity", &OrderLineRow::quantity},
    {"external_line_id", &OrderLineRow::external_line_id},
    {"unit_of_measure", &OrderLineRow::unit_of_measure},
};

constexpr Column<ReturnRow> kReturnColumns[] = {
    {"fulfillment_center_id", &ReturnRow::fulfillment_center_id},
    {"fulfillment_center_name", &ReturnRow::fulfillment_center_name},
    {"original_shipment_id", &ReturnRow::original_shipment_id},
    {"tracking_number", &ReturnRow::tracking_number},
    {"tags", &ReturnRow::tags},
};

constexpr Column<ReturnLineRow> kReturnLineColumns[] = {
    {"line_number", &ReturnLineRow::line_number},
    {"inventory_id", &ReturnLineRow::inventory_id},
    {"quantity", &ReturnLineRow::quantity},
    {"requested_action", &ReturnLineRow::requested_action},
    {"sku", &ReturnLineRow::sku, true},  // instead of inventory_id, resolved through the SKU map
};

constexpr Column<ProductRow> kProductColumns[] = {
    {"name", &ProductRow::name},
    {"type", &ProductRow::type},
    {"taxonomy_id", &ProductRow::taxonomy_id},
};

constexpr Column<VariantRow> kVariantColumns[] = {
    {"sku", &VariantRow::sku},
    {"name", &VariantRow::name},
    {"gtin", &VariantRow::gtin},
    {"upc", &VariantRow::upc},
    {"status", &VariantRow::status},
    {"weight", &VariantRow::weight},
    {"weight_unit", &VariantRow::weight_unit},
    {"length", &VariantRow::length},
    {"width", &VariantRow::width},
    {"height", &VariantRow::height},
    {"dimension_unit", &VariantRow::dimension_unit},
    {"customs_country_of_origin", &VariantRow::customs_country_of_origin},
    {"customs_hs_tariff_code", &VariantRow::customs_hs_tariff_code},
    {"customs_description", &VariantRow::customs_description},
    {"customs_value", &VariantRow::customs_value},
    {"customs_currency", &VariantRow::customs_currency},
    {"is_lot", &VariantRow::is_lot},
    {"minimum_shelf_life_days", &VariantRow::minimum_shelf_life_days},
};

// A line's place among its row's lines: line_number, or a variant's SKU.
const Field& line_order(const OrderLineRow& line) { return line.line_number; }
const Field& line_order(const ReturnLineRow& line) { return line.line_number; }
const Field& line_order(const VariantRow& line) { return line.sku; }

template <typename Row, typename Line>
std::string hash_of(const Row& row, std::span<const Column<Row>> columns, std::span<const Column<Line>> line_columns) {
  std::string serialized;
  canonical::append(serialized, "reference_id", Field::of(row.reference_id));
  for (const auto& column : columns) canonical::append_column(serialized, column, row.*column.member);
  std::vector<canonical::Line> lines(row.lines.size());
  for (std::size_t i = 0; i < row.lines.size(); ++i) {
    lines[i].line_number = line_order(row.lines[i]);
    for (const auto& column : line_columns) {
      canonical::append_column(lines[i].text, column, row.lines[i].*column.member);
    }
  }
  return canonical::hex_sha256(serialized + canonical::join_lines(std::move(lines)));
}

}  // namespace

std::string Field::describe() const {
  switch (type) {
    case Type::null: return "NULL";
    case Type::integer: return std::to_string(integer);
    case Type::real: return fmt::format("{}", real);
    case Type::text:
      if (text.empty()) return "empty text";
      if (text.size() > 60) {
        std::size_t cut = 40;  // not inside a UTF-8 sequence
        while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
        return fmt::format("'{}...' ({} bytes)", text::printable(text.substr(0, cut)), text.size());
      }
      return fmt::format("'{}'", text::printable(text));
    case Type::blob: return fmt::format("a blob of {} bytes", text.size());
  }
  return "?";
}

std::span<const Column<ProductRow>> product_columns() { return kProductColumns; }
std::span<const Column<VariantRow>> variant_columns() { return kVariantColumns; }
std::span<const Column<OrderRow>> order_columns() { return kOrderColumns; }
std::span<const Column<OrderLineRow>> order_line_columns() { return kOrderLineColumns; }
std::span<const Column<ReturnRow>> return_columns() { return kReturnColumns; }
std::span<const Column<ReturnLineRow>> return_line_columns() { return kReturnLineColumns; }

std::string content_hash(const OrderRow& row) {
  return hash_of<OrderRow, OrderLineRow>(row, kOrderColumns, kOrderLineColumns);
}
std::string content_hash(const ReturnRow& row) {
  return hash_of<ReturnRow, ReturnLineRow>(row, kReturnColumns, kReturnLineColumns);
}

std::string content_hash(const ProductRow& row) {
  // A SKU another product also has makes the row a different version: fixing the other row lets
  // this one be offered again although its own columns did not change.
  ProductRow marked = row;
  for (VariantRow& variant : marked.lines) {
    if (variant.rows_with_sku > 1) variant.sku.text += fmt::format(" (in {} rows)", variant.rows_with_sku);
  }
  return hash_of<ProductRow, VariantRow>(marked, kProductColumns, kVariantColumns);
}

}  // namespace fulfillsync::merchant
