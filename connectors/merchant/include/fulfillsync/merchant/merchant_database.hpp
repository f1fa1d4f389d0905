#pragma once
// The merchant's database as the daemon sees it: source tables it reads, result tables it writes
// (schema/merchant/README.md). One interface; SQLite first, PostgreSQL next: SQL dialect lives in the
// implementations.
//
// Every call is one short transaction that returns plain values, so no read is ever held across a
// network call. An instance is one connection: use it from one thread at a time. Failures (locked
// past the busy timeout, a missing table or column) throw MerchantDatabaseError; bad data in a row
// never does (see request_mapping.hpp).
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fulfillsync/config/config.hpp"
#include "fulfillsync/merchant/pulled_records.hpp"
#include "fulfillsync/merchant/source_rows.hpp"
#include "fulfillsync/merchant/sync_results.hpp"

namespace fulfillsync::merchant {

class MerchantDatabaseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

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

// Changes read from the database's own change order (see MerchantDatabase::changes_after).
struct ChangedKeys {
  std::vector<std::string> keys{};  // reference ids of the rows changed, each once, by first change
  std::string through{};            // the position after these changes: save it once they are handled
  std::int64_t entries = 0;         // log entries read (a row changed twice counts twice)
  bool more = false;                // more changes wait after `through`
};

class MerchantDatabase {
 public:
  virtual ~MerchantDatabase() = default;

  // What it is, for logs: "sqlite /var/lib/shop/shop.db". Never holds a secret.
  virtual std::string describe() const = 0;

  // Cheap liveness check.
  virtual void ping() = 0;

  // Problems with the source tables (a table or column of the contract missing), one line each;
  // empty when all of them can be read.
  virtual std::vector<std::string> check_source_tables() = 0;

  // A number that changes when another connection commits to the database; equal numbers mean
  // nothing changed in between, so a poll can be skipped. Writes through this instance do not change
  // it. An implementation that cannot tell returns a new number on every call.
  virtual std::uint64_t change_counter() = 0;

  // Changed rows with their lines, in (updated_at, reference_id) order.
  virtual std::vector<OrderRow> read_orders(const ReadRange& range) = 0;
  virtual std::vector<ReturnRow> read_returns(const ReadRange& range) = 0;
  // The rows with these keys (absent keys are left out), e.g. for `retry REFERENCE_ID`.
  virtual std::vector<OrderRow> read_orders(std::span<const std::string> reference_ids) = 0;
  virtual std::vector<ReturnRow> read_returns(std::span<const std::string> reference_ids) = 0;

  // Open rows (not yet in the result table, or there and not final: not fulfilled, completed or
  // cancelled) with their lines, by reference_id after `after_key`, at most `limit`: what the
  // reconciliation sweep compares with the ledger.
  virtual std::vector<OrderRow> read_open_orders(std::string_view after_key, std::size_t limit) = 0;
  virtual std::vector<ReturnRow> read_open_returns(std::string_view after_key, std::size_t limit) = 0;

  // How many source rows changed at or after `since` (an instant, ISO 8601) have no row in the
  // result table: rows the daemon has not taken (the open rows of read_open_* that it never recorded).
  virtual std::int64_t count_without_result(SourceKind kind, std::string_view since) = 0;

  // How many source rows lie after `after` in (updated_at, reference_id) order: what is not read yet.
  virtual std::int64_t count_changes_after(SourceKind kind, const ChangeCursor& after) = 0;

  // --- The change order the database assigns, where the source tables keep one (SQLite: the change
  // log of schema/merchant/change_log/; PostgreSQL: transaction ids). A position is text the daemon
  // saves and hands back unread; "" is before every change. Without a change log, has_change_log()
  // is false and the daemon reads by (updated_at, reference_id) instead.
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

  // fulfillsync_watched_inventory: the inventory ids whose lot levels the merchant wants.
  virtual std::vector<std::int64_t> watched_inventory_ids() = 0;

  // Upserts by reference_id, all in one transaction; writing the same results again changes nothing.
  virtual void write_results(SourceKind kind, std::span<const SyncResult> results) = 0;

  // For `status`: rows of the result table by state, the latest rows in a state (newest first),
  // and one row.
  virtual std::map<std::string, std::int64_t> count_results_by_state(SourceKind kind) = 0;
  virtual std::vector<SyncResult> latest_results(SourceKind kind, std::string_view state, std::size_t limit) = 0;
  virtual std::optional<SyncResult> read_result(SourceKind kind, std::string_view reference_id) = 0;
  // Every result row after `after_reference_id`, in reference_id order, at most `limit`: what a
  // checkpoint store that was lost or restored from an older copy is rebuilt from.
  virtual std::vector<SyncResult> results_after(SourceKind kind, std::string_view after_reference_id,
                                                std::size_t limit) = 0;

  // --- What the pull jobs write (pulled_records.hpp). Each call is one transaction; writing the
  // same records again changes nothing, and a record older than the row's changes nothing.

  // The orders' statuses (into `{prefix}order_sync`, only rows the daemon pushed), the shipments
  // (`{prefix}shipments`, by `last_update_at`), their items (`{prefix}shipment_items`, replaced) and
  // tracking (`{prefix}tracking`; a changed tracking number clears the merchant's `acknowledged_at`).
  virtual void write_shipments(std::span<const OrderStatusRecord> orders, std::span<const ShipmentRecord> shipments) = 0;

  // Tracking rows not yet marked uploaded (`upload_marked_at` NULL), by shipment id after
  // `after_shipment_id`, at most `limit`; with `acknowledged_only`, only rows the merchant has
  // acknowledged (`acknowledged_at` set).
  virtual std::vector<TrackingToMark> tracking_to_mark(std::int64_t after_shipment_id, std::size_t limit,
                                                       bool acknowledged_only) = 0;
  // `upload_marked_at`, or `mark_error` and `mark_attempts`, of tracking rows.
  virtual void record_tracking_marks(std::span<const TrackingMarkResult> results) = 0;

  // The returns' progress (into `{prefix}return_sync`, only rows the daemon pushed).
  virtual void write_return_statuses(std::span<const ReturnStatusRecord> returns) = 0;

  // Makes `{prefix}inventory_lots` hold exactly `lots` for this inventory id.
  virtual LotChanges replace_lots(std::int64_t inventory_id, std::span<const LotRecord> lots) = 0;
  // Removes the lots of inventory ids not in `inventory_ids` (no longer watched); returns how many.
  virtual int remove_lots_except(std::span<const std::int64_t> inventory_ids) = 0;

  // Makes `{prefix}shipment_timeline` hold exactly `entries` for this shipment.
  virtual void write_timeline(std::int64_t shipment_id, std::span<const TimelineEntryRecord> entries) = 0;
};

// Opens the configured database and, with manage_result_tables, creates or migrates the result
// tables; without it, checks that they are at the version this daemon writes. Throws
// MerchantDatabaseError when it cannot.
std::unique_ptr<MerchantDatabase> open_merchant_database(const config::MerchantConfig& config);

// Opens the configured database for reading only, for commands that must change nothing
// (`--dry-run`): the file and its directory stay as they were (SQLite: SQLITE_OPEN_READONLY, and no
// -wal or -shm file left behind), the result tables are neither created nor checked, and every
// write throws MerchantDatabaseError. A missing database is an error, never created.
std::unique_ptr<MerchantDatabase> open_merchant_database_read_only(const config::MerchantConfig& config);

}  // namespace fulfillsync::merchant
