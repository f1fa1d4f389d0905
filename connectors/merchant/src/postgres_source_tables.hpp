#pragma once
#include "fulfillsync/merchant/source_tables.hpp"
#include "postgres_support.hpp"

namespace fulfillsync::merchant {

// SourceTables in PostgreSQL: the contract's tables (or views) in merchant.postgresql.source_schema,
// read with their lines in one snapshot. Changes are found by the writing transaction's id where the
// tables record it (schema/merchant/postgresql/change_order/), else by updated_at (timestamptz).
//
// The change order. Each order and return carries change_xid, the id of the transaction that last
// wrote it or one of its lines. A read takes its snapshot's horizon H (pg_snapshot_xmin: every
// transaction with a smaller id has ended, committed or not) and returns the rows with change_xid at
// or above the position, which becomes H: a transaction still open at the read has an id of H or
// more, so once it commits, the next read returns its rows, however long it ran. Rows read again
// (committed with an id above H before the read) come back unchanged; the daemon skips them by
// their content hash. A position is "H", or "H/X/reference_id" between the pages of one read: the
// next page goes on after (X, reference_id), and the read ends at H, the horizon of its first page.
//
// Content hashes: rows are read with their lines and hashed here (content_hash(), source_rows.hpp),
// the open rows of the reconciliation sweep included: one serialization, no SQL function to keep
// equal to it.
class PostgresSourceTables final : public SourceTables {
 public:
  explicit PostgresSourceTables(PostgresConnection& connection) : connection_(connection) {}

  std::vector<std::string> check_source_tables() override;
  // Changes with each commit of a transaction that wrote (in any database of the server): the
  // snapshot's horizon, its next id and the ids still running. The daemon's own result writes change
  // it too, which costs one read more, never one less.
  std::uint64_t change_counter() override;
  std::vector<OrderRow> read_orders(const ReadRange& range) override;
  std::vector<ReturnRow> read_returns(const ReadRange& range) override;
  std::vector<OrderRow> read_orders_by_key(const KeyRange& range) override;
  std::vector<ReturnRow> read_returns_by_key(const KeyRange& range) override;
  std::vector<OrderRow> read_orders(std::span<const std::string> reference_ids) override;
  std::vector<ReturnRow> read_returns(std::span<const std::string> reference_ids) override;
  std::vector<OpenRowVersion> open_row_versions(SourceKind kind, std::string_view after_key,
                                                std::size_t limit) override;
  std::int64_t count_changes_after(SourceKind kind, const ChangeCursor& after) override;
  bool has_change_log() override;
  std::string change_log_end(SourceKind kind) override;
  ChangedKeys changes_after(SourceKind kind, std::string_view after, std::size_t limit) override;
  std::int64_t count_rows_changed_after(SourceKind kind, std::string_view after) override;
  // Nothing is logged apart from the rows: nothing to delete, nothing forgotten.
  std::int64_t forget_changes_through(SourceKind kind, std::string_view through, std::size_t limit) override;
  bool changes_forgotten_after(SourceKind kind, std::string_view after) override;
  // schema/merchant/postgresql/change_order/, in one transaction in the source schema.
  bool install_change_log() override;
  // The catalog. Its change order is the orders' (above), on fulfillsync_products
  // (schema/merchant/postgresql/catalog_change_order.sql): changes_after(SourceKind::products) gives
  // the products written, or whose variants were written, at or after a position, however late
  // their transaction commits.
  std::vector<std::string> check_catalog_tables() override;
  std::vector<ProductRow> read_products(std::string_view after_key, std::size_t limit) override;
  std::vector<ProductRow> read_products(std::span<const std::string> reference_ids) override;
  // The snapshot's horizon, where the catalog keeps its change order.
  std::optional<std::string> catalog_change_position() override;
  // catalog_change_order.sql in the source schema, where both catalog tables are tables.
  CatalogUpgrade install_catalog_change_order() override;

 private:
  PostgresConnection& connection_;
};

}  // namespace fulfillsync::merchant
