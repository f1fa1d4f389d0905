#pragma once
// Rows of the merchant's source tables (schema/merchant/README.md), as plain values: read in a short
// transaction and handed to the sync jobs, which never hold the database across a network call.
//
// Columns keep the value SQLite stored, whatever its type, so a bad row is reported by the mapping
// (request_mapping.hpp) with the column and the value found, never thrown on or silently coerced.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fulfillsync::merchant {

// Which source table: orders, returns or products (each with its lines and its result table; a
// product's lines are its variants).
enum class SourceKind { orders, returns, products };
// The result table's name without the prefix.
inline std::string_view result_table_name(SourceKind kind) {
  switch (kind) {
    case SourceKind::orders: return "order_sync";
    case SourceKind::returns: return "return_sync";
    case SourceKind::products: return "product_sync";
  }
  return "order_sync";
}

// One column's value as stored.
struct Field {
  enum class Type { null, integer, real, text, blob };
  Type type = Type::null;
  std::int64_t integer = 0;
  double real = 0;
  std::string text{};  // the text, or the blob's bytes

  static Field of(std::int64_t value) { return {.type = Type::integer, .integer = value}; }
  static Field of(std::string value) { return {.type = Type::text, .text = std::move(value)}; }
  bool is_null() const { return type == Type::null; }
  // For messages: NULL, 42, 1.5, 'text' (shortened; bytes that are not UTF-8 and control characters
  // as \xNN, text::printable), a blob of 3 bytes.
  std::string describe() const;
  friend bool operator==(const Field&, const Field&) = default;
};

struct OrderLineRow {
  Field line_number{}, product_id{}, product_reference_id{}, product_name{}, quantity{}, external_line_id{},
      unit_of_measure{};
  friend bool operator==(const OrderLineRow&, const OrderLineRow&) = default;
};

// `change_time`: updated_at as an instant, as the database parsed it (ISO 8601 with Z or an offset,
// or without one, in merchant.timezone; SQLite's `YYYY-MM-DD HH:MM:SS`, likewise), in the contract's form
// `YYYY-MM-DDTHH:MM:SS.SSSZ` so that text order is time order: what read positions compare. A value
// that is no time (NULL, a number, other text) is `~` followed by it, after every time.
inline constexpr char kNotATime = '~';

struct OrderRow {
  std::string reference_id{};  // the key
  std::string updated_at{};    // the change timestamp, as stored (for messages)
  std::string change_time{};   // the same as an instant (above)
  Field cancel_requested{}, order_number{}, shipping_method{}, type{}, sales_channel{}, origin_platform_program{},
      gift_message{}, purchase_date{}, location_id{}, total_price{}, recipient_name{}, recipient_email{},
      recipient_phone{}, address1{}, address2{}, city{}, state{}, zip_code{}, country{}, company_name{}, tags{};
  std::vector<OrderLineRow> lines{};  // by line_number
  // sha256 (hex) of the row and its lines without updated_at: equal hashes, same content.
  std::string content_hash{};
  friend bool operator==(const OrderRow&, const OrderRow&) = default;
};

struct ReturnLineRow {
  Field line_number{}, inventory_id{}, quantity{}, requested_action{}, sku{};
  friend bool operator==(const ReturnLineRow&, const ReturnLineRow&) = default;
};

struct ReturnRow {
  std::string reference_id{};
  std::string updated_at{};
  std::string change_time{};
  Field fulfillment_center_id{}, fulfillment_center_name{}, original_shipment_id{}, tracking_number{}, tags{};
  std::vector<ReturnLineRow> lines{};
  std::string content_hash{};
  friend bool operator==(const ReturnRow&, const ReturnRow&) = default;
};

// A variant of the catalog (fulfillsync_variants), keyed by its SKU, unique within the merchant's rows.
struct VariantRow {
  Field sku{}, name{}, gtin{}, upc{}, status{}, weight{}, weight_unit{}, length{}, width{}, height{},
      dimension_unit{}, customs_country_of_origin{}, customs_hs_tariff_code{}, customs_description{},
      customs_value{}, customs_currency{}, is_lot{}, minimum_shelf_life_days{};
  // How many variant rows of the merchant have this SKU (1 when it is unique): filled by the reader.
  std::int64_t rows_with_sku = 1;
  friend bool operator==(const VariantRow&, const VariantRow&) = default;
};

// A product of the catalog (fulfillsync_products) with its variants, ordered by SKU.
struct ProductRow {
  std::string reference_id{};
  std::string updated_at{};
  std::string change_time{};
  Field name{}, type{}, taxonomy_id{};
  std::vector<VariantRow> lines{};  // the variants
  std::string content_hash{};       // of the row, its variants and whether each SKU is unique
  friend bool operator==(const ProductRow&, const ProductRow&) = default;
};

// The contract's columns, in one place: the readers select them by these names and the content
// hash covers them in this order.
template <typename Row>
struct Column {
  std::string_view name;
  Field Row::*member;
  // Added to the contract after merchant databases were made without it: read as NULL where the
  // table lacks it, and in the content hash only when it holds a value, so that a row which does not
  // use it keeps the hash it had before the column existed (nothing is sent again for it).
  bool optional = false;
};
std::span<const Column<OrderRow>> order_columns();
std::span<const Column<OrderLineRow>> order_line_columns();
std::span<const Column<ReturnRow>> return_columns();
std::span<const Column<ReturnLineRow>> return_line_columns();
std::span<const Column<ProductRow>> product_columns();
std::span<const Column<VariantRow>> variant_columns();

// The contract's table names (fixed: a merchant with other names maps them with views).
inline constexpr std::string_view kOrdersTable = "fulfillsync_orders";
inline constexpr std::string_view kOrderLinesTable = "fulfillsync_order_lines";
inline constexpr std::string_view kReturnsTable = "fulfillsync_returns";
inline constexpr std::string_view kReturnLinesTable = "fulfillsync_return_lines";
inline constexpr std::string_view kWatchedInventoryTable = "fulfillsync_watched_inventory";
inline constexpr std::string_view kProductsTable = "fulfillsync_products";
inline constexpr std::string_view kVariantsTable = "fulfillsync_variants";

// The content hashes; the readers fill `content_hash` with them.
std::string content_hash(const OrderRow& row);
std::string content_hash(const ReturnRow& row);
std::string content_hash(const ProductRow& row);

}  // namespace fulfillsync::merchant
