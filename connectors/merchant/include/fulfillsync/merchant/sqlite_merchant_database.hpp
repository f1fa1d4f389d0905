#pragma once
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "fulfillsync/common/sqlite_read_only.hpp"
#include "fulfillsync/merchant/merchant_database.hpp"

namespace SQLite {
class Database;
}

namespace fulfillsync::merchant {

class SqliteMerchantDatabase final : public MerchantDatabase {
 public:
  enum class Access {
    // Prepares the result tables (see open_merchant_database).
    read_write,
    // SQLITE_OPEN_READONLY: the result tables are neither created nor checked, every write throws, and
    // closing leaves no side file that was not there before.
    read_only,
  };

  // The file must exist: it belongs to the merchant's application, which creates it.
  explicit SqliteMerchantDatabase(const config::MerchantConfig& config, Access access = Access::read_write);
  ~SqliteMerchantDatabase() override;

  std::string describe() const override;
  void ping() override;
  std::vector<std::string> check_source_tables() override;
  std::uint64_t change_counter() override;
  std::vector<OrderRow> read_orders(const ReadRange& range) override;
  std::vector<ReturnRow> read_returns(const ReadRange& range) override;
  std::vector<OrderRow> read_orders(std::span<const std::string> reference_ids) override;
  std::vector<ReturnRow> read_returns(std::span<const std::string> reference_ids) override;
  std::vector<OrderRow> read_open_orders(std::string_view after_key, std::size_t limit) override;
  std::vector<ReturnRow> read_open_returns(std::string_view after_key, std::size_t limit) override;
  std::int64_t count_without_result(SourceKind kind, std::string_view since) override;
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
  std::vector<std::int64_t> watched_inventory_ids() override;
  void write_results(SourceKind kind, std::span<const SyncResult> results) override;
  std::map<std::string, std::int64_t> count_results_by_state(SourceKind kind) override;
  std::vector<SyncResult> latest_results(SourceKind kind, std::string_view state, std::size_t limit) override;
  std::vector<SyncResult> results_after(SourceKind kind, std::string_view after_reference_id,
                                        std::size_t limit) override;
  std::optional<SyncResult> read_result(SourceKind kind, std::string_view reference_id) override;
  void write_shipments(std::span<const OrderStatusRecord> orders, std::span<const ShipmentRecord> shipments) override;
  std::vector<TrackingToMark> tracking_to_mark(std::int64_t after_shipment_id, std::size_t limit,
                                               bool acknowledged_only) override;
  void record_tracking_marks(std::span<const TrackingMarkResult> results) override;
  void write_return_statuses(std::span<const ReturnStatusRecord> returns) override;
  LotChanges replace_lots(std::int64_t inventory_id, std::span<const LotRecord> lots) override;
  int remove_lots_except(std::span<const std::int64_t> inventory_ids) override;
  void write_timeline(std::int64_t shipment_id, std::span<const TimelineEntryRecord> entries) override;

  // The result tables' schema version (0 before the first migration).
  int result_schema_version();

 private:
  void prepare_result_tables(bool manage);
  std::string result_table(SourceKind kind) const;
  // The quoted name of the result table `{prefix}<name>`.
  std::string table(std::string_view name) const;

  std::filesystem::path path_;
  std::string prefix_;
  std::optional<sqlite::SideFileSweep> side_files_;  // read_only; outlives db_
  std::unique_ptr<SQLite::Database> db_;
};

}  // namespace fulfillsync::merchant
