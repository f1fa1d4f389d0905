#pragma once
#include <map>
#include <string_view>

#include "fulfillsync/merchant/source_tables.hpp"
#include "sqlite_support.hpp"

namespace fulfillsync::merchant {

// SourceTables in SQLite: the contract's tables read with their lines, changes found by the change
// log of schema/merchant/change_log/ where it is installed, and PRAGMA data_version for the skip.
class SqliteSourceTables final : public SourceTables {
 public:
  explicit SqliteSourceTables(SqliteConnection& connection) : connection_(connection) {}

  std::vector<std::string> check_source_tables() override;
  std::uint64_t change_counter() override;
  std::vector<OrderRow> read_orders(const ReadRange& range) override;
  std::vector<ReturnRow> read_returns(const ReadRange& range) override;
  std::vector<OrderRow> read_orders_by_key(const KeyRange& range) override;
  std::vector<ReturnRow> read_returns_by_key(const KeyRange& range) override;
  std::vector<OrderRow> read_orders(std::span<const std::string> reference_ids) override;
  std::vector<ReturnRow> read_returns(std::span<const std::string> reference_ids) override;
  // One statement a page (sqlite_content_hash.hpp): the hashes computed by SQLite, the page's lines
  // read in one pass.
  std::vector<OpenRowVersion> open_row_versions(SourceKind kind, std::string_view after_key,
                                                std::size_t limit) override;
  std::int64_t count_changes_after(SourceKind kind, const ChangeCursor& after) override;
  bool has_change_log() override;
  std::string change_log_end(SourceKind kind) override;
  ChangedKeys changes_after(SourceKind kind, std::string_view after, std::size_t limit) override;
  std::int64_t count_rows_changed_after(SourceKind kind, std::string_view after) override;
  std::int64_t forget_changes_through(SourceKind kind, std::string_view through, std::size_t limit) override;
  bool changes_forgotten_after(SourceKind kind, std::string_view after) override;
  // The change log of schema/merchant/change_log/, in one IMMEDIATE transaction: the shop
  // application's writes wait for it (busy_timeout), then are logged.
  bool install_change_log() override;
  std::vector<std::string> check_catalog_tables() override;
  std::vector<ProductRow> read_products(std::string_view after_key, std::size_t limit) override;
  std::vector<ProductRow> read_products(std::span<const std::string> reference_ids) override;
  // The change log's position (change_log_end) where every trigger of
  // schema/merchant/catalog_change_log.sql is installed; nothing otherwise (the orders' change log
  // alone does not see the catalog).
  std::optional<std::string> catalog_change_position() override;
  void forget_catalog_changes_through(std::string_view position) override;
  // catalog_change_log.sql where both catalog tables are tables (a view has no triggers).
  CatalogUpgrade install_catalog_change_order() override;

 private:
  SQLite::Database& db() { return connection_.db(); }
  // The text that reads the lines of Row's rows (prepared once), built again when the schema changes:
  // an optional line column added or dropped since. Called inside the read transaction.
  template <typename Row>
  const std::string& lines_sql();

  SqliteConnection& connection_;
  struct SchemaBoundSql {
    std::int64_t schema_version = 0;
    std::string sql;
  };
  std::map<std::string_view, SchemaBoundSql> lines_sql_;  // by lines table
};

}  // namespace fulfillsync::merchant
