#pragma once
// SourceTables: what the daemon reads from the merchant's source tables (schema/merchant/README.md),
// the orders and returns with their lines, and how it finds what changed. The push side's intake,
// the change feed, `dry-run`, `status` and `upgrade-source` use it; nothing here writes a source row.
//
// Contract for an implementation (failures: database_error.hpp):
// - Rows come back with their lines and `content_hash` filled, read in one snapshot per call.
// - Order: `(change_time, reference_id)` for ranges, reference_id for key ranges and the open rows. change_time is
//   updated_at as an instant in the contract's form (source_rows.hpp), whatever text is stored.
// - A change order of its own (a change log, transaction ids) is optional: without one,
//   has_change_log() is false and the daemon reads by `(updated_at, reference_id)`; the defaults of
//   the change log calls below then throw.
// - open_row_versions looks at the result tables only to leave out rows whose result is final.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fulfillsync/merchant/database_error.hpp"
#include "fulfillsync/merchant/source_rows.hpp"

namespace fulfillsync::merchant {

// A position in the `(updated_at, reference_id)` order of a source table, updated_at taken as an
// instant (OrderRow::change_time, never the stored text). The default (empty) cursor is before every
// row; `{"2026-03-01T00:00:00.000Z", ""}` is before every row of that instant on.
struct ChangeCursor {
  std::string updated_at{};
  std::string reference_id{};
  friend auto operator<=>(const ChangeCursor&, const ChangeCursor&) = default;
};

// Rows with after < (updated_at, reference_id) <= through, in that order, at most `limit`.
struct ReadRange {
  ChangeCursor after{};
  std::optional<ChangeCursor> through{};
  std::size_t limit = 250;
};

// Rows with (updated_at, reference_id) > changed_after, in reference_id order after `after_key`, at
// most `limit`: reading a whole table once in the order its primary key keeps, so the cost does not
// grow with the rows before or after a page (an order by change time computes every row's per page).
struct KeyRange {
  std::string after_key{};
  ChangeCursor changed_after{};
  std::size_t limit = 250;
};

// Changes read from the database's own change order (see SourceTables::changes_after).
struct ChangedKeys {
  std::vector<std::string> keys{};  // reference ids of the rows changed, each once, by first change
  std::string through{};            // the position after these changes: save it once they are handled
  std::int64_t entries = 0;         // log entries read (a row changed twice counts twice)
  bool more = false;                // more changes wait after `through`
};

// One open row as the reconciliation sweep compares it with the ledger: what decides whether the
// ledger holds its version, without the row's columns and lines.
struct OpenRowVersion {
  std::string reference_id{};
  std::string change_time{};  // updated_at as an instant, as OrderRow::change_time
  Field cancel_requested{};   // as stored (orders; NULL for returns): the daemon reads it as a cancel or not
  std::string content_hash{};  // equal to content_hash() of the row read with its lines
  friend bool operator==(const OpenRowVersion&, const OpenRowVersion&) = default;
};

class SourceTables {
 public:
  virtual ~SourceTables() = default;

  // Problems with the source tables (a table or column of the contract missing), one line each;
  // empty when all of them can be read.
  virtual std::vector<std::string> check_source_tables() = 0;

  // A number that changes when another connection commits to the database; equal numbers mean
  // nothing changed in between, so a poll can be skipped. Writes through this database's own faces
  // do not change it. An implementation that cannot tell returns a new number on every call.
  virtual std::uint64_t change_counter() = 0;

  // Changed rows with their lines, in (updated_at, reference_id) order.
  virtual std::vector<OrderRow> read_orders(const ReadRange& range) = 0;
  virtual std::vector<ReturnRow> read_returns(const ReadRange& range) = 0;
  // Changed rows with their lines, by reference_id (the change log's catch-up of older changes).
  virtual std::vector<OrderRow> read_orders_by_key(const KeyRange& range) = 0;
  virtual std::vector<ReturnRow> read_returns_by_key(const KeyRange& range) = 0;
  // The rows with these keys (absent keys are left out), e.g. for `retry REFERENCE_ID`.
  virtual std::vector<OrderRow> read_orders(std::span<const std::string> reference_ids) = 0;
  virtual std::vector<ReturnRow> read_returns(std::span<const std::string> reference_ids) = 0;

