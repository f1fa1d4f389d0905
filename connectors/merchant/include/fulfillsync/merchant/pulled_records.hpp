#pragma once
// What the pull jobs write to the merchant's result tables (schema/merchant/README.md): shipments
// with their items and tracking, the provider's order and return statuses, inventory lots, shipment
// timelines and the SKU map with its stock. Plain values, already mapped from the API's models; timestamps are UTC ISO
// 8601 text as the result tables hold them (`2026-03-01T12:34:56.789Z`).
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fulfillsync::merchant {

// An order's status at the provider, as of `as_of` (its latest shipment update). Written to
// `{prefix}order_sync.remote_status` unless the row holds a newer one.
struct OrderStatusRecord {
  std::string reference_id;
  std::int64_t remote_id = 0;
  std::string status;  // Processing, Exception, PartiallyFulfilled, Fulfilled, Cancelled, ImportReview
  std::string as_of;

  friend bool operator==(const OrderStatusRecord&, const OrderStatusRecord&) = default;
};

// One inventory item of a shipment product: which product, which lot, how many, which serials.
struct ShipmentItemRecord {
  int line_number = 0;  // order within the shipment, from 1
  std::optional<std::int64_t> product_id{};
  std::optional<std::string> product_reference_id{}, sku{}, product_name{};
  std::optional<std::int64_t> inventory_id{};
  std::optional<std::string> lot{}, expiration_date{};
  std::optional<std::int64_t> quantity{}, quantity_committed{};
  std::vector<std::string> serial_numbers{};

  friend bool operator==(const ShipmentItemRecord&, const ShipmentItemRecord&) = default;
};

struct TrackingRecord {
  std::string tracking_number;
  std::optional<std::string> carrier{}, carrier_service{}, tracking_url{}, scac{}, bol{}, pro_number{};
  std::optional<std::string> shipping_date{}, last_tracking_update_at{};

  friend bool operator==(const TrackingRecord&, const TrackingRecord&) = default;
};

struct ShipmentRecord {
  std::int64_t shipment_id = 0;
  std::int64_t order_id = 0;
  std::optional<std::string> order_reference_id{};
  std::string status;
  std::optional<std::int64_t> status_detail_id{};  // the latest status detail, e.g. 201
  std::optional<std::string> status_detail_name{};  // e.g. InTransit
  std::optional<std::int64_t> location_id{};
  std::optional<std::string> location_name{}, ship_option{};
  std::optional<std::string> created_date{}, actual_fulfillment_date{}, estimated_fulfillment_date{},
      delivery_date{};
  std::string last_update_at;
  std::optional<std::string> invoice_amount{}, invoice_currency_code{};  // exact decimal text
  bool is_tracking_uploaded = false;  // as the provider said
  std::optional<TrackingRecord> tracking{};
  std::vector<ShipmentItemRecord> items{};

  friend bool operator==(const ShipmentRecord&, const ShipmentRecord&) = default;
};

// A tracking row the merchant database holds and the provider has not been told is uploaded yet.
struct TrackingToMark {
  std::int64_t shipment_id = 0;
  std::int64_t order_id = 0;

  friend bool operator==(const TrackingToMark&, const TrackingToMark&) = default;
};

// What became of marking one shipment's tracking as uploaded at the provider: `marked_at` once it
// is, else the last attempt's `error`.
struct TrackingMarkResult {
  std::int64_t shipment_id = 0;
  std::optional<std::string> marked_at{};
  std::optional<std::string> error{};
  int attempts = 0;

  friend bool operator==(const TrackingMarkResult&, const TrackingMarkResult&) = default;
};

// A return's progress at the provider. Written to `{prefix}return_sync` unless the row holds a
// newer one (by `as_of`, the latest of its dates and status history).
struct ReturnStatusRecord {
  std::string reference_id;
  std::int64_t remote_id = 0;
  std::string status;  // AwaitingArrival, Arrived, Processing, Completed, Cancelled
  std::string as_of;
  std::optional<std::string> arrived_at{}, processing_at{}, completed_at{}, cancelled_at{};
  std::string status_history_json = "[]";  // [{"status": "Arrived", "timestamp": "..."}, ...]
  std::string actions_taken_json = "[]";    // [{"inventory_id": 7002, "sku": "...", "action": "Restock", ...}, ...]

  friend bool operator==(const ReturnStatusRecord&, const ReturnStatusRecord&) = default;
};

struct LotQuantitiesRecord {
  std::int64_t awaiting = 0, committed = 0, fulfillable = 0, internal_transfer = 0, on_hand = 0;
  friend bool operator==(const LotQuantitiesRecord&, const LotQuantitiesRecord&) = default;
};

// One lot of an inventory item at one location ("" is the lot number of stock without lots).
struct LotRecord {
  std::string lot_number;
  std::optional<std::string> lot_date{};
  std::int64_t location_id = 0;
  std::optional<std::string> location_name{};
  LotQuantitiesRecord quantities{};

  friend bool operator==(const LotRecord&, const LotRecord&) = default;
};

struct TimelineEntryRecord {
  std::string timestamp;
  std::optional<std::int64_t> log_type_id{};
  std::optional<std::string> log_type_name{}, log_type_text{};
  std::string metadata_json = "{}";

  friend bool operator==(const TimelineEntryRecord&, const TimelineEntryRecord&) = default;
};

// One variant of the provider's catalog, as its product list gives it: a row of `{prefix}variant_sync`.
struct VariantStockRecord {
  std::string sku;
  std::int64_t product_id = 0;
  std::int64_t variant_id = 0;
  std::optional<std::int64_t> inventory_id{}, on_hand_qty{};
  std::optional<std::string> product_name{}, variant_name{}, status{};

  friend bool operator==(const VariantStockRecord&, const VariantStockRecord&) = default;
};

// A SKU as the map holds it: what an order line, a return line or a watched lot naming it becomes.
struct SkuMapping {
  std::int64_t product_id = 0;
  std::optional<std::int64_t> inventory_id{};
  // The only variant of its product in the map: an order line may name it by the product's id (the
  // provider takes a product's first variant for an order line that names the product).
  bool only_variant = false;

  friend bool operator==(const SkuMapping&, const SkuMapping&) = default;
};
using SkuMap = std::map<std::string, SkuMapping, std::less<>>;

// The SKUs the watched inventory names (resolve_watched_skus()).
struct WatchedSkus {
  std::vector<std::int64_t> inventory_ids{};  // of those the map resolves
  std::vector<std::string> unresolved{};      // not in the map, or without an inventory id there
};

// What replace_lots() changed.
struct LotChanges {
  int written = 0;  // lots inserted or updated
  int removed = 0;  // lots the provider no longer lists
};

}  // namespace fulfillsync::merchant
