#pragma once
// How a source row is put together from what a database returns, written once for every merchant
// database (sqlite_source_tables.cpp, postgres_source_tables.cpp): which tables and columns the
// contract reads, and rows assembled with their lines and their content hash. Each database
// supplies only how it reads one column's value into a Field.
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fulfillsync/merchant/source_rows.hpp"

namespace fulfillsync::merchant {

inline std::string_view source_table(SourceKind kind) {
  switch (kind) {
    case SourceKind::orders: return kOrdersTable;
    case SourceKind::returns: return kReturnsTable;
    case SourceKind::products: return kProductsTable;
  }
  return kOrdersTable;
}


// What distinguishes the two source tables with lines.
template <typename Row>
struct Source;
template <>
struct Source<OrderRow> {
  using Line = OrderLineRow;
  static constexpr SourceKind kind = SourceKind::orders;
  static constexpr std::string_view table = kOrdersTable, lines_table = kOrderLinesTable;
  static constexpr std::string_view parent = "order_reference_id", line_order = "line_number";
  static auto columns() { return order_columns(); }
  static auto line_columns() { return order_line_columns(); }
};
template <>
struct Source<ReturnRow> {
  using Line = ReturnLineRow;
  static constexpr SourceKind kind = SourceKind::returns;
  static constexpr std::string_view table = kReturnsTable, lines_table = kReturnLinesTable;
  static constexpr std::string_view parent = "return_reference_id", line_order = "line_number";
  static auto columns() { return return_columns(); }
  static auto line_columns() { return return_line_columns(); }
};

template <>
struct Source<ProductRow> {
  using Line = VariantRow;
  static constexpr SourceKind kind = SourceKind::products;
  static constexpr std::string_view table = kProductsTable, lines_table = kVariantsTable;
  static constexpr std::string_view parent = "product_reference_id", line_order = "sku";
  static auto columns() { return product_columns(); }
  static auto line_columns() { return variant_columns(); }
};

// The SKUs of these products' variants (text ones), each once: what count_skus asks the database about.
std::vector<std::string> skus_of(const std::vector<ProductRow>& rows);
// Sets each variant's rows_with_sku from `rows_by_sku` (how many of the merchant's variant rows
// have that SKU, as the database counted them).
void count_skus(std::vector<ProductRow>& rows, const std::unordered_map<std::string, std::int64_t>& rows_by_sku);

// SQL that holds where the result row `r` of a source row is final: nothing more can be sent for it
// (the same states status and the result writer call final). The open rows are those without one.
inline std::string_view final_result_condition(SourceKind kind) {
  return kind == SourceKind::orders
             ? "r.state IN ('cancelled', 'cancel_rejected') OR r.remote_status IN ('Fulfilled', 'Cancelled')"
             : "r.remote_status IN ('Completed', 'Cancelled')";
}

// Every table of the contract with the columns the daemon reads from it (what a check looks for).
struct ContractTable {
  std::string_view name;
  std::vector<std::string_view> columns;
};
std::vector<ContractTable> source_contract();
// The catalog's tables (only read where push_products is on).
std::vector<ContractTable> catalog_contract();

// A row's columns, the i-th of Source<Row>::columns() read by `field(i)` (a Field).
template <typename Row, typename ReadField>
Row make_row(std::string reference_id, std::string updated_at, std::string change_time, ReadField field) {
  Row row;
  row.reference_id = std::move(reference_id);
  row.updated_at = std::move(updated_at);
  row.change_time = std::move(change_time);
  const auto columns = Source<Row>::columns();
  for (std::size_t i = 0; i < columns.size(); ++i) row.*columns[i].member = field(i);
  return row;
}

// Rows read, their lines added as the database returns them (ordered by parent and line_number),
// each line to the row its parent key names.
template <typename Row>
class RowAssembly {
 public:
  explicit RowAssembly(std::vector<Row>& rows) : rows_(rows) {
    for (std::size_t i = 0; i < rows_.size(); ++i) index_.emplace(rows_[i].reference_id, i);
  }

  // A line of `parent`, the i-th of Source<Row>::line_columns() read by `field(i)`; a parent not
  // among the rows is skipped.
  template <typename ReadField>
  void add_line(const std::string& parent, ReadField field) {
    const auto found = index_.find(parent);
    if (found == index_.end()) return;
    typename Source<Row>::Line line;
    const auto columns = Source<Row>::line_columns();
    for (std::size_t i = 0; i < columns.size(); ++i) line.*columns[i].member = field(i);
    rows_[found->second].lines.push_back(std::move(line));
  }

 private:
  std::vector<Row>& rows_;
  std::unordered_map<std::string, std::size_t> index_;
};

// Fills each row's content_hash, once it holds its lines.
template <typename Row>
void hash_rows(std::vector<Row>& rows) {
  for (Row& row : rows) row.content_hash = content_hash(row);
}

}  // namespace fulfillsync::merchant
