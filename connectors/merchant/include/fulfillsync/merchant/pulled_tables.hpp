#pragma once
// PulledTables: the result tables the pull jobs keep (schema/merchant/README.md) with what they
// learn from the provider (pulled_records.hpp): shipments with their items, tracking and timelines,
// the orders' and returns' progress, the lots of the inventory the merchant watches, and the SKU map
// with each SKU's stock.
//
// Contract for an implementation (failures: database_error.hpp):
// - Each write is one transaction; writing the same records again changes nothing, and a record
//   older than the row held changes nothing.
// - The orders' and returns' progress only updates rows the push side wrote (SyncResults); a record
//   for a row that is not there is dropped.
#include <cstdint>
#include <cstddef>
#include <span>
#include <vector>

#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/merchant/database_error.hpp"
#include "fulfillsync/merchant/pulled_records.hpp"
#include "fulfillsync/merchant/source_rows.hpp"  // kWatchedInventoryTable

namespace fulfillsync::merchant {

class PulledTables {
 public:
  virtual ~PulledTables() = default;

  // The orders' statuses (into `{prefix}order_sync`), the shipments (`{prefix}shipments`, by
  // `last_update_at`), their items (`{prefix}shipment_items`, replaced) and tracking
  // (`{prefix}tracking`; a changed tracking number clears the merchant's `acknowledged_at`).
  virtual void write_shipments(std::span<const OrderStatusRecord> orders, std::span<const ShipmentRecord> shipments) = 0;

  // Makes `{prefix}shipment_timeline` hold exactly `entries` for this shipment.
  virtual void write_timeline(std::int64_t shipment_id, std::span<const TimelineEntryRecord> entries) = 0;

  // Tracking rows not yet marked uploaded (`upload_marked_at` NULL), by shipment id after
  // `after_shipment_id`, at most `limit`; with `acknowledged_only`, only rows the merchant has
  // acknowledged (`acknowledged_at` set).
  virtual std::vector<TrackingToMark> tracking_to_mark(std::int64_t after_shipment_id, std::size_t limit,
                                                       bool acknowledged_only) = 0;
  // `upload_marked_at`, or `mark_error` and `mark_attempts`, of tracking rows.
  virtual void record_tracking_marks(std::span<const TrackingMarkResult> results) = 0;

  // The returns' progress (into `{prefix}return_sync`).
  virtual void write_return_statuses(std::span<const ReturnStatusRecord> returns) = 0;

  // kWatchedInventoryTable: the inventory ids whose lot levels the merchant wants. The
  // merchant writes that table; it is read here because it says which lots the lots job keeps.
  virtual std::vector<std::int64_t> watched_inventory_ids() = 0;
  // Makes `{prefix}inventory_lots` hold exactly `lots` for this inventory id.
  virtual LotChanges replace_lots(std::int64_t inventory_id, std::span<const LotRecord> lots) = 0;
  // Removes the lots of inventory ids not in `inventory_ids` (no longer watched); returns how many.
  virtual int remove_lots_except(std::span<const std::int64_t> inventory_ids) = 0;

  // The SKU map (`{prefix}variant_sync`): upserts one page of the provider's product list by SKU,
  // read at `read_at` (a row read later than that is kept); returns the rows written.
  virtual int write_variant_stock(std::span<const VariantStockRecord> variants, timestamps::TimePoint read_at) = 0;
  // Removes the SKUs last read before `pass_started`: after a whole pass of the product list, those
  // the provider no longer lists. Returns how many.
  virtual int remove_variants_read_before(timestamps::TimePoint pass_started) = 0;
  // The map's rows for these SKUs; a SKU it lacks is left out.
  virtual SkuMap sku_map(std::span<const std::string> skus) = 0;
  // The SKUs kWatchedInventoryTable names instead of an inventory id (its optional `sku` column),
  // resolved through the map, each recorded in `{prefix}watched_sku_sync` with its inventory id or
  // why it has none; that table is made to hold exactly these. Nothing when the column is absent.
  virtual WatchedSkus resolve_watched_skus() = 0;
};

}  // namespace fulfillsync::merchant
