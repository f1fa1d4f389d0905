#pragma once
#include <memory>

#include "fulfillsync/merchant/pulled_tables.hpp"
#include "sql_values.hpp"

namespace fulfillsync::merchant {

// PulledTables, written once for both databases over the statements each runs (ResultStatements):
// the pull side's result tables under the configured prefix. The SQL of the writes that run once per
// row is written when it is made, and each table's upsert kept: a pull writes a few rows at a time,
// where writing the statements out again cost more than the rows.
class ResultPulledTables final : public PulledTables {
 public:
  explicit ResultPulledTables(std::unique_ptr<ResultStatements> statements);
  ~ResultPulledTables() override;

  void write_shipments(std::span<const OrderStatusRecord> orders, std::span<const ShipmentRecord> shipments) override;
  void write_timeline(std::int64_t shipment_id, std::span<const TimelineEntryRecord> entries) override;
  std::vector<TrackingToMark> tracking_to_mark(std::int64_t after_shipment_id, std::size_t limit,
                                               bool acknowledged_only) override;
  void record_tracking_marks(std::span<const TrackingMarkResult> results) override;
  void write_return_statuses(std::span<const ReturnStatusRecord> returns) override;
  std::vector<std::int64_t> watched_inventory_ids() override;
  LotChanges replace_lots(std::int64_t inventory_id, std::span<const LotRecord> lots) override;
  int remove_lots_except(std::span<const std::int64_t> inventory_ids) override;
  int write_variant_stock(std::span<const VariantStockRecord> variants, timestamps::TimePoint read_at) override;
  int remove_variants_read_before(timestamps::TimePoint pass_started) override;
  SkuMap sku_map(std::span<const std::string> skus) override;
  WatchedSkus resolve_watched_skus() override;

 private:
  struct Writes;  // the SQL and upserts, made once (result_pulled_tables.cpp)

  std::unique_ptr<ResultStatements> db_;
  std::unique_ptr<Writes> writes_;
};

}  // namespace fulfillsync::merchant
