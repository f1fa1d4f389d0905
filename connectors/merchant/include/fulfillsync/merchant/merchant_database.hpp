#pragma once
// The merchant's database as the daemon sees it, in three faces (schema/merchant/README.md):
//   SourceTables  (source_tables.hpp)  the orders and returns it reads, and how it finds changes;
//   SyncResults   (sync_results.hpp)   the push side's result rows, one per order or return;
//   PulledTables  (pulled_tables.hpp)  what the pull jobs learn: shipments, tracking, returns' progress, lots.
// SQLite first, PostgreSQL next: SQL dialect lives in the implementations.
//
// MerchantDatabase bundles the three faces of one open database rather than inheriting them, so an
// implementation is three small classes sharing a connection, and each caller is handed the one
// face it needs and can reach nothing else. The faces live as long as the MerchantDatabase; they
// share one connection, so use them from one thread at a time.
#include <memory>
#include <string>

#include "fulfillsync/config/config.hpp"
#include "fulfillsync/merchant/database_error.hpp"
#include "fulfillsync/merchant/pulled_tables.hpp"
#include "fulfillsync/merchant/source_tables.hpp"
#include "fulfillsync/merchant/sync_results.hpp"

namespace fulfillsync::merchant {

class MerchantDatabase {
 public:
  virtual ~MerchantDatabase() = default;

  // What it is, for logs: "sqlite /var/lib/shop/shop.db". Never holds a secret.
  virtual std::string describe() const = 0;

  // Cheap liveness check.
  virtual void ping() = 0;

  virtual SourceTables& source() = 0;
  virtual SyncResults& results() = 0;
  virtual PulledTables& pulled() = 0;

  // --- Until every caller takes its face: the calls of the single interface this one replaced.
  std::vector<std::string> check_source_tables() { return source().check_source_tables(); }
  std::uint64_t change_counter() { return source().change_counter(); }
  std::vector<OrderRow> read_orders(const ReadRange& range) { return source().read_orders(range); }
  std::vector<ReturnRow> read_returns(const ReadRange& range) { return source().read_returns(range); }
  std::vector<OrderRow> read_orders(std::span<const std::string> keys) { return source().read_orders(keys); }
  std::vector<ReturnRow> read_returns(std::span<const std::string> keys) { return source().read_returns(keys); }
  std::vector<OrderRow> read_open_orders(std::string_view after_key, std::size_t limit) {
    return source().read_open_orders(after_key, limit);
  }
  std::vector<ReturnRow> read_open_returns(std::string_view after_key, std::size_t limit) {
    return source().read_open_returns(after_key, limit);
  }
  std::int64_t count_without_result(SourceKind kind, std::string_view since) {
    return source().count_without_result(kind, since);
  }
  std::int64_t count_changes_after(SourceKind kind, const ChangeCursor& after) {
    return source().count_changes_after(kind, after);
  }
  bool has_change_log() { return source().has_change_log(); }
  std::string change_log_end(SourceKind kind) { return source().change_log_end(kind); }
  ChangedKeys changes_after(SourceKind kind, std::string_view after, std::size_t limit) {
    return source().changes_after(kind, after, limit);
  }
  std::int64_t count_rows_changed_after(SourceKind kind, std::string_view after) {
    return source().count_rows_changed_after(kind, after);
  }
  bool install_change_log() { return source().install_change_log(); }
  std::int64_t forget_changes_through(SourceKind kind, std::string_view through, std::size_t limit) {
    return source().forget_changes_through(kind, through, limit);
  }
  bool changes_forgotten_after(SourceKind kind, std::string_view after) {
    return source().changes_forgotten_after(kind, after);
  }
  void write_results(SourceKind kind, std::span<const SyncResult> rows) { results().write_results(kind, rows); }
  std::map<std::string, std::int64_t> count_results_by_state(SourceKind kind) {
    return results().count_results_by_state(kind);
  }
  std::vector<SyncResult> latest_results(SourceKind kind, std::string_view state, std::size_t limit) {
    return results().latest_results(kind, state, limit);
  }
  std::optional<SyncResult> read_result(SourceKind kind, std::string_view key) {
    return results().read_result(kind, key);
  }
  std::vector<SyncResult> results_after(SourceKind kind, std::string_view after, std::size_t limit) {
    return results().results_after(kind, after, limit);
  }
  std::vector<std::int64_t> watched_inventory_ids() { return pulled().watched_inventory_ids(); }
  void write_shipments(std::span<const OrderStatusRecord> orders, std::span<const ShipmentRecord> shipments) {
    pulled().write_shipments(orders, shipments);
  }
  std::vector<TrackingToMark> tracking_to_mark(std::int64_t after, std::size_t limit, bool acknowledged_only) {
    return pulled().tracking_to_mark(after, limit, acknowledged_only);
  }
  void record_tracking_marks(std::span<const TrackingMarkResult> marks) { pulled().record_tracking_marks(marks); }
  void write_return_statuses(std::span<const ReturnStatusRecord> returns) { pulled().write_return_statuses(returns); }
  LotChanges replace_lots(std::int64_t id, std::span<const LotRecord> lots) { return pulled().replace_lots(id, lots); }
  int remove_lots_except(std::span<const std::int64_t> ids) { return pulled().remove_lots_except(ids); }
  void write_timeline(std::int64_t id, std::span<const TimelineEntryRecord> entries) {
    pulled().write_timeline(id, entries);
  }
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
