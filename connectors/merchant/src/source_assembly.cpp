#include "source_assembly.hpp"

#include <algorithm>

namespace fulfillsync::merchant {
namespace {

// The columns a table must have: its keys and every column but the optional ones.
template <typename Columns>
std::vector<std::string_view> with_keys(Columns columns, std::vector<std::string_view> keys) {
  for (const auto& column : columns) {
    if (!column.optional) keys.push_back(column.name);
  }
  return keys;
}

}  // namespace

std::vector<ContractTable> source_contract() {
  return {
      {kOrdersTable, with_keys(order_columns(), {"reference_id", "updated_at"})},
      {kOrderLinesTable, with_keys(order_line_columns(), {"order_reference_id"})},
      {kReturnsTable, with_keys(return_columns(), {"reference_id", "updated_at"})},
      {kReturnLinesTable, with_keys(return_line_columns(), {"return_reference_id"})},
      {kWatchedInventoryTable, {"inventory_id"}},

  };
}

std::vector<std::string> skus_of(const std::vector<ProductRow>& rows) {
  std::vector<std::string> skus;
  for (const ProductRow& row : rows) {
    for (const VariantRow& variant : row.lines) {
      if (variant.sku.type == Field::Type::text) skus.push_back(variant.sku.text);
    }
  }
  std::sort(skus.begin(), skus.end());
  skus.erase(std::unique(skus.begin(), skus.end()), skus.end());
  return skus;
}

void count_skus(std::vector<ProductRow>& rows, const std::unordered_map<std::string, std::int64_t>& rows_by_sku) {
  for (ProductRow& row : rows) {
    for (VariantRow& variant : row.lines) {
      if (variant.sku.type != Field::Type::text) continue;
      const auto found = rows_by_sku.find(variant.sku.text);
      variant.rows_with_sku = found == rows_by_sku.end() ? 1 : found->second;
    }
  }
}

std::vector<ContractTable> catalog_contract() {
  return {
      {kProductsTable, with_keys(product_columns(), {"reference_id", "updated_at"})},
      {kVariantsTable, with_keys(variant_columns(), {"product_reference_id"})},
  };
}

}  // namespace fulfillsync::merchant
