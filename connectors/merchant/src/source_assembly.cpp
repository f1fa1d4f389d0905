#include "source_assembly.hpp"

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

}  // namespace fulfillsync::merchant
