#pragma once
#include "fulfillsync/merchant/pulled_tables.hpp"
#include "sqlite_support.hpp"

namespace fulfillsync::merchant {

// PulledTables in SQLite: the pull side's result tables under the configured prefix.
class SqlitePulledTables final : public PulledTables {
 public:
  explicit SqlitePulledTables(SqliteConnection& connection) : connection_(connection) {}

  void write_shipments(std::span<const OrderStatusRecord> orders, std::span<const ShipmentRecord> shipments) override;
  void write_timeline(std::int64_t shipment_id, std::span<const TimelineEntryRecord> entries) override;
  std::vector<TrackingToMark> tracking_to_mark(std::int64_t after_shipment_id, std::size_t limit,
                                               bool acknowledged_only) override;
  void record_tracking_marks(std::span<const TrackingMarkResult> results) override;
  void write_return_statuses(std::span<const ReturnStatusRecord> returns) override;
  std::vector<std::int64_t> watched_inventory_ids() override;
  LotChanges replace_lots(std::int64_t inventory_id, std::span<const LotRecord> lots) override;
  int remove_lots_except(std::span<const std::int64_t> inventory_ids) override;

 private:
  SqliteConnection& connection_;
};

}  // namespace fulfillsync::merchant