  // The open rows (not yet in the result table, or there and not final: not fulfilled, completed or
  // cancelled), by reference_id after `after_key`, at most `limit`, each as the reconciliation sweep
  // compares it with the ledger: without reading it, its content hash computed by the database.
  virtual std::vector<OpenRowVersion> open_row_versions(SourceKind kind, std::string_view after_key,
                                                        std::size_t limit) = 0;

  // How many source rows lie after `after` in (updated_at, reference_id) order: what is not read yet.
  virtual std::int64_t count_changes_after(SourceKind kind, const ChangeCursor& after) = 0;

  // --- The catalog (fulfillsync_products with fulfillsync_variants; schema/merchant/README.md,
  // "Catalog"). Compared with the ledger by content hash: whole once, then, where the catalog keeps
  // a change order, only the products changed since (changes_after(SourceKind::products, ...));
  // without one, whole at every pass.
  // Problems with the catalog's tables (a table or column missing, a table the daemon may not
  // read), one line each naming the table; empty when all of them can be read.
  virtual std::vector<std::string> check_catalog_tables();
  // Products with their variants (by SKU, each with rows_with_sku), by reference_id after
  // `after_key`, at most `limit`.
  virtual std::vector<ProductRow> read_products(std::string_view after_key, std::size_t limit);
  // The products with these keys (absent keys are left out).
  virtual std::vector<ProductRow> read_products(std::span<const std::string> reference_ids);
  // Where the catalog's change order stands now, a position for changes_after(SourceKind::products):
  // taken before a whole comparison, what commits during or after it is read after it. Nothing when
  // the catalog keeps no change order (SQLite: the triggers of catalog_change_log.sql; PostgreSQL:
  // change_xid on fulfillsync_products, with its triggers where the catalog is tables).
  virtual std::optional<std::string> catalog_change_position();
  // Deletes the catalog's change log entries up to `position` (a position of the catalog's change
  // order) once the products they name are compared. Nothing is logged apart from the rows on PostgreSQL.
  virtual void forget_catalog_changes_through(std::string_view position);
  // `fulfillsyncd upgrade-source` for the catalog: its change triggers (schema/merchant/
  // catalog_change_log.sql, postgresql/catalog_change_order.sql), in one transaction, after
  // install_change_log. Idempotent.
  enum class CatalogUpgrade {
    added,       // something was missing and is now installed
    present,     // everything was there
    no_catalog,  // fulfillsync_products and fulfillsync_variants are not both tables: nothing to install
  };
  virtual CatalogUpgrade install_catalog_change_order();

  // --- The change order the database assigns, where the source tables keep one (SQLite: the change
  // log of schema/merchant/change_log/; PostgreSQL: transaction ids). A position is text the daemon
  // saves and hands back unread; "" is before every change.
  virtual bool has_change_log() { return false; }
  // The position after the latest change committed: where reading begins on a first start.
  virtual std::string change_log_end(SourceKind kind);
  // The rows changed after `after`, from at most `limit` log entries, in change order.
  virtual ChangedKeys changes_after(SourceKind kind, std::string_view after, std::size_t limit);
  // How many rows changed after `after`, not read yet (for status).
  virtual std::int64_t count_rows_changed_after(SourceKind kind, std::string_view after);
  // `fulfillsyncd upgrade-source`: adds what the source tables need for a change order (SQLite: the
  // change log and its triggers, in one transaction, safe while the shop application writes).
  // Idempotent; returns whether anything was missing. Throws MerchantDatabaseError when it cannot
  // (e.g. the source tables are views).
  virtual bool install_change_log();
  // Deletes handled entries up to `through`, at most `limit` of them; returns how many. Keeps the log small.
  // Notes in the database how far it has deleted, for changes_forgotten_after().
  virtual std::int64_t forget_changes_through(SourceKind kind, std::string_view through, std::size_t limit);
  // Whether entries after `after` have been deleted as handled: a position saved by a checkpoint store
  // restored from an older copy, whose changes since the log can no longer tell.
  virtual bool changes_forgotten_after(SourceKind kind, std::string_view after);
};

}  // namespace fulfillsync::merchant
